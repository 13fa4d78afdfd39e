"""max-unavailable-rollout across versions: the MaxUnavailableStatefulSet gate and its counting.

The manifests in tests/data/rules/max-unavailable-rollout/ mark, on the line a finding points
at, the severity expected per ``--kube-version`` with ``# versions: 1.35.2=warning ...``
(tests/rules/test_rule_examples.py checks the ``# expect:`` markers at its default version,
1.34). Numbers quoted in messages are compared with ``ssrisk simulate`` on the same file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, run_cli
from rule_expect import KUBE_VERSION, markers

RULE = "max-unavailable-rollout"
FOLDER = DATA / "rules" / RULE
VERSIONS = ("1.34", "1.35.2", "1.35.4", "1.37")
VERSIONS_MARKER = re.compile(r"#\s*versions:\s*((?:[0-9.]+=[a-z]+\s*)+)")
MAJORITY = FOLDER / "fail-parallel-majority.yaml"
PERCENT = FOLDER / "fail-percent-majority.yaml"
PARALLEL_DEFAULT = FOLDER / "pass-parallel-default-gate-off.yaml"


def expected(path: Path, version: str) -> set[tuple[int, str]]:
    """``(line, severity)`` marked for ``version`` in ``path``."""
    out: set[tuple[int, str]] = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = VERSIONS_MARKER.search(line)
        if m:
            pairs = dict(item.split("=") for item in m.group(1).split())
            if version in pairs:
                out.add((number, pairs[version]))
    return out


def check(path: Path, *args: str) -> list[dict[str, Any]]:
    """This rule's findings from ``ssrisk check --format json ARGS path``."""
    run = run_cli("check", "--format", "json", *args, str(path))
    assert run.code in (0, 1), run.out + run.err
    report = run.json()
    assert report["errors"] == [], report["errors"]
    return [f for f in report["findings"] if f["rule"] == RULE]


def simulate(path: Path, scenario: str, *args: str) -> dict[str, Any]:
    run = run_cli("simulate", "--format", "json", "--scenario", scenario, *args, str(path))
    assert run.code == 0, run.err
    (result,) = run.json()["results"]
    assert isinstance(result, dict)
    return result


def _cases() -> list[Any]:
    return [
        pytest.param(path, version, id=f"{path.stem}@{version}")
        for path in sorted(FOLDER.glob("*.yaml"))
        for version in VERSIONS
    ]


@pytest.mark.parametrize(("path", "version"), _cases())
def test_lines_and_severities_per_version(path: Path, version: str) -> None:
    got = {(f["line"], f["severity"]) for f in check(path, "--kube-version", version)}
    assert got == expected(path, version)


def test_versions_markers_agree_with_expect_markers() -> None:
    for path in sorted(FOLDER.glob("*.yaml")):
        at_default = {line for line, _ in expected(path, KUBE_VERSION)}
        marked = {line for rule, line in markers(path.read_text(encoding="utf-8")) if rule == RULE}
        assert at_default == marked, path.name


def test_gate_on_quotes_the_rolling_update_simulation() -> None:
    for path, version in ((MAJORITY, "1.35.2"), (PERCENT, "1.37")):
        (finding,) = check(path, "--kube-version", version)
        sim = simulate(path, "rolling-update", "--kube-version", version)
        assert sim["max_unavailable"] >= 2
        assert f"simulated {sim['max_unavailable']} of {sim['replicas']})" in finding["message"]
        assert "(objective max-unavailable 1;" in finding["message"] or (
            "(objective max-unavailable 2;" in finding["message"]
        )
        text = " ".join(finding["explanation"].split())
        assert f"on by default on Kubernetes {version}" in text
        assert "stops accepting writes" in text
        assert f"(scenario rolling-update, Kubernetes {version})" in finding["explanation"]


def test_percentage_is_resolved_as_the_controller_does() -> None:
    (finding,) = check(PERCENT, "--kube-version", "1.37")
    # 60% of 5 replicas = 3 (rounded down, at least 1)
    assert (
        "maxUnavailable 60% (= 3): a rolling update takes 3 of 5 down at once"
        in (finding["message"])
    )


def test_parallel_on_1_35_2_quotes_the_bad_rollout_and_names_healing_versions() -> None:
    for path in (MAJORITY, PARALLEL_DEFAULT):
        (finding,) = check(path, "--kube-version", "1.35.2")
        bad = simulate(path, "bad-rollout", "--kube-version", "1.35.2")
        assert bad["recovered"] is False and bad["manual_action_required"] is True
        msg = finding["message"]
        assert "#137409" in msg and "not repaired" in msg
        text = " ".join(finding["explanation"].split())
        for healing in ("1.25-1.34", "1.35.4", "1.36", "1.37"):  # (explanations are ASCII)
            assert healing in text
        assert "(scenario bad-rollout, Kubernetes 1.35.2)" in finding["explanation"]
    # the versions named as healing do heal in the simulation
    for version in ("1.34", "1.35.4", "1.36", "1.37"):
        assert simulate(PARALLEL_DEFAULT, "bad-rollout", "--kube-version", version)["recovered"]


def test_gate_off_says_the_field_is_ignored() -> None:
    for version in ("1.34", "1.35.4"):
        (finding,) = check(MAJORITY, "--kube-version", version)
        sim = simulate(MAJORITY, "rolling-update", "--kube-version", version)
        assert sim["max_unavailable"] == 1
        msg = finding["message"]
        ignored = (
            f"maxUnavailable 2 is ignored: MaxUnavailableStatefulSet is off on Kubernetes {version}"
        )
        assert ignored in msg
        assert "one pod at a time, not 2" in msg
        assert f"(simulated {sim['max_unavailable']} of 3)" in msg


def _config(tmp_path: Path, gate: bool) -> Path:
    config = tmp_path / "ssrisk.yaml"
    value = "true" if gate else "false"
    config.write_text(f"feature-gates:\n  MaxUnavailableStatefulSet: {value}\n", encoding="utf-8")
    return config


def test_gate_switched_on_in_the_configuration_on_1_36(tmp_path: Path) -> None:
    config = _config(tmp_path, True)
    args = ("--kube-version", "1.36", "--config", str(config))
    (finding,) = check(MAJORITY, *args)
    assert finding["severity"] == "warning"
    assert "switched on in the configuration's feature-gates" in finding["explanation"]
    # 1.36 with the gate on counts like 1.35.0 (k8s-behavior.md E.3.1): no repair after a revert
    bad = simulate(MAJORITY, "bad-rollout", *args)
    assert bad["recovered"] is False
    assert "not repaired (#137409)" in finding["message"]


def test_gate_switched_off_in_the_configuration_on_1_37(tmp_path: Path) -> None:
    config = _config(tmp_path, False)
    (finding,) = check(MAJORITY, "--kube-version", "1.37", "--config", str(config))
    assert finding["severity"] == "info"
    assert (
        "is ignored: MaxUnavailableStatefulSet is switched off in feature-gates"
        in (finding["message"])
    )
