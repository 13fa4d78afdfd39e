"""Charts configured with their own release, namespace, values and variants (`charts:` in
.ssrisk.yaml): each variant is rendered and checked on its own, named in every output, and a
value's finding points at the values file that sets it."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, run_cli

REPO = DATA / "chart-variants"
STAGING_VALUES = "environments/staging/db-values.yaml"
PROD_VALUES = "environments/prod/db-values.yaml"

pytest.importorskip("helm_python")  # the charts are rendered with Helm's embedded engine


def _json(*args: str, cwd: Path = REPO) -> tuple[int, dict[str, Any]]:
    run = run_cli("check", "--format", "json", *args, cwd=cwd)
    assert run.code in (0, 1), run.out + run.err
    return run.code, run.json()


def _shown(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if not f.get("folded_into")]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(REPO, repo)
    (repo / ".git").mkdir()
    return repo


def test_each_variant_is_rendered_and_checked_on_its_own() -> None:
    _code, report = _json(".")
    sets = {
        (f["object"]["namespace"], f["object"]["name"], f.get("variant")) for f in _shown(report)
    }
    # release `orders` in namespace `data`, once per variant
    assert {s[:2] for s in sets} == {("data", "orders-db")}
    assert {s[2] for s in sets} == {"staging", "prod"}
    assert report["summary"]["statefulsets"] == 2
    # staging's values file sets one replica: its finding is at that value's line
    (single,) = [f for f in _shown(report) if f["rule"] == "single-replica"]
    assert (single["path"], single["line"], single["variant"]) == (STAGING_VALUES, 2, "staging")
    # the copies in two variants are environments, not two objects of one release
    assert not [n for n in report["notices"] if "Helm cannot install both" in n["message"]]


def test_every_output_names_the_variant(tmp_path: Path) -> None:
    text = run_cli("check", ".", cwd=REPO).out
    assert f"{STAGING_VALUES}:2:1: error single-replica" in text
    assert "(from db/templates/statefulset.yaml, variant staging)" in text
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    formats = ("--format", "sarif", "-o", str(sarif), "--format", "junit", "-o", str(junit))
    assert run_cli("check", *formats, ".", cwd=REPO).code == 1
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    variants = {r["properties"].get("variant") for r in results}
    assert variants == {"staging", "prod"}
    # the same template line in two variants: two alerts, told apart by their fingerprints
    stalls = [r for r in results if r["ruleId"] == "ordered-ready-stall"]
    assert len(stalls) == 2
    assert len({json.dumps(r["partialFingerprints"], sort_keys=True) for r in stalls}) == 2
    names = sorted(c.get("name", "") for c in ET.parse(junit).getroot().iter("testcase"))
    assert names == [
        "StatefulSet data/orders-db (from variant prod)",
        "StatefulSet data/orders-db (from variant staging)",
    ]


def test_a_changed_values_file_checks_its_variant_only(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    values = repo / PROD_VALUES
    values.write_text(values.read_text().replace("replicas: 3", "replicas: 2"))
    code, report = _json("--changed", PROD_VALUES, cwd=repo)
    assert code == 1
    assert {f.get("variant") for f in report["findings"]} == {"prod"}
    (quorum,) = [f for f in _shown(report) if f["rule"] == "quorum-replicas"]
    assert (quorum["path"], quorum["line"], quorum["severity"]) == (PROD_VALUES, 1, "error")
    assert quorum["facts"]["replicas"] == 2


def test_a_changed_configuration_checks_its_whole_tree() -> None:
    _code, whole = _json(".")
    _code, changed = _json("--changed", ".ssrisk.yaml")
    assert changed["summary"] == whole["summary"]


def test_a_baseline_records_the_variant(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    run_cli("check", "--write-baseline", "b.json", ".", cwd=repo)
    entries = json.loads((repo / "b.json").read_text())["findings"]
    assert {e.get("variant") for e in entries} == {"staging", "prod"}
    code, report = _json("--baseline", "b.json", ".", cwd=repo)
    assert code == 0 and report["findings"] == []


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("charts: {environments: {}}\n", "not a Helm chart directory"),
        ("charts: {../../..: {}}\n", "outside the checked tree"),
        ("charts: {charts/db: {values: [../../../../x.yaml]}}\n", "outside the checked tree"),
        ("charts: {charts/db: {variants: {'-bad': {}}}}\n", "-bad"),
        ("charts: {charts/db: {release: Orders}}\n", "Orders"),
        ("charts: {charts/db: {set: {replicas: [1]}}}\n", "replicas"),
        ("charts: {charts/db: {relase: x}}\n", "unknown key 'relase': did you mean 'release'?"),
        ("charts: {charts/db: {values: [nope.yaml]}}\n", "values file 'nope.yaml': no such file"),
        ("charts: {charts/db: {}, ./charts/db/: {}}\n", "is the directory 'charts/db' names too"),
        ("charts: {charts/db/charts/sub: {}}\n", "is a subchart of 'charts/db', which renders it"),
    ],
)
def test_configuration_mistakes_are_named(tmp_path: Path, config: str, message: str) -> None:
    repo = _repo(tmp_path)
    sub = repo / "charts" / "db" / "charts" / "sub"
    sub.mkdir(parents=True)
    (sub / "Chart.yaml").write_text("apiVersion: v2\nname: sub\nversion: 0.1.0\n")
    (repo / ".ssrisk.yaml").write_text(config)
    run = run_cli("check", ".", cwd=repo)
    assert run.code == 2 and message in run.err and ".ssrisk.yaml:1:" in run.err, run.err


def test_set_values_and_command_line_values_come_after_the_variants(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / ".ssrisk.yaml").write_text(
        "charts:\n  charts/db:\n    set: {replicas: 5}\n"
        "    variants:\n      one: {set: {replicas: 1}}\n      five: {}\n"
    )
    (repo / "two.yaml").write_text("replicas: 2\n")
    _code, report = _json(".", cwd=repo)
    replicas = {
        f["variant"]: f["facts"]["replicas"]
        for f in report["findings"]
        if f["rule"] == "single-replica"
    }
    assert replicas == {"one": 1}  # the variant's set after the chart's; five keeps 5
    # a value the configuration's `set` gives is reported at its line there
    (single,) = [f for f in report["findings"] if f["rule"] == "single-replica"]
    config = (repo / ".ssrisk.yaml").read_text().splitlines()
    line = next(n for n, t in enumerate(config, 1) if "one: {set: {replicas: 1}}" in t)
    assert (single["path"], single["line"]) == (".ssrisk.yaml", line)
    _code, report = _json("--set", "replicas=2", ".", cwd=repo)
    quorum = [f for f in report["findings"] if f["rule"] == "quorum-replicas"]
    assert {f["variant"] for f in quorum} == {"one", "five"}  # --set replicas=2 wins over both
    # (a value of the command line has no file: the template's line)
    assert {f["path"] for f in quorum} == {"charts/db/templates/statefulset.yaml"}


def test_simulate_names_the_variant_and_the_namespace_it_is_applied_in(tmp_path: Path) -> None:
    results = run_cli("simulate", "--format", "json", ".", cwd=REPO).json()["results"]
    assert [(r["object"]["namespace"], r.get("variant")) for r in results] == [
        ("data", "staging"),
        ("data", "prod"),
    ]
    text = run_cli("simulate", ".", cwd=REPO).out
    assert "charts/db/templates/statefulset.yaml:2 (variant prod): data/orders-db" in text
    # a manifest that names no namespace is simulated in --namespace's, as check reports it
    manifest = tmp_path / "db.yaml"
    manifest.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n"
        "  serviceName: db\n  selector: {matchLabels: {app: db}}\n"
        "  template:\n    metadata: {labels: {app: db}}\n"
        "    spec: {containers: [{name: db, image: nginx}]}\n"
    )
    named = run_cli("simulate", "--format", "json", "--namespace", "foo", str(manifest)).json()
    assert [r["object"]["namespace"] for r in named["results"]] == ["foo"]


def test_a_chart_file_named_on_the_command_line_checks_its_chart() -> None:
    _code, by_file = _json("charts/db/templates/statefulset.yaml")
    _code, whole = _json("charts/db")
    assert by_file["summary"]["statefulsets"] == whole["summary"]["statefulsets"] == 2
    assert [f["rule"] for f in _shown(by_file)] == [f["rule"] for f in _shown(whole)]
    (said,) = [n for n in by_file["notices"] if "part of chart" in n["message"]]
    assert said["message"] == "part of chart charts/db: checked as the chart renders it"


def test_a_values_file_named_as_a_path_checks_the_variant_that_reads_it() -> None:
    _code, report = _json(PROD_VALUES)
    assert {f.get("variant") for f in report["findings"]} == {"prod"}
    assert report["summary"]["statefulsets"] == 1
    (said,) = [n for n in report["notices"] if "values of chart" in n["message"]]
    assert (
        said["message"]
        == "values of chart charts/db, variant prod: checked as that variant renders it"
    )


def test_values_files_are_values_not_manifests(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    values = repo / PROD_VALUES
    # a values file that is not a mapping: one error, at the file, from its chart's render
    values.write_text("- a\n- b\n")
    run = run_cli("check", "--format", "json", ".", cwd=repo)
    errors = [(e["path"], e["line"]) for e in run.json()["errors"]]
    assert run.code == 2 and errors == [(PROD_VALUES, 1)]
    assert "a list, not a mapping of values" in run.json()["errors"][0]["message"]
    # broken YAML: at its line, once (the walk does not read it as a manifest too)
    values.write_text("replicas: 3\n  bad: [\n")
    run = run_cli("check", "--format", "json", ".", cwd=repo)
    assert [(e["path"], e["line"]) for e in run.json()["errors"]] == [(PROD_VALUES, 2)]
