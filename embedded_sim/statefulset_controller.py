"""StatefulSet controller: one sync = replica pass, condemned pass, update step.

pkg/controller/statefulset/stateful_set_control.go (k8s-behavior.md B.4, E.3, E.4):
#updateStatefulSet, #processReplica, #processCondemned, #runForAll,
#updateStatefulSetAfterInvariantEstablished; helpers in stateful_set_utils.go
(#newVersionedStatefulSetPod, #isRunningAndReady, #isRunningAndAvailable, #allowsBurst,
#getStatefulSetMaxUnavailable). The controller never force-deletes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cluster import Pod
from .versions import (
    MAX_UNAVAILABLE_STATEFULSET,
    STATEFULSET_AUTO_DELETE_PVC,
    STATEFULSET_RECREATE_STRATEGY,
    STATEFULSET_START_ORDINAL,
)
from .workload import resolve_max_unavailable

if TYPE_CHECKING:
    from .simulation import Simulation

_F = "pkg/controller/statefulset/stateful_set_control.go"
SRC_REPLICA = f"{_F}#processReplica"
SRC_CONDEMNED = f"{_F}#processCondemned"
SRC_UPDATE = f"{_F}#updateStatefulSet"
SRC_MAXUNAV = f"{_F}#updateStatefulSetAfterInvariantEstablished"
SRC_STATUS = f"{_F}#completeRollingUpdate"
SRC_RECREATE = f"{_F}#updateStatefulSet (Recreate, KEP-3541)"
SRC_PVC_CREATE = (
    "pkg/controller/statefulset/stateful_pod_control.go#createMissingPersistentVolumeClaims"
)
SRC_PVC = "pkg/controller/statefulset/stateful_pod_control.go#PersistentVolumeClaimRetentionPolicy"


class StatefulSetController:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.replicas = sim.wl.replicas
        self.partition = sim.wl.partition
        self.current_revision = "rev-1"
        self.update_revision = "rev-1"
        self.sync_pending = False
        self.syncs = 0
        self.creates = 0
        self.deletes = 0

    # --- spec helpers -------------------------------------------------------------------
    @property
    def start(self) -> int:
        # KEP-3335: spec.ordinals.start honoured only with StatefulSetStartOrdinal.
        if self.sim.vd.gates.get(STATEFULSET_START_ORDINAL, False):
            return self.sim.wl.ordinals_start
        return 0

    def in_range(self, ordinal: int) -> bool:
        return self.start <= ordinal < self.start + self.replicas

    def ordinals(self) -> list[int]:
        return list(range(self.start, self.start + self.replicas))

    def _recreate_active(self) -> bool:
        return self.sim.wl.update_strategy == "Recreate" and bool(
            self.sim.vd.gates.get(STATEFULSET_RECREATE_STRATEGY, False)
        )

    def _strategy(self) -> str:
        st = self.sim.wl.update_strategy
        if st == "Recreate" and not self._recreate_active():
            # KEP-3541 skew: a controller with the gate off falls back to RollingUpdate.
            return "RollingUpdate"
        return st

    # --- triggering ---------------------------------------------------------------------
    def request_sync(self, delay_s: float | None = None) -> None:
        sim = self.sim
        if sim.manual_sync or self.sync_pending:
            return
        self.sync_pending = True
        d = sim.profile.controller_reaction_s if delay_s is None else delay_s
        sim.loop.after(d, self._run_sync, "sts-sync")

    def _run_sync(self) -> None:
        self.sync_pending = False
        self.sync()

    def set_template(self, revision: str, source: str, why: str) -> None:
        self.update_revision = revision
        self.sim.record(None, "template-changed", why, source)
        self.sim.changed()
        self.request_sync()

    # --- the sync ----------------------------------------------------------------------
    def _pods(self) -> dict[int, Pod]:
        return {p.ordinal: p for p in self.sim.cluster.pods.values()}

    def _healthy(self, p: Pod | None) -> bool:
        # isHealthy: running, ready and not terminating.
        return p is not None and p.running_and_ready() and not p.terminating

    def _available(self, p: Pod | None) -> bool:
        return (
            p is not None
            and not p.terminating
            and p.available(self.sim.now, self.sim.wl.min_ready_seconds)
        )

    def _stall(self, pod: Pod | None, why: str, source: str) -> None:
        sim = self.sim
        if self.current_revision == self.update_revision or pod is None:
            return
        if not (pod.broken and pod.phase == "Running"):
            return
        sim.timeline.once(f"stall-{pod.uid}", sim.now, pod.name, "rollout-stalled", why, source)

    def sync(self) -> None:
        sim = self.sim
        self.syncs += 1
        pods = self._pods()
        start, end = self.start, self.start + self.replicas
        monotonic = sim.wl.monotonic
        strategy = self._strategy()
        recreate_wait = self._recreate_active() and any(
            p.revision != self.update_revision for p in pods.values()
        )

        # Replica pass (#processReplica), ascending ordinal.
        for o in range(start, end):
            pod = pods.get(o)
            if pod is not None and pod.terminal:
                if not pod.terminating:
                    self.deletes += 1
                    sim.api.delete_pod(pod, SRC_REPLICA, f"phase {pod.phase}: delete to recreate")
                if monotonic:
                    return
                continue
            if pod is None:
                if recreate_wait:
                    if monotonic:
                        return
                    continue
                rev = self.update_revision
                if strategy == "RollingUpdate" and o < start + self.partition:
                    rev = self.current_revision  # #newVersionedStatefulSetPod
                self.creates += 1
                sim.api.create_pod(o, rev, SRC_REPLICA)
                if monotonic:
                    return
                continue
            if pod.phase == "Pending" and not pod.terminating:
                # processReplica: a Pending pod gets its missing PVCs recreated.
                sim.ensure_claims(o, SRC_PVC_CREATE)
            if not monotonic:
                continue
            if pod.terminating:
                self._stall(
                    pod, f"OrderedReady: sync waits for {pod.name} to terminate", SRC_REPLICA
                )
                return
            if not pod.running_and_ready() or not pod.available(sim.now, sim.wl.min_ready_seconds):
                self._stall(
                    pod,
                    f"OrderedReady: every sync stops at {pod.name}, "
                    "which is not Running and Ready; "
                    "the update step is never reached",
                    SRC_REPLICA,
                )
                return

        # PVC retention for condemned ordinals (KEP-1847).
        self._retention(pods, end)

        # Condemned pass (#processCondemned), descending ordinal.
        condemned = sorted(o for o in pods if not (start <= o < end))
        first_unhealthy: int | None = None
        for o in range(start, end):
            if not self._healthy(pods.get(o)):
                first_unhealthy = o
                break
        if first_unhealthy is None:
            for o in condemned:
                if not self._healthy(pods[o]):
                    first_unhealthy = o
                    break
        for o in reversed(condemned):
            pod = pods[o]
            if pod.terminating:
                if monotonic:
                    return
                continue
            if monotonic and not self._available(pod) and o != first_unhealthy:
                return
            self.deletes += 1
            sim.api.delete_pod(pod, SRC_CONDEMNED, "scale-down: ordinal out of range")
            if monotonic:
                return

        if strategy == "OnDelete":
            self._status()
            return
        if self._recreate_active():
            for o in sorted(pods, reverse=True):
                p = pods[o]
                if p.revision != self.update_revision and not p.terminating:
                    self.deletes += 1
                    sim.api.delete_pod(p, SRC_RECREATE, "Recreate: every old-revision pod deleted")
            self._status()
            return
        self.rolling_update_step()
        self._status()

    def rolling_update_step(self) -> None:
        """B.4.2 step 7 / E.3: the update part of one sync (callable alone, as upstream tests)."""
        sim = self.sim
        pods = self._pods()
        start, end = self.start, self.start + self.replicas
        lo = start + self.partition
        upd = self.update_revision
        gate = bool(sim.vd.gates.get(MAX_UNAVAILABLE_STATEFULSET, False))
        if not gate:
            for o in range(end - 1, lo - 1, -1):
                pod = pods.get(o)
                if pod is None:
                    return
                if pod.revision != upd and not pod.terminating:
                    self.deletes += 1
                    sim.api.delete_pod(pod, SRC_UPDATE, f"rolling update to {upd}")
                    return
                if not self._available(pod):
                    self._stall(
                        pod, f"rolling update waits for {pod.name} to become available", SRC_UPDATE
                    )
                    return
            return
        max_unav = resolve_max_unavailable(sim.wl.max_unavailable_raw, self.replicas)
        unavailable = [o for o in range(start, end) if not self._available(pods.get(o))]
        u = len(unavailable)
        counting = sim.vd.maxunavailable_counting
        parallel = sim.wl.parallel
        n_broken_old = 0
        if counting == "1.37" and parallel:
            n_broken_old = sum(
                1
                for o in unavailable
                if (p := pods.get(o)) is not None and p.revision != upd and not p.terminating
            )
        if u >= max_unav and n_broken_old == 0:
            for o in unavailable:
                self._stall(
                    pods.get(o),
                    f"maxUnavailable {max_unav} used up by {u} unavailable pod(s) "
                    f"({counting} counting): nothing more is deleted",
                    SRC_MAXUNAV,
                )
            return
        deleted: set[int] = set()
        if counting == "1.37" and parallel:
            for o in range(end - 1, lo - 1, -1):
                p = pods.get(o)
                if (
                    p is not None
                    and p.revision != upd
                    and not p.terminating
                    and not self._available(p)
                ):
                    self.deletes += 1
                    deleted.add(o)
                    sim.api.delete_pod(
                        p, SRC_MAXUNAV, f"rolling update to {upd} (unavailable old pod)"
                    )
        budget = max_unav - u
        for o in range(end - 1, lo - 1, -1):
            if budget <= 0:
                break
            p = pods.get(o)
            if p is None or o in deleted or p.revision == upd or p.terminating:
                continue
            self.deletes += 1
            sim.api.delete_pod(
                p, SRC_MAXUNAV, f"rolling update to {upd} (maxUnavailable {max_unav})"
            )
            budget -= 1

    def _retention(self, pods: dict[int, Pod], end: int) -> None:
        sim = self.sim
        if sim.wl.when_scaled != "Delete" or not sim.vd.gates.get(
            STATEFULSET_AUTO_DELETE_PVC, False
        ):
            return
        for vol in sorted(sim.cluster.volumes.values(), key=lambda v: v.sort_key):
            if vol.deleted or self.start <= vol.ordinal < end or vol.ordinal in pods:
                continue
            vol.deleted = True
            sim.record(
                None,
                "pvc-deleted",
                f"PVC {vol.claim} deleted (whenScaled: Delete) after its pod was removed",
                SRC_PVC,
            )

    def _status(self) -> None:
        if self._strategy() != "RollingUpdate" or self.current_revision == self.update_revision:
            if self._strategy() != "RollingUpdate":
                self._complete_if_done()
            return
        self._complete_if_done()

    def _complete_if_done(self) -> None:
        sim = self.sim
        pods = list(sim.cluster.pods.values())
        if self.current_revision == self.update_revision:
            return
        if len(pods) != self.replicas:
            return
        if all(p.revision == self.update_revision and p.running_and_ready() for p in pods):
            self.current_revision = self.update_revision
            sim.record(
                None,
                "rollout-complete",
                f"currentRevision = updateRevision = {self.update_revision}: "
                "every pod updated and Ready",
                SRC_STATUS,
            )
