"""Installed as a user installs it: the wheel built from this checkout, in a clean virtual
environment without development tools, run through the GitHub Action's own script
(scripts/action.sh, what action.yml runs) on a repository of manifests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT


@pytest.mark.slow
def test_the_wheel_installs_and_runs_through_the_action_script(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    wheels = tmp_path / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(wheels),
         str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = wheels.glob("ssrisk-*.whl")
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", repo / "deploy")
    (repo / ".git").mkdir()
    output, summary = tmp_path / "github-output", tmp_path / "summary.md"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.executable).parent
    )
    env.update(
        GITHUB_ACTION_PATH=str(ROOT),
        GITHUB_ACTIONS="true",
        GITHUB_WORKSPACE=str(repo),
        GITHUB_OUTPUT=str(output),
        GITHUB_STEP_SUMMARY=str(summary),
        RUNNER_TEMP=str(tmp_path),
        INPUT_PATHS="deploy/",
        INPUT_ARGS="--kube-version 1.33",
        INPUT_SARIF_FILE="ssrisk.sarif",
        INPUT_INSTALL=str(wheel),
        INPUT_HELM="false",
    )
    run = subprocess.run(
        [bash, str(ROOT / "scripts" / "action.sh")], cwd=repo, env=env, capture_output=True,
        text=True, timeout=900,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    # the check ran and found the examples' findings: exit 1, said to the next steps
    assert output.read_text().splitlines() == ["exit-code=1"]
    assert "::error file=deploy/postgres.yaml,line=21,col=3,title=ssrisk single-replica::" in (
        run.stdout
    )
    sarif = json.loads((repo / "ssrisk.sarif").read_text())
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} >= {"single-replica"}
    text = summary.read_text()
    assert text.startswith("## ssrisk: ") and "```mermaid\ngantt\n" in text
    # a clean environment: ssrisk and what it needs, no development tools
    python = tmp_path / "ssrisk-venv" / "bin" / "python"
    assert subprocess.run([str(python), "-c", "import pytest"], capture_output=True).returncode
    version = subprocess.run(
        [str(tmp_path / "ssrisk-venv" / "bin" / "ssrisk"), "--version"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert version.returncode == 0 and "0.1.0" in version.stdout
    # the wheel holds the compiled YAML reader where it can be built (a C compiler and
    # libyaml's headers, as on this machine); without them it installs without it
    if shutil.which("cc") and Path("/usr/include/yaml.h").exists():
        compiled = subprocess.run([str(python), "-c", "import ssrisk._cyaml"], capture_output=True)
        assert compiled.returncode == 0, compiled.stderr
