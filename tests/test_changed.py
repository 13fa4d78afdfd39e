"""``ssrisk check --changed FILE...`` (what the pre-commit hook runs) on the test repository
of tests/data/gate/precommit: each changed file is checked in its unit (chart, kustomize
builds, directory) and only what the change concerns is reported. The real pre-commit
framework runs the same repository in test_precommit.py."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, run_cli

from ssrisk.renderers.helm import describe_renderer

REPO = DATA / "gate" / "precommit"
needs_helm = pytest.mark.skipif(not describe_renderer(), reason="needs a Helm renderer")


def changed(*files: str, select: str | None = None) -> dict[str, Any]:
    args = ["check", "--changed", "--format", "json", *files]
    if select:
        args[1:1] = ["--select", select]
    run = run_cli(*args, cwd=REPO)
    assert run.code in (0, 1), run.out + run.err
    report: dict[str, Any] = run.json()
    return report


def checked_sets(report: dict[str, Any]) -> set[tuple[str, str]]:
    """(namespace/name, kustomization or "") of the StatefulSets the findings are about."""
    return {
        (f"{f['object']['namespace']}/{f['object']['name']}", f.get("kustomization", ""))
        for f in report["findings"]
    }


@needs_helm
def test_a_template_renders_its_chart_and_reports_that_template() -> None:
    report = changed("charts/db/templates/statefulset.yaml")
    assert report["errors"] == []
    # .ssrisk.yaml renders the chart as staging and prod: one set each
    assert report["summary"]["statefulsets"] == 2
    assert {f["path"] for f in report["findings"]} <= {
        "charts/db/templates/statefulset.yaml",
        "charts/db/templates/pdb.yaml",  # the PDB of the set built from the template
    }
    assert checked_sets(report) == {("default/release-name-db", "")}


@needs_helm
def test_values_or_a_helper_concern_every_object_of_the_chart() -> None:
    for name in ("charts/db/values.yaml", "charts/db/templates/_helpers.tpl"):
        report = changed(name)
        assert checked_sets(report) == {("default/release-name-db", "")}, name


@needs_helm
def test_a_template_of_a_related_object_rechecks_the_statefulset() -> None:
    report = changed("charts/db/templates/pdb.yaml")  # the PDB template alone
    assert report["summary"]["statefulsets"] == 2  # (staging and prod)
    assert any(f["rule"] == "pdb-blocks-drain" for f in report["findings"])


def test_a_patch_builds_only_the_overlay_that_uses_it() -> None:
    report = changed("deploy/overlays/staging/shutdown.yaml")
    assert checked_sets(report) == {("staging/queue", "deploy/overlays/staging")}


def test_a_base_file_builds_every_overlay_that_includes_it() -> None:
    for name in ("deploy/base/statefulset.yaml", "deploy/base/kustomization.yaml"):
        report = changed(name)
        assert checked_sets(report) == {
            ("staging/queue", "deploy/overlays/staging"),
            ("prod/queue", "deploy/overlays/prod"),
        }, name


def test_a_related_object_rechecks_the_statefulsets_it_concerns() -> None:
    base_pdb = changed("deploy/base/pdb.yaml")
    assert base_pdb["summary"]["statefulsets"] == 2
    for name in ("plain/kv/kv-pdb.yaml", "plain/kv/kv-service.yaml"):
        report = changed(name)
        assert report["summary"]["statefulsets"] == 1, name
        assert checked_sets(report) == {("storage/kv", "")}, name
    # the prod overlay's JSON patch changes only prod's set
    assert changed("deploy/overlays/prod/replicas.yaml")["summary"]["statefulsets"] == 1


def test_a_plain_file_reports_its_own_statefulsets_only() -> None:
    report = changed("plain/kv/kv.yaml")
    assert checked_sets(report) == {("storage/kv", "")}
    assert report["summary"]["files"] == 1
    # the related objects beside it were found: no missing PDB or Service
    assert not [
        f for f in report["findings"] if f["rule"] in ("pdb-missing", "headless-service-missing")
    ]


def test_problems_of_files_that_did_not_change_are_not_reported() -> None:
    neighbour = DATA / "gate" / "changed" / "broken-neighbour"
    run = run_cli("check", "--changed", "--format", "json", str(neighbour / "db.yaml"))
    assert run.code == 0 and run.json()["errors"] == [], run.out
    # checked by hand, the broken neighbour is an error as before
    assert run_cli("check", str(neighbour)).code == 2


def test_own_files_and_non_files() -> None:
    # a changed configuration changes what every input of its tree gives: all are checked
    whole = run_cli("check", "--format", "json", ".", cwd=REPO).json()
    configured = changed(".ssrisk.yaml")
    assert configured["summary"] == whole["summary"] and configured["summary"]["files"] > 0
    for bad in ("plain", "-"):
        run = run_cli("check", "--changed", bad, cwd=REPO)
        assert run.code == 2 and "--changed takes the changed files" in run.err


def _repository(tmp_path: Path, data: Path) -> Path:
    """``data`` as a checked-out repository (a StorageClass change looks through all of it)."""
    repo = tmp_path / "repo"
    shutil.copytree(data, repo)
    (repo / ".git").mkdir()
    return repo


def test_a_storage_class_rechecks_the_statefulsets_that_claim_it(tmp_path: Path) -> None:
    storage = _repository(tmp_path, DATA / "gate" / "changed" / "storage")
    run = run_cli("check", "--changed", "--format", "json", "classes.yaml", cwd=storage)
    report = run.json()
    assert checked_sets(report) == {("default/db", "")}  # not default/cache, which claims none
    pinned = [f for f in report["findings"] if f["rule"] == "node-pinned-storage"]
    assert len(pinned) == 1 and "'fast'" in pinned[0]["explanation"]  # the class named


def test_an_autoscaler_rechecks_the_statefulset_it_scales() -> None:
    autoscaled = DATA / "gate" / "changed" / "autoscaled"
    report = run_cli("check", "--changed", "--format", "json", str(autoscaled / "hpa.yaml")).json()
    assert checked_sets(report) == {("default/web", "")}  # not default/cache beside it
    assert any(f["path"].endswith("hpa.yaml") for f in report["findings"])


SHARED_STORAGE = DATA / "gate" / "changed" / "shared-storage"


def test_a_storage_class_elsewhere_rechecks_the_statefulsets_of_the_repository_using_it(
    tmp_path: Path,
) -> None:
    """StorageClasses are shared infrastructure found by identity, often in a directory of
    their own: a change re-checks the StatefulSets that use it anywhere in the repository;
    a default class those of its directory tree that claim the default."""
    repo = _repository(tmp_path, SHARED_STORAGE)

    def commit(name: str) -> dict[str, Any]:
        args = ("--select", "node-pinned-storage", "--format", "json")
        report: dict[str, Any] = run_cli("check", "--changed", *args, name, cwd=repo).json()
        return report

    named = commit("cluster/storage/fast.yaml")
    assert checked_sets(named) == {("default/named", "")}
    assert named["summary"]["statefulsets"] == 1
    assert [f["path"] for f in named["findings"]] == ["apps/named/named.yaml"]
    default = commit("platform/default-class.yaml")
    assert checked_sets(default) == {("default/db", "")}  # not apps/web, beside platform/
    assert default["summary"]["statefulsets"] == 1
    assert "'local-default'" in default["findings"][0]["explanation"]
    # the same verdicts as the full check of the repository
    full = run_cli("check", "--select", "node-pinned-storage", "--format", "json", ".", cwd=repo)
    assert checked_sets(full.json()) == {("default/named", ""), ("default/db", "")}


def test_a_budget_in_another_directory_is_left_to_the_full_check(tmp_path: Path) -> None:
    """Namespaced related objects (PDB, Service, autoscaler) re-check the StatefulSets of their
    own unit only; one kept elsewhere is related by the full check (CI)."""
    repo = _repository(tmp_path, SHARED_STORAGE)
    args = ("--select", "pdb-blocks-drain", "--format", "json")
    alone = run_cli("check", "--changed", *args, "policies/named-pdb.yaml", cwd=repo).json()
    assert alone["summary"]["statefulsets"] == 0 and alone["findings"] == []
    full = run_cli("check", *args, ".", cwd=repo).json()
    assert checked_sets(full) == {("default/named", "")}


@needs_helm
def test_a_deleted_file_is_a_change_not_an_error() -> None:
    """git passes deleted files when asked for every changed path (pre-commit never does):
    a deleted chart template, kustomize resource or plain manifest is a notice, its chart is
    rendered and its builds built without it, and for a plain file the other manifests of its
    directory are checked as if they changed (it may have held their PDB or Service)."""
    for gone in (
        "charts/db/templates/backup.yaml",
        "deploy/base/backup.yaml",
        "plain/kv/backup.yaml",
        "elsewhere/backup.yaml",  # a whole directory deleted: nothing else to check
    ):
        run = run_cli("check", "--changed", "--format", "json", gone, cwd=REPO)
        assert run.code in (0, 1), run.out + run.err
        report = run.json()
        assert report["errors"] == []
        (notice,) = [n for n in report["notices"] if n["message"].startswith("deleted")]
        assert notice["path"] == gone
    plain = changed("plain/kv/backup.yaml")
    neighbours = changed(*[f"plain/kv/{p.name}" for p in sorted((REPO / "plain/kv").glob("*"))])
    assert checked_sets(plain) == checked_sets(neighbours) != set()
    assert changed("charts/db/templates/backup.yaml")["findings"] == []
    # a path in .git is refused whether or not it is there
    run = run_cli("check", "--changed", ".git/gone.yaml", cwd=REPO)
    assert run.code == 2 and "inside a .git directory" in run.out
