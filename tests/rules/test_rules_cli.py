"""``ssrisk rules`` and ``ssrisk explain`` for the built-in catalog."""

from __future__ import annotations

from conftest import DATA, run_cli

from ssrisk.plugins import collect_rules, plugin_manager

#: The catalog of issue 4: every rule id, with its default severity.
CATALOG = {
    "single-replica": "error",
    "ordered-ready-stall": "info",
    "long-termination-grace": "warning",
    "rwo-volume-reattach": "warning",
    "no-automatic-failover": "warning",
    "eviction-disabled-by-toleration": "warning",
    "replicas-share-failure-domain": "warning",
    "node-pinned-storage": "warning",
    "zonal-volume-pinning": "warning",
    "pdb-blocks-drain": "error",
    "pdb-missing": "warning",
    "headless-service-missing": "warning",
    "selector-template-mismatch": "error",
    "readiness-probe-missing": "warning",
    "update-strategy-ondelete": "info",
    "partition-blocks-update": "warning",
    "pvc-retention-delete": "warning",
    "prestop-exceeds-grace": "warning",
    "api-version-not-served": "error",
}


def test_rules_json_lists_the_catalog() -> None:
    run = run_cli("rules", "--format", "json")
    assert run.code == 0, run.err
    listed = {r["id"]: r for r in run.json()}
    for rule_id, severity in CATALOG.items():
        assert rule_id in listed, f"{rule_id} is not registered"
        entry = listed[rule_id]
        assert entry["severity"] == severity
        assert entry["summary"] and "\n" not in entry["summary"]
        assert entry["references"], f"{rule_id} lists no references"


def test_rules_text_has_one_line_per_rule() -> None:
    run = run_cli("rules")
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    for rule_id, severity in CATALOG.items():
        line = next(x for x in lines if x.split()[0] == rule_id)
        assert severity in line.split()[1].split("/")


def test_rules_list_every_severity_a_rule_can_report() -> None:
    # a rule that reports some cases as errors and others as info is listed as such, the most
    # severe first, in text and JSON
    run = run_cli("rules")
    line = next(x for x in run.out.splitlines() if x.split()[0] == "pdb-blocks-drain")
    assert line.split()[1] == "error/info"
    listed = {r["id"]: r for r in run_cli("rules", "--format", "json").json()}
    assert listed["quorum-replicas"]["severities"] == ["error", "warning"]
    assert listed["single-replica"]["severities"] == ["error", "warning", "info"]


def test_reported_severities_are_the_listed_ones() -> None:
    # every finding of the rule examples has a severity its rule lists
    run = run_cli("check", "--format", "json", str(DATA / "rules"))
    listed = {r["id"]: r["severities"] for r in run_cli("rules", "--format", "json").json()}
    seen = {(f["rule"], f["severity"]) for f in run.json()["findings"]}
    assert {rule for rule, _ in seen} >= {"pdb-blocks-drain", "quorum-replicas"}
    assert [(rule, sev) for rule, sev in sorted(seen) if sev not in listed[rule]] == []


def test_explain_prints_each_page() -> None:
    for rule in collect_rules(plugin_manager()):
        if rule.id not in CATALOG:
            continue
        run = run_cli("explain", rule.id)
        assert run.code == 0, run.err
        assert run.out == rule.doc_path().read_text(encoding="utf-8")


def test_explain_unknown_rule_is_a_usage_error() -> None:
    run = run_cli("explain", "no-such-rule")
    assert run.code == 2
    assert "unknown rule 'no-such-rule'" in run.err


def test_rules_prints_a_markdown_table_of_every_rule() -> None:
    run = run_cli("rules", "--format", "markdown")
    assert run.code == 0, run.err
    rows = [line for line in run.out.splitlines() if line.startswith("| `")]
    ids = [row.split("`")[1] for row in rows]
    assert ids == [r.id for r in collect_rules(plugin_manager())]
    assert all(row.count(" | ") == 2 for row in rows)  # (a | in a summary is escaped)
