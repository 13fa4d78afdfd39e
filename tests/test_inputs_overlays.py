"""Several overlays of one base: every finding names the kustomization it was built from.

``tests/data/inputs/kz`` has one base and four overlays; findings on fields no overlay
patches are all at ``kz/base/sts.yaml``. Each must say which overlay it came from in every
format, and the SARIF fingerprint and the baseline key must tell them apart. Also:
``--exclude`` leaves out a kustomization directory the way it leaves out plain files.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, run_cli, shared

from ssrisk.renderers.inputs import plan_inputs

INPUTS = DATA / "inputs"
KZ = INPUTS / "kz"
OVERLAYS = sorted(p.name for p in (KZ / "overlays").iterdir() if p.is_dir())
RULE = "readiness-probe-missing"  # reported at the container: in the base for all

needs_kustomize = pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="needs kubectl (which embeds kustomize) or kustomize on PATH",
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``ssrisk check kz`` (run from tests/data/inputs) in every format, once."""
    if shutil.which("kubectl") is None and shutil.which("kustomize") is None:
        pytest.skip("needs kubectl (which embeds kustomize) or kustomize on PATH")
    out = tmp_path_factory.mktemp("formats")
    run = run_cli(
        "check", "kz",
        "--format", "text", "--output", str(out / "r.txt"),
        "--format", "json", "--output", str(out / "r.json"),
        "--format", "sarif", "--output", str(out / "r.sarif"),
        "--format", "junit", "--output", str(out / "r.xml"),
        "--format", "github", "--output", str(out / "r.gh"),
        cwd=INPUTS,
    )  # fmt: skip
    assert run.code == 0, run.err  # warnings only
    return {
        "text": (out / "r.txt").read_text(encoding="utf-8"),
        "json": json.loads((out / "r.json").read_text(encoding="utf-8")),
        "sarif": json.loads((out / "r.sarif").read_text(encoding="utf-8")),
        "junit": ET.parse(out / "r.xml"),
        "github": (out / "r.gh").read_text(encoding="utf-8"),
    }


def test_json_findings_name_their_kustomization(reports: dict[str, Any]) -> None:
    findings = [f for f in reports["json"]["findings"] if f["rule"] == RULE]
    assert {f["path"] for f in findings} == {"kz/base/sts.yaml"}
    assert sorted(f["kustomization"] for f in findings) == [f"kz/overlays/{o}" for o in OVERLAYS]
    # every finding of a kustomize build carries it, wherever it points
    assert all("kustomization" in f for f in reports["json"]["findings"])


def test_text_names_the_overlay_unless_the_path_already_does(reports: dict[str, Any]) -> None:
    lines = [ln for ln in reports["text"].splitlines() if f" {RULE} " in ln]
    assert len(lines) == len(OVERLAYS)
    assert sorted(ln.rsplit(" (from ", 1)[1] for ln in lines) == [
        f"kz/overlays/{o})" for o in OVERLAYS
    ]
    in_overlay = [ln for ln in reports["text"].splitlines() if ln.startswith("kz/overlays/")]
    assert in_overlay and not [ln for ln in in_overlay if "(from " in ln]


def test_sarif_fingerprints_and_messages_differ_per_overlay(reports: dict[str, Any]) -> None:
    results = [r for r in reports["sarif"]["runs"][0]["results"] if r["ruleId"] == RULE]
    assert len(results) == len(OVERLAYS)
    for key in ("ssriskObjectRule/v2", "primaryLocationLineHash"):
        prints = {r["partialFingerprints"][key] for r in results}
        assert len(prints) == len(OVERLAYS)
        assert all(p.endswith(":1") for p in prints)  # told apart by the kustomization
    locations = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert locations == {"tests/data/inputs/kz/base/sts.yaml"}  # relative to the repository
    assert sorted(r["properties"]["kustomization"] for r in results) == [
        f"kz/overlays/{o}" for o in OVERLAYS
    ]
    assert all(
        r["message"]["text"].endswith(f"(from {r['properties']['kustomization']})") for r in results
    )


def test_sarif_validates_against_the_schema(reports: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads(shared("schemas", "sarif-schema-2.1.0.json").read_text("utf-8"))
    jsonschema.validate(reports["sarif"], schema)


def test_json_report_validates_against_its_schema(reports: dict[str, Any]) -> None:
    import jsonschema

    schema_file = Path(__file__).resolve().parents[1] / "ssrisk" / "schemas"
    schema = json.loads((schema_file / "report.schema.json").read_text("utf-8"))
    jsonschema.validate(reports["json"], schema)


def test_junit_and_github_tell_the_overlays_apart(reports: dict[str, Any]) -> None:
    names = [c.get("name") for c in reports["junit"].iter("testcase")]
    ours = [n for n in names if n and n.startswith("StatefulSet default/db ")]
    assert sorted(ours) == [f"StatefulSet default/db (from kz/overlays/{o})" for o in OVERLAYS]
    assert len(names) == len(set(names))
    lines = [ln for ln in reports["github"].splitlines() if f"title=ssrisk {RULE}" in ln]
    assert sorted(ln.rsplit(", from ", 1)[1] for ln in lines) == [
        f"kz/overlays/{o})" for o in OVERLAYS
    ]


@needs_kustomize
def test_baseline_keeps_overlays_apart(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    overlays = [str(KZ / "overlays" / o) for o in OVERLAYS]
    # record all overlays but the last, then check them all: only the last one is new
    run = run_cli("check", *overlays[:-1], "--write-baseline", str(baseline))
    assert run.code == 0, run.err
    entries = json.loads(baseline.read_text(encoding="utf-8"))["findings"]
    recorded = [e for e in entries if e["rule"] == RULE]
    assert len(recorded) == len(OVERLAYS) - 1
    recorded_from = sorted(Path(e["kustomization"]).name for e in recorded)
    assert recorded_from == OVERLAYS[:-1] and all(e["count"] == 1 for e in recorded)
    report = run_cli("check", "--format", "json", "--baseline", str(baseline), *overlays).json()
    new = {f["kustomization"] for f in report["findings"]}
    assert new == {overlays[-1]}
    assert report["summary"]["baselined"] == sum(e["count"] for e in entries)
    assert len(report["findings"]) > 0


@needs_kustomize
def test_baseline_entries_without_a_kustomization_still_match(tmp_path: Path) -> None:
    """Baselines written before the kustomization was recorded keep working."""
    baseline = tmp_path / "baseline.json"
    overlays = [str(KZ / "overlays" / o) for o in OVERLAYS]
    assert run_cli("check", *overlays, "--write-baseline", str(baseline)).code == 0
    doc = json.loads(baseline.read_text(encoding="utf-8"))
    merged: dict[tuple[str, str, str], int] = {}
    for e in doc["findings"]:
        key = (e["path"], e["object"], e["rule"])
        merged[key] = merged.get(key, 0) + e["count"]
    doc["findings"] = [
        {"path": p, "object": o, "rule": r, "count": n} for (p, o, r), n in merged.items()
    ]
    baseline.write_text(json.dumps(doc), encoding="utf-8")
    report = run_cli("check", "--format", "json", "--baseline", str(baseline), *overlays).json()
    assert report["findings"] == [] and report["summary"]["baselined"] > len(merged)


# -- --exclude ------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``ex2/``: the kz base and overlays plus plain YAML in ``plain/sub`` (the same files a
    user would have), so kustomize directories and plain directories can be compared."""
    root = tmp_path / "ex2"
    shutil.copytree(KZ, root)
    (root / "plain" / "sub").mkdir(parents=True)
    shutil.copy(KZ / "base" / "sts.yaml", root / "plain" / "sub" / "sts.yaml")
    return root


def _planned(root: Path, *excludes: str) -> list[str]:
    plan = plan_inputs([str(root)], excludes)
    return sorted(
        Path(p).relative_to(root).as_posix()
        for p in plan.units.get("kustomization", []) + plan.files
    )


@pytest.mark.parametrize(
    "exclude",
    ["*/p2/*", "*/p2", "p2", "*/overlays/p2/kustomization.yaml", "*/p2/kustomization.yaml"],
)
def test_exclude_leaves_out_a_kustomization_like_plain_files(tree: Path, exclude: str) -> None:
    everything = _planned(tree)
    assert "overlays/p2" in everything and "plain/sub/sts.yaml" in everything
    planned = _planned(tree, exclude)
    assert "overlays/p2" not in planned
    assert set(everything) - set(planned) == {"overlays/p2"}
    # no file of the left-out overlay is read as plain YAML either
    assert not [p for p in planned if p.startswith("overlays/p2/")]


def test_exclude_glob_works_the_same_for_plain_directories(tree: Path) -> None:
    assert "plain/sub/sts.yaml" not in _planned(tree, "*/sub/*")
    assert "plain/sub/sts.yaml" not in _planned(tree, "sub")
    # a glob that matches only some files of a kustomization leaves it in (it is one input)
    assert "overlays/p2" in _planned(tree, "*/p2/replicas.yaml")


def test_exclude_all_overlays_checks_the_base_alone(tree: Path) -> None:
    assert _planned(tree, "*/overlays/*") == ["base", "plain/sub/sts.yaml"]


@needs_kustomize
def test_excluded_overlay_is_not_rendered(tree: Path) -> None:
    report = run_cli("check", "--format", "json", str(tree), "--exclude", "*/p2/*").json()
    built = {Path(f["kustomization"]).name for f in report["findings"] if "kustomization" in f}
    assert built == set(OVERLAYS) - {"p2"}
    assert report["summary"]["statefulsets"] == len(OVERLAYS) - 1 + 1  # + plain/sub
