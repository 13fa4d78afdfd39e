"""rwo-volume-reattach: ReadWriteOnce claims cannot follow a pod off a lost node by themselves."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Position, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration, timeline_lines

from ._cluster import force_detach_after_s, out_of_service_works
from ._podspec import claim_storage, pinned_hostname
from ._text import paragraph

SINGLE_NODE_MODES = ("ReadWriteOnce", "ReadWriteOncePod")


class RwoVolumeReattach(Rule):
    id = "rwo-volume-reattach"
    severity = Severity.WARNING
    summary = (
        "ReadWriteOnce volumeClaimTemplates: after node loss the replacement cannot attach "
        "the volume until the old pod is gone and the volume is detached (by default up to 6 min "
        "more)"
    )
    references = (
        "k8s: pkg/controller/volume/attachdetach/reconciler/reconciler.go#reconcile",
        "k8s: pkg/controller/volume/attachdetach/util/util.go#DetermineVolumeAction",
        "web: docs/concepts/cluster-administration/node-shutdown.md (Non-graceful node shutdown)",
        "k8s: pkg/controller/podgc/gc_controller.go#gcOrphaned",
        "KEP-2268 (non-graceful node shutdown: NodeOutOfServiceVolumeDetach beta and on from "
        "1.26, GA in 1.28)",
        "kubernetes/kubernetes#65392",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        templates = ctx.sts.get("spec", "volumeClaimTemplates")
        if ctx.replicas < 1 or not isinstance(templates, list):
            return
        if pinned_hostname(ctx.sts) is not None:
            return  # no replacement runs elsewhere to attach it: node-pinned-storage reports it
        for i in range(len(templates)):
            modes = ctx.sts.get("spec", "volumeClaimTemplates", i, "spec", "accessModes")
            if not isinstance(modes, list):
                continue
            rwx = any(m in ("ReadWriteMany", "ReadOnlyMany") for m in modes)
            single = [m for m in modes if m in SINGLE_NODE_MODES]
            if not single or rwx:
                continue
            storage = claim_storage(ctx, i)
            if storage is not None and not storage.attachable:
                continue  # node-local or network volumes are never attached (node-pinned-storage)
            name = ctx.sts.get("spec", "volumeClaimTemplates", i, "metadata", "name") or f"#{i}"
            at = ctx.sts.pos("spec", "volumeClaimTemplates", i, "spec", "accessModes")
            yield self._finding(ctx, at, str(name), single[0])

    def _finding(self, ctx: CheckContext, at: Position, claim: str, mode: str) -> Finding:
        pod = ctx.pod_name(0)
        oos_ok = out_of_service_works(ctx)
        # the operator action quoted: the out-of-service taint where it works, else Node deletion
        scenario = "node-loss-out-of-service" if oos_ok else "node-deleted"
        fix = ctx.try_simulate(scenario)
        recovery = ""
        if fix is not None and fix.recovered and fix.time_to_recovery_s is not None:
            if oos_ok:
                when = fmt_duration(ctx.profile_setting("out_of_service_after_s"))
                action = f"with the out-of-service taint applied at {when}"
            else:
                when = fmt_duration(ctx.profile_setting("node_deleted_after_s"))
                action = f"with the Node deleted at {when}"
            recovery = (
                f"; in the simulation, {action}, {pod} is back at "
                f"{fmt_duration(fix.time_to_recovery_s)}"
            )
        after = force_detach_after_s(ctx)
        if after is None:
            alone = (
                "a force delete alone leaves Multi-Attach errors until the node returns "
                "(--disable-force-detach-on-timeout is set)"
            )
        else:
            alone = f"a force delete alone leaves Multi-Attach errors for {fmt_duration(after)}"
        msg = (
            f"volume claim {claim!r} is {mode}: after node loss {pod}'s replacement cannot "
            "attach it until the old pod object is gone and the volume is detached "
            f"({alone}){recovery}"
        )

        def explanation() -> str:
            timeline = ""
            if fix is not None:
                timeline = (
                    f"\nSimulated timeline (scenario {scenario}, Kubernetes "
                    f"{ctx.kube_version}):\n" + "\n".join(timeline_lines(fix)) + "\n"
                )
            wait = (
                "until the node returns (--disable-force-detach-on-timeout is set)"
                if after is None
                else f"until the controller's maximum wait for unmount ({fmt_duration(after)}, "
                "maxWaitForUnmountDuration) expires (only for a node that is not Ready)"
            )
            if oos_ok:
                release = """With the
node.kubernetes.io/out-of-service taint (non-graceful node shutdown, KEP-2268: beta 1.26, GA
1.28) PodGC force-deletes the pod and the volume is detached at once."""
                fix_text = """automate the out-of-service taint for nodes confirmed down (or
rely on the cloud deleting the Node object), and document the runbook; replication in the
application lets the other replicas serve meanwhile."""
            else:
                release = f"""Deleting the
Node object removes the pod (PodGC, gc_controller.go#gcOrphaned) but the volume still waits
for that timeout. The node.kubernetes.io/out-of-service taint, which detaches at once, does
nothing on Kubernetes {ctx.kube_version}: NodeOutOfServiceVolumeDetach (KEP-2268) is off
until it turned beta and on in 1.26."""
                fix_text = """document the runbook (confirm the node is down, delete the Node object
or force-delete the pod, then expect the detach wait), or let the cloud delete Nodes of
terminated VMs; replication in the application lets the other replicas serve meanwhile; from
1.26 the out-of-service taint releases the volume at once."""
            body = paragraph(
                f"""
A {mode} volume can be attached to one node at a time. The attach/detach controller keeps it
attached to the lost node while a pod using it exists there, and the pod on a lost node stays
Terminating until the kubelet returns. After an operator force-deletes the pod, the volume is
still recorded as mounted on the lost node: the new pod gets "Multi-Attach error" {wait}
(reconciler.go#reconcile; --disable-force-detach-on-timeout, from 1.30, turns the force detach
off). {release}"""
            )
            return f"{body}\n{timeline}\n{paragraph('Fix: ' + fix_text)}\n"

        return self.finding(ctx, at, msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [RwoVolumeReattach()]
