"""partition-blocks-update: a RollingUpdate partition that no pod ordinal reaches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule

from ._podspec import set_spec


class PartitionBlocksUpdate(Rule):
    id = "partition-blocks-update"
    severity = Severity.WARNING
    summary = (
        "rollingUpdate.partition ≥ replicas: no pod is ever updated, and pods recreated after "
        "a failure come back on the old revision"
    )
    references = (
        "web: docs/concepts/workloads/controllers/statefulset.md (Partitioned rolling updates)",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#updateStatefulSet",
        "k8s: pkg/controller/statefulset/stateful_set_utils.go#newVersionedStatefulSetPod",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        spec = set_spec(ctx.sts)
        if n < 1 or spec.update_strategy_type not in (None, "RollingUpdate"):
            return
        path = ("spec", "updateStrategy", "rollingUpdate", "partition")
        partition = spec.partition
        if partition is None or partition < n:
            return
        msg = (
            f"rollingUpdate.partition {partition} ≥ replicas {n}: a template change updates no "
            "pod, and every pod recreated after a failure or drain gets the old revision"
        )

        facts = {"partition": partition, "replicas": n}
        yield self.finding(ctx, ctx.sts.pos(*path), msg, facts=facts)  # (the page explains)

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """Partition 0, the default: every ordinal is updated (a staged rollout lowers it
        step by step; at ≥ replicas it updates none)."""
        edit = Edit(("spec", "updateStrategy", "rollingUpdate", "partition"), 0)
        return (Remedy("set updateStrategy.rollingUpdate.partition to 0", (edit,)),)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PartitionBlocksUpdate()]
