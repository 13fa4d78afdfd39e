"""rwo-volume-reattach: ReadWriteOnce claims cannot follow a pod off a lost node by themselves."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Position, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration, timeline_lines

SINGLE_NODE_MODES = ("ReadWriteOnce", "ReadWriteOncePod")


class RwoVolumeReattach(Rule):
    id = "rwo-volume-reattach"
    severity = Severity.WARNING
    summary = (
        "ReadWriteOnce volumeClaimTemplates: after node loss the replacement cannot attach "
        "the volume until the old pod is gone and the volume is detached (up to 6 min more)"
    )
    references = (
        "k8s: pkg/controller/volume/attachdetach/reconciler/reconciler.go#reconcile",
        "k8s: pkg/controller/volume/attachdetach/util/util.go#DetermineVolumeAction",
        "web: docs/concepts/cluster-administration/node-shutdown.md (Non-graceful node shutdown)",
        "kubernetes/kubernetes#65392",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        templates = ctx.sts.get("spec", "volumeClaimTemplates")
        if ctx.replicas < 1 or not isinstance(templates, list):
            return
        for i in range(len(templates)):
            modes = ctx.sts.get("spec", "volumeClaimTemplates", i, "spec", "accessModes")
            if not isinstance(modes, list):
                continue
            rwx = any(m in ("ReadWriteMany", "ReadOnlyMany") for m in modes)
            single = [m for m in modes if m in SINGLE_NODE_MODES]
            if not single or rwx:
                continue
            name = ctx.sts.get("spec", "volumeClaimTemplates", i, "metadata", "name") or f"#{i}"
            at = ctx.sts.pos("spec", "volumeClaimTemplates", i, "spec", "accessModes")
            yield self._finding(ctx, at, str(name), single[0])

    def _finding(self, ctx: CheckContext, at: Position, claim: str, mode: str) -> Finding:
        pod = ctx.pod_name(0)
        oos = ctx.try_simulate("node-loss-out-of-service")
        recovery = ""
        if oos is not None and oos.recovered and oos.time_to_recovery_s is not None:
            recovery = (
                "; in the simulation, with the out-of-service taint applied at "
                f"{fmt_duration(ctx.profile_setting('out_of_service_after_s'))}, "
                f"{pod} is back at {fmt_duration(oos.time_to_recovery_s)}"
            )
        msg = (
            f"volume claim {claim!r} is {mode}: after node loss {pod}'s replacement cannot "
            "attach it until the old pod object is gone and the volume is detached (a force "
            f"delete alone leaves Multi-Attach errors for 6 min){recovery}"
        )
        timeline = ""
        if oos is not None:
            timeline = (
                "\nSimulated timeline (scenario node-loss-out-of-service, Kubernetes "
                f"{ctx.kube_version}):\n" + "\n".join(timeline_lines(oos)) + "\n"
            )
        explanation = f"""
A {mode} volume can be attached to one node at a time. The attach/detach controller keeps it
attached to the lost node while a pod using it exists there, and the pod on a lost node stays
Terminating until the kubelet returns. After an operator force-deletes the pod, the volume is
still recorded as mounted on the lost node: the new pod gets "Multi-Attach error" until the
controller's 6-minute maximum wait for unmount expires (only for a node that is not Ready, and
never with --disable-force-detach-on-timeout, 1.30+). With the
node.kubernetes.io/out-of-service taint (non-graceful node shutdown, GA in 1.28) PodGC
force-deletes the pod and the volume is detached at once.
{timeline}
Fix: automate the out-of-service taint for nodes confirmed down (or rely on the cloud
deleting the Node object), and document the runbook; replication in the application lets the
other replicas serve meanwhile.
"""
        return self.finding(ctx, at, msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [RwoVolumeReattach()]
