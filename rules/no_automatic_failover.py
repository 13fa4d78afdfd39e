"""no-automatic-failover: StatefulSet pods on a lost node are never replaced by themselves."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration

from ._podspec import UNREACHABLE, eviction_for, node_monitor_grace_period_s
from ._sim import recovery_phrase, timeline_block, unavailable_pods


class NoAutomaticFailover(Rule):
    id = "no-automatic-failover"
    severity = Severity.WARNING
    summary = (
        "on node loss the pods stay Terminating and are never replaced without an operator "
        "(force delete, out-of-service taint or Node deletion)"
    )
    references = (
        "web: docs/tasks/run-application/force-delete-stateful-set-pod.md",
        "web: docs/concepts/cluster-administration/node-shutdown.md (Non-graceful node shutdown)",
        "k8s: pkg/controller/tainteviction/taint_eviction.go#processPodOnNode",
        "k8s: pkg/registry/core/pod/strategy.go#CheckGracefulDelete",
        "k8s: pkg/controller/podgc/gc_controller.go#gcTerminating",
        "kubernetes/kubernetes#74689",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        if n < 1 or (ctx.is_fragment and ctx.sts.get("spec", "replicas") is None):
            return
        grace_s = _seconds(
            ctx.profile_setting("node_monitor_grace_period_s")
            or node_monitor_grace_period_s(ctx.kube_version)
        )
        ev = eviction_for(ctx.sts, UNREACHABLE)
        default_s = _seconds(ctx.profile_setting("default_unreachable_toleration_s"))
        oos_at = fmt_duration(ctx.profile_setting("out_of_service_after_s"))
        if ev.after_s is None:
            eviction = (
                "a toleration keeps it from ever being deleted, so it is not even marked "
                "Terminating"
            )
        elif ev.defaulted:
            eviction = (
                f"the taint eviction deletes it gracefully {default_s} s later (the default "
                "toleration)"
            )
        else:
            eviction = (
                f"the taint eviction deletes it gracefully {ev.after_s} s later "
                f"(tolerationSeconds {ev.after_s}; a shorter toleration only starts the "
                "deletion sooner, it cannot finish it)"
            )
        pod = ctx.pod_name(0)
        lost = "the only pod" if n == 1 else "each pod on the lost node"
        sim = ctx.try_simulate("node-loss")
        oos = ctx.try_simulate("node-loss-out-of-service")
        numbers = ""
        if sim is not None:
            hit, never = unavailable_pods(sim)
            numbers = (
                f"; simulated node loss on Kubernetes {ctx.kube_version}: {hit} of {n} pod(s) "
                f"unavailable, {never} {'is' if never == 1 else 'are'} never replaced"
            )
            if oos is not None:
                numbers += (
                    f"; with the out-of-service taint applied at {oos_at} they are "
                    f"{recovery_phrase(oos)}"
                )
        msg = (
            f"no automatic failover: when a node is lost, {lost} (e.g. {pod}) turns NotReady "
            f"after node-monitor-grace-period ({grace_s} s), {eviction}, and the replacement "
            "is only created once an operator force-deletes the pod, taints the node "
            f"node.kubernetes.io/out-of-service or deletes the Node{numbers}"
        )
        timeline = ""
        if sim is not None:
            timeline = "\n" + timeline_block(ctx, sim)
        if oos is not None:
            timeline += "\n" + timeline_block(ctx, oos)
        explanation = f"""
A StatefulSet pod has a fixed name, and the StatefulSet controller creates {pod} again only
when the old {pod} object is gone (stateful_set_control.go#processReplica). On a lost node the
kubelet cannot confirm that the containers stopped, so a graceful deletion never completes
(strategy.go#CheckGracefulDelete): the pod stays Terminating and no replacement is created,
however short the tolerations are. Deployments do not have this problem because their
replacement pods get new names.

What ends it: the kubelet coming back; the Node object being deleted (by an operator, or by the
cloud node controller when the VM is gone), after which PodGC force-deletes the pod within
about a minute; a force delete (kubectl delete pod {pod} --grace-period=0 --force); or the
node.kubernetes.io/out-of-service taint (non-graceful node shutdown, GA in 1.28), after which
PodGC force-deletes the pod and the attach/detach controller releases its volumes at once.
Only do the last two once the node is really down: a partitioned node may still run the old
pod, and the StatefulSet would then run two copies of one identity.
{timeline}
Fix: write the runbook (confirm the node is off, then apply the out-of-service taint:
kubectl taint node NODE node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) or automate
it with a node-remediation controller; let the cloud provider delete Nodes of terminated VMs;
run enough replicas that the application survives one lost pod until then.
"""
        at = ctx.sts.start()
        yield self.finding(ctx, at, msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [NoAutomaticFailover()]


def _seconds(value: float) -> int | float:
    """``300.0`` → ``300`` for messages."""
    return int(value) if float(value).is_integer() else value
