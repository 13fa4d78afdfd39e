"""kube-apiserver behaviour: pod create, graceful delete, force delete, Eviction API + PDBs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from .cluster import Pod
from .disruption import DisruptionBudget
from .versions import PDB_UNHEALTHY_POD_EVICTION_POLICY
from .workload import TAINT_OUT_OF_SERVICE

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_GRACEFUL = "pkg/registry/core/pod/strategy.go#CheckGracefulDelete"
SRC_EVICTION = "pkg/registry/core/pod/storage/eviction.go#Create"


class ApiError(Exception):
    """A write the API server refused (injected by tests: `ApiServer.inject_fault`).

    Upstream controllers return such errors from a sync and are requeued with rate-limited
    backoff (pkg/controller/statefulset/stateful_set.go#processNextWorkItem).
    """

    def __init__(self, verb: str, target: str, reason: str = "InternalError (HTTP 500)") -> None:
        super().__init__(f"{verb} {target}: {reason}")
        self.verb = verb
        self.target = target


#: Verbs that count calls and can be made to fail.
VERBS = ("create-pod", "delete-pod", "update-pod", "update-status", "update-claim")


class EvictionOutcome(msgspec.Struct, frozen=True):
    allowed: bool
    code: int
    message: str


class ApiServer:
    def __init__(self, sim: Simulation, pdbs: list[DisruptionBudget]) -> None:
        self.sim = sim
        self.pdbs = pdbs
        self.calls: dict[str, int] = dict.fromkeys(VERBS, 0)
        self._faults: dict[str, set[int]] = {}
        self._always: set[str] = set()

    # --- fault injection (step harness) -----------------------------------------------
    def inject_fault(self, verb: str, nth: int | None = 1) -> None:
        """Make the `nth` call of `verb` from now fail with ApiError (None: every call until
        `clear_faults`). Verbs: VERBS. Raises ValueError for another verb."""
        if verb not in VERBS:
            raise ValueError(f"unknown verb {verb!r}; expected one of {', '.join(VERBS)}")
        if nth is None:
            self._always.add(verb)
        else:
            self._faults.setdefault(verb, set()).add(self.calls[verb] + nth)

    def clear_faults(self) -> None:
        """Forget every injected fault."""
        self._faults.clear()
        self._always.clear()

    def call(self, verb: str, target: str) -> None:
        """Count one write; raise ApiError when a fault was injected for it."""
        self.calls[verb] += 1
        if verb in self._always or self.calls[verb] in self._faults.get(verb, ()):
            raise ApiError(verb, target)

    # --- pods -------------------------------------------------------------------------
    def create_pod(self, ordinal: int, revision: str, source: str) -> Pod:
        sim = self.sim
        name = sim.wl.pod_name(ordinal)
        self.call("create-pod", name)
        if name in sim.cluster.pods:  # e.g. a released pod still carries the name
            raise ApiError("create-pod", name, f"pods {name!r} already exists (HTTP 409)")
        pod = Pod(
            name=name,
            ordinal=ordinal,
            revision=revision,
            uid=sim.cluster.next_uid(),
            created_s=sim.now,
            broken=sim.is_broken(revision),
            claims=sim.claims_for(ordinal),
        )
        sim.cluster.pods[name] = pod
        sim.record(name, "pod-created", f"{name} created at revision {revision}", source)
        sim.changed()
        sim.scheduler.enqueue(pod)
        return pod

    def delete_pod(self, pod: Pod, source: str, why: str, grace_s: float | None = None) -> None:
        """Graceful DELETE. The object only goes away once the kubelet confirms (B.3.1)."""
        sim = self.sim
        if sim.cluster.pods.get(pod.name) is not pod:
            return
        if pod.terminating:
            return
        self.call("delete-pod", pod.name)
        # strategy.go#CheckGracefulDelete: grace 0 for unscheduled or terminal pods.
        grace = sim.wl.termination_grace_period_s if grace_s is None else grace_s
        if pod.node is None or pod.terminal or (sim.instant_delete):
            sim.record(pod.name, "pod-deletion-requested", f"{pod.name} deleted ({why})", source)
            self.remove_pod(pod, SRC_GRACEFUL, "removed at once (unscheduled, terminal or grace 0)")
            return
        pod.deletion_s = sim.now
        pod.deletion_grace_s = grace
        sim.record(
            pod.name,
            "pod-deletion-requested",
            f"{pod.name} gets deletionTimestamp ({why}); grace {grace:g} s",
            source,
        )
        sim.changed()
        sim.stsc.request_sync()
        sim.kubelet.on_deletion(pod)
        n = sim.cluster.nodes.get(pod.node)
        if n is not None and n.has_taint(TAINT_OUT_OF_SERVICE):
            sim.podgc.kick()

    def remove_pod(self, pod: Pod, source: str, why: str, kind: str = "pod-deleted") -> None:
        sim = self.sim
        if sim.cluster.pods.get(pod.name) is not pod:
            return
        del sim.cluster.pods[pod.name]
        sim.record(pod.name, kind, f"{pod.name} object removed: {why}", source)
        sim.changed()
        sim.adc.on_pod_removed(pod)
        sim.scheduler.retry_pending()
        sim.drain.on_pod_removed(pod.name)
        sim.stsc.request_sync()

    def force_delete(self, pod: Pod, source: str, why: str) -> None:
        self.remove_pod(pod, source, why, kind="pod-force-deleted")

    # --- eviction ---------------------------------------------------------------------
    def evict(self, pod: Pod) -> EvictionOutcome:
        """eviction.go#Create with the PDB rules of k8s-behavior.md B.6.1."""
        sim = self.sim
        if pod.terminal or pod.phase == "Pending" or pod.terminating:
            self.delete_pod(
                pod, SRC_EVICTION, "evicted; Pending/terminal/terminating: no PDB check"
            )
            return EvictionOutcome(True, 201, "evicted")
        if len(self.pdbs) > 1:
            return EvictionOutcome(
                False, 500, "more than one PodDisruptionBudget selects the pod (HTTP 500)"
            )
        if not self.pdbs:
            self.delete_pod(pod, SRC_EVICTION, "evicted through the Eviction API")
            return EvictionOutcome(True, 201, "evicted")
        pdb = self.pdbs[0]
        expected = sim.stsc.replicas
        healthy = sum(
            1
            for p in sim.cluster.pods.values()
            if p.running_and_ready() and not p.terminating and sim.stsc.in_range(p.ordinal)
        )
        counted, desired = pdb.expected_and_desired(expected)
        allowed = pdb.allowed(healthy, expected)
        if not pod.running_and_ready():
            policy_on = sim.vd.gates.get(PDB_UNHEALTHY_POD_EVICTION_POLICY, False)
            if pdb.evicts_unready(healthy, expected, policy_on):
                always = policy_on and pdb.unhealthy_policy == "AlwaysAllow"
                how = "AlwaysAllow" if always else "healthy"
                self.delete_pod(pod, SRC_EVICTION, f"evicted (unhealthy, PDB {pdb.name} {how})")
                return EvictionOutcome(True, 201, "evicted")
        if allowed <= 0:
            return EvictionOutcome(
                False,
                429,
                f"Cannot evict pod as it would violate the pod's disruption budget {pdb.name} "
                f"(currentHealthy {healthy}, desiredHealthy {desired}, disruptionsAllowed 0"
                + (
                    ", expectedPods 0: it sets neither minAvailable nor maxUnavailable)"
                    if counted <= 0
                    else ")"
                ),
            )
        self.delete_pod(pod, SRC_EVICTION, f"evicted through the Eviction API (PDB {pdb.name})")
        return EvictionOutcome(True, 201, "evicted")
