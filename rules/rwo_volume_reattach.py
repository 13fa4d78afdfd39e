"""rwo-volume-reattach: ReadWriteOnce claims cannot follow a pod off a lost node by themselves."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, RunNote, Severity
from ssrisk.objectives import fmt_objective_duration
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration

from ._cluster import force_detach_after_s, out_of_service_works
from ._objectives import (
    Assessment,
    assess,
    causes,
    remediation,
    remediation_facts,
    remediation_phrase,
)
from ._podspec import claim_storage, pinned_hostname, template
from ._sim import timeline_block
from ._text import paragraph

SINGLE_NODE_MODES = ("ReadWriteOnce", "ReadWriteOncePod")


class RwoVolumeReattach(Rule):
    id = "rwo-volume-reattach"
    severity = Severity.WARNING
    summary = (
        "ReadWriteOnce volumeClaimTemplates: after node loss the replacement attaches only once "
        "the old pod is gone and the volume detached; stated once per run, reported on a set "
        "whose node-loss objective that wait makes it miss"
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
        claims = rwo_claims(ctx)
        if ctx.replicas < 1 or not claims:
            return
        loss = assess(ctx, "node-loss")
        if loss is None or not loss.too_long:
            return  # the wait every RWO claim shares is stated once by note()
        index, _name, mode = claims[0]
        at = ctx.sts.pos("spec", "volumeClaimTemplates", index, "spec", "accessModes")
        names = [repr(c[1]) for c in claims]
        modes = " or ".join(sorted({c[2] for c in claims}))
        if len(names) == 1:
            subject, it = f"claim {names[0]} is {modes}", "it waits"
        else:
            listed = f"{', '.join(names[:-1])} and {names[-1]}"
            subject, it = f"claims {listed} are {modes}", "they wait"
        how = remediation_phrase(ctx)
        if remediation(ctx) == "node-deletion":
            after = force_detach_after_s(ctx)
            wait = "never (force detach is off)" if after is None else fmt_duration(after)
            within = fmt_objective_duration(ctx.objectives["node-loss"].recover_within_s or 0)
            msg = (
                f"{subject}: {how} {it} {wait} to detach; node loss: "
                f"{loss.figure()} (objective recover-within {within})"
            )
            facts = {
                **remediation_facts(ctx),
                "detach_wait_s": after,
                **loss.facts(),
                "objective_recover_within_s": ctx.objectives["node-loss"].recover_within_s or 0,
            }
            echo: tuple[str, ...] = causes("node-loss", before="no-automatic-failover")
        else:
            msg = (
                f"{subject}: a replacement waits for the old pod and the volume "
                f"detach; node loss: {loss.figure()}"
            )
            echo = causes("node-loss", before=self.id)
            facts = loss.facts()
        facts.update(claims=tuple(c[1] for c in claims), access_modes=modes)
        yield self.finding(
            ctx, at, msg, lambda: self._explanation(ctx, mode, loss), echo_of=echo, facts=facts
        )

    def note(self, ctx: CheckContext) -> RunNote | None:
        if ctx.replicas < 1 or not rwo_claims(ctx):
            return None
        after = force_detach_after_s(ctx)
        forced = "never (force detach is off)" if after is None else f"{fmt_duration(after)}"
        fast = "at once with the out-of-service taint, " if out_of_service_works(ctx) else ""
        return RunNote(
            self.id,
            "ReadWriteOnce volumes leave a lost node only once the old pod is gone: "
            f"{fast}{forced} after a force delete or Node deletion",
            lambda: self._body(ctx, "ReadWriteOnce"),
            tuple(self.references),
        )

    def _explanation(self, ctx: CheckContext, mode: str, loss: Assessment) -> str:
        timeline = "\n" + timeline_block(ctx, loss.result)
        objective = ctx.objectives["node-loss"].describe(loss.replicas)
        head = paragraph(
            f"""Simulated node loss{
                " " + remediation_phrase(ctx) if remediation(ctx) != "none" else ""
            }: {loss.figure()}; the node-loss objective is {objective}."""
        )
        return f"{head}\n\n{self._body(ctx, mode)}\n{timeline}"

    def _body(self, ctx: CheckContext, mode: str) -> str:
        oos_ok = out_of_service_works(ctx)
        after = force_detach_after_s(ctx)
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
            fix_text = """automate the out-of-service taint for nodes confirmed down (and
state it: profile node-remediation: out-of-service), rather than relying on Node deletion or
force deletes alone, and document the runbook; replication in the application lets the other
replicas serve meanwhile."""
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
        return f"{body}\n\n{paragraph('Fix: ' + fix_text)}\n"


def rwo_claims(ctx: CheckContext) -> list[tuple[int, str, str]]:
    """``(index, name, mode)`` of each volumeClaimTemplate that is ReadWriteOnce or
    ReadWriteOncePod and not also ReadWriteMany or ReadOnlyMany, and whose volume is attached
    to a node (not node-local or a network file system: ``claim_storage``); none for a set
    pinned to one host."""
    claims = template(ctx.sts).claim_templates
    if not claims or pinned_hostname(ctx.sts) is not None:
        return []  # no replacement runs elsewhere to attach it: node-pinned-storage reports it
    out = []
    for claim in claims:
        i, modes = claim.index, claim.access_modes
        rwx = any(m in ("ReadWriteMany", "ReadOnlyMany") for m in modes)
        single = [m for m in modes if m in SINGLE_NODE_MODES]
        if not single or rwx:
            continue
        storage = claim_storage(ctx, i)
        if storage is not None and not storage.attachable:
            continue  # node-local or network volumes are never attached (node-pinned-storage)
        out.append((i, claim.name or f"#{i}", single[0]))
    return out


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [RwoVolumeReattach()]
