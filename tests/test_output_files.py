"""Output and baseline files are never written over what the run reads: a manifest, a PATH, the
configuration, a configured chart's values or the baseline read (an output is never read as a
manifest, so such a file was left out of the check and then replaced by its report)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

EXAMPLE = ROOT / "examples" / "postgres.yaml"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "x").mkdir()
    shutil.copy(EXAMPLE, tmp_path / "x" / "postgres.yaml")
    return tmp_path


def _refused(run_args: tuple[str, ...], tree: Path, protected: Path, why: str) -> None:
    before = protected.read_bytes()
    run = run_cli(*run_args, cwd=tree)
    assert run.code == 2, (run.code, run.err)
    assert f"it is {why}" in run.err, run.err
    assert protected.read_bytes() == before
    assert run.out == ""  # refused before the check


@pytest.mark.parametrize("fmt", ["json", "sarif", "text"])
def test_an_output_over_a_checked_manifest_is_refused(tree: Path, fmt: str) -> None:
    manifest = tree / "x" / "postgres.yaml"
    args = ("check", "--format", fmt, "-o", "x/postgres.yaml", "x")
    _refused(args, tree, manifest, "under x, which this check reads")
    other = tree / "elsewhere" / "db.yaml"  # not checked, but a manifest
    other.parent.mkdir()
    shutil.copy(manifest, other)
    args = ("check", "--format", fmt, "-o", "elsewhere/db.yaml", "x")
    _refused(args, tree, other, "a file that holds Kubernetes manifests (apiVersion at line 2)")
    other.write_text('{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}')
    _refused(args, tree, other, "a file that holds Kubernetes manifests (apiVersion at line 1)")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("values.yaml", "replicaCount: 3\n"),  # a chart's own values
        ("kustomization.yaml", "resources: [postgres.yaml]\n"),  # (apiVersion is optional)
        ("notes.json", '{"a": 1}\n'),
    ],
)
def test_any_yaml_or_json_file_under_a_checked_directory_is_refused(
    tree: Path, name: str, text: str
) -> None:
    target = tree / "x" / name
    target.write_text(text)
    _refused(("check", "--format", "json", "-o", f"x/{name}", "x"), tree, target, "under x")


def test_a_values_file_given_with_values_is_refused(tree: Path) -> None:
    values = tree / "mine.yaml"
    values.write_text("replicaCount: 3\n")
    args = ("check", "--values", "mine.yaml", "--format", "json", "-o", "mine.yaml", "x")
    _refused(args, tree, values, "a values file this check reads")


def test_nothing_is_read_through_a_link_planted_as_the_output(tree: Path) -> None:
    """The repository's ``report.json`` links to a private manifest: the refusal is the
    link's (write_file's), and says nothing of what the target holds."""
    private = tree / "private.yaml"
    shutil.copy(EXAMPLE, private)
    (tree / "x" / "report.json").symlink_to(private)
    before = private.read_bytes()
    run = run_cli("check", "--format", "json", "-o", "x/report.json", "x", cwd=tree)
    assert run.code == 2
    assert "refusing to write through the symbolic link" in run.err, run.err
    assert "apiVersion" not in run.err and "manifests" not in run.err
    assert private.read_bytes() == before


def test_the_baseline_written_over_a_path_or_a_manifest_is_refused(tree: Path) -> None:
    manifest = tree / "x" / "postgres.yaml"
    args = ("check", "--write-baseline", "x/postgres.yaml", "x/postgres.yaml")
    _refused(args, tree, manifest, "a PATH of this check")
    _refused(("check", "--write-baseline", "x/postgres.yaml", "x"), tree, manifest, "under x")


def test_an_output_over_the_configuration_or_the_baseline_read_is_refused(tree: Path) -> None:
    config = tree / "x" / ".ssrisk.yaml"
    config.write_text('kube-version: "1.30"\n')
    args = ("check", "--format", "json", "-o", "x/.ssrisk.yaml", "x")
    _refused(args, tree, config, "the configuration file of this check")
    assert run_cli("check", "--write-baseline", "b.json", "x", cwd=tree).code == 0
    args = ("check", "--baseline", "b.json", "--format", "json", "-o", "b.json", "x")
    _refused(args, tree, tree / "b.json", "the baseline this check reads")


def test_a_baseline_may_be_rewritten_and_a_report_replaced(tree: Path) -> None:
    """ssrisk's own files (a JSON report, SARIF log, baseline) are not manifests, even where
    they quote a manifest: a second run replaces them."""
    for _ in range(2):
        for fmt in ("json", "sarif"):
            run = run_cli("check", "--format", fmt, "-o", f"x/report.{fmt}.json", "x", cwd=tree)
            assert run.code == 1, run.err
        run = run_cli("check", "--baseline", "b.json", "--write-baseline", "b.json", "x", cwd=tree)
        assert run.code == 0, run.err
    assert json.loads((tree / "x" / "report.json.json").read_text())["findings"]
    assert json.loads((tree / "b.json").read_text())["ssrisk-baseline"] == 1


@pytest.mark.parametrize(
    "option",
    [["-o"], ["--format", "json", "-o"], ["--baseline"], ["--write-baseline"], ["--config"]],
)
def test_an_empty_file_name_is_a_usage_error(tree: Path, option: list[str]) -> None:
    """It was taken as the option not given: ``--baseline ''`` reported every finding and
    ``--write-baseline ''`` wrote nothing, without a word."""
    run = run_cli("check", *option, "", "x", cwd=tree)
    assert run.code == 2
    name = "--output" if option[-1] == "-o" else option[-1]
    assert f"argument {name}: expected a file name, got ''" in run.err


@pytest.mark.parametrize("name", [".ssrisk.yaml", ".ssrisk.yml", "pyproject.toml"])
def test_an_output_named_as_a_configuration_file_is_refused_even_when_new(
    tree: Path, name: str
) -> None:
    """A report written as ``x/.ssrisk.yml`` was read by every later run as its
    configuration (exit 2: unknown key), the same command included."""
    run = run_cli("check", "--format", "json", "-o", f"x/{name}", "x", cwd=tree)
    assert run.code == 2
    assert "it is named as ssrisk's configuration file, which later runs" in run.err, run.err
    assert not (tree / "x" / name).exists()


def test_a_context_file_is_protected_like_a_path(tree: Path) -> None:
    notes = tree / "ctx" / "notes.yaml"
    notes.parent.mkdir()
    notes.write_text("owner: storage team\n")  # (no apiVersion)
    args = ("check", "--context", "ctx", "--format", "json", "-o", "ctx/notes.yaml", "x")
    _refused(args, tree, notes, "under ctx, which this check reads")
    args = ("check", "--context", "ctx/notes.yaml", "--format", "json", "-o", "ctx/notes.yaml")
    _refused((*args, "x"), tree, notes, "a --context path of this check")


@pytest.mark.parametrize("option", ["--baseline", "--write-baseline"])
def test_a_baseline_named_dash_is_a_usage_error(tree: Path, option: str) -> None:
    """``-o -`` is standard output; ``--write-baseline -`` wrote a file named ``-``."""
    run = run_cli("check", option, "-", "x", cwd=tree)
    assert run.code == 2
    assert f"argument {option}: expected a file name, got '-'" in run.err
    assert not (tree / "-").exists()


def test_dev_stdout_as_an_output_says_how_to_write_to_standard_output(tree: Path) -> None:
    if not Path("/dev/stdout").is_symlink():
        pytest.skip("/dev/stdout is not a link here")
    run = run_cli("check", "--format", "json", "-o", "/dev/stdout", "x", cwd=tree)
    assert run.code == 2
    assert "write to standard output with --output -" in run.err
