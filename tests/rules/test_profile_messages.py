"""Messages quote the cluster profile the simulation used, not the built-in defaults."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, run_cli


def test_messages_follow_the_configured_profile(tmp_path: Path) -> None:
    (tmp_path / ".ssrisk.yaml").write_text(
        "profile:\n  out-of-service-after-s: 120\n  default-unreachable-toleration-s: 60\n"
    )
    manifest = str(ROOT / "examples" / "postgres.yaml")
    report = run_cli("check", "--format", "json", manifest, cwd=tmp_path).json()
    by_rule = {f["rule"]: f["message"] for f in report["findings"]}
    assert (
        "deletes it gracefully 60 s later (the default toleration)"
        in by_rule["no-automatic-failover"]
    )
    assert "out-of-service taint applied at 2m0s" in by_rule["no-automatic-failover"]
    assert "out-of-service taint applied at 2m0s" in by_rule["rwo-volume-reattach"]
    default = run_cli("check", "--format", "json", manifest, cwd=tmp_path.parent).json()
    messages = " ".join(f["message"] for f in default["findings"])
    assert "300 s later" in messages and "applied at 10m0s" in messages
