"""A repository mixing plain YAML, a kustomize base with overlays and Helm charts.

``ssrisk check REPO`` must render what needs rendering, read every object once, and point
each finding at the file a person edits.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk.renderers.helm import describe_renderer
from ssrisk.renderers.inputs import plan_inputs

REPO = DATA / "inputs" / "repo"

needs_renderers = pytest.mark.skipif(
    not describe_renderer() or not (shutil.which("kubectl") or shutil.which("kustomize")),
    reason="needs kubectl (or kustomize) and the helm binary or helm-python-sdk",
)


def _rel(path: str) -> str:
    return Path(path).resolve().relative_to(REPO.resolve()).as_posix()


@needs_renderers
def test_mixed_repository_findings_point_at_edited_files() -> None:
    run = run_cli("check", "--format", "json", str(REPO))
    report = run.json()
    assert report["errors"] == [], report["errors"]
    single = sorted(_rel(f["path"]) for f in report["findings"] if f["rule"] == "single-replica")
    assert single == [
        "charts/app/charts/cache/templates/statefulset.yaml",
        "charts/db/templates/statefulset.yaml",
        "deploy/overlays/dev/replicas.yaml",
        "plain/postgres.yaml",
    ]
    # postgres, release-name-db, release-name-cache, dev-queue and queue (prod): each once
    names = {(f["object"]["namespace"], f["object"]["name"]) for f in report["findings"]}
    assert ("default", "queue") not in names  # the base is not checked on its own
    assert report["summary"]["statefulsets"] == 5
    assert run.code == 1


def test_plan_sorts_inputs_by_kind() -> None:
    plan = plan_inputs([str(REPO)])
    assert sorted(_rel(c) for c in plan.units.get("chart", [])) == ["charts/app", "charts/db"]
    assert sorted(_rel(k) for k in plan.units.get("kustomization", [])) == [
        "deploy/overlays/dev",
        "deploy/overlays/prod",
    ]
    # chart templates, values files and kustomize resources are not plain inputs
    assert sorted(_rel(f) for f in plan.files) == ["plain/postgres.yaml"]


def test_exclude_globs_apply_to_charts_and_kustomizations() -> None:
    plan = plan_inputs([str(REPO)], excludes=["deploy", "app"])
    assert [_rel(c) for c in plan.units.get("chart", [])] == ["charts/db"]
    assert plan.units.get("kustomization", []) == []


def test_default_excludes_skip_vendored_trees(tmp_path: Path) -> None:
    shutil.copytree(REPO / "charts" / "db", tmp_path / "node_modules" / "db")
    shutil.copytree(REPO / "deploy", tmp_path / ".venv" / "deploy")
    shutil.copy(REPO / "plain" / "postgres.yaml", tmp_path / "postgres.yaml")
    plan = plan_inputs([str(tmp_path)])
    assert plan.units.get("chart", []) == [] and plan.units.get("kustomization", []) == []
    assert [Path(f).name for f in plan.files] == ["postgres.yaml"]


def test_stdin_marker_and_explicit_files() -> None:
    plain = REPO / "deploy" / "base" / "statefulset.yaml"
    plan = plan_inputs(["-", str(plain)])
    assert plan.stdin and plan.files == [str(plain)]  # a file named explicitly is read


def test_a_file_below_a_link_of_the_working_directory_names_the_link(tmp_path: Path) -> None:
    """From a directory that is not a repository, a link there is the tree's own (ssrisk
    cannot tell the user's from a checkout's): a file below it is refused, and the refusal
    names the link; it called the regular file itself "a symbolic link". Named by its real
    path, or from inside the repository, the same file is checked."""
    repo = tmp_path / "elsewhere" / "repo"
    (repo / "deploy").mkdir(parents=True)
    (repo / ".git").mkdir()
    shutil.copy(DATA / "ci" / "single.yaml", repo / "deploy" / "db.yaml")
    work = tmp_path / "work"
    work.mkdir()
    (work / "repo").symlink_to(repo)
    run = run_cli("check", "--format", "json", "repo/deploy", cwd=work)
    assert run.code == 2
    (error,) = run.json()["errors"]
    assert (error["path"], error["message"]) == (
        "repo/deploy/db.yaml",
        "reached through 'repo', a symbolic link that leads outside the checked tree; not read",
    )
    for args, cwd in ((["deploy"], work / "repo"), ([str(repo / "deploy")], work)):
        checked = run_cli("check", "--format", "json", *args, cwd=cwd).json()
        assert (checked["summary"]["statefulsets"], checked["errors"]) == (1, [])
