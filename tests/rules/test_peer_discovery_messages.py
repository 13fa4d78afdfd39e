"""peer-discovery-not-ready says how sure it is that readiness needs peers: a known cluster
check "are Ready only with peers", a quorum system's unknown script "may need peers"."""

from __future__ import annotations

from conftest import DATA, run_cli

FOLDER = DATA / "rules" / "peer-discovery-not-ready"


def _message(name: str) -> str:
    run = run_cli("check", "--format", "json", "--select", "peer-discovery-not-ready",
                  str(FOLDER / name))  # fmt: skip
    (hit,) = run.json()["findings"]
    return str(hit["message"])


def test_a_known_cluster_check_is_stated() -> None:
    assert "and are Ready only with peers: a cold start can deadlock" in _message(
        "fail-cluster-health-parallel.yaml"
    )


def test_a_quorum_systems_script_is_a_may() -> None:
    assert "and may need peers to be Ready: a cold start can deadlock" in _message(
        "fail-quorum-script-parallel.yaml"
    )
