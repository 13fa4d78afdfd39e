"""What makes a finding worth keeping: no warning on a well-built quorum set, one finding per
cause, short messages, and facts of every StatefulSet stated once per run."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT, SHARED, run_cli

TEXTBOOK = DATA / "textbook"
FINDINGS = DATA / "findings"
#: The longest one-line message (the timeline, sources and fix go to the explanation).
MAX_MESSAGE = 160


def _json(*args: str) -> dict[str, Any]:
    run = run_cli("check", "--format", "json", *args)
    assert run.code in (0, 1), run.out + run.err
    report: dict[str, Any] = run.json()
    assert report["errors"] == [], report["errors"]
    return report


@pytest.mark.parametrize("kube_version", ["1.25", "1.30", "1.34", "1.36", "1.37"])
@pytest.mark.parametrize("manifest", sorted(TEXTBOOK.glob("*.yaml")), ids=lambda p: p.stem)
def test_a_textbook_quorum_set_gives_no_warning(manifest: Path, kube_version: str) -> None:
    """Default settings (1.37) and other releases; 1.35.0-1.35.3 are below, on purpose."""
    run = run_cli("check", "--fail-on", "warning", "--kube-version", kube_version, str(manifest))
    assert run.code == 0, run.out
    report = _json("--kube-version", kube_version, str(manifest))
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    assert [f for f in reported if f["severity"] != "info"] == []
    assert report["summary"]["statefulsets"] == 1


def test_on_1_35_2_the_textbook_parallel_set_only_meets_the_known_regression() -> None:
    """1.35.0 to 1.35.3 count broken old-revision pods against maxUnavailable, so a Parallel
    set is not repaired by a revert (kubernetes/kubernetes#137409): a real warning, removed by
    the cluster fact that the cluster runs 1.35.4 or later."""
    report = _json("--kube-version", "1.35.2", str(TEXTBOOK / "etcd.yaml"))
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    assert [(f["rule"], f["severity"]) for f in reported] == [
        ("max-unavailable-rollout", "warning")
    ]
    assert "#137409" in reported[0]["message"]


def _message_inputs() -> list[Path]:
    paths = [ROOT / "examples", DATA / "rules", TEXTBOOK, FINDINGS]
    corpus = SHARED / "corpus"
    return [*paths, corpus] if corpus.is_dir() else paths


@pytest.mark.parametrize("path", _message_inputs(), ids=lambda p: p.name)
def test_every_message_is_one_short_line(path: Path) -> None:
    report = _json(str(path))
    assert report["findings"]
    for f in report["findings"]:
        assert "\n" not in f["message"]
        assert len(f["message"]) <= MAX_MESSAGE, (f["rule"], f["message"])
    for note in report["run_notes"]:
        assert "\n" not in note["message"] and len(note["message"]) <= MAX_MESSAGE


def test_one_replica_is_one_finding() -> None:
    report = _json(str(FINDINGS / "single-replica-pg.yaml"))
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    assert [f["rule"] for f in reported] == ["single-replica"]
    folded = [(f["rule"], f["folded_into"]) for f in report["findings"] if f.get("folded_into")]
    # the objectives missed (node loss not back within 15m, zone loss and rolling update
    # beyond max-unavailable 0) and the echoes of node loss: all one cause
    assert sorted(set(folded)) == [
        ("no-automatic-failover", "single-replica"),
        ("objective-missed", "single-replica"),
        ("rwo-volume-reattach", "single-replica"),
    ]
    assert report["summary"]["findings"] == 1 and report["summary"]["folded"] == len(folded)
    (single,) = reported
    for rule, _ in folded:  # the explanation of the cause lists what it covers
        assert f"- {rule}: " in single["explanation"]
    text = run_cli("check", str(FINDINGS / "single-replica-pg.yaml")).out
    assert [
        ln.split()[2] for ln in text.splitlines() if ": error " in ln or ": warning " in ln
    ] == ["single-replica"]
    assert f"{len(folded)} more folded into the finding of their cause" in text


def test_suppressing_the_cause_leaves_no_echo() -> None:
    path = str(FINDINGS / "single-replica-suppressed.yaml")
    run = run_cli("check", "--fail-on", "info", path)
    assert run.code == 0, run.out
    report = _json(path)
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    assert [(f["rule"], f.get("suppressed")) for f in reported] == [("single-replica", True)]


def test_a_rejected_object_gets_no_other_finding() -> None:
    report = _json(str(FINDINGS / "selector-mismatch.yaml"))
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    assert [f["rule"] for f in reported] == ["selector-template-mismatch"]
    folded = {f["rule"] for f in report["findings"] if f.get("folded_into")}
    assert {"pdb-missing", "readiness-probe-missing"} <= folded
    assert {f["folded_into"] for f in report["findings"] if f.get("folded_into")} == {
        "selector-template-mismatch"
    }


def test_facts_of_every_statefulset_are_run_notes_in_every_format(tmp_path: Path) -> None:
    manifest = str(TEXTBOOK / "zookeeper.yaml")
    report = _json(manifest)
    notes = {n["rule"]: n for n in report["run_notes"]}
    assert set(notes) == {"no-automatic-failover", "rwo-volume-reattach"}
    assert all(n["statefulsets"] == 1 and n["explanation"] for n in notes.values())
    assert [f for f in report["findings"] if f["rule"] in notes] == []
    # text: one line per note; --explain adds its explanation
    text = run_cli("check", manifest).out
    assert "note no-automatic-failover: StatefulSet pods on a lost node" in text
    explained = run_cli("check", "--explain", manifest).out
    assert "Every StatefulSet shares this" in explained
    # SARIF: tool notifications naming the rule; JUnit: suite properties; GitHub: notices
    sarif = json.loads(run_cli("check", "--format", "sarif", manifest).out)
    notifications = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert {n["associatedRule"]["id"] for n in notifications if "associatedRule" in n} == set(notes)
    suite = ET.fromstring(run_cli("check", "--format", "junit", manifest).out).find("testsuite")
    assert suite is not None
    props = {p.get("name") for p in suite.iter("property")}
    assert {f"note {r}" for r in notes} <= props
    github = run_cli("check", "--format", "github", manifest).out
    assert "::notice title=ssrisk no-automatic-failover::" in github


def test_the_same_note_is_counted_over_statefulsets() -> None:
    report = _json(str(TEXTBOOK))
    notes = {n["rule"]: n["statefulsets"] for n in report["run_notes"]}
    assert notes == {"no-automatic-failover": 2, "rwo-volume-reattach": 2}


def test_one_retention_policy_block_is_one_finding() -> None:
    # whenDeleted and whenScaled: Delete in one persistentVolumeClaimRetentionPolicy (as Loki's
    # backend renders it): one cause, one finding, which keeps both consequences
    path = DATA / "rules" / "pvc-retention-delete" / "fail-both-delete.yaml"
    report = _json("--select", "pvc-retention-delete", str(path))
    (finding,) = report["findings"]
    assert "whenDeleted" in finding["message"] and "whenScaled" in finding["message"]
    assert "deleting the StatefulSet" in finding["message"] and "scale-down" in finding["message"]
    assert "- whenDeleted:" in finding["explanation"] and "- whenScaled:" in finding["explanation"]
