"""PodTopologySpread and InterPodAffinity as kube-scheduler runs them, on the versions where they
differ: minDomains, nodeAffinityPolicy / nodeTaintsPolicy and topology keys other than the
hostname and zone (tests/sim/data/topology-spread.yaml).

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/filtering.go (#calPreFilterState,
#minMatchNum, #Filter) and common.go (#filterTopologySpreadConstraints,
#matchNodeInclusionPolicies, #nodeLabelsMatchSpreadConstraints); interpodaffinity/filtering.go.
Feature gates (pkg/features/kube_features.go): MinDomainsInPodTopologySpread on from 1.27,
NodeInclusionPolicyInPodTopologySpread on from 1.26.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from ssrisk.embedded_sim import ClusterProfile, default_nodes, simulate
from ssrisk.embedded_sim.cluster import Node
from ssrisk.embedded_sim.profile import NodeSpec
from ssrisk.embedded_sim.scheduler import pod_topology_spread
from ssrisk.embedded_sim.scheduler.framework import FilterContext, OtherPod
from ssrisk.embedded_sim.workload import parse_statefulset

from .simdata import load

#: 3 zones of one node each, stated (not grown): node-a1, node-b1, node-c1.
THREE_NODES = ClusterProfile(nodes=default_nodes(3, 1), shape_stated=True)
SPREAD_REFUSED = "2 node(s) didn't match pod topology spread constraints"


def _set(name: str) -> dict[str, Any]:
    return next(
        s for s in load("topology-spread.yaml").of("StatefulSet") if s["metadata"]["name"] == name
    )


def _without(sts: dict[str, Any], field: str) -> dict[str, Any]:
    """The set with `field` removed from its spread constraint (the default policy)."""
    out = copy.deepcopy(sts)
    del out["spec"]["template"]["spec"]["topologySpreadConstraints"][0][field]
    return out


@pytest.mark.parametrize(
    ("version", "gates", "recovers"),
    [
        ("1.26", None, True),
        ("1.27", None, False),
        ("1.34", None, False),
        ("1.34", {"MinDomainsInPodTopologySpread": False}, True),
    ],
)
def test_min_domains_keeps_the_replacement_pending_once_domains_are_too_few(
    version: str, gates: dict[str, bool] | None, recovers: bool
) -> None:
    # 3 replicas, one per node (hostname spread maxSkew 1, minDomains 3). node-deleted deletes
    # node-a1 at 120 s; PodGC removes min-domains-0 40 s later and the controller recreates it.
    # Domains left: node-b1 and node-c1, one replica each. minMatchNum: 2 domains < minDomains
    # 3, so the global minimum is 0 and 1 + 1 - 0 = 2 > maxSkew 1 on both: Pending for good.
    # Without the gate (1.26, or turned off) minDomains reads as 1: minimum 1, 1 + 1 - 1 = 1.
    r = simulate(
        _set("min-domains"),
        "node-deleted",
        kube_version=version,
        profile=THREE_NODES,
        feature_gates=gates,
    )
    assert r.recovered is recovers
    if recovers:
        assert r.pods["min-domains-0"].node in ("node-b1", "node-c1")
    else:
        assert r.pods["min-domains-0"].node is None
        assert SPREAD_REFUSED in r.verdict
        assert "minDomains 3" in r.verdict


@pytest.mark.parametrize(("version", "recovers"), [("1.26", True), ("1.34", False)])
def test_zone_min_domains_on_zone_loss_with_the_zone_deleted(version: str, recovers: bool) -> None:
    # Zone spread maxSkew 1, minDomains 3, one replica per zone of 3 zones x 2 nodes. The lost
    # zone's Nodes are deleted at 120 s: two zones remain, one replica each. With minDomains
    # honoured (1.27+) the global minimum is 0 and no node of zone-b or zone-c admits the
    # replacement (1 + 1 - 0 > 1); before, the minimum is 1 and it joins another zone.
    profile = ClusterProfile(zone_loss_nodes_deleted_after_s=120.0)
    r = simulate(_set("zone-min-domains"), "zone-loss", kube_version=version, profile=profile)
    assert r.replicas_on_failed_nodes == 1
    assert r.recovered is recovers
    node = r.pods["zone-min-domains-0"].node
    assert (node is not None and not node.startswith("node-a")) if recovers else node is None


@pytest.mark.parametrize(
    ("policy", "gates", "recovers"),
    [
        ("Honor", None, True),
        ("Honor", {"NodeInclusionPolicyInPodTopologySpread": False}, False),
        ("Ignore", None, False),
    ],
)
def test_node_taints_policy_honor_leaves_the_tainted_lost_node_out(
    policy: str, gates: dict[str, bool] | None, recovers: bool
) -> None:
    # Hostname spread maxSkew 1 on 3 nodes, one replica each. node-loss-out-of-service: the
    # operator's out-of-service taint at 600 s lets PodGC remove taints-honoured-0, which is
    # recreated. node-a1 has untolerated NoSchedule / NoExecute taints (unreachable,
    # out-of-service). Honor (1.34, gate on): node-a1 is no domain, the minimum of node-b1 and
    # node-c1 is 1, 1 + 1 - 1 = 1 fits. Ignore (the default) or the gate off: node-a1 counts
    # with 0 pods, the minimum is 0 and node-b1 / node-c1 refuse it; node-a1 refuses the taint.
    sts = _set("taints-honoured")
    if policy == "Ignore":
        sts = _without(sts, "nodeTaintsPolicy")
    r = simulate(
        sts,
        "node-loss-out-of-service",
        kube_version="1.34",
        profile=THREE_NODES,
        feature_gates=gates,
    )
    assert r.recovered is recovers
    node = r.pods["taints-honoured-0"].node
    if recovers:
        assert node in ("node-b1", "node-c1")
    else:
        assert node is None
        assert SPREAD_REFUSED in r.verdict


@pytest.mark.parametrize(("policy", "recovers"), [("Ignore", False), ("Honor", True)])
def test_node_affinity_policy_ignore_counts_nodes_the_pod_cannot_use(
    policy: str, recovers: bool
) -> None:
    # nodeSelector pool=db: three db nodes (one per zone) and three others. node-deleted
    # deletes the first db node. Ignore: the three other nodes are domains with 0 pods, so the
    # minimum stays 0 and the two db nodes with a replica each refuse the replacement (the
    # others fail NodeAffinity). Honor (the default): domains are the db nodes, minimum 1.
    db = tuple(NodeSpec(f"db-{z}", f"zone-{z}", (("pool", "db"),)) for z in "abc")
    other = tuple(NodeSpec(f"app-{z}", f"zone-{z}") for z in "abc")
    profile = ClusterProfile(nodes=db + other, placeholder_names=False, shape_stated=True)
    sts = _set("affinity-ignored")
    if policy == "Honor":
        sts = _without(sts, "nodeAffinityPolicy")
    r = simulate(sts, "node-deleted", kube_version="1.34", profile=profile)
    assert r.failed_nodes == ["db-a"]
    assert r.recovered is recovers
    node = r.pods["affinity-ignored-0"].node
    assert node in ("db-b", "db-c") if recovers else node is None


def test_rack_anti_affinity_on_the_assumed_cluster_is_named_not_simulated() -> None:
    # The assumed nodes carry only hostname and zone labels: the rack term says nothing about
    # them, so it is left out and the verdict and placement name it.
    r = simulate(_set("rack-anti-affinity"), "node-loss", kube_version="1.34")
    said = "not simulated: required anti-affinity on topology.rook.io/rack"
    assert said in r.verdict and said in r.placement
    assert r.to_dict()["placement_basis"]["not_simulated"] == [
        "required anti-affinity on topology.rook.io/rack"
    ]
    assert r.cluster_shape is not None and r.cluster_shape.source == "assumed"


RACKS = ClusterProfile(
    nodes=tuple(
        NodeSpec(f"worker-{rack}-{i}", "dc1", (("topology.rook.io/rack", rack),))
        for rack in ("r1", "r2", "r3")
        for i in (1, 2)
    ),
    placeholder_names=False,
    shape_stated=True,
)


def test_rack_anti_affinity_on_rack_labelled_nodes_keeps_one_replica_per_rack() -> None:
    # Six nodes, two per rack, in one zone. Required anti-affinity on the rack label: one
    # replica per rack, so a node loss takes one, forced; after the out-of-service taint the
    # replacement goes to the other node of the lost node's rack (the only rack with none).
    r = simulate(
        _set("rack-anti-affinity"), "node-loss-out-of-service", kube_version="1.34", profile=RACKS
    )
    assert r.replicas_on_failed_nodes == 1
    basis = r.to_dict()["placement_basis"]
    assert basis["node"]["basis"] == "forced by the constraints"
    assert "required anti-affinity allows one pod per topology.rook.io/rack" in basis["limits"]
    assert r.failed_nodes == ["worker-r1-1"]
    assert r.pods["rack-anti-affinity-0"].node == "worker-r1-2"
    assert r.cluster_shape is not None and r.cluster_shape.source == "profile"
    assert r.cluster_shape.described == "the profile's nodes (1 zone × 6 nodes)"


def test_a_node_without_the_spread_key_is_refused_for_the_missing_label() -> None:
    # filtering.go#Filter: a node without the constraint's topology label is
    # UnschedulableAndUnresolvable (ErrReasonNodeLabelNotMatch); labelled nodes are judged by
    # skew: r1 holds one replica, r2 none, minimum 0, so r1 refuses (1 + 1 - 0 > 1).
    wl = parse_statefulset(_set("rack-spread"))
    rack = "topology.rook.io/rack"
    nodes = [
        Node("n1", "dc1", labels={rack: "r1"}),
        Node("n2", "dc1", labels={rack: "r2"}),
        Node("n3", "dc1", labels={}),
    ]
    ctx = FilterContext(wl, nodes, [OtherPod("n1")])
    assert pod_topology_spread.filter(ctx, nodes[2]) == pod_topology_spread.REASON_LABEL
    assert pod_topology_spread.filter(ctx, nodes[0]) == pod_topology_spread.REASON
    assert pod_topology_spread.filter(ctx, nodes[1]) is None


def test_pools_of_identical_nodes_are_folded_and_counted_in_scheduler_messages() -> None:
    # The affinity-ignored set (nodeAffinityPolicy Ignore) on 3 db nodes and 90 others, 30 a
    # zone. The 30 of a zone differ only by name: 5 of them are simulated (3 replicas + 2) and
    # an empty one stands for the other 25 in the scheduler's counts. After db-a
    # is deleted the replacement fits nowhere: "0/92 nodes are available", the 90 others by
    # the nodeSelector and db-b, db-c by the spread (the 87 app nodes still count as domains
    # with 0 pods, so the minimum is 0), as with every node simulated.
    db = tuple(NodeSpec(f"db-{z}", f"zone-{z}", (("pool", "db"),)) for z in "abc")
    other = tuple(NodeSpec(f"app-{z}{i}", f"zone-{z}") for z in "abc" for i in range(30))
    profile = ClusterProfile(nodes=db + other, placeholder_names=False, shape_stated=True)
    r = simulate(_set("affinity-ignored"), "node-deleted", kube_version="1.34", profile=profile)
    assert not r.recovered
    pending = [e.event for e in r.timeline if e.kind == "pod-pending"]
    assert pending[-1].endswith(
        "0/92 nodes are available: 90 node(s) didn't match Pod's node affinity/selector, "
        "2 node(s) didn't match pod topology spread constraints"
    )
    assert r.cluster_shape is not None and r.cluster_shape.text == "3 zones × 31 nodes"
    assert "75 of the profile's nodes are not simulated one by one" in " ".join(r.assumptions)


def test_a_verdict_over_folded_nodes_counts_them_and_names_a_few() -> None:
    # zone-min-domains (zone spread, minDomains 3) on 3 zones of 30 identical nodes, 5 of each
    # simulated (3 replicas + 2). The lost zone's Nodes are deleted at 120 s; the replacement
    # fits none of the 60 left (two domains < minDomains 3: minimum 0). The verdict names six
    # of them and counts the rest, and the 30 deleted ones (5 simulated, 25 folded).
    nodes = tuple(NodeSpec(f"n-{z}{i}", f"zone-{z}") for z in "abc" for i in range(30))
    profile = ClusterProfile(
        nodes=nodes,
        placeholder_names=False,
        shape_stated=True,
        zone_loss_nodes_deleted_after_s=120.0,
    )
    r = simulate(_set("zone-min-domains"), "zone-loss", kube_version="1.34", profile=profile)
    assert not r.recovered
    assert "0/60 nodes are available: 60 node(s) didn't match pod topology spread" in r.verdict
    assert "n-b0, n-b1, n-b2, n-b3, n-b4, n-c0 and 54 more: a zone spread" in r.verdict
    assert "n-a0, n-a1, n-a2, n-a3, n-a4 and 25 more are down" in r.verdict
    assert "(simulated cluster: 2 zones × 30 nodes)" in r.verdict


def test_terms_the_model_does_not_implement_are_named_in_the_verdict() -> None:
    # matchLabelKeys merges the pod's controller-revision-hash into the spread's selector
    # (common.go#filterTopologySpreadConstraints), and an anti-affinity selecting other
    # workloads' pods needs pods the simulation does not hold: both are named, not dropped.
    r = simulate(_set("label-keys"), "node-loss", kube_version="1.34")
    assert r.to_dict()["placement_basis"]["not_simulated"] == [
        "1 required (anti-)affinity term(s) about other workloads' pods",
        "matchLabelKeys (controller-revision-hash) of a DoNotSchedule topology spread",
    ]
    assert "not simulated: 1 required (anti-)affinity term(s)" in r.verdict


@pytest.mark.parametrize("order", ["abc", "bac", "cab"])
def test_the_worst_zone_of_an_uneven_profile_is_found_whatever_the_order(order: str) -> None:
    # Zones of 1, 3 and 1 nodes; one replica per node (hostname anti-affinity), nothing on
    # zones. The worst placement the filters allow puts all 3 in zone-b, whose loss takes all;
    # the pools' order in the profile must not hide it (it did when only the first node of
    # the list was tried as the node of the lowest ordinal).
    sizes = {"a": 1, "b": 3, "c": 1}
    nodes = tuple(NodeSpec(f"n-{z}{i}", f"zone-{z}") for z in order for i in range(1, sizes[z] + 1))
    profile = ClusterProfile(nodes=nodes, placeholder_names=False, shape_stated=True)
    zone = simulate(_set("one-per-node"), "zone-loss", kube_version="1.34", profile=profile)
    assert zone.replicas_on_failed_nodes == 3
    assert sorted(zone.failed_nodes) == ["n-b1", "n-b2", "n-b3"]
    node = simulate(_set("one-per-node"), "node-loss", kube_version="1.34", profile=profile)
    assert node.replicas_on_failed_nodes == 1


def test_a_node_the_manifest_names_is_never_folded_away() -> None:
    # 40 identical nodes a zone; 3 of each are simulated for a 1-replica set, but n-c39, which
    # the required node affinity names (matchFields metadata.name), is kept and the pod runs
    # there, as on the cluster.
    nodes = tuple(NodeSpec(f"n-{z}{i}", f"zone-{z}") for z in "abc" for i in range(40))
    profile = ClusterProfile(nodes=nodes, placeholder_names=False, shape_stated=True)
    r = simulate(_set("pinned-by-name"), "node-loss", kube_version="1.34", profile=profile)
    assert r.failed_nodes == ["n-c39"]
    assert r.replicas_on_failed_nodes == 1


def test_on_a_profile_a_rack_term_no_node_carries_limits_nothing_and_says_so() -> None:
    # The profile lists the cluster's nodes and none has the rack label: the term stays (as on
    # the cluster) and admits every node (interpodaffinity/filtering.go: a node without the
    # topology label is not constrained by anti-affinity), which the placement says.
    nodes = tuple(NodeSpec(f"n-{z}{i}", f"zone-{z}") for z in "abc" for i in range(2))
    profile = ClusterProfile(nodes=nodes, placeholder_names=False, shape_stated=True)
    r = simulate(_set("rack-anti-affinity"), "node-loss", kube_version="1.34", profile=profile)
    assert r.replicas_on_failed_nodes == 3
    said = "required anti-affinity on topology.rook.io/rack limits nothing (no node has it)"
    assert said in r.placement
