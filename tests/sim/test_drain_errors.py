"""kubectl drain retries only 429; any other eviction error fails the drain command.

Source: staging/src/k8s.io/kubectl/pkg/drain/drain.go#evictPods (IsTooManyRequests → sleep 5 s
and retry; any other error → the pod's goroutine returns it; the command exits with the
aggregate) and pkg/registry/core/pod/storage/eviction.go (more than one PDB → HTTP 500).
"""

from __future__ import annotations

from ssrisk.embedded_sim import simulate

from .simdata import load


def test_two_pdbs_fail_the_drain_instead_of_retrying() -> None:
    inputs = load("two-pdbs.yaml")
    res = simulate(inputs.sts, "node-drain", kube_version="1.34", **inputs.kwargs())
    d = res.to_dict()
    assert d["drain_completed"] is False and d["drain_duration_s"] is None
    failed = res.events("drain-failed")
    # worst placement: all three pods share the drained node; each eviction fails at once
    assert sorted(e.pod for e in failed) == ["kv-0", "kv-1", "kv-2"]
    for ev in failed:
        assert ev.t_s == 0 and "only 429 is retried" in ev.event
        assert ev.event.count("HTTP 500") == 1
    assert res.events("drain-evict-refused") == []  # no 5 s retry loop on a 500
    assert "kubectl drain fails" in d["verdict"]


def test_node_loss_verdict_names_only_the_ways_out_the_version_has() -> None:
    """NodeOutOfServiceVolumeDetach is off in 1.25 (alpha), on from 1.26 (k8s-behavior.md A.2)."""
    sts = load("pg-single.yaml").sts
    old = simulate(sts, "node-loss", kube_version="1.25").verdict
    new = simulate(sts, "node-loss", kube_version="1.26").verdict
    assert "out-of-service taint needs the NodeOutOfServiceVolumeDetach gate" in old
    assert "applies the out-of-service taint" in new


def test_disruption_target_condition_only_where_the_gate_is_on() -> None:
    """PodDisruptionConditions (KEP-3329) is on by default from 1.26."""
    sts = load("pg-single.yaml").sts
    for version, named in (("1.25", False), ("1.26", True)):
        ev = simulate(sts, "node-loss", kube_version=version).first("pod-deletion-requested")
        assert ev is not None and ("DisruptionTarget" in ev.event) is named
