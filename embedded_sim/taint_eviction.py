"""Taint eviction controller: deletes pods that do not tolerate a NoExecute taint.

k8s-behavior.md B.2.2; pkg/controller/tainteviction/taint_eviction.go (1.29+) or
pkg/controller/nodelifecycle/scheduler/taint_manager.go (up to 1.28): #processPodOnNode,
#getMinTolerationTime, #addConditionAndDeletePod; the tolerations that count are those
v1helper.GetMatchingTolerations picks (the first match per taint). The timer starts when the
controller sees the taint, not at the taint's timeAdded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .clock import Handle
from .cluster import Node, Pod
from .versions import POD_DISRUPTION_CONDITIONS

if TYPE_CHECKING:
    from .simulation import Simulation


class TaintEvictionController:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.timers: dict[int, Handle] = {}  # pod uid -> scheduled deletion

    @property
    def source(self) -> str:
        return self.sim.vd.taint_eviction_source

    def on_taints_changed(self, node: Node) -> None:
        for pod in self.sim.cluster.pods_on(node.name):
            self.process_pod(pod, node)

    def process_pod(self, pod: Pod, node: Node) -> None:
        sim = self.sim
        taints = [t for t in node.taints if t.effect == "NoExecute"]
        existing = self.timers.get(pod.uid)
        if not taints:
            if existing is not None and existing.active:
                existing.cancel()
                sim.record(
                    pod.name,
                    "eviction-cancelled",
                    f"{pod.name}: taints gone, eviction cancelled",
                    self.source,
                )
            self.timers.pop(pod.uid, None)
            return
        # GetMatchingTolerations (pkg/apis/core/v1/helper/helpers.go): for each taint, the
        # *first* toleration in the pod's list that tolerates it, not every one; the
        # DefaultTolerationSeconds admission plugin appends its tolerations after the pod's own.
        used = []
        for t in taints:
            first = next(
                (tol for tol in sim.wl.tolerations if tol.tolerates(t.key, t.value, t.effect)),
                None,
            )
            if first is None:
                # Not tolerated at all: delete now.
                if existing is not None:
                    existing.cancel()
                self.timers.pop(pod.uid, None)
                self._evict(pod, f"does not tolerate {t.key}:{t.effect}")
                return
            used.append(first)
        # getMinTolerationTime: smallest tolerationSeconds; <=0 -> now; none set -> forever.
        secs = [tol.toleration_seconds for tol in used if tol.toleration_seconds is not None]
        if not secs:
            if existing is not None:
                existing.cancel()
            self.timers.pop(pod.uid, None)
            sim.timeline.once(
                f"forever-{node.name}",
                sim.now,
                pod.name,
                "toleration-forever",
                f"{pod.name} tolerates the NoExecute taint(s) of {node.name} without "
                "tolerationSeconds: it is never evicted",
                self.source,
            )
            return
        m = min(secs)
        if m <= 0:
            self._evict(pod, "tolerationSeconds <= 0")
            return
        if existing is not None and existing.active:
            return  # keep the earlier timer (processPodOnNode keeps CreatedAt)
        fire = sim.now + m
        names = ", ".join(sorted({t.key for t in taints}))
        sim.record(
            pod.name,
            "eviction-scheduled",
            f"{pod.name} will be evicted at {_time(fire)} s (tolerationSeconds {_whole(m)} for "
            f"{names})",
            self.source,
        )
        self.timers[pod.uid] = sim.loop.at(fire, lambda: self._fire(pod, m), "taint-evict")

    def _fire(self, pod: Pod, secs: float) -> None:
        self.timers.pop(pod.uid, None)
        self._evict(pod, f"tolerationSeconds {secs:g} expired")

    def _evict(self, pod: Pod, why: str) -> None:
        sim = self.sim
        if sim.cluster.pods.get(pod.name) is not pod or pod.terminating:
            return
        # The DisruptionTarget condition is added only with PodDisruptionConditions (on from
        # 1.26; KEP-3329).
        condition = (
            ", DisruptionTarget DeletionByTaintManager"
            if sim.vd.gates.get(POD_DISRUPTION_CONDITIONS, False)
            else ""
        )
        sim.api.delete_pod(
            pod,
            self.source.replace("#processPodOnNode", "#addConditionAndDeletePod"),
            f"evicted by the taint eviction controller{condition}: {why}",
        )


def _whole(seconds: float) -> str:
    """Seconds as written: an integer exactly (an int64 tolerationSeconds is not rounded)."""
    if isinstance(seconds, int) or float(seconds).is_integer():
        return str(int(seconds))
    return f"{seconds:g}"


def _time(t_s: float) -> str:
    """A simulated time: to 0.1 s, or in exponent form past any simulated horizon."""
    return f"{t_s:.1f}" if abs(t_s) < 1e12 else f"{t_s:.3g}"
