"""Run notes are stated once per run in every format, also when the inputs are checked in
groups under several configuration files (tests/data/gate/notes: a/ and c/ give the same
facts, b/ is Kubernetes 1.25, where the out-of-service taint does not work yet)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import Counter

import pytest
from conftest import DATA, ROOT, run_cli

NOTES = DATA / "gate" / "notes"
SEE = "see profile node-remediation"
RULES = {"no-automatic-failover", "rwo-volume-reattach"}


def _paths(*groups: str) -> list[str]:
    return [str((NOTES / g).relative_to(ROOT)) for g in groups]


def notes_per_format(*groups: str) -> dict[str, Counter[str]]:
    """How many times each rule's note is stated, per format."""
    counts: dict[str, Counter[str]] = {}
    paths = _paths(*groups)
    text = run_cli("check", *paths, cwd=ROOT).out
    counts["text"] = Counter(re.findall(r"^note ([\w-]+):", text, re.M))
    report = json.loads(run_cli("check", "--format", "json", *paths, cwd=ROOT).out)
    counts["json"] = Counter(n["rule"] for n in report["run_notes"])
    github = run_cli("check", "--format", "github", *paths, cwd=ROOT).out
    counts["github"] = Counter(re.findall(r"^::notice title=ssrisk ([\w-]+)::", github, re.M))
    sarif = json.loads(run_cli("check", "--format", "sarif", *paths, cwd=ROOT).out)
    (invocation,) = sarif["runs"][0]["invocations"]
    counts["sarif"] = Counter(
        n["associatedRule"]["id"]
        for n in invocation["toolExecutionNotifications"]
        if "associatedRule" in n
    )
    junit = ET.fromstring(run_cli("check", "--format", "junit", *paths, cwd=ROOT).out)
    counts["junit"] = Counter(
        p.get("name", "").removeprefix("note ")
        for p in junit.iter("property")
        if p.get("name", "").startswith("note ")
    )
    return counts


@pytest.mark.parametrize("groups", [("a", "c"), ("a", "b", "c")])
def test_each_rule_states_its_note_once_in_every_format(groups: tuple[str, ...]) -> None:
    for fmt, counts in notes_per_format(*groups).items():
        assert counts == Counter(dict.fromkeys(RULES, 1)), fmt


def test_equal_facts_of_several_configurations_are_counted_in_one_note() -> None:
    report = run_cli("check", "--format", "json", *_paths("a", "c"), cwd=ROOT).json()
    for note in report["run_notes"]:
        assert note["statefulsets"] == 2
        assert "[" not in note["message"]  # one form: nothing to tell apart


def test_facts_that_differ_by_configuration_name_where_each_holds() -> None:
    report = run_cli("check", "--format", "json", *_paths("a", "b", "c"), cwd=ROOT).json()
    notes = {n["rule"]: n for n in report["run_notes"]}
    a, b, c = (str((NOTES / g / ".ssrisk.yaml").relative_to(ROOT)) for g in "abc")
    failover = notes["no-automatic-failover"]
    assert failover["statefulsets"] == 3
    message = failover["message"]
    assert f"(force delete, out-of-service taint, Node deletion); {SEE} [{a}, {c}: 2]" in message
    assert f"(force delete, Node deletion); {SEE} [{b}: 1]" in message
    assert failover["explanation"].startswith(f"Under {a}, {c} (2 StatefulSet(s)): ")
    assert f"\n\nUnder {b} (1 StatefulSet(s)): " in failover["explanation"]
    reattach = notes["rwo-volume-reattach"]
    assert "at once with the out-of-service taint" in reattach["message"].split(f"[{a}")[0]
    assert "out-of-service" not in reattach["message"].split(f"{c}: 2]; ")[1]
