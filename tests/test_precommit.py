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
#
# A user's repository (tests/data/gate/precommit: a Helm chart, a kustomize base with two
# overlays, plain manifests) with ssrisk installed as its pre-commit hook from this checkout;
# each test commits a change with `git commit`, as a user would, and reads the verdict. The
# hook's environment is built once for the module (it installs ssrisk and Helm's engine).

PRECOMMIT = DATA / "gate" / "precommit"
#: Helm's engine for charts, for machines without the helm binary (as the README says)
HELM_ENGINE = "helm-python-sdk>=0.2,<0.3"


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def _git(*args: str, cwd: Path, env: dict[str, str]) -> str:
    p = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return p.stdout.decode()


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
        PIP_NO_COMPILE="1",  # the hook environment is thrown away: no byte-compiling
    )
    out.pop("GITHUB_ACTIONS", None)
    # the hook must run the ssrisk pre-commit installs, not this checkout's
    out["PATH"] = os.pathsep.join(
        p for p in out.get("PATH", "").split(os.pathsep) if Path(p) != Path(sys.executable).parent
    )
    return out


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> tuple[Path, str]:
    """This project as it would be committed (tracked and new, not ignored, files) in a
    fresh git repository, and the commit to install the hook from."""
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
    return dest, _git("rev-parse", "HEAD", cwd=dest, env=env).strip()


@pytest.fixture(scope="module")
def user_repo(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str], hook_repo: tuple[Path, str]
) -> Path:
    """The user's repository with the hook installed (its environment built once here)."""
    repo = tmp_path_factory.mktemp("user-repo") / "manifests"
    shutil.copytree(PRECOMMIT, repo)
    source, rev = hook_repo
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {source}\n"
        f"    rev: {rev}\n"
        "    hooks:\n"
        "      - id: ssrisk\n"
        f'        additional_dependencies: ["{HELM_ENGINE}"]\n',
        encoding="utf-8",
    )
    _git("init", "-q", cwd=repo, env=env)
    _git("add", "-A", cwd=repo, env=env)
    _git("commit", "-q", "-m", "manifests", cwd=repo, env=env)
    pre_commit = _tool("pre-commit")
    for args in (["install"], ["install-hooks"]):
        p = subprocess.run(
            [pre_commit, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=900
        )
        assert p.returncode == 0, p.stdout + p.stderr
    return repo


def _commit(repo: Path, env: dict[str, str], edits: dict[str, tuple[str, str]]) -> tuple[int, str]:
    """Edit files (``{path: (old text, new text)}``), ``git commit`` them through the hook,
    and put the repository back; returns the commit's exit code and the hook's output."""
    base = _git("rev-parse", "HEAD", cwd=repo, env=env).strip()
    for name, (old, new) in edits.items():
        path = repo / name
        text = path.read_text(encoding="utf-8")
        assert old in text, (name, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    _git("add", *edits, cwd=repo, env=env)
    p = subprocess.run(
        ["git", "commit", "-m", "change"], cwd=repo, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    _git("reset", "-q", "--hard", base, cwd=repo, env=env)
    return p.returncode, p.stdout + p.stderr


@pytest.mark.slow
def test_a_changed_chart_template_checks_the_rendered_chart(
    user_repo: Path, env: dict[str, str]
) -> None:
    code, out = _commit(
        user_repo, env,
        {"charts/db/templates/statefulset.yaml": (
            "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 900"
        )},
    )  # fmt: skip
    assert code == 1 and "Failed" in out, out
    assert "charts/db/templates/statefulset.yaml:17:7: warning long-termination-grace" in out
    assert "3 replica(s)" in out  # replicas come from values.yaml: the chart was rendered
    assert "YAML syntax" not in out and "legacy" not in out and "deploy/" not in out


@pytest.mark.slow
def test_a_changed_template_that_is_fine_passes(user_repo: Path, env: dict[str, str]) -> None:
    code, out = _commit(
        user_repo, env,
        {"charts/db/templates/statefulset.yaml": (
            "      containers:", "      enableServiceLinks: false\n      containers:"
        )},
    )  # fmt: skip
    assert code == 0 and "Passed" in out, out


@pytest.mark.slow
def test_a_changed_patch_checks_the_overlay_that_uses_it(
    user_repo: Path, env: dict[str, str]
) -> None:
    code, out = _commit(
        user_repo, env,
        {"deploy/overlays/staging/shutdown.yaml": (
            "terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 900"
        )},
    )  # fmt: skip
    assert code == 1, out
    line = next(x for x in out.splitlines() if "long-termination-grace" in x)
    assert line.startswith("deploy/overlays/staging/shutdown.yaml:9:7: warning")
    # the set kustomize builds has the base's 3 replicas, not the patch's (absent) one
    assert "3 replica(s)" in line
    assert "overlays/prod" not in out


@pytest.mark.slow
def test_a_changed_pdb_alone_rechecks_the_statefulsets_it_selects(
    user_repo: Path, env: dict[str, str]
) -> None:
    # a PDB in the kustomize base: both overlays' StatefulSets are re-checked
    code, out = _commit(
        user_repo, env, {"deploy/base/pdb.yaml": ("maxUnavailable: 1", "maxUnavailable: 0")}
    )
    assert code == 1, out
    blocked = [
        x for x in out.splitlines() if " pdb-blocks-drain " in x and "maxUnavailable: 0" in x
    ]
    assert [x.rsplit("(from ", 1)[-1] for x in blocked] == [
        "deploy/overlays/prod) [StatefulSet prod/queue]",
        "deploy/overlays/staging) [StatefulSet staging/queue]",
    ]  # fmt: skip
    # a PDB in a directory of plain manifests: the StatefulSet beside it is re-checked
    code, out = _commit(
        user_repo, env, {"plain/kv/kv-pdb.yaml": ("maxUnavailable: 1", "maxUnavailable: 0")}
    )
    assert code == 1, out
    assert "plain/kv/kv-pdb.yaml:7:3: error pdb-blocks-drain" in out  # it fails the commit


@pytest.mark.slow
def test_a_changed_default_storage_class_rechecks_the_claims_it_serves(
    user_repo: Path, env: dict[str, str]
) -> None:
    # the default class at the top of the repository serves plain/kv's claim, two directories
    # below it; a StorageClass is looked up through the whole repository
    code, out = _commit(
        user_repo, env,
        {"storage-class.yaml": (
            "provisioner: ebs.csi.aws.com", "provisioner: kubernetes.io/no-provisioner"
        )},
    )  # fmt: skip
    assert code == 1, out
    assert "plain/kv/kv.yaml:25:7: warning node-pinned-storage" in out
    assert "legacy" not in out and "charts/" not in out  # sets without claims: not re-checked


@pytest.mark.slow
def test_a_changed_plain_file_reports_only_its_own_statefulsets(
    user_repo: Path, env: dict[str, str]
) -> None:
    code, out = _commit(
        user_repo,
        env,
        {
            "plain/kv/kv.yaml": (
                "  namespace: storage\n",
                "  namespace: storage\n  labels: {tier: data}\n",
            )
        },
    )
    assert code == 0 and "Passed" in out, out  # plain/legacy's single replica is not this commit's
    code, out = _commit(user_repo, env, {"plain/kv/kv.yaml": ("replicas: 3", "replicas: 1")})
    assert code == 1, out
    assert "plain/kv/kv.yaml:7:3: error single-replica" in out and "legacy" not in out
