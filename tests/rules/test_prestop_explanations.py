"""prestop-destroys-state explains what a restart costs for what the hook destroys: the data
(the member comes back empty) or the membership (the cluster is reconfigured without it)."""

from __future__ import annotations

from conftest import DATA, run_cli

FOLDER = DATA / "rules" / "prestop-destroys-state"


def _explanation(name: str) -> str:
    run = run_cli("check", "--format", "json", "--select", "prestop-destroys-state",
                  str(FOLDER / name))  # fmt: skip
    (hit,) = run.json()["findings"]
    return " ".join(str(hit["explanation"]).split())


def test_a_leave_is_a_reconfiguration_not_an_empty_member() -> None:
    text = _explanation("fail-consul-leave.yaml")
    assert "into a reconfiguration: the member is removed from the cluster" in text
    assert "rejoins empty" not in text


def test_a_removed_data_directory_comes_back_empty() -> None:
    assert "it rejoins empty and must be rebuilt from its peers" in _explanation(
        "fail-rm-data-dir.yaml"
    )
