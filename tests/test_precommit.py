"""The pre-commit hook: ``.pre-commit-hooks.yaml`` run by the real pre-commit framework, and
``--context``, which lets the hook see related objects in files that did not change."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, ROOT, run_cli

CI = DATA / "ci"


# --- --context (what the hook passes) ----------------------------------------------------


def test_context_supplies_related_objects_from_sibling_files() -> None:
    sts = str(CI / "context" / "sts.yaml")
    alone = run_cli("check", "--format", "json", "--select", "pdb-missing", sts).json()
    if not alone["findings"]:
        pytest.skip("the pdb-missing rule is not installed")
    assert [f["rule"] for f in alone["findings"]] == ["pdb-missing"]
    with_context = run_cli(
        "check", "--format", "json", "--select", "pdb-missing",
        "--context", str(CI / "context"), sts,
    ).json()  # fmt: skip
    assert with_context["findings"] == []
    # the StatefulSet that is only in the context is not checked
    assert with_context["summary"]["statefulsets"] == 1


def test_context_errors_do_not_fail_the_run() -> None:
    run = run_cli(
        "check", "--select", "single-replica", "--context", str(DATA / "bad"),
        str(CI / "good.yaml"),
    )  # fmt: skip
    assert run.code == 0, run.out


# --- the real pre-commit framework -------------------------------------------------------


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def _git(*args: str, cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    home = tmp_path_factory.mktemp("pre-commit-home")
    out = dict(os.environ)
    out.update(
        PRE_COMMIT_HOME=str(home),
        GIT_AUTHOR_NAME="test",
        GIT_AUTHOR_EMAIL="test@example.org",
        GIT_COMMITTER_NAME="test",
        GIT_COMMITTER_EMAIL="test@example.org",
        GIT_CONFIG_NOSYSTEM="1",
    )
    out.pop("GITHUB_ACTIONS", None)
    return out


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """This project as it would be committed (tracked and new, not ignored, files) in a
    fresh git repository, so that try-repo installs exactly the working tree."""
    _tool("git")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
    )
    if listed.returncode != 0:
        pytest.skip("the project is not a git checkout")
    dest = tmp_path_factory.mktemp("ssrisk-src")
    for name in filter(None, listed.stdout.decode().split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    _git("init", "-q", cwd=dest, env=env)
    _git("add", "-A", cwd=dest, env=env)
    _git("commit", "-q", "-m", "snapshot", cwd=dest, env=env)
    return dest


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """A user's repository: a bad manifest, and a good one whose PDB is in a sibling file."""
    repo = tmp_path_factory.mktemp("user-repo")
    (repo / "deploy").mkdir()
    shutil.copy(CI / "single.yaml", repo / "bad.yaml")
    shutil.copy(CI / "context" / "sts.yaml", repo / "deploy" / "kv.yaml")
    pdb = (CI / "context" / "pdb.yaml").read_text(encoding="utf-8").split("\n---\n")[0]
    (repo / "deploy" / "kv-pdb.yaml").write_text(pdb + "\n", encoding="utf-8")
    # pdb-missing is a warning: fail on warnings so the sibling PDB decides the outcome
    (repo / ".ssrisk.yaml").write_text(
        "select: [single-replica, pdb-missing]\nfail-on: warning\n", encoding="utf-8"
    )
    _git("init", "-q", cwd=repo, env=env)
    _git("add", "-A", cwd=repo, env=env)
    _git("commit", "-q", "-m", "manifests", cwd=repo, env=env)
    return repo


def _try_repo(hook_repo: Path, user_repo: Path, env: dict[str, str], *files: str) -> str:
    p = subprocess.run(
        [_tool("pre-commit"), "try-repo", str(hook_repo), "ssrisk", "--files", *files],
        cwd=user_repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return f"{p.returncode}\n{p.stdout}{p.stderr}"


@pytest.mark.slow
def test_pre_commit_hook_fails_on_the_bad_manifest_and_passes_on_the_good_one(
    hook_repo: Path, user_repo: Path, env: dict[str, str]
) -> None:
    bad = _try_repo(hook_repo, user_repo, env, "bad.yaml")
    assert bad.startswith("1\n"), bad
    assert "Failed" in bad and "bad.yaml:9:3: error single-replica" in bad
    # only kv.yaml changed; its PodDisruptionBudget is found in kv-pdb.yaml through --context
    good = _try_repo(hook_repo, user_repo, env, "deploy/kv.yaml")
    assert good.startswith("0\n"), good
    assert "Passed" in good
