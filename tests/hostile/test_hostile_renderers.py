"""Hostile charts and kustomizations: renderers never read outside the chart or the
repository, never reach the network, never see the caller's environment, and stop (with
everything they started) at their time, memory and output limits, or when ssrisk is
interrupted or terminated. The error names the chart or kustomization and the other inputs
are still checked.

Charts and kustomizations are in ``tests/data/hostile``; each test copies them into a
repository under ``tmp_path`` and adds the links, ``.git`` directories and large trees a
repository cannot keep in ``tests/data``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from checkout import GOOD, SECRET, assert_clean, make_checkout
from conftest import DATA, run_cli, ssrisk_executable

from ssrisk.renderers import bounded
from ssrisk.renderers.helm import describe_renderer

HOSTILE = DATA / "hostile"
CHARTS = HOSTILE / "charts"
KUSTOMIZE = HOSTILE / "kustomize"

needs_helm = pytest.mark.skipif(not describe_renderer(), reason="needs helm or helm-python-sdk")
needs_kustomize = pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="needs kubectl or kustomize",
)


def _only_error(report: dict[str, object]) -> dict[str, object]:
    errors = report["errors"]
    assert isinstance(errors, list) and len(errors) == 1, errors
    error: dict[str, object] = errors[0]
    return error


# --- charts: nothing outside the chart, nothing from .git ----------------------------------------


@needs_helm
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_chart_files_that_leave_the_chart_are_not_given_to_helm(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    chart = repo / "leak"
    shutil.copytree(CHARTS / "leak", chart)
    (chart / "files").mkdir()
    (chart / "files" / "env").symlink_to("/proc/self/environ")
    (chart / "files" / "passwd").symlink_to("/etc/passwd")
    (chart / ".git").mkdir()
    (chart / ".git" / "config").write_text(f"token = {SECRET}\n")
    run = run_cli("check", "--format", fmt, "leak", "good.yaml", cwd=repo)
    assert run.code == 2
    assert_clean(run.out, run.err)
    assert "env=[] passwd=[] git=[]" in run.out  # Helm saw none of them
    assert "good.yaml" in run.out


@needs_helm
def test_a_chart_at_the_repository_root_cannot_print_git_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    shutil.copytree(CHARTS / "leak", repo, dirs_exist_ok=True)
    report = run_cli("check", "--format", "json", ".", cwd=repo)
    assert report.code == 2
    assert_clean(report.out, report.err)
    message = str(_only_error(report.json())["message"])
    assert "git=[]" in message
    warnings = [n["message"] for n in report.json()["notices"] if n["level"] == "warning"]
    assert any("not given to Helm: a .git directory" in w for w in warnings), warnings


@needs_helm
def test_many_links_to_one_big_file_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    chart = repo / "links"
    shutil.copytree(CHARTS / "leak", chart)
    (chart / "templates" / "leak.yaml").write_text("a: 1\n")
    big = chart / "big.bin"
    big.write_bytes(b"x" * (1 << 20))
    for i in range(100):  # 100 MB through links, in a chart of one 1 MB file
        (chart / f"link{i}").symlink_to("big.bin")
    started = time.monotonic()
    report = run_cli("check", "--format", "json", "links", "good.yaml", cwd=repo)
    assert time.monotonic() - started < 20
    error = _only_error(report.json())
    assert error["path"] == "links" and "bytes (links included); not rendered" in str(
        error["message"]
    )


@needs_helm
def test_declared_dependencies_must_be_in_charts(tmp_path: Path) -> None:
    """``helm template`` refuses a chart whose Chart.yaml dependencies are not in charts/."""
    report = run_cli("check", "--format", "json", str(CHARTS / "missing-dependency"), str(GOOD))
    assert report.code == 2
    error = _only_error(report.json())
    assert "missing in charts/ directory: postgresql" in str(error["message"])
    assert report.json()["summary"]["statefulsets"] == 1  # good.yaml


@needs_helm
@pytest.mark.parametrize("fmt", ["text", "github", "json"])
def test_a_renderer_error_is_quoted_short_and_escaped(fmt: str) -> None:
    run = run_cli("check", "--format", fmt, str(CHARTS / "huge-fail"))
    assert run.code == 2
    assert len(run.out) < 3000, len(run.out)
    assert "\x1b" not in run.out
    assert not [ln for ln in run.out.splitlines() if ln.lstrip().startswith("::error::")]


# --- charts: time and memory --------------------------------------------------------------------


@needs_helm
@pytest.mark.parametrize(
    ("chart", "words"),
    [
        ("exponential-include", "did not finish within 3 s; stopped"),
        ("until", ""),  # out of memory or out of time, whichever comes first
        ("repeat", "ran out of memory"),
    ],
)
def test_templates_that_never_end_are_stopped(chart: str, words: str) -> None:
    started = time.monotonic()
    run = run_cli(
        "check", "--format", "json", "--render-timeout", "3", str(CHARTS / chart), str(GOOD)
    )
    took = time.monotonic() - started
    assert took < 15, took
    assert run.code == 2
    error = _only_error(run.json())
    message = str(error["message"])
    assert error["path"] == str(CHARTS / chart) and message.startswith("cannot render Helm chart")
    assert words in message and ("stopped" in message or "out of memory" in message), message
    assert run.json()["summary"]["statefulsets"] == 1  # good.yaml


def _processes() -> list[tuple[int, int, int, str]]:
    """``(pid, parent pid, process group, state)`` of every live process (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z":  # a zombie has ended
            out.append((int(entry.name), int(fields[1]), int(fields[2]), fields[0]))
    return out


def _descendants(pid: int) -> list[int]:
    kids = [p for p, parent, _g, _s in _processes() if parent == pid]
    return kids + [d for k in kids for d in _descendants(k)]


def _group(pgid: int) -> list[int]:
    return [p for p, _parent, group, _s in _processes() if group == pgid]


def _default_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@needs_helm
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_ssrisk_ends_the_renderer_and_cleans_up(
    sig: signal.Signals, tmp_path: Path
) -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        [ssrisk_executable(), "check", str(CHARTS / "exponential-include")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
        # a shell runs a background job (`bash land.sh &`) with SIGINT ignored, and an ignored
        # signal stays ignored across exec: give ssrisk the default disposition a terminal's
        # foreground process has, so that the test checks ssrisk, not how it was started
        preexec_fn=_default_signals,
    )
    children: list[int] = []
    deadline = time.monotonic() + 30
    while not children and time.monotonic() < deadline:  # the renderer has started
        time.sleep(0.1)
        children = _descendants(proc.pid)
    assert children, "the renderer never started"
    time.sleep(0.5)
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == (130 if sig == signal.SIGINT else 143)
    assert err.strip() in ("ssrisk: interrupted", "ssrisk: terminated"), err
    time.sleep(0.2)
    live = {p for p, *_ in _processes()}
    assert not live & set(children), "a renderer outlived ssrisk"
    assert list(scratch.iterdir()) == []  # temporary directories removed


# --- the renderer's environment -----------------------------------------------------------------


def _stand_in(directory: Path, name: str, output: Path, record: Path, sleep_s: float = 0) -> None:
    """A ``name`` executable that records its arguments and environment, optionally starts a
    long ``sleep`` of its own (as kustomize starts git and ssh) and sleeps, then prints
    ``output``."""
    script = directory / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, subprocess, sys, time\n"
        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv, 'env': dict(os.environ),"
        " 'pgid': os.getpgid(0)}))\n"
        f"if {sleep_s}:\n"
        f"    subprocess.Popen(['/bin/sleep', '300'])\n"
        f"    time.sleep({sleep_s})\n"
        f"sys.stdout.write(open({str(output)!r}).read())\n"
    )
    script.chmod(0o755)


@pytest.mark.parametrize("tool", ["kubectl", "helm"])
def test_renderers_get_a_scrubbed_environment(
    tool: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "record.json"
    _stand_in(bin_dir, tool, GOOD, record)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "real-kubeconfig"))
    monkeypatch.setenv("HTTPS_PROXY", "http://corporate-proxy:3128")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    if tool == "kubectl":
        shutil.copytree(KUSTOMIZE / "remote" / "base", repo / "kz")
        target = "kz"
    else:
        shutil.copytree(CHARTS / "missing-dependency", repo / "chart")
        (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 1.0.0\n")
        target = "chart"
    run = run_cli("check", "--format", "json", target, cwd=repo)
    assert run.code in (0, 1), run.out + run.err
    seen = json.loads(record.read_text())
    env = seen["env"]
    assert SECRET not in json.dumps(env)
    assert env["KUBECONFIG"] != str(tmp_path / "real-kubeconfig")
    assert not env["KUBECONFIG"].startswith(str(repo))
    assert env["HTTPS_PROXY"] == bounded.DEAD_PROXY and env["HTTP_PROXY"] == bounded.DEAD_PROXY
    assert shutil.which("git", path=env["PATH"]) is None
    assert env["HOME"] == env["TMPDIR"] != os.environ.get("HOME")


# --- kustomize: no network, nothing outside the repository ----------------------------------------


@needs_kustomize
def test_remote_kustomize_resources_are_refused_at_their_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    shutil.copytree(KUSTOMIZE / "remote", repo / "kz")
    started = time.monotonic()
    report = run_cli("check", "--format", "json", "kz", "good.yaml", cwd=repo)
    assert time.monotonic() - started < 10
    assert report.code == 2
    errors = report.json()["errors"]
    text = (repo / "kz" / "kustomization.yaml").read_text().splitlines()
    remote_lines = [n for n, line in enumerate(text, 1) if "://" in line or "git@" in line]
    remote_lines += [
        n
        for n, line in enumerate(text, 1)
        if line.strip() == "- github.com/example/repo/deploy?ref=v1"
    ]
    assert sorted(e["line"] for e in errors) == sorted(remote_lines)
    assert all(e["path"] == "kz/kustomization.yaml" for e in errors)
    assert all("--allow-remote-resources" in e["message"] for e in errors)
    assert any(f["path"] == "good.yaml" for f in report.json()["findings"])


@needs_kustomize
def test_the_opt_in_lets_kustomize_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    shutil.copytree(KUSTOMIZE / "remote", repo / "kz")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "record.json"
    _stand_in(bin_dir, "kubectl", GOOD, record)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin")
    run = run_cli("check", "--format", "json", "--allow-remote-resources", "kz", cwd=repo)
    assert run.code in (0, 1), run.out
    env = json.loads(record.read_text())["env"]
    assert env["PATH"] == f"{bin_dir}{os.pathsep}/usr/bin"  # git can be found
    assert SECRET not in json.dumps(env)


@needs_kustomize
def test_kustomize_paths_out_of_the_repository_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    (repo / "deploy").mkdir()
    shutil.copytree(KUSTOMIZE / "escape", repo / "deploy" / "escape")
    outside = tmp_path / "outside"  # a kustomization next to the repository, not in it
    shutil.copytree(KUSTOMIZE / "remote" / "base", outside)
    shutil.copytree(KUSTOMIZE / "remote" / "base", repo / "deploy" / "linked-base")
    (repo / "deploy" / "linked").mkdir()
    (repo / "deploy" / "linked" / "kustomization.yaml").write_text("resources: [base]\n")
    (repo / "deploy" / "linked" / "base").symlink_to(outside)
    (repo / "deploy" / "alias").mkdir()
    (repo / "deploy" / "alias" / "kustomization.yaml").symlink_to("/etc/passwd")
    for opt_in in ([], ["--allow-remote-resources"]):  # the opt-in is for the network only
        report = run_cli("check", "--format", "json", "deploy", *opt_in, cwd=repo)
        assert report.code == 2
        assert_clean(report.out, report.err)
        got = sorted((e["path"], e["line"]) for e in report.json()["errors"])
        assert got == [
            ("deploy/alias/kustomization.yaml", None),
            ("deploy/escape/kustomization.yaml", 4),
            ("deploy/escape/kustomization.yaml", 8),
            ("deploy/linked/kustomization.yaml", 1),  # its reference to the link out
        ], report.json()["errors"]
        # the link itself, met in the walk: no manifest's name, never read, a warning
        said = [(n["path"], n["level"]) for n in report.json()["notices"]]
        assert ("deploy/linked/base", "warning") in said
        assert report.json()["summary"]["statefulsets"] == 1  # linked-base, inside


@needs_kustomize
def test_kustomize_output_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An overlay tree of 60 kB whose every level includes the one below twice: the output
    doubles at each level (a 1.2 MB tree of this shape renders 512 MB)."""
    monkeypatch.setattr(bounded, "RENDER_OUTPUT_BYTES", 1 << 20)
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    level = repo / "L0"
    level.mkdir()
    (level / "cm.yaml").write_text(
        f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  big: "{"x" * 50_000}"\n'
    )
    (level / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    for k in range(1, 6):
        for half in "ab":
            (repo / f"L{k}" / half).mkdir(parents=True)
            (repo / f"L{k}" / half / "kustomization.yaml").write_text(
                f"resources: [../../L{k - 1}]\nnamePrefix: {half}-\n"
            )
        (repo / f"L{k}" / "kustomization.yaml").write_text("resources: [a, b]\n")
    report = run_cli("check", "--format", "json", "L5", "good.yaml", cwd=repo)
    error = _only_error(report.json())
    assert error["path"] == "L5" and "rendered more than 1048576 bytes" in str(error["message"])


@needs_kustomize
def test_a_hanging_kustomize_and_what_it_started_are_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tarpit host makes kustomize (and the git and ssh it starts) hang: stopped at the
    timeout, with its whole process group."""
    repo = make_checkout(tmp_path, monkeypatch, "good.yaml")
    shutil.copytree(KUSTOMIZE / "remote" / "base", repo / "kz")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "record.json"
    _stand_in(bin_dir, "kubectl", GOOD, record, sleep_s=300)
    monkeypatch.setenv("PATH", str(bin_dir))
    started = time.monotonic()
    report = run_cli("check", "--format", "json", "--render-timeout", "2", "kz", cwd=repo)
    assert time.monotonic() - started < 10
    error = _only_error(report.json())
    assert "did not finish within 2 s; stopped" in str(error["message"])
    pgid = json.loads(record.read_text())["pgid"]
    time.sleep(0.2)
    assert _group(pgid) == [], "kubectl or what it started is still running"
