"""Exit codes and options that must mean what they say: ``fail-on: info`` from a file, a
reader that closes the pipe, a full disk, output formats from file names, contradictory
options, profile values the simulator cannot use, and baselines that keep severities."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import DATA, run_cli, ssrisk_executable

GATE = DATA / "gate"
SINGLE = DATA / "ci" / "single.yaml"


# --- fail-on: info ---------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["yaml", "toml"])
def test_fail_on_info_in_the_configuration_fails_on_an_info_finding(kind: str) -> None:
    where = GATE / "fail-on-info" / kind
    run = run_cli("check", "--format", "json", "ledger.yaml", cwd=where)
    severities = [f["severity"] for f in run.json()["findings"]]
    assert severities == ["info"], run.out
    assert run.code == 1, run.err
    # the flag still overrides the file
    assert run_cli("check", "--fail-on", "warning", "ledger.yaml", cwd=where).code == 0


# --- standard output that goes away ------------------------------------------------------


def _run_with_stdout(stdout: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [ssrisk_executable(), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


def _with_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ssrisk with standard output a pipe whose reader is already gone (``| head``)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return _run_with_stdout(write, *args)
    finally:
        os.close(write)


def test_a_closed_pipe_keeps_the_exit_code_of_the_findings() -> None:
    p = _with_closed_pipe("check", "--format", "json", str(SINGLE))
    assert p.returncode == 1, p.stderr  # single-replica is an error finding
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr


def test_a_closed_pipe_without_findings_is_not_an_error() -> None:
    p = _with_closed_pipe("check", "--select", "pdb-missing", str(SINGLE))
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


@pytest.mark.parametrize("command", [["rules"], ["systems"], ["explain", "single-replica"]])
def test_a_closed_pipe_ends_other_commands_quietly_with_0(command: list[str]) -> None:
    """The exit code was 0 or 2 by chance: 2 when the reader had gone before the write, 0
    when the output fitted the pipe first."""
    p = _with_closed_pipe(*command)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_is_a_clean_error(tmp_path: Path) -> None:
    with open("/dev/full", "w") as full:
        p = _run_with_stdout(full.fileno(), "check", str(SINGLE))
    assert p.returncode == 2
    assert "cannot write text output: standard output: No space left on device" in p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    # an output file on a full disk: the other outputs are still written
    report = tmp_path / "report.json"
    p = _run_with_stdout(
        subprocess.DEVNULL, "check", str(SINGLE), "-o", str(report), "--format", "sarif",
        "-o", "/dev/full",
    )  # fmt: skip
    assert p.returncode == 2
    assert "cannot write sarif output: /dev/full: cannot write: No space left on device" in p.stderr
    assert json.loads(report.read_text())["findings"]


# --- outputs ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "check"),
    [
        (
            "report.json",
            lambda text: "single-replica" in {f["rule"] for f in json.loads(text)["findings"]},
        ),
        ("report.sarif", lambda text: json.loads(text)["version"] == "2.1.0"),
        ("report.sarif.json", lambda text: json.loads(text)["version"] == "2.1.0"),
        ("report.xml", lambda text: text.startswith("<?xml")),
        ("report.txt", lambda text: "error single-replica" in text),
    ],
)
def test_output_format_follows_the_file_name(tmp_path: Path, name: str, check: object) -> None:
    dest = tmp_path / name
    run = run_cli("check", str(SINGLE), "-o", str(dest))
    assert run.code == 1, run.err
    assert run.out == ""
    assert callable(check) and check(dest.read_text(encoding="utf-8")), dest.read_text()


def test_output_file_of_unknown_kind_without_format_is_refused(tmp_path: Path) -> None:
    run = run_cli("check", str(SINGLE), "-o", str(tmp_path / "report.out"))
    assert run.code == 2
    assert "cannot tell the format" in run.err and "--format" in run.err
    assert not (tmp_path / "report.out").exists()
    # with --format it is fine
    run = run_cli("check", str(SINGLE), "--format", "json", "-o", str(tmp_path / "report.out"))
    assert run.code == 1 and json.loads((tmp_path / "report.out").read_text())["findings"]


def test_one_file_for_two_outputs_is_a_usage_error(tmp_path: Path) -> None:
    dest = tmp_path / "out.json"
    run = run_cli(
        "check", str(SINGLE), "--format", "json", "-o", str(dest),
        "--format", "sarif", "-o", str(tmp_path / "." / "out.json"),
    )  # fmt: skip
    assert run.code == 2 and "named for the json output and the sarif output" in run.err
    run = run_cli("check", str(SINGLE), "-o", str(dest), "--write-baseline", str(dest))
    assert run.code == 2 and "--write-baseline" in run.err
    assert not dest.exists()


def test_select_and_disable_of_one_rule_is_a_usage_error() -> None:
    run = run_cli(
        "check", "--select", "single-replica", "--disable", "single-replica", str(SINGLE)
    )  # fmt: skip
    assert run.code == 2
    assert "--select and --disable both name single-replica" in run.err


# --- profile values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("podgc-zero", "podgc-period-s must be seconds from 0.001"),
        ("nan", "attach-s must be a finite number, not nan"),
        ("inf", "out-of-service-after-s must be a finite number, not inf"),
        ("threshold", "unhealthy-zone-threshold must be a fraction from 0 to 1"),
        ("storage", "assume-default-storage must be one of zonal"),
        ("eviction-rate", "node-eviction-rate must be nodes per second from 0"),
    ],
)
def test_profile_values_the_simulator_cannot_use_are_config_errors(name: str, words: str) -> None:
    config = GATE / "profile" / f"{name}.ssrisk.yaml"
    run = run_cli("check", "--config", str(config), str(SINGLE))
    assert run.code == 2
    setting = config.read_text(encoding="utf-8").splitlines()[2]  # at the value
    column = len(setting) - len(setting.split(":", 1)[1].lstrip()) + 1
    assert f"{config}:3:{column}: profile {words}" in run.err, run.err
    assert run.out == ""  # stopped before checking anything: no internal error at a manifest


# --- baselines keep the severity ---------------------------------------------------------


def test_a_baselined_finding_that_became_more_severe_is_new(tmp_path: Path) -> None:
    base = GATE / "baseline"
    for name in ("db.yaml", "baseline.json"):
        shutil.copy(base / name, tmp_path / name)
    args = ("check", "--format", "json", "--baseline", "baseline.json", "db.yaml")
    same = run_cli(*args, "--config", str(base / "lowered.ssrisk.yaml"), cwd=tmp_path)
    assert same.json()["findings"] == [] and same.json()["summary"]["baselined"] == 2
    raised = run_cli(*args, "--config", str(base / ".ssrisk.yaml"), cwd=tmp_path)
    found = raised.json()["findings"]
    assert [(f["rule"], f["severity"]) for f in found] == [("update-strategy-ondelete", "warning")]
    assert raised.json()["summary"]["baselined"] == 1


def test_write_baseline_records_the_severity(tmp_path: Path) -> None:
    shutil.copy(GATE / "baseline" / "db.yaml", tmp_path / "db.yaml")
    run = run_cli("check", "--write-baseline", "b.json", "db.yaml", cwd=tmp_path)
    assert run.code == 0, run.err
    entries = json.loads((tmp_path / "b.json").read_text())["findings"]
    by_rule = {e["rule"]: e["severity"] for e in entries}
    assert by_rule["single-replica"] == "error"
    assert by_rule["update-strategy-ondelete"] == "info"
