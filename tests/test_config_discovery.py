"""Configuration found from the checked path upward (as ruff and kube-linter find theirs),
each group of inputs under its own file; ssrisk's own files are never read as manifests."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import DATA, run_cli

DISCOVERY = DATA / "gate" / "discovery"
PROJ = DISCOVERY / "proj"
OTHER = DISCOVERY / "other"


def _rules(report: dict[str, object]) -> list[tuple[str, str]]:
    findings = report["findings"]
    assert isinstance(findings, list)
    return sorted((f["rule"], f["severity"]) for f in findings)


def test_config_is_found_from_the_checked_path_not_the_working_directory(tmp_path: Path) -> None:
    # run from a directory without any configuration, as CI jobs and editors do
    run = run_cli("check", "--format", "json", str(PROJ / "deploy"), cwd=tmp_path)
    assert _rules(run.json()) == [("single-replica", "warning")]  # proj/.ssrisk.yaml applies
    assert run.code == 0  # single-replica lowered to a warning, fail-on stays error
    # the same from inside the project, naming the file
    run = run_cli("check", "--format", "json", "deploy/db.yaml", cwd=PROJ)
    assert _rules(run.json()) == [("single-replica", "warning")]


def test_inputs_under_different_configurations_each_get_their_own(tmp_path: Path) -> None:
    run = run_cli("check", "--format", "json", str(PROJ), str(OTHER), cwd=tmp_path)
    report = run.json()
    assert _rules(report) == [("single-replica", "warning"), ("update-strategy-ondelete", "info")]
    assert run.code == 1  # other/.ssrisk.yaml has fail-on: info for its own finding
    assert report["summary"]["files"] == 2
    # --config names one file for every input
    one = run_cli(
        "check", "--format", "json", "--config", str(OTHER / ".ssrisk.yaml"), str(PROJ), str(OTHER)
    )  # fmt: skip
    assert _rules(one.json()) == [("update-strategy-ondelete", "info")]


def test_every_kubernetes_version_of_the_run_is_in_the_reports(tmp_path: Path) -> None:
    """Directories whose configurations set other versions are checked at each; the JSON
    report gave only the first (``kube_version``), SARIF and JUnit too."""
    import json
    import xml.etree.ElementTree as ET

    for name, version in (("a", "1.30"), ("b", "1.34"), ("c", "1.30")):
        (tmp_path / name).mkdir()
        shutil.copy(PROJ / "deploy" / "db.yaml", tmp_path / name / "db.yaml")
        (tmp_path / name / ".ssrisk.yaml").write_text(f"kube-version: '{version}'\n")
    report = run_cli("check", "--format", "json", "a", "b", "c", cwd=tmp_path).json()
    assert (report["kube_version"], report["kube_versions"]) == ("1.30", ["1.30", "1.34"])
    one = run_cli("check", "--format", "json", "b", cwd=tmp_path).json()
    assert (one["kube_version"], one["kube_versions"]) == ("1.34", ["1.34"])
    sarif = json.loads(run_cli("check", "--format", "sarif", "a", "b", cwd=tmp_path).out)
    assert sarif["runs"][0]["properties"]["kubeVersions"] == ["1.30", "1.34"]
    junit = ET.fromstring(run_cli("check", "--format", "junit", "a", "b", cwd=tmp_path).out)
    (prop,) = [p for p in junit.iter("property") if p.get("name") == "kube_version"]
    assert prop.get("value") == "1.30, 1.34"


def test_config_and_baseline_files_are_never_read_as_manifests(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    shutil.copytree(PROJ, repo)
    run = run_cli("check", "--format", "json", "--baseline", ".ssrisk-baseline.json", ".", cwd=repo)
    summary = run.json()["summary"]
    # only deploy/db.yaml: neither .ssrisk.yaml nor the JSON baseline counts as a document
    assert (summary["files"], summary["documents"], summary["skipped_documents"]) == (1, 1, 0)
    # named explicitly (pre-commit passes a changed .ssrisk.yaml like any YAML file)
    run = run_cli("check", "--format", "json", ".ssrisk.yaml", "deploy/db.yaml", cwd=repo)
    assert run.json()["summary"]["files"] == 1 and run.json()["errors"] == []
    # an output file written into the checked tree is not read back as input either
    run_cli("check", "-o", "report.json", ".", cwd=repo)
    again = run_cli("check", "--format", "json", "-o", "report.json", ".", cwd=repo)
    assert again.code == 0 and (repo / "report.json").is_file()
    import json

    assert json.loads((repo / "report.json").read_text())["summary"]["skipped_documents"] == 0
