"""eviction-disabled-by-toleration and ``ssrisk simulate`` simulate node loss the way the
profile's ``node-remediation`` says the platform handles it, like check's other rules.

Expected times, Kubernetes 1.34, the default profile but for the remediation (3 replicas of
tests/data/rules/eviction-disabled-by-toleration/*-remediation/redis.yaml, all on the lost node:
worst case, no volumes, a readinessProbe):

- t=0 the node stops heartbeating; Ready=Unknown at node-monitor-grace-period 50 s - 2.5 s =
  47.5 s (nodelifecycle tryUpdateNodeHealth); unreachable:NoExecute one pass later, 52.6 s.
  The pods tolerate node.kubernetes.io/unreachable without tolerationSeconds: never evicted
  by it (taint_eviction.go#getMinTolerationTime).
- out-of-service at 120 s: node.kubernetes.io/out-of-service:NoExecute is another key, which
  a toleration with key node.kubernetes.io/unreachable does not match (ToleratesTaint: a
  non-empty key must equal the taint's), so the taint eviction controller deletes the pods at
  once (processPodOnNode: a taint not tolerated deletes now): Terminating at 120 s. PodGC
  passes at 10 s + k x 20 s and force-deletes Terminating pods on a not-Ready node with the
  out-of-service taint (gc_controller.go#gcTerminating; NodeOutOfServiceVolumeDetach, GA in
  1.28): removed at 130 s. OrderedReady recreates them one at a time: created 0.5 s later,
  scheduled 1 s later, Ready 10 s after start: redis-0 Ready at 141.5 s, redis-1 at 153 s,
  redis-2 at 164.5 s.
  A catch-all toleration (operator Exists, no key) matches the out-of-service taint too:
  nothing deletes the pods, no recovery.
- Node deleted at 120 s: PodGC's pass at 130 s finds pods bound to a missing Node and
  quarantines it 40 s (gcOrphaned, quarantineTime), the pass at 170 s force-deletes them,
  whatever they tolerate; the same 34.5 s of recreation: back at 204.5 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import DATA, run_cli

RULE = "eviction-disabled-by-toleration"
DIR = DATA / "rules" / RULE


def _check(entry: Path) -> dict[str, Any]:
    where = entry if entry.is_dir() else entry.parent
    run = run_cli("check", "--format", "json", "--kube-version", "1.34", "--select", RULE,
                  entry.name if entry.is_file() else ".", cwd=where)  # fmt: skip
    found = [f for f in run.json()["findings"] if f["rule"] == RULE]
    assert len(found) == 1, found
    return found[0]


def _simulate(entry: Path, *scenario: str) -> dict[str, Any]:
    args = [a for s in scenario for a in ("--scenario", s)]
    run = run_cli("simulate", "--format", "json", "--kube-version", "1.34", *args, "redis.yaml",
                  cwd=entry)  # fmt: skip
    assert run.code == 0, run.out + run.err
    results = run.json()["results"]
    assert len(results) == 1
    return results[0]


def _times(result: dict[str, Any], kind_word: str) -> list[float]:
    return [e["t_s"] for e in result["timeline"] if kind_word in e["event"]]


def test_out_of_service_remediation_releases_pods_that_tolerate_unreachable() -> None:
    entry = DIR / "fail-out-of-service-remediation"
    sim = _simulate(entry)  # no --scenario: the profile's node loss
    assert sim["scenario"] == "node-loss-out-of-service"
    assert sim["recovered"] and sim["time_to_recovery_s"] == 164.5
    assert _times(sim, "gets deletionTimestamp") == [120.0, 120.0, 120.0]
    assert _times(sim, "PodGC force-deleted") == [130.0, 130.0, 130.0]
    assert _times(sim, "Running and Ready") == [141.5, 153.0, 164.5]
    found = _check(entry)
    assert found["severity"] == "info"
    assert found["message"] == (
        "the toleration for node.kubernetes.io/unreachable: never evicted from an unreachable "
        "node, but the out-of-service taint at 2m0s releases the pods (simulated: back at "
        "2m44.5s)"
    )
    text = found["explanation"]
    assert "Simulated timeline (scenario node-loss-out-of-service" in text
    assert "gc_controller.go#gcTerminating" in text and "stays there" not in text
    # the same result as simulate's, which an explicit --scenario node-loss still gives
    plain = _simulate(entry, "node-loss")
    assert not plain["recovered"]
    assert (
        "redis-0, redis-1 and redis-2 stay bound to lost node-a1 and are never evicted"
        in (plain["verdict"])
    )


def test_a_catch_all_toleration_defeats_the_out_of_service_remediation() -> None:
    entry = DIR / "fail-catch-all-out-of-service-remediation"
    sim = _simulate(entry)
    assert sim["scenario"] == "node-loss-out-of-service"
    assert not sim["recovered"] and sim["manual_action_required"]
    assert _times(sim, "gets deletionTimestamp") == []
    found = _check(entry)
    assert found["severity"] == "warning"
    assert found["message"] == (
        "a catch-all toleration: all 3 pods (worst case) are never evicted from an unreachable "
        "or not-ready node (nor by the out-of-service taint) and stay NotReady"
    )
    assert "Simulated timeline (scenario node-loss-out-of-service" in found["explanation"]


def test_node_deletion_remediation_releases_them_whatever_they_tolerate() -> None:
    entry = DIR / "fail-node-deletion-remediation"
    sim = _simulate(entry)
    assert sim["scenario"] == "node-deleted"
    assert sim["recovered"] and sim["time_to_recovery_s"] == 204.5
    assert _times(sim, "PodGC force-deleted the orphan") == [170.0, 170.0, 170.0]
    found = _check(entry)
    assert found["severity"] == "info"
    assert found["message"].endswith(
        "but deleting the Node at 2m0s releases the pods (simulated: back at 3m24.5s)"
    )
    assert "gc_controller.go#gcOrphaned" in found["explanation"]


def test_without_remediation_every_stuck_pod_is_named() -> None:
    found = _check(DIR / "fail-unreachable-no-seconds.yaml")
    assert found["severity"] == "warning"
    assert (
        "all 3 pods (worst case) are never evicted from an unreachable node" in (found["message"])
    )


def test_a_negative_toleration_is_quoted_as_written_and_as_read() -> None:
    # taint_eviction.go#getMinTolerationTime: <= 0 is 0 (it was quoted as 0 alone)
    from conftest import DATA, run_cli

    path = DATA / "rules" / "no-automatic-failover" / "fail-negative-toleration-seconds.yaml"
    found = run_cli("check", "--format", "json", str(path)).json()["findings"]
    (msg,) = [f["message"] for f in found if f["rule"] == "no-automatic-failover"]
    assert msg.startswith("tolerationSeconds -5 (read as 0) only starts a graceful delete"), msg


def test_a_long_toleration_the_remediation_releases_is_not_called_never(tmp_path: Path) -> None:
    # "tolerationSeconds 7200 ...: never evicted from an unreachable node, but deleting the
    # Node at 3m20s releases the pods" (found by an outside tester)
    source = DIR / "fail-node-deletion-remediation"
    for f in source.iterdir():
        (tmp_path / f.name).write_text(f.read_text())
    redis = tmp_path / "redis.yaml"
    text = redis.read_text()
    exists = "        operator: Exists\n"
    assert exists in text and "tolerationSeconds" not in text
    redis.write_text(text.replace(exists, exists + "        tolerationSeconds: 7200\n", 1))
    found = _check(tmp_path)
    assert found["facts"]["toleration_s"] == 7200
    assert "never" not in found["message"] and "evicted only 2h00m0s after" in found["message"]
