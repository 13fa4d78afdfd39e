"""max-unavailable-rollout: what ``rollingUpdate.maxUnavailable`` really does on a version.

Whether the field counts at all depends on the MaxUnavailableStatefulSet feature gate (KEP-961:
off 1.25–1.34, on 1.35.0–1.35.3, off 1.35.4+ and 1.36, on 1.37; k8s-behavior.md C, E.1, E.2,
the simulator's version table ``embedded_sim/versions.py``), and how unavailable pods are
counted depends on the release (k8s-behavior.md B.4.2 step 7, E.3).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
from ssrisk.embedded_sim.disruption import parse_int_or_percent, rolling_max_unavailable

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._cluster import gate_enabled, version_facts
from ._podspec import set_spec
from ._quorum import allowed_down
from ._sim import timeline_block
from ._text import paragraph

MAX_UNAVAILABLE_STATEFULSET = "MaxUnavailableStatefulSet"
FIELD = ("spec", "updateStrategy", "rollingUpdate", "maxUnavailable")

#: The releases where a Parallel set repairs a bad first revision after a revert, for messages.
HEALING_VERSIONS = (
    "with their default gates 1.25–1.34, 1.35.4 and later, 1.36 (gate off: one pod at a time) "
    "and 1.37 (#137666) repair it after a revert"
)


def resolve_max_unavailable(raw: Any, replicas: int) -> int | None:
    """The number of pods ``maxUnavailable`` lets the controller take down at once.

    ``raw`` is the manifest value (an integer or a percentage string such as ``"50%"``);
    a percentage is applied to ``replicas`` and rounded down, and the result is at least 1, as
    k8s: pkg/controller/statefulset/stateful_set_utils.go#getStatefulSetMaxUnavailable does
    (intstr.GetScaledValueFromIntOrPercent with roundUp false). Returns ``None`` for values the
    API server rejects (ValidateStatefulSetUpdateStrategy: 0, negative, not an int-or-percent).
    """
    amount = parse_int_or_percent(raw)
    if amount is None or amount.value < 1 or (amount.percent and amount.value > 100):
        return None
    return rolling_max_unavailable(raw, replicas)


def rolling_allowed(ctx: CheckContext, replicas: int) -> int:
    """Replicas the rolling-update objective lets go down at once (default: minority, which
    for a quorum system is fewer than half and for other sets at most half)."""
    return allowed_down(ctx, ctx.objectives["rolling-update"].max_unavailable, replicas)


def majority_lost_at(replicas: int) -> int:
    """How many replicas down at once leave fewer than a majority: ``ceil(replicas / 2)``."""
    return (replicas + 1) // 2


class _Gate(msgspec.Struct, frozen=True):
    on: bool
    configured: bool  # set by the configuration's feature-gates, not the version default

    def short(self, kube_version: str) -> str:
        """``"MaxUnavailableStatefulSet is off on Kubernetes 1.34"`` (or switched off/on in
        the configuration's feature-gates)."""
        state = "on" if self.on else "off"
        if self.configured:
            return f"{MAX_UNAVAILABLE_STATEFULSET} is switched {state} in feature-gates"
        return f"{MAX_UNAVAILABLE_STATEFULSET} is {state} on Kubernetes {kube_version}"

    def phrase(self, kube_version: str) -> str:
        state = "on" if self.on else "off"
        if self.configured:
            return (
                f"{MAX_UNAVAILABLE_STATEFULSET} is switched {state} in the configuration's "
                f"feature-gates (Kubernetes {kube_version})"
            )
        return f"{MAX_UNAVAILABLE_STATEFULSET} is {state} by default on Kubernetes {kube_version}"


def _gate(ctx: CheckContext) -> _Gate:
    configured = MAX_UNAVAILABLE_STATEFULSET in (ctx.feature_gates or {})
    return _Gate(gate_enabled(ctx, MAX_UNAVAILABLE_STATEFULSET), configured)


class MaxUnavailableRollout(Rule):
    id = "max-unavailable-rollout"
    severity = Severity.WARNING
    other_severities = (Severity.INFO,)
    summary = (
        "rollingUpdate.maxUnavailable takes down more replicas at once than the rolling-update "
        "objective allows (a minority) where MaxUnavailableStatefulSet is on; Parallel sets on "
        "1.35.0–1.35.3 never repair a bad rollout after a revert; info where the gate is off "
        "and the field is ignored"
    )
    references = (
        "k8s: pkg/controller/statefulset/stateful_set_control.go"
        "#updateStatefulSetAfterInvariantEstablished",
        "k8s: pkg/controller/statefulset/stateful_set_utils.go#getStatefulSetMaxUnavailable",
        "k8s: pkg/registry/apps/statefulset/strategy.go#dropStatefulSetDisabledFields",
        "k8s: pkg/features/kube_features.go (MaxUnavailableStatefulSet)",
        "KEP-961 (maxUnavailable for StatefulSets: alpha 1.24, beta and on in 1.35.0)",
        "web: docs/concepts/workloads/controllers/statefulset.md (Maximum unavailable Pods)",
        "web: blog/2022/05/27/maxunavailable-for-statefulset",
        "kubernetes/kubernetes#137409",
        "kubernetes/kubernetes#137666",
        "kubernetes/kubernetes#137904",
        "kubernetes/kubernetes#137926",
        "kubernetes/kubernetes#139466",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        spec = set_spec(ctx.sts)
        if n < 1 or (ctx.is_fragment and spec.replicas is None):
            return
        if spec.update_strategy_type not in (None, "RollingUpdate"):
            return  # OnDelete (the API server rejects rollingUpdate with it)
        partition = spec.partition if spec.partition is not None and spec.partition > 0 else 0
        if partition >= n:
            return  # nothing is ever updated: partition-blocks-update
        raw = spec.max_unavailable
        resolved = resolve_max_unavailable(raw, n) if raw is not None else None
        gate = _gate(ctx)
        if not gate.on:
            if resolved is not None and resolved > 1:
                yield self._ignored(ctx, gate, raw, resolved)
            return
        at_once = min(resolved or 1, n - partition)
        allowed = rolling_allowed(ctx, n)
        quorum = at_once > 1 and at_once > allowed
        parallel = ctx.pod_management_policy == "Parallel" and (
            spec.pod_management_policy is not None
        )
        # (1.37 counts unavailable pods the #137666 way: broken old-revision pods of a
        # Parallel set are replaced at once; k8s-behavior.md E.3.1)
        stuck = parallel and version_facts(ctx.kube_version).maxunavailable_counting != "1.37"
        bad = ctx.try_simulate("bad-rollout") if stuck else None
        if bad is not None and bad.recovered:
            stuck = False  # the simulation shows a revert repairing it (nothing to report)
        if not (quorum or stuck):
            return
        parts: list[str] = []
        facts: dict[str, FactValue] = {"replicas": n}
        blocks: list[Any] = []  # the results whose timelines the explanation quotes
        why: list[str] = []
        why.append(paragraph(f"{gate.phrase(ctx.kube_version)}."))
        if quorum:
            msg, block = self._quorum(ctx, raw, at_once, allowed)
            parts.append(msg)
            facts.update(max_unavailable=raw, at_once=at_once, objective_max_unavailable=allowed)
            if block is not None:
                facts["simulated_unavailable"] = block.max_unavailable
            blocks.append(block)
            why.append(_QUORUM_WHY.format(n=n, k=majority_lost_at(n)))
        if stuck:
            parts.append(self._stuck(ctx, bad, short=quorum))
            facts.update(
                pod_management_policy="Parallel",
                kube_version=ctx.kube_version,
                kubernetes_issue=137409,
                simulated=bad is not None and not bad.recovered,
            )
            if bad is not None:
                blocks.append(bad)
            why.append(_STUCK_WHY + " Releases " + HEALING_VERSIONS + ".")
        at = ctx.sts.pos(*FIELD) if raw is not None else ctx.sts.pos("spec", "podManagementPolicy")
        fix = [_QUORUM_FIX] if quorum else []
        if stuck:
            fix.append(_STUCK_FIX)

        def explanation() -> str:
            timelines = "\n".join(timeline_block(ctx, b) for b in blocks if b is not None)
            return "\n\n".join(
                [paragraph(w) for w in why]
                + [timelines.rstrip()]
                + [paragraph("Fix: " + " ".join(fix))]
            )

        yield self.finding(ctx, at, "; ".join(parts), explanation, facts=facts)

    def _quorum(self, ctx: CheckContext, raw: Any, at_once: int, allowed: int) -> tuple[str, Any]:
        """The message part and the simulated result (or ``None``) for a maxUnavailable beyond
        the rolling-update objective."""
        n = ctx.replicas
        value = f"maxUnavailable {raw}" + (f" (= {at_once})" if str(raw) != str(at_once) else "")
        msg = f"{value}: a rolling update takes {at_once} of {n} down at once"
        result = ctx.try_simulate("rolling-update")
        if result is None:
            return msg + f" (objective max-unavailable {allowed})", None
        took = result.max_unavailable
        msg += f" (objective max-unavailable {allowed}; simulated {took} of {n})"
        return msg, result

    def _stuck(self, ctx: CheckContext, bad: Any, short: bool = False) -> str:
        """The message part for a Parallel set under the 1.35 counting (#137409)."""
        if short:
            return "a reverted bad rollout is not repaired (#137409)"
        simulated = "; simulated" if bad is not None and not bad.recovered else ""
        return (
            "Parallel under the 1.35.0-1.35.3 counting: a reverted bad rollout is not repaired "
            f"without deleting pods by hand (kubernetes/kubernetes#137409{simulated})"
        )

    def _ignored(self, ctx: CheckContext, gate: _Gate, raw: Any, resolved: int) -> Finding:
        """Info: the field is set but the gate is off, so updates go one pod at a time."""
        msg = (
            f"maxUnavailable {raw} is ignored: {gate.short(ctx.kube_version)}; a rolling "
            f"update replaces one pod at a time, not {resolved}"
        )
        result = ctx.try_simulate("rolling-update")
        facts: dict[str, FactValue] = {
            "max_unavailable": raw,
            "at_once": resolved,
            "kube_version": ctx.kube_version,
        }
        if result is not None:
            msg += f" (simulated {result.max_unavailable} of {result.replicas})"
            facts.update(simulated_unavailable=result.max_unavailable, replicas=result.replicas)

        def explanation() -> str:
            text = paragraph(_IGNORED_WHY.format(version=ctx.kube_version))
            if result is not None:
                text += "\n\n" + timeline_block(ctx, result).rstrip()
            return text + "\n\n" + paragraph(_IGNORED_FIX)

        return self.finding(
            ctx, ctx.sts.pos(*FIELD), msg, explanation, severity=Severity.INFO, facts=facts
        )


_QUORUM_WHY = """With the MaxUnavailableStatefulSet gate on, the rolling update counts the
unavailable replicas and deletes up to maxUnavailable minus that count of old-revision pods at
once, highest ordinal first (stateful_set_control.go#updateStatefulSetAfterInvariantEstablished;
KEP-961). A percentage is taken of replicas and rounded down, with a minimum of 1
(stateful_set_utils.go#getStatefulSetMaxUnavailable; the docs page says rounded up, the code
rounds down). With {n} replicas, {k} down at once leave fewer than a majority: an etcd, ZooKeeper,
Kafka KRaft or Raft-based database stops accepting writes until the new pods are Ready."""

_STUCK_WHY = """On 1.35.0 to 1.35.3 (and any release before 1.37 with the gate switched on)
the controller counts every unavailable replica, including an old-revision pod that is broken,
and deletes nothing while that count reaches maxUnavailable. After a rollout to a template that
never becomes Ready is reverted, the broken pods are themselves unavailable and on an old
revision, so they use up the budget and are never replaced: the set stays down until someone
deletes them by hand (kubernetes/kubernetes#137409). 1.35.4 and 1.36 turned the gate off again
(#137926, #137904), where the one-pod-at-a-time path of a Parallel set replaces an unready pod;
1.37 turned it back on with #137666, which replaces broken old-revision pods of a Parallel set
at once (#139466)."""

_QUORUM_FIX = """keep maxUnavailable below half of replicas (for a quorum system leave it
unset, which is 1). A PodDisruptionBudget does not help here: the rolling update deletes pods
directly and never asks the Eviction API."""

_STUCK_FIX = """On 1.35.0 to 1.35.3 upgrade to 1.35.4 or later, or switch the gate off
(--feature-gates=MaxUnavailableStatefulSet=false on kube-controller-manager); until then keep
a runbook for deleting the broken pods after a revert."""

_IGNORED_WHY = """The StatefulSet controller only reads maxUnavailable when the
MaxUnavailableStatefulSet gate is on (stateful_set_control.go#updateStatefulSet; KEP-961), and
with the gate off kube-apiserver drops the field when the object is created
(pkg/registry/apps/statefulset/strategy.go#dropStatefulSetDisabledFields; it keeps it on an
object that already has it). On Kubernetes {version} the gate is off, so the rolling update
deletes one old-revision pod, waits until
its replacement is Ready and available, and only then moves to the next ordinal. The gate is on
by default in 1.35.0 to 1.35.3 and in 1.37 (#139466), off in 1.25 to 1.34, 1.35.4 and later
(#137926) and 1.36 (#137904)."""

_IGNORED_FIX = """Fix: do not count on maxUnavailable for rollout speed or for capacity
planning on this version; remove it, or keep it knowing that it takes effect once the cluster
runs a release (or a kube-controller-manager and kube-apiserver feature-gate setting) that
enables MaxUnavailableStatefulSet, and check that the value is safe then."""


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [MaxUnavailableRollout()]
