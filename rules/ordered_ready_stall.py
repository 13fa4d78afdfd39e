"""ordered-ready-stall: OrderedReady lets one stuck pod freeze scale-ups and rollouts."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._objectives import Assessment, assess
from ._podspec import set_spec
from ._sim import timeline_block
from ._text import paragraph


class OrderedReadyStall(Rule):
    id = "ordered-ready-stall"
    summary = (
        "podManagementPolicy OrderedReady (the default): a reverted bad rollout needs a manual "
        "pod deletion (info; a warning when the bad-rollout objective asks for "
        "revert-without-manual-delete)"
    )
    severity = Severity.INFO
    other_severities = (Severity.WARNING,)
    references = (
        "k8s: pkg/controller/statefulset/stateful_set_control.go#processReplica",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#updateStatefulSet",
        "web: docs/concepts/workloads/controllers/statefulset.md (Forced rollback)",
        "kubernetes/kubernetes#67250",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.pod_management_policy != "OrderedReady" or ctx.replicas < 1:
            return
        spec = set_spec(ctx.sts)
        if ctx.is_fragment and spec.pod_management_policy is None:
            return  # a patch that leaves the policy to the object it patches
        strategy = spec.update_strategy_type
        explicit = spec.pod_management_policy is not None
        at = ctx.sts.pos("spec", "podManagementPolicy") if explicit else ctx.sts.start()
        bad = assess(ctx, "bad-rollout")
        if bad is not None and not bad.never_back and not bad.result.manual_action_required:
            return  # a revert repairs it on this version
        policy = "OrderedReady" if explicit else "OrderedReady (the default)"
        top = ctx.pod_name(ctx.replicas - 1)
        if strategy == "OnDelete":
            consequence = "a pod that never becomes Ready blocks every higher ordinal"
        else:
            consequence = f"a reverted bad rollout leaves {top} broken until deleted by hand"
        severity = Severity.INFO
        if bad is not None and bad.manual_revert:
            severity = Severity.WARNING
            consequence += " (objective revert-without-manual-delete)"
        elif bad is not None:
            consequence += " (simulated)"
        yield self.finding(
            ctx,
            at,
            f"{policy}: {consequence}",
            lambda: self._explanation(ctx, bad),
            severity=severity,
            facts={
                "pod_management_policy": "OrderedReady",
                "explicit": explicit,
                "update_strategy": strategy or "RollingUpdate",
                "simulated": bad is not None,
                **({} if strategy == "OnDelete" else {"pod": top}),
            },
        )

    @staticmethod
    def _explanation(ctx: CheckContext, bad: Assessment | None) -> str:
        timeline = "\n" + timeline_block(ctx, bad.result) if bad is not None else ""
        objective = ctx.objectives["bad-rollout"].revert_without_manual_delete
        level = paragraph(
            f"""This is a warning when the configuration's objectives ask for it
            (bad-rollout: revert-without-manual-delete: true; now {str(bool(objective)).lower()})
            and information otherwise: many applications need ordered start-up, and the cost is
            one manual step after a failed rollout."""
        )
        return f"""
With OrderedReady the StatefulSet controller handles ordinals in order and stops its whole
sync at the first pod that is not Running and Ready (stateful_set_control.go, the replica
pass). That pass runs before the rolling update, so when a new template never becomes Ready,
reverting it changes nothing: the controller never gets as far as deleting the broken pod
("Forced rollback" in the StatefulSet docs). A pod stuck Terminating on a lost node blocks
scale-ups, scale-downs and updates of every higher ordinal the same way ({ctx.replicas}
{"replica" if ctx.replicas == 1 else "replicas"} here).
{timeline}
{level}

Fix: use podManagementPolicy: Parallel when the application does not need ordered start-up
(with Parallel a revert repairs a broken rollout where the MaxUnavailableStatefulSet gate is
off, and in 1.37), and keep a runbook for deleting a broken pod after a revert.
"""


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [OrderedReadyStall()]
