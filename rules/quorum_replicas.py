"""quorum-replicas: a quorum system with an even number of members."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.objectives import minority
from ssrisk.rule import CheckContext, Rule

from ._objectives import assess
from ._quorum import ANNOTATION, members, quorum_system
from ._sim import timeline_block
from ._text import paragraph


class QuorumReplicas(Rule):
    id = "quorum-replicas"
    severity = Severity.WARNING
    other_severities = (Severity.ERROR,)
    summary = (
        "a quorum system (etcd, ZooKeeper, Consul, ... or ssrisk.io/quorum) with 2 members, "
        "which survives no failure (error), or another even number, which adds no fault tolerance"
    )
    references = (
        "web: etcd.io/docs/v3.5/faq (Why an odd number of cluster members?)",
        "web: zookeeper.apache.org/doc/current/zookeeperAdmin.html (Clustered Setup)",
        "web: developer.hashicorp.com/consul/docs/architecture/consensus (Deployment table)",
        "web: docs/tasks/run-application/horizontal-pod-autoscale.md",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        system = quorum_system(ctx)
        if system is None or n < 2 or n % 2 or ctx.is_fragment:
            return
        if members(ctx, system) % 2:
            return  # with another set of the same installation (an arbiter) the count is odd
        majority = n // 2 + 1
        tolerated = minority(n)
        what = "members" if system == "annotation" else f"{system} members"
        facts: dict[str, FactValue] = {"replicas": n, "system": system}
        if n == 2:
            loss = assess(ctx, "node-loss")
            figure = f"; node loss: {loss.figure()}" if loss is not None else ""
            facts.update(majority=2, **(loss.facts() if loss is not None else {}))
            msg = (
                f"{ctx.replicas_field}: both {what} are needed for a majority, so losing either "
                f"stops the quorum{figure}"
            )
            result = loss.result if loss is not None else None
            # survives no failure, like one replica (single-replica is an error)
            severity = Severity.ERROR
        else:
            zone = assess(ctx, "zone-loss")
            facts.update(majority=majority, tolerated=tolerated, odd_alternative=n - 1)
            if zone is not None and zone.too_many:
                facts.update(zone.facts())
                msg = (
                    f"{ctx.replicas_field}: {what} survive {failures(tolerated)}, as {n - 1} do; "
                    f"zone loss: {zone.figure()}, no majority left"
                )
            else:
                msg = (
                    f"{ctx.replicas_field}: {what} need {majority} for a majority and "
                    f"survive {failures(tolerated)}, as {n - 1} do"
                )
            # a member that adds no fault tolerance (and, over three zones, a zone holding
            # half of them): a warning, removed by running an odd number
            severity = Severity.WARNING
            result = zone.result if zone is not None else None

        def explanation() -> str:
            why = paragraph(
                f"""A quorum system accepts writes only while a majority of its members is up:
                {majority} of {n} here. An even member count adds a member without adding fault
                tolerance ({n} members survive {tolerated} failure(s), like {n - 1}), and with 2
                members the loss of either one, by a node failure, a drain or a rolling update,
                stops the cluster. Spread over three zones, an even count also leaves one zone
                with half of the members. ssrisk treats this StatefulSet as a quorum system
                because {
                    "of the annotation " + ANNOTATION
                    if system == "annotation"
                    else f"its image runs {system}"
                }; annotate it {ANNOTATION}: "false" if it is not one."""
            )
            timeline = "\n" + timeline_block(ctx, result) if result is not None else ""
            fix = paragraph(
                f"""Fix: run an odd number of members ({f"{n - 1} or {n + 1}" if n > 2 else 3}),
                one per node and zone; with an autoscaler, keep minReplicas odd."""
            )
            return f"{why}\n{timeline}\n{fix}\n"

        yield self.finding(ctx, ctx.replicas_at(), msg, explanation, severity=severity, facts=facts)


def failures(k: int) -> str:
    """``"1 failure"``, ``"2 failures"``."""
    return f"{k} failure" if k == 1 else f"{k} failures"


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [QuorumReplicas()]
