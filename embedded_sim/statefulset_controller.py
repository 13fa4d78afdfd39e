"""StatefulSet controller: one sync = replica pass, condemned pass, update step.

pkg/controller/statefulset/stateful_set_control.go (k8s-behavior.md B.4, E.3, E.4):
#updateStatefulSet, #processReplica, #processCondemned, #runForAll,
#updateStatefulSetAfterInvariantEstablished; helpers in stateful_set_utils.go
(#newVersionedStatefulSetPod, #isRunningAndReady, #isRunningAndAvailable, #allowsBurst,
#getStatefulSetMaxUnavailable). The controller never force-deletes.

Around the pass (stateful_set.go#sync): adoption and release of pods by controller reference
(controller_ref_manager.go#ClaimPods), ControllerRevision history (history.py), KEP-1847 claim
owner references (claim_owners.py), a set being deleted (only its status is written), and API
errors: a failed write ends the pass (in Parallel after the #slowStartBatch batch it was in),
the status is still written, and `sync()` returns the error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from .apiserver import ApiError
from .claim_owners import (
    Obj,
    Policy,
    claim_is_stale,
    has_unexpected_controller,
    is_claim_owner_up_to_date,
    update_claim_owner_refs,
)
from .cluster import SET_UID, Pod, Volume, parent_and_ordinal
from .history import History
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
SRC_PVC_CREATE_ALL = (
    "pkg/controller/statefulset/stateful_pod_control.go#createPersistentVolumeClaims"
)
SRC_POD_CLAIM = (
    "pkg/controller/statefulset/stateful_pod_control.go#UpdatePodClaimForRetentionPolicy"
)
SRC_CLAIM = "pkg/controller/controller_ref_manager.go#ClaimPods"
MAX_BATCH_SIZE = 500  # stateful_set_control.go#MaxBatchSize


class StatefulSetStatus(msgspec.Struct):
    """status of the set as last written (stateful_set_control.go#computeReplicaStatus)."""

    replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    current_replicas: int = 0
    updated_replicas: int = 0
    current_revision: str = ""
    update_revision: str = ""


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
        self.exists = True  # False once the set is deleted (the garbage collector takes over)
        self.deleting = False  # metadata.deletionTimestamp as the informer cache shows it
        self.deleting_fresh: bool | None = None  # as a quorum read shows it (None: same)
        self.history = History()
        self.status = StatefulSetStatus()
        self.last_error: ApiError | None = None

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
        """The set's pods by ordinal: those it controls (after #ClaimPods)."""
        return {
            p.ordinal: p
            for p in self.sim.cluster.pods.values()
            if p.controller_uid == SET_UID and p.ordinal >= 0 and self._member(p)
        }

    def _member(self, pod: Pod) -> bool:
        """The selector matches and stateful_set_utils.go#isMemberOf (the name's parent)."""
        return pod.labels_match and parent_and_ordinal(pod.name)[0] == self.sim.wl.name

    def _healthy(self, p: Pod | None) -> bool:
        # isHealthy: running, ready and not terminating.
        return p is not None and p.running_and_ready() and not p.terminating

    def _available(self, p: Pod | None) -> bool:
        return (
            p is not None
            and not p.terminating
            and p.available(self.sim.now, self.sim.wl.min_ready_seconds)
        )

    def _update_ready(self, p: Pod | None) -> bool:
        """What the rolling-update step waits for: available (isUnavailable with
        minReadySeconds) from 1.34, only healthy (running, Ready, not terminating) before
        (kubernetes/kubernetes#130909; VersionDefaults.update_waits_for_min_ready)."""
        if self.sim.vd.update_waits_for_min_ready:
            return self._available(p)
        return self._healthy(p)

    def _stall(self, pod: Pod | None, why: str, source: str) -> None:
        sim = self.sim
        if self.current_revision == self.update_revision or pod is None:
            return
        if not (pod.broken and pod.phase == "Running"):
            return
        sim.timeline.once(f"stall-{pod.uid}", sim.now, pod.name, "rollout-stalled", why, source)

    # --- the sync ----------------------------------------------------------------------
    def sync(self) -> ApiError | None:
        """One reconcile: stateful_set.go#sync, then stateful_set_control.go#UpdateStatefulSet.

        Adopts orphaned ControllerRevisions and pods, releases pods that no longer match
        (#adoptOrphanRevisions, #getPodsForStatefulSet -> ClaimPods), records the revision
        (#getStatefulSetRevisions), runs one pass (#updateStatefulSet), writes the status even
        when the pass failed (#performUpdate) and prunes the history (#truncateHistory).
        Returns the first API error of the pass (the pass's own error wins over the status
        write's), or None; upstream requeues the set with backoff on an error.
        """
        if not self.exists:
            return None
        self.syncs += 1
        try:
            self._adopt_orphan_revisions()
            self.claim_pods()
        except ApiError as e:
            self.last_error = e
            return e
        self.history.record(self.update_revision)
        err: ApiError | None = None
        try:
            self._update()
        except ApiError as e:
            err = e
        serr = self._write_status()
        live = {self.current_revision, self.update_revision}
        live.update(p.revision for p in self._pods().values())
        self.history.truncate(live, self.sim.wl.revision_history_limit)
        self.last_error = err or serr
        return self.last_error

    def _can_adopt(self) -> None:
        """controller.RecheckDeletionTimestamp: a quorum read of the set before adopting."""
        fresh = self.deleting if self.deleting_fresh is None else self.deleting_fresh
        if fresh:
            raise ApiError(
                "adopt",
                self.sim.wl.name,
                "the StatefulSet has just been deleted: nothing is adopted "
                "(controller_ref_manager.go#RecheckDeletionTimestamp)",
            )

    def _adopt_orphan_revisions(self) -> None:
        orphans = self.history.orphans()
        if orphans:
            self._can_adopt()
            for r in orphans:
                r.owned = True

    def claim_pods(self) -> None:
        """controller_ref_manager.go#ClaimPods with stateful_set.go's filter #isMemberOf: owned
        pods that no longer match are released, matching orphans (not terminating) adopted.
        Raises ApiError when an adoption's quorum read shows the set deleted (nothing adopted).
        """
        sim = self.sim
        if all(p.controller_uid == SET_UID and self._member(p) for p in sim.cluster.pods.values()):
            return
        err: ApiError | None = None
        for pod in sorted(sim.cluster.pods.values(), key=lambda p: p.name):
            match = self._member(pod)
            if pod.controller_uid == SET_UID:
                if match or self.deleting:  # a set being deleted releases nothing
                    continue
                pod.controller_uid = None
                sim.record(pod.name, "pod-released", f"{pod.name} released", SRC_CLAIM)
            elif pod.controller_uid is None:
                if self.deleting or not match or pod.terminating:
                    continue
                try:
                    self._can_adopt()
                except ApiError as e:
                    err = err or e
                    continue
                pod.controller_uid = SET_UID
                sim.record(pod.name, "pod-adopted", f"{pod.name} adopted", SRC_CLAIM)
        if err is not None:
            raise err

    def compute_status(self) -> StatefulSetStatus:
        """#computeReplicaStatus over the set's pods (in range and condemned)."""
        sim = self.sim
        st = StatefulSetStatus(
            current_revision=self.current_revision, update_revision=self.update_revision
        )
        for p in self._pods().values():
            st.replicas += 1
            if p.running_and_ready():
                st.ready_replicas += 1
                if p.available(sim.now, sim.wl.min_ready_seconds):
                    st.available_replicas += 1
            if not p.terminating:
                st.current_replicas += p.revision == self.current_revision
                st.updated_replicas += p.revision == self.update_revision
        return st

    def _write_status(self) -> ApiError | None:
        st = self.compute_status()
        try:
            self.sim.api.call("update-status", self.sim.wl.name)
        except ApiError as e:
            return e
        self.status = st
        return None

    def _update(self) -> None:
        sim = self.sim
        if self.deleting:
            return  # #updateStatefulSet: a set being deleted only gets its status updated
        pods = self._pods()
        start, end = self.start, self.start + self.replicas
        monotonic = sim.wl.monotonic
        strategy = self._strategy()
        recreate_wait = self._recreate_active() and any(
            p.revision != self.update_revision for p in pods.values()
        )

        # Replica pass (#processReplica), ascending ordinal.
        def replica(o: int) -> bool:
            return self._process_replica(o, pods, monotonic, strategy, recreate_wait)

        if self._run_for_all(list(range(start, end)), replica, monotonic):
            return

        # KEP-1847: fix the claims of condemned pods (#updateStatefulSet "Fix pod claims").
        condemned = sorted(o for o in pods if not (start <= o < end))
        if self._auto_delete_pvc():

            def fix(o: int) -> bool:
                if not self._claims_match(pods[o]):
                    self._update_claims(pods[o])
                return False

            self._run_for_all(list(reversed(condemned)), fix, monotonic)
        # Claims whose owners are gone (whenScaled: Delete via the pod's reference).
        sim.gc.collect_claims()

        # Condemned pass (#processCondemned), descending ordinal.
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

        def condemn(o: int) -> bool:
            pod = pods[o]
            if pod.terminating:
                return monotonic
            if monotonic and not self._available(pod) and o != first_unhealthy:
                return True
            self.deletes += 1
            sim.api.delete_pod(pod, SRC_CONDEMNED, "scale-down: ordinal out of range")
            return monotonic

        if self._run_for_all(list(reversed(condemned)), condemn, monotonic):
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

    @staticmethod
    def _run_for_all(items: list[int], fn: Callable[[int], bool], monotonic: bool) -> bool:
        """#runForAll: monotonic stops at the first item that blocks (True) or fails; burst
        runs #slowStartBatch (batches of 1, 2, 4, ... at most MaxBatchSize 500), finishing the
        batch in which a call failed and then stopping with that error."""
        if monotonic:
            return any(fn(it) for it in items)
        i, size = 0, 1
        while i < len(items):
            batch = items[i : i + size]
            errs: list[ApiError] = []
            for it in batch:
                try:
                    fn(it)
                except ApiError as e:
                    errs.append(e)
            if errs:
                raise errs[0]
            i += len(batch)
            size = min(2 * size, len(items) - i, MAX_BATCH_SIZE)
        return False

    def _process_replica(
        self, o: int, pods: dict[int, Pod], monotonic: bool, strategy: str, recreate_wait: bool
    ) -> bool:
        """#processReplica for one ordinal; True = stop here (monotonic only)."""
        sim = self.sim
        pod = pods.get(o)
        if pod is not None and pod.terminal:
            if not pod.terminating:
                self.deletes += 1
                sim.api.delete_pod(pod, SRC_REPLICA, f"phase {pod.phase}: delete to recreate")
            return True
        if pod is None:
            if recreate_wait:
                return True
            if self._auto_delete_pvc() and self._claim_stale(o):
                return True  # #PodClaimIsStale: no more work this round
            rev = self.update_revision
            if strategy == "RollingUpdate" and o < self.start + self.partition:
                rev = self.current_revision  # #newVersionedStatefulSetPod
            self._check_claims_not_deleting(o)
            self.creates += 1
            created = sim.api.create_pod(o, rev, SRC_REPLICA)
            if self._auto_delete_pvc():
                self._update_claims(created)  # #CreateStatefulPod
            return True
        if pod.phase == "Pending" and not pod.terminating:
            # processReplica: a Pending pod gets its missing PVCs recreated.
            self._check_claims_not_deleting(o)
            sim.ensure_claims(o, SRC_PVC_CREATE)
            if self._auto_delete_pvc():
                self._update_claims(pod)  # #createMissingPersistentVolumeClaims
        if not monotonic:
            self._enforce(pod)
            return False
        if pod.terminating:
            self._stall(pod, f"OrderedReady: sync waits for {pod.name} to terminate", SRC_REPLICA)
            return True
        if not pod.running_and_ready() or not pod.available(sim.now, sim.wl.min_ready_seconds):
            self._stall(
                pod,
                f"OrderedReady: every sync stops at {pod.name}, "
                "which is not Running and Ready; "
                "the update step is never reached",
                SRC_REPLICA,
            )
            return True
        self._enforce(pod)
        return False

    # --- pod invariants and claim owner references (KEP-1847) --------------------------
    def _auto_delete_pvc(self) -> bool:
        return bool(self.sim.vd.gates.get(STATEFULSET_AUTO_DELETE_PVC, False))

    def _policy(self) -> Policy:
        return Policy(self.sim.wl.when_scaled, self.sim.wl.when_deleted)

    def set_obj(self) -> Obj:
        return Obj("StatefulSet", self.sim.wl.name, SET_UID)

    def _claim_vols(self, ordinal: int) -> list[Volume | None]:
        vols = self.sim.cluster.volumes
        out: list[Volume | None] = []
        for ct in self.sim.wl.claim_templates:
            v = vols.get(f"{ct.name}-{self.sim.wl.name}-{ordinal}")
            out.append(v if v is not None and not v.deleted else None)
        return out

    def _claim_stale(self, o: int) -> bool:
        pod = Obj("Pod", self.sim.wl.pod_name(o), "")
        if not claim_is_stale(self._claim_vols(o), pod, self._policy()):
            return False
        # The garbage collector removes a claim whose pod is gone; the simulator runs its
        # claim pass at controller syncs, so give it its turn before waiting.
        self.sim.gc.collect_claims()
        return claim_is_stale(self._claim_vols(o), pod, self._policy())

    def _check_claims_not_deleting(self, o: int) -> None:
        """stateful_pod_control.go#createPersistentVolumeClaims: "pvc ... is being deleted"."""
        for v in self._claim_vols(o):
            if v is not None and v.deletion_requested:
                name = self.sim.wl.pod_name(o)
                self.sim.record(
                    name,
                    "pod-create-failed",
                    f"create Pod {name} failed: pvc {v.claim} is being deleted",
                    SRC_PVC_CREATE_ALL,
                )
                raise ApiError("create-pod", name, f"pvc {v.claim} is being deleted")

    def _claims_match(self, pod: Pod) -> bool:
        """stateful_pod_control.go#ClaimsMatchRetentionPolicy (missing claims match)."""
        s, po, pol = self.set_obj(), Obj("Pod", pod.name, pod.uid_str), self._policy()
        condemned = not self.in_range(pod.ordinal)
        return all(
            v is None or is_claim_owner_up_to_date(v.owner_refs, s, po, pol, condemned)
            for v in self._claim_vols(pod.ordinal)
        )

    def _update_claims(self, pod: Pod) -> None:
        """stateful_pod_control.go#UpdatePodClaimForRetentionPolicy."""
        sim = self.sim
        s, po, pol = self.set_obj(), Obj("Pod", pod.name, pod.uid_str), self._policy()
        condemned = not self.in_range(pod.ordinal)
        for v in self._claim_vols(pod.ordinal):
            if v is None:
                continue  # picked up in a later pass
            if has_unexpected_controller(v.owner_refs, s, po, pol):
                sim.timeline.once(
                    f"conflicting-{v.claim}",
                    sim.now,
                    None,
                    "pvc-conflicting-controller",
                    f"PersistentVolumeClaim {v.claim} has a conflicting OwnerReference that acts "
                    "as a managing controller, the retention policy is ignored for this claim",
                    SRC_POD_CLAIM,
                )
            if not is_claim_owner_up_to_date(v.owner_refs, s, po, pol, condemned):
                sim.api.call("update-claim", v.claim)
                v.owner_refs = update_claim_owner_refs(v.owner_refs, s, po, pol, condemned)

    def _enforce(self, pod: Pod) -> None:
        """#processReplica "Enforce the StatefulSet invariants" -> #UpdateStatefulPod: identity,
        storage and (KEP-1847) claim references; one pod update when anything was off."""
        match = not self._auto_delete_pvc() or self._claims_match(pod)
        if match and not pod.identity_drift:
            return
        if not match:
            self._update_claims(pod)
        self.sim.api.call("update-pod", pod.name)
        pod.identity_drift = False  # #updateIdentity

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
                if not self._update_ready(pod):
                    self._stall(
                        pod, f"rolling update waits for {pod.name} to become available", SRC_UPDATE
                    )
                    return
            return
        max_unav = resolve_max_unavailable(sim.wl.max_unavailable_raw, self.replicas)
        unavailable = [o for o in range(start, end) if not self._update_ready(pods.get(o))]
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
                    and not self._update_ready(p)
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

    def _status(self) -> None:
        if self._strategy() != "RollingUpdate" or self.current_revision == self.update_revision:
            if self._strategy() != "RollingUpdate":
                self._complete_if_done()
            return
        self._complete_if_done()

    def _complete_if_done(self) -> None:
        sim = self.sim
        pods = list(self._pods().values())
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
