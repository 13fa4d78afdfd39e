"""Garbage collector, for the objects a StatefulSet owns: its pods and claims.

pkg/controller/garbagecollector/garbagecollector.go#attemptToDeleteItem and
#classifyReferences: an object whose owner references all point at owners that do not exist
(looked up by UID) is deleted (background propagation); an object with at least one existing
owner lives on, its dangling references removed. A finalizer keeps a deleted object, with its
deletionTimestamp, until the finalizer is removed.

The simulator runs the claim pass when the StatefulSet controller syncs (the claim of a removed
pod goes at the next sync) and the pod pass when the set is deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cluster import SET_UID, OwnerRef, Volume

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_GC = "pkg/controller/garbagecollector/garbagecollector.go#attemptToDeleteItem"
# The event text and source of a claim removed after its pod, as the simulator has always
# reported it (KEP-1847 whenScaled: Delete works through the pod's owner reference).
SRC_PVC = "pkg/controller/statefulset/stateful_pod_control.go#PersistentVolumeClaimRetentionPolicy"


class GarbageCollector:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.enabled = True

    def owner_exists(self, ref: OwnerRef) -> bool:
        """Whether the owner a reference names exists with that UID (the set, one of its pods,
        or an object listed in `Cluster.others`)."""
        sim = self.sim
        if ref.kind == "StatefulSet":
            return ref.name == sim.wl.name and ref.uid == SET_UID and sim.stsc.exists
        if ref.kind == "Pod":
            p = sim.cluster.pods.get(ref.name)
            return p is not None and p.uid_str == ref.uid
        return (ref.kind, ref.name, ref.uid) in sim.cluster.others

    def collect_claims(self) -> None:
        """Delete every claim whose owners are all gone; drop dangling references of the rest.
        Records `pvc-deleted` per claim. No-op when disabled (upstream unit harness)."""
        if not self.enabled:
            return
        sim = self.sim
        for vol in sorted(sim.cluster.volumes.values(), key=lambda v: v.sort_key):
            if vol.deleted or vol.deletion_requested or not vol.owner_refs:
                continue
            solid = [r for r in vol.owner_refs if self.owner_exists(r)]
            if solid:
                if len(solid) != len(vol.owner_refs):
                    vol.owner_refs = solid  # dangling references removed
                continue
            if all(r.kind == "Pod" for r in vol.owner_refs):
                why = f"PVC {vol.claim} deleted (whenScaled: Delete) after its pod was removed"
                src = SRC_PVC
            else:
                owners = ", ".join(f"{r.kind} {r.name}" for r in vol.owner_refs)
                why = f"PVC {vol.claim} deleted: its owner ({owners}) no longer exists"
                src = SRC_GC
            self.delete_claim(vol, why, src)

    def delete_claim(self, vol: Volume, why: str, source: str) -> None:
        """DELETE a claim: gone at once, or kept with a deletionTimestamp by a finalizer."""
        if vol.finalizers:
            vol.deletion_requested = True
        else:
            vol.deleted = True
        self.sim.record(None, "pvc-deleted", why, source)

    def collect_pods(self) -> None:
        """Pods whose controller, the set, is gone are deleted."""
        sim = self.sim
        if not self.enabled or sim.stsc.exists:
            return
        for pod in sorted(sim.cluster.pods.values(), key=lambda p: p.ordinal):
            if pod.controller_uid == SET_UID and not pod.terminating:
                sim.api.delete_pod(pod, SRC_GC, "its StatefulSet was deleted")
