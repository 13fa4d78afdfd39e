"""Hostile and odd inputs (issue 8): every one gets a clear answer, nothing crashes or hangs.

Each input is a file, as a user would give it: small ones are in ``tests/data/robust`` (and
``tests/data/bad``); the 100 MB file, the deep nesting, links, pipes and unreadable files are
made in ``tmp_path`` at test time. For every input that cannot be read the error names the file
and, where known, the line and column, in every output format, the run exits 2, and the good
file given beside it is still checked.
"""

from __future__ import annotations

import html
import json
import os
import re
import resource
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import DATA, ROOT, run_cli, run_process, ssrisk_executable

from ssrisk.loading import MAX_FILE_BYTES, load_path
from ssrisk.validation import MAX_NODES, to_json_value, validate_object

ROBUST = DATA / "robust"
BAD = DATA / "bad"
GOOD = ROBUST / "good.yaml"
FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")


#: Position not pinned: the nesting limit that stops a deep file is libyaml's (1000 levels).
ANY = -1


@dataclass(frozen=True)
class Bad:
    """A file that must be an input error at ``line``:``column`` whose message has ``words``
    (``None``: the error has no line or column; ``ANY``: not pinned)."""

    path: Path
    line: int | None
    column: int | None
    words: str


#: The issue's table of unreadable inputs that can live in the repository.
BAD_FILES = [
    Bad(ROBUST / "bad-indentation.yaml", 7, 16, "YAML syntax"),
    Bad(ROBUST / "tabs.yaml", 4, 1, "cannot start any token"),
    Bad(ROBUST / "unclosed-quote.yaml", 7, 1, "quoted scalar"),
    Bad(ROBUST / "unclosed-bracket.yaml", 6, 5, "flow sequence"),
    Bad(ROBUST / "alias-bomb-statefulset.yaml", 2, 1, f"more than {MAX_NODES} values"),
    Bad(ROBUST / "recursive-alias.yaml", 7, 12, "recursive YAML alias"),  # (at the alias)
    Bad(ROBUST / "python-tags.yaml", 7, 10, "is not allowed"),
    Bad(ROBUST / "wrong-type.json", 7, 5, 'spec.replicas: expected integer, got string "three"'),
    Bad(
        ROBUST / "replicas-string.yaml", 7, 3, 'spec.replicas: expected integer, got string "three"'
    ),
    Bad(ROBUST / "replicas-negative.yaml", 7, 3, "spec.replicas: -1 must be >= 0"),
    Bad(ROBUST / "replicas-int32-overflow.yaml", 7, 3, "maximum of 2147483647"),
    Bad(ROBUST / "replicas-nan.yaml", 7, 3, "no JSON form"),
    Bad(
        ROBUST / "grace-period-string.yaml",
        16,
        7,
        'terminationGracePeriodSeconds: expected integer, got string "30"',
    ),
    Bad(ROBUST / "pod-management-policy-enum.yaml", 8, 3, "'Sequential' is not OrderedReady"),
    Bad(BAD / "binary.yaml", None, None, "binary file"),
    Bad(BAD / "latin1.yaml", 6, None, "not valid UTF-8"),
]


def _generated_bad(tmp: Path) -> list[Bad]:
    """Inputs too big, too odd or too machine-specific to commit, made as files in ``tmp``."""
    out = []
    deep = tmp / "deep.yaml"
    depth = 5000
    deep.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: deep\n  annotations:\n"
        "    x: " + "[" * depth + "]" * depth + "\n"
    )
    out.append(Bad(deep, ANY, ANY, "nesting depth"))
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: deep", "data:"]
    lines += ["  " * i + f"k{i}:" for i in range(1, 3000)]
    deep_block = tmp / "deep-block.yaml"
    deep_block.write_text("\n".join(lines) + "\n")
    out.append(Bad(deep_block, ANY, ANY, "nesting depth"))
    huge = tmp / "huge.yaml"
    with open(huge, "wb") as fh:  # 100 MB, sparse: costs no disk and no time
        fh.truncate(100 * 1024 * 1024)
    out.append(Bad(huge, None, None, f"larger than the {MAX_FILE_BYTES} byte limit"))
    return out


def _scanned_dir(tmp: Path) -> tuple[Path, list[Bad]]:
    """A directory with a symlink loop, a dangling link, a pipe, a directory named x.yaml and
    (when not running as root, who reads everything) an unreadable file, beside a good file."""
    root = tmp / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "good.yaml").write_bytes(GOOD.read_bytes())
    (root / "sub" / "loop").symlink_to(root)  # a link loop: never followed
    (root / "x.yaml").mkdir()  # a directory named like a manifest: not a file to read
    (root / "dangling.yaml").symlink_to(root / "nowhere.yaml")
    os.mkfifo(root / "pipe.yaml")  # reading it would block forever
    bad = [
        Bad(root / "dangling.yaml", None, None, "cannot read file"),
        Bad(root / "pipe.yaml", None, None, "not a regular file (FIFO)"),
    ]
    if os.geteuid() != 0:
        locked = root / "locked.yaml"
        locked.write_bytes(GOOD.read_bytes())
        locked.chmod(0)
        bad.append(Bad(locked, None, None, "cannot read file"))
    return root, bad


# --- reading the errors back out of every output format --------------------------------------

_TEXT_ERROR = re.compile(
    r"^(?P<path>.+?)(?::(?P<line>\d+))?(?::(?P<col>\d+))?: error: (?P<msg>.*)$"
)


def _errors(fmt: str, out: str) -> list[tuple[str, int | None, str]]:
    """``(path, line, message)`` of every input error in the output of ``--format fmt``."""
    found: list[tuple[str, int | None, str]] = []
    if fmt == "json":
        return [(e["path"], e["line"], e["message"]) for e in json.loads(out)["errors"]]
    if fmt == "sarif":
        (run,) = json.loads(out)["runs"]
        for note in run["invocations"][0].get("toolExecutionNotifications", []):
            if note["level"] != "error":
                continue
            loc = note["locations"][0]["physicalLocation"]
            line = loc.get("region", {}).get("startLine")
            found.append((loc["artifactLocation"]["uri"], line, note["message"]["text"]))
        return found
    if fmt == "github":
        for line in out.splitlines():
            if line.startswith("::error "):
                props, _, msg = line[len("::error ") :].partition("::")
                fields = dict(p.split("=", 1) for p in props.split(","))
                found.append(
                    (fields["file"], int(fields["line"]) if "line" in fields else None, msg)
                )
        return found
    lines = out.splitlines()
    if fmt == "junit":
        root = ET.fromstring(out)
        lines = [e.get("message", "") for e in root.iter("error")]
    if fmt == "markdown":  # a list item each, escaped as Markdown text
        lines = [html.unescape(x[2:]) for x in lines if x.startswith("- ")]
    for line in lines:
        m = _TEXT_ERROR.match(line)
        if m:
            ln = int(m["line"]) if m["line"] else None
            found.append((m["path"], ln, m["msg"]))
    return found


def _good_file_checked(fmt: str, out: str) -> bool:
    """Whether the findings of good.yaml are in the output (it has several warnings)."""
    if fmt == "json":
        return any(f["path"].endswith("good.yaml") for f in json.loads(out)["findings"])
    if fmt == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        return any(
            loc["physicalLocation"]["artifactLocation"]["uri"].endswith("good.yaml")
            for r in results
            for loc in r["locations"]
        )
    if fmt == "junit":
        return any(
            (c.get("classname") or "").endswith("good.yaml")
            and (c.find("failure") is not None or c.find("system-out") is not None)
            for c in ET.fromstring(out).iter("testcase")
        )
    if fmt == "github":
        return any(x.startswith("::warning file=") and "good.yaml" in x for x in out.splitlines())
    if fmt == "markdown":  # a table row per finding: | warning | `rule` | path:line:col | ...
        return any(re.match(r"^\| warning \| .*good\.yaml:\d+:\d+ ", x) for x in out.splitlines())
    return any(re.match(r"^.*good\.yaml:\d+:\d+: warning ", x) for x in out.splitlines())


def _assert_reported(fmt: str, out: str, expected: list[Bad]) -> None:
    errors = _errors(fmt, out)
    for bad in expected:
        mine = [e for e in errors if e[0].endswith(bad.path.name)]
        assert mine, f"{fmt}: no error for {bad.path.name} in {errors}"
        assert any(bad.words in msg for _, _, msg in mine), (fmt, bad, mine)
        if bad.line != ANY:
            assert any(line == bad.line for _, line, _ in mine), (fmt, bad, mine)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_unreadable_input_is_an_error_in_every_format(fmt: str, tmp_path: Path) -> None:
    expected = [*BAD_FILES, *_generated_bad(tmp_path)]
    started = time.monotonic()
    run = run_cli("check", "--format", fmt, *[str(b.path) for b in expected], str(GOOD))
    assert time.monotonic() - started < 30, "hostile inputs must not slow the run down"
    assert run.code == 2, run.err
    assert "Traceback" not in run.out + run.err
    _assert_reported(fmt, run.out, expected)
    assert _good_file_checked(fmt, run.out), f"{fmt}: good.yaml was not checked"


def test_error_positions_and_messages_in_json(tmp_path: Path) -> None:
    expected = [*BAD_FILES, *_generated_bad(tmp_path)]
    report = run_cli("check", "--format", "json", *[str(b.path) for b in expected]).json()
    by_file: dict[str, list[dict[str, object]]] = {}
    for e in report["errors"]:
        by_file.setdefault(Path(str(e["path"])).name, []).append(e)
    for bad in expected:
        errs = by_file.get(bad.path.name, [])
        assert len(errs) == 1, (bad.path.name, errs)  # one clear error, not a cascade
        (err,) = errs
        if bad.line != ANY:
            assert (err["line"], err.get("column")) == (bad.line, bad.column), (bad, err)
        assert bad.words in str(err["message"]), (bad, err)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_scanned_directory_survives_links_pipes_and_unreadable_files(
    fmt: str, tmp_path: Path
) -> None:
    root, expected = _scanned_dir(tmp_path)
    started = time.monotonic()
    run = run_cli("check", "--format", fmt, str(root))
    assert time.monotonic() - started < 30
    assert run.code == 2, run.err
    _assert_reported(fmt, run.out, expected)
    assert _good_file_checked(fmt, run.out)
    assert "x.yaml" not in " ".join(e[0] for e in _errors(fmt, run.out))


# --- inputs that are odd but readable --------------------------------------------------------


def _findings(*paths: Path) -> list[tuple[str, int, int]]:
    report = run_cli("check", "--format", "json", *map(str, paths)).json()
    assert report["errors"] == [], report["errors"]
    return [(f["rule"], f["line"], f["column"]) for f in report["findings"]]


def test_crlf_and_utf16_files_read_like_the_utf8_original() -> None:
    crlf, utf16 = ROBUST / "crlf.yaml", ROBUST / "utf16-bom.yaml"
    # the files must reach the test as written (no line-ending or encoding conversion)
    assert b"\r\n" in crlf.read_bytes()
    assert utf16.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    expected = _findings(GOOD)
    assert expected
    assert _findings(crlf) == expected
    assert _findings(utf16) == expected


def test_a_byte_order_mark_after_a_separator_reads_as_kubectl_reads_it(tmp_path: Path) -> None:
    """Files joined with ``cat``, the later one saved with a BOM: kubectl reads the document
    after ``---`` without it (go-yaml skips a BOM at the start of each document it is
    handed), so its findings are those of the file alone, at the same lines; a BOM in the
    middle of a document stays what the parser makes of it."""
    good = GOOD.read_text(encoding="utf-8")
    lines = good.count("\n")
    joined = tmp_path / "joined.yaml"
    joined.write_bytes(good.encode() + b"---\n\xef\xbb\xbf" + good.encode())
    first = _findings(GOOD)
    assert first
    shifted = [(rule, line + lines + 1, col) for rule, line, col in first]
    assert sorted(_findings(joined)) == sorted(first + shifted)
    inner = tmp_path / "inner.yaml"
    inner.write_bytes(b"apiVersion: v1\nkind: ConfigMap\n\xef\xbb\xbfmetadata: {name: a}\n")
    report = run_cli("check", "--format", "json", str(inner)).json()
    assert [e["line"] for e in report["errors"]] == [3]


def test_legitimate_anchors_and_merge_keys() -> None:
    path = ROBUST / "merge-keys.yaml"
    lf = load_path(str(path))
    assert lf.errors == [] and [n for n in lf.notices if n.level == "warning"] == []
    (sts,) = lf.objects
    containers = sts.get("spec", "template", "spec", "containers")
    assert [(c["name"], c["image"]) for c in containers] == [
        ("web", "nginx:1.27"),
        ("sidecar", "nginx:1.27"),  # the merged key is overridden, not a duplicate
    ]
    assert sts.get("spec", "template", "metadata", "labels") == {
        "app": "web",
        "tier": "db",
        "version": "1",
    }
    assert validate_object(sts, "1.37").errors == []
    run = run_cli("check", "--format", "json", "--fail-on", "info", str(path))
    assert run.code == 1  # single-replica (a note: the pods declare no port and no claim)
    assert ("single-replica", 15, 3) in [
        (f["rule"], f["line"], f["column"]) for f in run.json()["findings"]
    ]


@pytest.mark.parametrize(
    "path",
    [
        ROBUST / "null-document.yaml",
        ROBUST / "alias-bomb-configmap.yaml",
        DATA / "load" / "sts.json",
    ],
)
def test_readable_files_are_not_errors(path: Path) -> None:
    started = time.monotonic()
    run = run_cli("check", "--format", "json", str(path))
    assert time.monotonic() - started < 10
    assert run.code in (0, 1) and run.json()["errors"] == []


@pytest.mark.parametrize(
    ("name", "line", "column", "words"),
    [
        ("missing-template.yaml", 5, 1, "spec.template: required field is missing"),
        ("missing-selector.yaml", 5, 1, "spec.selector: required field is missing"),
        ("unknown-field.yaml", 16, 7, "spec.template.spec.replicas: unknown field"),
    ],
)
def test_incomplete_objects_and_unknown_fields_are_warnings(
    name: str, line: int, column: int, words: str
) -> None:
    """kubectl rejects these too, but the object still says what it means: ssrisk warns and
    checks it (a kustomize patch is an incomplete object; the real-world corpus has both)."""
    report = run_cli("check", "--format", "json", str(ROBUST / name)).json()
    assert report["errors"] == []
    warnings = [n for n in report["notices"] if n["level"] == "warning"]
    assert [(n["line"], n["column"]) for n in warnings if words in n["message"]] == [
        (line, column)
    ], warnings
    assert report["summary"]["statefulsets"] == 1


def test_the_objects_around_a_statefulset_are_validated_too() -> None:
    path = ROBUST / "surroundings-wrong-types.yaml"
    report = run_cli("check", "--format", "json", str(path), str(GOOD)).json()
    got = sorted((e["line"], e["column"], e["message"]) for e in report["errors"])
    assert [(line, col) for line, col, _ in got] == [(6, 3), (17, 3), (26, 1)]
    assert "PodDisruptionBudget db: spec.minAvailable: expected integer or string" in got[0][2]
    assert "Service db: spec.ports: expected array" in got[1][2]
    assert "StorageClass fast: allowVolumeExpansion: expected boolean" in got[2][2]


@pytest.mark.parametrize(
    ("kube_version", "expected"),
    [
        ("1.25", ["spec.serviceName: required", "spec.ordinals: unknown field"]),
        ("1.26", ["spec.serviceName: required"]),
        ("1.32.4", ["spec.serviceName: required"]),
        ("1.33", []),
        ("1.37", []),
    ],
)
def test_schemas_follow_the_selected_kube_version(kube_version: str, expected: list[str]) -> None:
    """spec.ordinals is in the API from 1.26; serviceName is optional in the schema from 1.33."""
    path = ROBUST / "version-dependent.yaml"
    report = run_cli("check", "--format", "json", "--kube-version", kube_version, str(path)).json()
    warnings = [n["message"] for n in report["notices"] if n["level"] == "warning"]
    assert len(warnings) == len(expected), warnings
    for words in expected:
        assert any(words in w for w in warnings), (words, warnings)
    assert report["errors"] == [] and report["summary"]["statefulsets"] == 1


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        ("  replicas: 3\n  minReadySeconds: -5", "spec.minReadySeconds: -5 must be >= 0"),
        ("  replicas: 3\n  ordinals:\n    start: -1", "spec.ordinals.start: -1 must be >= 0"),
        (
            "  replicas: 3\n  updateStrategy:\n    rollingUpdate:\n      maxUnavailable: 0",
            "maxUnavailable: cannot be 0",
        ),
        (
            "  replicas: 3\n  updateStrategy:\n    rollingUpdate:\n      maxUnavailable: 150%",
            "150% is more than 100%",
        ),
        (
            "  replicas: 3\n  updateStrategy:\n    type: OnDelete\n    rollingUpdate:\n"
            "      partition: 1",
            "only allowed for updateStrategy 'RollingUpdate'",
        ),
        (
            "  replicas: 3\n  persistentVolumeClaimRetentionPolicy:\n    whenScaled: Remove",
            "'Remove' is not Retain or Delete",
        ),
        (
            "  replicas: 3\n  updateStrategy:\n    rollingUpdate:\n"
            "      maxUnavailable: 2147483648",
            "maxUnavailable: 2147483648 is greater than the maximum of 2147483647",
        ),
    ],
)
def test_range_and_enum_checks_of_the_api_server(edit: str, words: str, tmp_path: Path) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(GOOD.read_text().replace("  replicas: 3", edit))
    report = run_cli("check", "--format", "json", str(path)).json()
    (err,) = report["errors"]
    assert words in err["message"] and err["line"] >= 7, err


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("1e21", "1e+21 is out of range: an int-or-string integer is an int32"),
        ("1.5", "1.5 is not an integer: an int-or-string's number is an int32"),
    ],
)
def test_a_budget_without_a_schema_is_read_as_the_api_server_decodes_it(
    value: str, shown: str, tmp_path: Path
) -> None:
    # policy/v1beta1 on 1.30, which no longer serves it: no schema, ssrisk's own check
    path = tmp_path / "pdb.yaml"
    path.write_text(
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: db\n"
        f"spec:\n  minAvailable: {value}\n  selector:\n    matchLabels: {{app: db}}\n"
    )
    report = run_cli("check", "--kube-version", "1.30", "--format", "json", str(path)).json()
    (err,) = report["errors"]
    assert f"spec.minAvailable: {shown}" in err["message"], err


def test_a_number_with_a_fraction_past_int32_is_one_problem(tmp_path: Path) -> None:
    """The validator reports both its range and its type: the type is the one to fix."""
    path = tmp_path / "sts.yaml"
    probe = "\n          readinessProbe:\n            httpGet: {port: 99999999999.5}\n"
    path.write_text(GOOD.read_text().rstrip("\n") + probe)
    report = run_cli("check", "--format", "json", str(path)).json()
    (err,) = report["errors"]
    assert "expected integer or string, got number 99999999999.5" in err["message"], err


def test_an_int_or_string_holds_an_int32_in_every_field(tmp_path: Path) -> None:
    # intstr.IntOrString.IntVal is an int32: a probe's port of 99999999999 does not decode
    # (it passed unsaid)
    path = tmp_path / "sts.yaml"
    probe = "\n          readinessProbe:\n            httpGet: {port: 99999999999}\n"
    path.write_text(GOOD.read_text().rstrip("\n") + probe)
    report = run_cli("check", "--format", "json", str(path)).json()
    (err,) = report["errors"]
    assert "httpGet.port: 99999999999 is greater than the maximum of 2147483647" in err["message"]
    assert (err["line"], report["summary"]["statefulsets"]) == (21, 0), err


@pytest.mark.parametrize("field", ["minAvailable", "maxUnavailable"])
@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("2147483648", "2147483648 is greater than the maximum of 2147483647"),
        # whole, but written with an exponent by encoding/json, so no integer decodes it: the
        # schema took it as an integer and the budget was dropped without a word
        ("1e21", "1e+21 is greater than the maximum of 2147483647"),
        ("-1e22", "-1e+22 is less than the minimum of -2147483648"),
    ],
)
def test_a_budget_past_int32_is_refused(field: str, value: str, shown: str, tmp_path: Path) -> None:
    # intstr.IntOrString holds an int32: the API server cannot decode these
    path = tmp_path / "pdb.yaml"
    path.write_text(
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: db\nspec:\n"
        f"  {field}: {value}\n  selector:\n    matchLabels: {{app: db}}\n"
    )
    report = run_cli("check", "--format", "json", str(path)).json()
    (err,) = report["errors"]
    assert f"spec.{field}: {shown}" in err["message"], err
    assert err["line"] == 6


def test_replicas_1e9_is_the_integer_kubectl_sends() -> None:
    """go-yaml reads ``1e9`` as a float and encoding/json writes it as 1000000000, which
    decodes into the int32 field: the API server accepts it."""
    (sts,) = load_path(str(ROBUST / "replicas-1e9.yaml")).objects
    result = validate_object(sts, "1.37")
    assert result.errors == [] and result.warnings == []
    replicas = sts.get("spec", "replicas")
    assert replicas == 1_000_000_000 and type(replicas) is int


def test_huge_replica_count_stays_bounded() -> None:
    """The simulator refuses sets above its replica limit; the rules fall back to what the
    manifest alone shows instead of running out of memory."""
    limit = 1536 * 1024 * 1024

    def cap() -> None:  # runs in the child: a memory cap so a runaway cannot hurt the host
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    p = subprocess.run(
        [ssrisk_executable(), "check", "--format", "json", str(ROBUST / "replicas-1e9.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=cap,
    )
    assert p.returncode in (0, 1), p.stdout[-1000:] + p.stderr[-1000:]
    report = json.loads(p.stdout)
    assert report["errors"] == []
    # the static worst case, without a simulation
    assert any(f["rule"] == "replicas-share-failure-domain" for f in report["findings"])


# --- tags, stdin, and the last guard ---------------------------------------------------------


def test_python_tags_never_construct_anything(tmp_path: Path) -> None:
    marker = tmp_path / "ssrisk-tag-was-constructed"
    run = run_cli("check", str(ROBUST / "python-tags.yaml"), cwd=tmp_path)
    assert run.code == 2 and "is not allowed" in run.out
    assert not marker.exists()
    # the ConfigMap document alone (a kind that is only syntax-checked) constructs nothing either
    only_configmap = tmp_path / "configmap.yaml"
    only_configmap.write_text((ROBUST / "python-tags.yaml").read_text().split("---\n", 1)[1])
    run_cli("check", str(only_configmap), cwd=tmp_path)
    assert not marker.exists()


def test_to_json_value_is_bounded_and_iterative() -> None:
    nested: list[object] = []
    for _ in range(50_000):  # far deeper than Python's recursion limit
        nested = [nested]
    with pytest.raises(ValueError, match="levels deep"):
        to_json_value(nested)
    wide = ["x"] * 10
    for _ in range(8):
        wide = [wide] * 10  # shared, as YAML aliases are: 10^9 leaves
    with pytest.raises(ValueError, match="values"):
        to_json_value(wide, max_nodes=10_000)


def test_closed_and_empty_stdin() -> None:
    exe = ssrisk_executable()
    closed = subprocess.run(
        ["sh", "-c", f'exec 0<&-; exec "{exe}" check - "{GOOD}"'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert closed.returncode == 2, closed.stderr
    assert "<stdin>: error: cannot read standard input" in closed.stdout
    assert "good.yaml:" in closed.stdout and "Traceback" not in closed.stdout + closed.stderr
    empty = run_process("check", "-", str(GOOD), stdin="")
    assert empty.code == 0 and "<stdin>: notice: empty file" in empty.out


def test_an_unexpected_exception_is_an_internal_error_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ssrisk.engine

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("forced failure")

    monkeypatch.setattr(ssrisk.engine, "check", explode)
    monkeypatch.delenv("SSRISK_DEBUG", raising=False)
    run = run_cli("check", str(GOOD))
    assert run.code == 2
    assert "internal error: RuntimeError: forced failure" in run.err
    assert "please report it" in run.err and "Traceback" not in run.err


def test_the_command_line_never_prints_a_traceback_for_the_table(tmp_path: Path) -> None:
    """The same table through the installed console script, as CI runs it."""
    paths = [str(b.path) for b in [*BAD_FILES, *_generated_bad(tmp_path)]]
    run = run_process("check", *paths, str(GOOD), str(ROOT / "examples"))
    assert run.code == 2
    assert "Traceback" not in run.out + run.err and "internal error" not in run.out + run.err


if sys.platform == "win32":  # pragma: no cover - FIFOs and symlinks need POSIX
    pytestmark = pytest.mark.skip("POSIX only")


#: A StatefulSet down to its pod spec's keys (each test adds the fields it is about).
_POD = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
"""
_TOLERATING = (
    _POD
    + """      containers: [{name: db, image: postgres:16}]
      tolerations:
      - ENTRY
"""
)


@pytest.mark.parametrize(
    ("entry", "column", "words"),
    [
        # an empty key needs Exists: a null or empty entry, or one with only an effect, is
        # rejected (rules that read it as tolerating every empty-valued taint were wrong)
        ("null", 9, "tolerations[0]: operator must be Exists when key is empty"),
        ("{}", 9, "tolerations[0]: operator must be Exists when key is empty"),
        ("{effect: NoExecute}", 9, "operator must be Exists when key is empty"),
        ("{operator: Equal, effect: NoExecute}", 10, "operator must be Exists when key is empty"),
        (
            "{key: k, operator: Exists, effect: NoSchedule, tolerationSeconds: 5}",
            36,
            "effect must be NoExecute",
        ),
        ("{key: k, operator: Exists, value: v}", 36, "value must be empty when operator is Exists"),
        ("{key: k, effect: NoEvict}", 18, "effect 'NoEvict' is not NoSchedule"),
        # operators, keys and values (they were accepted; a lower-case exists tolerated nothing)
        ("{key: k, operator: In, value: v}", 18, "operator 'In' is not Equal or Exists"),
        ("{key: k, operator: exists}", 18, "operator 'exists' is not Equal or Exists"),
        # Lt and Gt only with the alpha gate (KEP-5471), off by default
        ('{key: k, operator: Lt, value: "950"}', 18, "Lt and Gt need the TaintTolerationComp"),
        ('{key: "bad key!", operator: Exists}', 10, "key 'bad key!' is not a valid label key"),
        ("{key: " + "a" * 64 + ", operator: Exists}", 10, "is not a valid label key"),
        ('{key: k, value: "bad value!"}', 18, "value 'bad value!' is not a valid label value"),
    ],
)
def test_tolerations_the_api_server_rejects(
    entry: str, column: int, words: str, tmp_path: Path
) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(_TOLERATING.replace("ENTRY", entry))
    report = run_cli("check", "--format", "json", str(path)).json()
    (err,) = report["errors"]
    assert words in err["message"] and "ValidateTolerations" in err["message"], err
    assert (err["line"], err["column"]) == (12, column), err
    assert report["summary"]["statefulsets"] == 0


@pytest.mark.parametrize(
    "entry",
    [
        "{operator: Exists}",
        "{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 30}",
        "{key: k, value: v, effect: NoSchedule}",
        "{key: example.com/tier, operator: Exists}",
    ],
)
def test_tolerations_the_api_server_stores(entry: str, tmp_path: Path) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(_TOLERATING.replace("ENTRY", entry))
    report = run_cli("check", "--format", "json", str(path)).json()
    assert report["errors"] == [] and report["summary"]["statefulsets"] == 1


_WARNED = (
    _POD
    + """      containers: [{name: db, image: postgres:16}]
      FIELD
"""
)


@pytest.mark.parametrize(
    ("field", "line", "words"),
    [
        ("terminationGracePeriodSeconds: -5", 11, "negative values are invalid and will be"),
        (
            "topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: zone, "
            "whenUnsatisfiable: DoNotSchedule}",
            12,
            "topologySpreadConstraints[0].labelSelector: a null labelSelector results in",
        ),
        (
            "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: "
            "[{weight: 1, podAffinityTerm: {topologyKey: zone}}]}}",
            11,
            "[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod",
        ),
    ],
)
def test_what_the_api_server_warns_of_is_a_warning(
    field: str, line: int, words: str, tmp_path: Path
) -> None:
    # stored, with a warning (pkg/api/pod/warnings.go): checked, and the warning shown there
    path = tmp_path / "sts.yaml"
    path.write_text(_WARNED.replace("FIELD", field))
    report = run_cli("check", "--format", "json", str(path)).json()
    assert report["errors"] == [] and report["summary"]["statefulsets"] == 1
    (warned,) = [n for n in report["notices"] if "warningsForPodSpecAndMeta" in n["message"]]
    assert words in warned["message"] and warned["level"] == "warning", warned
    assert warned["line"] == line, warned


@pytest.mark.parametrize(
    ("version", "value", "words"),
    [
        ("1.35", '"950"', None),  # the gate on: accepted
        ("1.35", '"07"', "value '07' is not a decimal integer"),
        ("1.34", '"950"', "operator 'Gt' is not Equal or Exists (Lt and Gt need"),  # no gate yet
    ],
)
def test_numeric_toleration_operators_follow_their_feature_gate(
    version: str, value: str, words: str | None, tmp_path: Path
) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(_TOLERATING.replace("ENTRY", f"{{key: k, operator: Gt, value: {value}}}"))
    config = tmp_path / ".ssrisk.yaml"
    gate = "{TaintTolerationComparisonOperators: true}" if version == "1.35" else "{}"
    config.write_text(f'kube-version: "{version}"\nfeature-gates: {gate}\n')
    run = run_cli("check", "--config", str(config), "--format", "json", str(path))
    errors = run.json()["errors"] if run.out else []
    if words is None:
        assert errors == [] and run.code in (0, 1), run.err
    else:
        (err,) = errors
        assert words in err["message"], err


_SLEEPING = (
    _POD
    + """      containers:
      - name: db
        image: postgres:16
        lifecycle: {preStop: {sleep: {seconds: SECONDS}}}
"""
)


@pytest.mark.parametrize(
    ("seconds", "version", "words"),
    [
        # more than the grace period (30 s by default, applied before validation): rejected
        # (prestop-exceeds-grace warned of a set the API server never stores)
        (45, "1.37", "45 must be at least 0 and at most terminationGracePeriodSeconds (30)"),
        (-1, "1.37", "-1 must be at least 0 and at most"),
        (0, "1.32", "0 must be greater than 0 and at most"),  # KEP-4818: zero from 1.33
    ],
)
def test_sleep_actions_the_api_server_rejects(
    seconds: int, version: str, words: str, tmp_path: Path
) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(_SLEEPING.replace("SECONDS", str(seconds)))
    run = run_cli("check", "--kube-version", version, "--format", "json", str(path))
    (err,) = run.json()["errors"]
    assert words in err["message"] and "validateSleepAction" in err["message"], err
    assert err["line"] == 13 and run.code == 2, err


@pytest.mark.parametrize(("seconds", "version"), [(30, "1.37"), (0, "1.33"), (45, "1.28")])
def test_sleep_actions_the_api_server_stores(seconds: int, version: str, tmp_path: Path) -> None:
    # 1.28 has no sleep action: the schema's unknown-field warning covers it
    path = tmp_path / "sts.yaml"
    path.write_text(_SLEEPING.replace("SECONDS", str(seconds)))
    run = run_cli("check", "--kube-version", version, "--format", "json", str(path))
    assert run.json()["errors"] == [], run.out


_RESOURCED = (
    _POD
    + """      initContainers: [{name: init, image: busybox, restartPolicy: POLICY}]
      containers:
      - name: db
        image: postgres:16
        resources: RESOURCES
"""
)


@pytest.mark.parametrize(
    ("resources", "policy", "line", "words"),
    [
        # they were read as no request at all
        ("{requests: {cpu: lots}}", "Always", 14, "'lots' is not a quantity"),
        ('{requests: {cpu: "-1"}}', "Always", 14, "'-1' must be greater than or equal to 0"),
        ("{requests: {memory: 2Gi}, limits: {memory: 1Gi}}", "Always", 14, "less than or equal"),
        ("{requests: {cpu: 500m}}", "OnFailure", 10, "'OnFailure' is not supported"),
        # ParseQuantity: no exponent with a suffix, no space
        ('{requests: {memory: "1e3Mi"}}', "Always", 14, "'1e3Mi' is not a quantity"),
        ('{requests: {memory: "1 Gi"}}', "Always", 14, "'1 Gi' is not a quantity"),
        ("{}\n      overhead: {cpu: '-1'}", "Always", 15, "overhead.cpu: '-1' must be >= 0"),
        # a value that is no quantity anywhere: the object cannot even be decoded
        ("{}\n      overhead: {memory: lots}", "Always", 15, "overhead.memory: 'lots' is not"),
    ],
)
def test_resources_and_restart_policies_the_api_server_rejects(
    resources: str, policy: str, line: int, words: str, tmp_path: Path
) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(_RESOURCED.replace("RESOURCES", resources).replace("POLICY", policy))
    run = run_cli("check", "--format", "json", str(path))
    (err,) = run.json()["errors"]
    assert words in err["message"] and err["line"] == line and run.code == 2, err


@pytest.mark.parametrize(
    "resources",
    [
        '{requests: {cpu: "1e3", memory: 2Gi}, limits: {memory: 2Gi}}',
        "{}",
        # the n and u suffixes (metrics-server writes CPU as 140000000n); they were rejected
        '{requests: {cpu: "1u"}, limits: {cpu: "140000000n", memory: ".5Gi"}}',
    ],
)
def test_resources_the_api_server_stores(resources: str, tmp_path: Path) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(_RESOURCED.replace("RESOURCES", resources).replace("POLICY", "Always"))
    assert run_cli("check", "--format", "json", str(path)).json()["errors"] == []


def test_a_field_the_version_does_not_have_is_ignored_as_the_warning_says(tmp_path: Path) -> None:
    # 1.25 has no sleep action: "unknown field ...; ignored", and no rule reads it (it gave a
    # prestop-exceeds-grace finding about the sleep it had just said it ignored)
    path = tmp_path / "sts.yaml"
    path.write_text(_SLEEPING.replace("SECONDS", "45"))
    report = run_cli("check", "--kube-version", "1.25", "--format", "json", str(path)).json()
    assert report["errors"] == [] and report["summary"]["statefulsets"] == 1
    assert any("preStop.sleep: unknown field" in n["message"] for n in report["notices"])
    assert "prestop-exceeds-grace" not in {f["rule"] for f in report["findings"]}


def test_a_claim_template_storage_that_is_no_quantity_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "sts.yaml"
    text = _RESOURCED.replace("RESOURCES", "{}").replace("POLICY", "Always")
    text += "  volumeClaimTemplates:\n  - metadata: {name: data}\n"
    text += "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: ten}}}\n"
    path.write_text(text)
    (err,) = run_cli("check", "--format", "json", str(path)).json()["errors"]
    assert "volumeClaimTemplates[0].spec.resources.requests.storage: 'ten' is not" in err["message"]
    assert err["line"] == 17, err


def test_a_set_no_simulated_node_fits_is_not_simulated(tmp_path: Path) -> None:
    # requests above the assumed nodes' allocatable: simulate says nothing runs; check quoted
    # "(simulated on 3 zones × 2 nodes: 0 of 3)" as if it were a placement
    path = tmp_path / "sts.yaml"
    path.write_text(
        _RESOURCED.replace("RESOURCES", "{requests: {cpu: '5'}}").replace("POLICY", "Always")
    )
    report = run_cli("check", "--format", "json", str(path)).json()
    (notice,) = [n for n in report["notices"] if "not simulated" in n["message"]]
    assert "no replica fits a node of the simulated cluster" in notice["message"], notice
    assert not [f for f in report["findings"] if "(simulated" in f["message"]], report["findings"]


def test_an_int64_toleration_is_quoted_exactly(tmp_path: Path) -> None:
    # it went through a float: "tolerationSeconds 9223372036854775808", "...h28m8s"
    path = tmp_path / "sts.yaml"
    entry = (
        "{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, "
        "tolerationSeconds: 9223372036854775807}"
    )
    path.write_text(_TOLERATING.replace("ENTRY", entry))
    found = run_cli("check", "--format", "json", str(path)).json()["findings"]
    said = " ".join(f["message"] + f["explanation"] for f in found)
    assert "9223372036854775807" in said and "9223372036854775808" not in said
    assert "2562047788015215h30m7s" in said or "tolerationSeconds 9223372036854775807" in said


def test_every_unknown_field_is_warned_of_and_later_positions_stay(tmp_path: Path) -> None:
    # both keys are dropped: both are named, and the field after them keeps its line (it
    # was reported one line up per dropped key)
    path = tmp_path / "sts.yaml"
    fields = "foo: 1\n      bar: 2\n      terminationGracePeriodSeconds: 3600"
    path.write_text(_WARNED.replace("FIELD", fields))
    report = run_cli("check", "--format", "json", str(path)).json()
    unknown = [n["line"] for n in report["notices"] if "unknown field" in n["message"]]
    assert unknown == [11, 12]
    (grace,) = [f for f in report["findings"] if f["rule"] == "long-termination-grace"]
    assert grace["line"] == 13, grace


def test_a_main_container_restart_policy_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "sts.yaml"
    path.write_text(
        _POD + "      containers: [{name: db, image: postgres:16, restartPolicy: Never}]\n"
    )
    (err,) = run_cli("check", "--format", "json", str(path)).json()["errors"]
    assert "restartPolicy: may not be set for non-init containers" in err["message"], err


_RECREATE = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 3
  updateStrategy: {type: Recreate}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: example.org/db:1}]}
"""


@pytest.mark.parametrize(("gate", "accepted"), [("true", True), ("false", False)])
def test_the_recreate_update_strategy_follows_its_feature_gate(
    gate: str, accepted: bool, tmp_path: Path
) -> None:
    """updateStrategy Recreate (KEP-3541) is valid on 1.37 with StatefulSetRecreateStrategy on,
    as the simulated controller reads it; the validation rejected it whatever the gate."""
    path = tmp_path / "sts.yaml"
    path.write_text(_RECREATE)
    config = tmp_path / ".ssrisk.yaml"
    config.write_text(
        f'kube-version: "1.37"\nfeature-gates: {{StatefulSetRecreateStrategy: {gate}}}\n'
    )
    report = run_cli("check", "--config", str(config), "--format", "json", str(path)).json()
    assert (report["errors"] == []) is accepted, report["errors"]
    assert (report["summary"]["statefulsets"] == 1) is accepted


def test_a_set_without_a_name_is_said_and_gets_no_budget_without_one(tmp_path: Path) -> None:
    """The API server refuses an object without a name: a warning says so (a patch, maybe),
    and pdb-missing offers no budget named after it (it offered "PodDisruptionBudget  ")."""
    path = tmp_path / "sts.yaml"
    path.write_text(GOOD.read_text().replace("metadata:\n  name: db\n", "metadata: {}\n"))
    report = run_cli("check", "--fixes", "--format", "json", str(path)).json()
    assert report["errors"] == []
    (notice,) = [n for n in report["notices"] if "metadata.name" in n["message"]]
    assert notice["level"] == "warning" and notice["line"] == 3
    assert "required field is missing" in notice["message"]
    budgets = [f for f in report["findings"] if f["rule"] == "pdb-missing"]
    assert budgets and all("fix" not in f for f in budgets)
