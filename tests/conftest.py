"""Shared test helpers: run the CLI in-process or as a user would, and find ../shared."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SHARED = (ROOT / ".." / "shared").resolve()


def ssrisk_executable() -> str:
    exe = Path(sys.executable).with_name("ssrisk")
    if exe.exists():
        return str(exe)
    found = shutil.which("ssrisk")
    if found is None:
        pytest.skip("the ssrisk console script is not installed")
    return found


@pytest.fixture(autouse=True, scope="session")
def _own_cache_directory(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The suite's cache (schemas, verdicts, simulation results) is its own, made empty for
    each run: what it finds there is what the suite wrote, never the user's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.delenv("SSRISK_NO_CACHE", raising=False)
        yield


@pytest.fixture(autouse=True)
def _outside_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see no GitHub Actions workspace (outputs spell paths relative to it when set);
    a test that wants one sets it."""
    monkeypatch.delenv("GITHUB_WORKSPACE", raising=False)


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def docs_text() -> str:
    """The README and every page of docs/ as one text: what a user reads (the tests that check
    the documented commands, snippets and examples read this)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return "\n".join(p.read_text(encoding="utf-8") for p in pages)


def run_cli(*args: str, cwd: Path | None = None) -> Run:
    """Run ``ssrisk ARGS`` in-process (fast), capturing stdout, stderr and the exit code."""
    from ssrisk.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse usage errors
                code = int(exc.code or 0)
    finally:
        os.chdir(old)
    return Run(code, out.getvalue(), err.getvalue())


def run_process(*args: str, cwd: Path | None = None, stdin: str | None = None) -> Run:
    """Run the installed ``ssrisk`` console script in a subprocess, as a user would."""
    p = subprocess.run(
        [ssrisk_executable(), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        timeout=120,
    )
    return Run(p.returncode, p.stdout, p.stderr)


def shared(*parts: str) -> Path:
    """A path under ../shared; skips the test when ../shared is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not available")
    return path


def containers(value: Any) -> list[Any]:
    """Every mapping and list in ``value`` (loaded data), ``value`` itself included."""
    out: list[Any] = []
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict | list):
            out.append(v)
            todo.extend(v.values() if isinstance(v, dict) else v)
    return out
