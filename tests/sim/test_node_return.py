"""The node comes back after an outage (k8s-behavior.md A.1 step 7a, B.9.1, B.9.2).

Field observation (kubernetes/kubernetes#54368, #74689, kubernetes/community#7056): after the
kubelet stops nothing changes for about 5 minutes; then the StatefulSet pods stay Terminating
and are never replaced until the kubelet returns, after which they are recreated; a
single-replica StatefulSet is down the whole time.
"""

from __future__ import annotations

import pytest
from ssrisk.embedded_sim import ClusterProfile, simulate
from ssrisk.embedded_sim.scenarios import run

from .simdata import load
from .test_api_invariants import _invariants

NLC = "pkg/controller/nodelifecycle/node_lifecycle_controller.go"
BACK_S = 1800.0


def _back(after_s: float = BACK_S, rebooted: bool = False) -> ClusterProfile:
    return ClusterProfile(node_returns_after_s=after_s, node_returns_rebooted=rebooted)


def test_kubelet_stop_field_observation_single_replica() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version="1.34", profile=_back())
    # Nothing is deleted or created for about 5 minutes (grace 50 s + tolerationSeconds 300).
    first_delete = r.first("pod-deletion-requested", "pg-0")
    assert first_delete is not None and 330 <= first_delete.t_s <= 360
    assert all(e.t_s >= first_delete.t_s for e in r.events("pod-created"))
    # Terminating and never replaced while the kubelet is away.
    stuck = r.first("pod-terminating-stuck", "pg-0")
    assert stuck is not None and stuck.t_s == first_delete.t_s
    away = [e for e in r.timeline if first_delete.t_s < e.t_s < BACK_S]
    assert away == []
    assert r.events("pod-force-deleted") == []
    # The kubelet returns: taints cleared within one node-monitor-period (5 s).
    back = r.first("node-returned")
    assert back is not None and back.t_s == BACK_S
    ready = r.first("node-ready")
    assert ready is not None and BACK_S < ready.t_s <= BACK_S + 5
    cleared = [e for e in r.events("taint-removed") if "NoExecute" in e.event]
    assert len(cleared) == 1 and BACK_S < cleared[0].t_s <= BACK_S + 5
    assert cleared[0].source.startswith(f"{NLC}#processTaintBaseEviction")
    # It finishes the deletion itself, removes the object, and the StatefulSet recreates it.
    term = r.first("pod-terminated", "pg-0")
    gone = r.first("pod-deleted", "pg-0")
    created = r.first("pod-created", "pg-0")
    assert term is not None and gone is not None and created is not None
    assert BACK_S < term.t_s <= BACK_S + 35  # SIGTERM then at most the 30 s grace
    assert term.t_s < gone.t_s < created.t_s
    assert "kubelet" in gone.event
    assert r.recovered and not r.manual_action_required
    assert r.time_to_recovery_s is not None and BACK_S < r.time_to_recovery_s <= BACK_S + 120
    assert "only because the node came back" in r.verdict
    d = r.to_dict()
    # Down the whole time: from the fault to the replacement's readiness.
    assert d["pods"]["pg-0"]["unavailable_s"] == pytest.approx(r.time_to_recovery_s, abs=0.1)
    assert d["node_returned_at_s"] == BACK_S
    assert "returns at 1800 s" in d["description"]


def test_full_deletion_grace_after_return() -> None:
    # preStop sleep 50 s inside terminationGracePeriodSeconds 60: the kubelet uses the full
    # DeletionGracePeriodSeconds, not what is left of it after 24 minutes
    # (pkg/kubelet/pod_workers.go#calculateEffectiveGracePeriod).
    p = ClusterProfile()
    r = simulate(load("prestop-long.yaml").sts, "node-loss", kube_version="1.34", profile=_back())
    term = r.first("pod-terminated", "queue-0")
    gone = r.first("pod-deleted", "queue-0")
    assert term is not None and gone is not None
    assert term.t_s == pytest.approx(BACK_S + p.kubelet_return_sync_s + 50 + p.app_shutdown_s)
    # B.9.1: pod gone 10 s + shutdown after the kubelet returns.
    assert gone.t_s == pytest.approx(BACK_S + 10 + 50 + p.app_shutdown_s)
    assert any("full deletion grace" in a for a in r.assumptions)
    deletion = r.first("pod-deletion-requested", "queue-0")
    assert deletion is not None and "grace 60 s" in deletion.event


def test_rebooted_node_has_no_containers_to_stop() -> None:
    r = simulate(
        load("prestop-long.yaml").sts,
        "node-loss",
        kube_version="1.34",
        profile=_back(rebooted=True),
    )
    gone = r.first("pod-deleted", "queue-0")
    assert gone is not None and gone.t_s == pytest.approx(BACK_S + 10)  # B.9.1, no shutdown
    assert r.recovered


def test_return_before_eviction_cancels_it() -> None:
    r = simulate(
        load("web-parallel.yaml").sts, "node-loss", kube_version="1.34", profile=_back(200.0)
    )
    assert len(r.events("eviction-scheduled")) == 3
    cancelled = r.events("eviction-cancelled")
    assert {e.pod for e in cancelled} == {"web-0", "web-1", "web-2"}
    assert all(200 < e.t_s <= 205 for e in cancelled)
    assert r.events("pod-deletion-requested") == [] and r.events("pod-created") == []
    assert r.recovered and r.time_to_recovery_s is not None
    assert 200 < r.time_to_recovery_s <= 215


def test_forever_toleration_pod_back_when_node_returns() -> None:
    r = simulate(
        load("toleration-forever.yaml").sts, "node-loss", kube_version="1.34", profile=_back()
    )
    assert r.events("pod-deletion-requested") == []
    assert r.recovered and r.time_to_recovery_s is not None
    assert BACK_S < r.time_to_recovery_s <= BACK_S + 15


def test_without_return_nothing_changes() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version="1.34")
    assert r.first("node-returned") is None and "node_returned_at_s" not in r.to_dict()
    assert not r.recovered and r.manual_action_required


def test_return_is_ignored_by_other_scenarios() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-deleted", kube_version="1.34", profile=_back())
    assert r.first("node-returned") is None


@pytest.mark.parametrize("rebooted", [False, True])
@pytest.mark.parametrize(
    "name", ["pg-single.yaml", "web-ordered.yaml", "web-parallel.yaml", "toleration-60.yaml"]
)
def test_invariants_every_step_with_return(name: str, rebooted: bool) -> None:
    res, sim = run(
        load(name).sts,
        "node-loss",
        kube_version="1.37",
        profile=_back(900.0, rebooted),
        observers=[_invariants],
    )
    times = [e.t_s for e in res.timeline]
    assert times == sorted(times)
    assert res.recovered and not res.manual_action_required
    assert all(sim.pod_serving(o) for o in sim.stsc.ordinals())
    assert all(n.ready == "True" and not n.taints for n in sim.cluster.nodes.values())
