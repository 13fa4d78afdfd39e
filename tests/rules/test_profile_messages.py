"""Messages quote the cluster profile the simulation used, not the built-in defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import ROOT, run_cli

from ssrisk.timeline import fmt_duration

POSTGRES = str(ROOT / "examples" / "postgres.yaml")


def _by_rule(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["rule"]: f for f in report["findings"]}


def test_messages_follow_the_configured_profile(tmp_path: Path) -> None:
    (tmp_path / ".ssrisk.yaml").write_text(
        "profile:\n  out-of-service-after-s: 120\n  default-unreachable-toleration-s: 60\n"
    )
    found = _by_rule(run_cli("check", "--format", "json", POSTGRES, cwd=tmp_path).json())
    assert "deletes it gracefully 60 s later" in found["no-automatic-failover"]["explanation"]
    # the operator's out-of-service taint, quoted with the profile's time
    assert "(scenario node-loss-out-of-service" in found["no-automatic-failover"]["explanation"]
    default = _by_rule(run_cli("check", "--format", "json", POSTGRES, cwd=tmp_path.parent).json())
    assert "deletes it gracefully 300 s later" in default["no-automatic-failover"]["explanation"]


def test_a_stated_node_remediation_is_the_node_loss_simulated(tmp_path: Path) -> None:
    (tmp_path / ".ssrisk.yaml").write_text(
        "profile:\n  node-remediation: out-of-service\n  out-of-service-after-s: 120\n"
    )
    report = run_cli("check", "--format", "json", POSTGRES, cwd=tmp_path).json()
    found = _by_rule(report)
    sim = run_cli(
        "simulate", "--format", "json", "--scenario", "node-loss-out-of-service", POSTGRES,
        cwd=tmp_path,
    ).json()["results"][0]  # fmt: skip
    back = fmt_duration(sim["time_to_recovery_s"])
    assert found["single-replica"]["message"].endswith(
        f"simulated node loss with the out-of-service taint at 2m0s: back at {back}"
    )
    # the set recovers on this platform: nothing says it has no failover, no run note either
    assert "no-automatic-failover" not in found
    assert [n["rule"] for n in report["run_notes"]] == ["rwo-volume-reattach"]
