"""Hostile ``values.schema.json`` files: Helm's schema loader never opens anything outside
the chart's copy.

Helm compiles a chart's schema with a loader for ``file://``, ``http(s)://`` and ``urn:``
references, resolved against ``file:///values.schema.json``: a ``$ref`` to
``file:///etc/passwd`` (or a relative ``../`` path, or a ``$schema`` URL, or any reference
after a ``$id`` that moves the base) makes it open that file, and its error tells whether the
file exists and what it starts with. ssrisk refuses such a schema before either renderer
runs, at the schema file; a schema that only refers inside itself still validates values as
Helm does.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import time
from pathlib import Path

import pytest
from checkout import assert_clean, make_checkout
from conftest import run_cli

from ssrisk.renderers.common import RenderError
from ssrisk.renderers.helm import describe_renderer
from ssrisk.renderers.helm_schema import check_chart_schemas, check_schema_text

needs_helm = pytest.mark.skipif(not describe_renderer(), reason="needs helm or helm-python-sdk")

#: Text of the files outside the tree: none of it may appear in any output.
CANARY_TEXT = "CANARY-TEXT-5d2e"
CANARY_JSON = {"token": "CANARY-JSON-91b0", "nested": {"key": 3}}

TEMPLATE = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
data:
  replicas: {{ .Values.replicas | quote }}
"""


def _outside(tmp_path: Path) -> Path:
    """Files outside the checked tree: a text file, a JSON file and a FIFO."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "canary.txt").write_text(CANARY_TEXT + "\n")
    (outside / "canary.json").write_text(json.dumps(CANARY_JSON))
    if not (outside / "fifo").exists():
        os.mkfifo(outside / "fifo")
    return outside


def _chart(
    directory: Path, name: str, schema: object | None, values: str = "replicas: 3\n"
) -> None:
    """A chart ``name`` in ``directory`` with ``schema`` (JSON-encoded unless a string)."""
    (directory / "templates").mkdir(parents=True)
    (directory / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (directory / "values.yaml").write_text(values)
    (directory / "templates" / "cm.yaml").write_text(TEMPLATE)
    if schema is not None:
        text = schema if isinstance(schema, str) else json.dumps(schema)
        (directory / "values.schema.json").write_text(text)


def _tgz(chart_dir: Path, into: Path) -> Path:
    """``chart_dir`` packed as Helm packs a chart: ``<name>/...`` in a gzipped tar."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(chart_dir, arcname=chart_dir.name)
    target = into / f"{chart_dir.name}-0.1.0.tgz"
    target.write_bytes(buf.getvalue())
    return target


def _chart_and_sub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, canary: str
) -> tuple[Path, Path]:
    """A checkout with a chart ``chart/``, and beside it (in ``work/``, to be packed into
    the chart) a chart ``sub`` whose schema refers to the file ``canary`` outside the tree."""
    outside = _outside(tmp_path)
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    _chart(repo / "chart", "chart", {"type": "object"})
    work = tmp_path / "work"
    work.mkdir()
    _chart(work / "sub", "sub", {"properties": {"x": {"$ref": f"file://{outside}/{canary}"}}})
    return repo, work


def _check(repo: Path, *extra: str) -> tuple[dict[str, object], str]:
    run = run_cli(
        "check", "--format", "json", "--render-timeout", "5", *extra, "chart", "good.yaml", cwd=repo
    )
    assert_clean(run.out, run.err)
    assert run.code == 2, run.out + run.err
    return run.json(), run.out + run.err


def _errors(report: dict[str, object]) -> list[dict[str, object]]:
    errors = report["errors"]
    assert isinstance(errors, list)
    return errors


def _assert_nothing_outside(text: str) -> None:
    for leak in (
        CANARY_TEXT,
        "CANARY-JSON",
        "invalid character",
        "no such file",
        "failing loading",
    ):
        assert leak not in text, (leak, text)


def _attacks(outside: Path) -> dict[str, tuple[object, str, str]]:
    """``{attack: (schema, keyword, JSON pointer of the keyword)}``."""
    txt, js, fifo = (str(outside / n) for n in ("canary.txt", "canary.json", "fifo"))
    up = "../" * 12
    return {
        "absolute file URL": ({"$ref": "file://" + txt}, "$ref", "/$ref"),
        "file URL to a JSON file": (
            {"properties": {"replicas": {"$ref": "file://" + js}}},
            "$ref",
            "/properties/replicas/$ref",
        ),
        "proc environ": ({"$ref": "file:///proc/self/environ"}, "$ref", "/$ref"),
        "relative parent path": ({"$ref": up + txt.lstrip("/")}, "$ref", "/$ref"),
        "relative name": ({"allOf": [{"$ref": "other.json"}]}, "$ref", "/allOf/0/$ref"),
        "fifo": ({"$ref": "file://" + fifo}, "$ref", "/$ref"),
        "$id moves the base": (
            {"$id": "file://" + str(outside) + "/", "properties": {"a": {"$ref": "#"}}},
            "$id",
            "/$id",
        ),
        "draft-04 id": (
            {"$schema": "http://json-schema.org/draft-04/schema#", "id": "file://" + txt},
            "id",
            "/id",
        ),
        "$schema URL": ({"$schema": "file://" + txt}, "$schema", "/$schema"),
        "$schema in a subschema": (
            {"properties": {"a": {"$schema": "file://" + js}}},
            "$schema",
            "/properties/a/$schema",
        ),
        "$dynamicRef": ({"$dynamicRef": "file://" + txt}, "$dynamicRef", "/$dynamicRef"),
        "$recursiveRef": ({"$recursiveRef": "file://" + txt}, "$recursiveRef", "/$recursiveRef"),
        "http URL": ({"$ref": "http://127.0.0.1:9/x.json"}, "$ref", "/$ref"),
        "a fragment pointing into default": (
            {"$ref": "#/default", "default": {"$ref": "file://" + txt}},
            "$ref",
            "/default/$ref",
        ),
        "a fragment pointing into an unknown keyword": (
            {"$ref": "#/x%2Dy", "x-y": {"$ref": "file://" + txt}},
            "$ref",
            "/x-y/$ref",
        ),
        "a property named default": (
            {"properties": {"default": {"$ref": "file://" + txt}}},
            "$ref",
            "/properties/default/$ref",
        ),
        "duplicate key": ('{"$ref": "#", "$ref": "file://' + txt + '"}', "$ref", "/$ref"),
    }


_ATTACK_NAMES = list(_attacks(Path("/x")))


@needs_helm
@pytest.mark.parametrize("attack", _ATTACK_NAMES)
def test_a_schema_reference_outside_is_refused_at_the_schema_file(
    attack: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = _outside(tmp_path)
    schema, keyword, pointer = _attacks(outside)[attack]
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    _chart(repo / "chart", "chart", schema)
    started = time.monotonic()
    report, text = _check(repo)
    assert time.monotonic() - started < 4  # a FIFO is never opened (it would block)
    _assert_nothing_outside(text)
    (error,) = _errors(report)
    assert error["path"] == os.path.join("chart", "values.schema.json"), error
    message = str(error["message"])
    assert f"{keyword} at {pointer}" in message, message
    assert report["summary"]["statefulsets"] == 1  # type: ignore[index]  # good.yaml


@needs_helm
def test_a_subchart_directory_schema_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = _outside(tmp_path)
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    _chart(repo / "chart", "chart", {"type": "object"})
    _chart(repo / "chart" / "charts" / "sub", "sub", {"$ref": f"file://{outside}/canary.txt"})
    report, text = _check(repo)
    _assert_nothing_outside(text)
    (error,) = _errors(report)
    assert error["path"] == os.path.join("chart", "charts", "sub", "values.schema.json"), error


@needs_helm
@pytest.mark.parametrize("nested", [False, True])
def test_a_packed_subchart_schema_is_checked(
    nested: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, work = _chart_and_sub(tmp_path, monkeypatch, "canary.json")
    if nested:  # sub packed inside mid, mid packed inside the chart
        _chart(work / "mid", "mid", None)
        (work / "mid" / "charts").mkdir()
        _tgz(work / "sub", work / "mid" / "charts")
        packed = work / "mid"
    else:
        packed = work / "sub"
    (repo / "chart" / "charts").mkdir()
    archive = _tgz(packed, repo / "chart" / "charts")
    report, text = _check(repo)
    _assert_nothing_outside(text)
    (error,) = _errors(report)
    assert error["path"] == os.path.join("chart", "charts", archive.name), error
    message = str(error["message"])
    assert "sub/values.schema.json" in message and "$ref at /properties/x/$ref" in message


@needs_helm
def test_the_helm_binary_is_not_started_for_a_refused_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``helm`` on PATH the same check runs before it (a stand-in records a start)."""
    outside = _outside(tmp_path)
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    _chart(repo / "chart", "chart", {"$ref": f"file://{outside}/canary.txt"})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "started"
    helm = bin_dir / "helm"
    helm.write_text(f"#!/bin/sh\necho started > {record}\n")
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    report, _ = _check(repo)
    assert not record.exists()
    (error,) = _errors(report)
    assert error["path"] == os.path.join("chart", "values.schema.json"), error


LOCAL_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "replicas": {"$ref": "#/$defs/count"},
        "other": {"$ref": "#/definitions/name"},
        "id": {"type": "string", "default": "x"},
    },
    "$defs": {"count": {"type": "integer", "minimum": 1}},
    "definitions": {"name": {"type": "string"}},
    "default": {"id": "instance data, not a keyword", "$ref": "file:///not/a/reference"},
    "examples": [{"$ref": "http://example.com/not-a-reference"}],
}


@needs_helm
def test_a_local_schema_still_validates_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    _chart(repo / "chart", "chart", LOCAL_SCHEMA)
    run = run_cli("check", "--format", "json", "chart", "good.yaml", cwd=repo)
    assert not run.json()["errors"], run.out
    report, _ = _check(repo, "--set", "replicas=0")
    (error,) = _errors(report)
    assert error["path"] == "chart"
    message = str(error["message"])
    assert "values don't meet the specifications of the schema" in message, message
    assert "/replicas" in message and "minimum" in message, message


@needs_helm
def test_other_chart_features_read_nothing_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.Files`` holds only the copy, ``lookup`` finds nothing offline and a ``file://``
    dependency repository is not followed by a render."""
    outside = _outside(tmp_path)
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    _chart(repo / "chart", "chart", None)
    _chart(outside / "dep", "dep", None)
    rel = os.path.relpath(outside / "canary.txt", repo / "chart")
    (repo / "chart" / "templates" / "cm.yaml").write_text(
        '{{ fail (printf "abs=[%s] rel=[%s] glob=%v lookup=%v" '
        f'(.Files.Get "{outside}/canary.txt") (.Files.Get "{rel}") '
        f'(len (.Files.Glob "../**")) (lookup "v1" "Secret" "" "")) }}}}\n'
    )
    report, text = _check(repo)
    _assert_nothing_outside(text)
    (error,) = _errors(report)
    assert "abs=[] rel=[] glob=0 lookup=map[]" in str(error["message"]), error
    (repo / "chart" / "Chart.yaml").write_text(
        "apiVersion: v2\nname: chart\nversion: 0.1.0\n"
        f"dependencies:\n  - name: dep\n    version: 0.1.0\n    repository: file://{outside}/dep\n"
    )
    report, text = _check(repo)
    (error,) = _errors(report)
    assert "missing in charts/ directory: dep" in str(error["message"]), error


# --- the check itself, without a renderer --------------------------------------------------------


def test_instance_data_is_not_taken_for_references() -> None:
    check_schema_text(json.dumps(LOCAL_SCHEMA), "values.schema.json")


def test_the_quoted_reference_is_short_and_escaped() -> None:
    schema = json.dumps({"$ref": "file:///x\n::error::" + "y" * 500})
    with pytest.raises(RenderError) as info:
        check_schema_text(schema, "values.schema.json")
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    assert "::error::" not in message.replace("\\n::error::", "")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"$ref": "#", }', "not valid JSON"),
        ('{"a": NaN}', "not valid JSON"),
        ("[" * 5000 + "]" * 5000, "nested"),
        (b"\xef\xbb\xbf" + b'{"$ref": "file:///etc/passwd"}', "$ref at /$ref"),
    ],
)
def test_a_schema_that_cannot_be_checked_is_refused(text: str | bytes, words: str) -> None:
    with pytest.raises(RenderError) as info:
        check_schema_text(text, "values.schema.json")
    assert words in str(info.value), str(info.value)


def test_a_bom_and_fragment_references_are_accepted() -> None:
    check_schema_text(b"\xef\xbb\xbf" + b'{"$ref": "#/$defs/a", "$defs": {"a": true}}', "s.json")


def test_a_packed_subchart_that_inflates_without_end_is_refused(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    _chart(chart, "chart", None)
    (chart / "charts").mkdir()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as tf:
        info = tarfile.TarInfo("big/files/zero")
        size = 110 * 1024 * 1024
        info.size = size

        class Zeros(io.RawIOBase):
            left = size

            def readable(self) -> bool:
                return True

            def readinto(self, b: bytearray) -> int:  # type: ignore[override]
                n = min(len(b), self.left)
                b[:n] = bytes(n)
                self.left -= n
                return n

        tf.addfile(info, io.BufferedReader(Zeros()))
    (chart / "charts" / "big-0.1.0.tgz").write_bytes(buf.getvalue())
    started = time.monotonic()
    with pytest.raises(RenderError) as raised:
        check_chart_schemas(str(chart), str(chart))
    assert time.monotonic() - started < 5
    assert "big-0.1.0.tgz" in str(raised.value.at), raised.value.at


def _tgz_with_unreadable_header(chart_dir: Path, into: Path, hidden: str) -> Path:
    """``chart_dir`` packed with the header of member ``hidden`` written so that Python's tar
    reader takes it for the end of the archive and Go's (Helm's) reads it: its checksum field
    starts with a NUL (Go skips leading NULs and spaces in a number; Python reads 0)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for path in sorted(p for p in chart_dir.rglob("*") if p.is_file()):
            tf.add(path, arcname=f"{chart_dir.name}/{path.relative_to(chart_dir)}")
    data = bytearray(raw.getvalue())
    at = data.find(f"{chart_dir.name}/{hidden}".encode())
    header = data[at : at + 512]
    header[148:156] = b" " * 8
    header[148:156] = b"\0" + b"%06o" % sum(header) + b" "
    data[at : at + 512] = header
    target = into / f"{chart_dir.name}-0.1.0.tgz"
    target.write_bytes(gzip.compress(bytes(data)))
    return target


def test_a_packed_subchart_member_python_cannot_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schema hidden from Python's tar reader behind a header it cannot read (Helm's
    reader loaded it and followed its ``$ref`` to a file outside the tree: "failing loading
    file:///...: invalid character 'C'", the file's first byte) is refused before rendering:
    nothing may follow what Python read but the end blocks' zeros."""
    repo, work = _chart_and_sub(tmp_path, monkeypatch, "canary.txt")
    (repo / "chart" / "charts").mkdir()
    archive = _tgz_with_unreadable_header(
        work / "sub", repo / "chart" / "charts", "values.schema.json"
    )
    with tarfile.open(archive) as tf:  # what Python's reader sees: no schema
        assert not any(m.name.endswith("values.schema.json") for m in tf.getmembers())
    report, text = _check(repo)
    _assert_nothing_outside(text)
    (error,) = _errors(report)
    assert error["path"] == os.path.join("chart", "charts", archive.name), error
    assert "cannot be read as a tar header" in str(error["message"])
