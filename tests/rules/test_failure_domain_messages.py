"""replicas-share-failure-domain: the static worst case agrees with the scheduler's filter and
the simulated numbers are the simulator's, with the reason when they differ."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT, SHARED, run_cli
from failure_domain import contradictions
from ssrisk.rules._podspec import Spread
from ssrisk.rules.replicas_share_failure_domain import per_zone_cap

RULE = "replicas-share-failure-domain"
KAFKA = ROOT / "examples" / "kafka.yaml"
ZONE_ONLY = DATA / "rules" / RULE / "fail-zone-spread-only.yaml"


def _finding(path: Path) -> tuple[str, str]:
    """The message and the explanation (whitespace collapsed) of the rule's one finding."""
    hit = _hit(path)
    return str(hit["message"]), " ".join(str(hit["explanation"]).split())


def _hit(path: Path) -> dict[str, Any]:
    run = run_cli("check", "--format", "json", "--kube-version", "1.34", str(path))
    assert run.code in (0, 1), run.err
    (hit,) = [f for f in run.json()["findings"] if f["rule"] == RULE]
    assert isinstance(hit, dict)
    return hit


def _simulated(path: Path, scenario: str) -> dict[str, Any]:
    run = run_cli(
        "simulate", "--format", "json", "--kube-version", "1.34", "--scenario", scenario,
        str(path),
    )  # fmt: skip
    assert run.code == 0, run.err
    (result,) = run.json()["results"]
    assert isinstance(result, dict)
    return result


def test_hostname_anti_affinity_without_zones_quotes_the_simulated_zone_loss() -> None:
    _msg, text = _finding(KAFKA)
    facts = _hit(KAFKA)["facts"]
    # the worst case the constraints allow: three nodes in one zone hold all three brokers
    # ... which needs three nodes in a zone: the message says so, next to the simulated 2
    assert (facts["zone_loss_takes"], facts["replicas"], facts["zone_nodes_needed"]) == (3, 3, 3)
    assert "in a zone with 3 or more nodes one zone failure can take up to 3 of 3" in text
    took = _simulated(KAFKA, "zone-loss")["max_unavailable"]
    assert facts["simulated_zone_loss_took"] == took
    assert (facts["zones"], facts["nodes_per_zone"]) == (3, 2)
    assert f"zone loss took {took} of 3 replicas" in text
    assert 1 < took < 3  # the simulated zones have 2 nodes each
    assert "not 3, because a zone there has only 2 nodes" in text
    assert "node_loss_takes" not in facts  # the required anti-affinity keeps one per node


def test_zone_spread_without_hostname_depends_on_the_number_of_zones() -> None:
    msg, text = _finding(ZONE_ONLY)
    facts = _hit(ZONE_ONLY)["facts"]
    assert (facts["node_loss_takes"], facts["zones_with_all"]) == (3, 1)
    assert "worst case" not in msg  # the simulated 1 of 3 is the worst case on three zones
    assert "up to 3 of 3 replicas (all of them) when those Nodes are in one zone" in text
    assert "2 of 3 (a majority: a quorum of the rest is lost) with two zones" in text
    assert "1 of 3 with three zones or more" in text
    took = _simulated(ZONE_ONLY, "node-loss")["max_unavailable"]
    assert took == 1 == facts["simulated_node_loss_took"]
    assert f"node loss took {took} of 3 replicas, not 3, because the zone constraint" in text
    assert "zone_loss_takes" not in facts  # maxSkew 1 over zones is the recommended spread


@cache
def _brute_force(n: int, zones: int, max_skew: int, min_domains: int) -> int:
    """Most replicas any zone reaches over every order of placements the PodTopologySpread
    filter admits (filtering.go#Filter and #minMatchNum), by exhaustive search."""
    best = 0

    def place(counts: tuple[int, ...]) -> None:
        nonlocal best
        best = max(best, max(counts))
        if sum(counts) == n:
            return
        low = 0 if zones < min_domains else min(counts)
        for d in range(zones):
            if counts[d] + 1 - low <= max_skew:
                grown = list(counts)
                grown[d] += 1
                place(tuple(sorted(grown)))

    place((0,) * zones)
    return best


@pytest.mark.parametrize("n", range(2, 8))
@pytest.mark.parametrize("zones", range(1, 5))
@pytest.mark.parametrize("max_skew", [1, 2, 3])
@pytest.mark.parametrize("min_domains", [1, 3])
def test_per_zone_cap_matches_the_scheduler_filter(
    n: int, zones: int, max_skew: int, min_domains: int
) -> None:
    spread = Spread("topology.kubernetes.io/zone", max_skew, ("x",), None, min_domains, False)
    assert per_zone_cap(n, spread, zones, True) == _brute_force(n, zones, max_skew, min_domains)
    assert per_zone_cap(n, spread, zones, False) == _brute_force(n, zones, max_skew, 1)


USER_CASE = DATA / "rules" / RULE / "fail-zone-spread-preferred-hostname.yaml"


def test_the_new_users_message_says_what_the_figure_depends_on() -> None:
    # zone spread DoNotSchedule + a preferred hostname anti-affinity: "worst case 3 of 3
    # (simulated: 1 of 3)" read as a contradiction
    msg, _text = _finding(USER_CASE)
    # one claim, one number: the simulated 1 of 3 is a fact and a sentence of the explanation
    assert msg == (
        "the hostname anti-affinity is only preferred: a node loss takes 3 of 3 "
        "when one zone has them all"
    ), msg
    assert len(msg) <= 160
    assert contradictions(msg) == []


def _message_sources() -> list[Path]:
    paths = [ROOT / "examples", DATA / "rules", DATA / "gate" / "trial" / "postgres"]
    corpus = SHARED / "corpus"
    return [*paths, corpus] if corpus.is_dir() else paths


@pytest.mark.parametrize("path", _message_sources(), ids=lambda p: p.name)
def test_no_message_form_contradicts_itself(path: Path) -> None:
    run = run_cli("check", "--format", "json", "--select", RULE, str(path))
    messages = [f["message"] for f in run.json()["findings"] if f["rule"] == RULE]
    assert messages
    for message in messages:
        assert contradictions(message) == [], message


def test_a_preferred_anti_affinity_is_named_not_called_nothing() -> None:
    # the "soft" anti-affinity preset of many charts: the message names the preference that
    # does not hold, instead of "nothing keeps replicas on separate nodes or zones"
    msg, _text = _finding(DATA / "rules" / RULE / "fail-preferred-hostname-no-zone.yaml")
    assert msg.startswith(
        "the hostname anti-affinity is only preferred and nothing spreads zones: worst case a "
        "node loss takes 3 of 3, a zone loss 3 of 3"
    ), msg


def test_a_set_that_is_no_quorum_system_is_not_told_it_needs_a_majority() -> None:
    # the explanation said "a quorum system needs N alive" under "not a quorum system"
    _msg, text = _finding(DATA / "rules" / RULE / "fail-preferred-hostname-no-zone.yaml")
    assert "With 3 members it needs 2 alive." in text  # zookeeper: a quorum system
    path = DATA / "rules" / "pdb-blocks-drain" / "fail-unhealthy-policy-unset.yaml"
    _msg, text = _finding(path)
    assert "not a quorum system" in text and "needs 2 alive" not in text


MAX_PODS = DATA / "rules" / RULE / "fail-not-simulated-max-pods"


def test_a_set_too_large_to_simulate_loses_at_most_a_nodes_pod_capacity(tmp_path: Path) -> None:
    """251 replicas are not simulated; nothing keeps them apart, but the kubelet runs at most
    maxPods pods on a node (default 110, pkg/kubelet/apis/config/v1beta1/defaults.go), so the
    worst node loss takes 110 of 251, not 251 (the profile's node-allocatable pods raise it)."""
    args = ("check", "--format", "json", "--kube-version", "1.34", "--select", RULE, "big.yaml")
    (hit,) = run_cli(*args, cwd=MAX_PODS).json()["findings"]
    facts = hit["facts"]
    assert (facts["node_loss_takes"], facts["replicas"], facts["max_pods"]) == (110, 251, 110)
    assert "a node runs at most 110 pods (the kubelet's maxPods" in hit["explanation"]
    # the default objective (a minority, 125 of 251) is met by 110: no node-loss figure then
    (tmp_path / "default.yaml").write_text("{}\n")
    default = ("--config", str(tmp_path / "default.yaml"))
    (big,) = run_cli(*args[:-1], *default, "big.yaml", cwd=MAX_PODS).json()["findings"]
    assert "node_loss_takes" not in big["facts"] and big["facts"]["zone_loss_takes"] == 251
    (tmp_path / "more.yaml").write_text(
        (MAX_PODS / ".ssrisk.yaml").read_text() + "profile:\n  node-allocatable: {pods: 250}\n"
    )
    more = ("--config", str(tmp_path / "more.yaml"))
    (hit,) = run_cli(*args[:-1], *more, "big.yaml", cwd=MAX_PODS).json()["findings"]
    assert (hit["facts"]["node_loss_takes"], hit["facts"]["max_pods"]) == (250, 250)
