"""update-strategy-ondelete: template changes are never rolled out by the controller."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import set_spec


class UpdateStrategyOnDelete(Rule):
    id = "update-strategy-ondelete"
    severity = Severity.INFO
    summary = (
        "updateStrategy OnDelete: template changes reach a pod only when it is deleted, so a "
        "failover silently mixes old and new revisions"
    )
    references = (
        "web: docs/concepts/workloads/controllers/statefulset.md (Update strategies)",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#updateStatefulSet",
        "k8s: pkg/controller/statefulset/stateful_set_utils.go#newVersionedStatefulSetPod",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1 or set_spec(ctx.sts).update_strategy_type != "OnDelete":
            return
        msg = (
            "updateStrategy OnDelete: template changes are not rolled out; a pod replaced after "
            "a node failure comes back on the new revision, the others stay on the old"
        )
        at = ctx.sts.pos("spec", "updateStrategy", "type")
        yield self.finding(ctx, at, msg, facts={"update_strategy": "OnDelete"})  # (page's text)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [UpdateStrategyOnDelete()]
