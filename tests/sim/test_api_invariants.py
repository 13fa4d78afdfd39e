"""Public API shape, versions, determinism, invariants and speed."""

from __future__ import annotations

import json
import time

import pytest
from ssrisk.embedded_sim import (
    DEFAULT_KUBE_VERSION,
    SCENARIOS,
    SUPPORTED_VERSIONS,
    ClusterProfile,
    parse_kube_version,
    simulate,
    version_defaults,
)
from ssrisk.embedded_sim.scenarios import run
from ssrisk.embedded_sim.simulation import Simulation

from .simdata import load

FILES = ["pg-single.yaml", "web-ordered.yaml", "web-parallel.yaml", "toleration-forever.yaml"]


def test_constants() -> None:
    assert DEFAULT_KUBE_VERSION == "1.37"
    assert SUPPORTED_VERSIONS[0] == "1.25" and SUPPORTED_VERSIONS[-1] == "1.37"
    assert SCENARIOS == (
        "node-loss",
        "node-loss-out-of-service",
        "node-deleted",
        "graceful-node-shutdown",
        "node-drain",
        "rolling-update",
        "bad-rollout",
        "scale-down",
        "zone-loss",
    )


def test_result_shape() -> None:
    d = simulate(load("pg-single.yaml").sts, "node-loss", kube_version="1.34").to_dict()
    assert d["object"] == {"kind": "StatefulSet", "namespace": "billing", "name": "pg"}
    for key in (
        "scenario",
        "kube_version",
        "replicas",
        "recovered",
        "time_to_recovery_s",
        "manual_action_required",
        "max_unavailable",
        "pods",
        "timeline",
        "verdict",
        "assumptions",
        "placement",
    ):
        assert key in d
    assert d["kube_version"] == "1.34"
    ev = d["timeline"][1]
    assert set(ev) == {"t_s", "pod", "kind", "event", "source"}
    assert all(e["source"] for e in d["timeline"])


@pytest.mark.parametrize("v", ["1.35.2", "v1.30", "1.25", "1.37.1"])
def test_version_parsing(v: str) -> None:
    kv = parse_kube_version(v)
    assert kv.major == 1


@pytest.mark.parametrize("v", ["1.24", "1.38", "2.1", "latest", ""])
def test_bad_versions(v: str) -> None:
    with pytest.raises(ValueError, match="version"):
        simulate(load("pg-single.yaml").sts, "node-loss", kube_version=v)


def test_unknown_scenario_and_gate() -> None:
    sts = load("pg-single.yaml").sts
    with pytest.raises(ValueError, match="scenario"):
        simulate(sts, "meteor-strike")
    with pytest.raises(ValueError, match="feature gate"):
        simulate(sts, "node-loss", feature_gates={"NoSuchGate": True})


def test_gate_table() -> None:
    g = {
        v: version_defaults(v).gates
        for v in ("1.25", "1.26", "1.27", "1.34", "1.35.3", "1.35.4", "1.36", "1.37")
    }
    assert [g[v]["MaxUnavailableStatefulSet"] for v in g] == [
        False,
        False,
        False,
        False,
        True,
        False,
        False,
        True,
    ]
    assert (
        g["1.25"]["NodeOutOfServiceVolumeDetach"] is False
        and g["1.26"]["NodeOutOfServiceVolumeDetach"]
    )
    assert "StatefulSetStartOrdinal" not in g["1.25"] and g["1.27"]["StatefulSetStartOrdinal"]
    assert g["1.26"]["PDBUnhealthyPodEvictionPolicy"] is False
    assert (
        "StatefulSetRecreateStrategy" not in g["1.36"]
        and g["1.37"]["StatefulSetRecreateStrategy"] is False
    )
    assert version_defaults("1.31").node_monitor_grace_period_s == 40
    assert version_defaults("1.32").node_monitor_grace_period_s == 50
    assert not version_defaults("1.29").disable_force_detach_flag_available
    assert version_defaults("1.30").disable_force_detach_flag_available


@pytest.mark.parametrize(
    "garbage",
    [
        {},
        {"spec": "x"},
        {"spec": {"replicas": "three", "template": 5}},
        {"metadata": [], "spec": {"replicas": True, "volumeClaimTemplates": [1, None]}},
    ],
)
def test_garbage_manifest_never_raises(garbage: dict) -> None:
    for sc in SCENARIOS:
        r = simulate(garbage, sc, kube_version="1.34")
        assert r.replicas == 1


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_deterministic(scenario: str) -> None:
    i = load("web-ordered.yaml", "pdb-one.yaml")
    a = json.dumps(simulate(i.sts, scenario, kube_version="1.35.0", **i.kwargs()).to_dict())
    b = json.dumps(simulate(i.sts, scenario, kube_version="1.35.0", **i.kwargs()).to_dict())
    assert a == b


def _invariants(sim: Simulation) -> None:
    ords = [p.ordinal for p in sim.cluster.pods.values()]
    assert len(ords) == len(set(ords)), "two pods share an ordinal"
    for p in sim.cluster.pods.values():
        assert p.name == sim.wl.pod_name(p.ordinal)
        if p.ready and p.node is not None:
            # NLC marks pods NotReady in the same pass that sets Ready=Unknown
            assert sim.cluster.nodes[p.node].ready != "Unknown", f"{p.name} Ready on a lost node"
        if p.node is not None and not sim.kubelet.node_running(p.node):
            assert not sim.pod_serving(p.ordinal)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("version", ["1.25", "1.34", "1.35.0", "1.37"])
def test_invariants_every_step(scenario: str, name: str, version: str) -> None:
    i = load(name)
    res, sim = run(i.sts, scenario, kube_version=version, observers=[_invariants])
    times = [e.t_s for e in res.timeline]
    assert times == sorted(times)
    assert all(t >= 0 for t in times)
    if res.recovered:
        assert res.time_to_recovery_s is not None and res.time_to_recovery_s >= 0
        assert not res.manual_action_required
    else:
        assert res.time_to_recovery_s is None
    assert sim.loop.processed < 5000


def test_horizon_bounds_run() -> None:
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version="1.34", horizon_s=100.0)
    assert r.first("pod-deletion-requested") is None
    assert not r.recovered and not r.manual_action_required


def test_fast() -> None:
    i = load("web-ordered.yaml", "pdb-one.yaml")
    start = time.perf_counter()
    n = 0
    for sc in SCENARIOS:
        for _ in range(5):
            simulate(i.sts, sc, kube_version="1.34", **i.kwargs())
            n += 1
    per_run_ms = (time.perf_counter() - start) * 1000 / n
    assert per_run_ms < 20


def test_profile_override_changes_timings() -> None:
    prof = ClusterProfile(out_of_service_after_s=300.0)
    r = simulate(
        load("pg-single.yaml").sts, "node-loss-out-of-service", kube_version="1.34", profile=prof
    )
    assert r.recovered and r.time_to_recovery_s is not None and r.time_to_recovery_s < 400
