"""no-automatic-promotion: primary and replicas, and nothing promotes a replica."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._quorum import INSTANCE_LABELS
from ._systems import companions, ctx_catalog, recognise, server_system
from ._text import paragraph


class NoAutomaticPromotion(Rule):
    id = "no-automatic-promotion"
    severity = Severity.WARNING
    summary = (
        "replicas of a primary-and-replicas system (PostgreSQL, MySQL, MariaDB, Redis) that "
        "nothing promotes (no repmgr, Patroni or Sentinel): one writer, and writes stop "
        "while its pod is down, however many replicas there are"
    )
    references = ("web: docs/concepts/workloads/controllers/statefulset.md",)

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        found = recognise(ctx)
        n = ctx.replicas
        if found is None or n < 2 or ctx.is_fragment:
            return
        system = found.system
        if system.model != "primary-replica" or system.automatic_promotion is not False:
            return
        promoters = set(system.promoted_by)
        if promoters & companions(ctx) or self._beside(ctx, promoters, system.id):
            return
        # (the catalog's promoters, when it names some: "(a failover manager)" said nothing)
        named = f" ({' or '.join(sorted(promoters))})" if promoters else ""
        msg = (
            f"{system.id} has one writer and nothing here promotes a replica{named}: writes "
            f"stop while the primary is down, though {n} replicas run"
        )

        def explanation() -> str:
            why = paragraph(
                f"""ssrisk recognises {system.name} (catalog: {system.origin}). It replicates
                from one primary to its replicas and does not promote a replica by itself
                ({system.source("replication")}). Kubernetes restarts or reschedules the
                primary's pod, but it does not make a replica the primary: until the
                primary's pod runs again (after a node loss, only once someone force-deletes
                it or the node is removed) the set serves reads at most. Counting the
                {n} replicas as interchangeable overstates what a node loss leaves."""
            )
            fix = paragraph(
                f"""Fix: run a failover manager{named}, or an operator that promotes a
                replica, and point clients at the current primary through it; or accept
                that writes wait for the primary and set the node-loss objective to
                match."""
            )
            return f"{why}\n\n{fix}\n"

        at = (
            ctx.sts.pos("spec", "replicas")
            if "replicas" in ctx.sts.set_spec().fields
            else (ctx.sts.start())
        )
        facts: dict[str, FactValue] = {"system": system.id, "replicas": n}
        yield self.finding(ctx, at, msg, explanation, facts=facts)

    @staticmethod
    def _beside(ctx: CheckContext, promoters: set[str], system: str) -> bool:
        """Whether a StatefulSet of the same installation (instance label) runs a promoter
        (a Redis Sentinel set beside the Redis sets), or is the one-replica primary of these
        replicas (the Bitnami charts' primary and read sets): that set's single-replica
        finding already says the one writer's loss is an outage."""
        labels = ctx.pod_labels
        keys = [(k, str(labels[k])) for k in INSTANCE_LABELS if labels.get(k)]
        if not keys:
            return False
        cat = ctx_catalog(ctx)
        for other in ctx.inventory.in_namespace("StatefulSet", ctx.sts.namespace):
            theirs = other.pod_template().labels
            if other is ctx.sts or not all(str(theirs.get(k)) == v for k, v in keys):
                continue
            theirs_id = server_system(other, cat)
            if theirs_id in promoters and other.set_spec().replicas != 0:
                return True
            if theirs_id == system and other.set_spec().replicas in (None, 1):
                return True
        return False


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [NoAutomaticPromotion()]
