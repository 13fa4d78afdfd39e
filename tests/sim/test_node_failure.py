"""Node-failure timelines (k8s-behavior.md A.1, A.2, B.1–B.3, B.7)."""

from __future__ import annotations

import math

import pytest
from ssrisk.embedded_sim import ClusterProfile, simulate

from .simdata import load

NLC = "pkg/controller/nodelifecycle/node_lifecycle_controller.go"


@pytest.mark.parametrize(
    ("version", "t_u"), [("1.31", 37.5), ("1.34", 47.5), ("1.25", 37.5), ("1.32", 47.5)]
)
def test_node_unknown_at_g_minus_2_5(version: str, t_u: float) -> None:
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version=version)
    ev = r.first("node-unknown")
    assert ev is not None and ev.t_s == t_u
    assert ev.source == f"{NLC}#tryUpdateNodeHealth"
    nr = r.first("pod-not-ready", "pg-0")
    assert nr is not None and nr.t_s == t_u and nr.source == f"{NLC}#monitorNodeHealth"
    g = 40.0 if version in ("1.25", "1.31") else 50.0
    assert r.to_dict()["node_unknown_range_s"] == [g - 10, g + 5]


def test_noexecute_taint_then_default_eviction_after_300s() -> None:
    # Derivation (node_lifecycle_controller.go, 1.34: G = 50 s, node-monitor-period P = 5 s):
    # Unknown at T_u = G - 2.5 = 47.5 s (typical), when the NoSchedule taint follows the node
    # update. tryUpdateNodeHealth hands processTaintBaseEviction the Ready condition as it was
    # before the pass (True), so only the next pass (T_u + P = 52.5 s) queues the node; the
    # tainting pass runs every 100 ms with a full token bucket: NoExecute at 52.6 s, eviction
    # 300 s (default toleration) later at 352.6 s.
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version="1.34")
    taints = r.events("taint-added")
    assert [round(e.t_s, 1) for e in taints] == [47.5, 52.6]
    assert "NoExecute" in taints[1].event and taints[1].source == f"{NLC}#doNoExecuteTaintingPass"
    ev = r.first("pod-deletion-requested", "pg-0")
    assert ev is not None and ev.t_s == pytest.approx(352.6)
    assert ev.source == "pkg/controller/tainteviction/taint_eviction.go#addConditionAndDeletePod"


def test_taint_manager_source_before_1_29() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version="1.28")
    ev = r.first("pod-deletion-requested")
    # G = 40 s up to 1.31: Unknown at 37.5 s, NoExecute one pass later at 42.6 s, + 300 s
    assert ev is not None and ev.t_s == pytest.approx(342.6)
    assert ev.source.startswith("pkg/controller/nodelifecycle/scheduler/taint_manager.go")


def test_toleration_seconds_60_and_noschedule_toleration_keeps_default() -> None:
    r = simulate(load("toleration-60.yaml").sts, "node-loss", kube_version="1.34")
    ev = r.first("pod-deletion-requested", "db-0")
    assert ev is not None and ev.t_s == pytest.approx(52.6 + 60)


def test_toleration_without_seconds_never_evicted() -> None:
    r = simulate(load("toleration-forever.yaml").sts, "node-loss", kube_version="1.34")
    assert r.events("pod-deletion-requested") == []
    assert r.first("toleration-forever", "db-0") is not None
    assert r.recovered is False and r.manual_action_required is True
    assert "never evicted" in r.verdict


def test_single_replica_node_loss_never_recovers() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version="1.34")
    d = r.to_dict()
    assert d["recovered"] is False and d["time_to_recovery_s"] is None
    assert d["manual_action_required"] is True
    assert d["pods"]["pg-0"]["unavailable_s"] is None
    stuck = r.first("pod-terminating-stuck", "pg-0")
    assert stuck is not None and stuck.t_s == pytest.approx(352.6)
    assert r.events("pod-created") == []


def test_out_of_service_recovers_within_assumed_times() -> None:
    p = ClusterProfile()
    r = simulate(load("pg-single.yaml").sts, "node-loss-out-of-service", kube_version="1.34")
    assert r.recovered and not r.manual_action_required
    fd = r.first("pod-force-deleted", "pg-0")
    assert fd is not None and 600 < fd.t_s <= 620
    assert fd.source == "pkg/controller/podgc/gc_controller.go#gcTerminating"
    det = r.first("volume-detached")
    assert det is not None and det.t_s == pytest.approx(fd.t_s + p.adc_reaction_s + p.detach_s)
    assert r.first("volume-multi-attach", "pg-0") is not None
    ready = r.first("pod-ready", "pg-0")
    assert ready is not None
    # detach, attach, mount, then Ready at the first probe (every 5 s) once the app is up
    ready_after_start = math.ceil(p.app_start_to_ready_s / 5.0) * 5.0
    expect = det.t_s + p.adc_reaction_s + p.attach_s + p.mount_s + ready_after_start
    assert ready.t_s == pytest.approx(expect)
    assert r.time_to_recovery_s == pytest.approx(ready.t_s)
    assert 600 <= r.time_to_recovery_s <= 900


def test_out_of_service_has_no_effect_on_1_25() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-loss-out-of-service", kube_version="1.25")
    assert not r.recovered and r.manual_action_required
    assert r.events("pod-force-deleted") == []


def test_node_deleted_podgc_orphan_then_six_minute_force_detach() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-deleted", kube_version="1.34")
    fd = r.first("pod-force-deleted", "pg-0")
    assert fd is not None and 120 + 40 <= fd.t_s <= 120 + 60
    assert fd.source == "pkg/controller/podgc/gc_controller.go#gcOrphaned"
    det = r.first("volume-detached")
    assert det is not None and det.t_s >= fd.t_s + 360
    assert r.recovered and r.time_to_recovery_s is not None and r.time_to_recovery_s > det.t_s


def test_disable_force_detach_flag_blocks_recovery_from_1_30() -> None:
    prof = ClusterProfile(disable_force_detach_on_timeout=True)
    r = simulate(load("pg-single.yaml").sts, "node-deleted", kube_version="1.30", profile=prof)
    assert not r.recovered and r.manual_action_required
    assert r.first("volume-multi-attach", "pg-0") is not None
    # the flag does not exist before 1.30: force detach still happens
    r29 = simulate(load("pg-single.yaml").sts, "node-deleted", kube_version="1.29", profile=prof)
    assert r29.recovered


def test_local_pv_replacement_pending_after_node_deleted() -> None:
    i = load("local-pv.yaml")
    r = simulate(i.sts, "node-deleted", kube_version="1.34", **i.kwargs())
    pend = r.first("pod-pending", "kv-0")
    assert pend is not None and "didn't match PersistentVolume's node affinity" in pend.event
    assert not r.recovered and r.manual_action_required


def test_worst_placement_puts_replicas_together_without_anti_affinity() -> None:
    r = simulate(load("web-parallel.yaml").sts, "node-loss", kube_version="1.34")
    assert r.to_dict()["replicas_on_failed_nodes"] == 3
    assert r.max_unavailable == 3
    assert "worst case the constraints allow" in r.placement
    r2 = simulate(load("web-ordered.yaml").sts, "node-loss", kube_version="1.34")
    assert r2.to_dict()["replicas_on_failed_nodes"] == 1


def test_ordered_ready_node_loss_blocks_nothing_above_when_lowest_healthy() -> None:
    # web-0 lost; OrderedReady: web-1 and web-2 keep running, nothing recreated.
    r = simulate(load("web-ordered.yaml").sts, "node-loss", kube_version="1.34")
    d = r.to_dict()
    assert d["pods"]["web-1"]["unavailable_s"] == 0
    assert d["pods"]["web-0"]["unavailable_s"] is None


def test_graceful_node_shutdown_recovers_with_clean_detach() -> None:
    r = simulate(load("pg-single.yaml").sts, "graceful-node-shutdown", kube_version="1.34")
    assert r.recovered and not r.manual_action_required
    failed = r.first("pod-failed", "pg-0")
    assert failed is not None and failed.t_s <= 20
    assert r.events("volume-detach-waiting") == []
    assert r.time_to_recovery_s is not None and r.time_to_recovery_s < 120


def test_readiness_follows_the_probe_and_the_configured_app_start() -> None:
    """prober/worker.go: no probe → Ready at start; a probe → first tick after the app is up."""
    sts = load("pg-single.yaml").sts  # readinessProbe periodSeconds 5
    for app_s, expect in ((0.0, 0.0), (12.0, 15.0), (45.0, 45.0)):
        prof = ClusterProfile().with_overrides(app_start_to_ready_s=app_s)
        r = simulate(sts, "rolling-update", kube_version="1.34", profile=prof)
        started = r.first("pod-started", "pg-0")
        ready = r.first("pod-ready", "pg-0")
        assert started is not None and ready is not None
        assert ready.t_s - started.t_s == pytest.approx(expect)


@pytest.mark.parametrize(
    ("version", "reason"),
    [
        ("1.32", "node(s) had volume node affinity conflict"),
        ("1.33", "node(s) didn't match PersistentVolume's node affinity"),
    ],
)
def test_the_volume_binding_reason_is_the_versions_wording(version: str, reason: str) -> None:
    """The scheduler's words for a node a bound volume excludes changed in 1.33
    (kubernetes/kubernetes#129887: volumebinding ErrReasonNodeConflict)."""
    i = load("local-pv.yaml")
    r = simulate(i.sts, "node-deleted", kube_version=version, **i.kwargs())
    pend = r.first("pod-pending", "kv-0")
    assert pend is not None and reason in pend.event
