"""A fold never hides severity or data loss: the finding a group is folded into is at least
as severe as everything folded into it, and a finding that destroys data is never folded;
the exit code and every format agree (tests/data/folding: four ZooKeeper members with a PDB
that lets two go gave a pdb-quorum-loss error folded into a quorum-replicas warning, exit 0).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import DATA, SHARED, run_cli

from ssrisk.model import Finding

FOLDING = DATA / "folding"
ZOOKEEPER = sorted(FOLDING.glob("zk-*.yaml"))
NOTHING_AT_STAKE = FOLDING / "one-replica-nothing-at-stake.yaml"


def _report(path: Path | str) -> dict:
    return json.loads(run_cli("check", "--format", "json", "--jobs", "1", str(path)).out)


@pytest.mark.parametrize("path", ZOOKEEPER, ids=lambda p: p.stem)
def test_an_error_is_not_folded_into_a_warning(path: Path) -> None:
    report = _report(path)
    (loss,) = [f for f in report["findings"] if f["rule"] == "pdb-quorum-loss"]
    assert (loss["severity"], loss.get("folded_into")) == ("error", None)
    assert run_cli("check", str(path)).code == 1
    text = run_cli("check", "--format", "text", str(path)).out
    assert f"{path}:{loss['line']}:{loss['column']}: error pdb-quorum-loss" in text
    sarif = json.loads(run_cli("check", "--format", "sarif", str(path)).out)
    results = sarif["runs"][0]["results"]
    assert [r["level"] for r in results if r["ruleId"] == "pdb-quorum-loss"] == ["error"]
    github = run_cli("check", "--format", "github", str(path)).out
    assert sum(line.startswith("::error ") and "pdb-quorum-loss" in line
               for line in github.splitlines()) == 1  # fmt: skip


def test_data_loss_is_never_folded_into_a_rejection() -> None:
    path = FOLDING / "wipe-without-selector.yaml"
    report = _report(path)
    visible = {f["rule"]: f for f in report["findings"] if not f.get("folded_into")}
    assert {"selector-template-mismatch", "prestop-destroys-state"} <= set(visible)
    # everything else still folds into the rejection
    assert {f["folded_into"] for f in report["findings"] if f.get("folded_into")} == {
        "selector-template-mismatch"
    }
    for fmt, needle in (("text", "prestop-destroys-state"), ("github", "prestop-destroys-state")):
        assert needle in run_cli("check", "--format", fmt, str(path)).out, fmt
    sarif = json.loads(run_cli("check", "--format", "sarif", str(path)).out)
    assert "prestop-destroys-state" in {r["ruleId"] for r in sarif["runs"][0]["results"]}


def test_the_echoes_of_a_replica_with_nothing_at_stake_stay_folded() -> None:
    """single-replica rates one replica that neither serves nor stores info; the findings
    that echo it rate it the same, so one finding is shown, not four warnings beside it."""
    report = _report(NOTHING_AT_STAKE)
    echoes = {"objective-missed", "no-automatic-failover", "pdb-quorum-loss"}
    found = [f for f in report["findings"] if f["rule"] in echoes | {"single-replica"}]
    assert {f["rule"] for f in found} == echoes | {"single-replica"}
    assert {f["severity"] for f in found} == {"info"}
    assert {f.get("folded_into") for f in found if f["rule"] in echoes} == {"single-replica"}
    assert run_cli("check", str(NOTHING_AT_STAKE)).code == 0


#: The rules' examples and real inputs (tests/data/hostile holds large attack inputs).
INPUTS = [
    DATA / "rules",
    DATA / "folding",
    DATA / "findings",
    SHARED / "corpus",
    SHARED / "cases",
    SHARED / "peers",
]


@pytest.mark.parametrize("top", INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_folded_finding_is_more_severe_than_its_cause_or_loses_data(top: Path) -> None:
    if not top.exists():
        pytest.skip(f"{top} is absent")
    from ssrisk.engine import check
    from ssrisk.plugins import collect_rules, plugin_manager
    from ssrisk.settings import Settings

    report = check([str(top)], collect_rules(plugin_manager()), Settings(jobs=1))
    causes: dict[tuple[object, str | None], Finding] = {}
    for f in report.findings:  # (a finding is folded into the first of its cause's rule)
        causes.setdefault((f.checked_at, f.rule), f)
    assert report.folded, "the inputs fold nothing: the test checks nothing"
    for f in report.folded:
        assert not f.never_folded, f
        assert f.rule not in ("prestop-destroys-state", "pvc-retention-delete"), f
        cause = causes[(f.checked_at, f.folded_into)]
        assert f.severity <= cause.severity, (f, cause)
