"""Results kept between processes read back exactly as they were simulated."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from ssrisk.embedded_sim import SCENARIOS, ClusterProfile, Simulator, cache_clear, cache_info
from ssrisk.embedded_sim.memo import CACHE, _freeze
from ssrisk.embedded_sim.persist import _Stored, decode_result, encode_result, key_bytes
from ssrisk.embedded_sim.result import ScenarioResult

from .simdata import DATA, load


class _Store:
    """A store in memory (the engine's keeps files: tests/test_simcache.py)."""

    def __init__(self) -> None:
        self.kept: dict[bytes, bytes] = {}

    def load(self, digest_input: bytes) -> bytes | None:
        return self.kept.get(digest_input)

    def save(self, digest_input: bytes, data: bytes) -> None:
        self.kept[digest_input] = data


def _inputs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for path in sorted(DATA.glob("*.yaml")):
        inputs = load(path.name)
        for sts in inputs.of("StatefulSet"):
            out.append((sts, inputs.kwargs()))
    return out


@pytest.fixture
def store() -> Any:
    cache_clear()
    kept = _Store()
    CACHE.store = kept
    yield kept
    CACHE.store = None
    cache_clear()


def test_the_stored_fields_are_the_results_in_order() -> None:
    assert _Stored.__struct_fields__ == tuple(f.name for f in dataclasses.fields(ScenarioResult))


def test_every_result_reads_back_equal_field_by_field(store: _Store) -> None:
    """Every scenario of every StatefulSet of the simulator's test data, on two Kubernetes
    versions, the second with a profile of its own: each placeholder-named result the cache
    holds reads back with the same fields, of the same types (``repr`` tells 1 from 1.0 and
    a tuple from a list)."""
    profiles = (None, ClusterProfile(lease_renew_interval_s=12.0, podgc_period_s=30))
    for sts, kwargs in _inputs():
        for version, profile in (("1.30", profiles[0]), ("1.34", profiles[1])):
            sim = Simulator(sts, kube_version=version, profile=profile, **kwargs)
            for scenario in SCENARIOS:
                sim.run(scenario)
    results = list(CACHE._data.values())
    assert len(results) > 200
    kept = 0
    for res in results:
        data = encode_result(res)
        if data is None:
            assert res.shape_search is not None or res.budget_exhausted
            continue
        kept += 1
        back = decode_result(data)
        assert back is not None
        assert back.namespace == ""  # (not kept: each renamed copy takes its caller's)
        res = dataclasses.replace(res, namespace="")
        assert repr(back) == repr(res)
        assert back.to_dict() == res.to_dict()
    assert kept >= len(results) // 2
    assert len(store.kept) == kept


def test_a_second_process_reads_what_the_first_kept(store: _Store) -> None:
    inputs = load("twins.yaml")
    sts = inputs.of("StatefulSet")[0]
    first = [Simulator(sts, **inputs.kwargs()).run(s).to_dict() for s in SCENARIOS]
    kept = dict(store.kept)
    assert kept
    cache_clear()  # (a new process: nothing in memory, the store's files remain)
    second = [Simulator(sts, **inputs.kwargs()).run(s).to_dict() for s in SCENARIOS]
    assert second == first
    assert cache_info()["store_hits"] == len(kept)


def test_a_store_hit_charges_the_budget_as_a_run_does(store: _Store) -> None:
    inputs = load("twins.yaml")
    sts = inputs.of("StatefulSet")[0]
    ran = Simulator(sts, max_steps=10**7, **inputs.kwargs())
    for s in SCENARIOS:
        ran.run(s)
    cache_clear()
    read = Simulator(sts, max_steps=10**7, **inputs.kwargs())
    for s in SCENARIOS:
        read.run(s)
    assert cache_info()["store_hits"] > 0
    assert ran.budget is not None and read.budget is not None
    assert read.budget.used == ran.budget.used > 0


def test_what_is_not_a_result_is_a_miss(store: _Store) -> None:
    inputs = load("twins.yaml")
    sts = inputs.of("StatefulSet")[0]
    Simulator(sts, **inputs.kwargs()).run("node-loss")
    (data,) = store.kept.values()
    for bad in (b"", b"\xc1", data[:-3], data + b"\x00", b"\x92\x01\x02"):
        assert decode_result(bad) is None
    for key in list(store.kept):
        store.kept[key] = data[: len(data) // 2]
    cache_clear()
    again = Simulator(sts, **inputs.kwargs()).run("node-loss")  # simulated again
    assert cache_info()["store_hits"] == 0
    assert again.to_dict()["verdict"]


def test_a_key_known_only_by_its_repr_is_not_kept() -> None:
    class Opaque:
        pass

    opaque = Opaque()
    unstable = _freeze(opaque)
    assert unstable == _freeze(opaque) and hash(unstable) == hash(_freeze(opaque))
    assert key_bytes(("node-loss", (unstable,))) is None
    assert key_bytes(("node-loss", (frozenset({"b", "a"}), 1, 1.0, True))) == key_bytes(
        ("node-loss", (frozenset({"a", "b"}), 1, 1.0, True))
    )
    assert key_bytes(("s", (1,))) != key_bytes(("s", (1.0,))) != key_bytes(("s", (True,)))
