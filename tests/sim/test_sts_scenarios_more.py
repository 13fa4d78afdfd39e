"""More S-scenarios of sts-controller-scenarios.md (S01-S04, S08, S14-S15, S17-S20, S22,
S26-S28, S31-S33, S35, S37, S39-S40, S42-S43, S46, S54, S56), invariants checked after every
pass. The rest are in test_sts_scenarios_rest.py and test_sts_events.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from ssrisk.embedded_sim import ClusterProfile, simulate
from ssrisk.embedded_sim.scenarios import run
from ssrisk.embedded_sim.simulation import Simulation
from ssrisk.embedded_sim.workload import resolve_max_unavailable

from .harness import StepHarness
from .simdata import load
from .stsinv import harness, random_run
from .test_sts_scenarios import POLICIES, sts

RETENTION = [
    {"whenScaled": "Retain", "whenDeleted": "Retain"},
    {"whenScaled": "Delete", "whenDeleted": "Retain"},
    {"whenScaled": "Retain", "whenDeleted": "Delete"},
    {"whenScaled": "Delete", "whenDeleted": "Delete"},
    None,
]
SEEDS = [1, 2, 3]


def _sts(replicas: int, policy: str, retention: dict[str, str] | None, **spec: Any) -> Any:
    s = sts(replicas, policy, **spec)
    if retention is not None:
        s["spec"]["persistentVolumeClaimRetentionPolicy"] = retention
    return s


def _scale_up(h: StepHarness, replicas: int, seed: int) -> None:
    h.scale(replicas)
    random_run(h, seed)
    assert h.ordinals() == list(range(replicas))
    assert h.ready_replicas() == replicas
    assert all(p.revision == h.stsc.update_revision for p in h.pods().values())


# --- 1. Ordering and scaling -------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("retention", RETENTION)
@pytest.mark.parametrize("policy", POLICIES)
def test_S01_create_all_pods(policy: str, retention: dict[str, str] | None, seed: int) -> None:
    h = harness(_sts(3, policy, retention))
    random_run(h, seed)
    assert h.ordinals() == [0, 1, 2] and h.ready_replicas() == 3
    # The pod-index label (PodIndexLabel) is not modelled; the ordinal in the name is.
    assert [p.name for p in h.pods().values()] == ["ss-0", "ss-1", "ss-2"]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("retention", RETENTION)
@pytest.mark.parametrize("policy", POLICIES)
def test_S02_scale_up_3_to_4(policy: str, retention: dict[str, str] | None, seed: int) -> None:
    h = harness(_sts(3, policy, retention))
    random_run(h, seed)
    _scale_up(h, 4, seed)


def _scale_down_helper(h: StepHarness) -> None:
    """Upstream scaleDownStatefulSetControl: sync; re-plant the highest pod terminating;
    sync; remove it; sync."""
    for _ in range(50):
        if len(h.pods()) <= h.stsc.replicas:
            return
        h.sync()
        pods = h.pods()
        if pods:
            top = max(pods)
            if top not in h.stsc.ordinals():
                h.plant_terminating(top)
                h.sync()
                h.remove(top)
                h.sync()
    raise AssertionError("scale-down did not finish")


@pytest.mark.parametrize("retention", RETENTION)
@pytest.mark.parametrize("policy", POLICIES)
def test_S03_scale_down_3_to_0(policy: str, retention: dict[str, str] | None) -> None:
    h = harness(_sts(3, policy, retention))
    random_run(h, 1)
    h.scale(0)
    _scale_down_helper(h)
    assert h.ordinals() == [] and h.ready_replicas() == 0


@pytest.mark.parametrize(
    ("start", "target", "min_batch"), [(3, 30, 2), (10, 1, 2), (501, 0, 10), (0, 1000, 20)]
)
def test_S04_parallel_large_batches(start: int, target: int, min_batch: int) -> None:
    h = harness(sts(start, "Parallel"))
    h.sync()
    assert len(h.pods()) == start
    h.scale(target)
    before = len(h.pods())
    created0, deleted0 = h.stsc.creates, h.stsc.deletes
    for _ in range(2):
        h.sync()
        for o, p in h.pods().items():
            if p.phase != "Pending":
                h.set_phase(o, "Pending")
    assert len(h.pods()) == target
    moved = (h.stsc.creates - created0) + (h.stsc.deletes - deleted0)
    assert moved == abs(target - before) and moved >= min_batch


def test_S08_terminating_pods_outside_range_left_alone() -> None:
    h = harness(sts(3), order=False)
    h.bring_up()
    h.add_pod(3, terminating=True)
    h.add_pod(4, terminating=True)
    deletes = h.stsc.deletes
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4] and h.stsc.deletes == deletes
    h.remove(3)
    h.remove(4)
    h.scale(0)
    for _ in range(5):
        h.sync()
    assert h.ordinals() == []


# --- 2. Failure and recreation -----------------------------------------------------------


def test_S14_failed_pod_recreated_until_it_runs() -> None:
    h = harness(sts(1))
    h.sync()
    first = h.pod(0).uid
    uids = {first}
    for _ in range(3):  # the kubelet rejects it again and again
        h.set_phase(0, "Failed")
        h.sync()
        assert h.ordinals() == []
        h.sync()
        uids.add(h.pod(0).uid)
    h.set_ready(0)
    h.sync()
    assert h.pod(0).running_and_ready() and h.pod(0).uid != first and len(uids) == 4
    assert h.removed_order() == ["ss-0"] * 3


@pytest.mark.parametrize("retention", RETENTION)
@pytest.mark.parametrize("policy", POLICIES)
def test_S15_missing_pvc_of_pending_pod_recreated(
    policy: str, retention: dict[str, str] | None
) -> None:
    h = harness(_sts(3, policy, retention), order=False)
    h.sync()
    h.delete_claims(0)
    assert "datadir-ss-0" not in h.live_claims()
    h.sync()
    assert "datadir-ss-0" in h.live_claims()
    ev = [e for e in h.sim.timeline.events if e.kind == "pvc-created"]
    assert ev and ev[0].source.endswith("#createMissingPersistentVolumeClaims")


def _partition_observer(
    node: str, name: str, until_s: float, seen: dict[str, Any]
) -> Callable[[Simulation], None]:
    def obs(sim: Simulation) -> None:
        if sim.now >= until_s:
            return
        pods = [p for p in sim.cluster.pods.values() if p.name == name]
        assert len(pods) == 1, f"{name} left the API or got a twin during the partition"
        assert pods[0].node == node and pods[0].phase in ("Running", "Pending")
        seen["checks"] = seen.get("checks", 0) + 1

    return obs


def test_S17_no_force_deletion_during_partition() -> None:
    # 10 minutes partitioned, then the partition heals (node returns).
    prof = ClusterProfile(node_returns_after_s=600.0)
    i = load("web-ordered.yaml")
    seen: dict[str, Any] = {}
    res, sim = run(
        i.sts,
        "node-loss",
        kube_version="1.34",
        profile=prof,
        observers=[_partition_observer("node-a1", "web-0", 600.0, seen)],
    )
    assert seen["checks"] > 5
    assert res.events("pod-force-deleted") == []
    assert res.first("pod-deletion-requested", "web-0") is not None  # Terminating, not gone
    assert all(e.t_s > 600 for e in res.events("pod-created"))
    assert res.recovered and sim.cluster.nodes["node-a1"].ready == "True"
    assert all(p.running_and_ready() for p in sim.cluster.pods.values())
    assert len(sim.cluster.pods) == 3


@pytest.mark.parametrize(
    ("name", "pod", "evicted_at"),
    [("toleration-60.yaml", "db-0", 60), ("pg-single.yaml", "pg-0", 300)],
)
def test_S18_unreachable_pods_not_ready_then_evicted(name: str, pod: str, evicted_at: int) -> None:
    prof = ClusterProfile(node_returns_after_s=1200.0)
    res = simulate(load(name).sts, "node-loss", kube_version="1.34", profile=prof)
    nr = res.first("pod-not-ready", pod)
    taint = res.first("taint-added")
    assert nr is not None and taint is not None and "unreachable" in taint.event
    ev = res.first("pod-deletion-requested", pod)
    assert ev is not None and ev.t_s <= taint.t_s + evicted_at + 20
    ready = res.first("node-ready")
    assert ready is not None and ready.t_s > 1200


def test_S18_forever_toleration_never_evicted() -> None:
    prof = ClusterProfile(node_returns_after_s=1200.0)
    res = simulate(
        load("toleration-forever.yaml").sts, "node-loss", kube_version="1.34", profile=prof
    )
    assert res.first("pod-not-ready", "db-0") is not None
    assert res.events("pod-deletion-requested") == []
    assert res.first("node-ready") is not None and res.recovered


def test_S19_pods_back_after_all_nodes_restart() -> None:
    sim = Simulation(load("web-ordered.yaml").sts, kube_version="1.34")
    sim.steady_state()
    nodes = list(sim.cluster.nodes.values())
    for n in nodes:
        sim.loop.at(0.0, lambda n=n: sim.lose_node(n, "restarts", "test"), "fault")
        sim.loop.at(300.0, lambda n=n: sim.return_node(n, True, "test"), "return")
    sim.loop.run()
    sim._observe()
    pods = sim.cluster.pods.values()
    assert len(pods) == 3 and all(p.running_and_ready() for p in pods)
    # Every zone fully disrupted: master disruption mode, no NoExecute taint, no eviction.
    assert not any(e.kind == "pod-deletion-requested" for e in sim.timeline.events)
    assert sim.recovered_at is not None and 300 < sim.recovered_at < 330


def test_S20_identity_and_storage_across_restart() -> None:
    h = harness(sts(3))
    h.bring_up()
    vols = {c: id(v) for c, v in h.sim.cluster.volumes.items()}
    names = [p.name for p in h.pods().values()]
    h.scale(0)
    for _ in range(5):
        h.sync()
    assert h.ordinals() == []
    h.scale(3)
    h.bring_up()
    assert [p.name for p in h.pods().values()] == names
    assert {c: id(v) for c, v in h.sim.cluster.volumes.items()} == vols  # same claims reused


# --- 3. Rolling update and partition -----------------------------------------------------

S22_CASES = [(3, 3), (3, 5), (5, 3)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("start", "to"), S22_CASES)
@pytest.mark.parametrize("policy", POLICIES)
def test_S22_rolling_update_with_scale(policy: str, start: int, to: int, seed: int) -> None:
    h = harness(sts(start, policy), order=False)
    random_run(h, seed)
    new = h.new_revision()
    h.scale(to)
    random_run(h, seed)
    assert h.ordinals() == list(range(to))
    assert all(p.revision == new for p in h.pods().values())
    assert h.stsc.current_revision == new


def _partition(h: StepHarness, value: int) -> None:
    h.stsc.partition = value
    for _ in range(40):
        h.sync()
        for o, p in h.pods().items():
            if not p.running_and_ready():
                h.set_ready(o, since_s=h.sim.now - 3600)


def test_S26_canary_and_phased_rollout() -> None:
    spec = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 3}}}
    h = harness(sts(3, **spec), order=False)
    h.bring_up()
    new = h.new_revision()
    _partition(h, 3)
    assert all(p.revision == "rev-1" for p in h.pods().values())  # nothing changes
    _partition(h, 2)
    assert [h.pod(o).revision for o in range(3)] == ["rev-1", "rev-1", new]
    h.remove(0)
    h.remove(2)
    _partition(h, 2)
    assert [h.pod(o).revision for o in range(3)] == ["rev-1", "rev-1", new]
    _partition(h, 1)
    assert [h.pod(o).revision for o in range(3)] == ["rev-1", new, new]
    _partition(h, 0)
    assert all(p.revision == new for p in h.pods().values())
    assert h.stsc.current_revision == new


def test_S27_partition_1_slow_terminating_pod_0() -> None:
    spec = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}}
    h = harness(sts(3, **spec), order=False)
    h.bring_up()
    new = h.new_revision()
    _partition(h, 1)
    assert [h.pod(o).revision for o in range(3)] == ["rev-1", new, new]
    h.plant_terminating(0)  # a finalizer keeps it
    h.set_ready(0, False)
    h.sync()
    assert h.ready_replicas() == 2 and h.ordinals() == [0, 1, 2]
    h.remove(0)  # finalizer removed
    _partition(h, 1)
    assert h.ready_replicas() == 3
    assert [h.pod(o).revision for o in range(3)] == ["rev-1", new, new]


@pytest.mark.parametrize(("start", "to"), S22_CASES)
@pytest.mark.parametrize("policy", POLICIES)
def test_S28_rollback_to_oldest_revision(policy: str, start: int, to: int) -> None:
    h = harness(sts(start, policy), order=False)
    random_run(h, 1)
    h.new_revision()
    h.scale(to)
    random_run(h, 1)
    h.stsc.update_revision = "rev-1"  # apply the oldest ControllerRevision again
    random_run(h, 2)
    assert all(p.revision == "rev-1" for p in h.pods().values())
    assert h.stsc.current_revision == "rev-1"


# --- 4. OnDelete -------------------------------------------------------------------------


@pytest.mark.parametrize(("start", "to"), S22_CASES)
@pytest.mark.parametrize("policy", POLICIES)
def test_S31_ondelete_changes_only_recreated_pods(policy: str, start: int, to: int) -> None:
    h = harness(sts(start, policy, updateStrategy={"type": "OnDelete"}), order=False)
    random_run(h, 1)
    new = h.new_revision()
    h.scale(to)
    random_run(h, 1)
    revs = {o: p.revision for o, p in h.pods().items()}
    assert all(revs[o] == "rev-1" for o in range(min(start, to)))
    assert all(revs[o] == new for o in range(start, to))
    h.scale(0)
    for _ in range(10):
        h.sync()
    assert h.ordinals() == []
    h.scale(to)
    random_run(h, 2)
    assert all(p.revision == new for p in h.pods().values())


def test_S32_legacy_ondelete_replacement() -> None:
    h = harness(sts(3, updateStrategy={"type": "OnDelete"}), order=False)
    h.bring_up()
    for o in range(3):
        h.remove(o)
    random_run(h, 1)
    assert all(p.revision == "rev-1" for p in h.pods().values())
    new = h.new_revision()
    assert h.stsc.update_revision != h.stsc.current_revision
    for o in range(3):
        h.remove(o)
    random_run(h, 1)
    assert all(p.revision == new and p.running_and_ready() for p in h.pods().values())


def test_S33_ondelete_ignores_min_ready_seconds() -> None:
    h = harness(sts(2, minReadySeconds=30, updateStrategy={"type": "OnDelete"}), order=False)
    h.bring_up()
    for o in range(2):
        h.set_ready(o, since_s=h.sim.now - 10)
    new = h.new_revision()
    h.sync()
    assert h.available_replicas() == 0 and h.stsc.update_revision == new
    assert h.ordinals() == [0, 1]  # OnDelete deletes nothing


# --- 5. maxUnavailable -------------------------------------------------------------------


def test_S35_max_unavailable_2_partition_3_parallel() -> None:
    spec = {
        "updateStrategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"partition": 3, "maxUnavailable": 2},
        }
    }
    h = harness(
        sts(6, "Parallel", **spec), feature_gates={"MaxUnavailableStatefulSet": True}, order=False
    )
    h.bring_up()
    h.new_revision()
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3]
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4, 5]
    h.set_ready(4, since_s=h.sim.now - 3600)
    h.set_running(5)
    h.sync()
    assert h.ordinals() == [0, 1, 2, 4, 5]
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4, 5]
    for o in (3, 5):
        h.set_ready(o, since_s=h.sim.now - 3600)
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4, 5]
    assert [h.pod(o).revision for o in range(6)][:3] == ["rev-1"] * 3


@pytest.mark.parametrize(
    ("value", "replicas", "want"),
    [
        (None, 10, 1),
        (3, 10, 3),
        (3, 0, 3),
        (0, 0, 1),
        ("10%", 25, 2),
        ("100%", 5, 5),
        ("50%", 5, 2),
        ("10%", 5, 1),
        ("1%", 0, 1),
        ("0%", 0, 1),
    ],
)
def test_S37_max_unavailable_resolution(value: Any, replicas: int, want: int) -> None:
    spec: dict[str, Any] = {"type": "RollingUpdate", "rollingUpdate": {}}
    if value is not None:
        spec["rollingUpdate"]["maxUnavailable"] = value
    h = StepHarness(sts(replicas, updateStrategy=spec), kube_version="1.37")
    assert resolve_max_unavailable(h.sim.wl.max_unavailable_raw, replicas) == want


@pytest.mark.parametrize(
    ("replicas", "mu", "policy", "unavailable", "gauge"),
    [
        (5, 2, "OrderedReady", 1, 2),
        (10, "20%", "Parallel", 3, 2),
        (6, 3, "OrderedReady", 3, 3),
        (4, 1, "Parallel", 0, 1),
        (8, "25%", "OrderedReady", 1, 2),
        (5, "80%", "Parallel", 4, 4),
        (2, 1, "OrderedReady", 1, 1),
        (1, 1, "Parallel", 1, 1),
    ],
)
def test_S37_unavailable_count_even_above_limit(
    replicas: int, mu: Any, policy: str, unavailable: int, gauge: int
) -> None:
    spec = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": mu}}
    h = harness(sts(replicas, policy, updateStrategy=spec), kube_version="1.37", order=False)
    h.bring_up()
    for o in range(unavailable):
        if policy == "OrderedReady":
            h.set_ready(o, False)  # Running but NotReady
        else:
            h.plant_terminating(o)
    assert resolve_max_unavailable(h.sim.wl.max_unavailable_raw, replicas) == gauge
    assert replicas - h.available_replicas() == unavailable


# --- 6. minReadySeconds and availability -------------------------------------------------


@pytest.mark.parametrize(
    ("replicas", "min_ready", "ready_for_s", "want"),
    [(1, 3600, 7200, 1), (1, 3600, 1800, 0), (2, 0, 0, 2)],
)
def test_S39_available_needs_min_ready_seconds(
    replicas: int, min_ready: int, ready_for_s: float, want: int
) -> None:
    h = harness(sts(replicas, minReadySeconds=min_ready))
    h.bring_up()
    for o in h.ordinals():
        h.set_ready(o, since_s=h.sim.now - ready_for_s)
    assert h.available_replicas() == want


def test_S40_ordered_rolling_update_waits_for_availability() -> None:
    h = harness(sts(2, minReadySeconds=30), order=False)
    h.bring_up()
    for o in range(2):
        h.set_ready(o, since_s=h.sim.now - 10)
    h.new_revision()
    h.sync()
    assert h.available_replicas() == 0 and h.ordinals() == [0, 1]
    for o in range(2):
        h.set_ready(o, since_s=h.sim.now - 60)
    assert h.available_replicas() == 2
    h.sync()
    assert h.ordinals() == [0]  # the update now proceeds from the top


def test_S42_partitioned_update_waits_for_availability() -> None:
    spec = {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}}
    h = harness(sts(4, minReadySeconds=30, **spec), order=False)
    h.bring_up()
    for o in range(4):
        h.set_ready(o, since_s=h.sim.now - 10)
    h.new_revision()
    h.sync()
    assert h.available_replicas() == 0 and h.ordinals() == [0, 1, 2, 3]


def test_S43_raising_min_ready_seconds_drops_availability() -> None:
    h = harness(sts(2, minReadySeconds=30))
    h.bring_up()
    for o in range(2):
        h.set_ready(o, since_s=h.sim.now - 60)
    assert h.available_replicas() == 2
    h.sim.wl.min_ready_seconds = 3600.0
    assert h.available_replicas() == 0
    h.sim.wl.min_ready_seconds = 0.0
    assert h.available_replicas() == 2


# --- 7. PVC retention --------------------------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
def test_S46_when_scaled_delete_removes_claims(policy: str) -> None:
    h = harness(_sts(3, policy, {"whenScaled": "Delete", "whenDeleted": "Retain"}), order=False)
    h.bring_up()
    assert h.live_claims() == ["datadir-ss-0", "datadir-ss-1", "datadir-ss-2"]
    h.scale(1)
    for _ in range(6):
        h.sync()
    assert h.ordinals() == [0] and h.live_claims() == ["datadir-ss-0"]
    # before 1.27 the gate is off by default: claims are kept
    h26 = harness(
        _sts(3, policy, {"whenScaled": "Delete", "whenDeleted": "Retain"}),
        kube_version="1.26",
        order=False,
    )
    h26.bring_up()
    h26.scale(1)
    for _ in range(6):
        h26.sync()
    assert len(h26.live_claims()) == 3


# --- 8. Start ordinal --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "replicas", "want"),
    [
        (None, 2, 3, [2, 3, 4]),
        (2, 4, 2, [4, 5]),
        (3, 2, 2, [2, 3]),
        (3, None, 2, [0, 1]),
    ],
)
def test_S54_changing_start_ordinal(
    before: int | None, after: int | None, replicas: int, want: list[int]
) -> None:
    spec: dict[str, Any] = {} if before is None else {"ordinals": {"start": before}}
    h = harness(sts(2, **spec), order=False)
    h.bring_up()
    first = [o for o in h.ordinals()]
    assert first == list(range(before or 0, (before or 0) + 2))
    kept = {o: h.pod(o).uid for o in first if o in want}
    h.sim.wl.ordinals_start = after or 0
    h.scale(replicas)
    h.bring_up()
    assert h.ordinals() == want and h.ready_replicas() == replicas
    assert all(h.pod(o).uid == uid for o, uid in kept.items())  # a name in both ranges stays


# --- 9. Other ----------------------------------------------------------------------------


def test_S56_identity_and_running_ready_helpers() -> None:
    h = harness(sts(2))
    h.sync()
    p = h.pod(0)
    assert p.name == "ss-0" and p.claims == ("datadir-ss-0",)
    assert not p.running_and_ready()
    h.set_running(0)
    assert not p.running_and_ready()  # Running without Ready
    h.set_ready(0)
    assert p.running_and_ready()
    h.set_phase(0, "Pending")
    assert not p.running_and_ready()  # Ready without Running
