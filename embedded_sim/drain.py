"""`kubectl drain` with default flags (k8s-behavior.md B.6.3).

staging/src/k8s.io/kubectl/pkg/drain/drain.go#evictPods (429 retried every 5 s, any other
eviction error fails the drain; then polls every 1 s until the pod object is gone; --timeout 0
= wait forever) and
staging/src/k8s.io/kubectl/pkg/drain/cordon.go#PatchOrReplace (spec.unschedulable).
A refused eviction is not re-tried while nothing in the cluster has changed: the answer would
be the same, so the loop stays short however long the horizon.
"""

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING

from .clock import Handle
from .cluster import Taint
from .workload import TAINT_UNSCHEDULABLE

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_CORDON = "staging/src/k8s.io/kubectl/pkg/drain/cordon.go#PatchOrReplace"
SRC_EVICT = "staging/src/k8s.io/kubectl/pkg/drain/drain.go#evictPods"
SRC_WAIT = "staging/src/k8s.io/kubectl/pkg/drain/drain.go#waitForDelete"


class Drain:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.node: str | None = None
        self.started_s: float | None = None
        self.completed_s: float | None = None
        self.waiting: dict[str, int] = {}  # pod name -> uid being drained
        self.refused: dict[str, tuple[int, str]] = {}  # pod name -> (cluster version, msg)
        self.parked: set[str] = set()
        self.retry: dict[str, Handle] = {}
        self.failed: str | None = None  # why kubectl drain gave up (a non-429 eviction error)

    def start(self, node_name: str) -> None:
        sim = self.sim
        self.node = node_name
        self.started_s = sim.now
        node = sim.cluster.nodes[node_name]
        node.unschedulable = True
        node.add_taint(Taint(TAINT_UNSCHEDULABLE, "NoSchedule", added_s=sim.now))
        sim.record(
            None, "node-cordoned", f"{node_name} cordoned (spec.unschedulable=true)", SRC_CORDON
        )
        sim.record(
            None,
            "drain-started",
            f"kubectl drain {node_name} (default flags, no --timeout)",
            SRC_EVICT,
        )
        pods = sim.cluster.pods_on(node_name)
        for pod in pods:
            self.waiting[pod.name] = pod.uid
        if sim.wl.has_empty_dir and not sim.profile.drain_delete_emptydir_data:
            sim.record(
                None,
                "drain-evict-refused",
                "kubectl drain refuses: pods use emptyDir (needs --delete-emptydir-data)",
                "staging/src/k8s.io/kubectl/pkg/drain/filters.go#localStorageFilter",
            )
            self.waiting.clear()
            self.node = None
            return
        sim.changed()
        for pod in pods:
            self._try(pod.name)
        self._check_done()

    def _try(self, name: str) -> None:
        sim = self.sim
        self.retry.pop(name, None)
        uid = self.waiting.get(name)
        pod = sim.cluster.pods.get(name)
        if uid is None or pod is None or pod.uid != uid:
            self._check_done()
            return
        if pod.terminating:
            return
        out = sim.api.evict(pod)
        if out.allowed:
            self.refused.pop(name, None)
            sim.record(name, "drain-evicted", f"{name} evicted by kubectl drain", SRC_EVICT)
            return
        code = "" if f"HTTP {out.code}" in out.message else f" (HTTP {out.code})"
        if out.code != 429:
            # drain.go#evictPods retries only 429 Too Many Requests; any other error ends that
            # pod's goroutine with an error, and the drain command exits with it after the other
            # pods are handled: the node stays cordoned, the drain never completes.
            self.failed = f"error when evicting {name}{code}: {out.message}"
            self.waiting.pop(name, None)
            self.refused[name] = (sim.cluster.version, out.message)
            sim.record(
                name,
                "drain-failed",
                f"kubectl drain fails: error when evicting {name}{code}: {out.message}; only "
                f"429 is retried, so the command exits with an error and {self.node} stays "
                "cordoned",
                SRC_EVICT,
            )
            return
        prev = self.refused.get(name)
        if prev is None or prev[1] != out.message:
            sim.record(
                name,
                "drain-evict-refused",
                f"eviction of {name} refused{code}: {out.message}; retry every "
                f"{sim.profile.drain_evict_retry_s:g} s",
                SRC_EVICT,
            )
        self.refused[name] = (sim.cluster.version, out.message)
        self._arm(name)

    def _arm(self, name: str) -> None:
        sim = self.sim
        step = sim.profile.drain_evict_retry_s
        ver = self.refused[name][0]

        def fire() -> None:
            if sim.cluster.version == ver and not sim.loop_has_other_work():
                self.parked.add(name)  # nothing can change any more: the answer stays 429
                self.retry.pop(name, None)
                return
            if sim.cluster.version == ver:
                self._arm(name)
                return
            self._try(name)

        self.retry[name] = sim.loop.after(step, fire, "drain-retry")

    def on_change(self) -> None:
        """Cluster state changed: parked retries become live again (on the 5 s grid)."""
        if not self.parked:
            return
        sim = self.sim
        step = self.sim.profile.drain_evict_retry_s
        base = self.started_s or 0.0
        for name in sorted(self.parked):
            k = math.ceil((sim.now - base) / step)
            t = base + max(k, 1) * step
            self.retry[name] = sim.loop.at(t, partial(self._try, name), "drain-retry")
        self.parked.clear()

    def on_pod_removed(self, name: str) -> None:
        if name in self.waiting:
            self._check_done()

    def _check_done(self) -> None:
        sim = self.sim
        if self.completed_s is not None or self.node is None or self.failed is not None:
            return
        for name, uid in self.waiting.items():
            p = sim.cluster.pods.get(name)
            if p is not None and p.uid == uid:
                return
        # waitForDelete polls every second from the eviction.
        base = self.started_s or 0.0
        step = sim.profile.drain_poll_s
        t = base + math.ceil(round((sim.now - base) / step, 6)) * step
        self.completed_s = t
        sim.loop.at(
            t,
            lambda: sim.record(
                None, "drain-complete", f"kubectl drain {self.node} finished", SRC_WAIT
            ),
            "drain-done",
        )
