"""no-automatic-failover: StatefulSet pods on a lost node are never replaced by themselves."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration

from ._cluster import (
    default_toleration_s,
    force_detach_phrase,
    node_monitor_grace_s,
    operator_actions,
    out_of_service_off,
    out_of_service_tolerated,
    out_of_service_works,
    seconds,
)
from ._podspec import UNREACHABLE, eviction_for
from ._sim import recovery_phrase, timeline_block, unavailable_pods
from ._text import paragraph


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
        "k8s: pkg/controller/podgc/gc_controller.go#gcOrphaned",
        "k8s: pkg/controller/volume/attachdetach/reconciler/reconciler.go#reconcile",
        "KEP-2268 (non-graceful node shutdown: NodeOutOfServiceVolumeDetach beta and on from "
        "1.26, GA in 1.28)",
        "kubernetes/kubernetes#74689",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        if n < 1 or (ctx.is_fragment and ctx.sts.get("spec", "replicas") is None):
            return
        grace = seconds(node_monitor_grace_s(ctx))
        default_s = default_toleration_s(ctx, UNREACHABLE)
        ev = eviction_for(ctx.sts, UNREACHABLE, default_s)
        if ev.after_s is None:
            eviction = (
                "a toleration keeps it from ever being deleted, so it is not even marked "
                "Terminating"
            )
        elif ev.defaulted:
            eviction = (
                f"the taint eviction deletes it gracefully {seconds(default_s)} later (the "
                "default toleration)"
            )
        else:
            eviction = (
                f"the taint eviction deletes it gracefully {ev.after_s} s later "
                f"(tolerationSeconds {ev.after_s}; a shorter toleration only starts the "
                "deletion sooner, it cannot finish it)"
            )
        pod = ctx.pod_name(0)
        lost = "the only pod" if n == 1 else "each pod on the lost node"
        oos_ok = out_of_service_works(ctx) and not out_of_service_tolerated(ctx)
        sim = ctx.try_simulate("node-loss")
        # the operator action quoted: the out-of-service taint where it works, else Node deletion
        fix = ctx.try_simulate("node-loss-out-of-service" if oos_ok else "node-deleted")
        numbers = ""
        if sim is not None:
            hit, never = unavailable_pods(sim)
            numbers = (
                f"; simulated node loss on Kubernetes {ctx.kube_version}: {hit} of {n} pod(s) "
                f"unavailable, {never} {'is' if never == 1 else 'are'} never replaced"
            )
            if fix is not None and oos_ok:
                oos_at = fmt_duration(ctx.profile_setting("out_of_service_after_s"))
                numbers += (
                    f"; with the out-of-service taint applied at {oos_at} they are "
                    f"{recovery_phrase(fix)}"
                )
            elif fix is not None:
                deleted_at = fmt_duration(ctx.profile_setting("node_deleted_after_s"))
                numbers += (
                    f"; with the Node deleted at {deleted_at} they are {recovery_phrase(fix)}"
                )
        off = out_of_service_off(ctx)
        msg = (
            f"no automatic failover: when a node is lost, {lost} (e.g. {pod}) turns NotReady "
            f"after node-monitor-grace-period ({grace}), {eviction}, and the replacement "
            f"is only created once an operator {operator_actions(ctx)}"
            f"{f' ({off})' if off else ''}{numbers}"
        )

        def explanation() -> str:
            timeline = ""
            if sim is not None:
                timeline = "\n" + timeline_block(ctx, sim)
            if fix is not None:
                timeline += "\n" + timeline_block(ctx, fix)
            detach = force_detach_phrase(ctx)
            common = """What ends it: the kubelet coming back; the Node object being deleted (by an
operator, or by the cloud node controller when the VM is gone), after which PodGC force-deletes
the pod within about a minute (gc_controller.go#gcOrphaned) and a ReadWriteOnce volume is
force-detached {detach}; a force delete (kubectl delete pod {pod} --grace-period=0 --force),
with the same wait for the volume (reconciler.go#reconcile, maxWaitForUnmountDuration)"""
            common = common.format(detach=detach, pod=pod)
            if oos_ok:
                ends = """; or the node.kubernetes.io/out-of-service taint (non-graceful node
shutdown, KEP-2268: beta 1.26, GA 1.28), after which PodGC force-deletes the pod
(gc_controller.go#gcTerminating) and the attach/detach controller releases its volumes at
once. Only do the last three once the node is really down: a partitioned node may still run
the old pod, and the StatefulSet would then run two copies of one identity."""
                fix_text = """write the runbook (confirm the node is off, then apply the
out-of-service taint: kubectl taint node NODE
node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) or automate it with a
node-remediation controller; let the cloud provider delete Nodes of terminated VMs; run
enough replicas that the application survives one lost pod until then."""
            else:
                if out_of_service_works(ctx):  # the pods tolerate the taint
                    why = """a toleration of the pod also covers it, so the taint's NoExecute
effect never deletes the pod, and PodGC only force-deletes pods that are already Terminating
on an out-of-service node (gc_controller.go#gcTerminating)"""
                    later = """; or drop the toleration of node.kubernetes.io/out-of-service so
that the out-of-service taint releases pod and volumes at once"""
                else:
                    why = f"""on Kubernetes {ctx.kube_version} PodGC's cleanup of terminating pods
on out-of-service nodes (gc_controller.go#gcTerminating) and the immediate detach are behind the
NodeOutOfServiceVolumeDetach gate, alpha and off until it turned beta and on in 1.26
(KEP-2268)"""
                    later = """; from Kubernetes 1.26 the out-of-service taint releases pod and
volumes at once"""
                ends = f""". The node.kubernetes.io/out-of-service taint does not help: {why}. Only
delete the Node or force-delete the pod once the node is really down: a partitioned node may
still run the old pod, and the StatefulSet would then run two copies of one identity."""
                fix_text = f"""write the runbook (confirm the node is off, then delete the Node
object: kubectl delete node NODE, or force-delete the pod; a ReadWriteOnce volume is detached
{detach}); let the cloud provider delete Nodes of terminated VMs; run enough replicas that the
application survives one lost pod until then{later}."""
            ends = paragraph(common + ends)
            return f"""
A StatefulSet pod has a fixed name, and the StatefulSet controller creates {pod} again only
when the old {pod} object is gone (stateful_set_control.go#processReplica). On a lost node the
kubelet cannot confirm that the containers stopped, so a graceful deletion never completes
(strategy.go#CheckGracefulDelete): the pod stays Terminating and no replacement is created,
however short the tolerations are. Deployments do not have this problem because their
replacement pods get new names.

{ends}
{timeline}
{paragraph("Fix: " + fix_text)}
"""

        at = ctx.sts.start()
        yield self.finding(ctx, at, msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [NoAutomaticFailover()]
