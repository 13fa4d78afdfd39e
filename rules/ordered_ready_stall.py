"""ordered-ready-stall: OrderedReady lets one stuck pod freeze scale-ups and rollouts."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import timeline_lines


class OrderedReadyStall(Rule):
    id = "ordered-ready-stall"
    severity = Severity.WARNING
    summary = (
        "podManagementPolicy OrderedReady (the default): one unready pod blocks every higher "
        "ordinal, and a bad rollout needs a manual pod deletion even after a revert"
    )
    references = (
        "k8s: pkg/controller/statefulset/stateful_set_control.go#processReplica",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#updateStatefulSet",
        "web: docs/concepts/workloads/controllers/statefulset.md (Forced rollback)",
        "kubernetes/kubernetes#67250",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.pod_management_policy != "OrderedReady" or ctx.replicas < 1:
            return
        if ctx.is_fragment and ctx.sts.get("spec", "podManagementPolicy") is None:
            return  # a patch that leaves the policy to the object it patches
        strategy = ctx.sts.get("spec", "updateStrategy", "type")
        explicit = ctx.sts.get("spec", "podManagementPolicy") is not None
        at = ctx.sts.pos("spec", "podManagementPolicy") if explicit else ctx.sts.start()
        result = ctx.try_simulate("bad-rollout")
        policy = (
            "podManagementPolicy: OrderedReady"
            if explicit
            else ("podManagementPolicy is not set and defaults to OrderedReady")
        )
        if strategy == "OnDelete":
            consequence = "a pod that never becomes Ready blocks every higher ordinal"
        elif result is not None and not result.to_dict().get("recovered", False):
            consequence = (
                "a rollout to a template that never becomes Ready stalls at the highest "
                f"ordinal, and in the simulation (Kubernetes {ctx.kube_version}) it stays "
                "stuck after the template is reverted until the broken pod is deleted by hand"
            )
        else:
            consequence = (
                "a rollout to a template that never becomes Ready stalls, and the broken pod "
                "must be deleted by hand after a revert"
            )
        if ctx.replicas > 1:
            consequence += (
                f"; one unready pod also blocks ordinals above it ({ctx.replicas} replicas)"
            )

        def explanation() -> str:
            timeline = ""
            if result is not None:
                timeline = (
                    f"\nSimulated timeline (scenario bad-rollout, Kubernetes {ctx.kube_version}):\n"
                    + "\n".join(timeline_lines(result))
                    + f"\nVerdict: {result.to_dict().get('verdict', '')}\n"
                )
            return f"""
With OrderedReady the StatefulSet controller handles ordinals in order and stops its whole
sync at the first pod that is not Running and Ready (stateful_set_control.go, the replica
pass). That pass runs before the rolling update, so when a new template never becomes Ready,
reverting it changes nothing: the controller never gets as far as deleting the broken pod
("Forced rollback" in the StatefulSet docs). A pod stuck Terminating on a lost node blocks
scale-ups, scale-downs and updates of every higher ordinal the same way.
{timeline}
Fix: use podManagementPolicy: Parallel when the application does not need ordered start-up
(with Parallel a revert repairs a broken rollout where the MaxUnavailableStatefulSet gate is
off, and in 1.37), and keep a runbook for deleting a broken pod after a revert.
"""

        yield self.finding(ctx, at, f"{policy}: {consequence}", explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [OrderedReadyStall()]
