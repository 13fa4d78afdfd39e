"""References as links (:mod:`ssrisk.references`): every built-in rule's sources resolve to
a link at the checked version, in JSON, SARIF and ``--explain``."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, run_cli

from ssrisk.plugins import collect_rules, plugin_manager
from ssrisk.references import reference_url

POSTGRES = str(ROOT / "examples" / "postgres.yaml")


def test_every_reference_of_the_built_in_rules_has_a_link() -> None:
    unlinked = [
        (rule.id, ref)
        for rule in collect_rules(plugin_manager())
        for ref in rule.references
        if reference_url(ref, "1.37") is None
    ]
    assert unlinked == []


def test_the_forms_link_where_the_behaviour_is() -> None:
    cases = {
        "k8s: pkg/controller/podgc/gc_controller.go#gcOrphaned": (
            "https://github.com/kubernetes/kubernetes/blob/release-1.33/"
            "pkg/controller/podgc/gc_controller.go"
        ),
        "web: docs/concepts/workloads/pods/disruptions.md (Pod disruption budgets)": (
            "https://kubernetes.io/docs/concepts/workloads/pods/disruptions/"
        ),
        "web: etcd.io/docs/v3.5/faq": "https://etcd.io/docs/v3.5/faq",
        "KEP-2268 (non-graceful node shutdown)": (
            "https://github.com/kubernetes/enhancements/issues/2268"
        ),
        "kubernetes/kubernetes#74689": "https://github.com/kubernetes/kubernetes/issues/74689",
    }
    assert {r: reference_url(r, "1.33.4") for r in cases} == cases
    assert reference_url("a runbook of ours", "1.33") is None


def test_reports_carry_the_links_at_the_checked_version(tmp_path: Path) -> None:
    report = run_cli("check", "--format", "json", "--kube-version", "1.31", POSTGRES).json()
    for f in report["findings"]:
        assert len(f["reference_urls"]) == len(f["references"])
        k8s = [
            u
            for r, u in zip(f["references"], f["reference_urls"], strict=True)
            if r.startswith("k8s:")
        ]
        assert all(
            u.startswith("https://github.com/kubernetes/kubernetes/blob/release-1.31/") for u in k8s
        )
    (note,) = [n for n in report["run_notes"] if n["rule"] == "no-automatic-failover"]
    assert len(note["reference_urls"]) == len(note["references"]) and all(note["reference_urls"])
    sarif = tmp_path / "r.sarif"
    run_cli("check", "--format", "sarif", "-o", str(sarif), POSTGRES)
    doc = json.loads(sarif.read_text())
    rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert "## Links" in rules["single-replica"]["help"]["markdown"]
    assert "](https://kubernetes.io/docs/" in rules["single-replica"]["help"]["markdown"]
    explained = run_cli("check", "--explain", POSTGRES).out
    assert "<https://github.com/kubernetes/kubernetes/blob/release-1.37/pkg/" in explained
