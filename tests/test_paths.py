"""One spelling of every path in every output, and exclude patterns that match whatever way
the checked PATH is written (``.``, ``./x``, ``x``, absolute), in a walk and in ``--changed``.

``tests/data/gate/trial`` is a new user's repository: plain manifests (``postgres/``), a
StorageClass kept apart (``cluster/storage``), a Helm chart (``charts/redis``) and a
kustomize base with two overlays (``zookeeper/``)."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk.changed import EXCLUDED
from ssrisk.paths import Excludes, tidy
from ssrisk.renderers.helm import describe_renderer

TRIAL = DATA / "gate" / "trial"
EXCLUDE_CONFIG = DATA / "gate" / "exclude-config"

needs_renderers = pytest.mark.skipif(
    not describe_renderer() or not (shutil.which("kubectl") or shutil.which("kustomize")),
    reason="needs Helm's engine and kubectl or kustomize",
)


def _paths(run_out: str) -> list[str]:
    report = json.loads(run_out)
    return [f["path"] for f in report["findings"]] + [n["path"] for n in report["notices"]]


@pytest.mark.parametrize(
    ("given", "spelt"),
    [
        ("./postgres//pdb.yaml", "postgres/pdb.yaml"),
        ("postgres/./pdb.yaml", "postgres/pdb.yaml"),
        (".", "."),
        ("./", "."),
        ("charts/", "charts"),
        ("/srv/./repo//x.yaml", "/srv/repo/x.yaml"),
        ("../other/x.yaml", "../other/x.yaml"),  # not resolved: a link's .. is its target's
        ("-", "-"),
    ],
)
def test_tidy_spelling(given: str, spelt: str) -> None:
    assert tidy(given) == spelt


@needs_renderers
@pytest.mark.parametrize("spelling", [".", "./", "./charts", "charts", "absolute"])
def test_exclude_matches_whatever_the_path_spelling(spelling: str) -> None:
    given = str(TRIAL) if spelling == "absolute" else spelling
    everything = run_cli("check", "--format", "json", given, cwd=TRIAL)
    assert any("charts/redis/" in p for p in _paths(everything.out))
    for pattern in ("charts/redis", "./charts/redis/", "*/redis", "redis"):
        run = run_cli("check", "--format", "json", given, "--exclude", pattern, cwd=TRIAL)
        assert not any("redis" in p for p in _paths(run.out)), (pattern, _paths(run.out))


@needs_renderers
def test_exclude_is_the_same_in_a_commit() -> None:
    # the pre-commit hook passes changed files, which no walk reached: a file under an
    # excluded directory, chart or kustomization is left out the same way
    template = "charts/redis/templates/statefulset.yaml"
    checked = run_cli("check", "--changed", "--format", "json", template, cwd=TRIAL)
    assert checked.code == 1 and any(p == template for p in _paths(checked.out))
    for pattern in ("charts/redis", "./charts/redis", "*/redis/Chart.yaml", "charts"):
        run = run_cli(
            "check", "--changed", "--format", "json", "--exclude", pattern, template, cwd=TRIAL
        )
        assert run.code == 0 and _paths(run.out) == [template], (pattern, run.out)
        (notice,) = json.loads(run.out)["notices"]  # it says why, not "nothing to check"
        assert notice["message"] == EXCLUDED
    # a changed base is built by the overlays the patterns leave in only (prod is clean,
    # staging has one replica)
    base = "zookeeper/base/statefulset.yaml"
    both = run_cli("check", "--changed", "--format", "json", base, cwd=TRIAL).json()
    assert both["summary"]["statefulsets"] == 2
    assert {f.get("kustomization") for f in both["findings"]} == {"zookeeper/overlays/staging"}
    for pattern in ("*/staging", "zookeeper/overlays/staging"):
        one = run_cli(
            "check", "--changed", "--format", "json", "--exclude", pattern, base, cwd=TRIAL
        ).json()
        assert one["summary"]["statefulsets"] == 1 and one["findings"] == [], pattern
        walked = run_cli("check", "--format", "json", "--exclude", pattern, ".", cwd=TRIAL)
        assert walked.json()["summary"]["statefulsets"] == 3  # redis, postgres, zk prod
        assert not any("staging" in str(f.get("kustomization")) for f in walked.json()["findings"])


def test_configuration_patterns_are_relative_to_the_configuration_file() -> None:
    # exclude-config/.ssrisk.yaml says `exclude: [deploy/testdata]`; run from elsewhere
    # (the repository root of ssrisk, two directories up) with every spelling of the PATH
    for given, cwd in (
        (str(EXCLUDE_CONFIG), DATA),
        ("gate/exclude-config", DATA),
        ("./gate/exclude-config/deploy", DATA),
        (".", EXCLUDE_CONFIG),
    ):
        run = run_cli("check", "--format", "json", given, cwd=cwd)
        paths = _paths(run.out)
        assert any(p.endswith("deploy/db.yaml") for p in paths), (given, paths)
        assert not any("testdata" in p for p in paths), (given, paths)
    changed = run_cli(
        "check", "--changed", "--format", "json", "deploy/testdata/broken-on-purpose.yaml",
        cwd=EXCLUDE_CONFIG,
    )  # fmt: skip
    assert changed.code == 0 and changed.json()["findings"] == []


def test_excludes_anchor_relative_patterns() -> None:
    excludes = Excludes(["charts/redis"])
    assert excludes(str(TRIAL / "charts" / "redis")) is False  # not relative to the cwd
    nested = Excludes(["*/testdata/*"])
    assert nested("testdata/x.yaml") and nested("a/b/testdata/x.yaml")


@needs_renderers
def test_one_spelling_of_paths_in_every_format(tmp_path: Path) -> None:
    # `check .`: plain and rendered files alike are spelt relative to the working directory,
    # without "./", in text, json, github, junit, sarif and the baseline
    outputs = {
        "text": tmp_path / "out.txt",
        "json": tmp_path / "out.json",
        "github": tmp_path / "out.log",
        "junit": tmp_path / "out.xml",
        "sarif": tmp_path / "out.sarif",
    }
    args = [a for fmt, out in outputs.items() for a in ("--format", fmt, "--output", str(out))]
    baseline = tmp_path / "baseline.json"
    run = run_cli("check", ".", *args, cwd=TRIAL)
    assert run.code == 1, run.err
    run_cli("check", ".", "--write-baseline", str(baseline), cwd=TRIAL)

    report = json.loads(outputs["json"].read_text())
    spelt = {f["path"] for f in report["findings"]} | {n["path"] for n in report["notices"]}
    spelt |= {f["kustomization"] for f in report["findings"] if "kustomization" in f}
    assert "postgres/pdb.yaml" in spelt and "charts/redis/templates/statefulset.yaml" in spelt
    assert "zookeeper/overlays/staging" in spelt
    text = outputs["text"].read_text()
    github = outputs["github"].read_text()
    junit = ET.parse(outputs["junit"]).getroot()
    classnames = {case.get("classname") for case in junit.iter("testcase")}
    sarif = json.loads(outputs["sarif"].read_text())
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in sarif["runs"][0]["results"]
        for loc in result["locations"]
    }
    recorded = {e["path"] for e in json.loads(baseline.read_text())["findings"]}
    for path in spelt:
        assert not path.startswith("./") and "//" not in path, path
    for line in text.splitlines() + github.splitlines():
        assert "./" not in line.split(" ", 1)[0] and "file=./" not in line, line
    assert classnames and not any(c.startswith("./") for c in classnames)
    assert uris and not any(u.startswith("./") for u in uris)
    assert recorded and not any(p.startswith("./") for p in recorded)
    # the same files, whatever the directory was called
    for given in ("./", str(TRIAL) + "/"):
        again = run_cli("check", "--format", "json", given, cwd=TRIAL)
        prefix = "" if given == "./" else str(TRIAL) + "/"
        assert {p for p in _paths(again.out)} == {
            p if p.startswith("/") else prefix + p for p in _paths(outputs["json"].read_text())
        }


def test_a_name_starting_with_a_dash_keeps_its_dot_slash() -> None:
    """``-db.yaml`` pasted into a command line is an option: whether named or found in a
    walk, the file is spelt ``./-db.yaml`` (in the JSON report too)."""
    dash = DATA / "gate" / "dash"
    for given in ("./-db.yaml", "."):
        run = run_cli("check", given, cwd=dash)
        findings = [x for x in run.out.splitlines() if ".yaml:" in x]
        assert findings and all(x.startswith("./-db.yaml:") for x in findings), run.out
    report = run_cli("check", "--format", "json", "--", "-db.yaml", cwd=dash).json()
    assert {f["path"] for f in report["findings"]} == {"./-db.yaml"}
    assert tidy("-x.yaml") == tidy("./-x.yaml") == "./-x.yaml" and tidy("a/-x.yaml") == "a/-x.yaml"
