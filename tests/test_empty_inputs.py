"""Inputs with nothing in them are not errors: chart templates that render to comments only
(licence headers above a disabled ``{{ if }}``), empty or comment-only plain files (a notice,
an error only with ``--fail-if-empty``); object-level findings in charts point at the object,
not at a licence header."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk.renderers.helm import describe_renderer

GATE = DATA / "gate"
CHART = GATE / "licensed-chart"
EMPTY = [DATA / "bad" / "empty.yaml", DATA / "bad" / "comments-only.yaml"]

needs_helm = pytest.mark.skipif(
    not describe_renderer(), reason="needs the helm binary or helm-python-sdk"
)


@needs_helm
def test_templates_that_render_to_comments_only_are_not_errors() -> None:
    run = run_cli("check", "--format", "json", str(CHART))
    report = run.json()
    assert report["errors"] == [] and report["notices"] == [], report
    assert run.code == 0  # warnings only: the two comment-only templates changed nothing
    assert {f["path"].rsplit("/", 1)[-1] for f in report["findings"]} == {"statefulset.yaml"}


@needs_helm
def test_object_findings_in_a_chart_point_at_the_object_not_the_licence() -> None:
    template = CHART / "templates" / "statefulset.yaml"
    kind_line = template.read_text().splitlines().index("kind: StatefulSet") + 1
    report = run_cli("check", "--format", "json", str(CHART)).json()
    object_level = [
        f
        for f in report["findings"]
        if f["rule"] in ("no-automatic-failover", "ordered-ready-stall")
    ]
    assert len(object_level) == 2
    assert {(f["line"], f["column"]) for f in object_level} == {(kind_line, 1)}
    # the field-level findings still point at their fields
    (replicas,) = [f for f in report["findings"] if f["rule"] == "pdb-missing"]
    assert template.read_text().splitlines()[replicas["line"] - 1].startswith("  replicas:")
    # the chart's directory is not named like the chart: the path still says the template
    text = run_cli("check", str(CHART)).out
    assert "(from licensed/" not in text


def test_empty_and_comment_only_files_are_notices() -> None:
    run = run_cli("check", "--format", "json", *map(str, EMPTY), str(DATA / "ci" / "good.yaml"))
    report = run.json()
    assert run.code == 0 and report["errors"] == []
    empty = [n for n in report["notices"] if "empty file" in n["message"]]
    assert [(n["path"], n["level"]) for n in empty] == [(str(p), "notice") for p in EMPTY]


def test_fail_if_empty_makes_each_empty_file_an_error() -> None:
    run = run_cli(
        "check", "--format", "json", "--fail-if-empty", *map(str, EMPTY),
        str(DATA / "ci" / "good.yaml"),
    )  # fmt: skip
    report = run.json()
    assert run.code == 2
    assert [e["path"] for e in report["errors"]] == [str(p) for p in EMPTY]
    assert all("--fail-if-empty" in e["message"] for e in report["errors"])


def test_objects_but_no_statefulset_say_there_is_nothing_to_check(tmp_path: Path) -> None:
    # a chart that renders only a Deployment and its Service said "0 StatefulSet(s)" alone
    (tmp_path / "svc.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata: {name: web}\n"
        "spec: {selector: {app: web}, ports: [{port: 80}]}\n"
    )
    run = run_cli("check", "--format", "json", str(tmp_path))
    assert run.code == 0
    (notice,) = run.json()["notices"]
    assert notice["message"] == "no StatefulSet among the 1 object(s) read: nothing to check"
