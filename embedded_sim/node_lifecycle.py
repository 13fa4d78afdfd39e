"""Node lifecycle controller (kube-controller-manager): health, taints, zone disruption.

Source file: pkg/controller/nodelifecycle/node_lifecycle_controller.go (k8s-behavior.md B.1).
Health detection is computed analytically (no 5 s polling loop) so a run stays cheap:
T_u = T0 + G + profile.nlc_detection_offset_s (typical G - 2.5 s, range [G-10, G+5]).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .cluster import Node, Taint
from .workload import TAINT_NOT_READY, TAINT_UNREACHABLE

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_HEALTH = "pkg/controller/nodelifecycle/node_lifecycle_controller.go#tryUpdateNodeHealth"
SRC_MARK = "pkg/controller/nodelifecycle/node_lifecycle_controller.go#monitorNodeHealth"
SRC_NOSCHED = "pkg/controller/nodelifecycle/node_lifecycle_controller.go#doNoScheduleTaintingPass"
SRC_NOEXEC = "pkg/controller/nodelifecycle/node_lifecycle_controller.go#doNoExecuteTaintingPass"
SRC_ZONE = "pkg/controller/nodelifecycle/node_lifecycle_controller.go#handleDisruption"
SRC_REACHABLE = (
    "pkg/controller/nodelifecycle/node_lifecycle_controller.go#processTaintBaseEviction "
    "(markNodeAsReachable)"
)
SRC_KUBELET_READY = "pkg/kubelet/nodestatus/setters.go#ReadyCondition"
SRC_SWAP = "pkg/controller/nodelifecycle/node_lifecycle_controller.go#processTaintBaseEviction"

#: isNodeExcludedFromDisruptionChecks: nodes with this label do not count for zone states.
EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"

NORMAL = "Normal"
PARTIAL = "PartialDisruption"
FULL = "FullDisruption"


def _noexecute_keys(node: Node) -> tuple[str, str]:
    """(taint to add, opposite taint) for a node's Ready condition: the unreachable and
    not-ready NoExecute taints are mutually exclusive (SwapNodeControllerTaint)."""
    if node.ready == "Unknown":
        return TAINT_UNREACHABLE, TAINT_NOT_READY
    return TAINT_NOT_READY, TAINT_UNREACHABLE


class NodeLifecycleController:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.zone_state: dict[str, str] = {}
        self.next_token_s: dict[str, float] = {}
        self.queue: dict[str, list[str]] = {}  # zone -> nodes waiting for the NoExecute taint
        # node -> when the pending Ready=Unknown mark is due (re-armed by a probe reset)
        self.detect_at: dict[str, float] = {}
        # (zone, Cluster.nodes_key()) -> the zone's counted nodes (_counted)
        self._counted_cache: dict[tuple[str, tuple[int, int, int]], list[Node]] = {}

    # --- detection ----------------------------------------------------------------------
    def node_lost(self, node: Node) -> None:
        """Lease renewals stop at now; NLC marks Ready=Unknown after the grace period."""
        sim = self.sim
        g = sim.grace_s
        t_u = sim.now + g + sim.profile.nlc_detection_offset_s
        self.detect_at[node.name] = t_u
        sim.loop.at(t_u, lambda: self._mark_unknown(node, t_u), "nlc-detect")

    def _mark_unknown(self, node: Node, due_s: float) -> None:
        sim = self.sim
        if self.detect_at.get(node.name) != due_s:
            return  # re-armed: the probe timestamp was reset (handleDisruption)
        self.detect_at.pop(node.name, None)
        if node.alive or node.deleted or node.ready == "Unknown":
            return
        observed = node.ready
        node.ready = "Unknown"
        sim.record(
            None,
            "node-unknown",
            f"{node.name} Ready=Unknown: its last Lease renewal is older than "
            f"node-monitor-grace-period ({sim.grace_s:g} s); the Lease is renewed every "
            f"{sim.profile.lease_renew_interval_s:g} s and checked every "
            f"{sim.profile.node_monitor_period_s:g} s, so this comes "
            f"{sim.grace_s + sim.profile.nlc_detection_offset_s:g} s after the fault typically "
            f"(range {sim.grace_s - sim.profile.lease_renew_interval_s:g}–"
            f"{sim.grace_s + sim.profile.node_monitor_period_s:g} s)",
            SRC_HEALTH,
        )
        # monitorNodeHealth -> MarkPodsNotReady only on the pass where the observed (pre-update)
        # Ready condition was True; a node the kubelet had already set to False keeps its pods'
        # readiness as the kubelet reported it.
        if observed == "True":
            self._mark_pods_not_ready(node)
        self._sync_noschedule(node)
        self._health_changed(node)
        sim.adc.on_node_health(node.name)
        # tryUpdateNodeHealth returns the condition as it was before this pass updated it, and
        # monitorNodeHealth hands that to processTaintBaseEviction: this pass still sees the old
        # status, the next pass (node-monitor-period later) sees Unknown and queues the node
        # for the NoExecute taint.
        self._next_pass(node)

    def kubelet_not_ready(self, node: Node, reason: str) -> None:
        """The kubelet posts Ready=False itself (graceful shutdown).

        Node update -> doNoScheduleTaintingPass adds the not-ready NoSchedule taint (controller
        reaction); the next monitorNodeHealth pass (typically half a node-monitor-period later)
        observes False: it queues the node for the NoExecute taint but does not call
        MarkPodsNotReady (that needs an observed True -> not-True transition, and the kubelet
        already wrote False). The pods' readiness is what the kubelet itself reports.
        """
        sim = self.sim
        node.ready = "False"
        sim.record(None, "node-not-ready", f"{node.name} Ready=False: {reason}", SRC_KUBELET_READY)
        sim.changed()
        sim.adc.on_node_health(node.name)
        sim.loop.after(
            sim.profile.controller_reaction_s, lambda: self._sync_noschedule(node), "nlc-node"
        )

        def first_pass() -> None:
            self._health_changed(node)
            self._taint_base_eviction(node)

        sim.loop.after(sim.profile.node_monitor_period_s / 2.0, first_pass, "nlc-pass")

    def _mark_pods_not_ready(self, node: Node) -> None:
        """pkg/controller/util/node/controller_utils.go#MarkPodsNotReady."""
        sim = self.sim
        for pod in sim.cluster.pods_on(node.name):
            if pod.ready:
                pod.ready = False
                sim.record(
                    pod.name,
                    "pod-not-ready",
                    f"{pod.name} marked Ready=False because {node.name} is not Ready "
                    "(leaves Service endpoints)",
                    SRC_MARK,
                )

    def _sync_noschedule(self, node: Node) -> None:
        """doNoScheduleTaintingPass: the NoSchedule taint follows the Ready condition."""
        sim = self.sim
        if node.deleted:
            return
        want = {"Unknown": TAINT_UNREACHABLE, "False": TAINT_NOT_READY}.get(node.ready)
        changed = False
        for key in (TAINT_UNREACHABLE, TAINT_NOT_READY):
            if key != want and node.remove_taint(key, "NoSchedule"):
                changed = True
                sim.record(
                    None, "taint-removed", f"{node.name} {key}:NoSchedule removed", SRC_NOSCHED
                )
        if want is not None and node.add_taint(Taint(want, "NoSchedule", added_s=sim.now)):
            changed = True
            sim.record(None, "taint-added", f"{node.name} tainted {want}:NoSchedule", SRC_NOSCHED)
        if changed:
            sim.changed()
            sim.scheduler.retry_pending()

    def _health_changed(self, node: Node) -> None:
        sim = self.sim
        if node.deleted:
            return
        sim.changed()
        sim.stsc.request_sync()
        self.recompute_zones()

    def _next_pass(self, node: Node) -> None:
        sim = self.sim
        sim.loop.after(
            sim.profile.node_monitor_period_s,
            lambda: self._taint_base_eviction(node),
            "nlc-pass",
        )

    def _taint_base_eviction(self, node: Node) -> None:
        """processTaintBaseEviction with the node's observed Ready condition.

        False or Unknown: when the opposite NoExecute taint is already on the node, swap it at
        once (not rate limited); otherwise add the node to its zone's rate-limited NoExecute
        queue (markNodeForTainting). True: markNodeAsReachable.
        """
        sim = self.sim
        if node.deleted:
            return
        if node.ready == "True":
            self._reachable(node)
            return
        key, opposite = _noexecute_keys(node)
        if node.has_taint(key, "NoExecute"):
            return
        if node.has_taint(opposite, "NoExecute"):
            node.remove_taint(opposite, "NoExecute")
            node.add_taint(Taint(key, "NoExecute", added_s=sim.now))
            sim.record(
                None,
                "taint-added",
                f"{node.name} tainted {key}:NoExecute (swapped for {opposite} at once)",
                SRC_SWAP,
            )
            sim.changed()
            sim.taints.on_taints_changed(node)
            return
        self._enqueue(node)

    # --- zones and rate-limited NoExecute tainting (scheduler/rate_limited_queue.go#Try) ---
    def _counted(self, zone: str) -> list[Node]:
        """Nodes of `zone` that count for its state: isNodeExcludedFromDisruptionChecks leaves
        out nodes labelled node.kubernetes.io/exclude-disruption."""
        cluster = self.sim.cluster
        key = (zone, cluster.nodes_key())
        cached = self._counted_cache.get(key)
        if cached is None:
            if len(self._counted_cache) > 64:
                self._counted_cache.clear()
            cached = [n for n in cluster.zone_nodes(zone) if EXCLUDE_DISRUPTION not in n.labels]
            self._counted_cache[key] = cached
        return cached

    def _zones(self) -> list[str]:
        """The zones handleDisruption tracks: those with a counted node."""
        cluster = self.sim.cluster
        return [z for z in cluster.zones() if self._counted(z)]

    def _state_of(self, zone: str) -> str:
        nodes = self._counted(zone)
        not_ready = sum(1 for n in nodes if n.ready != "True")
        ready = len(nodes) - not_ready
        # ComputeZoneState
        if ready == 0 and not_ready > 0:
            return FULL
        if (
            not_ready > 2
            and not_ready / max(1, len(nodes)) >= self.sim.profile.unhealthy_zone_threshold
        ):
            return PARTIAL
        return NORMAL

    def rate_for(self, zone: str) -> float:
        """setLimiterInZone / ReducedQPSFunc / HealthyQPSFunc (k8s-behavior.md B.1.4)."""
        p = self.sim.profile
        st = self.zone_state.get(zone, NORMAL)
        if self._all_full():
            return 0.0
        if st == PARTIAL:
            size = len(self._counted(zone))
            return p.secondary_node_eviction_rate if size > p.large_cluster_size_threshold else 0.0
        return p.node_eviction_rate

    def _all_full(self) -> bool:
        zones = self._zones()
        return bool(zones) and all(self.zone_state.get(z, NORMAL) == FULL for z in zones)

    def recompute_zones(self) -> None:
        """handleDisruption after a change of some node's Ready condition.

        Zone states decide each zone's NoExecute tainting rate (setLimiterInZone). A changed
        rate swaps the zone queue's limiter (rate_limited_queue.go#SwapLimiter): a fresh token
        bucket (burst 1), drained when the old limiter had no token, which is always the case
        after a rate of 0; nodes that waited in the queue are then tainted at the new rate.
        Every zone fully disrupted ("master disruption mode"): NoExecute taints are removed from
        every node and all rates are 0; the following passes queue every not-Ready node again.
        Leaving that mode resets the probe timestamps of all nodes, so a node whose Lease is
        stale but that is not yet Unknown gets a fresh node-monitor-grace-period.
        """
        sim = self.sim
        zones = self._zones()
        rates = {z: self.rate_for(z) for z in zones}
        had_token = {z: sim.now >= self.next_token_s.get(z, -1e18) for z in zones}
        was_all_full = self._all_full()
        for z in zones:
            st = self._state_of(z)
            if self.zone_state.get(z, NORMAL) != st:
                self.zone_state[z] = st
                sim.record(None, "zone-disruption", f"{z} zone state {st}", SRC_ZONE)
        all_full = self._all_full()
        if all_full and not was_all_full:
            self._enter_master_disruption()
        elif was_all_full and not all_full:
            self._reset_probe_timestamps()
        for z in zones:
            rate = self.rate_for(z)
            if rate == rates[z]:
                continue
            if rate > 0:
                drained = rates[z] <= 0 or not had_token[z]
                self.next_token_s[z] = sim.now + (1.0 / rate if drained else 0.0)
            self._process(z)

    def _enter_master_disruption(self) -> None:
        sim = self.sim
        for n in sim.cluster.nodes.values():
            for key in (TAINT_UNREACHABLE, TAINT_NOT_READY):
                if n.remove_taint(key, "NoExecute"):
                    sim.record(
                        None,
                        "taint-removed",
                        f"{n.name} {key}:NoExecute removed: every zone is fully disrupted",
                        SRC_ZONE,
                    )
                    sim.taints.on_taints_changed(n)
            if n.ready != "True" and not n.deleted:
                q = self.queue.setdefault(n.zone, [])
                if n.name not in q:
                    q.append(n.name)

    def _reset_probe_timestamps(self) -> None:
        sim = self.sim
        later = sim.grace_s + sim.profile.node_monitor_period_s
        rearmed = []
        for name in sorted(self.detect_at):
            node = sim.cluster.nodes[name]
            due = sim.now + later
            self.detect_at[name] = due
            sim.loop.at(due, partial(self._mark_unknown, node, due), "nlc-detect")
            rearmed.append(name)
        tail = (
            f"; {', '.join(rearmed)} will be marked Unknown only {later:g} s from now"
            if rearmed
            else ""
        )
        sim.record(
            None,
            "zone-disruption",
            "a node is Ready again: leaving master disruption mode, the probe timestamps of all "
            f"nodes are reset (each gets a fresh node-monitor-grace-period){tail}",
            SRC_ZONE,
        )

    def _enqueue(self, node: Node) -> None:
        q = self.queue.setdefault(node.zone, [])
        if node.name not in q:
            q.append(node.name)
        self._process(node.zone)

    def _process(self, zone: str) -> None:
        sim = self.sim
        q = self.queue.get(zone, [])
        if not q:
            return
        rate = self.rate_for(zone)
        if rate <= 0:
            st = self.zone_state.get(zone, NORMAL)
            for name in q:
                sim.timeline.once(
                    f"norate-{name}",
                    sim.now,
                    None,
                    "zone-disruption",
                    f"{name} not tainted NoExecute: {zone} is {st} and its eviction rate is 0 "
                    "(no pod on it will be evicted)",
                    SRC_ZONE,
                )
            return
        # Token bucket, burst 1, queue worked every 100 ms (rate_limited_queue.go).
        t = max(sim.now + sim.profile.taint_queue_period_s, self.next_token_s.get(zone, -1e18))
        name = q[0]
        sim.loop.at(t, lambda: self._taint_next(zone, name), "nlc-taint")

    def _taint_next(self, zone: str, name: str) -> None:
        sim = self.sim
        q = self.queue.get(zone, [])
        if not q or q[0] != name:
            return
        rate = self.rate_for(zone)
        if rate <= 0:
            self._process(zone)
            return
        q.pop(0)
        node = sim.cluster.nodes[name]
        self.next_token_s[zone] = sim.now + 1.0 / rate
        if node.ready == "True" or node.deleted:
            self._process(zone)
            return
        key, opposite = _noexecute_keys(node)
        # SwapNodeControllerTaint: the two NoExecute taints are mutually exclusive.
        swapped = node.remove_taint(opposite, "NoExecute")
        if node.add_taint(Taint(key, "NoExecute", added_s=sim.now)) or swapped:
            sim.record(None, "taint-added", f"{name} tainted {key}:NoExecute", SRC_NOEXEC)
            sim.changed()
            sim.taints.on_taints_changed(node)
        self._process(zone)

    # --- return (k8s-behavior.md A.1 step 7a, B.9.1) -------------------------------------
    def node_returned(self, node: Node) -> None:
        """The kubelet renews its Lease again and posts Ready=True a moment later.

        doNoScheduleTaintingPass reacts to the Node update (controller reaction); the NoExecute
        taints go on the next monitorNodeHealth pass (typical half a node-monitor-period, at
        most one), where processTaintBaseEviction calls markNodeAsReachable, which also drops
        the node from the zone's NoExecute queue. Taint evictions not yet fired are cancelled.
        """
        sim = self.sim
        sim.loop.after(
            sim.profile.kubelet_nodestatus_s, lambda: self._ready_again(node), "kubelet-status"
        )

    def _ready_again(self, node: Node) -> None:
        sim = self.sim
        if not node.alive or node.deleted or node.ready == "True":
            return
        node.ready = "True"
        sim.record(
            None,
            "node-ready",
            f"{node.name} Ready=True posted by the returning kubelet",
            SRC_KUBELET_READY,
        )
        sim.changed()
        self.recompute_zones()
        sim.loop.after(
            sim.profile.controller_reaction_s, lambda: self._sync_noschedule(node), "nlc-node"
        )
        sim.loop.after(
            sim.profile.node_monitor_period_s / 2.0, lambda: self._reachable(node), "nlc-pass"
        )
        sim.kubelet.node_ready(node.name)
        sim.stsc.request_sync()

    def _reachable(self, node: Node) -> None:
        sim = self.sim
        if node.ready != "True":
            return
        q = self.queue.get(node.zone, [])
        if node.name in q:
            q.remove(node.name)
        removed = False
        for key in (TAINT_UNREACHABLE, TAINT_NOT_READY):
            if node.remove_taint(key, "NoExecute"):
                removed = True
                sim.record(
                    None, "taint-removed", f"{node.name} {key}:NoExecute removed", SRC_REACHABLE
                )
        if removed:
            sim.changed()
            sim.taints.on_taints_changed(node)
            sim.scheduler.retry_pending()

    def node_deleted(self, node: Node) -> None:
        self.recompute_zones()
        for z in list(self.queue):
            self.queue[z] = [n for n in self.queue[z] if n != node.name]
