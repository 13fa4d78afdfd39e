"""replication-factor-one: a sharded system keeps each piece of its data on one member."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._systems import factor_of, holds_no_data, recognise
from ._text import paragraph


class ReplicationFactorOne(Rule):
    id = "replication-factor-one"
    severity = Severity.WARNING
    other_severities = (Severity.INFO,)
    summary = (
        "a sharded system (Kafka, Redis Cluster, Loki, ...) with several members "
        "keeps each piece of data on one of them (replication factor 1): a member's loss "
        "takes its share offline, and its volume's loss deletes it"
    )
    references = ("web: docs/concepts/workloads/controllers/statefulset.md (Stable Storage)",)

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        found = recognise(ctx)
        if found is None or found.container is None or ctx.is_fragment:
            return
        system, server = found.system, found.container
        if system.model != "sharded" or system.factor_default is None or ctx.replicas < 2:
            return
        if holds_no_data(system, server, ctx.pod_labels, system.factor_not_when):
            return  # holds none of the data the factor copies (a Kafka controller-only node)
        read = factor_of(system, server)
        if read is None or read[0] > 1:
            return  # redundant, or set to a value ssrisk cannot read
        factor, where = read
        n = ctx.replicas
        explicit = where != "default"
        if explicit:
            msg = (
                f"{system.id} replication factor {factor} ({where}): each piece of data lives "
                f"on 1 of the {n} members, and a member's loss takes its share offline"
            )
            set_by = f"set by {where}"
        else:
            msg = (
                f"{system.id}'s default replication factor is {factor} and the server's env "
                f"and args do not set it: data written without one lives on 1 of {n} members"
            )
            set_by = "the default, which the server's environment and arguments do not change"

        def explanation() -> str:
            why = paragraph(
                f"""ssrisk recognises {system.name} in container {server.name!r} (catalog:
                {system.origin}). {system.name} splits its data over its members and keeps
                each piece on as many members as its replication factor
                ({system.source("replication")}); here that is {factor} ({set_by}). Running
                {n} replicas then adds capacity, not redundancy: while one member is down (a
                node loss, a drain, a rollout) the data it holds cannot be read or written,
                and if its volume is lost, that data is gone."""
            )
            settings = ", ".join([*sorted(system.factor_env), *system.factor_settings])
            fix = paragraph(
                f"""Fix: set the replication factor to at least 2 (3 where writes must survive
                a member's loss while another is down for maintenance): {settings}. Data
                written before the change keeps its old factor until it is reassigned."""
            )
            return f"{why}\n\n{fix}\n"

        at = ctx.sts.pos(*server.path)
        facts: dict[str, FactValue] = {
            "system": system.id,
            "replication_factor": factor,
            "replicas": n,
            "factor_set": explicit,
        }
        severity = Severity.WARNING if explicit else Severity.INFO
        yield self.finding(ctx, at, msg, explanation, severity=severity, facts=facts)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ReplicationFactorOne()]
