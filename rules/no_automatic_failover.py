"""no-automatic-failover: StatefulSet pods on a lost node are never replaced by themselves."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, RunNote, Severity
from ssrisk.rule import CheckContext, Rule

from ._cluster import (
    default_toleration_s,
    force_detach_phrase,
    node_monitor_grace_s,
    out_of_service_tolerated,
    out_of_service_works,
    seconds,
)
from ._objectives import Assessment, assess, causes, remediation
from ._podspec import NOT_READY, POD, UNREACHABLE, eviction_for, set_spec, tolerations
from ._sim import timeline_block
from ._text import paragraph
from ._workload import nothing_at_stake


class NoAutomaticFailover(Rule):
    id = "no-automatic-failover"
    severity = Severity.WARNING
    #: info: one replica that neither serves nor stores (as single-replica rates it)
    other_severities = (Severity.INFO,)
    summary = (
        "on node loss the pods stay Terminating and are never replaced without an operator: "
        "stated once per run; reported on a set that misses the node-loss objective or whose "
        "tolerations expect a fast failover"
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
        if n < 1 or (ctx.is_fragment and set_spec(ctx.sts).replicas is None):
            return
        loss = assess(ctx, "node-loss")
        if loss is None or not loss.never_back:
            return  # recovers on this cluster (a stated node remediation, a returning node)
        pod = ctx.pod_name(0)
        tuned = self._tuned_toleration(ctx)
        if tuned is not None:
            index, secs = tuned
            at = ctx.sts.pos(*POD, "tolerations", index, "tolerationSeconds")
            written = tolerations(ctx.sts)[index].toleration_seconds
            shown = (
                f"{secs}" if written is None or written == secs else f"{written:g} (read as {secs})"
            )
            msg = (
                f"tolerationSeconds {shown} only starts a graceful delete: on node loss {pod} "
                f"stays Terminating and is not replaced ({loss.figure()})"
            )
            echo: tuple[str, ...] = ()
            facts = {**loss.facts(), "pod": pod, "toleration_s": secs}
            if written is not None and written != secs:
                facts["written_toleration_s"] = written
        elif loss.too_long:
            at = ctx.sts.start()
            msg = (
                f"node loss: {loss.figure()}: nothing replaces pods on a lost node without an "
                f"operator (objective {loss.versus()})"
            )
            echo = NODE_LOSS_CAUSES
            facts = {**loss.facts(), **loss.objective_facts()}
        else:
            return  # the fact every StatefulSet shares: stated once by note()
        yield self.finding(
            ctx,
            at,
            msg,
            lambda: self._explanation(ctx, loss),
            echo_of=echo,
            severity=Severity.INFO if n == 1 and nothing_at_stake(ctx) else None,
            facts=facts,
        )

    def note(self, ctx: CheckContext) -> RunNote | None:
        if ctx.replicas < 1 or ctx.is_fragment or remediation(ctx) != "none":
            return None
        return RunNote(
            self.id,
            "StatefulSet pods on a lost node are not replaced until an operator acts "
            f"({operator_actions_of_run(ctx)}); see profile node-remediation",
            lambda: _note_explanation(ctx),
            tuple(self.references),
        )

    @staticmethod
    def _tuned_toleration(ctx: CheckContext) -> tuple[int, int] | None:
        """``(index, seconds)`` of an unreachable or not-ready NoExecute toleration whose
        tolerationSeconds is below the default: a manifest tuned for a fast failover that a
        StatefulSet does not get from eviction."""
        for taint in (UNREACHABLE, NOT_READY):
            ev = eviction_for(ctx.sts, taint, default_toleration_s(ctx, taint))
            if ev.index is None or ev.after_s is None:
                continue
            if ev.after_s < default_toleration_s(ctx, taint):
                return ev.index, ev.after_s
        return None

    @staticmethod
    def _explanation(ctx: CheckContext, loss: Assessment) -> str:
        pod = ctx.pod_name(0)
        grace = seconds(node_monitor_grace_s(ctx))
        default_s = default_toleration_s(ctx, UNREACHABLE)
        ev = eviction_for(ctx.sts, UNREACHABLE, default_s)
        if ev.after_s is None:
            eviction = "a toleration keeps it from ever being deleted"
        elif ev.defaulted:
            eviction = f"the taint eviction deletes it gracefully {seconds(default_s)} later"
        else:
            eviction = (
                f"the taint eviction deletes it gracefully {ev.after_s} s later (tolerationSeconds "
                f"{ev.after_s}; a shorter toleration only starts the deletion sooner, it cannot "
                "finish it)"
            )
        oos_ok = out_of_service_works(ctx) and not out_of_service_tolerated(ctx)
        fix = ctx.try_simulate("node-loss-out-of-service" if oos_ok else "node-deleted")
        head = paragraph(
            f"""A StatefulSet pod has a fixed name, and the StatefulSet controller creates {pod}
            again only when the old {pod} object is gone (stateful_set_control.go#processReplica).
            When its node is lost, {pod} turns NotReady after node-monitor-grace-period ({grace}),
            {eviction}; but the kubelet cannot confirm that the containers stopped, so a graceful
            deletion never completes (strategy.go#CheckGracefulDelete): the pod stays Terminating
            and no replacement is created, however short the tolerations are. Deployments do not
            have this problem because their replacement pods get new names. The node-loss
            objective is {ctx.objectives["node-loss"].describe(loss.replicas)}; simulated:
            {loss.figure()}."""
        )
        timeline = "\n" + timeline_block(ctx, loss.result)
        if fix is not None:
            timeline += "\n" + timeline_block(ctx, fix)
        written = ctx.sts.get("metadata", "namespace")  # (not the "default" it is read as)
        namespace = written if isinstance(written, str) and written else None
        return f"{head}\n\n{_ends(ctx, pod, namespace)}\n{timeline}\n{_fix(ctx)}\n"


#: Rules whose finding states the cause when a node loss misses its objective (most specific
#: first): the objective-missed findings of node loss are folded into them.
NODE_LOSS_CAUSES = causes("node-loss", before="no-automatic-failover")


def operator_actions_of_run(ctx: CheckContext) -> str:
    """The operator actions on this version, without what one set's tolerations change."""
    if out_of_service_works(ctx):
        return "force delete, out-of-service taint, Node deletion"
    return "force delete, Node deletion"


def _ends(ctx: CheckContext, pod: str, namespace: str | None) -> str:
    """What ends a pod's Terminating state on a lost node; the force delete names ``pod`` in
    ``namespace`` as the manifest writes it (pasted without it, kubectl deletes a pod of that
    name in the current context's namespace; ``None`` for a manifest that leaves the
    namespace to the apply, which then uses the same one)."""
    detach = force_detach_phrase(ctx)
    where = f" -n {namespace}" if namespace else ""
    common = f"""What ends it: the kubelet coming back; the Node object being deleted (by an
operator, or by the cloud node controller when the VM is gone), after which PodGC force-deletes
the pod within about a minute (gc_controller.go#gcOrphaned) and a ReadWriteOnce volume is
force-detached {detach}; a force delete (kubectl delete pod {pod}{where} --grace-period=0 --force),
with the same wait for the volume (reconciler.go#reconcile, maxWaitForUnmountDuration)"""
    if out_of_service_works(ctx) and not out_of_service_tolerated(ctx):
        ends = """; or the node.kubernetes.io/out-of-service taint (non-graceful node
shutdown, KEP-2268: beta 1.26, GA 1.28), after which PodGC force-deletes the pod
(gc_controller.go#gcTerminating) and the attach/detach controller releases its volumes at
once. Only do the last three once the node is really down: a partitioned node may still run
the old pod, and the StatefulSet would then run two copies of one identity."""
    else:
        if out_of_service_works(ctx):  # the pods tolerate the taint
            why = """a toleration of the pod also covers it, so the taint's NoExecute
effect never deletes the pod, and PodGC only force-deletes pods that are already Terminating
on an out-of-service node (gc_controller.go#gcTerminating)"""
        else:
            why = f"""on Kubernetes {ctx.kube_version} PodGC's cleanup of terminating pods on
out-of-service nodes (gc_controller.go#gcTerminating) and the immediate detach are behind the
NodeOutOfServiceVolumeDetach gate, alpha and off until it turned beta and on in 1.26
(KEP-2268)"""
        ends = f""". The node.kubernetes.io/out-of-service taint does not help: {why}. Only
delete the Node or force-delete the pod once the node is really down: a partitioned node may
still run the old pod, and the StatefulSet would then run two copies of one identity."""
    return paragraph(common + ends)


def _fix(ctx: CheckContext) -> str:
    detach = force_detach_phrase(ctx)
    if out_of_service_works(ctx) and not out_of_service_tolerated(ctx):
        text = """automate the out-of-service taint for nodes confirmed down with a
node-remediation controller (then state it: profile node-remediation: out-of-service and
out-of-service-after-s), or write the runbook (confirm the node is off, then kubectl taint
node NODE node.kubernetes.io/out-of-service=nodeshutdown:NoExecute); let the cloud provider
delete Nodes of terminated VMs; run enough replicas that the application survives one lost
pod until then."""
    else:
        later = (
            """; or drop the toleration of node.kubernetes.io/out-of-service so that the
out-of-service taint releases pod and volumes at once"""
            if out_of_service_works(ctx)
            else """; from Kubernetes 1.26 the out-of-service taint releases pod and volumes
at once"""
        )
        text = f"""write the runbook (confirm the node is off, then delete the Node object:
kubectl delete node NODE, or force-delete the pod; a ReadWriteOnce volume is detached
{detach}); let the cloud provider delete Nodes of terminated VMs (and state it: profile
node-remediation: node-deletion); run enough replicas that the application survives one lost
pod until then{later}."""
    return paragraph("Fix: " + text)


def _note_explanation(ctx: CheckContext) -> str:
    return (
        paragraph(
            f"""Every StatefulSet shares this: a pod has a fixed name, and the StatefulSet
        controller creates it again only when the old pod object is gone
        (stateful_set_control.go#processReplica). On a lost node the kubelet cannot confirm
        that the containers stopped, so the graceful deletion the taint eviction starts never
        completes (strategy.go#CheckGracefulDelete), however short the tolerations are. ssrisk
        reports it on a StatefulSet only where it misses the node-loss objective
        ({ctx.objectives["node-loss"].describe(3)} for 3 replicas) or where tolerations show
        that a faster failover is expected. If the platform replaces dead nodes (a
        node-remediation controller applying the out-of-service taint, or the cloud deleting
        the Node of a terminated VM), say so in the profile (node-remediation:
        out-of-service with out-of-service-after-s, or node-deletion with
        node-deleted-after-s) and node loss is simulated that way."""
        )
        + "\n\n"
        + _ends(ctx, "POD", "NAMESPACE")
    )


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [NoAutomaticFailover()]
