"""Hostile repositories against ssrisk's outputs: report and baseline files are never written
through a symbolic link and never left half-written, and names from the repository never
become workflow commands, terminal escapes or broken XML/JSON in any format.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk.reporters.escape import printable, printable_block

HOSTILE = DATA / "hostile"
GOOD = DATA / "robust" / "good.yaml"
CONTROL = HOSTILE / "names" / "control-chars.yaml"
FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")


def _parse(fmt: str, text: str) -> None:
    """The output is well-formed for its format."""
    if fmt in ("json", "sarif"):
        json.loads(text)
    elif fmt == "junit":
        ET.fromstring(text)


# --- --output and --write-baseline never write through a link ----------------------------------


def _repo_with_link(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A checkout whose ``name`` is a symbolic link to a file outside it (the victim)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(GOOD, repo / "db.yaml")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (repo / name).symlink_to(victim)
    return repo, victim


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_refuses_a_symlink(fmt: str, tmp_path: Path) -> None:
    repo, victim = _repo_with_link(tmp_path, "report.out")
    run = run_cli("check", "db.yaml", "--format", fmt, "--output", "report.out", cwd=repo)
    assert run.code == 2
    assert "refusing to write through the symbolic link" in run.err
    assert victim.read_text() == "precious\n"
    assert (repo / "report.out").is_symlink()


def test_write_baseline_refuses_a_symlink(tmp_path: Path) -> None:
    repo, victim = _repo_with_link(tmp_path, ".ssrisk-baseline.json")
    run = run_cli("check", "db.yaml", "--write-baseline", ".ssrisk-baseline.json", cwd=repo)
    assert run.code == 2 and "symbolic link" in run.err
    assert victim.read_text() == "precious\n"


def test_a_linked_directory_on_the_way_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(GOOD, repo / "db.yaml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "reports").symlink_to(elsewhere)
    run = run_cli("check", "db.yaml", "--format", "json", "-o", "reports/r.json", cwd=repo)
    assert run.code == 2 and "symbolic link" in run.err
    assert list(elsewhere.iterdir()) == []


def test_a_linked_directory_of_the_repository_above_the_working_directory_is_refused(
    tmp_path: Path,
) -> None:
    """Run from a subdirectory of the checkout, ``-o ../results/r.json`` goes through the
    checkout's ``results`` link (outside the working directory, inside its repository); and
    a working directory reached through a link of the user's is no way around the check."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    shutil.copy(GOOD, repo / "sub" / "db.yaml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "r.json").write_text("precious\n")
    (repo / "results").symlink_to(elsewhere)
    run = run_cli(
        "check", "db.yaml", "--format", "json", "-o", "../results/r.json", cwd=repo / "sub"
    )
    assert run.code == 2 and "symbolic link" in run.err, run.err
    assert (elsewhere / "r.json").read_text() == "precious\n"
    alias = tmp_path / "alias"  # the user's own link to the checkout
    alias.symlink_to(repo)
    out = str(alias / "results" / "r.json")
    run = run_cli("check", str(alias / "sub" / "db.yaml"), "--format", "json", "-o", out, cwd=repo)
    assert run.code == 2 and "symbolic link" in run.err, run.err
    assert (elsewhere / "r.json").read_text() == "precious\n"
    # the user's link itself is not in the way: a report beside the checkout's files is written
    run = run_cli(
        "check", "db.yaml", "--format", "json", "-o", str(alias / "r.json"), cwd=repo / "sub"
    )
    assert run.code == 0, run.err
    assert (repo / "r.json").is_file()


def test_a_linked_directory_before_dotdot_is_refused(tmp_path: Path) -> None:
    """``-o sub2/../z.sarif`` where ``sub2`` links elsewhere: the kernel follows the link and
    then its parent, so the link is checked before ``..`` is collapsed."""
    repo = tmp_path / "repo"
    (repo / "real").mkdir(parents=True)
    shutil.copy(GOOD, repo / "db.yaml")
    elsewhere = tmp_path / "elsewhere" / "deep"
    elsewhere.mkdir(parents=True)
    (repo / "sub2").symlink_to(elsewhere)
    run = run_cli("check", "db.yaml", "--format", "sarif", "-o", "sub2/../z.sarif", cwd=repo)
    assert run.code == 2 and "symbolic link" in run.err and "sub2" in run.err
    assert not (tmp_path / "elsewhere" / "z.sarif").exists()
    run = run_cli("check", "db.yaml", "--format", "sarif", "-o", "real/../z.sarif", cwd=repo)
    assert run.code == 0, run.err
    assert (repo / "z.sarif").is_file()


def test_outputs_are_replaced_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that fails while writing leaves the previous report as it was, and no
    temporary file behind; a successful run replaces it."""
    from ssrisk.reporters.json import JsonReporter

    report = tmp_path / "report.json"
    report.write_text('{"previous": true}\n')

    def broken(self: JsonReporter, rep: object, out: object) -> None:
        out.write('{"half": ')  # type: ignore[attr-defined]
        raise RuntimeError("disk full halfway")

    monkeypatch.setattr(JsonReporter, "write", broken)
    run = run_cli("check", str(GOOD), "--format", "json", "--output", str(report))
    assert run.code == 2
    assert report.read_text() == '{"previous": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]
    monkeypatch.undo()
    run = run_cli("check", str(GOOD), "--format", "json", "--output", str(report))
    assert run.code == 0 and json.loads(report.read_text())["summary"]["statefulsets"] == 1


def test_a_device_is_written_in_place() -> None:
    run = run_cli("check", str(GOOD), "--format", "json", "--output", os.devnull)
    assert run.code == 0, run.err
    assert os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


# --- names from the repository are escaped ------------------------------------------------------

_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_ESCAPES = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202e]")


@pytest.mark.parametrize("fmt", FORMATS)
def test_control_characters_in_names_are_escaped(fmt: str) -> None:
    run = run_cli("check", str(CONTROL), "--format", fmt, "--explain")
    assert run.code == 1, run.err  # single-replica: the object was checked
    # JSON and SARIF carry names as data (JSON escapes control characters; a right-to-left
    # override is data there), the other formats are read by people and runners
    unsafe = _CONTROLS if fmt in ("json", "sarif") else _ESCAPES
    assert unsafe.search(run.out) is None, "a raw control character reached the output"
    commands = [ln for ln in run.out.splitlines() if ln.lstrip().startswith("::")]
    if fmt == "github":  # only ssrisk's own annotations, one per finding and run note
        notes = [ln for ln in commands if ln.startswith("::notice title=ssrisk ")]
        findings = [ln for ln in commands if ln not in notes]
        assert all(re.match(r"::(error|warning|notice) file=", ln) for ln in findings), commands
        report = run_cli("check", str(CONTROL), "--format", "json").json()
        reported = [f for f in report["findings"] if not f.get("folded_into")]
        assert len(findings) == len(reported)
        assert len(notes) == len(report["run_notes"])
    else:
        assert commands == []
    _parse(fmt, run.out)
    if fmt == "text":
        assert "\\x1b[31m" in run.out and "\\u202e" in run.out


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_names_with_newlines_and_undecodable_bytes(fmt: str, tmp_path: Path) -> None:
    """Names as a repository can hold them: a newline and a byte that is not UTF-8, to
    standard output and to a file, in every format."""
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(GOOD, tree / "a\n::error::b.yaml")
    shutil.copy(GOOD, os.path.join(os.fsencode(tree), b"c\xff.yaml"))
    run = run_cli("check", str(tree), "--format", fmt)
    assert run.code == 0, run.err
    assert "internal error" not in run.err
    assert not [ln for ln in run.out.splitlines() if ln.startswith("::error::")]
    _parse(fmt, run.out)
    out = tmp_path / f"report.{fmt}"
    run = run_cli("check", str(tree), "--format", fmt, "--output", str(out))
    assert run.code == 0, run.err
    text = out.read_text(encoding="utf-8")
    _parse(fmt, text)
    if fmt in ("text", "junit"):
        assert "c\\xff.yaml" in text and "a\\n::error::b.yaml" in text
    if fmt == "github":  # the toolkit's percent-encoding of properties
        assert "c\\xff.yaml" in text and "a%0A%3A%3Aerror%3A%3Ab.yaml" in text


def test_printable_escapes_what_a_terminal_or_runner_would_act_on() -> None:
    assert printable("plain name-0") == "plain name-0"
    assert printable("a\nb\r\x1b[2J\x7f\u202e\udcff") == "a\\nb\\r\\x1b[2J\\x7f\\u202e\\xff"
    assert printable_block("line one\n::add-mask::x\n  ::error::y") == (
        "line one\n\\::add-mask::x\n  \\::error::y"
    )
