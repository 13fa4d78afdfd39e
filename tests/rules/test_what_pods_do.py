"""What Ready and per-pod names decide depends on whether the pods serve (a declared port, or
a Service with ports) and how many replicas there are. Read from files as users
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
        ("cache-no-service.yaml", "warning"),  # clients address memcached-0 by its name
    ],
)
def test_headless_service_missing_is_a_note_on_pods_without_ports(
    manifest: str, severity: str
) -> None:
    findings, _ = _report(manifest, "--select", "headless-service-missing")
    assert [(f["rule"], f["severity"]) for f in findings] == [
        ("headless-service-missing", severity)
    ]
