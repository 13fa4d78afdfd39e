"""Scenario definitions and the runner behind `simulate()`.

Every scenario starts from a steady state (all replicas Running, Ready and available, worst
placement the constraints allow) and applies its fault at t = 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import msgspec

from .budget import Budget
from .cluster import Node, Taint
from .profile import ClusterProfile, assumption_lines
from .result import Goal, PodResult, ScenarioResult
from .simulation import Simulation
from .versions import NODE_OUT_OF_SERVICE_VOLUME_DETACH
from .workload import TAINT_OUT_OF_SERVICE

SRC_NODE_STATUS = "docs/reference/node/node-status.md#heartbeats"
SRC_OOS = "docs/concepts/cluster-administration/node-shutdown.md#non-graceful-node-shutdown"
SRC_CCM = (
    "staging/src/k8s.io/cloud-provider/controllers/nodelifecycle/"
    "node_lifecycle_controller.go#MonitorNodes"
)
SRC_SHUTDOWN = "docs/concepts/cluster-administration/node-shutdown.md#graceful-node-shutdown"
SRC_ROLLBACK = "docs/concepts/workloads/controllers/statefulset.md#forced-rollback"


def _target_node(sim: Simulation) -> Node:
    ords = sim.stsc.ordinals()
    if ords:
        pod = sim.cluster.pods.get(sim.wl.pod_name(ords[0]))
        if pod is not None and pod.node is not None:
            return sim.cluster.nodes[pod.node]
    return next(iter(sim.cluster.nodes.values()))


def _lose(sim: Simulation, node: Node) -> None:
    sim.lose_node(
        node, "stops renewing its Lease (power off / kubelet stop / partition)", SRC_NODE_STATUS
    )


def _delete_node(sim: Simulation, node: Node) -> None:
    sim.cluster.delete_node(node)
    sim.record(None, "node-deleted", f"Node object {node.name} deleted", SRC_CCM)
    sim.changed()
    sim.nlc.node_deleted(node)
    sim.adc.on_node_health(node.name)
    sim.podgc.kick()
    sim.scheduler.retry_pending()


def _all_updated(sim: Simulation, rev: str) -> bool:
    for o in sim.stsc.ordinals():
        p = sim.cluster.pods.get(sim.wl.pod_name(o))
        if p is None or p.revision != rev:
            return False
    return sim.stsc.update_revision == rev


#: How a scenario's operation ended (drain, rollout, scale-down), computed at the end of the
#: run; None for a scenario that only injects a fault.
Extra = Callable[[], Goal] | None


class Scenario(msgspec.Struct, frozen=True):
    """One scenario: its name (what ``--scenario`` takes), what it does (``--help`` and the
    verdicts say it), whether its fault hits one node (``"node"``), one zone (``"zone"``) or
    no failure domain (``None``), and ``setup``, which schedules its events on a simulation
    at steady state (the fault at t = 0, on ``node``, the node of the lowest ordinal) and
    returns how its operation ended (a `Goal`, or None)."""

    name: str
    description: str
    fault: str | None
    setup: Callable[[Simulation, Node], Extra]


#: Every scenario, in the order ``--scenario`` and the report list them.
REGISTRY: dict[str, Scenario] = {}


def _scenario(
    name: str, description: str, fault: str | None
) -> Callable[[Callable[[Simulation, Node], Extra]], Callable[[Simulation, Node], Extra]]:
    def register(setup: Callable[[Simulation, Node], Extra]) -> Callable[[Simulation, Node], Extra]:
        REGISTRY[name] = Scenario(name, description, fault, setup)
        return setup

    return register


#: How the node-loss description ends; a run whose profile brings the node back says when.
NEVER_RETURNS = "and the node never returns (unless the profile's node-returns-after-s is set)"


@_scenario(
    "node-loss",
    "the node of the lowest ordinal stops heartbeating at t=0 (power off, kubelet stop or "
    "partition); the Node object stays " + NEVER_RETURNS,
    "node",
)
def _node_loss(sim: Simulation, node: Node) -> Extra:
    p = sim.profile
    sim.loop.at(0.0, lambda: _lose(sim, node), "fault")
    if p.node_returns_after_s is None:
        return None
    back = p.node_returns_after_s
    sim.loop.at(
        back,
        lambda: sim.return_node(node, p.node_returns_rebooted, SRC_NODE_STATUS),
        "node-return",
    )
    return None


@_scenario(
    "node-loss-out-of-service",
    "node-loss, then the operator applies node.kubernetes.io/out-of-service:NoExecute at "
    "the profile's out-of-service-after-s",
    "node",
)
def _node_loss_out_of_service(sim: Simulation, node: Node) -> Extra:
    def oos() -> None:
        node.add_taint(Taint(TAINT_OUT_OF_SERVICE, "NoExecute", "nodeshutdown", sim.now))
        sim.record(
            None,
            "operator-action",
            f"operator taints {node.name} node.kubernetes.io/out-of-service=nodeshutdown:NoExecute",
            SRC_OOS,
        )
        sim.record(None, "taint-added", f"{node.name} tainted out-of-service:NoExecute", SRC_OOS)
        sim.changed()
        sim.taints.on_taints_changed(node)
        sim.adc.on_taints_changed(node.name)
        sim.podgc.kick()

    sim.loop.at(0.0, lambda: _lose(sim, node), "fault")
    sim.loop.at(sim.profile.out_of_service_after_s, oos, "operator")
    return None


@_scenario(
    "node-deleted",
    "node-loss, then the Node object is deleted at the profile's node-deleted-after-s (as the "
    "cloud node lifecycle controller does for a VM that no longer exists)",
    "node",
)
def _node_deleted(sim: Simulation, node: Node) -> Extra:
    sim.loop.at(0.0, lambda: _lose(sim, node), "fault")
    sim.loop.at(sim.profile.node_deleted_after_s, lambda: _delete_node(sim, node), "ccm")
    return None


@_scenario(
    "graceful-node-shutdown",
    "the node of the lowest ordinal shuts down with kubelet shutdownGracePeriod configured "
    "(profile values) and stays off",
    "node",
)
def _graceful_node_shutdown(sim: Simulation, node: Node) -> Extra:
    p = sim.profile

    def shutdown() -> None:
        node.shutting_down = True
        sim.failed_nodes.append(node.name)
        sim.record(
            None,
            "fault",
            f"{node.name} starts a graceful shutdown (shutdownGracePeriod "
            f"{p.shutdown_grace_period_s:g} s, critical pods "
            f"{p.shutdown_grace_period_critical_pods_s:g} s)",
            SRC_SHUTDOWN,
        )
        sim.changed()
        sim.nlc.kubelet_not_ready(node, "node is shutting down")
        sim.kubelet.graceful_shutdown(node.name)

    def power_off() -> None:
        node.alive = False
        node.shutting_down = False
        node.lost_at_s = sim.now
        sim.record(
            None,
            "node-shutdown",
            f"{node.name} powered off: its kubelet no longer renews the Lease",
            SRC_SHUTDOWN,
        )
        sim.changed()
        # The node lifecycle controller sees the Lease go stale like any lost node: Unknown
        # node-monitor-grace-period later, then the unreachable NoExecute taint.
        sim.nlc.node_lost(node)

    sim.loop.at(0.0, shutdown, "fault")
    sim.loop.at(p.shutdown_grace_period_s, power_off, "fault")
    return None


@_scenario(
    "node-drain",
    "kubectl drain (default flags, no --timeout) of the node of the lowest ordinal",
    "node",
)
def _node_drain(sim: Simulation, node: Node) -> Extra:
    sim.loop.at(0.0, lambda: sim.drain.start(node.name), "drain")
    sim.goal = lambda: sim.drain.completed_s is not None and sim.now >= sim.drain.completed_s
    return lambda: Goal("drain", sim.drain.completed_s is not None, sim.drain.completed_s)


@_scenario("rolling-update", "template change at t=0 to a template that becomes Ready", None)
def _rolling_update(sim: Simulation, node: Node) -> Extra:
    sim.templates["rev-2"] = False
    sim.loop.at(
        0.0,
        lambda: sim.stsc.set_template(
            "rev-2",
            "pkg/controller/history/controller_history.go",
            "template changed: updateRevision rev-2 (good template)",
        ),
        "template",
    )
    sim.goal = lambda: _all_updated(sim, "rev-2")
    return lambda: Goal("rollout", _all_updated(sim, "rev-2"), timed=False)


@_scenario(
    "bad-rollout",
    "template change at t=0 to a template that never becomes Ready, reverted at "
    "the profile's revert-after-s",
    None,
)
def _bad_rollout(sim: Simulation, node: Node) -> Extra:
    sim.templates["rev-2"] = True
    sim.loop.at(
        0.0,
        lambda: sim.stsc.set_template(
            "rev-2",
            "pkg/controller/history/controller_history.go",
            "template changed: updateRevision rev-2 (never Ready)",
        ),
        "template",
    )
    reverted = {"done": False}

    def revert() -> None:
        reverted["done"] = True
        sim.stsc.set_template(
            "rev-1",
            SRC_ROLLBACK,
            "template reverted: updateRevision back to rev-1 (rollback reuses the old revision)",
        )

    sim.loop.at(sim.profile.revert_after_s, revert, "template")
    sim.goal = lambda: reverted["done"] and _all_updated(sim, "rev-1")
    return lambda: Goal(
        "rollout",
        reverted["done"]
        and _all_updated(sim, "rev-1")
        and all(sim.pod_serving(o) for o in sim.stsc.ordinals()),
        timed=False,
    )


@_scenario("scale-down", "spec.replicas lowered by one (to max(replicas-1, 0)) at t=0", None)
def _scale_down(sim: Simulation, node: Node) -> Extra:
    target = max(sim.stsc.replicas - 1, 0)

    def scale() -> None:
        before = sim.stsc.replicas
        sim.stsc.replicas = target
        sim.record(
            None,
            "operator-action",
            f"spec.replicas {before} -> {target}",
            "pkg/controller/statefulset/stateful_set_control.go#processCondemned",
        )
        sim.changed()
        sim.stsc.request_sync()

    sim.loop.at(0.0, scale, "scale")
    done: dict[str, float | None] = {"t": None}

    def scaled() -> bool:
        gone = all(sim.stsc.in_range(p.ordinal) for p in sim.cluster.pods.values())
        if gone and done["t"] is None and sim.stsc.replicas == target:
            done["t"] = sim.now
        return gone

    sim.goal = scaled
    return lambda: Goal("scale_down", done["t"] is not None, done["t"])


@_scenario(
    "zone-loss", "every node of the zone of the lowest ordinal stops heartbeating at t=0", "zone"
)
def _zone_loss(sim: Simulation, node: Node) -> Extra:
    zone_nodes = [n for n in sim.cluster.nodes.values() if n.zone == node.zone]

    def zone_fault() -> None:
        for n in zone_nodes:
            sim.lose_node(n, f"lost with its zone {n.zone}", SRC_NODE_STATUS)

    sim.loop.at(0.0, zone_fault, "fault")
    after = sim.profile.zone_loss_nodes_deleted_after_s
    if after is not None:

        def delete_all() -> None:
            for n in zone_nodes:
                _delete_node(sim, n)

        sim.loop.at(after, delete_all, "ccm")
    return None


#: The scenario names, in registry order.
SCENARIOS: tuple[str, ...] = tuple(REGISTRY)
#: What each scenario does.
DESCRIPTIONS: Mapping[str, str] = {s.name: s.description for s in REGISTRY.values()}
#: Scenarios whose fault hits one node, for the placement qualifier of the verdict.
NODE_FAULTS: tuple[str, ...] = tuple(s.name for s in REGISTRY.values() if s.fault == "node")


def _setup(sim: Simulation, scenario: str) -> Extra:
    """Schedule the scenario's events; return how its operation ended (computed at the end)."""
    return REGISTRY[scenario].setup(sim, _target_node(sim))


def placement_basis(sim: Simulation, scenario: str) -> str:
    """Whether the replicas the fault hits are the worst case or forced by the constraints."""
    facts = sim.scheduler.facts
    if scenario in NODE_FAULTS:
        hit, spread, forced, where = (
            facts.worst_node,
            facts.spread_node,
            facts.forced_node,
            # a drain's node is cordoned and emptied, not failed
            "on the drained node" if scenario == "node-drain" else "on the node that fails",
        )
    elif scenario == "zone-loss":
        hit, spread, forced, where = (
            facts.worst_zone,
            facts.spread_zone,
            facts.forced_zone,
            "in the zone that fails",
        )
    else:
        return ""
    n = len(sim.initial_nodes) + len(sim.baseline_down)
    if n <= 1:
        return ""
    if forced:
        why = f": {'; '.join(facts.limits)}" if facts.limits else ""
        text = f"{hit} of {n} {where}, forced by the constraints{why}"
    else:
        text = (
            f"{hit} of {n} {where} is the worst case the constraints allow; the "
            f"scheduler's spreading would put {spread} there"
        )
    if scenario in NODE_FAULTS and not facts.forced_zone:
        # where the other replicas sit decides where a replacement still fits
        text += (
            f"; {facts.worst_zone} of {n} in its zone is the worst case, spreading would put "
            f"{facts.spread_zone} there"
        )
    if facts.not_simulated:
        text += f"; not simulated: {'; '.join(facts.not_simulated)}"
    return text


def _moved_off_hostpath(sim: Simulation) -> list[str]:
    """Pods now running on another node than at t=0 while a claim of theirs is an unpinned
    hostPath volume (storage.py "hostpath"): their data did not move with them."""
    if not any(st.topology == "hostpath" for st in sim.storage):
        return []
    out = []
    for o, first in sorted(sim.initial_nodes.items()):
        pod = sim.cluster.pods.get(sim.wl.pod_name(o))
        if pod is not None and pod.node is not None and pod.node != first:
            out.append(pod.name)
    return out


def _alike(sim: Simulation, first: int, same: Callable[[Any], bool]) -> tuple[str, bool]:
    """The unavailable pods from ordinal ``first`` on that are on the same lost node as it and
    for which ``same(pod)`` holds, named (``"web-0"``, ``"web-0 and web-1"``, ``"web-0, web-1
    and web-2"``; more than 5 as ``"web-0, web-1, ... (12 pods)"``), and whether several."""
    node = sim.cluster.pods[sim.wl.pod_name(first)].node
    names = []
    for o in sim.stsc.ordinals():
        if o < first or sim.pod_serving(o):
            continue
        pod = sim.cluster.pods.get(sim.wl.pod_name(o))
        if pod is not None and pod.node == node and same(pod):
            names.append(pod.name)
    if len(names) <= 1:
        return sim.wl.pod_name(first), False
    if len(names) > 5:
        return f"{', '.join(names[:2])}, ... {names[-1]} ({len(names)} pods)", True
    return ", ".join(names[:-1]) + " and " + names[-1], True


class _Pending(Exception):
    """:func:`_blocker_phrase`'s answer for a pod that stays Pending: the phrase and, apart,
    the scheduler's node counts (which one-line messages leave out)."""

    def __init__(self, phrase: str, counts: str) -> None:
        super().__init__(phrase)
        self.phrase = phrase
        self.counts = counts


def _blocker(sim: Simulation) -> tuple[str, str]:
    """Why the set is not back: the verdict's phrase, and the same without the scheduler's
    node counts (for the one-line messages that quote it)."""
    try:
        phrase = _blocker_phrase(sim)
    except _Pending as pending:
        return f"{pending.phrase}; scheduler: {pending.counts}", pending.phrase
    return phrase, phrase


def _blocker_phrase(sim: Simulation) -> str:
    """Why the set is not back, as one phrase (first unavailable ordinal)."""
    if sim.drain.failed is not None:
        return f"kubectl drain fails ({sim.drain.failed}) and must be retried by hand"
    if sim.drain.node is not None and sim.drain.completed_s is None and sim.drain.refused:
        name, (_, msg) = sorted(sim.drain.refused.items())[0]
        return f"kubectl drain never finishes: eviction of {name} refused: {msg}"
    for o in sim.stsc.ordinals():
        if sim.pod_serving(o):
            continue
        name = sim.wl.pod_name(o)
        pod = sim.cluster.pods.get(name)
        if pod is None:
            lower = [x for x in sim.stsc.ordinals() if x < o and not sim.pod_serving(x)]
            if sim.wl.monotonic and lower:
                return (
                    f"{name} is never recreated: OrderedReady waits for {sim.wl.pod_name(lower[0])}"
                )
            return f"{name} is never recreated"
        node = sim.cluster.nodes.get(pod.node) if pod.node else None
        running = sim.kubelet.node_running(pod.node)
        if pod.terminating and not running:
            # The out-of-service taint only releases pods and volumes with the
            # NodeOutOfServiceVolumeDetach gate (podgc gcTerminating; off in 1.25, alpha).
            oos = bool(sim.vd.gates.get(NODE_OUT_OF_SERVICE_VOLUME_DETACH, False))
            ways = (
                "force-deletes it, applies the out-of-service taint or deletes the Node"
                if oos
                else "force-deletes it or deletes the Node (the out-of-service taint needs the "
                "NodeOutOfServiceVolumeDetach gate, off in this version)"
            )
            names, many = _alike(sim, o, lambda p: p.terminating)
            return (
                f"{names} {'stay' if many else 'stays'} Terminating on {pod.node} (kubelet "
                f"gone); the StatefulSet cannot recreate {'them' if many else 'it'} until "
                f"someone {ways}"
            )
        if not pod.terminating and pod.node and not running and pod.phase == "Running":
            ev = sim.timeline.events
            forever = {e.pod for e in ev if e.kind == "toleration-forever"}
            tolerant = name in forever

            def stuck_alike(p: Any, tolerant: bool = tolerant, forever: set[Any] = forever) -> bool:
                return (
                    not p.terminating and p.phase == "Running" and (p.name in forever) == tolerant
                )

            names, many = _alike(sim, o, stuck_alike)
            it = "they tolerate" if many else "it tolerates"
            why = (
                f"{it} the NoExecute taint without tolerationSeconds"
                if tolerant
                else f"no NoExecute taint/eviction reached {'them' if many else 'it'}"
            )
            verb = "stay" if many else "stays"
            are = "are" if many else "is"
            return f"{names} {verb} bound to lost {pod.node} and {are} never evicted ({why})"
        if pod.node is None or (node is not None and not running and pod.phase == "Pending"):
            pend = [e for e in sim.timeline.events if e.kind == "pod-pending" and e.pod == name]
            detail = pend[-1].event if pend else f"{name} Pending"
            why = sim.scheduler.pending_reason(pod) if pod.node is None else ""
            if not why:
                return detail
            counts = detail.split(": ", 1)[1] if ": " in detail else detail
            shape = sim.scheduler.shape()
            raise _Pending(f"{name} stays Pending: {why} (simulated cluster: {shape})", counts)
        if pod.broken:
            if sim.wl.monotonic:
                return (
                    f"{name} runs a revision that never becomes Ready and OrderedReady "
                    "blocks on it "
                    "even after the revert: delete the pod by hand"
                )
            return f"{name} runs a revision that never becomes Ready and is not replaced"
        multi = [
            e for e in sim.timeline.events if e.kind == "volume-multi-attach" and e.pod == name
        ]
        if multi and pod.phase == "Pending":
            return multi[-1].event
        return f"{name} is not available ({pod.phase})"
    return "the scenario's goal is not reached"


def run(
    statefulset: Mapping[str, Any],
    scenario: str,
    *,
    kube_version: str,
    pdbs: Sequence[Mapping[str, Any]] = (),
    storage_classes: Sequence[Mapping[str, Any]] = (),
    persistent_volumes: Sequence[Mapping[str, Any]] = (),
    profile: ClusterProfile | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    horizon_s: float = 86400.0,
    observers: Sequence[Callable[[Simulation], None]] = (),
    budget: Budget | None = None,
) -> tuple[ScenarioResult, Simulation]:
    """Run `scenario` and return its result and the simulation (for tests and observers).

    Raises ValueError for an unknown scenario, and budget.BudgetExhausted when `budget` runs
    out (the result's `steps` is what the run took).
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    sim = Simulation(
        statefulset,
        kube_version=kube_version,
        pdbs=pdbs,
        storage_classes=storage_classes,
        persistent_volumes=persistent_volumes,
        profile=profile,
        feature_gates=feature_gates,
        horizon_s=horizon_s,
        budget=budget,
    )
    started = sim.budget.used
    sim.observers.extend(observers)
    sim.steady_state(REGISTRY[scenario].fault)
    goal = _setup(sim, scenario)
    sim.loop.run()
    result = _result(sim, scenario, goal)
    result.steps = sim.budget.used - started - sim.shape_search_charged
    result.shape_search = sim.shape_search
    return result, sim


def _description(sim: Simulation, scenario: str) -> str:
    p = sim.profile
    text = DESCRIPTIONS[scenario]
    if scenario == "node-loss" and p.node_returns_after_s is not None:
        kind = "reboots" if p.node_returns_rebooted else "kubelet restarts / partition heals"
        text = text.replace(
            NEVER_RETURNS, f"and the node returns at {p.node_returns_after_s:g} s ({kind})"
        )
    return text


def _assumptions(sim: Simulation, scenario: str) -> list[str]:
    """The assumptions a result states: the version's node-monitor grace period and when the
    node is marked Unknown, the profile's timing, the placement basis and the run's notes."""
    g = sim.grace_s
    off = sim.profile.nlc_detection_offset_s
    out = [
        f"Kubernetes {sim.vd.version}: node-monitor-grace-period G = {g:g} s; Ready=Unknown at "
        f"G{off:+g} = {g + off:g} s after the last heartbeat (range {g - 10:g} … {g + 5:g} s)",
        *assumption_lines(
            sim.profile,
            node_returns=scenario == "node-loss" and sim.profile.node_returns_after_s is not None,
        ),
        f"placement: {placement_basis(sim, scenario) or 'as the constraints allow'}",
        *sim.notes,
    ]
    if sim.vd.version.minor == 35 and sim.vd.version.latest_patch:
        out.append(
            "'1.35' without a patch is read as the latest 1.35 patch (1.35.4 or later: "
            "MaxUnavailableStatefulSet off again, #137926); give 1.35.0 to 1.35.3 for the "
            "earlier behaviour"
        )
    return out


def _how_recovered(sim: Simulation, scenario: str) -> str:
    """What the recovery needed, for the verdict: the operator's out-of-service taint, the
    node coming back, or the Node object's deletion ("" when nothing but the controllers)."""
    how = ""
    if scenario == "node-loss-out-of-service":
        how = (
            f", but only because the operator applied the out-of-service taint at "
            f"{sim.profile.out_of_service_after_s:g} s"
        )
    elif scenario == "node-loss" and sim.profile.node_returns_after_s is not None:
        how = (
            f", but only because the node came back at "
            f"{sim.profile.node_returns_after_s:g} s (no replacement while it was away)"
        )
    elif scenario == "node-deleted":
        how = f" after the Node object was deleted at {sim.profile.node_deleted_after_s:g} s"
    return how


def _start_of(scenario: str) -> str:
    """What t = 0 is in a verdict: a fault, or the operation the scenario runs (a drain is
    an operation on a healthy node, not a fault)."""
    if scenario == "node-drain":
        return "the drain starts"
    if REGISTRY[scenario].fault is None:
        return "it starts"  # (a rollout, a scale-down)
    return "the fault"


def _result(sim: Simulation, scenario: str, goal: Extra) -> ScenarioResult:
    # Final observation at the end of the horizon (or the last event).
    sim._observe()
    ords = sim.stsc.ordinals()
    rec_at = sim.recovered_at
    recovered = rec_at is not None
    settled = sim.loop.pending() == 0 and not sim.loop.truncated
    manual = (not recovered) and settled
    pods: dict[str, PodResult] = {}
    for o in ords:
        name = sim.wl.pod_name(o)
        pod = sim.cluster.pods.get(name)
        pods[name] = PodResult(sim.unavailable_s(o), pod.node if pod else None)
    g = sim.grace_s
    assumptions = _assumptions(sim, scenario)
    n = len(ords)
    not_back: str | None = None
    if recovered:
        assert rec_at is not None
        how = _how_recovered(sim, scenario)
        verdict = (
            f"{scenario}: recovers {rec_at:.0f} s after {_start_of(scenario)}{how}; at most "
            f"{sim.max_unavailable} of {n} replicas unavailable"
        )
        emptied = _moved_off_hostpath(sim)
        if emptied:
            verdict += (
                f", but {', '.join(emptied)} came back on another node with an empty hostPath "
                "directory (the data stayed on the old node)"
            )
    elif not settled:
        verdict = f"{scenario}: not recovered within the {sim.loop.horizon_s:g} s horizon"
    else:
        blocker, why = _blocker(sim)
        verdict = f"{scenario}: never recovers without an operator: {blocker}"
        facts = sim.scheduler.facts
        if (scenario in NODE_FAULTS and not (facts.forced_node and facts.forced_zone)) or (
            scenario == "zone-loss" and not facts.forced_zone
        ):
            why += "; with the worst placement the constraints allow"
        not_back = why
    basis = placement_basis(sim, scenario)
    if basis:
        verdict += f" ({basis})"
    if not sim.initial_nodes and sim.baseline_down:
        first = sim.cluster.pods.get(sim.wl.pod_name(min(sim.baseline_down)))
        why = sim.scheduler.pending_reason(first) if first is not None else ""
        verdict = (
            f"{scenario}: no replica fits a node of the simulated cluster "
            f"({sim.scheduler.shape()}), so nothing runs to fail over" + (f": {why}" if why else "")
        )
    elif sim.baseline_down:
        names = ", ".join(sim.wl.pod_name(o) for o in sorted(sim.baseline_down))
        verdict += (
            f"; {names} fit(s) no node of the simulated cluster ({sim.scheduler.shape()}) and "
            "stay(s) Pending from the start"
        )
    failed = set(sim.failed_nodes)
    return ScenarioResult(
        namespace=sim.wl.namespace,
        name=sim.wl.name,
        scenario=scenario,
        kube_version=sim.kube_version,
        replicas=sim.wl.replicas,
        recovered=recovered,
        time_to_recovery_s=rec_at if recovered else None,
        manual_action_required=manual,
        max_unavailable=sim.max_unavailable,
        pods=pods,
        timeline=list(sim.timeline.events),
        verdict=verdict,
        assumptions=assumptions,
        placement=sim.placement,
        description=_description(sim, scenario),
        failed_nodes=list(sim.failed_nodes),
        replicas_on_failed_nodes=sum(1 for n in sim.initial_nodes.values() if n in failed),
        node_unknown_range_s=(g - 10, g + 5),
        placement_basis=sim.scheduler.facts,
        cluster_shape=sim.initial_shape,
        not_back_because=not_back,
        node_returned_at_s=(sim.profile.node_returns_after_s if scenario == "node-loss" else None),
        goal=goal() if goal is not None else None,
    )
