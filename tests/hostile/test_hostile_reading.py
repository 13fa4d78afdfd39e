"""Hostile repositories against what ssrisk reads: no file outside the checked tree (or in
``.git``) is ever read or printed, and configuration files, baselines and manifests that a
pull request can write give a clean error at their place, never a traceback, a hang or a
blow-up; the other files are still checked.

Each repository is built under ``tmp_path`` (with a ``.git`` directory, as a checkout has)
from the files in ``tests/data/hostile``; links, pipes and very deep inputs are made at test
time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from checkout import GOOD, assert_clean, make_checkout
from conftest import DATA, run_cli, run_process, ssrisk_executable

HOSTILE = DATA / "hostile"
# --- links out of the tree ---------------------------------------------------------------------

LINKS = {
    "env.yaml": "/proc/self/environ",
    "passwd.yaml": "/etc/passwd",
    "git-config.yaml": "../.git/config",  # inside the repository, but in .git
}


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_manifest_links_out_of_the_tree_are_not_read(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    for name, target in LINKS.items():
        (repo / "deploy" / name).symlink_to(target)
    walked = run_cli("check", "deploy", "--format", fmt, cwd=repo)
    named = run_cli("check", *[f"deploy/{n}" for n in LINKS], "deploy/db.yaml", cwd=repo)
    for run in (walked, named):
        assert run.code == 2
        assert_clean(run.out, run.err)
    assert walked.out.count("not read") >= len(LINKS), walked.out
    assert "db.yaml" in walked.out  # the good file is still checked
    assert named.out.count("not read") == len(LINKS), named.out


def test_a_link_inside_the_repository_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    (repo / "deploy" / "alias.yaml").symlink_to("db.yaml")
    run = run_cli("check", "--format", "json", "deploy/alias.yaml", cwd=repo)
    assert run.code == 0 and run.json()["summary"]["statefulsets"] == 1


@pytest.mark.parametrize("target", ["/etc/passwd", "/proc/self/environ", ".git/config"])
def test_configuration_links_out_of_the_tree_are_not_read(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    (repo / ".ssrisk.yaml").symlink_to(target)
    for args in (["check", "deploy"], ["check", "deploy", "--config", ".ssrisk.yaml"]):
        run = run_cli(*args, cwd=repo)
        assert run.code == 2 and ".ssrisk.yaml" in run.err and "not read" in run.err
        assert_clean(run.out, run.err)


def test_a_baseline_link_out_of_the_tree_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    (repo / ".ssrisk-baseline.json").symlink_to("/etc/passwd")
    run = run_cli("check", "deploy", "--baseline", ".ssrisk-baseline.json", cwd=repo)
    assert run.code == 2 and "not read" in run.err
    assert_clean(run.out, run.err)


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        (".ssrisk.yaml", 'baseline: "a\\0b"\n', ".ssrisk.yaml:1:"),
        ("pyproject.toml", '[tool.ssrisk]\nbaseline = "a\\u0000b"\n', "[tool.ssrisk]: baseline"),
    ],
)
def test_a_configured_file_name_with_a_nul_is_a_configuration_error(
    name: str, text: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file name holds a NUL, but a configuration value can ("internal error: embedded null
    byte" stopped the run): it is refused at its key like any name ssrisk will not read."""
    repo = make_checkout(tmp_path, monkeypatch)
    (repo / name).write_text(text)
    run = run_cli("check", "deploy", cwd=repo)
    assert run.code == 2 and where in run.err and "NUL" in run.err, run.err
    assert "internal error" not in run.err
    assert_clean(run.out, run.err)


# --- configuration and baseline files ----------------------------------------------------------


def _deep_toml(path: Path) -> None:
    path.write_text("[tool.ssrisk]\nx = " + "[" * 5000 + "]" * 5000 + "\n")


CONFIGS = [
    ("alias-bomb.yaml", ".ssrisk.yaml", "more than 50000 values"),
    ("huge-hex.yaml", ".ssrisk.yaml", "fail-on"),
    ("huge-decimal.yaml", ".ssrisk.yaml", "profile zones must be a whole number"),
    ("deep.yaml", ".ssrisk.yaml", "nesting depth"),
    ("python-tag.yaml", ".ssrisk.yaml", "is not allowed"),
    ("huge-int.pyproject.toml", "pyproject.toml", "too many digits"),
    ("huge-hex.pyproject.toml", "pyproject.toml", "larger than 64 bits"),
    ("deep.pyproject.toml", "pyproject.toml", "nesting too deep"),
    # non-finite numbers are configuration errors at their key, never internal errors
    ("allocatable-inf.yaml", ".ssrisk.yaml", ".yaml:2:3: profile node-allocatable: cpu and"),
    (
        "objective-inf.yaml",
        ".ssrisk.yaml",
        # (1e309 is out of Go's range: text for kubectl's reader, as for ssrisk's)
        ".yaml:2:31: objectives node-loss recover-within: '1e309' is not seconds",
    ),
    ("objective-nan.pyproject.toml", "pyproject.toml", "must be a finite number, not nan"),
    (
        "profile-nan.yaml",
        ".ssrisk.yaml",
        ".yaml:2:32: profile node-monitor-grace-period-s must be a finite number, not nan",
    ),
    # the configuration's kube-version is checked as --kube-version is
    ("kube-version-digits.yaml", ".ssrisk.yaml", ".yaml:1:15: unsupported Kubernetes version"),
]


@pytest.mark.parametrize(("source", "name", "words"), CONFIGS)
def test_hostile_configuration_files(
    source: str, name: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    shutil.copy(HOSTILE / "config" / source, repo / name)
    started = time.monotonic()
    run = run_cli("check", "deploy", cwd=repo)
    assert time.monotonic() - started < 10
    assert run.code == 2, run.err
    assert run.err.startswith(f"ssrisk: error: {repo / name}") and words in run.err, run.err
    assert len(run.err) < 1200 and "\n" not in run.err.rstrip("\n")
    assert_clean(run.out, run.err)
    assert not list(repo.glob("ssrisk-*-ran"))


BASELINES = [
    ("huge-count.json", "a number of 5000 digits"),
    ("python-tag.json", "not JSON"),
    ("nan-count.json", "NaN is not JSON"),
    (None, "recursion"),  # 100,000 nested arrays, made at test time
]


@pytest.mark.parametrize(("source", "words"), BASELINES)
def test_hostile_baselines(
    source: str | None, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    baseline = repo / ".ssrisk-baseline.json"
    if source is None:
        baseline.write_text("[" * 100_000 + "]" * 100_000)
    else:
        shutil.copy(HOSTILE / "baseline" / source, baseline)
    run = run_cli("check", "deploy", "--baseline", str(baseline.name), cwd=repo)
    assert run.code == 2 and ".ssrisk-baseline.json" in run.err and words in run.err, run.err
    assert_clean(run.out, run.err)


# --- manifests -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "line", "words"),
    [
        ("replicas-huge-hex.yaml", 7, 'spec.replicas: expected integer, got string "0xfff'),
        ("replicas-huge-decimal.yaml", 7, "spec.replicas: expected integer, got string"),
        ("max-unavailable-huge-percent.yaml", 10, "999... is more than 100%"),
        ("pdb-huge-percent.yaml", 6, "999... must not be more than 100%"),
    ],
)
def test_integers_past_pythons_digit_limit(name: str, line: int, words: str) -> None:
    """go-yaml reads an integer only when it fits in 64 bits (else text), and the API server
    reads an out-of-range percentage as the largest int64: each is an error at its place,
    and the good file beside it is still checked."""
    report = run_cli("check", "--format", "json", str(HOSTILE / "manifests" / name), str(GOOD))
    assert report.code == 2
    data = report.json()
    (err,) = data["errors"]
    assert err["line"] == line and words in err["message"], err
    assert len(err["message"]) < 300
    assert any(f["path"].endswith("good.yaml") for f in data["findings"])
    assert_clean(report.out, report.err)


def test_a_list_whose_items_are_not_a_list() -> None:
    report = run_cli(
        "check", "--format", "json", str(HOSTILE / "lists" / "items-not-a-list.yaml"), str(GOOD)
    )
    assert report.code == 2
    (err,) = report.json()["errors"]
    assert (err["line"], err["column"]) == (4, 1) and "items must be a list" in err["message"]


def test_a_fifo_named_on_the_command_line_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    started = time.monotonic()
    p = subprocess.run(
        [ssrisk_executable(), "check", str(fifo), str(GOOD)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 30
    # a pipe with no writer is an input error (nothing was checked), not an empty file
    assert p.returncode == 2, p.stdout + p.stderr
    assert "pipe.yaml: error: cannot read file: nothing was read from the FIFO" in p.stdout
    assert "good.yaml:" in p.stdout


def test_a_pipe_whose_writer_wrote_nothing_reads_as_empty() -> None:
    """``<(helm template ...)`` of a chart that renders nothing: an empty input, as on
    standard input, not the error of a FIFO that nobody writes to."""
    p = subprocess.run(
        ["bash", "-c", f'"{ssrisk_executable()}" check <(true) "{GOOD}"'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert ": notice: empty file" in p.stdout and "good.yaml:" in p.stdout


def test_a_pipe_with_a_writer_is_read(tmp_path: Path) -> None:
    """``ssrisk check <(kustomize build)``: the path is a pipe whose writer is running."""
    p = subprocess.run(
        ["bash", "-c", f'"{ssrisk_executable()}" check --format json <(sleep 0.3; cat "{GOOD}")'],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert '"statefulsets": 1' in p.stdout


def test_an_unreadable_directory_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    locked = repo / "deploy" / "locked"
    locked.mkdir()
    shutil.copy(GOOD, locked / "hidden.yaml")
    locked.chmod(0)
    try:
        if os.geteuid() == 0:  # root lists anything: fail the listing as the kernel would
            real_scandir = os.scandir

            def scandir(path: object = ".") -> object:
                if os.fspath(path).endswith("locked"):  # type: ignore[call-overload]
                    raise PermissionError(13, "Permission denied", os.fspath(path))  # type: ignore[call-overload]
                return real_scandir(path)  # type: ignore[call-overload]

            monkeypatch.setattr(os, "scandir", scandir)
        run = run_cli("check", "--format", "json", "deploy", cwd=repo)
    finally:
        locked.chmod(0o755)
    assert run.code == 2
    errors = run.json()["errors"]
    assert [e["message"] for e in errors] == ["cannot list directory: Permission denied"]
    assert errors[0]["path"].endswith("locked")


# --- what kubectl reads as a StatefulSet, ssrisk checks ----------------------------------------

KINDS = sorted((HOSTILE / "kinds").iterdir())


@pytest.mark.parametrize("path", KINDS, ids=[p.name for p in KINDS])
def test_a_statefulset_in_disguise_is_checked(path: Path) -> None:
    """Tags, anchors, aliases, block scalars, comments and escapes in ``kind`` (or its key),
    and a line starting with ``{{`` in another document: kubectl reads a StatefulSet."""
    # (the pods serve and store nothing: its findings are notes, which --fail-on info counts)
    report = run_cli("check", "--format", "json", "--fail-on", "info", str(path))
    data = report.json()
    assert data["errors"] == [] and data["summary"]["statefulsets"] == 1, data
    assert "single-replica" in {f["rule"] for f in data["findings"]}
    assert report.code == 1


def test_documents_of_other_kinds_in_disguise_are_only_counted(tmp_path: Path) -> None:
    """A ConfigMap with tags and aliases is read for its kind only: no error for its tags,
    counted as a skipped document."""
    path = tmp_path / "cm.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
        "data:\n  a: &v !vault |\n    secret\n  b: *v\n"
    )
    report = run_cli("check", "--format", "json", str(path)).json()
    assert report["errors"] == [] and report["summary"]["skipped_documents"] == 1


def test_duplicate_keys_interleaved_with_new_ones() -> None:
    """Found by the mutation fuzzer (an internal error): a duplicate, a new key, its duplicate."""
    report = run_cli(
        "check", "--format", "json", str(HOSTILE / "manifests" / "duplicate-keys-interleaved.yaml")
    )
    assert report.code == 0, report.err
    found = {(n["line"], n["message"].split(" (")[0]) for n in report.json()["notices"]}
    assert {(5, "duplicate key 'metadata'"), (8, "duplicate key 'spec'")} <= found


def test_standard_input_is_read_bounded() -> None:
    from ssrisk.loading import MAX_FILE_BYTES

    run = run_process("check", "-", str(GOOD), stdin="#" * (MAX_FILE_BYTES + 10))
    assert run.code == 2
    assert "<stdin>: error: larger than the 67108864 byte limit" in run.out
    assert "good.yaml:" in run.out


def test_list_items_that_merge_one_aliased_spec_share_the_alias_limit() -> None:
    """40 items that each merge (``<<: *base``) a base of about 180,000 values once aliases
    are expanded: the first two fit the file's alias limit and are checked, the others are
    errors at their item, and the other file is still checked."""
    report = run_cli(
        "check", "--format", "json", str(HOSTILE / "lists" / "merged-spec-bomb.yaml"), str(GOOD)
    )
    assert report.code == 2
    data = report.json()
    assert data["summary"]["statefulsets"] == 3
    errors = data["errors"]
    assert len(errors) == 38
    assert [e["line"] for e in errors] == list(range(220, 258))
    assert all("merge keys in this file expand to more than 400000" in e["message"] for e in errors)
    assert any(f["path"].endswith("good.yaml") for f in data["findings"])
    assert_clean(report.out, report.err)


def test_list_items_that_merge_a_modest_base_are_all_checked() -> None:
    report = run_cli("check", "--format", "json", str(HOSTILE / "lists" / "merged-spec.yaml"))
    data = report.json()
    assert not data["errors"] and data["summary"]["statefulsets"] == 30


@pytest.mark.parametrize(
    "name", ["claim-template-metadata-text.yaml", "pdb-selector-values-number.yaml"]
)
def test_rules_read_unvalidated_objects_of_any_shape(name: str) -> None:
    """An apiVersion the selected version does not serve has no schema, so its objects reach
    the rules as written (found by the mutation fuzzer)."""
    report = run_cli("check", "--format", "json", str(HOSTILE / "manifests" / name))
    data = report.json()
    assert not [e for e in data["errors"] if "internal error" in e["message"]], data["errors"]
    assert data["summary"]["statefulsets"] == 1
