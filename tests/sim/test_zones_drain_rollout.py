"""Zone loss, drain, rollouts and scale-down."""

from __future__ import annotations

import pytest
from ssrisk.embedded_sim import ClusterProfile, NodeSpec, simulate

from .simdata import load


def test_zone_loss_zonal_immediate_not_recovered() -> None:
    i = load("zonal-immediate.yaml")
    r = simulate(i.sts, "zone-loss", kube_version="1.34", **i.kwargs())
    assert r.recovered is False and r.manual_action_required is True
    assert len(r.to_dict()["failed_nodes"]) == 2


def test_zone_loss_replacements_pending_on_zonal_volumes_after_node_deletion() -> None:
    i = load("zonal-immediate.yaml")
    prof = ClusterProfile(zone_loss_nodes_deleted_after_s=120.0)
    r = simulate(i.sts, "zone-loss", kube_version="1.34", profile=prof, **i.kwargs())
    assert r.first("pod-force-deleted") is not None
    pend = r.first("pod-pending", "cache-0")
    assert pend is not None and "didn't match PersistentVolume's node affinity" in pend.event
    assert not r.recovered and r.manual_action_required


def test_zone_loss_taints_rate_limited_10s_per_node() -> None:
    r = simulate(load("web-ordered.yaml").sts, "zone-loss", kube_version="1.34")
    noexec = [e for e in r.events("taint-added") if "NoExecute" in e.event]
    # both nodes Unknown at 47.5 s; queued by the next pass (52.5 s, processTaintBaseEviction sees
    # the pre-update condition first); token bucket 0.1 node/s, burst 1: 52.6 s and 62.6 s
    assert [round(e.t_s, 1) for e in noexec] == [52.6, 62.6]
    full = [e for e in r.events("zone-disruption") if "FullDisruption" in e.event]
    assert full and "zone-a" in full[0].event


def test_whole_cluster_zone_loss_master_disruption_no_eviction() -> None:
    nodes = tuple(NodeSpec(f"n{i}", "only") for i in range(3))
    r = simulate(
        load("pg-single.yaml").sts,
        "zone-loss",
        kube_version="1.34",
        profile=ClusterProfile(nodes=nodes),
    )
    assert r.events("pod-deletion-requested") == []
    assert not [e for e in r.events("taint-added") if "NoExecute" in e.event]


def test_partial_disruption_small_zone_no_noexecute_taint() -> None:
    # One zone of 4 nodes plus a healthy zone; 3 lost nodes (75 % > 55 %, > 2) -> Partial, rate 0.
    nodes = (*tuple(NodeSpec(f"a{i}", "zone-a") for i in range(4)), NodeSpec("b1", "zone-b"))
    sts = load("web-parallel.yaml").sts
    prof = ClusterProfile(nodes=nodes)
    from ssrisk.embedded_sim.scenarios import run

    _, sim = run(sts, "node-loss", kube_version="1.34", profile=prof, horizon_s=1.0)
    for n in ("a1", "a2"):
        sim.lose_node(sim.cluster.nodes[n], "test", "test")
    sim.loop.horizon_s = 86400.0
    sim.loop.run()
    assert sim.nlc.zone_state["zone-a"] == "PartialDisruption"
    assert not [e for e in sim.timeline.events if e.kind == "pod-deletion-requested"]


def test_drain_blocked_by_pdb_zero() -> None:
    i = load("web-parallel.yaml", "pdb-zero.yaml")
    r = simulate(i.sts, "node-drain", kube_version="1.34", **i.kwargs())
    d = r.to_dict()
    assert d["drain_completed"] is False and d["drain_duration_s"] is None
    refused = r.first("drain-evict-refused")
    assert refused is not None and "429" in refused.event
    assert refused.source == "staging/src/k8s.io/kubectl/pkg/drain/drain.go#evictPods"
    assert r.manual_action_required


def test_a_budget_that_sets_neither_field_blocks_the_drain() -> None:
    """disruption.go#updatePdbStatus: with neither minAvailable nor maxUnavailable,
    expectedPods is 0 and disruptionsAllowed stays 0 (no API version defaults a budget), so
    every eviction is refused with 429, for policy/v1 and policy/v1beta1 alike."""
    i = load("web-parallel.yaml")
    for api in ("policy/v1", "policy/v1beta1"):
        pdb = {
            "apiVersion": api,
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "empty"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}},
        }
        r = simulate(i.sts, "node-drain", kube_version="1.34", pdbs=[pdb])
        assert r.to_dict()["drain_completed"] is False, api
        refused = r.first("drain-evict-refused")
        assert refused is not None and "429" in refused.event
        assert refused.t_s == 0.0  # the first eviction is refused at once
        assert r.events("drain-evicted") == []


def test_case03_single_replica_min_available_one() -> None:
    i = load("pg-single.yaml")
    pdb = {"kind": "PodDisruptionBudget", "metadata": {"name": "p"}, "spec": {"minAvailable": 1}}
    r = simulate(i.sts, "node-drain", kube_version="1.34", pdbs=[pdb])
    assert r.to_dict()["drain_completed"] is False and r.to_dict()["drain_duration_s"] is None


def test_drain_with_pdb_one_serialises_evictions() -> None:
    p = ClusterProfile()
    i = load("web-parallel.yaml", "pdb-one.yaml")
    r = simulate(i.sts, "node-drain", kube_version="1.34", **i.kwargs())
    d = r.to_dict()
    assert d["drain_completed"] is True
    # shutdown + cleanup + recreate + schedule, per pod (no readinessProbe: Ready at start,
    # prober/worker.go); 5 s retry grid
    cycle = p.app_shutdown_s + p.kubelet_cleanup_s + 0.5 + p.scheduling_s
    assert 2 * cycle <= d["drain_duration_s"] <= 3 * (cycle + p.drain_evict_retry_s)
    assert r.max_unavailable == 1
    assert len(r.events("drain-evicted")) == 3


def test_two_pdbs_refuse_with_500() -> None:
    """HTTP 500 is not retried by kubectl drain (drain.go#evictPods retries 429 only)."""
    i = load("web-parallel.yaml", "pdb-one.yaml", "pdb-zero.yaml")
    r = simulate(i.sts, "node-drain", kube_version="1.34", **i.kwargs())
    ev = r.first("drain-failed")
    assert ev is not None and "500" in ev.event
    assert r.first("drain-evict-refused") is None
    assert r.to_dict()["drain_completed"] is False


def test_bad_rollout_ordered_ready_stuck_after_revert() -> None:
    r = simulate(load("web-ordered.yaml").sts, "bad-rollout", kube_version="1.34")
    d = r.to_dict()
    assert d["recovered"] is False and d["manual_action_required"] is True
    assert d["rollout_completed"] is False
    stall = r.first("rollout-stalled", "web-2")
    assert stall is not None
    assert stall.source.endswith("stateful_set_control.go#processReplica")
    assert len([e for e in r.events("template-changed")]) == 2


@pytest.mark.parametrize(
    ("version", "heals"),
    [
        ("1.34", True),
        ("1.35.0", False),
        ("1.35.3", False),
        ("1.35.4", True),
        ("1.36", True),
        ("1.37", True),
    ],
)
def test_bad_rollout_parallel_self_heals_per_version(version: str, heals: bool) -> None:
    r = simulate(load("web-parallel.yaml").sts, "bad-rollout", kube_version=version)
    assert r.recovered is heals
    assert r.to_dict()["rollout_completed"] is heals
    if heals:
        assert r.time_to_recovery_s is not None and r.time_to_recovery_s > 600
    else:
        assert r.manual_action_required


def test_gate_override_turns_1_36_into_1_35_counting() -> None:
    sts = load("web-parallel.yaml").sts
    r = simulate(
        sts, "bad-rollout", kube_version="1.36", feature_gates={"MaxUnavailableStatefulSet": True}
    )
    assert not r.recovered


def test_rolling_update_one_at_a_time() -> None:
    r = simulate(load("web-ordered.yaml").sts, "rolling-update", kube_version="1.34")
    d = r.to_dict()
    assert d["rollout_completed"] is True and d["recovered"] is True
    assert d["max_unavailable"] == 1
    order = [e.pod for e in r.events("pod-deletion-requested")]
    assert order == ["web-2", "web-1", "web-0"]
    assert r.first("rollout-complete") is not None


def test_scale_down_deletes_pvc_when_whenscaled_delete() -> None:
    i = load("scale-delete.yaml")
    r = simulate(i.sts, "scale-down", kube_version="1.34")
    d = r.to_dict()
    assert d["scale_down_completed"] is True and d["replicas"] == 3
    assert [e.pod for e in r.events("pod-deletion-requested")] == ["web-2"]
    assert r.first("pvc-deleted") is not None
    r26 = simulate(i.sts, "scale-down", kube_version="1.26")
    assert r26.first("pvc-deleted") is None
