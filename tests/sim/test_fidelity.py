"""Controller details read against the Kubernetes source, each pinned with its derivation.

Default profile unless said: node-monitor-period P = 5 s, Ready=Unknown at G - 2.5 s after the
last heartbeat (G = 50 s from 1.32), the NoExecute tainting pass every 100 ms, controller
reaction 0.5 s, scheduling 1 s, app shutdown 5 s, kubelet cleanup 0.5 s.
"""

from __future__ import annotations

import pytest
from ssrisk.embedded_sim import ClusterProfile, NodeSpec, simulate, version_defaults
from ssrisk.embedded_sim.scenarios import run

from .simdata import load

NLC = "pkg/controller/nodelifecycle/node_lifecycle_controller.go"


# --- 1. the unreachable NoExecute taint comes one node-monitor pass after Unknown ------------


@pytest.mark.parametrize(("version", "g"), [("1.31", 40.0), ("1.32", 50.0), ("1.37", 50.0)])
def test_noexecute_taint_one_pass_after_unknown(version: str, g: float) -> None:
    # monitorNodeHealth: tryUpdateNodeHealth marks the node Unknown at T_u = G - 2.5 and calls
    # MarkPodsNotReady in that pass, but hands processTaintBaseEviction the Ready condition as
    # it was before the update (True -> markNodeAsReachable, a no-op). The next pass, P = 5 s
    # later, observes Unknown and queues the node (markNodeForTainting); doNoExecuteTaintingPass
    # (every 100 ms, full bucket) taints it at T_u + 5.1; the default 300 s toleration evicts at
    # T_u + 305.1: 342.6 s up to 1.31, 352.6 s from 1.32.
    r = simulate(load("pg-single.yaml").sts, "node-loss", kube_version=version)
    t_u = g - 2.5
    unknown = r.first("node-unknown")
    not_ready = r.first("pod-not-ready", "pg-0")
    assert unknown is not None and unknown.t_s == t_u
    assert not_ready is not None and not_ready.t_s == t_u
    noexec = [e for e in r.events("taint-added") if "NoExecute" in e.event]
    assert [e.t_s for e in noexec] == [pytest.approx(t_u + 5.1)]
    assert noexec[0].source == f"{NLC}#doNoExecuteTaintingPass"
    evicted = r.first("pod-deletion-requested", "pg-0")
    assert evicted is not None and evicted.t_s == pytest.approx(t_u + 5.1 + 300)


# --- 2. the first matching toleration per taint decides ---------------------------------------


def test_first_matching_toleration_decides() -> None:
    docs = load("tolerations-first-match.yaml").of("StatefulSet")
    wide, catch_all = docs
    # v1helper.GetMatchingTolerations keeps, for the unreachable taint, the first toleration of
    # the list that tolerates it: {Exists, NoExecute, 600 s}; getMinTolerationTime over the kept
    # ones gives 600 s, so the later 30 s toleration is never used. Taint at 52.6 s (see 1):
    # eviction at 652.6 s.
    r = simulate(wide, "node-loss", kube_version="1.34")
    evicted = r.first("pod-deletion-requested", "wide-first-0")
    assert evicted is not None and evicted.t_s == pytest.approx(52.6 + 600)
    # {operator: Exists} (no effect, no tolerationSeconds) comes first and tolerates the taint
    # for ever: no eviction, whatever the 30 s toleration after it says.
    r = simulate(catch_all, "node-loss", kube_version="1.34")
    assert r.events("pod-deletion-requested") == []
    assert r.first("toleration-forever", "catch-all-first-0") is not None


# --- 3. Parallel + minReadySeconds rolling updates before 1.34 --------------------------------


def _update_deletions(version: str) -> list[float]:
    r = simulate(load("web-parallel-min-ready.yaml").sts, "rolling-update", kube_version=version)
    return [e.t_s for e in r.events("pod-deletion-requested")]


def test_parallel_rolling_update_waits_for_min_ready_only_from_1_34() -> None:
    # One pod replaced: deleted at 0.5 s (controller reaction), containers stop at 5.5 (app
    # shutdown 5 s), object gone at 6.0 (cleanup 0.5), recreated at 6.5, scheduled and started
    # at 7.5 (no volumes), Ready at start (no readiness probe).
    # Up to 1.33 the update loop waits for isHealthy (Ready) only and Parallel's replica pass
    # does not block on availability: the next pod goes at the sync after Ready, 8.0 s, then
    # 15.5 s. From 1.34 (#130909, "Statefulset now respects minReadySeconds") it waits until
    # the new pod is available, Ready for minReadySeconds 30 s: 37.5 s, so 38.0 s, then 75.5 s.
    assert _update_deletions("1.31") == pytest.approx([0.5, 8.0, 15.5])
    assert _update_deletions("1.34") == pytest.approx([0.5, 38.0, 75.5])
    assert version_defaults("1.33").update_waits_for_min_ready is False
    assert version_defaults("1.34").update_waits_for_min_ready is True


# --- 4. graceful node shutdown ------------------------------------------------------------------


def test_graceful_shutdown_readiness_from_the_kubelet_then_unreachable_after_power_off() -> None:
    p = ClusterProfile()
    r = simulate(load("pg-single.yaml").sts, "graceful-node-shutdown", kube_version="1.34")
    # The kubelet posts Ready=False itself at t=0. The next NLC pass observes False both before
    # and after its update, so monitorNodeHealth does not call MarkPodsNotReady (that needs an
    # observed True); pg-0 stays Ready until the kubelet's shutdown manager has stopped it and
    # reports it Failed (killPods: min(app shutdown 5 s, budget 30-10 s) = 5 s).
    assert r.events("pod-not-ready") == []
    failed = r.first("pod-failed", "pg-0")
    assert failed is not None and failed.t_s == pytest.approx(p.app_shutdown_s)
    # Powered off at shutdownGracePeriod (30 s): the Lease goes stale, Unknown at 30 + 47.5.
    unknown = r.first("node-unknown")
    assert unknown is not None and unknown.t_s == pytest.approx(30 + 47.5)
    # The node already carries the not-ready NoExecute taint (queued on the first pass after
    # the kubelet's False); the pass after the Unknown one (P = 5 s) swaps it for unreachable at
    # once, without the rate limiter (processTaintBaseEviction).
    swap = [e for e in r.events("taint-added") if "unreachable:NoExecute" in e.event]
    assert [e.t_s for e in swap] == [pytest.approx(30 + 47.5 + 5)]
    assert swap[0].source == f"{NLC}#processTaintBaseEviction"
    assert r.recovered


# --- 5. a bare 1.35 is the latest 1.35 patch -----------------------------------------------------


def test_bare_1_35_is_the_latest_patch() -> None:
    # MaxUnavailableStatefulSet: on in 1.35.0-1.35.3, off from 1.35.4 (#137926, CHANGELOG-1.35).
    gate = "MaxUnavailableStatefulSet"
    assert version_defaults("1.35").gates[gate] is False
    assert version_defaults("1.35.3").gates[gate] is True
    assert version_defaults("1.35.4").gates[gate] is False
    sts = load("web-parallel.yaml").sts
    # Parallel set, bad rollout reverted at 10 min: with the 1.35 counting (gate on) the broken
    # old pod uses the whole maxUnavailable budget and is never replaced (#137409); gate off
    # (the latest patch) replaces it.
    latest = simulate(sts, "bad-rollout", kube_version="1.35")
    first = simulate(sts, "bad-rollout", kube_version="1.35.0")
    assert latest.to_dict()["rollout_completed"] is True
    assert first.to_dict()["rollout_completed"] is False
    assert any("latest 1.35 patch" in a for a in latest.assumptions)


# --- 6. force detach is re-checked on every reconcile pass ---------------------------------------


def test_force_detach_after_a_ready_period() -> None:
    # node-a1 lost at 0; pg-0 evicted at 352.6 s and stuck Terminating. The operator force-deletes
    # it at 400 s: the volume is no longer desired but still mounted on node-a1, so detach waits
    # (detach requested at 400 s). The node comes back at 745 s (Ready at 745.5 s) and is lost
    # again at 750 s, before its kubelet cleans up (at 745 + 9.5 s). At 760 s the wait
    # (maxWaitForUnmountDuration 6 min) has expired but the node is Ready: no force detach. The
    # reconciler re-checks every pass: at 797.5 s (750 + 47.5) the node is Unknown and the next
    # pass (ADC reaction 0.1 s) force-detaches; detach takes 15 s: detached at 812.6 s.
    prof = ClusterProfile(node_returns_after_s=745.0)
    _, sim = run(
        load("pg-single.yaml").sts, "node-loss", kube_version="1.34", profile=prof, horizon_s=1.0
    )
    node = sim.cluster.nodes["node-a1"]

    def force_delete() -> None:
        pod = sim.cluster.pods["pg-0"]
        sim.api.force_delete(pod, "operator", "operator force-deletes pg-0")

    sim.loop.at(400.0, force_delete)
    sim.loop.at(750.0, lambda: sim.lose_node(node, "lost again", "test"))
    sim.loop.horizon_s = 86400.0
    sim.loop.run()
    events = sim.timeline.events
    held = [e for e in events if e.kind == "volume-detach-waiting" and "is Ready" in e.event]
    assert [e.t_s for e in held] == [pytest.approx(760.0)]
    detached = [e for e in events if e.kind == "volume-detached"]
    assert [e.t_s for e in detached] == [pytest.approx(812.6)]
    assert "force detach" in detached[0].event


# --- 7. zone rate limiting: re-queue after a rate of 0, probe reset on leaving full disruption ---


def test_nodes_queued_at_rate_zero_are_tainted_when_the_zone_is_normal_again() -> None:
    # zone-a has 4 nodes (plus a healthy zone-b). a0 (web's node), a1 and a2 lost at 0: Unknown
    # at 47.5 s, 3 of 4 not Ready (> 2 and >= 55 %) -> PartialDisruption; a zone of <= 50 nodes
    # gets rate 0 (ReducedQPSFunc), so the nodes queued at 52.5 s wait. a1 returns at 100 s
    # (Ready at 100.5 s): 2 of 4 -> Normal, rate 0.1/s. SwapLimiter drains the new bucket because
    # the old limiter (rate 0) had no token, so the first queued node is tainted when the token
    # refills 10 s later, at 110.5 s, the second 10 s after that; their pods are evicted 300 s
    # later.
    nodes = (*tuple(NodeSpec(f"a{i}", "zone-a") for i in range(4)), NodeSpec("b1", "zone-b"))
    prof = ClusterProfile(nodes=nodes)
    _, sim = run(
        load("web-parallel.yaml").sts, "node-loss", kube_version="1.34", profile=prof, horizon_s=1.0
    )
    for n in ("a1", "a2"):
        sim.lose_node(sim.cluster.nodes[n], "lost", "test")
    sim.loop.at(100.0, lambda: sim.return_node(sim.cluster.nodes["a1"], True, "test"))
    sim.loop.horizon_s = 86400.0
    sim.loop.run()
    noexec = [e for e in sim.timeline.events if e.kind == "taint-added" and "NoExecute" in e.event]
    assert [(e.t_s, e.event.split()[0]) for e in noexec] == [
        (pytest.approx(110.5), "a0"),
        (pytest.approx(120.5), "a2"),
    ]


def test_leaving_master_disruption_resets_probe_timestamps() -> None:
    # One zone of three counted nodes (n0 holds the pod) and, in a zone of its own, a node
    # excluded from disruption checks (node.kubernetes.io/exclude-disruption,
    # isNodeExcludedFromDisruptionChecks: no zone state for it). All
    # three counted nodes lost at 0: Unknown at 47.5 s, every zone FullDisruption -> master
    # disruption mode, no NoExecute taint. The excluded node x stops heartbeating at 60 s (its
    # Unknown would be due at 107.5 s). n1 returns at 80 s, Ready at 80.5 s: leaving master
    # mode resets every node's probe timestamp, so x is marked Unknown only G + P = 55 s later,
    # at 135.5 s; n0 and n2 are queued again and tainted at the restored rate, the first when
    # the drained bucket refills 10 s after the swap: 90.5 s and 100.5 s.
    nodes = (
        *tuple(NodeSpec(f"n{i}", "only") for i in range(3)),
        NodeSpec("x", "control", labels=(("node.kubernetes.io/exclude-disruption", ""),)),
    )
    prof = ClusterProfile(nodes=nodes)
    _, sim = run(
        load("pg-single.yaml").sts, "zone-loss", kube_version="1.34", profile=prof, horizon_s=1.0
    )
    sim.loop.at(60.0, lambda: sim.lose_node(sim.cluster.nodes["x"], "lost", "test"))
    sim.loop.at(80.0, lambda: sim.return_node(sim.cluster.nodes["n1"], True, "test"))
    sim.loop.horizon_s = 86400.0
    sim.loop.run()
    events = sim.timeline.events
    unknown_x = [e.t_s for e in events if e.kind == "node-unknown" and e.event.startswith("x ")]
    assert unknown_x == [pytest.approx(135.5)]
    noexec = [e for e in events if e.kind == "taint-added" and "NoExecute" in e.event]
    assert [(e.t_s, e.event.split()[0]) for e in noexec][:2] == [
        (pytest.approx(90.5), "n0"),
        (pytest.approx(100.5), "n2"),
    ]
