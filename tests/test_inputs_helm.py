"""Helm chart directories: rendered with the helm binary or Helm's engine (``ssrisk[helm]``).

Values files and ``--set`` switch replicas and a PodDisruptionBudget; a chart with a local
dependency in ``charts/`` renders the subchart with the parent's values; a broken template
is one clear error and the other inputs are still checked; findings name the template.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import DATA, ROOT, run_cli

from ssrisk.inventory import Inventory
from ssrisk.renderers.helm import describe_renderer
from ssrisk.renderers.inputs import load_inputs
from ssrisk.rule import CheckContext
from ssrisk.settings import Settings

REPO = DATA / "inputs" / "repo"
DB = REPO / "charts" / "db"
APP = REPO / "charts" / "app"
BROKEN = DATA / "inputs" / "broken-chart"

pytestmark = pytest.mark.skipif(
    not describe_renderer(),
    reason="needs the helm binary or helm-python-sdk (pip install -e '.[dev]' installs it)",
)


def _line_of(path: Path, text: str) -> int:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(f"{text!r} not in {path}")


def _context(settings: Settings, *paths: Path) -> CheckContext:
    loaded, errors = load_inputs([str(p) for p in paths], settings)
    assert errors == [] and [e for lf in loaded for e in lf.errors] == []
    inventory = Inventory(o for lf in loaded for o in lf.objects)
    (sts,) = inventory.statefulsets
    return CheckContext(sts=sts, inventory=inventory, kube_version=settings.kube_version)


def test_default_values_one_replica_and_no_pdb() -> None:
    ctx = _context(Settings(namespace="data"), DB)
    assert ctx.replicas == 1 and ctx.pdbs() == []
    assert ctx.sts.name == "release-name-db" and ctx.sts.namespace == "data"


def test_values_file_switches_replicas_and_pdb_on() -> None:
    ctx = _context(Settings(helm_values=(str(DB / "values-ha.yaml"),)), DB)
    assert ctx.replicas == 3
    (pdb,) = ctx.pdbs()
    assert pdb.get("spec", "minAvailable") == 1  # from the chart's values.yaml, merged


def test_set_overrides_values_files_in_order() -> None:
    settings = Settings(
        helm_values=(str(DB / "values-ha.yaml"),), helm_set=("replicas=2", "pdb.enabled=false")
    )
    ctx = _context(settings, DB)
    assert ctx.replicas == 2 and ctx.pdbs() == []


def test_finding_points_at_the_template_line() -> None:
    run = run_cli("check", "--format", "json", str(DB))
    template = DB / "templates" / "statefulset.yaml"
    (f,) = [f for f in run.json()["findings"] if f["rule"] == "single-replica"]
    assert Path(f["path"]).resolve() == template.resolve()
    assert f["line"] == _line_of(template, "replicas: {{")
    assert f["source_template"] == "db/templates/statefulset.yaml"
    assert run.code == 1
    cleared = run_cli("check", "--format", "json", "--values", str(DB / "values-ha.yaml"), str(DB))
    assert [f for f in cleared.json()["findings"] if f["rule"] == "single-replica"] == []


def test_dependency_subchart_renders_with_parent_values() -> None:
    ctx = _context(Settings(), APP)
    assert ctx.sts.name == "release-name-cache"
    assert ctx.replicas == 1  # the parent's cache.replicas overrides the subchart's 3
    assert ctx.inventory.service("default", "release-name-app") is not None
    template = APP / "charts" / "cache" / "templates" / "statefulset.yaml"
    at = ctx.sts.pos("spec", "replicas")
    assert Path(at.path).resolve() == template.resolve()
    assert at.line == _line_of(template, "replicas:")
    assert at.source == "app/charts/cache/templates/statefulset.yaml"
    off = _context(Settings(helm_set=("cache.replicas=3",)), APP)
    assert off.replicas == 3


def test_broken_template_is_one_error_and_other_inputs_are_checked() -> None:
    plain = REPO / "plain" / "postgres.yaml"
    run = run_cli("check", "--format", "json", str(BROKEN), str(plain))
    report = run.json()
    (err,) = report["errors"]
    # at the template's line Helm names (a file of the chart), not at the chart directory
    assert (err["path"], err["line"]) == (str(BROKEN / "templates" / "statefulset.yaml"), 6)
    assert "nosuchfunction" in err["message"]
    assert any(f["path"] == str(plain) for f in report["findings"])
    assert run.code == 2


def test_a_subchart_template_error_is_at_its_file_and_line() -> None:
    """Helm names a subchart's template by chart names (``app/charts/postgres/...``); the
    error is at the file in the subchart's directory (``charts/postgres-dir``), line and
    column, in every format (the github annotation's ``file=`` too)."""
    chart = DATA / "inputs" / "broken-subchart"
    template = chart / "charts" / "postgres-dir" / "templates" / "statefulset.yaml"
    (err,) = run_cli("check", "--format", "json", str(chart)).json()["errors"]
    line = _line_of(template, "required")
    assert (err["path"], err["line"], err["column"]) == (str(template), line, 20)
    assert "postgres.image is required" in err["message"]
    github = run_cli("check", "--format", "github", str(chart)).out
    assert f"::error file={template.relative_to(ROOT)},line={line},col=20::" in github


def test_unreadable_values_file_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    run = run_cli("check", "--format", "json", "--values", str(missing), str(DB))
    (err,) = run.json()["errors"]
    assert err["path"] == str(DB) and str(missing) in err["message"]
    assert run.code == 2


def test_missing_helm_renderer_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no helm binary
    monkeypatch.setitem(sys.modules, "helm_python", None)  # and no Helm engine
    plain = REPO / "plain" / "postgres.yaml"
    run = run_cli("check", "--format", "json", str(DB), str(plain))
    report = run.json()
    (err,) = report["errors"]
    assert err["path"] == str(DB)
    assert "ssrisk[helm]" in err["message"] and "helm" in err["message"]
    assert any(f["path"] == str(plain) for f in report["findings"])
    assert run.code == 2


@pytest.mark.skipif(shutil.which("helm") is not None, reason="the helm binary takes precedence")
def test_templates_that_render_nothing_are_not_files() -> None:
    loaded, _ = load_inputs([str(DB)], Settings())
    names = sorted(Path(lf.path).name for lf in loaded)
    assert names == ["statefulset.yaml"]  # no NOTES.txt, no _helpers.tpl, no empty pdb.yaml


def test_helm_binary_output_is_split_by_source_comment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With a ``helm`` on PATH, ssrisk runs ``helm template`` and splits its output by the
    ``# Source:`` comments. A stand-in records its arguments and prints real output."""
    stream = DATA / "inputs" / "stdin" / "helm-template-output.yaml"
    args_file = tmp_path / "args"
    helm = tmp_path / "helm"
    helm.write_text(
        f"#!{sys.executable}\nimport pathlib, sys\n"
        f"pathlib.Path({str(args_file)!r}).write_text(chr(10).join(sys.argv[1:]))\n"
        f"sys.stdout.write(pathlib.Path({str(stream)!r}).read_text())\n"
    )
    helm.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    settings = Settings(
        namespace="data", helm_values=(str(DB / "values-ha.yaml"),), helm_set=("replicas=1",)
    )
    loaded, errors = load_inputs([str(DB)], settings)
    assert errors == [] and [e for lf in loaded for e in lf.errors] == []
    args = args_file.read_text().split("\n")
    assert args[:2] == ["template", "release-name"] and args[3:5] == ["-n", "data"]
    assert "--values" in args and "--set" in args and "replicas=1" in args
    by_path = {Path(lf.path).resolve(): lf for lf in loaded}
    template = DB / "templates" / "statefulset.yaml"
    (sts,) = by_path[template.resolve()].objects
    assert sts.pos("spec", "replicas").line == _line_of(template, "replicas: {{")
    (pdb,) = by_path[(DB / "templates" / "pdb.yaml").resolve()].objects
    assert pdb.start().source == "db/templates/pdb.yaml"


def test_an_object_a_chart_renders_twice_is_checked_once() -> None:
    """A parent chart and its subchart render the same StatefulSet: Helm cannot install both,
    which is a warning at the second copy, and the StatefulSet is checked (and reported) once."""
    chart = DATA / "gate" / "subchart-dup"
    report = run_cli("check", "--format", "json", str(chart)).json()
    assert report["summary"]["statefulsets"] == 1
    single = [f for f in report["findings"] if f["rule"] == "single-replica"]
    assert len(single) == 1
    (warning,) = [n for n in report["notices"] if "is also rendered from" in n["message"]]
    assert warning["level"] == "warning" and "already exists" in warning["message"]


SPLIT_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: split\nversion: 0.1.0\n",
    # a first line indented by the template's whitespace, and a '---#' separator: helm
    # template trims and splits both (pkg/releaseutil/manifest.go#SplitManifests)
    "templates/all.yaml": (
        "  {{- /* a template that starts indented */}}\n"
        "  apiVersion: policy/v1\n"
        "kind: PodDisruptionBudget\n"
        "metadata:\n"
        "  name: db\n"
        "spec:\n"
        "  maxUnavailable: 1\n"
        "  selector: {matchLabels: {app: db}}\n"
        "---# the set\n"
        "apiVersion: apps/v1\n"
        "kind: StatefulSet\n"
        "metadata:\n"
        "  name: db\n"
        "spec:\n"
        "  serviceName: db\n"
        "  replicas: {{ .Values.replicas }}\n"
        "  selector: {matchLabels: {app: db}}\n"
        "  template:\n"
        "    metadata: {labels: {app: db}}\n"
        "    spec:\n"
        "      containers: [{name: db, image: example.org/db:1}]\n"
    ),
    "values.yaml": "replicas: 1\n",
}


def test_engine_output_is_split_and_trimmed_as_helm_does(tmp_path: Path) -> None:
    chart = tmp_path / "split"
    for name, text in SPLIT_CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text, encoding="utf-8")
    run = run_cli("check", "--format", "json", str(chart))
    report = run.json()
    assert report["errors"] == [], report["errors"]
    found = {(f["rule"], f["line"]) for f in report["findings"]}
    # both objects are read: the budget (which lets a drain evict the only replica) and the
    # set, each at its template line
    template = chart / "templates" / "all.yaml"
    assert ("pdb-quorum-loss", _line_of(template, "maxUnavailable: 1")) in found
    assert ("single-replica", _line_of(template, "replicas: {{")) in found


CAPABILITIES_CHART = {
    "Chart.yaml": "apiVersion: v2\nname: caps\nversion: 0.1.0\n",
    # gates seen in popular charts: a budget only where the cluster serves policy/v1, a
    # replica count by Kubernetes version, an object only where a CRD group is served
    "templates/pdb.yaml": (
        '{{- if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" }}\n'
        "apiVersion: policy/v1\n"
        "kind: PodDisruptionBudget\n"
        "metadata: {name: db}\n"
        "spec: {maxUnavailable: 1, selector: {matchLabels: {app: db}}}\n"
        "{{- end }}\n"
    ),
    "templates/sts.yaml": (
        "apiVersion: apps/v1\n"
        "kind: StatefulSet\n"
        "metadata: {name: db}\n"
        "spec:\n"
        "  serviceName: db\n"
        '  replicas: {{ if semverCompare ">=1.30-0" .Capabilities.KubeVersion.GitVersion }}'
        "3{{ else }}1{{ end }}\n"
        "  podManagementPolicy: Parallel\n"
        "  selector: {matchLabels: {app: db}}\n"
        "  template:\n"
        "    metadata: {labels: {app: db}}\n"
        "    spec: {containers: [{name: db, image: example.org/db:1}]}\n"
        '{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" }}\n'
        "---\n"
        "apiVersion: apps/v1\n"
        "kind: StatefulSet\n"
        "metadata: {name: exporter}\n"
        "spec:\n"
        "  serviceName: exporter\n"
        "  replicas: 2\n"
        "  selector: {matchLabels: {app: exporter}}\n"
        "  template:\n"
        "    metadata: {labels: {app: exporter}}\n"
        "    spec: {containers: [{name: e, image: example.org/e:1}]}\n"
        "{{- end }}\n"
    ),
}


def test_capabilities_are_those_of_the_checked_kubernetes_version(tmp_path: Path) -> None:
    chart = tmp_path / "caps"
    for name, text in CAPABILITIES_CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text, encoding="utf-8")

    def run(*args: str) -> tuple[set[str], int]:
        report = run_cli("check", "--format", "json", *args, str(chart)).json()
        assert report["errors"] == []
        return {f["rule"] for f in report["findings"]}, report["summary"]["statefulsets"]

    rules, sets = run("--kube-version", "1.31")
    # policy/v1/PodDisruptionBudget is served (an offline helm template says it is not)
    assert "pdb-missing" not in rules and "single-replica" not in rules and sets == 1
    rules, sets = run("--kube-version", "1.29")  # the semverCompare branch of 1.29
    assert "single-replica" in rules
    _rules, sets = run("--api-versions", "monitoring.coreos.com/v1")
    assert sets == 2
    (tmp_path / ".ssrisk.yaml").write_text("api-versions: [monitoring.coreos.com/v1]\n")
    _rules, sets = run("--config", str(tmp_path / ".ssrisk.yaml"))
    assert sets == 2
