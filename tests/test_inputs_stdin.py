"""``-`` reads a YAML stream from standard input (``helm template ... | ssrisk check -``).

Findings give the stream position and, from Helm's ``# Source:`` comments, the template.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from conftest import DATA, run_process

from ssrisk.renderers.inputs import load_stdin

STREAM = DATA / "inputs" / "stdin" / "helm-template-output.yaml"


def _stream_line(text: str) -> int:
    for number, line in enumerate(STREAM.read_text(encoding="utf-8").splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(text)


def test_findings_name_stream_position_and_template() -> None:
    run = run_process("check", "--format", "json", "-", stdin=STREAM.read_text(encoding="utf-8"))
    report = json.loads(run.out)
    (f,) = [f for f in report["findings"] if f["rule"] == "single-replica"]
    assert f["path"] == "<stdin>"
    assert f["line"] == _stream_line("replicas: 1") and f["column"] == 3
    assert f["source_template"] == "db/templates/statefulset.yaml"
    # the ServiceMonitor (a custom resource) is skipped quietly and counted
    assert report["summary"]["skipped_documents"] == 1
    assert report["errors"] == [] and run.code == 1


def test_text_output_names_the_template() -> None:
    run = run_process("check", "-", stdin=STREAM.read_text(encoding="utf-8"))
    line = next(ln for ln in run.out.splitlines() if " single-replica " in ln)
    assert line.startswith(f"<stdin>:{_stream_line('replicas: 1')}:3: error single-replica ")
    assert line.endswith("(from db/templates/statefulset.yaml)")


def test_pdb_from_the_stream_is_in_the_inventory() -> None:
    lf = load_stdin("default", io.BytesIO(STREAM.read_bytes()))
    kinds = sorted(o.kind for o in lf.objects)
    assert kinds == ["PodDisruptionBudget", "StatefulSet"]
    pdb = next(o for o in lf.objects if o.kind == "PodDisruptionBudget")
    assert pdb.pos("spec", "minAvailable").source == "db/templates/pdb.yaml"


def test_stdin_without_source_comments_and_bad_bytes() -> None:
    plain = (DATA / "inputs" / "repo" / "plain" / "postgres.yaml").read_bytes()
    lf = load_stdin("ns", io.BytesIO(plain))
    (sts,) = lf.objects
    assert sts.namespace == "ns" and sts.pos("spec", "replicas").source is None
    bad = load_stdin("ns", io.BytesIO(b"kind: \xff\xfe\x00x"))
    assert bad.objects == [] and bad.errors and bad.errors[0].path == "<stdin>"


def test_empty_stdin_is_a_notice_unless_fail_if_empty() -> None:
    # `helm template ... | ssrisk check -` of a chart that renders nothing
    run = run_process("check", "--format", "json", "-", stdin="# Source: c/templates/x.yaml\n")
    report = json.loads(run.out)
    assert report["errors"] == [] and run.code == 0
    assert ("<stdin>", "notice") in [(n["path"], n["level"]) for n in report["notices"]]
    run = run_process("check", "--format", "json", "--fail-if-empty", "-", stdin="")
    assert "<stdin>" in [e["path"] for e in json.loads(run.out)["errors"]]
    assert run.code == 2


def test_github_and_sarif_place_stream_findings_at_their_template_or_at_no_file(
    tmp_path: Path,
) -> None:
    text = STREAM.read_text(encoding="utf-8")
    sources = {
        line.split("# Source: ", 1)[1].strip() for line in text.splitlines() if "# Source: " in line
    }
    # the chart the stream was rendered from, checked out below the working directory
    for source in sources:
        (tmp_path / "charts" / source).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "charts" / source).write_text("# a template\n", encoding="utf-8")
    github = run_process("check", "--format", "github", "-", stdin=text, cwd=tmp_path).out
    annotations = [ln for ln in github.splitlines() if ln.startswith("::")]
    assert annotations and "<stdin>" not in github and "%3Cstdin%3E" not in github
    assert all(",line=" not in ln for ln in annotations if "file=charts/" in ln)
    sarif = json.loads(run_process("check", "--format", "sarif", "-", stdin=text, cwd=tmp_path).out)
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for r in sarif["runs"][0]["results"]
        for loc in r["locations"]
        if "physicalLocation" in loc
    }
    assert uris and all(u.startswith("charts/") for u in uris)
    # without the chart: no file at all, the object only
    bare = json.loads(run_process("check", "--format", "sarif", "-", stdin=text).out)
    for result in bare["runs"][0]["results"]:
        (location,) = result["locations"]
        assert "physicalLocation" not in location and location["logicalLocations"]


def test_stream_input_errors_name_no_file_in_github_and_sarif() -> None:
    bad = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\nspec:\n  replicas: abc\n"
    github = run_process("check", "--format", "github", "-", stdin=bad).out
    (error,) = [ln for ln in github.splitlines() if ln.startswith("::error")]
    assert "file=" not in error and "<stdin>:5: StatefulSet x: spec.replicas" in error
    sarif = json.loads(run_process("check", "--format", "sarif", "-", stdin=bad).out)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    (note,) = [n for n in notes if n["level"] == "error"]
    assert "locations" not in note and note["message"]["text"].startswith("<stdin>:5: ")
