"""Baselines: --write-baseline records today's findings, --baseline reports only new ones,
keyed by path, object and rule so that moved lines still match."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, run_cli

from ssrisk.baseline import filter_new
from ssrisk.model import Finding, ObjectRef, Position, Severity

SINGLE = DATA / "ci" / "single.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "deploy").mkdir()
    shutil.copy(SINGLE, tmp_path / "deploy" / "db.yaml")
    return tmp_path


def test_write_then_check_against_the_baseline(repo: Path) -> None:
    before = run_cli("check", "--format", "json", "deploy", cwd=repo)
    assert before.code == 1 and before.json()["findings"]
    wrote = run_cli("check", "--write-baseline", "ssrisk-baseline.json", "deploy", cwd=repo)
    assert wrote.code == 0  # recording is not a failure
    doc = json.loads((repo / "ssrisk-baseline.json").read_text())
    assert doc["ssrisk-baseline"] == 1
    entries = {(e["path"], e["object"], e["rule"]) for e in doc["findings"]}
    assert ("deploy/db.yaml", "StatefulSet shop/db", "single-replica") in entries
    # the baseline records the reported findings (folded ones go with their cause)
    reported = [f for f in before.json()["findings"] if not f.get("folded_into")]
    assert sum(e["count"] for e in doc["findings"]) == len(reported)

    after = run_cli(
        "check", "--baseline", "ssrisk-baseline.json", "--format", "json", "deploy", cwd=repo
    )
    assert after.code == 0
    report = after.json()
    assert report["findings"] == []
    assert report["summary"]["baselined"] == len(reported)


def test_baseline_survives_line_moves_and_other_spellings_of_the_path(repo: Path) -> None:
    run_cli("check", "--write-baseline", "base.json", "deploy", cwd=repo)
    db = repo / "deploy" / "db.yaml"
    db.write_text("# moved down\n# by three\n# lines\n" + db.read_text(), encoding="utf-8")
    for spelling, cwd in (("./deploy", repo), (".", repo / "deploy"), ("db.yaml", repo / "deploy")):
        baseline = str(repo / "base.json")
        run = run_cli("check", "--baseline", baseline, "--format", "json", spelling, cwd=cwd)
        assert run.code == 0 and run.json()["findings"] == [], (spelling, run.out)


def test_new_findings_are_reported(repo: Path) -> None:
    run_cli("check", "--write-baseline", "base.json", "deploy", cwd=repo)
    text = SINGLE.read_text(encoding="utf-8").replace("name: db", "name: db2")
    (repo / "deploy" / "db2.yaml").write_text(text, encoding="utf-8")
    run = run_cli("check", "--baseline", "base.json", "--format", "json", "deploy", cwd=repo)
    assert run.code == 1
    assert {f["object"]["name"] for f in run.json()["findings"]} == {"db2"}


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "base.json:1:2: not JSON"),
        ('{"findings": []}', "not an ssrisk baseline"),
        ('{"ssrisk-baseline": 1, "findings": [{"path": "a"}]}', "not an ssrisk baseline"),
    ],
)
def test_bad_baseline_is_exit_2(repo: Path, content: str, words: str) -> None:
    (repo / "base.json").write_text(content, encoding="utf-8")
    run = run_cli("check", "--baseline", "base.json", "deploy", cwd=repo)
    assert run.code == 2
    assert words in run.err and "Traceback" not in run.err


def _finding(line: int, rule: str = "r") -> Finding:
    return Finding(
        rule=rule,
        severity=Severity.WARNING,
        position=Position("deploy/a.yaml", line, 3),
        obj=ObjectRef("apps/v1", "StatefulSet", "ns", "x"),
        message=f"at {line}",
    )


def test_counts_limit_how_many_findings_of_one_key_are_baselined(tmp_path: Path) -> None:
    base = tmp_path / "b.json"
    entry = {"path": "deploy/a.yaml", "object": "StatefulSet ns/x", "rule": "r", "count": 1}
    base.write_text(json.dumps({"ssrisk-baseline": 1, "findings": [entry]}))
    import os

    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        kept, dropped = filter_new([_finding(5), _finding(9)], base)
    finally:
        os.chdir(old)
    assert [f.position.line for f in dropped] == [5]
    assert [f.position.line for f in kept] == [9]


# --- the configuration's baseline, and stale entries --------------------------------------

CONFIGURED = DATA / "gate" / "baseline-config"
STALE = (
    "stale baseline entry: pdb-blocks-drain on StatefulSet db/postgres in ../postgres/pdb.yaml "
    "(warning) matches no finding: fixed, or now more severe; re-run --write-baseline to drop it"
)


def _run(*args: str, cwd: Path = CONFIGURED) -> tuple[int, dict[str, Any]]:
    run = run_cli("check", "--format", "json", *args, cwd=cwd)
    return run.code, run.json()


@pytest.mark.parametrize(
    ("args", "cwd", "whole"),
    [
        ((".",), CONFIGURED, True),  # CI
        (("--changed", "postgres/pdb.yaml"), CONFIGURED, False),  # the pre-commit hook
        (("--changed", "postgres/statefulset.yaml", "postgres/service.yaml"), CONFIGURED, False),
        (("postgres",), CONFIGURED, False),  # part of the tree
        ((str(CONFIGURED),), DATA, True),  # from elsewhere: relative to the configuration file
    ],
)
def test_the_configured_baseline_is_used_in_every_mode(
    args: tuple[str, ...], cwd: Path, whole: bool
) -> None:
    # .ssrisk.yaml says `baseline: ci/ssrisk-baseline.json`: its four findings are recorded
    code, report = _run(*args, cwd=cwd)
    assert code == 0, report
    assert report["findings"] == []
    assert report["summary"]["baselined"] == 4
    # the entry of a finding fixed since (the PDB used to block drains) is a notice of a run of
    # the baseline's whole tree; a run of part of it (a commit, a directory) lacks files whose
    # findings entries record, and judges none; the entry of a StatefulSet this run did not
    # check (redis, elsewhere) is never judged
    notices = [n for n in report["notices"] if "baseline" in n["message"]]
    if not whole:
        assert notices == []
        return
    assert [(n["level"], n["message"]) for n in notices] == [("notice", STALE)]
    assert notices[0]["path"].endswith("ci/ssrisk-baseline.json")
    assert "redis" not in json.dumps(report["notices"])


def test_the_command_line_baseline_overrides_the_configured_one(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text('{"ssrisk-baseline": 1, "findings": []}\n', encoding="utf-8")
    code, report = _run("--baseline", str(empty), ".")
    assert code == 0  # warnings and info only, fail-on error
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    assert report["summary"]["baselined"] == 0 and len(reported) == 4
    # recording a new baseline does not read the configured one
    wrote = run_cli("check", "--write-baseline", str(tmp_path / "new.json"), ".", cwd=CONFIGURED)
    assert wrote.code == 0
    assert "stale" not in wrote.out


def test_no_baseline_reports_every_finding() -> None:
    code, report = _run("--no-baseline", ".")
    assert code == 0  # warnings and info only, fail-on error
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    assert report["summary"]["baselined"] == 0 and len(reported) == 4
    assert not any("baseline" in n["message"] for n in report["notices"])


def test_a_commit_of_other_files_judges_no_entry() -> None:
    code, report = _run("--changed", "postgres/configmap.yaml")
    assert code == 0
    assert not any("stale" in n["message"] for n in report["notices"])


def test_a_configured_baseline_outside_the_repository_is_refused() -> None:
    config = DATA / "gate" / "config-typos" / "baseline-outside.ssrisk.yaml"
    run = run_cli("check", "--config", str(config), str(SINGLE))
    assert run.code == 2
    assert f"{config}:1:1: baseline " in run.err and "outside the checked tree" in run.err
