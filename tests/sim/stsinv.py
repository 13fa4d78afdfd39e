"""The invariants upstream checks after every StatefulSet controller pass.

sts-controller-scenarios.md, "Invariants upstream checks after every unit sync", from
pkg/controller/statefulset/stateful_set_control_test.go#assertMonotonicInvariants and
#assertUpdateInvariants; the claim owner references (second half of INV-CLAIMS) follow
#checkClaimInvarients and the table of S44.
"""

from __future__ import annotations

import random
from typing import Any

from ssrisk.embedded_sim.claim_owners import Obj, Policy, has_unexpected_controller, wanted_refs
from ssrisk.embedded_sim.cluster import OwnerRef

from .harness import StepHarness


def check_identity(h: StepHarness) -> None:
    """INV-IDENTITY: name `<set>-<ordinal>`, claims `<template>-<set>-<ordinal>`."""
    wl = h.sim.wl
    for o, p in h.pods().items():
        assert p.name == f"{wl.name}-{o}", p.name
        want = tuple(f"{ct.name}-{wl.name}-{o}" for ct in wl.claim_templates)
        assert p.claims == want, (p.name, p.claims)


def check_claims(h: StepHarness) -> None:
    """INV-CLAIMS (existence half): with whenScaled Retain every pod's claims exist."""
    if h.sim.wl.when_scaled != "Retain":
        return
    vols = h.sim.cluster.volumes
    for p in h.pods().values():
        for c in p.claims:
            assert c in vols and not vols[c].deleted, f"claim {c} of {p.name} missing"


def expected_refs(h: StepHarness, ordinal: int) -> set[OwnerRef]:
    """The set and pod references S44's table wants on a claim of `ordinal` (in range or
    condemned), as controller references."""
    pod = h.sim.cluster.pods[h.sim.wl.pod_name(ordinal)]
    wl = h.sim.wl
    want_set, want_pod = wanted_refs(
        Policy(wl.when_scaled, wl.when_deleted), not h.stsc.in_range(ordinal)
    )
    out: set[OwnerRef] = set()
    if want_set:
        out.add(h.stsc.set_obj().ref())
    if want_pod:
        out.add(Obj("Pod", pod.name, pod.uid_str).ref())
    return out


def own_refs(h: StepHarness, ordinal: int) -> set[OwnerRef]:
    """References of the claim of `ordinal` to the set or one of its pods."""
    wl = h.sim.wl
    refs = h.claim(ordinal).owner_refs
    return {r for r in refs if (r.kind, r.name) == ("StatefulSet", wl.name) or r.kind == "Pod"}


def check_claim_owners(h: StepHarness) -> None:
    """INV-CLAIMS (owner half, #checkClaimInvarients): once a pod, in range or condemned, is
    Running+Ready its claim carries the references of S44's table (StatefulSetAutoDeletePVC
    on). A claim another object controls is left alone by the controller and skipped here."""
    if not h.sim.vd.gates.get("StatefulSetAutoDeletePVC", False) or not h.sim.wl.claim_templates:
        return
    for o, p in h.pods().items():
        if not p.running_and_ready():
            continue
        vol = h.claim(o)
        pod = Obj("Pod", p.name, p.uid_str)
        wl = h.sim.wl
        pol = Policy(wl.when_scaled, wl.when_deleted)
        if vol.deleted or has_unexpected_controller(vol.owner_refs, h.stsc.set_obj(), pod, pol):
            continue  # another controller rules this claim: left alone (S44)
        assert own_refs(h, o) == expected_refs(h, o), (p.name, h.claim(o).owner_refs)


def check_order(h: StepHarness) -> None:
    """INV-ORDER (OrderedReady): contiguous ordinals from the start ordinal, and no pod
    Running+Ready while the pod just below it is not."""
    if h.sim.wl.parallel:
        return
    pods = sorted(h.pods().values(), key=lambda p: p.ordinal)
    start = h.stsc.start
    for i, p in enumerate(pods):
        assert p.ordinal == start + i, f"{p.name} deployed in the wrong order"
        if i > 0 and p.running_and_ready():
            assert pods[i - 1].running_and_ready(), (
                f"successor {p.name} is Running and Ready while {pods[i - 1].name} is not"
            )


def check_update(h: StepHarness) -> None:
    """INV-UPDATE (RollingUpdate): the lowest currentReplicas pods carry the current
    revision, the highest updatedReplicas pods the update revision."""
    if h.sim.wl.update_strategy != "RollingUpdate":
        return
    st = h.stsc
    pods = sorted(h.pods().values(), key=lambda p: p.ordinal)
    revs = [p.revision for p in pods]
    cur = revs.count(st.current_revision)
    upd = revs.count(st.update_revision)
    assert all(r == st.current_revision for r in revs[:cur]), revs
    assert all(r == st.update_revision for r in revs[len(revs) - upd :]), revs


def harness(
    spec: dict[str, Any],
    *,
    order: bool = True,
    update: bool = True,
    kube_version: str = "1.34",
    feature_gates: dict[str, bool] | None = None,
    gc: bool = True,
) -> StepHarness:
    """A StepHarness with the invariants checked after every sync.

    INV-IDENTITY and INV-CLAIMS always; INV-ORDER and INV-UPDATE unless the scenario itself
    breaks them by hand (upstream checks those only in its scale and update helpers).
    """
    h = StepHarness(spec, kube_version=kube_version, feature_gates=feature_gates, gc=gc)
    h.after_sync += [check_identity, check_claims, check_claim_owners]
    if order:
        h.after_sync.append(check_order)
    if update:
        h.after_sync.append(check_update)
    return h


def random_run(h: StepHarness, seed: int, max_rounds: int = 2000) -> int:
    """Upstream's randomised helper: pick a random pod, move it one step (Pending ->
    Running -> Ready), run one sync; until every in-range pod exists, is Ready and carries
    the update revision, and nothing out of range is left. Returns the rounds used."""
    rng = random.Random(seed)
    st = h.stsc
    for rounds in range(1, max_rounds + 1):
        h.sync()
        pods = h.pods()
        want = set(st.ordinals())
        lo = st.start + (st.partition if h.sim.wl.update_strategy == "RollingUpdate" else 0)
        if set(pods) == want and all(
            p.running_and_ready()
            and (
                p.revision == st.update_revision or h.sim.wl.update_strategy == "OnDelete" or o < lo
            )
            for o, p in pods.items()
        ):
            h.sync()
            return rounds
        movable = [o for o, p in sorted(pods.items()) if not p.running_and_ready()]
        if movable:
            o = rng.choice(movable)
            p = pods[o]
            if p.phase == "Pending":
                h.set_running(o)
            else:
                h.set_ready(o, since_s=h.sim.now - 3600.0)
    raise AssertionError("the set did not converge")
