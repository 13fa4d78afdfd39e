"""PodGC controller: force-deletes orphaned pods and terminating pods on out-of-service nodes.

pkg/controller/podgc/gc_controller.go (k8s-behavior.md B.3.3): gcCheckPeriod 20 s,
quarantineTime 40 s. Passes are only simulated when there can be work, on the grid
phase + k × period, so a long horizon costs nothing.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .versions import NODE_OUT_OF_SERVICE_VOLUME_DETACH, POD_DISRUPTION_CONDITIONS
from .workload import TAINT_OUT_OF_SERVICE

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_TERMINATING = "pkg/controller/podgc/gc_controller.go#gcTerminating"
SRC_ORPHANED = "pkg/controller/podgc/gc_controller.go#gcOrphaned"
# (#gcUnscheduledTerminating is not simulated: the API server deletes an unscheduled pod at
# once, pkg/registry/core/pod/strategy.go#CheckGracefulDelete, so none is left terminating.)


class PodGC:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.scheduled: set[float] = set()
        self.quarantine: dict[str, float] = {}  # node -> time the quarantine ends

    def _next_pass(self, after: float) -> float:
        p = self.sim.profile
        k = math.floor((after - p.podgc_phase_s) / p.podgc_period_s) + 1
        return p.podgc_phase_s + k * p.podgc_period_s

    def kick(self, at: float | None = None) -> None:
        """Make sure a pass runs at the first grid point after `at` (default now)."""
        t = self._next_pass(self.sim.now if at is None else at - 1e-9)
        t = round(t, 6)
        if t in self.scheduled:
            return
        self.scheduled.add(t)
        self.sim.loop.at(t, lambda: self._pass(t), "podgc")

    def _pass(self, t: float) -> None:
        sim = self.sim
        self.scheduled.discard(t)
        nodes = sim.cluster.nodes
        # gcTerminating (gate NodeOutOfServiceVolumeDetach): terminating pods on a not-Ready
        # node with the out-of-service taint -> phase Failed, delete with grace 0.
        if sim.vd.gates.get(NODE_OUT_OF_SERVICE_VOLUME_DETACH, False):
            for pod in sorted(sim.cluster.pods.values(), key=lambda p: p.ordinal):
                n = nodes.get(pod.node) if pod.node else None
                if (
                    pod.terminating
                    and n is not None
                    and not n.deleted
                    and n.ready != "True"
                    and n.has_taint(TAINT_OUT_OF_SERVICE)
                ):
                    pod.phase = "Failed"
                    sim.api.force_delete(
                        pod,
                        SRC_TERMINATING,
                        f"PodGC force-deleted it (terminating on out-of-service node {n.name})",
                    )
        # gcOrphaned: pods bound to a Node that no longer exists, after a 40 s quarantine.
        for pod in sorted(sim.cluster.pods.values(), key=lambda p: p.ordinal):
            if pod.node is None:
                continue
            n = nodes.get(pod.node)
            if n is None or not n.deleted:
                continue
            ends = self.quarantine.get(n.name)
            if ends is None:
                ends = sim.now + sim.profile.podgc_quarantine_s
                self.quarantine[n.name] = ends
                self.kick(ends)
                continue
            if sim.now + 1e-9 >= ends:
                pod.phase = "Failed"
                sim.api.force_delete(
                    pod,
                    SRC_ORPHANED,
                    f"PodGC force-deleted the orphan (Node {n.name} gone, quarantine "
                    f"{sim.profile.podgc_quarantine_s:g} s)"
                    + (
                        ", DisruptionTarget DeletionByPodGC"
                        if sim.vd.gates.get(POD_DISRUPTION_CONDITIONS, False)
                        else ""
                    ),
                )
