"""The pre-commit hook: ``.pre-commit-hooks.yaml`` run by the real pre-commit framework, and
``--context``, which lets the hook see related objects in files that did not change."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, ROOT, docs_text, run_cli

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
#: Helm's engine for charts, for machines without the helm binary: the `ssrisk-helm` hook
#: installs it (.pre-commit-hooks.yaml), as the optional dependency `helm` does (pyproject.toml)
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
        # the hook id that carries Helm's engine: charts render with no set-up of the user's
        "      - id: ssrisk-helm\n",
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
def test_a_prod_values_change_checks_the_chart_as_prod_deploys_it(
    user_repo: Path, env: dict[str, str]
) -> None:
    # .ssrisk.yaml renders charts/db as staging and prod, each with its values file
    code, out = _commit(
        user_repo, env, {"environments/prod/db-values.yaml": ("replicas: 3", "replicas: 2")}
    )
    assert code == 1 and "Failed" in out, out
    template = (PRECOMMIT / "charts/db/templates/pdb.yaml").read_text(encoding="utf-8")
    (line,) = [n for n, t in enumerate(template.splitlines(), 1) if "minAvailable" in t]
    assert f"charts/db/templates/pdb.yaml:{line}:3: error pdb-blocks-drain" in out
    assert "(from variant prod)" in out and "variant staging" not in out


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
    assert "3 replicas" in out  # replicas come from values.yaml: the chart was rendered
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
    assert "3 replicas" in line
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


# --- committed files whose names are options -----------------------------------------------
#
# pre-commit runs `entry ARGS FILES...`: a file of the commit named `--exclude=*.yaml` must be
# a file to check, never an option that hides the findings, swaps the configuration or
# writes a file. The hook's default `args: ["--"]` ends the options; a user's own `args:`
# end with `--` (README); one that does not is refused as ambiguous rather than obeyed.

SINGLE = (CI / "single.yaml").read_text(encoding="utf-8")  # single-replica error at 9:3
#: The user's own configuration, pinned with `args: [--config, x.yaml, --]`: it makes the
#: finding a warning, so its line shows which configuration the run used.
PINNED = "severity: {single-replica: warning}\nfail-on: warning\n"
EVIL = "disable: [single-replica]\n"


def _hook_config(source: Path, rev: str, args: list[str] | None = None) -> str:
    lines = [
        "repos:",
        f"  - repo: {source}",
        f"    rev: {rev}",
        "    hooks:",
        "      - id: ssrisk-helm",
    ]
    if args is not None:
        lines.append(f"        args: [{', '.join(args)}]")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def named_repo(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str], hook_repo: tuple[Path, str]
) -> Path:
    """A user's repository with the hook installed as the README shows it (no `args:`) and
    the user's configuration file `x.yaml`; the hook's environment is the one the other
    tests use (same revision and dependencies)."""
    repo = tmp_path_factory.mktemp("named-repo") / "manifests"
    repo.mkdir()
    (repo / ".pre-commit-config.yaml").write_text(_hook_config(*hook_repo), encoding="utf-8")
    (repo / "x.yaml").write_text(PINNED, encoding="utf-8")
    _git("init", "-q", cwd=repo, env=env)
    _git("add", "-A", cwd=repo, env=env)
    _git("commit", "-q", "-m", "hook", cwd=repo, env=env)
    pre_commit = _tool("pre-commit")
    for args in (["install"], ["install-hooks"]):
        p = subprocess.run(
            [pre_commit, *args], cwd=repo, env=env, capture_output=True, text=True, timeout=900
        )
        assert p.returncode == 0, p.stdout + p.stderr
    return repo


def _commit_new(
    repo: Path, env: dict[str, str], files: dict[str, str]
) -> tuple[int, str, list[str]]:
    """Write new files, ``git commit`` them through the hook and put the repository back;
    returns the commit's exit code, the hook's output and the files the run left behind
    that git does not track."""
    base = _git("rev-parse", "HEAD", cwd=repo, env=env).strip()
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    _git("add", "-A", cwd=repo, env=env)
    p = subprocess.run(
        ["git", "commit", "-m", "change"], cwd=repo, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    left = _git("ls-files", "-z", "--others", cwd=repo, env=env).split("\0")
    _git("reset", "-q", "--hard", base, cwd=repo, env=env)
    _git("clean", "-q", "-f", "-d", cwd=repo, env=env)
    return p.returncode, p.stdout + p.stderr, [name for name in left if name]


@pytest.mark.slow
def test_a_file_named_exclude_does_not_exclude_the_commit(
    named_repo: Path, env: dict[str, str]
) -> None:
    code, out, left = _commit_new(named_repo, env, {"db.yaml": SINGLE, "--exclude=*.yaml": ""})
    assert code == 1 and "Failed" in out, out
    assert "db.yaml:9:3: error single-replica" in out and "excluded" not in out
    assert left == []


@pytest.mark.slow
def test_a_file_named_config_does_not_replace_the_configuration(
    named_repo: Path, env: dict[str, str]
) -> None:
    code, out, left = _commit_new(
        named_repo, env, {"db.yaml": SINGLE, "evil.yaml": EVIL, "--config=evil.yaml": ""}
    )
    assert code == 1 and "Failed" in out, out
    assert "db.yaml:9:3: error single-replica" in out
    assert left == []


@pytest.mark.slow
def test_a_file_named_write_baseline_writes_nothing(named_repo: Path, env: dict[str, str]) -> None:
    code, out, left = _commit_new(
        named_repo, env, {"db.yaml": SINGLE, "--write-baseline=bl.yaml": ""}
    )
    assert code == 1 and "Failed" in out, out
    assert "db.yaml:9:3: error single-replica" in out and "wrote" not in out
    assert left == [] and not (named_repo / "bl.yaml").exists()


ATTACK = {
    "db.yaml": SINGLE,
    "evil.yaml": EVIL,
    "--exclude=*.yaml": "",
    "--config=evil.yaml": "",
    "--write-baseline=bl.yaml": "",
}


@pytest.mark.slow
def test_user_arguments_ended_with_a_double_dash_keep_their_configuration(
    named_repo: Path, env: dict[str, str], hook_repo: tuple[Path, str]
) -> None:
    config = _hook_config(*hook_repo, args=["--config", "x.yaml", "--"])
    code, out, left = _commit_new(named_repo, env, {**ATTACK, ".pre-commit-config.yaml": config})
    assert code == 1 and "Failed" in out, out
    # x.yaml made it a warning and fails on warnings: the pinned configuration, not evil.yaml
    assert "db.yaml:9:3: warning single-replica" in out
    assert left == []


@pytest.mark.slow
def test_user_arguments_without_a_double_dash_are_refused_not_overridden(
    named_repo: Path, env: dict[str, str], hook_repo: tuple[Path, str]
) -> None:
    config = _hook_config(*hook_repo, args=["--config", "x.yaml"])
    code, out, left = _commit_new(named_repo, env, {**ATTACK, ".pre-commit-config.yaml": config})
    assert code == 1 and "Failed" in out, out
    assert "ssrisk: error: ambiguous argument --config=evil.yaml" in out
    assert "put -- before the file names" in out
    assert left == []


def test_the_helm_hook_installs_the_engine_pyproject_names() -> None:
    tomllib = pytest.importorskip("tomllib")
    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert hooks["ssrisk-helm"]["additional_dependencies"] == [HELM_ENGINE]
    assert extra["optional-dependencies"]["helm"] == [HELM_ENGINE]
    same = ("entry", "args", "files", "language", "require_serial")
    assert all(hooks["ssrisk-helm"][k] == hooks["ssrisk"][k] for k in same)


def test_the_hook_and_the_readme_end_arguments_with_a_double_dash() -> None:
    """pre-commit appends the user's ``args:`` to ``entry``, then the files: ``entry`` has no
    ``--`` (it would make the user's options file names), the default ``args`` is ``--``,
    and every ``args:`` the README shows ends with it."""
    import re

    import yaml

    for hook in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text("utf-8")):
        assert "--" not in hook["entry"].split() and hook["args"] == ["--"]
    readme = docs_text()
    shown = [
        h.get("args")
        for body in re.findall(r"^```yaml\n(.*?)^```", readme, re.M | re.S)
        if "id: ssrisk" in body
        for h in (lambda doc: doc["repos"][0]["hooks"] if isinstance(doc, dict) else doc)(
            yaml.safe_load(body)
        )
    ]
    with_args = [a for a in shown if a is not None]
    assert with_args and all(a[-1] == "--" for a in with_args), shown


def test_the_readme_file_list_command_passes_every_name_as_a_file(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The README's ``git diff -z ... | xargs -0 ssrisk check --changed --``, run as shown
    in a repository whose last commit adds files named like options."""
    import re

    bash = _tool("bash")
    readme = docs_text()
    (line,) = [
        x
        for body in re.findall(r"^```sh\n(.*?)^```", readme, re.M | re.S)
        for x in body.splitlines()
        if "| xargs" in x
    ]
    repo = tmp_path / "repo"
    repo.mkdir()
    _git("init", "-q", cwd=repo, env=env)
    _git("commit", "-q", "--allow-empty", "-m", "base", cwd=repo, env=env)
    base = _git("rev-parse", "HEAD", cwd=repo, env=env).strip()
    for name, text in {**ATTACK, "two words.yaml": SINGLE}.items():
        (repo / name).write_text(text, encoding="utf-8")
    _git("add", "-A", cwd=repo, env=env)
    _git("commit", "-q", "-m", "change", cwd=repo, env=env)
    run_env = dict(env, BASE=base)
    run_env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    p = subprocess.run(
        [bash, "-c", line], cwd=repo, env=run_env, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 123, p.stdout + p.stderr  # xargs: a run exited 1 (findings)
    assert "db.yaml:9:3: error single-replica" in p.stdout, p.stdout + p.stderr
    assert "two words.yaml:9:3: error single-replica" in p.stdout
    assert "./--exclude=*.yaml: notice: empty file" in p.stdout
    assert not (repo / "bl.yaml").exists()
