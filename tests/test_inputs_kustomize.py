"""kustomize inputs: a base with two overlays, rendered with kubectl kustomize / kustomize.

Findings must point at the file the user edits (the overlay patch that sets a field, or the
base resource), base files must not be checked a second time as plain YAML, and namespaces
come from the kustomization.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT, run_cli

from ssrisk.renderers.inputs import load_inputs, plan_inputs
from ssrisk.settings import Settings

REPO = DATA / "inputs" / "repo"
DEPLOY = REPO / "deploy"

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="needs kubectl (which embeds kustomize) or kustomize on PATH",
)


def _line_of(path: Path, text: str) -> int:
    """1-based line of the first line of ``path`` containing ``text``."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")


def _findings(*args: str) -> tuple[int, list[dict[str, Any]]]:
    run = run_cli("check", "--format", "json", *args)
    return run.code, run.json()["findings"]


def test_overlay_patch_that_sets_one_replica_is_where_the_finding_points() -> None:
    code, findings = _findings(str(DEPLOY / "overlays" / "dev"))
    patch = DEPLOY / "overlays" / "dev" / "replicas.yaml"
    (f,) = [f for f in findings if f["rule"] == "single-replica"]
    assert Path(f["path"]).resolve() == patch.resolve()
    assert f["line"] == _line_of(patch, "replicas: 1")
    # kustomize applied the overlay's namespace and name prefix
    assert f["object"]["namespace"] == "dev" and f["object"]["name"] == "dev-queue"
    assert code == 1


def test_json6902_patch_raising_replicas_clears_the_finding() -> None:
    code, findings = _findings(str(DEPLOY / "overlays" / "prod"))
    assert [f for f in findings if f["rule"] == "single-replica"] == []
    assert code == 0


def test_fields_map_to_the_patch_or_the_base_file() -> None:
    loaded, errors = load_inputs([str(DEPLOY / "overlays" / "prod")], Settings())
    assert errors == [] and all(lf.errors == [] for lf in loaded)
    (sts,) = [o for lf in loaded for o in lf.objects if o.kind == "StatefulSet"]
    assert sts.get("spec", "replicas") == 5 and sts.namespace == "prod"
    # set by the JSON 6902 patch: points at its value
    patch = DEPLOY / "overlays" / "prod" / "replicas.yaml"
    at = sts.pos("spec", "replicas")
    assert Path(at.path).resolve() == patch.resolve()
    assert at.line == _line_of(patch, "value: 5")
    # untouched by patches: points into the base resource, list items by name
    base = DEPLOY / "base" / "statefulset.yaml"
    image = sts.pos("spec", "template", "spec", "containers", 0, "image")
    assert Path(image.path).resolve() == base.resolve()
    assert image.line == _line_of(base, "image: rabbitmq")
    # the origin annotation used for this is not left on the object
    assert "config.kubernetes.io/origin" not in (sts.metadata.get("annotations") or {})


def test_base_included_by_overlays_is_not_checked_again() -> None:
    plan = plan_inputs([str(REPO)])
    rendered = sorted(
        Path(k).relative_to(REPO).as_posix() for k in plan.units.get("kustomization", [])
    )
    assert rendered == ["deploy/overlays/dev", "deploy/overlays/prod"]
    # no YAML file of the kustomize tree is read as plain YAML
    assert not [f for f in plan.files if Path(f).resolve().is_relative_to(DEPLOY.resolve())]
    report = run_cli("check", "--format", "json", str(DEPLOY)).json()
    assert report["summary"]["statefulsets"] == 2  # dev and prod, not the base alone
    objects = {(f["object"]["namespace"], f["object"]["name"]) for f in report["findings"]}
    assert ("dev", "dev-queue") in objects
    assert objects <= {("dev", "dev-queue"), ("prod", "queue")}


def test_a_base_named_on_the_command_line_is_rendered_on_its_own() -> None:
    run = run_cli("check", "--format", "json", "--namespace", "team", str(DEPLOY / "base"))
    report = run.json()
    assert report["errors"] == [] and report["summary"]["statefulsets"] == 1
    assert run.code == 0  # base has 3 replicas
    loaded, _ = load_inputs([str(DEPLOY / "base")], Settings(namespace="team"))
    namespaces = {o.namespace for lf in loaded for o in lf.objects}
    assert namespaces == {"team"}  # no namespace in the kustomization: --namespace applies


def test_missing_kustomize_is_one_clear_error_and_other_inputs_are_checked(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no kubectl, no kustomize
    plain = REPO / "plain" / "postgres.yaml"
    run = run_cli("check", "--format", "json", str(DEPLOY / "overlays" / "dev"), str(plain))
    report = run.json()
    (err,) = report["errors"]
    assert err["path"] == str(DEPLOY / "overlays" / "dev")
    assert "kubectl" in err["message"] and "install" in err["message"]
    assert any(f["rule"] == "single-replica" for f in report["findings"])
    assert run.code == 2


def test_broken_kustomization_reports_kustomize_message() -> None:
    """A build kustomize refuses (a resource listed twice) gives kustomize's message without
    kubectl's log header (``E1201 14:04:22.620044 29181 run.go:72] "command failed"
    err=...``) and with the user's spelling of paths, not the private copy's or absolute."""
    failing = DATA / "inputs" / "kz-failing"
    shown = "tests/data/inputs/kz-failing"
    run = run_cli("check", "--format", "json", shown, cwd=ROOT)
    (err,) = run.json()["errors"]
    assert err["path"] == f"{shown}/overlay"
    message = err["message"]
    assert message.startswith("cannot build kustomization: ") and "already registered" in message
    assert f"'{shown}/base/sts.yaml'" in message
    for leak in ("run.go", "command failed", 'err="', str(failing), "ssrisk-kustomize"):
        assert leak not in message
    assert run.code == 2


def test_a_missing_local_reference_is_an_error_at_its_line_once() -> None:
    """A resource or patch file the kustomization names but that is not there is an error at
    the kustomization's line, once although two overlays include the base; a field path
    (``labels[].fields[].path``) and an existing generator file are no error."""
    shown = "tests/data/inputs/kz-missing"
    run = run_cli("check", shown, cwd=ROOT)
    assert run.code == 2
    errors = [line for line in run.out.splitlines() if ": error: " in line]
    assert errors == [
        f"{shown}/base/kustomization.yaml:6:5: error: resources: 'gone.yaml' does not exist;"
        " not built",
        f"{shown}/overlays/prod/kustomization.yaml:7:11: error: patches: 'grace.yaml' does not"
        " exist; not built",
    ]
    # the file named as changed (deleted by the commit) is a notice; the kustomization that
    # still lists it cannot be built, which is the error
    gone = run_cli("check", "--changed", f"{shown}/base/gone.yaml", cwd=ROOT)
    assert f"{shown}/base/gone.yaml: notice: deleted (not on disk)" in gone.out
    assert next(x for x in gone.out.splitlines() if "error:" in x) == errors[0]


def test_helm_charts_in_a_kustomization_are_refused_with_advice(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(
        "resources: []\nhelmCharts:\n  - name: postgresql\n"
        "    repo: https://charts.bitnami.com/bitnami\n    version: 12.1.0\n",
        encoding="utf-8",
    )
    run = run_cli("check", "--format", "json", str(tmp_path))
    (error,) = run.json()["errors"]
    assert run.code == 2 and (error["line"], error["column"]) == (2, 1)
    assert error["message"].startswith("helmCharts: kustomize inflates charts only with")
    assert "kustomize build --enable-helm DIR | ssrisk check -" in error["message"]
