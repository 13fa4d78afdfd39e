"""What pdb-blocks-drain and single-replica say about a budget that never allows an eviction:
the count the budget needs against the replicas the set runs, and one finding per cause."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import DATA, run_cli

RULES = DATA / "rules"


def _messages(path: str) -> dict[str, str]:
    run = run_cli("check", "--format", "json", path)
    assert run.code in (0, 1), run.err
    return {f["rule"]: f["message"] for f in run.json()["findings"] if not f.get("folded_into")}


def _facts(path: str) -> dict[str, dict[str, Any]]:
    run = run_cli("check", "--format", "json", path)
    assert run.code in (0, 1), run.err
    return {f["rule"]: f["facts"] for f in run.json()["findings"] if not f.get("folded_into")}


def test_a_budget_over_more_pods_than_the_set_runs_says_so() -> None:
    facts = _facts(str(RULES / "pdb-blocks-drain" / "fail-min-available-over-replicas.yaml"))
    said = facts["pdb-blocks-drain"]
    assert (said["field"], said["value"]) == ("minAvailable", 3)
    assert (said["desired_healthy"], said["replicas"]) == (3, 2)


def test_max_unavailable_zero_is_not_said_twice() -> None:
    path = str(RULES / "pdb-blocks-drain" / "fail-max-unavailable-zero.yaml")
    said = _facts(path)["pdb-blocks-drain"]
    assert (said["pdb"], said["field"], said["value"]) == ("kafka", "maxUnavailable", 0)
    assert _messages(path)["pdb-blocks-drain"].count("maxUnavailable") == 1


def test_one_replica_with_a_budget_is_one_finding_that_names_the_blocked_drains() -> None:
    # minAvailable: 1 over one replica: more replicas would free the budget, so the single
    # replica is the cause; its message says drains hang, not that they take it
    path = str(RULES / "pdb-blocks-drain" / "pass-min-available-one-one-replica.yaml")
    run = run_cli("check", "--format", "json", path)
    found = run.json()["findings"]
    pdb = [f for f in found if f["rule"] == "pdb-blocks-drain"]
    assert [f["folded_into"] for f in pdb] == ["single-replica"]
    msg = _messages(path)["single-replica"]
    # (the search pods declare no port and no claim: nothing to fail over but the drains)
    assert "PDB 'search' blocks drains" in msg
    assert "drain and rollout" not in msg
    severity = {f["rule"]: f["severity"] for f in found if not f.get("folded_into")}
    assert severity["single-replica"] == "error"  # a drain that hangs for ever


def test_several_single_node_claims_are_named_in_the_plural() -> None:
    # (it said "claim 'data', 'wal' is ReadWriteOnce")
    path = RULES / "zonal-volume-pinning" / "pass-zone-redundant.yaml"
    run = run_cli("check", "--format", "json", str(path))
    (msg,) = [f["message"] for f in run.json()["findings"] if f["rule"] == "rwo-volume-reattach"]
    assert msg.startswith("claims 'data' and 'wal' are ReadWriteOnce: "), msg


def test_more_pdbs_than_are_named_is_a_fact_the_message_states(tmp_path) -> None:
    # 12 budgets: "more than 10 PodDisruptionBudgets"; the facts said pdbs: 11
    from conftest import ROOT

    budgets = "".join(
        f"---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: many-{i}, "
        "namespace: shop}\nspec: {maxUnavailable: 1, selector: {matchLabels: {app: postgres}}}\n"
        for i in range(12)
    )
    (tmp_path / "db.yaml").write_text((ROOT / "examples" / "postgres.yaml").read_text() + budgets)
    said = _facts(str(tmp_path / "db.yaml"))["pdb-blocks-drain"]
    assert said == {"pdbs_more_than": 10}
    assert (
        "more than 10 PodDisruptionBudgets"
        in _messages(str(tmp_path / "db.yaml"))["pdb-blocks-drain"]
    )


@pytest.mark.parametrize("field", ["minAvailable: 1", "minAvailable: 100%", "maxUnavailable: 0"])
def test_one_replica_behind_a_budget_never_calls_a_drain_an_outage(tmp_path, field) -> None:
    # with maxUnavailable: 0 or 100% (which block drains whatever the replicas) single-replica
    # said "every node loss, drain and rollout is a full outage" beside pdb-blocks-drain
    from conftest import ROOT

    pdb = (
        "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: db, namespace: "
        f"shop}}\nspec:\n  {field}\n  selector: {{matchLabels: {{app: postgres}}}}\n"
    )
    path = tmp_path / "db.yaml"
    path.write_text((ROOT / "examples" / "postgres.yaml").read_text() + pdb)
    facts = _facts(str(path))
    assert facts["single-replica"]["drains_hang"] is True
    assert "drain and rollout" not in _messages(str(path))["single-replica"]
    # the budget is the cause of the hang only where more replicas would not free it
    assert ("pdb-blocks-drain" in facts) == (field != "minAvailable: 1")


def test_a_budget_in_an_api_version_no_release_serves_fails_the_run() -> None:
    # it was a loading warning: exit 0 even with --fail-on warning, while the apply fails
    path = str(RULES / "api-version-not-served" / "fail-pdb-v1beta1.yaml")
    run = run_cli("check", "--format", "json", path)
    assert run.code == 1
    found = run.json()["findings"]
    (rejected,) = [f for f in found if f["rule"] == "api-version-not-served"]
    assert rejected["object"]["kind"] == "PodDisruptionBudget" and rejected["line"] == 20
    assert rejected["facts"]["api_version"] == "policy/v1beta1"
    # the budget is rejected, not the set: the set's other findings are not folded into it
    assert not any(f.get("folded_into") == "api-version-not-served" for f in found)
    assert {f["rule"] for f in found} >= {"replicas-share-failure-domain", "pdb-blocks-drain"}
