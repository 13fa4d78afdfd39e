"""Verified fixes (``--fixes``, :mod:`ssrisk.remedy`) and ``ssrisk fix`` (:mod:`ssrisk.fixer`):
the smallest change after which the rule, run again with its simulation, reports nothing;
applied to plain YAML with comments and style kept, once."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, Run, run_cli

from ssrisk.model import Finding, Severity
from ssrisk.remedy import Edit, Remedy, apply_edits, find_fix
from ssrisk.rule import CheckContext, Rule

MANIFEST = """\
# the orders database
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db   # keep this name
spec:
  serviceName: db
  replicas: 3
  updateStrategy:
    rollingUpdate:
      partition: 5   # staged rollout
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: db
          image: "nginx:1.27"
          readinessProbe: {httpGet: {path: /, port: 80}}
"""
FIXED_RULES = "partition-blocks-update,replicas-share-failure-domain"


#: A cluster whose zones are stated (a required zone spread is applied only on one).
ZONES = "profile: {zones: 3, nodes-per-zone: 2}\n"


def _files(root: Path) -> dict[Path, bytes]:
    """Every file below ``root`` with its bytes (to show that nothing was written)."""
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _fix_writes_nothing(repo: Path, rule: str, target: str = ".") -> Run:
    """``ssrisk fix --select RULE TARGET`` in ``repo``, which must exit 1 and leave every file
    as it was; the run, for what it says."""
    before = _files(repo)
    run = run_cli("fix", "--select", rule, target, cwd=repo)
    assert run.code == 1, run.out + run.err
    assert _files(repo) == before
    return run


def _repo(tmp_path: Path, zones: bool = True) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "db.yaml").write_text(MANIFEST, encoding="utf-8")
    if zones:
        (tmp_path / ".ssrisk.yaml").write_text(ZONES, encoding="utf-8")
    return tmp_path


def test_findings_carry_a_verified_fix_only_when_asked(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    plain = run_cli("check", "--format", "json", "db.yaml", cwd=repo).json()
    assert not any("fix" in f for f in plain["findings"])
    asked = run_cli("check", "--fixes", "--format", "json", "db.yaml", cwd=repo).json()
    fixes = {f["rule"]: f["fix"] for f in asked["findings"] if "fix" in f}
    assert fixes["partition-blocks-update"]["edits"] == [
        {"field": "spec.updateStrategy.rollingUpdate.partition", "value": 0}
    ]
    spread = fixes["replicas-share-failure-domain"]
    assert spread["verified"]["after"] == "no finding"
    assert spread["verified"]["cluster"].startswith("the profile's zones")
    assert spread["verified"]["before"]["node_loss_takes"] == 3
    keys = [c["topologyKey"] for c in spread["edits"][0]["value"]]
    assert keys == ["kubernetes.io/hostname", "topology.kubernetes.io/zone"]
    # the simulation run again on the changed set: a node loss takes one replica, not three
    (node_loss,) = [s for s in spread["verified"]["simulated"] if s["scenario"] == "node-loss"]
    assert node_loss["before"]["max_unavailable"] == 3
    assert node_loss["after"]["max_unavailable"] == 1
    assert "advice" not in spread
    # without stated zones, a required zone spread is advice (a node without the zone label
    # would refuse the pods), said with the cluster it holds for
    bare = tmp_path.parent / f"{tmp_path.name}-bare"  # (no configuration above it)
    bare.mkdir()
    _repo(bare, zones=False)
    asked = run_cli("check", "--fixes", "--format", "json", "db.yaml", cwd=bare).json()
    (assumed,) = [
        f["fix"] for f in asked["findings"] if f["rule"] == "replicas-share-failure-domain"
    ]
    assert assumed["advice"] is True and "topology.kubernetes.io/zone label" in assumed["caution"]
    assert assumed["verified"]["cluster"] == "an assumed cluster (3 zones × 2 nodes)"
    done = run_cli("fix", "--select", "replicas-share-failure-domain", "db.yaml", cwd=bare)
    assert done.code == 0 and "advice, not written: spread the pods" in done.out
    assert (bare / "db.yaml").read_text() == MANIFEST


def test_fix_applies_keeps_everything_else_and_is_idempotent(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    shown = run_cli("fix", "--diff", "--select", FIXED_RULES, "db.yaml", cwd=repo)
    assert shown.code == 0 and shown.out.startswith("--- a/db.yaml\n+++ b/db.yaml\n")
    assert (repo / "db.yaml").read_text() == MANIFEST  # --diff writes nothing
    done = run_cli("fix", "--select", FIXED_RULES, "db.yaml", cwd=repo)
    assert done.code == 0 and "db.yaml: partition-blocks-update: set updateStrategy" in done.out
    new = (repo / "db.yaml").read_text()
    removed = [ln for ln in MANIFEST.splitlines() if ln not in new.splitlines()]
    assert removed == ["      partition: 5   # staged rollout"]  # the fixed field's line only
    assert "      partition: 0   # staged rollout" in new  # (its comment kept)
    assert "  name: db   # keep this name" in new and new.startswith("# the orders database\n")
    again = run_cli("check", "--select", FIXED_RULES, "--format", "json", "db.yaml", cwd=repo)
    assert again.json()["findings"] == []
    second = run_cli("fix", "--select", FIXED_RULES, "db.yaml", cwd=repo)
    assert second.code == 0 and second.out == "" and (repo / "db.yaml").read_text() == new


def test_findings_in_the_configurations_baseline_are_said_and_fixed_on_request(
    tmp_path: Path,
) -> None:
    """With every finding in the configuration's baseline, ``fix`` printed nothing and
    exited 0, and it had no ``--no-baseline``."""
    repo = _repo(tmp_path)
    args = ("check", "--select", FIXED_RULES, "--write-baseline", "base.json", ".")
    wrote = run_cli(*args, cwd=repo)
    assert wrote.code == 0, wrote.err
    config = (repo / ".ssrisk.yaml").read_text()
    (repo / ".ssrisk.yaml").write_text(config + "baseline: base.json\n")
    listed = sum(e["count"] for e in json.loads((repo / "base.json").read_text())["findings"])
    hidden = run_cli("fix", "--diff", "--select", FIXED_RULES, "db.yaml", cwd=repo)
    assert hidden.code == 0 and hidden.out == ""
    said = f"{listed} finding(s) in the configuration's baseline were left out; --no-baseline"
    assert listed > 0 and said in hidden.err, hidden.err
    shown = run_cli("fix", "--diff", "--no-baseline", "--select", FIXED_RULES, "db.yaml", cwd=repo)
    assert shown.code == 0 and shown.out.startswith("--- a/db.yaml\n+++ b/db.yaml\n")
    assert "baseline" not in shown.err
    # --diff ends with the counts too (on standard error: the diff stays one to apply)
    assert "ssrisk fix: 2 fix(es) shown, nothing written, 0 not applied" in shown.err, shown.err
    assert (repo / "db.yaml").read_text() == MANIFEST
    done = run_cli("fix", "--no-baseline", "--select", FIXED_RULES, "db.yaml", cwd=repo)
    assert done.code == 0 and "db.yaml: partition-blocks-update: set updateStrategy" in done.out
    assert "      partition: 0   # staged rollout" in (repo / "db.yaml").read_text()


def _chart_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    shutil.copytree(DATA / "chart-variants", repo)
    (repo / ".git").mkdir()
    config = repo / ".ssrisk.yaml"
    config.write_text(config.read_text() + ZONES)
    template = repo / "charts" / "db" / "templates" / "statefulset.yaml"
    text = template.read_text()  # (without its spreading: a fix to find)
    template.write_text(
        text[: text.index("      affinity:")] + text[text.index("      containers:") :]
    )
    return repo, template


@pytest.mark.slow
def test_a_chart_template_is_changed_as_it_spells_rendered_names(tmp_path: Path) -> None:
    """A chart field no value writes is changed in the chart's own template, verified by
    rendering a changed copy of the chart (as configured and as another release): a
    rendered name the template writes with a template action is written as the template
    writes it, never as this release rendered it."""
    repo, template = _chart_repo(tmp_path)
    before = template.read_text()
    others = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and p != template}
    run = run_cli("fix", "--select", "replicas-share-failure-domain", ".", cwd=repo)
    assert run.code == 0, run.out + run.err
    assert run.out.startswith("charts/db/templates/statefulset.yaml: replicas-share-failure")
    after = template.read_text()
    added = [ln for ln in after.splitlines() if ln not in before.splitlines()]
    assert "              app: {{ .Release.Name }}-db" in added
    assert not any("orders-db" in ln for ln in added)
    assert [ln for ln in before.splitlines() if ln not in after.splitlines()] == []
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and p != template} == others
    again = run_cli(
        "check", "--format", "json", "--select", "replicas-share-failure-domain", ".", cwd=repo
    )
    assert again.json()["findings"] == [] and again.json()["errors"] == []


@pytest.mark.parametrize("form", ["indent", "nindent"])
def test_labels_an_include_writes_are_reused_or_the_change_is_refused(
    tmp_path: Path, form: str
) -> None:
    """The pods' labels and the selector come from an include. Written as ``helm create``
    writes it (the include on the line below the key, ``nindent``), the spread's selector
    reuses the include, indented for its place. Written another way (``indent`` from column
    0), the change cannot spell the labels as the template does: written as this release
    rendered them, another release would select no pod, which the render as another release
    shows, so nothing is written and the fix is said with the reason."""
    repo, template = _chart_repo(tmp_path)
    spelt = {
        "nindent": (
            '        {{- include "db.labels" . | nindent 8 }}',
            '      {{- include "db.labels" . | nindent 6 }}',
        ),
        "indent": (
            '{{ include "db.labels" . | indent 8 }}',
            '{{ include "db.labels" . | indent 6 }}',
        ),
    }[form]
    text = (
        template.read_text()
        .replace(
            "      labels:\n        app: {{ .Release.Name }}-db\n", f"      labels:\n{spelt[0]}\n"
        )
        .replace(
            "    matchLabels:\n      app: {{ .Release.Name }}-db\n",
            f"    matchLabels:\n{spelt[1]}\n",
        )
    )
    template.write_text(text)
    (template.parent / "_helpers.tpl").write_text(
        '{{- define "db.labels" -}}\napp: {{ .Release.Name }}-pods\n{{- end }}\n'
    )
    before = _files(repo)
    run = run_cli("fix", "--select", "replicas-share-failure-domain", ".", cwd=repo)
    if form == "nindent":
        assert run.code == 0, run.out + run.err
        added = template.read_text().split("topologySpreadConstraints:", 1)[1]
        assert 'matchLabels: {{- include "db.labels" . | nindent 14 }}' in added
        again = run_cli(
            "check", "--format", "json", "--select", "replicas-share-failure-domain", ".", cwd=repo
        )
        assert again.json()["findings"] == []
        return
    assert run.code == 1, run.out + run.err
    assert "not applied (the changed chart does not render exactly the fix" in run.out
    assert _files(repo) == before


def test_a_link_is_never_written(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "db.yaml").rename(repo / "real.yaml")
    (repo / "db.yaml").symlink_to("real.yaml")
    run = run_cli("fix", "--select", FIXED_RULES, "db.yaml", cwd=repo)
    assert run.code == 1 and "not a regular file" in run.out
    assert (repo / "real.yaml").read_text() == MANIFEST


class _FewReplicas(Rule):
    """A rule of the test: a finding below five replicas, with two candidates."""

    id = "few-replicas"
    severity = Severity.WARNING
    summary = "fewer than five replicas"

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 5:
            yield self.finding(ctx, ctx.sts.pos("spec", "replicas"), "few", facts={"n": 1})

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        return (
            Remedy("four", (Edit(("spec", "replicas"), 4),)),  # not enough: never offered
            Remedy("five", (Edit(("spec", "replicas"), 5),)),
        )


def test_only_a_candidate_the_rule_no_longer_reports_is_a_fix(tmp_path: Path) -> None:
    from ssrisk.engine import load_all, prepare
    from ssrisk.settings import Settings

    repo = _repo(tmp_path)
    settings = Settings()
    loaded, errors = load_all([str(repo / "db.yaml")], settings)
    _report, inventory, (sts,) = prepare(loaded, errors, settings)
    ctx = CheckContext.of(sts, inventory, settings)
    rule = _FewReplicas()
    (finding,) = rule.check(ctx)
    fix = find_fix(rule, ctx, finding)
    assert fix is not None and fix.remedy.summary == "five"
    assert json.loads(json.dumps(fix.to_dict()))["edits"] == [
        {"field": "spec.replicas", "value": 5}
    ]
    # the manifest itself is untouched; edits make copies
    assert sts.data["spec"]["replicas"] == 3
    assert apply_edits({"a": 1}, (Edit(("b", "c"), 2),)) == {"a": 1, "b": {"c": 2}}


def _apply(text: str, replacements: list[dict[str, object]]) -> str:
    """``text`` with SARIF replacements (whole-line regions) applied, last first."""
    lines = text.splitlines(keepends=True)
    for r in sorted(replacements, key=lambda r: -r["deletedRegion"]["startLine"]):  # type: ignore[index]
        region = r["deletedRegion"]
        start, end = region["startLine"] - 1, region["endLine"] - 1  # type: ignore[index]
        lines[start:end] = [r["insertedContent"]["text"]]  # type: ignore[index]
    return "".join(lines)


def test_sarif_fixes_are_the_changes_ssrisk_fix_makes(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    out = repo / "r.sarif"
    args = ("check", "--fixes", "--select", "partition-blocks-update")
    run_cli(*args, "--format", "sarif", "-o", str(out), "db.yaml", cwd=repo)
    (result,) = json.loads(out.read_text())["runs"][0]["results"]
    (fix,) = result["fixes"]
    (change,) = fix["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "db.yaml"
    run_cli("fix", "--select", "partition-blocks-update", "db.yaml", cwd=repo)
    assert _apply(MANIFEST, change["replacements"]) == (repo / "db.yaml").read_text()
    # and the log is valid SARIF 2.1.0 with its fixes
    import jsonschema
    from conftest import shared

    schema = json.loads(shared("schemas", "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validators.validator_for(schema)(schema).validate(json.loads(out.read_text()))


@pytest.mark.slow
@pytest.mark.parametrize("tree", ["corpus", "cases"])
def test_every_fix_on_the_corpus_removes_its_finding_and_only_its_fields(
    tmp_path: Path, tree: str
) -> None:
    """The shared corpus (real manifests, with comments) and the users' cases: each applied
    fix removes its finding on the next check, the files stay valid for the API server, no
    line changes but the fixed fields' (additions aside), and a second run changes nothing."""
    import difflib
    import re

    from conftest import shared

    corpus = tmp_path / "corpus"
    shutil.copytree(shared(tree), corpus)
    (tmp_path / ".git").mkdir()
    before = {p: p.read_text(errors="replace") for p in corpus.rglob("*") if p.is_file()}
    rank = {"info": 0, "warning": 1, "error": 2}
    found = run_cli("check", "--fixes", "--format", "json", "corpus", cwd=tmp_path).json()

    def key(f: dict[str, Any]) -> tuple[str, str, str]:
        return (f["path"], f["object"]["name"], f["rule"])

    fixed = {  # (a folded finding is not reported: its cause's fix comes first; advice is
        # never written)
        key(f): rank[f["severity"]]
        for f in found["findings"]
        if "fix" in f and not f["fix"].get("advice") and not f.get("folded_into")
    }
    done = run_cli("fix", "corpus", cwd=tmp_path)
    assert done.code in (0, 1), done.err
    applied = [
        ln
        for ln in done.out.splitlines()
        if not ln.startswith(" ") and ": not applied" not in ln and ": advice," not in ln
    ]
    assert len(applied) >= {"corpus": 20, "cases": 4}[tree]
    report = run_cli("check", "--format", "json", "corpus", cwd=tmp_path).json()
    assert report["errors"] == []
    # each fixed finding is gone: its rule reports nothing as severe on that set any more
    not_applied = {ln.split(": ")[1] for ln in done.out.splitlines() if ": not applied" in ln}
    left = [
        key(f)
        for f in report["findings"]
        if fixed.get(key(f), 9) <= rank[f["severity"]] and f["rule"] not in not_applied
    ]
    assert left == []
    fields = re.compile(
        r"terminationGracePeriodSeconds|type:|partition|when(Deleted|Scaled)|minAvailable"
        r"|maxUnavailable|tolerationSeconds|whenUnsatisfiable|podManagementPolicy"
    )
    for path, old in before.items():
        new = path.read_text(errors="replace")
        removed = [
            ln
            for ln in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
            if ln.startswith("-") and not ln.startswith("---")
        ]
        assert [ln for ln in removed if not fields.search(ln)] == [], path
    again = run_cli("fix", "--diff", "corpus", cwd=tmp_path)
    assert not any(ln.startswith("--- a/") for ln in again.out.splitlines()), again.out


PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: db
spec:
  minAvailable: 3   # never lose one
  selector:
    matchLabels: {app: db}
"""


def test_a_budget_that_blocks_drains_is_fixed_in_its_own_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "pdb.yaml").write_text(PDB, encoding="utf-8")
    run = run_cli(
        "check", "--fixes", "--format", "json", "--select", "pdb-blocks-drain", ".", cwd=repo
    )
    (finding,) = run.json()["findings"]
    assert finding["severity"] == "error"
    assert finding["fix"]["edits"] == [
        {"object": "PodDisruptionBudget default/db", "field": "spec.minAvailable", "value": 2}
    ]
    done = run_cli("fix", "--select", "pdb-blocks-drain", ".", cwd=repo)
    # the budget allows one eviction; the note that remains (two broken pods would still
    # block drains) is a note: no change is made for it (the unhealthy-pod policy is the
    # owner's choice: AlwaysAllow evicts members that are only catching up)
    assert done.out.splitlines() == ["pdb.yaml: pdb-blocks-drain: set minAvailable to 2"]
    assert (repo / "pdb.yaml").read_text() == PDB.replace("minAvailable: 3", "minAvailable: 2")
    assert (repo / "db.yaml").read_text() == MANIFEST  # (the StatefulSet is not touched)
    after = run_cli("check", "--format", "json", "--select", "pdb-blocks-drain", ".", cwd=repo)
    assert [f["severity"] for f in after.json()["findings"]] == ["info"]


ETCD = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: etcd
spec:
  serviceName: etcd
  replicas: 5
  selector:
    matchLabels: {app: etcd}
  template:
    metadata:
      labels: {app: etcd}
    spec:
      containers:
        - name: etcd
          image: quay.io/coreos/etcd:v3.5.9
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: etcd
spec:
  maxUnavailable: 3   # fast upgrades
  selector:
    matchLabels: {app: etcd}
"""


def test_a_budget_that_lets_a_majority_go_keeps_the_quorum_after_the_fix(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "etcd.yaml").write_text(ETCD, encoding="utf-8")
    args = ("--select", "pdb-quorum-loss")
    found = run_cli("check", "--fixes", "--format", "json", *args, ".", cwd=tmp_path).json()
    (finding,) = found["findings"]
    assert finding["facts"]["majority_tolerates"] == 2
    # one planned eviction at a time (not the whole minority): with a failure on top, the
    # majority still stands
    assert finding["fix"]["summary"] == "set maxUnavailable to 1"
    summary = run_cli("check", "--fixes", "--format", "markdown", *args, ".", cwd=tmp_path).out
    # (the job summary suggests it, with the drain simulated before and after)
    assert "Fix: set maxUnavailable to 1 (simulated: node-drain: 3 of 5 down" in summary
    assert "→ 1 of 5 down" in summary
    run_cli("fix", *args, ".", cwd=tmp_path)
    assert (tmp_path / "etcd.yaml").read_text() == ETCD.replace(
        "maxUnavailable: 3", "maxUnavailable: 1"
    )
    assert run_cli("check", "--format", "json", *args, ".", cwd=tmp_path).json()["findings"] == []


def test_a_chart_field_written_from_one_value_is_fixed_in_the_values_file(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(DATA / "chart-variants", repo)
    (repo / ".git").mkdir()
    template = repo / "charts" / "db" / "templates" / "statefulset.yaml"
    text = template.read_text().replace(
        "\nspec:\n",
        "\nspec:\n  updateStrategy:\n    rollingUpdate:\n"
        "      partition: {{ .Values.partition }}\n",
        1,
    )
    template.write_text(text)
    prod = repo / "environments" / "prod" / "db-values.yaml"
    prod.write_text("replicas: 3\npartition: 3   # staged rollout\n")
    staging = repo / "environments" / "staging" / "db-values.yaml"
    staging.write_text(staging.read_text() + "partition: 1\n")
    args = ("--select", "partition-blocks-update")
    done = run_cli("fix", *args, ".", cwd=repo)
    assert done.code == 0, done.out
    assert prod.read_text() == "replicas: 3\npartition: 0   # staged rollout\n"
    assert staging.read_text().endswith("partition: 0\n")
    assert template.read_text() == text  # (the vendor's template is not touched)
    assert run_cli("check", "--format", "json", *args, ".", cwd=repo).json()["findings"] == []


@pytest.mark.slow
def test_a_value_that_writes_other_fields_too_is_not_changed(tmp_path: Path) -> None:
    """One value writes the partition and the replicas: setting it to 0 would scale the set
    to nothing. The chart rendered with the changed values shows another field changed, so
    nothing is written and the fix is said with the reason."""
    repo = tmp_path / "repo"
    shutil.copytree(DATA / "chart-variants", repo)
    (repo / ".git").mkdir()
    template = repo / "charts" / "db" / "templates" / "statefulset.yaml"
    template.write_text(
        template.read_text().replace(
            "\nspec:\n",
            "\nspec:\n  updateStrategy:\n    rollingUpdate:\n"
            "      partition: {{ .Values.replicas }}\n",
            1,
        )
    )
    done = _fix_writes_nothing(repo, "partition-blocks-update")
    assert "writes other fields too" in done.out, done.out


def test_fixes_an_sre_would_not_merge_are_not_offered(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    # a quorum store's budget allowing one eviction: no AlwaysAllow (a member catching up
    # still votes); one an operator owns: no fix at all (the operator would revert it)
    quorum = ETCD.replace("maxUnavailable: 3", "maxUnavailable: 1").replace(
        "replicas: 5", "replicas: 3"
    )
    (tmp_path / "etcd.yaml").write_text(quorum, encoding="utf-8")
    owned = MANIFEST.replace(
        "  name: db   # keep this name\n",
        "  name: db   # keep this name\n  ownerReferences:\n"
        "    - {apiVersion: x.io/v1, kind: Database, name: db, uid: 1}\n",
    )
    (tmp_path / "db.yaml").write_text(owned, encoding="utf-8")
    report = run_cli("check", "--fixes", "--format", "json", ".", cwd=tmp_path).json()
    unhealthy = [f for f in report["findings"] if "unhealthy_pod_eviction_policy" in f["facts"]]
    assert unhealthy and not any("fix" in f for f in unhealthy)
    assert not any("fix" in f for f in report["findings"] if f["object"]["name"] == "db")


def test_a_diff_marks_a_last_line_without_a_line_break(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "db.yaml").write_text(MANIFEST.rstrip("\n"), encoding="utf-8")
    shown = run_cli("fix", "--diff", "--select", FIXED_RULES, "db.yaml", cwd=repo).out
    assert "\\ No newline at end of file\n" in shown


TOLERANT = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 3
  serviceName: db
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      tolerations:
      - key: node.kubernetes.io/unreachable
        operator: Exists
        effect: NoExecute     # keep pods
      - key: node.kubernetes.io/not-ready
        operator: Exists
        effect: NoExecute
        tolerationSeconds: 86400
      topologySpreadConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway   # soft for now
        labelSelector:
          matchLabels:
            app: db
      containers:
      - name: db
        image: nginx
        ports:
        - containerPort: 8080
# the Service
---
apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  clusterIP: None
  selector: {app: db}
"""


def test_list_items_are_edited_in_place_and_a_missing_budget_is_added(tmp_path: Path) -> None:
    """Fields of existing list items (a toleration's tolerationSeconds, a preferred spread
    made required) are set on their item, a new PodDisruptionBudget is written after the
    StatefulSet's document, and a missing readiness probe is added to the container: each
    verified, each removing its finding, nothing else changed."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".ssrisk.yaml").write_text(ZONES, encoding="utf-8")
    path = tmp_path / "db.yaml"
    path.write_text(TOLERANT, encoding="utf-8")
    rules = (
        "eviction-disabled-by-toleration,replicas-share-failure-domain,pdb-missing,"
        "readiness-probe-missing"
    )
    found = run_cli("check", "--fixes", "--format", "json", "--select", rules, ".", cwd=tmp_path)
    fixes = {f["rule"]: f["fix"] for f in found.json()["findings"] if "fix" in f}
    assert sorted(fixes) == sorted(rules.split(","))
    tolerations = fixes["eviction-disabled-by-toleration"]["edits"]
    assert tolerations == [
        {"field": "spec.template.spec.tolerations[0].tolerationSeconds", "value": 300},
        {"field": "spec.template.spec.tolerations[1].tolerationSeconds", "value": 300},
    ]
    (budget,) = fixes["pdb-missing"]["edits"]
    assert budget["object"] == "PodDisruptionBudget default/db"
    assert budget["create"]["spec"] == {
        "maxUnavailable": 1,
        "selector": {"matchLabels": {"app": "db"}},
    }
    # the drain's numbers before and after: all three at once, then one at a time
    (drain,) = [
        s for s in fixes["pdb-missing"]["verified"]["simulated"] if s["scenario"] == "node-drain"
    ]
    assert (drain["before"]["max_unavailable"], drain["after"]["max_unavailable"]) == (3, 1)
    probe = fixes["readiness-probe-missing"]["edits"]
    assert probe == [
        {
            "field": "spec.template.spec.containers[0].readinessProbe",
            "value": {"tcpSocket": {"port": 8080}, "periodSeconds": 10},
        }
    ]
    done = run_cli("fix", "--select", rules, "db.yaml", cwd=tmp_path)
    assert done.code == 0, done.out + done.err
    assert done.out.count("eviction-disabled-by-toleration") == 1  # (one line a fix)
    new = path.read_text()
    removed = [ln for ln in TOLERANT.splitlines() if ln not in new.splitlines()]
    assert removed == [
        "        tolerationSeconds: 86400",
        "        whenUnsatisfiable: ScheduleAnyway   # soft for now",
    ]
    assert "        effect: NoExecute     # keep pods\n        tolerationSeconds: 300\n" in new
    assert "        whenUnsatisfiable: DoNotSchedule   # soft for now\n" in new
    # the new budget is a document of its own, right after the StatefulSet's
    assert new.index("kind: PodDisruptionBudget") < new.index("# the Service")
    again = run_cli("check", "--format", "json", "--select", rules, ".", cwd=tmp_path).json()
    assert again["findings"] == [] and again["errors"] == []
    second = run_cli("fix", "--diff", "--select", rules, ".", cwd=tmp_path)
    assert second.out == ""


def test_a_cold_start_deadlock_gets_parallel_as_advice_never_written(tmp_path: Path) -> None:
    """podManagementPolicy Parallel removes the deadlock, but the field is immutable
    (validation.go#ValidateStatefulSetUpdate): it is advice, with the caution that says how
    to recreate the set, and ssrisk fix does not write it."""
    (tmp_path / ".git").mkdir()
    zk = (DATA / "fix" / "zookeeper.yaml").read_text(encoding="utf-8")
    (tmp_path / "zk.yaml").write_text(zk, encoding="utf-8")
    args = ("--select", "cold-start-deadlock", ".")
    found = run_cli("check", "--fixes", "--format", "json", *args, cwd=tmp_path).json()
    (finding,) = found["findings"]
    assert finding["fix"]["edits"] == [{"field": "spec.podManagementPolicy", "value": "Parallel"}]
    assert finding["fix"]["advice"] is True and "--cascade=orphan" in finding["fix"]["caution"]
    done = run_cli("fix", *args, cwd=tmp_path)
    assert done.code == 0 and "cold-start-deadlock: advice, not written" in done.out
    assert (tmp_path / "zk.yaml").read_text(encoding="utf-8") == zk
    explained = run_cli("check", "--fixes", "--explain", *args, cwd=tmp_path).out
    assert "Advice (not applied by ssrisk fix; verified: cold-start-deadlock" in explained


def test_a_readiness_probe_checks_the_catalogued_client_port(tmp_path: Path) -> None:
    """Of the ports a recognised system's container declares, the probe checks the one the
    catalog lists first (Neo4j: 7474, not the Bolt port declared first); a system whose
    members wait for their peers gets none (etcd opens its client port once the cluster
    formed: a TCP probe would hold OrderedReady's first pod for ever)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "neo4j.yaml").write_text(NEO4J, encoding="utf-8")
    etcd = (DATA / "fix" / "etcd-noprobe.yaml").read_text(encoding="utf-8")
    (tmp_path / "etcd.yaml").write_text(etcd, encoding="utf-8")
    args = ("--select", "readiness-probe-missing", ".")
    found = run_cli("check", "--fixes", "--format", "json", *args, cwd=tmp_path).json()
    fixes = {f["object"]["name"]: f.get("fix") for f in found["findings"]}
    assert fixes["etcd"] is None
    (edit,) = fixes["graph"]["edits"]
    assert edit["value"]["tcpSocket"] == {"port": 7474}


NEO4J = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: graph
spec:
  serviceName: graph
  replicas: 1
  selector:
    matchLabels: {app: graph}
  template:
    metadata:
      labels: {app: graph}
    spec:
      containers:
        - name: neo4j
          image: neo4j:5.26
          ports:
            - containerPort: 7687
            - containerPort: 7474
"""


@pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="needs kubectl (which embeds kustomize) or kustomize on PATH",
)
def test_a_kustomize_build_is_fixed_by_patches_in_its_overlay(tmp_path: Path) -> None:
    """A set an overlay builds from a shared base: the fix is a strategic-merge patch and a
    new PodDisruptionBudget in the overlay, named as the base names the set (the overlay's
    prefix and namespace apply to them as to it), listed in its kustomization with its
    comments kept; the base is not touched; a second run changes nothing."""
    repo = tmp_path / "repo"
    shutil.copytree(DATA / "fix" / "kz", repo)
    (repo / ".git").mkdir()
    overlay = repo / "overlays" / "prod"
    base_before = {p: p.read_bytes() for p in (repo / "base").iterdir()}
    kustomization = (overlay / "kustomization.yaml").read_text()
    rules = "pdb-missing,eviction-disabled-by-toleration,readiness-probe-missing"
    diff = run_cli("fix", "--diff", "--select", rules, "overlays/prod", cwd=repo).out
    assert "--- /dev/null\n+++ b/overlays/prod/ssrisk-fix-statefulset-db.yaml\n" in diff
    done = run_cli("fix", "--select", rules, "overlays/prod", cwd=repo)
    assert done.code == 0, done.out + done.err
    assert {p: p.read_bytes() for p in (repo / "base").iterdir()} == base_before
    new = (overlay / "kustomization.yaml").read_text()
    assert new == kustomization + (
        "  - ssrisk-fix-poddisruptionbudget-db.yaml\n"
        "patches:\n"
        "  - path: ssrisk-fix-statefulset-db.yaml\n"
    )
    patch = (overlay / "ssrisk-fix-statefulset-db.yaml").read_text()
    assert "  name: db\n" in patch and "tolerationSeconds: 300" in patch
    assert "- name: db\n        readinessProbe:" in patch  # (the container, by its name)
    report = run_cli("check", "--format", "json", "--select", rules, "overlays/prod", cwd=repo)
    assert report.json()["findings"] == [] and report.json()["errors"] == []
    again = run_cli("fix", "--diff", "--select", rules, "overlays/prod", cwd=repo)
    assert again.out == ""


def test_no_budget_is_added_that_would_select_another_workloads_pods(tmp_path: Path) -> None:
    """Two sets whose pods share their labels: a new budget for one would select the other's
    pods too (a pod with two budgets cannot be evicted at all), so neither gets one."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.yaml").write_text(TOLERANT, encoding="utf-8")
    other = TOLERANT.replace("  name: db\n", "  name: db2\n", 1)
    (tmp_path / "b.yaml").write_text(other, encoding="utf-8")
    found = run_cli(
        "check", "--fixes", "--format", "json", "--select", "pdb-missing", ".", cwd=tmp_path
    ).json()
    assert len(found["findings"]) == 2
    assert not any("fix" in f for f in found["findings"])


needs_kustomize = pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="needs kubectl (which embeds kustomize) or kustomize on PATH",
)


def _kz(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(DATA / "fix" / "kz", repo)
    (repo / ".git").mkdir()
    return repo


@needs_kustomize
def test_a_field_a_later_patch_of_the_overlay_sets_is_not_patched_again(tmp_path: Path) -> None:
    """A JSON 6902 patch of the overlay sets the partition: kustomize applies it after any
    strategic-merge patch, so a new patch would change nothing; the fix is said, naming it."""
    repo = _kz(tmp_path)
    overlay = repo / "overlays" / "prod"
    (overlay / "hold.yaml").write_text(
        "- op: add\n  path: /spec/updateStrategy\n"
        "  value: {type: RollingUpdate, rollingUpdate: {partition: 9}}\n"
    )
    with (overlay / "kustomization.yaml").open("a") as fh:
        fh.write("patches:\n  - path: hold.yaml\n    target: {kind: StatefulSet, name: db}\n")
    run = _fix_writes_nothing(repo, "partition-blocks-update", "overlays/prod")
    assert "overlays/prod/hold.yaml:" in run.out, run.out
    assert "sets spec.updateStrategy.rollingUpdate.partition too" in run.out


@needs_kustomize
def test_overlay_fixes_keep_a_former_patch_and_take_the_sets_namespace(tmp_path: Path) -> None:
    """A middle kustomization sets the namespace: the new budget names it (the overlay does
    not set one). A patch file a former run wrote, edited since (a comment, an env var), is
    merged into, not rewritten."""
    repo = _kz(tmp_path)
    mid = repo / "mid"
    mid.mkdir()
    (mid / "kustomization.yaml").write_text("namespace: data\nresources:\n  - ../base\n")
    overlay = repo / "overlays" / "prod"
    (overlay / "kustomization.yaml").write_text(
        "namePrefix: prod-\nresources:\n  - ../../mid\npatches:\n"
        "  - path: ssrisk-fix-statefulset-db.yaml\n"
    )
    former = (
        "# reviewed by ops\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n"
        "spec:\n  template:\n    spec:\n      containers:\n      - name: db\n"
        "        env: [{name: A, value: '1'}]   # keep\n"
    )
    (overlay / "ssrisk-fix-statefulset-db.yaml").write_text(former)
    rules = "pdb-missing,eviction-disabled-by-toleration"
    done = run_cli("fix", "--select", rules, "overlays/prod", cwd=repo)
    assert done.code == 0, done.out + done.err
    budget = (overlay / "ssrisk-fix-poddisruptionbudget-db.yaml").read_text()
    assert "  namespace: data\n" in budget
    patch = (overlay / "ssrisk-fix-statefulset-db.yaml").read_text()
    assert patch.startswith("# reviewed by ops\n")
    assert "env: [{name: A, value: '1'}]   # keep" in patch and "tolerationSeconds: 300" in patch
    report = run_cli("check", "--format", "json", "--select", rules, "overlays/prod", cwd=repo)
    assert report.json()["findings"] == [] and report.json()["errors"] == []


def test_what_is_not_the_users_to_edit_is_not_written(tmp_path: Path) -> None:
    """A saved Helm render (its '# Source:' comments), a file of a chart named as a plain
    PATH, and a values file outside the tree are never written; CRLF line breaks and a
    value's quoting are kept in what is."""
    (tmp_path / ".git").mkdir()
    rendered = "---\n# Source: db/templates/statefulset.yaml\n" + MANIFEST
    (tmp_path / "render.yaml").write_text(rendered, encoding="utf-8")
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "sts.yaml").write_text(MANIFEST)
    crlf = (
        MANIFEST.replace("name: db", "name: other")
        .replace(
            "  replicas: 3\n",
            "  replicas: 3\n  persistentVolumeClaimRetentionPolicy:\n"
            "    whenDeleted: 'Delete'   # for now\n",
        )
        .replace(
            "  selector:\n",
            "  volumeClaimTemplates:\n    - metadata: {name: data}\n      spec:\n"
            "        accessModes: [ReadWriteOnce]\n"
            "        resources: {requests: {storage: 1Gi}}\n  selector:\n",
        )
        .replace("\n", "\r\n")
    )
    (tmp_path / "crlf.yaml").write_bytes(crlf.encode())
    before = _files(tmp_path)
    args = ("--select", "partition-blocks-update")
    for path in ("render.yaml", "chart/templates"):
        run = run_cli("fix", *args, path, cwd=tmp_path)
        assert run.code == 1 and ": not applied (" in run.out, run.out
    assert _files(tmp_path) == before
    rules = ("--select", "partition-blocks-update,pvc-retention-delete")
    run_cli("fix", *rules, "crlf.yaml", cwd=tmp_path)
    after = (tmp_path / "crlf.yaml").read_bytes().decode()
    assert after == crlf.replace("partition: 5", "partition: 0").replace(
        "whenDeleted: 'Delete'", "whenDeleted: 'Retain'"
    )


def _transformer(overlay: Path, op: str, field: str, value: int) -> None:
    """A PatchTransformer in ``overlay`` that sets the StatefulSet's ``spec/<field>`` (a JSON
    pointer) to ``value`` after every patch (kustomize runs transformers last)."""
    (overlay / "hold.yaml").write_text(
        "apiVersion: builtin\nkind: PatchTransformer\nmetadata: {name: hold}\n"
        f'patch: \'[{{"op": "{op}", "path": "/spec/{field}", "value": {value}}}]\'\n'
        "target: {kind: StatefulSet}\n"
    )
    with (overlay / "kustomization.yaml").open("a") as fh:
        fh.write("transformers:\n  - hold.yaml\n")


@needs_kustomize
def test_a_fix_the_build_undoes_later_is_put_back(tmp_path: Path) -> None:
    """A transformer of the overlay sets the partition after every patch: the fix is written,
    the next check still reports the finding, so every file the fix wrote is put back and
    the fix is said as not applied (exit 1), never as written."""
    repo = _kz(tmp_path)
    base = repo / "base" / "sts.yaml"
    base.write_text(
        base.read_text().replace(
            "  replicas: 3\n",
            "  replicas: 3\n  updateStrategy:\n    rollingUpdate:\n      partition: 3\n",
        )
    )
    _transformer(repo / "overlays" / "prod", "replace", "updateStrategy/rollingUpdate/partition", 8)
    run = _fix_writes_nothing(repo, "partition-blocks-update", "overlays/prod")
    assert "not applied (written, but still reported after" in run.out
    assert "0 fix(es) written" in run.err


@pytest.mark.slow
def test_a_template_change_another_variant_renders_wrong_is_refused(tmp_path: Path) -> None:
    """The staging variant writes topologySpreadConstraints through a value: a key added to
    the shared template would render there twice (kubectl rejects it). Every variant of the
    chart is rendered with the change, so nothing is written."""
    repo, template = _chart_repo(tmp_path)
    template.write_text(
        template.read_text().replace(
            "      containers:\n",
            "      {{- with .Values.podExtra }}\n      {{- toYaml . | nindent 6 }}\n"
            "      {{- end }}\n      containers:\n",
            1,
        )
    )
    staging = repo / "environments" / "staging" / "db-values.yaml"
    staging.write_text(
        staging.read_text() + "podExtra:\n  topologySpreadConstraints:\n"
        "    - {maxSkew: 1, topologyKey: kubernetes.io/hostname,"
        " whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: orders-db}}}\n"
    )
    run = _fix_writes_nothing(repo, "replicas-share-failure-domain")
    assert "duplicate key 'topologySpreadConstraints'" in run.out, run.out


@pytest.mark.slow
def test_a_values_file_another_chart_reads_otherwise_is_not_changed(tmp_path: Path) -> None:
    """One values file given to two charts: one writes the partition from it, the other its
    replicas. Setting it to 0 would scale the other chart's set to nothing: every chart
    given the file is rendered with the change, so nothing is written."""
    (tmp_path / ".git").mkdir()
    for name, field in (("a", "partition"), ("b", "replicas")):
        chart = tmp_path / name
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
        text = MANIFEST.replace("name: db", f"name: {name}").replace("app: db", f"app: {name}")
        text = text.replace("partition: 5   # staged rollout", "partition: {{ .Values.partition }}")
        if field == "replicas":
            text = text.replace("replicas: 3", "replicas: {{ .Values.partition }}").replace(
                "partition: {{ .Values.partition }}", "partition: 0"
            )
        (chart / "templates" / "sts.yaml").write_text(text)
    (tmp_path / "common.yaml").write_text("partition: 5\n")
    (tmp_path / ".ssrisk.yaml").write_text(
        "charts:\n  a: {values: [common.yaml]}\n  b: {values: [common.yaml]}\n"
    )
    before = _files(tmp_path)
    args = ("--select", "partition-blocks-update", ".")
    run = run_cli("fix", *args, cwd=tmp_path)
    assert run.code == 1 and "writes other fields too" in run.out, run.out + run.err
    assert _files(tmp_path) == before


@pytest.mark.slow
def test_a_literal_label_stays_literal_when_a_name_renders_the_same(tmp_path: Path) -> None:
    """The pods' label is written literally (app: orders-db) and the set's name renders the
    same text from the release (``{{ .Release.Name }}-db``): the spread selects the label as
    the template writes it, literally, not through the release name (which another release
    would render otherwise, selecting no pod)."""
    repo, template = _chart_repo(tmp_path)
    template.write_text(
        template.read_text().replace("app: {{ .Release.Name }}-db", "app: orders-db")
    )
    run = run_cli("fix", "--select", "replicas-share-failure-domain", ".", cwd=repo)
    assert run.code == 0, run.out + run.err
    added = template.read_text().split("topologySpreadConstraints:", 1)[1]
    assert "app: orders-db" in added and "Release" not in added.split("containers:")[0]


def test_a_new_budget_is_not_written_over_a_neighbours_pods(tmp_path: Path) -> None:
    """A Deployment (a kind the check does not read) has pods the new budget would select;
    and, the file named alone, a budget in the file next to it already covers the pods:
    neither new budget is written, each said with the reason."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "sts.yaml").write_text(TOLERANT, encoding="utf-8")
    (tmp_path / "tool.yaml").write_text(  # (an item of a List, as kubectl get -o yaml writes)
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: tool}\n  spec:\n"
        "    selector: {matchLabels: {app: db, role: tool}}\n    template:\n"
        "      metadata: {labels: {app: db, role: tool}}\n"
        "      spec: {containers: [{name: t, image: busybox}]}\n"
    )
    args = ("--select", "pdb-missing")
    run = run_cli("fix", *args, ".", cwd=tmp_path)
    assert run.code == 1 and "pods of Deployment tool (tool.yaml) too" in run.out, run.out
    assert (tmp_path / "sts.yaml").read_text() == TOLERANT
    (tmp_path / "tool.yaml").unlink()
    (tmp_path / "pdb.yaml").write_text(
        PDB.replace("minAvailable: 3   # never lose one", "maxUnavailable: 1")
    )
    alone = run_cli("fix", *args, "sts.yaml", cwd=tmp_path)
    assert alone.code == 1 and "pdb.yaml has PodDisruptionBudget db" in alone.out, alone.out
    assert (tmp_path / "sts.yaml").read_text() == TOLERANT


@needs_kustomize
def test_an_overlay_another_builds_on_is_not_changed(tmp_path: Path) -> None:
    """overlays/eu builds on overlays/prod: a fix of prod named alone would change eu's build
    too, so it is refused, naming eu; checked whole, the tree builds eu, which is fixed."""
    repo = _kz(tmp_path)
    eu = repo / "overlays" / "eu"
    eu.mkdir()
    (eu / "kustomization.yaml").write_text("nameSuffix: -eu\nresources:\n  - ../prod\n")
    run = _fix_writes_nothing(repo, "eviction-disabled-by-toleration", "overlays/prod")
    assert "overlays/eu builds on overlays/prod" in run.out, run.out
    whole = run_cli("fix", "--select", "eviction-disabled-by-toleration", ".", cwd=repo)
    assert whole.code == 0 and whole.out.startswith("overlays/eu: "), whole.out + whole.err


@pytest.mark.slow
def test_a_key_a_helper_writes_when_asked_is_not_added_again(tmp_path: Path) -> None:
    """The pod spec includes a helper that writes topologySpreadConstraints when a value
    asks for it: a key added to the template would render twice then, so nothing is
    written, and the reason names the helper."""
    repo, template = _chart_repo(tmp_path)
    template.write_text(
        template.read_text().replace(
            "      containers:\n",
            '      {{- include "db.sched" . | nindent 6 }}\n      containers:\n',
            1,
        )
    )
    (template.parent / "_helpers.tpl").write_text(
        '{{- define "db.sched" -}}\n{{- if .Values.spread }}\ntopologySpreadConstraints:\n'
        "{{ toYaml .Values.spread }}\n{{- end }}\n{{- end }}\n"
    )
    run = _fix_writes_nothing(repo, "replicas-share-failure-domain")
    assert "_helpers.tpl:3 writes topologySpreadConstraints" in run.out, run.out


@needs_kustomize
def test_only_the_fix_the_build_undoes_is_put_back(tmp_path: Path) -> None:
    """A transformer of the overlay sets tolerationSeconds after every patch: that fix is
    put back and said as not applied; the new budget, written in the same kustomization, is
    written again and stays."""
    repo = _kz(tmp_path)
    overlay = repo / "overlays" / "prod"
    _transformer(overlay, "add", "template/spec/tolerations/0/tolerationSeconds", 86400)
    rules = ("--select", "eviction-disabled-by-toleration,pdb-missing")
    run = run_cli("fix", *rules, "overlays/prod", cwd=repo)
    assert run.code == 1, run.out + run.err
    assert "overlays/prod: pdb-missing: add PodDisruptionBudget" in run.out
    assert "eviction-disabled-by-toleration: not applied (written, but still reported" in run.out
    assert "pdb-missing: not applied" not in run.out
    assert (overlay / "ssrisk-fix-poddisruptionbudget-db.yaml").is_file()
    assert not (overlay / "ssrisk-fix-statefulset-db.yaml").exists()
    report = run_cli("check", "--format", "json", *rules, "overlays/prod", cwd=repo).json()
    assert [f["rule"] for f in report["findings"]] == ["eviction-disabled-by-toleration"]


def test_an_edit_value_is_plain_data_however_it_is_made() -> None:
    # a loaded value keeps its positions (PosMap, PosList); an edit is written as plain
    # data, also when made by replacing the value of another edit (msgspec >= 0.21 runs
    # __post_init__ in structs.replace, which the Helm fixes rely on)
    import msgspec

    from ssrisk.yamlpos import PosList, PosMap, load_documents

    loaded, _duplicates = next(load_documents("a: {b: [1, 2]}\n"))
    assert type(loaded) is PosMap and type(loaded["a"]["b"]) is PosList
    made = Edit(("spec",), value=loaded)
    replaced = msgspec.structs.replace(Edit(("spec",), value=1), value=loaded)
    for edit in (made, replaced):
        assert edit.value == {"a": {"b": [1, 2]}}
        assert type(edit.value) is dict and type(edit.value["a"]["b"]) is list


def test_an_input_error_is_said_as_check_says_it(tmp_path: Path) -> None:
    """It read "ssrisk: error: bad.yaml:4:1: error: ..."."""
    (tmp_path / "bad.yaml").write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x\n"
    )
    run = run_cli("fix", "--diff", "bad.yaml", cwd=tmp_path)
    assert run.code == 2
    (line,) = [x for x in run.err.splitlines() if "YAML syntax" in x]
    assert line.startswith("bad.yaml:4:1: error: YAML syntax") and line.count("error:") == 1
