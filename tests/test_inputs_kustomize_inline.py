"""kustomize patches written inline in kustomization.yaml: findings point into the patch text.

``tests/data/inputs/kz`` is one base with four overlays: ``p1`` and ``p2`` patch from files,
``p3`` writes a strategic-merge document and a JSON 6902 operation list inline under
``patches: - patch: |-``, ``p4`` uses the older ``patchesStrategicMerge`` (inline string) and
``patchesJson6902`` (inline ``patch:``). ``kz-forms`` sets the same fields in several ways in
one kustomization (quoted and escaped inline patches, ``replicas:``) to check which one wins.

Expected positions are derived from the fixture files: the line of a field inside a literal
block scalar is the block's first content line plus the field's line inside the patch text.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import DATA, run_cli

from ssrisk.renderers.inputs import load_inputs
from ssrisk.settings import Settings

INPUTS = DATA / "inputs"
KZ = INPUTS / "kz"
FORMS = INPUTS / "kz-forms"

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="needs kubectl (which embeds kustomize) or kustomize on PATH",
)


def _block_position(kfile: Path, block_header: str, nth: int, field: str) -> tuple[int, int]:
    """1-based (line, column) of ``field`` in the ``nth`` literal block scalar whose header
    line contains ``block_header``, computed as the block's first content line plus the
    field's line inside the patch text (read with a YAML parser, not from the file's lines)."""
    lines = kfile.read_text(encoding="utf-8").splitlines()
    headers = [i for i, ln in enumerate(lines) if block_header in ln and ln.rstrip().endswith("|-")]
    header = headers[nth]
    patch_texts = _inline_texts(yaml.safe_load(kfile.read_text(encoding="utf-8")))
    text = patch_texts[nth]
    (inner,) = [i for i, ln in enumerate(text.splitlines()) if ln.lstrip().startswith(field)]
    content = lines[header + 1]
    indent = len(content) - len(content.lstrip())
    inner_col = len(text.splitlines()[inner]) - len(text.splitlines()[inner].lstrip())
    return header + 1 + inner + 1, indent + inner_col + 1


def _inline_texts(kustomization: dict[str, Any]) -> list[str]:
    """Inline patch texts of a kustomization, in file order of the fixtures used here."""
    out: list[str] = []
    for key in ("patchesStrategicMerge", "patches", "patchesJson6902"):
        for entry in kustomization.get(key) or []:
            text = entry.get("patch") if isinstance(entry, dict) else entry
            if isinstance(text, str) and "\n" in text:
                out.append(text)
    return out


def _findings(*args: str) -> list[dict[str, Any]]:
    return list(run_cli("check", "--format", "json", *args).json()["findings"])


def _one(findings: list[dict[str, Any]], rule: str) -> dict[str, Any]:
    (f,) = [f for f in findings if f["rule"] == rule]
    return f


def test_inline_strategic_merge_and_json6902_patches_under_patches() -> None:
    kfile = KZ / "overlays" / "p3" / "kustomization.yaml"
    findings = _findings(str(KZ / "overlays" / "p3"))
    grace = _one(findings, "long-termination-grace")
    assert "700 s" in grace["message"]
    assert Path(grace["path"]).resolve() == kfile.resolve()
    assert (grace["line"], grace["column"]) == _block_position(
        kfile, "patch:", 0, "terminationGracePeriodSeconds:"
    )
    # pdb-missing points at spec.replicas, which the inline JSON 6902 op adds: its value
    pdb = _one(findings, "pdb-missing")
    assert Path(pdb["path"]).resolve() == kfile.resolve()
    assert (pdb["line"], pdb["column"]) == _block_position(kfile, "patch:", 1, "value:")
    # what no patch sets still points into the base
    probe = _one(findings, "readiness-probe-missing")
    assert Path(probe["path"]).resolve() == (KZ / "base" / "sts.yaml").resolve()


def test_inline_patches_strategic_merge_and_json6902_fields() -> None:
    kfile = KZ / "overlays" / "p4" / "kustomization.yaml"
    findings = _findings(str(KZ / "overlays" / "p4"))
    grace = _one(findings, "long-termination-grace")
    assert "900 s" in grace["message"]
    assert Path(grace["path"]).resolve() == kfile.resolve()
    lines = kfile.read_text(encoding="utf-8").splitlines()
    smp_header = next(i for i, ln in enumerate(lines) if ln.strip() == "- |-")
    assert (grace["line"], grace["column"]) == _block_position(
        kfile, "- |-", 0, "terminationGracePeriodSeconds:"
    )
    assert grace["line"] > smp_header + 1
    # the JSON 6902 op list is JSON in a block scalar: the "value" key of the op
    pdb = _one(findings, "pdb-missing")
    assert "6 replicas" in pdb["message"]
    line = lines[pdb["line"] - 1]
    assert line[pdb["column"] - 1 :].startswith('"value": 6')


def test_patch_files_still_point_at_the_files() -> None:
    grace = _one(_findings(str(KZ / "overlays" / "p1")), "long-termination-grace")
    file = KZ / "overlays" / "p1" / "grace.yaml"
    assert Path(grace["path"]).resolve() == file.resolve()
    line = file.read_text(encoding="utf-8").splitlines()[grace["line"] - 1]
    assert line[grace["column"] - 1 :] == "terminationGracePeriodSeconds: 600"
    pdb = _one(_findings(str(KZ / "overlays" / "p2")), "pdb-missing")
    file = KZ / "overlays" / "p2" / "replicas.yaml"
    assert Path(pdb["path"]).resolve() == file.resolve()
    assert file.read_text(encoding="utf-8").splitlines()[pdb["line"] - 1].strip() == "value: 4"


def test_the_transformer_kustomize_runs_last_wins_and_quoted_patches() -> None:
    """kz-forms sets terminationGracePeriodSeconds in patchesStrategicMerge (500) and in a
    single-quoted JSON patch under patches (800, applied later), podManagementPolicy in a
    double-quoted patch with escapes, and replicas both ways (``replicas:`` runs last)."""
    kfile = FORMS / "kustomization.yaml"
    lines = kfile.read_text(encoding="utf-8").splitlines()
    loaded, errors = load_inputs([str(FORMS)], Settings())
    assert errors == [] and all(lf.errors == [] for lf in loaded)
    (sts,) = [o for lf in loaded for o in lf.objects if o.kind == "StatefulSet"]
    spec = ("spec", "template", "spec")
    assert sts.get(*spec, "terminationGracePeriodSeconds") == 800
    grace = sts.pos(*spec, "terminationGracePeriodSeconds")
    assert Path(grace.path).resolve() == kfile.resolve()
    # inside the single-quoted JSON text on one line: the "value" key of the op
    assert lines[grace.line - 1][grace.column - 1 :].startswith('"value": 800')
    # an escaped double-quoted patch cannot be mapped line by line: the scalar itself
    policy = sts.pos("spec", "podManagementPolicy")
    assert sts.get("spec", "podManagementPolicy") == "OrderedReady"
    assert lines[policy.line - 1][policy.column - 1 :].startswith('"- op: replace')
    # kustomization `replicas:` (ReplicaCountTransformer) sets spec.replicas: its count
    assert sts.get("spec", "replicas") == 1
    replicas = sts.pos("spec", "replicas")
    assert lines[replicas.line - 1][replicas.column - 1 :] == "count: 1"
    # end to end: single-replica is reported at that count
    single = _one(_findings(str(FORMS)), "single-replica")
    assert (single["line"], single["column"]) == (replicas.line, replicas.column)


REMOVED_BASE = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 3
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      terminationGracePeriodSeconds: 60
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels: {app: db}
      containers:
        - name: db
          image: nginx
"""
REMOVED_OVERLAY = """\
resources: [../base]
patches:
  - target: {kind: StatefulSet, name: db}
    patch: |-
      - op: replace
        path: /spec/template/spec/terminationGracePeriodSeconds
        value: 30
      - op: remove
        path: /spec/template/spec/affinity
"""


def test_a_field_an_inline_json_patch_removes_is_reported_at_the_remove(tmp_path: Path) -> None:
    for directory in ("base", "prod", ".git"):  # (the repository is the checked tree)
        (tmp_path / directory).mkdir()
    (tmp_path / "base" / "sts.yaml").write_text(REMOVED_BASE, encoding="utf-8")
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [sts.yaml]\n")
    (tmp_path / "prod" / "kustomization.yaml").write_text(REMOVED_OVERLAY, encoding="utf-8")
    args = ("--format", "json", "--select", "replicas-share-failure-domain")
    report = run_cli("check", *args, str(tmp_path / "prod")).json()
    (finding,) = report["findings"]
    line = REMOVED_OVERLAY.splitlines().index("        path: /spec/template/spec/affinity") + 1
    assert (finding["path"], finding["line"]) == (
        str(tmp_path / "prod" / "kustomization.yaml"),
        line,
    )
    assert finding["facts"]["node_loss_takes"] == 3  # nothing keeps replicas apart any more
    # the base, built alone, keeps its anti-affinity: only zones are left to spread, there
    (base,) = run_cli("check", *args, str(tmp_path / "base")).json()["findings"]
    assert "node_loss_takes" not in base["facts"] and base["path"].endswith("base/sts.yaml")
