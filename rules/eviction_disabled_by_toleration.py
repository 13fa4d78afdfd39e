"""eviction-disabled-by-toleration: tolerations that keep pods bound to a dead node."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.embedded_sim import ScenarioResult
from ssrisk.embedded_sim.podtemplate import Toleration

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule, RuleOption
from ssrisk.timeline import fmt_duration

from ._cluster import default_toleration_s, node_monitor_grace_s, out_of_service_works, seconds
from ._objectives import node_loss_scenario, remediation, remediation_facts, remediation_phrase
from ._podspec import (
    NOT_READY,
    OUT_OF_SERVICE,
    POD,
    UNREACHABLE,
    Eviction,
    eviction_for,
    tolerations,
)
from ._sim import timeline_block
from ._text import paragraph

#: A tolerationSeconds of at least this many seconds (1 h) counts as "very long" by default.
LONG_TOLERATION_S = 3600

SOURCES = (
    "k8s: plugin/pkg/admission/defaulttolerationseconds/admission.go#Admit",
    "k8s: pkg/controller/tainteviction/taint_eviction.go#processPodOnNode",
    "k8s: pkg/controller/tainteviction/taint_eviction.go#getMinTolerationTime",
    "web: docs/concepts/scheduling-eviction/taint-and-toleration.md (Taint based Evictions)",
    "k8s: pkg/controller/podgc/gc_controller.go#gcTerminating",
    "k8s: pkg/controller/podgc/gc_controller.go#gcOrphaned",
)


class EvictionDisabledByToleration(Rule):
    id = "eviction-disabled-by-toleration"
    severity = Severity.WARNING
    fix_scenarios = ("node-loss",)
    other_severities = (Severity.INFO,)
    summary = (
        "a toleration for node.kubernetes.io/unreachable or not-ready (or a catch-all one) "
        "without tolerationSeconds, or a very long one: pods are never evicted from a dead node"
    )
    references = SOURCES
    options = (
        RuleOption(
            "long-toleration-s",
            LONG_TOLERATION_S,
            1,
            31_536_000,
            "the shortest tolerationSeconds for not-ready or unreachable reported as very long",
        ),
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1:
            return
        long_s = self.option(ctx, "long-toleration-s")
        reported: set[int | None] = set()
        for taint in (UNREACHABLE, NOT_READY):
            ev = eviction_for(ctx.sts, taint, default_toleration_s(ctx, taint))
            if ev.index in reported:
                continue
            if ev.after_s is None or (ev.after_s or 0) >= long_s:
                reported.add(ev.index)
                yield self._disabled(ctx, ev)
        yield from self._noschedule_only(ctx)

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """tolerationSeconds on each toleration of the unreachable and not-ready taints that
        keeps pods for ever or very long: the DefaultTolerationSeconds admission default (300 s
        unless the profile says otherwise; admission.go#Admit), after which the taint eviction
        controller deletes the pod (taint_eviction.go#processPodOnNode). Only a toleration
        of that key with effect NoExecute: the API server accepts tolerationSeconds on no other
        (validation.go#ValidateTolerations), and a catch-all toleration is a choice the
        manifest does not explain (advice, not a fix)."""
        if finding.severity < Severity.WARNING:
            return ()
        long_s = self.option(ctx, "long-toleration-s")
        tols = tolerations(ctx.sts)
        edits: dict[int, Edit] = {}
        for taint in (UNREACHABLE, NOT_READY):
            ev = eviction_for(ctx.sts, taint, default_toleration_s(ctx, taint))
            if ev.after_s is not None and ev.after_s < long_s:
                continue
            if ev.index is None or ev.index >= len(tols):
                return ()
            tol = tols[ev.index]
            if tol.key != taint or tol.effect != "NoExecute":
                return ()
            default = default_toleration_s(ctx, taint)
            value = int(default) if float(default).is_integer() else default
            keys = (*POD, "tolerations", ev.index, "tolerationSeconds")
            edits[ev.index] = Edit(keys, value)
        if not edits:
            return ()
        seconds_set = sorted({e.value for e in edits.values()})
        summary = f"set tolerationSeconds to {' and '.join(map(str, seconds_set))} on " + (
            "the node-failure tolerations" if len(edits) > 1 else "the node-failure toleration"
        )
        caution = (
            "a pod template change: every pod is replaced once, in a rolling update; the pods "
            "then leave a failed node after that time, as pods without the toleration do"
        )
        return (Remedy(summary, tuple(edits.values()), caution),)

    def _disabled(self, ctx: CheckContext, ev: Eviction) -> Finding:
        tols = tolerations(ctx.sts)
        index = ev.index if ev.index is not None else 0
        tol = tols[index] if index < len(tols) else Toleration()
        catch_all = not tol.key
        if ev.after_s is None:
            at = ctx.sts.pos(*POD, "tolerations", index)
            what = "a catch-all toleration" if catch_all else f"the toleration for {tol.key}"
            when = "never evicted"
        else:
            at = ctx.sts.pos(*POD, "tolerations", index, "tolerationSeconds")
            what = f"tolerationSeconds {ev.after_s} for {tol.key or 'every taint'}"
            when = f"evicted only {fmt_duration(ev.after_s)} after the taint"
        pod = ctx.pod_name(0)
        # node loss as the platform handles it (profile node-remediation), as check's other
        # rules and `ssrisk simulate` simulate it
        scenario = node_loss_scenario(ctx)
        sim = ctx.try_simulate(scenario)
        remedy = remediation_phrase(ctx)
        released = _remediation_releases(ctx)
        quoted = ""
        if sim is not None:
            on = f" {remedy}" if remedy else ""
            quoted = (
                f"; simulated node loss{on} on Kubernetes {ctx.kube_version}: "
                f"{'recovered' if sim.recovered else 'no recovery'}"
                f"{', manual action required' if sim.manual_action_required else ''}"
            )
        default = seconds(default_toleration_s(ctx, ev.taint))
        oos = ""
        if catch_all and tol.tolerates(OUT_OF_SERVICE, "nodeshutdown", "NoExecute"):
            oos = "; " + _released_by(ctx, pod)
        if catch_all:
            node = "an unreachable or not-ready node"
        else:
            node = "an unreachable node" if ev.taint == UNREACHABLE else "a not-ready node"
        oos_too = " (nor by the out-of-service taint)" if oos else ""
        who, plural, facts = _stuck_pods(ctx, sim)
        facts.update(taint=ev.taint, toleration_s=ev.after_s)
        verb = "are" if plural else "is"
        severity = None
        if remedy:
            facts.update(remediation_facts(ctx))
        if released is not None:
            facts = {"taint": ev.taint, "toleration_s": ev.after_s, **remediation_facts(ctx)}
            # the platform's remediation does what the eviction would not: the toleration
            # changes nothing about this set's recovery (an info, not a warning)
            back = ""
            if sim is not None and sim.recovered and sim.time_to_recovery_s is not None:
                back = f" (simulated: back at {fmt_duration(sim.time_to_recovery_s)})"
                facts["recovery_s"] = sim.time_to_recovery_s
            msg = f"{what}: {when} from {node}, but {released} releases the pods{back}"
            severity = Severity.INFO
        else:
            stay = "stay" if plural else "stays"
            even = f", even {remedy}," if remedy and not oos else ""
            msg = f"{what}: {who} {verb} {when} from {node}{oos_too}{even} and {stay} NotReady"
        subject = "its pods are" if released is not None else f"{who} {verb}"

        def explanation() -> str:
            text, fix = _prose(ctx, node, subject, when, default, oos, quoted, released)
            timeline = "\n" + timeline_block(ctx, sim) if sim is not None else ""
            return text + timeline + fix

        return self.finding(ctx, at, msg, explanation, severity=severity, facts=facts)

    def _noschedule_only(self, ctx: CheckContext) -> Iterator[Finding]:
        """Tolerations for the node-failure keys that only cover scheduling."""
        tols = tolerations(ctx.sts)
        for i, t in enumerate(tols):
            key, effect = t.key, t.effect
            if key not in (UNREACHABLE, NOT_READY) or effect not in (
                "NoSchedule",
                "PreferNoSchedule",
            ):
                continue
            default = seconds(default_toleration_s(ctx, key))
            ev = eviction_for(ctx.sts, key, default_toleration_s(ctx, key))
            if not ev.defaulted:
                continue
            at = ctx.sts.pos(*POD, "tolerations", i, "effect")
            msg = (
                f"the toleration for {key} has effect {effect}: it only affects scheduling; "
                f"pods are still evicted {default} after the node fails"
            )
            explanation = paragraph(
                f"""
The DefaultTolerationSeconds admission plugin only counts a toleration with effect NoExecute
(or no effect) as covering {key} (admission.go#Admit). This toleration has effect {effect}, so
every pod still gets {{key: {key}, operator: Exists, effect: NoExecute, tolerationSeconds:
{ev.after_s}}} and is deleted {default} after the NoExecute taint appears (the
kube-apiserver default in the cluster profile). If a different eviction delay was intended,
add a NoExecute toleration with the wanted tolerationSeconds; otherwise this toleration only
lets pods schedule onto a node that is already failing."""
            )
            facts = {"taint": key, "effect": effect, "toleration_s": ev.after_s}
            yield self.finding(ctx, at, msg, explanation, severity=Severity.INFO, facts=facts)


#: Why each node remediation releases pods that tolerate the node-failure taints.
_RELEASE_SOURCE = {
    "out-of-service": "the node.kubernetes.io/out-of-service:NoExecute taint is tolerated only "
    "by a toleration of that key or a catch-all one, so the taint eviction controller deletes "
    "the pods at once (taint_eviction.go#processPodOnNode), and PodGC force-deletes pods "
    "Terminating on a not-Ready node with that taint (gc_controller.go#gcTerminating, KEP-2268)",
    "node-deletion": "PodGC force-deletes the pods bound to a Node that no longer exists, "
    "whatever they tolerate (gc_controller.go#gcOrphaned)",
}


def _remediation_releases(ctx: CheckContext) -> str | None:
    """What of the profile's node remediation releases this set's pods from a lost node
    (``"the out-of-service taint at 2m0s"``), or ``None`` when none is configured or the pods
    are not released by it.

    Node deletion always releases them (PodGC ``gcOrphaned`` ignores tolerations). The
    out-of-service taint does unless the pods tolerate ``node.kubernetes.io/out-of-service``
    :NoExecute for ever (a catch-all toleration does) or the version lacks
    NodeOutOfServiceVolumeDetach (then PodGC never force-deletes the Terminating pods).
    """
    how = remediation(ctx)
    if how == "node-deletion":
        return remediation_phrase(ctx).replace("with the Node deleted", "deleting the Node")
    if how == "out-of-service" and out_of_service_works(ctx):
        if eviction_for(ctx.sts, OUT_OF_SERVICE, 0.0).after_s is None:
            return None
        return remediation_phrase(ctx).replace("with the out", "the out")
    return None


def _stuck_pods(
    ctx: CheckContext, sim: ScenarioResult | None
) -> tuple[str, bool, dict[str, FactValue]]:
    """The pods a node loss leaves bound to the lost node in ``sim`` (the configured node-loss
    scenario), as a phrase: ``"redis-0"``, ``"redis-0 and redis-1"``, ``"all 3 pods (worst
    case)"``; whether it is plural; and the facts of the phrase (``stuck_pods``, the count,
    and ``worst_case``). Without a simulation: ``"its pods"``."""
    if sim is None:
        return "its pods", True, {}
    failed = set(sim.failed_nodes)
    stuck = [n for n, p in sim.pods.items() if p.node in failed and p.unavailable_s is None]
    if not stuck:
        return ctx.pod_name(0), False, {"stuck_pods": 1}
    facts: dict[str, FactValue] = {"stuck_pods": len(stuck), "worst_case": False}
    if len(stuck) == 1:
        return stuck[0], False, facts
    if len(stuck) == ctx.replicas:
        basis = sim.placement_basis
        facts["worst_case"] = basis is not None and not basis.forced_node
        worst = " (worst case)" if facts["worst_case"] else ""
        return f"{'both' if len(stuck) == 2 else f'all {len(stuck)}'} pods{worst}", True, facts
    return ", ".join(stuck[:-1]) + " and " + stuck[-1], True, facts


def _released_by(ctx: CheckContext, pod: str) -> str:
    """What still releases a pod that tolerates every NoExecute taint, on this version.

    PodGC force-deletes pods bound to a Node that no longer exists whatever they tolerate
    (k8s: pkg/controller/podgc/gc_controller.go#gcOrphaned); on a not-Ready node with the
    out-of-service taint it force-deletes only pods that already have a deletionTimestamp
    (#gcTerminating, behind NodeOutOfServiceVolumeDetach).
    """
    if out_of_service_works(ctx):
        return (
            "it also tolerates node.kubernetes.io/out-of-service, so that taint alone does not "
            f"delete {pod} either; only a force delete, deleting the Node (PodGC then "
            f"force-deletes its pods) or a plain delete of {pod} while the node has the taint "
            "(PodGC force-deletes Terminating pods on out-of-service nodes) releases it"
        )
    return (
        f"it also tolerates node.kubernetes.io/out-of-service (which does nothing on Kubernetes "
        f"{ctx.kube_version} anyway); only a force delete or deleting the Node (PodGC then "
        f"force-deletes its pods) releases {pod}"
    )


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [EvictionDisabledByToleration()]


def _prose(
    ctx: CheckContext,
    node: str,
    subject: str,
    when: str,
    default: str,
    oos: str,
    quoted: str,
    released: str | None,
) -> tuple[str, str]:
    """The explanation's text and its fix: what happens on ``node`` (the pods as ``subject``,
    ``when`` they are evicted), why the taints and the admission plugin do that, and what
    the eviction changes for a StatefulSet."""
    grace_s = seconds(node_monitor_grace_s(ctx))
    if out_of_service_works(ctx):
        role = """and scripts or remediation tools that force-delete pods stuck
Terminating on a dead node never see this one. The out-of-service taint still releases it
unless the toleration also covers node.kubernetes.io/out-of-service (a catch-all toleration
does): the taint's own NoExecute effect deletes the pods that do not tolerate it, and PodGC
then force-deletes the Terminating ones (gc_controller.go#gcTerminating)."""
    else:
        role = f"""and on Kubernetes {ctx.kube_version}, where the out-of-service taint
does not work yet (NodeOutOfServiceVolumeDetach is off), it changes little: a force delete
or Node deletion is needed either way. Scripts or remediation tools that force-delete pods
stuck Terminating on a dead node never see this one, though."""
    role = paragraph(
        "For a StatefulSet the eviction alone does not bring the pod back (see "
        "no-automatic-failover), " + role
    )
    taints = paragraph(
        f"""
When a node stops reporting, the node lifecycle controller marks it Unknown after
node-monitor-grace-period ({grace_s} on Kubernetes {ctx.kube_version}) and taints it
node.kubernetes.io/unreachable:NoExecute (not-ready when the kubelet reports NotReady). The
taint eviction controller deletes every pod that does not tolerate the taint, or whose
tolerationSeconds ran out; a matching toleration without tolerationSeconds tolerates it for
ever (taint_eviction.go#getMinTolerationTime). Because the pod already tolerates the taint,
the DefaultTolerationSeconds admission plugin does not add its {default} default
(admission.go#Admit: any toleration with that key or an empty key, and effect NoExecute or
empty, suppresses it; the value is the kube-apiserver default of the cluster profile)."""
    )
    summary = paragraph(
        f"""On {node} {subject} {when} (the default toleration is {default}){oos}{quoted}."""
    )
    if released is not None:
        summary += "\n\n" + paragraph(
            f"""The cluster profile says the platform replaces a dead node (node-remediation:
{remediation(ctx)}): {released} releases pods whatever they tolerate of the unreachable and
not-ready taints ({_RELEASE_SOURCE[remediation(ctx)]}), so this toleration does not change
how this StatefulSet recovers from a node loss; it matters where that remediation is missing
or late."""
        )
    text = f"""
{summary}

{taints}

{role}
"""
    fix = f"""
Fix: tolerate only the taints the workload needs, with an explicit effect (NoSchedule for
node-pool taints), and give unreachable / not-ready tolerations a tolerationSeconds (or drop
them to keep the {default} default).
"""

    return text, fix
