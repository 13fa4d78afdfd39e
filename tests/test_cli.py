"""The check command end to end: output format, ordering, exit codes, JSON contract."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT, run_cli, run_process


def test_text_output_is_one_sorted_line_per_finding() -> None:
    run = run_cli("check", "--kube-version", "1.34", str(ROOT / "examples"))
    assert run.code == 1
    lines = [
        x for x in run.out.splitlines() if any(f": {s} " in x for s in ("error", "warning", "info"))
    ]
    assert lines, run.out
    keys = []
    for line in lines:
        path, ln, col, rest = line.split(":", 3)
        severity, rule, message = rest.strip().split(" ", 2)
        assert severity in ("error", "warning", "info") and rule and message
        keys.append((path, int(ln), int(col)))
    assert keys == sorted(keys)
    assert run.out.splitlines()[-1].startswith(f"{len(lines)} finding(s)")


def test_single_replica_points_at_the_replicas_line() -> None:
    run = run_cli("check", "--format", "json", str(ROOT / "examples" / "postgres.yaml"))
    report = run.json()
    (f,) = [f for f in report["findings"] if f["rule"] == "single-replica"]
    assert (f["line"], f["column"]) == (21, 3)
    assert f["object"] == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "namespace": "shop",
        "name": "postgres",
    }
    assert f["severity"] == "error" and f["references"]


def test_json_report_shape() -> None:
    run = run_cli("check", "--format", "json", str(ROOT / "examples"), str(DATA / "bad"))
    report = json.loads(run.out)
    assert set(report) >= {"version", "kube_version", "findings", "errors", "summary"}
    assert report["kube_version"] == "1.37"
    assert set(report["summary"]) >= {"files", "documents", "statefulsets", "findings", "errors"}
    # folded findings are listed, marked, but not counted as reported
    folded = [f for f in report["findings"] if f.get("folded_into")]
    assert folded and report["summary"]["folded"] == len(folded)
    assert report["summary"]["findings"] + len(folded) == len(report["findings"])
    assert report["summary"]["errors"] == len(report["errors"]) > 0
    for f in report["findings"]:
        assert set(f) >= {"rule", "severity", "path", "line", "column", "object", "message"}
        assert f["explanation"] and isinstance(f["references"], list)
        assert f["explanation"].isascii()  # see ssrisk.rule.ascii_text (memory per finding)


def test_bad_inputs_exit_2_and_the_good_file_is_still_checked() -> None:
    run = run_cli(
        "check",
        "--format",
        "json",
        str(DATA / "bad" / "malformed.yaml"),
        str(DATA / "bad" / "binary.yaml"),
        str(DATA / "bad" / "empty.yaml"),
        str(ROOT / "examples" / "postgres.yaml"),
    )
    assert run.code == 2
    report = run.json()
    errors = {e["path"].rsplit("/", 1)[-1]: e for e in report["errors"]}
    assert set(errors) == {"malformed.yaml", "binary.yaml"}
    # an empty file is a notice (kubectl applies nothing from it), not an error
    assert any(
        n["path"].endswith("empty.yaml") and n["level"] == "notice" for n in report["notices"]
    )
    assert errors["malformed.yaml"]["line"] == 7
    assert any(f["rule"] == "single-replica" for f in report["findings"])


def test_explain_adds_the_explanation() -> None:
    plain = run_cli("check", str(ROOT / "examples" / "postgres.yaml"))
    explained = run_cli("check", "--explain", str(ROOT / "examples" / "postgres.yaml"))
    assert len(explained.out.splitlines()) > len(plain.out.splitlines())
    assert "References:" in explained.out


def test_exit_codes_follow_fail_on() -> None:
    kafka = str(ROOT / "examples" / "kafka.yaml")  # warnings only
    assert run_cli("check", kafka).code == 0
    assert run_cli("check", "--fail-on", "warning", kafka).code == 1
    assert run_cli("check", "--fail-on", "warning", "--exit-zero", kafka).code == 0


def test_usage_errors_exit_2() -> None:
    assert run_cli("check", "--kube-version", "1.12", "x.yaml").code == 2
    assert run_cli("check", "--disable", "no-such-rule", str(ROOT / "examples")).code == 2
    assert run_cli("check").code == 2
    assert run_cli().code == 2


def test_no_traceback_for_a_missing_path() -> None:
    run = run_process("check", "does/not/exist.yaml")
    assert run.code == 2
    assert "no such file or directory" in run.out
    assert "Traceback" not in run.out + run.err


def test_a_path_in_a_directory_that_cannot_be_searched_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``lexists`` is false both for a missing file and for one in a directory this user may
    not search (mode 000; root searches every directory, so the refusal is simulated)."""
    import errno

    locked = tmp_path / "locked" / "db.yaml"
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if str(path).startswith(str(locked.parent)):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os.path, "lexists", lambda p: False)
    run = run_cli("check", str(locked))
    assert run.code == 2
    assert f"{locked}: error: permission denied" in run.out, run.out


def test_rules_and_explain_commands() -> None:
    listing = run_cli("rules", "--format", "json").json()
    ids = [r["id"] for r in listing]
    assert ids == sorted(ids) and "single-replica" in ids
    page = run_cli("explain", "single-replica")
    assert page.code == 0 and "single-replica" in page.out
    assert run_cli("explain", "nope").code == 2
    assert "(see 'ssrisk rules')" in run_cli("explain", "nope").err


def test_a_misspelt_rule_id_gets_the_closest_one() -> None:
    typo = run_cli("explain", "single-replcia")
    assert typo.code == 2
    assert (
        typo.err
        == "ssrisk: error: unknown rule 'single-replcia' (did you mean 'single-replica'?)\n"
    )
    selected = run_cli("check", "--select", "pdb-blocks", str(DATA / "ci" / "single.yaml"))
    assert selected.code == 2 and "did you mean 'pdb-blocks-drain'?" in selected.err


def test_unrendered_helm_template_is_a_notice_not_an_error() -> None:
    run = run_cli("check", str(DATA / "load" / "chart"))
    assert run.code == 0
    assert "notice: skipped: unrendered Helm template" in run.out


def test_same_object_in_two_files_is_noticed_and_findings_say_which_set() -> None:
    flat = DATA / "gate" / "envs" / "flat"  # two definitions in one directory
    run = run_cli("check", "--format", "json", str(flat))
    notices = [n for n in run.json()["notices"] if "is also defined at" in n["message"]]
    assert len(notices) == 1 and notices[0]["path"].endswith("flat/db.yaml")
    text = run_cli("check", str(flat)).out
    # the PDB concerns both StatefulSets default/db: one line each, told apart
    pdb_lines = [x for x in text.splitlines() if " pdb-blocks-drain " in x]
    assert len(pdb_lines) == 2 and len(set(pdb_lines)) == 2
    assert any("db-copy.yaml:1]" in x for x in pdb_lines)


def test_context_must_exist_and_versions_must_be_real() -> None:
    postgres = str(ROOT / "examples" / "postgres.yaml")
    run = run_cli("check", "--context", "/nonexistent/dir", postgres)
    assert run.code == 2 and "--context /nonexistent/dir" in run.err
    assert run_cli("check", "--kube-version", "1.30.99999999999", postgres).code == 2
    assert run_cli("check", "--kube-version", "1.30.12", postgres).code in (0, 1)


def test_junit_keeps_same_named_objects_of_two_files_apart() -> None:
    import xml.etree.ElementTree as ET

    envs = DATA / "load" / "envs"
    report = run_cli("check", "--format", "json", str(envs)).json()
    report["findings"] = [f for f in report["findings"] if not f.get("folded_into")]
    suite = ET.fromstring(run_cli("check", "--format", "junit", str(envs)).out).find("testsuite")
    assert suite is not None
    for env in ("prod", "staging"):
        # its own findings only: staging's PDB is staging's (two environments, not one cluster)
        want = sorted({f["rule"] for f in report["findings"] if f"/{env}/" in f["path"]})
        assert ("pdb-blocks-drain" in want) == (env == "staging")
        (case,) = [
            c for c in suite.iter("testcase") if c.get("classname", "").endswith(f"{env}/db.yaml")
        ]
        # (a failure for findings at or above fail-on, the others listed in system-out)
        text = "".join(e.text or "" for e in case if e.tag in ("failure", "system-out"))
        failed = sorted(
            {ln.split(" ")[2] for ln in text.splitlines() if ": " in ln[:200]} & set(want)
        )
        assert failed == want, env
    failures = sum(1 for case in suite.iter("testcase") if case.find("failure") is not None)
    failing = {f["path"] for f in report["findings"] if f["severity"] == "error"}
    assert failures == len(failing)


# --- file names that look like options -----------------------------------------------------
#
# pre-commit and `git diff --name-only | xargs` put the names of the repository's files on
# the command line: a committed file named `--exclude=*.yaml` must never become an option.

SINGLE = DATA / "ci" / "single.yaml"  # one error: single-replica at 9:3
#: Empty files whose names are options that would hide findings or write a file.
OPTION_NAMES = ("--exclude=*.yaml", "--config=evil.yaml", "--write-baseline=bl.yaml", "-obl.json")


def _repo_with_option_names(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copy(SINGLE, repo / "db.yaml")
    shutil.copy(SINGLE, repo / "-db.yaml")
    (repo / "evil.yaml").write_text("disable: [single-replica]\n", encoding="utf-8")
    for name in OPTION_NAMES:
        (repo / name).write_text("", encoding="utf-8")
    return repo


def test_file_names_after_a_double_dash_are_files_for_every_path_command(tmp_path: Path) -> None:
    repo = _repo_with_option_names(tmp_path)
    names = sorted(p.name for p in repo.iterdir() if p.name != ".git")
    for changed in ([], ["--changed"]):
        run = run_cli("check", *changed, "--", *names, cwd=repo)
        assert run.code == 1, (changed, run.err)
        findings = sorted(x.split(": ", 1)[0] for x in run.out.splitlines() if " error " in x)
        assert findings == ["./-db.yaml:9:3", "db.yaml:9:3"], run.out
        assert "single-replica" in run.out
        assert sorted(p.name for p in repo.iterdir() if p.name != ".git") == names
    # the options before it still apply, after the user's own arguments too
    run = run_cli(
        "check", "--changed", "--select", "single-replica", "--format", "json", "--", "-db.yaml",
        cwd=repo,
    )  # fmt: skip
    assert [(f["path"], f["rule"]) for f in run.json()["findings"]] == [
        ("./-db.yaml", "single-replica")
    ]
    sim = run_cli("simulate", "--format", "json", "--", "-db.yaml", cwd=repo)
    assert sim.code == 0 and sim.json()["results"], sim.err


def test_an_option_that_names_an_existing_entry_is_refused_without_reading_it(
    tmp_path: Path,
) -> None:
    import os

    repo = _repo_with_option_names(tmp_path)
    os.mkfifo(repo / "--values=v.yaml")  # reading it would wait for a writer
    os.symlink("/nonexistent/evil.yaml", repo / "--context=ctx")  # found by lstat only
    (repo / "--disable=single-replica").mkdir()
    for token in (*OPTION_NAMES, "--values=v.yaml", "--context=ctx", "--disable=single-replica"):
        run = run_cli("check", "--changed", token, "db.yaml", cwd=repo)
        assert run.code == 2, (token, run.out)
        assert run.err == (
            f"ssrisk: error: ambiguous argument {token}: it is an option and also names a file "
            "or directory here; put -- before the file names (ssrisk check [OPTIONS] -- "
            "FILE...)\n"
        )
        assert run.out == ""
    assert not (repo / "bl.yaml").exists() and not (repo / "bl.json").exists()
    # the name is the repository's: printed escaped, on one line
    (repo / "--set=\x1b]0;x\n.yaml").write_text("", encoding="utf-8")
    run = run_cli("check", "--set=\x1b]0;x\n.yaml", "db.yaml", cwd=repo)
    assert run.code == 2 and run.err.startswith(
        "ssrisk: error: ambiguous argument --set=\\x1b]0;x\\n.yaml: "
    )
    assert run.err.count("\n") == 1
    # with -- the options before it are the caller's, whatever the directory holds (a file
    # named --changed beside the hook's "--changed --" made every commit fail)
    (repo / "--changed").write_text("", encoding="utf-8")
    run = run_cli("check", "--changed", "--select=single-replica", "--", "db.yaml", cwd=repo)
    assert run.code == 1 and "db.yaml:9:3: error single-replica" in run.out, run.err
    # ... unless a file named -- is there too: an unsorted file list (xargs, a shuffled
    # batch) can put it after the option-like names, which would then be read as options
    (repo / "--changed").unlink()
    (repo / "--").write_text("", encoding="utf-8")
    run = run_cli("check", "--changed", "--values=v.yaml", "db.yaml", "--", cwd=repo)
    assert run.code == 2 and "ambiguous argument --values=v.yaml" in run.err, run.err
    run = run_cli("check", "--changed", "--", "db.yaml", "--", cwd=repo)
    assert "ambiguous" not in run.err  # (the names after the first -- are PATHs)
    (repo / "--").unlink()
    # after -- nothing is an option, so nothing is ambiguous: the FIFO is a PATH (with no
    # writer, an input error) and db.yaml is checked
    run = run_cli("check", "--changed", "--", "--values=v.yaml", "db.yaml", cwd=repo)
    assert run.code == 2
    assert "--values=v.yaml: error: cannot read file: nothing was read from the FIFO" in run.out
    assert "db.yaml:9:3: error single-replica" in run.out, run.out
    # an option that names no file here is still an option
    run = run_cli("check", "--select=single-replica", "db.yaml", cwd=repo)
    assert run.code == 1 and "single-replica" in run.out


def test_an_abbreviated_option_is_not_an_option(tmp_path: Path) -> None:
    repo = _repo_with_option_names(tmp_path)
    for token in ("--exc=*.yaml", "--write-base=bl.yaml", "--conf=evil.yaml", "--exit-z"):
        run = run_cli("check", token, "db.yaml", cwd=repo)
        assert run.code == 2, (token, run.out)
        assert "unrecognized arguments" in run.err and token in run.err
    assert run_cli("--vers").code == 2


@pytest.mark.parametrize("columns", ["", "60", "abc", "-3", "200"])
def test_help_is_as_wide_as_argparse_would_make_it(
    monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    """The parsers measure the terminal once, as argparse does through shutil (which it
    imported for every option it added)."""
    import argparse

    from ssrisk import cli

    if columns:
        monkeypatch.setenv("COLUMNS", columns)
    else:
        monkeypatch.delenv("COLUMNS", raising=False)
    cli._terminal_columns.cache_clear()
    try:
        parser = cli.build_parser("check")
        ours = parser._get_formatter()
        theirs = argparse.HelpFormatter(prog=parser.prog)
        assert ours._width == theirs._width
        text = parser.format_help()
    finally:
        cli._terminal_columns.cache_clear()
    assert text.startswith("usage: ssrisk ")
