"""What an outage costs decides the severity: a claim that holds data, pods that serve (a
declared port, or a Service with ports), or neither (a toolbox pod). Read from files as users
write them (tests/data/gate/what-pods-do), with the default settings."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import DATA, run_cli

WHAT = DATA / "gate" / "what-pods-do"


def _report(name: str, *args: str) -> tuple[list[dict[str, Any]], int]:
    run = run_cli("check", "--format", "json", "--kube-version", "1.34", *args, str(WHAT / name))
    assert run.code in (0, 1), run.err
    return run.json()["findings"], run.code


def _reported(name: str, *args: str) -> list[tuple[str, str]]:
    findings, _ = _report(name, *args)
    return sorted((f["rule"], f["severity"]) for f in findings if not f.get("folded_into"))


@pytest.mark.parametrize(
    ("manifest", "severity"),
    [
        ("database.yaml", "error"),  # a claim holds the data: a full outage
        ("cache.yaml", "warning"),  # serves on a port, stores nothing
        ("cache-service-ports.yaml", "warning"),  # its Service declares the port
        ("toolset.yaml", "info"),  # sleep infinity: nothing to fail over
        ("toolset-pdb.yaml", "error"),  # but a budget that never allows the eviction hangs drains
        ("replicas-patch.yaml", "error"),  # a patch: what the pod holds is in its base
    ],
)
def test_single_replica_severity_follows_what_the_pod_holds(manifest: str, severity: str) -> None:
    assert ("single-replica", severity) in _reported(manifest, "--select", "single-replica")


def test_a_toolbox_pod_passes_a_warning_gate() -> None:
    # every finding on the toolset is a note, and what the missed recovery objectives would
    # say (objective-missed, no-automatic-failover) stays folded into the single-replica note
    findings, _ = _report("toolset.yaml")
    reported = [(f["rule"], f["severity"]) for f in findings if not f.get("folded_into")]
    assert {s for _, s in reported} == {"info"}, reported
    folded = {f["rule"]: f["folded_into"] for f in findings if f.get("folded_into")}
    assert folded.get("objective-missed") == "single-replica"
    assert run_cli("check", "--fail-on", "warning", str(WHAT / "toolset.yaml")).code == 0


def test_configured_objectives_do_not_raise_a_toolbox_pod_again(tmp_path: Any) -> None:
    config = tmp_path / ".ssrisk.yaml"
    config.write_text(
        "objectives:\n  node-loss: {max-unavailable: 0, recover-within: 5m}\n"
        "  node-drain: {max-unavailable: 0}\n",
        encoding="utf-8",
    )
    assert _reported(
        "toolset.yaml", "--config", str(config), "--disable", "ordered-ready-stall"
    ) == [
        ("readiness-probe-missing", "info"),
        ("single-replica", "info"),
    ]


def test_the_pdb_that_blocks_drains_is_folded_into_the_one_finding() -> None:
    findings, code = _report("toolset-pdb.yaml")
    single = [f for f in findings if f["rule"] == "single-replica"]
    assert len(single) == 1 and "blocks drains" in single[0]["message"]
    pdb = [f for f in findings if f["rule"] == "pdb-blocks-drain"]
    assert [f.get("folded_into") for f in pdb] == ["single-replica"]
    assert code == 1


@pytest.mark.parametrize(
    ("manifest", "severity", "says_clients"),
    [
        ("cache-service-ports.yaml", "warning", True),  # its Service sends clients to it
        ("workers.yaml", "warning", False),  # no port, but Ready paces 3 replicas' rollouts
        ("toolset.yaml", "info", False),  # no port, one replica: nothing waits on Ready
    ],
)
def test_readiness_probe_missing_says_what_ready_decides_here(
    manifest: str, severity: str, says_clients: bool
) -> None:
    findings, _ = _report(manifest, "--select", "readiness-probe-missing")
    [finding] = findings
    assert finding["severity"] == severity
    assert ("clients are sent" in finding["message"]) is says_clients, finding["message"]


@pytest.mark.parametrize(
    ("manifest", "severity"),
    [
        ("toolset-no-service.yaml", "info"),  # no port: nothing is known to use per-pod names
        # memcached behind a ClusterIP Service: nothing here addresses a pod by its own name
        ("cache-no-service.yaml", "info"),
    ],
)
def test_headless_service_missing_is_a_note_on_pods_without_ports(
    manifest: str, severity: str
) -> None:
    findings, _ = _report(manifest, "--select", "headless-service-missing")
    assert [(f["rule"], f["severity"]) for f in findings] == [
        ("headless-service-missing", severity)
    ]
