"""Node lifecycle controller (kube-controller-manager): health, taints, zone disruption.

Source file: pkg/controller/nodelifecycle/node_lifecycle_controller.go (k8s-behavior.md B.1).
Health detection is computed analytically (no 5 s polling loop) so a run stays cheap:
T_u = T0 + G + profile.nlc_detection_offset_s (typical G - 2.5 s, range [G-10, G+5]).
"""

from __future__ import annotations

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
SRC_RATE = "pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go#Try"
SRC_REACHABLE = (
    "pkg/controller/nodelifecycle/node_lifecycle_controller.go#processTaintBaseEviction "
    "(markNodeAsReachable)"
)
SRC_KUBELET_READY = "pkg/kubelet/nodestatus/setters.go#ReadyCondition"

NORMAL = "Normal"
PARTIAL = "PartialDisruption"
FULL = "FullDisruption"


class NodeLifecycleController:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.zone_state: dict[str, str] = {}
        self.next_token_s: dict[str, float] = {}
        self.queue: dict[str, list[str]] = {}  # zone -> nodes waiting for the NoExecute taint
        self.pending_pass = False

    # --- detection ----------------------------------------------------------------------
    def node_lost(self, node: Node) -> None:
        """Lease renewals stop at now; NLC marks Ready=Unknown after the grace period."""
        sim = self.sim
        g = sim.grace_s
        t_u = sim.now + g + sim.profile.nlc_detection_offset_s
        sim.loop.at(t_u, lambda: self._mark_unknown(node), "nlc-detect")

    def _mark_unknown(self, node: Node) -> None:
        sim = self.sim
        if node.alive or node.deleted or node.ready == "Unknown":
            return
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
        self._after_not_ready(node, TAINT_UNREACHABLE)

    def kubelet_not_ready(self, node: Node, reason: str) -> None:
        """The kubelet posts Ready=False itself (graceful shutdown); NLC acts on its next pass."""
        sim = self.sim
        node.ready = "False"
        sim.record(None, "node-not-ready", f"{node.name} Ready=False: {reason}", SRC_HEALTH)
        # The NLC sees the change on its next pass (typical half a period).
        sim.loop.after(
            sim.profile.node_monitor_period_s / 2.0,
            lambda: self._after_not_ready(node, TAINT_NOT_READY),
            "nlc-pass",
        )

    def _after_not_ready(self, node: Node, key: str) -> None:
        sim = self.sim
        if node.deleted:
            return
        # monitorNodeHealth -> MarkPodsNotReady: every pod on the node gets Ready=False.
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
        if node.add_taint(Taint(key, "NoSchedule", added_s=sim.now)):
            sim.record(None, "taint-added", f"{node.name} tainted {key}:NoSchedule", SRC_NOSCHED)
        sim.changed()
        sim.stsc.request_sync()
        self.recompute_zones()
        self._enqueue(node)

    # --- zones and rate-limited NoExecute tainting -------------------------------------
    def _state_of(self, zone: str) -> str:
        nodes = [n for n in self.sim.cluster.zone_nodes(zone)]
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
            size = len(self.sim.cluster.zone_nodes(zone))
            return p.secondary_node_eviction_rate if size > p.large_cluster_size_threshold else 0.0
        return p.node_eviction_rate

    def _all_full(self) -> bool:
        zones = {n.zone for n in self.sim.cluster.nodes.values() if not n.deleted}
        return bool(zones) and all(self.zone_state.get(z, NORMAL) == FULL for z in zones)

    def recompute_zones(self) -> None:
        sim = self.sim
        zones = sorted({n.zone for n in sim.cluster.nodes.values() if not n.deleted})
        for z in zones:
            st = self._state_of(z)
            if self.zone_state.get(z, NORMAL) != st:
                self.zone_state[z] = st
                sim.record(None, "zone-disruption", f"{z} zone state {st}", SRC_ZONE)
        if self._all_full():
            # Master disruption mode: remove NoExecute taints everywhere, stop tainting.
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
        key = TAINT_UNREACHABLE if node.ready == "Unknown" else TAINT_NOT_READY
        if node.add_taint(Taint(key, "NoExecute", added_s=sim.now)):
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
            sim.profile.controller_reaction_s, lambda: self._clear_noschedule(node), "nlc-pass"
        )
        sim.loop.after(
            sim.profile.node_monitor_period_s / 2.0, lambda: self._reachable(node), "nlc-pass"
        )
        sim.kubelet.node_ready(node.name)
        sim.stsc.request_sync()

    def _clear_noschedule(self, node: Node) -> None:
        sim = self.sim
        if node.ready != "True":
            return
        for key in (TAINT_UNREACHABLE, TAINT_NOT_READY):
            if node.remove_taint(key, "NoSchedule"):
                sim.record(
                    None, "taint-removed", f"{node.name} {key}:NoSchedule removed", SRC_NOSCHED
                )
                sim.changed()
        sim.scheduler.retry_pending()

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
