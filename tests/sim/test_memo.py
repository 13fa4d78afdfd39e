"""Memoised simulate(): renamed cached results equal uncached runs byte for byte."""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import pytest
from ssrisk.embedded_sim import SCENARIOS, ClusterProfile, cache_clear, cache_info, simulate
from ssrisk.embedded_sim.memo import RenamedResult, ResultCache

from ssrisk.timeline import timeline_lines

from .simdata import load

TWINS = load("twins.yaml")


def _sts(name: str) -> dict[str, Any]:
    return next(s for s in TWINS.of("StatefulSet") if s["metadata"]["name"] == name)


def _pdbs(app: str) -> list[dict[str, Any]]:
    return [p for p in TWINS.pdbs if p["spec"]["selector"]["matchLabels"]["app"] == app]


def _json(sts: dict[str, Any], scenario: str, version: str, cache: bool, **kw: Any) -> str:
    r = simulate(sts, scenario, kube_version=version, use_cache=cache, **kw)
    return json.dumps(r.to_dict(), sort_keys=True)


@pytest.mark.parametrize("version", ["1.34", "1.35.0", "1.37"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_renamed_cached_result_is_byte_identical(scenario: str, version: str) -> None:
    cache_clear()
    a_sts, b_sts = _sts("orders-db"), _sts("ledger")
    a_kw = {"pdbs": _pdbs("orders-db")}
    b_kw = {"pdbs": _pdbs("ledger")}
    a_cached = _json(a_sts, scenario, version, True, **a_kw)
    b_cached = _json(b_sts, scenario, version, True, **b_kw)
    info = cache_info()
    assert info["misses"] == 1 and info["hits"] == 1 and info["size"] == 1
    assert a_cached == _json(a_sts, scenario, version, False, **a_kw)
    assert b_cached == _json(b_sts, scenario, version, False, **b_kw)
    assert a_cached != b_cached
    d = json.loads(b_cached)
    assert d["object"] == {"kind": "StatefulSet", "namespace": "finance", "name": "ledger"}
    assert "\\u0000" not in b_cached and "orders" not in b_cached


def test_pdb_name_in_messages_is_the_callers() -> None:
    cache_clear()
    simulate(_sts("orders-db"), "node-drain", kube_version="1.34", pdbs=_pdbs("orders-db"))
    r = simulate(_sts("ledger"), "node-drain", kube_version="1.34", pdbs=_pdbs("ledger"))
    assert cache_info()["hits"] == 1
    evicted = [e.event for e in r.timeline if "PDB" in e.event]
    assert evicted and all("ledger-budget" in e for e in evicted)


def test_label_value_that_changes_a_selector_match_does_not_collide() -> None:
    cache_clear()
    ledger = simulate(_sts("ledger"), "node-loss", kube_version="1.34")
    journal = simulate(_sts("journal"), "node-loss", kube_version="1.34")
    assert cache_info()["misses"] == 2
    assert ledger.to_dict()["replicas_on_failed_nodes"] == 1
    assert journal.to_dict()["replicas_on_failed_nodes"] == 3
    assert json.dumps(journal.to_dict(), sort_keys=True) == _json(
        _sts("journal"), "node-loss", "1.34", False
    )


@pytest.mark.parametrize(
    "change",
    [
        {"replicas": 2},
        {"podManagementPolicy": "Parallel"},
        {"minReadySeconds": 10},
        {"updateStrategy": {"type": "OnDelete"}},
    ],
)
def test_differing_specs_do_not_collide(change: dict[str, Any]) -> None:
    cache_clear()
    base = _sts("ledger")
    other = {**base, "spec": {**base["spec"], **change}}
    for sc in ("node-loss", "rolling-update", "scale-down"):
        simulate(base, sc, kube_version="1.34")
        got = _json(other, sc, "1.34", True)
        assert got == _json(other, sc, "1.34", False)
    assert cache_info()["hits"] == 0


def test_other_inputs_are_part_of_the_key() -> None:
    cache_clear()
    sts = _sts("ledger")
    simulate(sts, "node-loss", kube_version="1.34")
    simulate(sts, "node-loss", kube_version="1.31")
    simulate(sts, "node-loss", kube_version="1.34", profile=ClusterProfile(attach_s=30.0))
    simulate(sts, "node-loss", kube_version="1.34", horizon_s=3600.0)
    simulate(
        sts, "node-loss", kube_version="1.34", feature_gates={"MaxUnavailableStatefulSet": True}
    )
    simulate(sts, "node-loss", kube_version="1.34", pdbs=_pdbs("ledger"))
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "provisioner": "nfs.csi.k8s.io",
        "metadata": {
            "name": "shared",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
    }
    simulate(sts, "node-loss", kube_version="1.34", storage_classes=[sc])
    assert cache_info()["misses"] == 7 and cache_info()["hits"] == 0


def test_returned_results_are_independent_copies() -> None:
    cache_clear()
    sts = _sts("ledger")
    first = simulate(sts, "node-loss", kube_version="1.34")
    want = json.dumps(first.to_dict())
    first.timeline.clear()
    first.pods.clear()
    first.failed_nodes.append("x")
    assert json.dumps(simulate(sts, "node-loss", kube_version="1.34").to_dict()) == want


def test_cache_is_bounded_lru() -> None:
    c = ResultCache(max_entries=2)
    r = simulate(_sts("ledger"), "node-loss", kube_version="1.34", use_cache=False)
    c.put("a", r)
    c.put("b", r)
    assert c.get("a") is r
    c.put("c", r)  # evicts the least recently used: "b"
    assert c.get("b") is None and c.get("a") is r and c.get("c") is r
    assert c.info()["size"] == 2


def test_cached_call_is_cheaper_than_a_run() -> None:
    sts = _sts("ledger")
    kw = {"kube_version": "1.34", "pdbs": _pdbs("ledger")}
    n = 30
    t0 = time.perf_counter()
    for _ in range(n):
        simulate(sts, "node-loss-out-of-service", use_cache=False, **kw)
    uncached = (time.perf_counter() - t0) / n
    simulate(sts, "node-loss-out-of-service", **kw)
    t0 = time.perf_counter()
    for _ in range(n):
        simulate(sts, "node-loss-out-of-service", **kw)
    cached = (time.perf_counter() - t0) / n
    assert cached < uncached


def test_replica_limit_is_a_clear_value_error() -> None:
    """A set larger than the simulator models pod by pod is refused, not run for minutes."""
    from ssrisk.embedded_sim.workload import MAX_SIMULATED_REPLICAS

    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "big"},
        "spec": {"replicas": MAX_SIMULATED_REPLICAS + 1},
    }
    with pytest.raises(ValueError, match="not simulated"):
        simulate(sts, "node-loss")
    sts["spec"]["replicas"] = 3
    assert simulate(sts, "node-loss").replicas == 3


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_lazily_renamed_result_equals_an_uncached_run_field_by_field(scenario: str) -> None:
    """A cached result is renamed on access: every field, every key of to_dict() read alone
    with _value(), and the rendered timeline lines (names of another length than the
    placeholders: the pod column is padded after renaming) equal an uncached run."""
    cache_clear()
    kw = {"kube_version": "1.34", "pdbs": _pdbs("ledger")}
    simulate(_sts("orders-db"), scenario, kube_version="1.34", pdbs=_pdbs("orders-db"))
    lazy = simulate(_sts("ledger"), scenario, **kw)
    plain = simulate(_sts("ledger"), scenario, use_cache=False, **kw)
    assert isinstance(lazy, RenamedResult) and cache_info()["hits"] == 1
    want = plain.to_dict()
    for key in want:  # one key at a time, before anything else is renamed
        got = lazy._value(key)
        assert json.dumps(got, sort_keys=True) == json.dumps(want[key], sort_keys=True)
    assert "timeline" not in lazy.__dict__ and "pods" not in lazy.__dict__
    assert lazy._value("no-such-key", "dflt") == "dflt"
    for limit in (14, 10_000):
        assert timeline_lines(lazy, limit) == timeline_lines(plain, limit)
    template, rename = lazy.template()
    assert template is not lazy and rename(template.name) == "ledger"
    assert "timeline" not in lazy.__dict__  # the lines came from the shared template
    for f in dataclasses.fields(plain):  # each named field renamed alone, on first access
        assert getattr(lazy, f.name) == getattr(plain, f.name), f.name
    assert json.dumps(lazy.to_dict(), sort_keys=True) == json.dumps(want, sort_keys=True)
    assert lazy.first("fault") == plain.first("fault")


def test_timeline_text_is_rendered_once_per_behaviour() -> None:
    """Two StatefulSets that behave the same share the rendered timeline of their cached
    result; each gets its own names."""
    cache_clear()
    a = simulate(_sts("orders-db"), "node-drain", kube_version="1.34", pdbs=_pdbs("orders-db"))
    b = simulate(_sts("ledger"), "node-drain", kube_version="1.34", pdbs=_pdbs("ledger"))
    assert a.template()[0] is b.template()[0]
    lines_a, lines_b = timeline_lines(a), timeline_lines(b)
    shared = a.template()[0].__dict__
    assert any(k.startswith("_ssrisk_timeline_parts") for k in shared)
    assert any("orders-db" in x for x in lines_a) and not any("orders" in x for x in lines_b)
    assert any("ledger-budget" in x for x in lines_b)


def test_the_results_of_one_statefulset_share_one_renamer() -> None:
    # a finding waiting to be printed keeps its set's results: one substitution, not one each
    from ssrisk.embedded_sim import Simulator

    sim = Simulator(_sts("orders-db"), pdbs=_pdbs("orders-db"))
    results = [sim.run(s) for s in SCENARIOS]
    assert all(isinstance(r, RenamedResult) for r in results)
    assert len({id(r.__dict__["_sub"]) for r in results}) == 1
    assert all(r.pods and all(n.startswith("orders-db-") for n in r.pods) for r in results)
