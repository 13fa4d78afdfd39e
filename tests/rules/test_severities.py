"""Severities that match the harm: what blocks or breaks availability for ever (or at every
routine maintenance) is an error, as one replica is; what depends on other failures is a
warning. Read from files as users write them, with the default settings (fail-on: error)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import DATA, run_cli

PDB_NEVER = DATA / "gate" / "pdb-never"


def _reported(*args: str, cwd: Path | None = None) -> list[tuple[str, str, str]]:
    run = run_cli("check", "--format", "json", *args, cwd=cwd)
    assert run.code in (0, 1), run.err
    return [
        (f["rule"], f["severity"], f["path"])
        for f in run.json()["findings"]
        if not f.get("folded_into")
    ]


@pytest.mark.parametrize("case", ["max-unavailable-0", "min-available-all"])
def test_a_budget_that_never_allows_an_eviction_fails_the_commit(case: str) -> None:
    # the README's pre-commit promise: a PDB changed to maxUnavailable: 0 fails the commit
    pdb = f"{case}/pdb.yaml"
    commit = run_cli("check", "--changed", pdb, cwd=PDB_NEVER)
    assert commit.code == 1, commit.out
    assert ("pdb-blocks-drain", "error", pdb) in _reported("--changed", pdb, cwd=PDB_NEVER)


@pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="needs kubectl or kustomize",
)
def test_a_kustomize_base_budget_that_never_allows_an_eviction_fails_the_commit() -> None:
    # kz/ is a new user's ZooKeeper base and overlays, with the base PDB at maxUnavailable: 0
    commit = run_cli("check", "--changed", "kz/base/pdb.yaml", cwd=PDB_NEVER)
    assert commit.code == 1
    reported = _reported("--changed", "kz/base/pdb.yaml", cwd=PDB_NEVER)
    assert reported.count(("pdb-blocks-drain", "error", "kz/base/pdb.yaml")) == 2  # both overlays


def test_several_budgets_on_one_set_fail_every_eviction_an_error() -> None:
    # the eviction API answers 500 "This pod has more than one PodDisruptionBudget" for every
    # pod of the set (registry/core/pod/storage/eviction.go#Create) and kubectl drain retries
    # only 429s: every drain of their nodes fails, as with a budget that never allows one
    several = _reported("--select", "pdb-blocks-drain", str(PDB_NEVER / "several"))
    assert [(rule, severity) for rule, severity, _ in several] == [("pdb-blocks-drain", "error")]
    assert run_cli("check", str(PDB_NEVER / "several")).code == 1


def test_one_disruption_without_always_allow_stays_info() -> None:
    one = _reported("--select", "pdb-blocks-drain", str(PDB_NEVER / "one-disruption"))
    assert [(rule, severity) for rule, severity, _ in one] == [("pdb-blocks-drain", "info")]


QUORUM = DATA / "gate" / "quorum"


@pytest.mark.parametrize(
    ("manifest", "expected"),
    [
        # two members survive no failure, like one replica: an error (the PDB's finding is
        # folded into it, one cause)
        ("etcd-2.yaml", [("quorum-replicas", "error")]),
        # another even number adds a member without adding fault tolerance: a warning,
        # whether a zone loss halves it (4 over 3 zones) or not (6)
        ("etcd-4.yaml", [("quorum-replicas", "warning")]),
        ("etcd-6.yaml", [("quorum-replicas", "warning")]),
        # a budget that lets a drain take the majority: routine maintenance stops the quorum
        ("etcd-5-pdb-majority.yaml", [("pdb-quorum-loss", "error")]),
        ("etcd-5.yaml", []),
    ],
)
def test_quorum_breakers_are_as_severe_as_one_replica(
    manifest: str, expected: list[tuple[str, str]]
) -> None:
    reported = _reported("--disable", "ordered-ready-stall", str(QUORUM / manifest))
    assert [(rule, severity) for rule, severity, _ in reported] == expected
    code = run_cli("check", str(QUORUM / manifest)).code
    assert code == (1 if ("error" in {s for _r, s in expected}) else 0)


def test_more_than_half_of_a_set_that_is_not_a_quorum_stays_a_warning() -> None:
    # the trial user's PostgreSQL: minAvailable 1 of 3 lets a drain take 2
    reported = _reported("--select", "pdb-quorum-loss", str(DATA / "gate" / "trial" / "postgres"))
    assert [(rule, severity) for rule, severity, _ in reported] == [("pdb-quorum-loss", "warning")]
