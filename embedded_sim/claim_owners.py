"""Owner references of StatefulSet claims per persistentVolumeClaimRetentionPolicy (KEP-1847).

A line-by-line model of pkg/controller/statefulset/stateful_set_utils.go (#matchesRef,
#hasUnexpectedController, #hasNonControllerOwner, #isClaimOwnerUpToDate,
#updateClaimOwnerRefForSetAndPod, #hasOwnerRef, #hasStaleOwnerRef, #addControllerRef) and
stateful_pod_control.go#PodClaimIsStale. Retention table (docs sts-controller-scenarios.md S44):

    Retain/Retain: no reference        Retain/Delete (whenScaled/whenDeleted): the set
    Delete/Retain: the pod, once the pod is condemned (ordinal out of range)
    Delete/Delete: the set while in range, the pod (and not the set) once condemned

A reference is identified by kind and name (#matchesRef); its UID tells whether it is stale.
"""

from __future__ import annotations

import msgspec

from .cluster import OwnerRef, Volume


class Obj(msgspec.Struct, frozen=True):
    """The identity of a set or pod as an owner: kind, name and UID ("" = not created yet)."""

    kind: str
    name: str
    uid: str

    def ref(self) -> OwnerRef:
        """A controller reference to this object."""
        # metav1.NewControllerRef: controller and blockOwnerDeletion true.
        return OwnerRef(self.kind, self.name, self.uid, controller=True)


class Policy(msgspec.Struct, frozen=True):
    when_scaled: str = "Retain"
    when_deleted: str = "Retain"

    @property
    def retain_all(self) -> bool:
        """Neither field is Delete (no claim references are managed)."""
        return self.when_scaled != "Delete" and self.when_deleted != "Delete"


def matches_ref(ref: OwnerRef, obj: Obj) -> bool:
    """#matchesRef: same kind (and API group) and name; the UID is not compared."""
    return ref.kind == obj.kind and ref.name == obj.name


def has_owner_ref(refs: list[OwnerRef], owner: Obj) -> bool:
    """#hasOwnerRef: a reference with the owner's UID (controller or not)."""
    return any(r.uid == owner.uid for r in refs)


def has_stale_owner_ref(refs: list[OwnerRef], obj: Obj) -> bool:
    """#hasStaleOwnerRef: the first reference matching kind and name carries another UID."""
    for r in refs:
        if matches_ref(r, obj):
            return r.uid != obj.uid
    return False


def has_unexpected_controller(refs: list[OwnerRef], s: Obj, pod: Obj, policy: Policy) -> bool:
    """#hasUnexpectedController: with any Delete policy, a controller that is neither the set nor
    the pod, or the set or pod named right with an old UID."""
    if policy.retain_all:
        return False
    for r in refs:
        if matches_ref(r, s):
            if r.uid != s.uid:
                return True
            continue
        if matches_ref(r, pod):
            if r.uid != pod.uid:
                return True
            continue
        if r.controller:
            return True
    return False


def has_non_controller_owner(refs: list[OwnerRef], s: Obj, pod: Obj) -> bool:
    """#hasNonControllerOwner: the set or pod is an owner without the controller flag."""
    return any(r.uid in (s.uid, pod.uid) and not r.controller for r in refs)


def is_claim_owner_up_to_date(
    refs: list[OwnerRef], s: Obj, pod: Obj, policy: Policy, condemned: bool
) -> bool:
    """#isClaimOwnerUpToDate. `condemned` = !podInOrdinalRange(pod, set)."""
    if has_stale_owner_ref(refs, s) or has_stale_owner_ref(refs, pod):
        return True  # managed by an earlier incarnation: not touched
    if has_unexpected_controller(refs, s, pod, policy):
        return not (has_owner_ref(refs, s) or has_owner_ref(refs, pod))
    if has_non_controller_owner(refs, s, pod):
        return False
    want_set, want_pod = wanted_refs(policy, condemned)
    return has_owner_ref(refs, s) == want_set and has_owner_ref(refs, pod) == want_pod


def wanted_refs(policy: Policy, condemned: bool) -> tuple[bool, bool]:
    """(set reference wanted, pod reference wanted) for a policy; unknown values act as
    Retain (#isClaimOwnerUpToDate "Unknown policy, treating as Retain")."""
    ws, wd = policy.when_scaled, policy.when_deleted
    known = ws in ("Retain", "Delete") and wd in ("Retain", "Delete")
    if not known:
        return False, False
    if ws == "Retain":
        return wd == "Delete", False
    if wd == "Retain":
        return False, condemned
    return not condemned, condemned


def update_claim_owner_refs(
    refs: list[OwnerRef], s: Obj, pod: Obj, policy: Policy, condemned: bool
) -> list[OwnerRef]:
    """#updateClaimOwnerRefForSetAndPod: scrub references to the set and pod (by kind and name),
    then add controller references as the policy wants, unless another controller rules."""
    unexpected = has_unexpected_controller(refs, s, pod, policy)
    out = [r for r in refs if not (matches_ref(r, s) or matches_ref(r, pod))]
    if unexpected:
        return out
    want_set, want_pod = wanted_refs(policy, condemned)
    for wanted, owner in ((want_pod, pod), (want_set, s)):
        if wanted and not any(r.uid == owner.uid for r in out):  # #addControllerRef
            out.append(owner.ref())
    return out


def claim_is_stale(vols: list[Volume | None], pod: Obj, policy: Policy) -> bool:
    """stateful_pod_control.go#PodClaimIsStale: with whenScaled Delete, an existing claim whose
    reference to the pod's name carries another UID (any UID while the pod has none yet)
    blocks the pod's creation. Missing claims and claims without references are not stale."""
    if policy.when_scaled == "Retain":
        return False
    return any(v is not None and has_stale_owner_ref(v.owner_refs, pod) for v in vols)
