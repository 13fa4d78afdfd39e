"""Where pods can run: the scheduler filters (embedded_sim/scheduler/), the simulated nodes
(embedded_sim/nodes.py) and what the results say about their placement."""

from __future__ import annotations

from typing import Any

import pytest
from ssrisk.embedded_sim import ClusterProfile, default_nodes, simulate
from ssrisk.embedded_sim.profile import Allocatable, NodeTaint

from .simdata import load


def _set(name: str) -> dict[str, Any]:
    return next(
        s for s in load("placement.yaml").of("StatefulSet") if s["metadata"]["name"] == name
    )


def test_node_selector_on_a_hostname_is_never_back_elsewhere() -> None:
    # nodeSelector kubernetes.io/hostname: db-host-1 (NodeAffinity filter): the replacement may
    # only run on db-host-1, which is lost; the out-of-service taint frees the pod object but
    # not the constraint. (Before, the pod came back on another node at 10m13s.)
    r = simulate(_set("pinned-host"), "node-loss-out-of-service", kube_version="1.34")
    assert r.to_dict()["pods"]["pinned-host-0"]["node"] is None
    assert not r.recovered and r.manual_action_required
    assert "only matches db-host-1, and db-host-1 is down" in r.verdict
    assert r.first("pod-scheduled") is None
    # the placeholder node takes the manifest's hostname, and the result says so
    assert "db-host-1 in zone-a" in " ".join(r.assumptions)


def test_zone_restricted_set_runs_in_one_zone_and_zone_loss_takes_all() -> None:
    # Required node affinity zone In [us-east-1a]: only that zone's nodes pass NodeAffinity.
    # Required anti-affinity needs 3 nodes there; the assumed shape (3 zones x 2 nodes) grows to
    # 3 nodes per zone so the steady state holds all 3; a zone loss then takes 3 of 3, forced.
    r = simulate(_set("zone-restricted"), "zone-loss", kube_version="1.34")
    d = r.to_dict()
    assert d["cluster_shape"] == {
        "zones": 3,
        "nodes_per_zone": 3,
        "text": "3 zones × 3 nodes",
        "source": "assumed",
    }
    assert d["replicas_on_failed_nodes"] == 3 and r.max_unavailable == 3
    assert d["placement_basis"]["zone"] == {
        "worst_case": 3,
        "spread": 3,
        "basis": "forced by the constraints",
    }
    assert "(us-east-1a)" in r.placement and "zone-b" not in r.placement
    assert any("grown to 3 zones × 3 nodes" in a for a in r.assumptions)


def test_host_port_allows_one_pod_per_node() -> None:
    # NodePorts: every pod asks for hostPort 4222, so one pod per node: a node loss takes one
    # replica whatever the placement (forced); the worst zone loss takes 2 (the two nodes of
    # zone-a), where spreading would put 1.
    r = simulate(_set("nats"), "node-loss", kube_version="1.34")
    assert r.max_unavailable == 1
    facts = r.to_dict()["placement_basis"]
    assert facts["node"]["basis"] == "forced by the constraints"
    assert "hostPort 4222/TCP allows one pod per node" in facts["limits"]
    assert "1 of 3 on the node that fails, forced by the constraints" in r.verdict
    z = simulate(_set("nats"), "zone-loss", kube_version="1.34")
    assert z.max_unavailable == 2
    assert "worst case the constraints allow; the scheduler's spreading would put 1" in z.verdict


def test_required_pod_affinity_puts_every_replica_on_one_node() -> None:
    # InterPodAffinity, required podAffinity on the hostname selecting the set's own pods: the
    # first pod goes anywhere, every other one to its node.
    r = simulate(_set("colocated"), "node-loss", kube_version="1.34")
    assert r.max_unavailable == 3
    assert r.to_dict()["placement_basis"]["node"]["basis"] == "forced by the constraints"


def test_resource_requests_limit_pods_per_node() -> None:
    # NodeResourcesFit: limits of 3 CPU default the requests; 4 CPU allocatable fits one pod per
    # node. With 8 CPU two fit, so the worst node loss takes 2.
    r = simulate(_set("big"), "node-loss", kube_version="1.34")
    assert r.max_unavailable == 1
    prof = ClusterProfile(node_allocatable=Allocatable(cpu_m=8000))
    r8 = simulate(_set("big"), "node-loss", kube_version="1.34", profile=prof)
    assert r8.max_unavailable == 2
    assert "worst case" in r8.verdict


def test_unknown_node_labels_are_assumed_unless_the_profile_states_them() -> None:
    sts = _set("ssd-pool")
    r = simulate(sts, "node-loss", kube_version="1.34")
    assert r.max_unavailable == 2
    assert any(
        "assumed to carry the labels the pods select (disktype=ssd)" in a for a in r.assumptions
    )
    # the profile says the pool is hdd: NodeAffinity rejects every node, nothing runs
    prof = ClusterProfile(node_labels=(("disktype", "hdd"),))
    r = simulate(sts, "node-loss", kube_version="1.34", profile=prof)
    assert r.verdict.startswith("node-loss: no replica fits a node of the simulated cluster")
    assert "nodeSelector / node affinity only matches no node" in r.verdict


@pytest.mark.parametrize(
    ("taint", "fits"),
    [
        (NodeTaint("dedicated", "NoSchedule", "db"), True),  # tolerated by the set
        (NodeTaint("dedicated", "NoSchedule", "web"), False),  # another value: not tolerated
        (NodeTaint("dedicated", "PreferNoSchedule", "web"), True),  # only scores
    ],
)
def test_node_pool_taints(taint: NodeTaint, fits: bool) -> None:
    # TaintToleration: NoSchedule / NoExecute taints of the node must be tolerated.
    prof = ClusterProfile(node_taints=(taint,))
    r = simulate(_set("ssd-pool"), "rolling-update", kube_version="1.34", profile=prof)
    assert r.recovered is fits
    if not fits:
        pending = r.first("pod-pending", "ssd-pool-0")
        assert pending is not None and "untolerated taint {dedicated: web}" in pending.event


def test_local_volume_verdict_names_the_node() -> None:
    i = load("local-pv.yaml")
    r = simulate(i.sts, "node-loss-out-of-service", kube_version="1.34", **i.kwargs())
    assert not r.recovered
    assert "its local volume (claim data-kv-0) is on node-a1, and node-a1 is down" in r.verdict
    assert "simulated cluster: 3 zones × 2 nodes" in r.verdict


def test_not_back_because_no_node_is_left_in_the_volume_zone() -> None:
    # Worst placement: quorum-0 and quorum-1 on the two nodes of zone-a. node-a1 is lost; after
    # the out-of-service taint quorum-0 is recreated, but its zonal volume keeps it in zone-a,
    # node-a2 holds quorum-1 (required anti-affinity) and node-a1 is down: Pending for good.
    # The scheduler's spreading would have left node-a2 free, so this is the worst case.
    r = simulate(_set("quorum"), "node-loss-out-of-service", kube_version="1.34")
    assert not r.recovered
    because = r.to_dict()["not_back_because"]
    assert because == (
        "quorum-0 stays Pending: its zonal volume (claim data-quorum-0) is in zone-a; node-a2: "
        "required anti-affinity allows one pod per hostname, and node-a1 is down (simulated "
        "cluster: 3 zones × 2 nodes); with the worst placement the constraints allow"
    )
    assert because.split(";")[0] in r.verdict
    # with 3 nodes per zone the worst case puts all three replicas in zone-a, with 4 a node
    # is left for quorum-0: back after the taint
    big = ClusterProfile(nodes=default_nodes(3, 4), shape_stated=True)
    r3 = simulate(_set("quorum"), "node-loss-out-of-service", kube_version="1.34", profile=big)
    assert r3.recovered


def test_hostpath_volume_is_not_pinned_and_its_data_stays_behind() -> None:
    # kubernetes.io/host-path PVs have no node affinity and no attacher: after the out-of-service
    # taint the replacement starts on another node at once (no Multi-Attach wait), with an
    # empty directory; the verdict says so.
    i = load("placement.yaml")
    r = simulate(_set("hostpath-db"), "node-loss-out-of-service", kube_version="1.34", **i.kwargs())
    assert r.recovered
    assert r.events("volume-multi-attach") == [] and r.events("volume-detached") == []
    assert r.to_dict()["pods"]["hostpath-db-0"]["node"] != "node-a1"
    assert "hostpath-db-0 came back on another node with an empty hostPath directory" in r.verdict


def test_assumed_shape_grows_to_the_fewest_nodes_that_hold_every_replica() -> None:
    # 7 replicas with a required hostname anti-affinity need 7 nodes: 3 zones × 3 nodes is the
    # fewest whole-nodes-per-zone shape; a stated shape is kept (one replica stays Pending).
    r = simulate(_set("wide"), "node-loss", kube_version="1.34")
    assert r.to_dict()["cluster_shape"]["text"] == "3 zones × 3 nodes"
    assert any("grown to 3 zones × 3 nodes" in a for a in r.assumptions)
    stated = ClusterProfile(shape_stated=True)
    s = simulate(_set("wide"), "node-loss", kube_version="1.34", profile=stated)
    assert s.to_dict()["placement_basis"]["unplaced"] == [6]
    assert "wide-6 fit(s) no node of the simulated cluster (3 zones × 2 nodes)" in s.verdict


def test_an_empty_label_selector_in_an_anti_affinity_term_selects_every_pod() -> None:
    # metav1.LabelSelectorAsSelector: {} is labels.Everything(), so the term keeps the set's own
    # pods apart, as the rules read it (a null selector would select none); before, the model
    # read {} as selecting nothing and put all three on one node
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "kv"},
        "spec": {
            "replicas": 3,
            "serviceName": "kv",
            "selector": {"matchLabels": {"app": "kv"}},
            "template": {
                "metadata": {"labels": {"app": "kv"}},
                "spec": {
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {"labelSelector": {}, "topologyKey": "kubernetes.io/hostname"}
                            ]
                        }
                    },
                    "containers": [{"name": "kv", "image": "example.org/kv:1"}],
                },
            },
        },
    }
    r = simulate(sts, "node-loss", kube_version="1.34")
    assert r.max_unavailable == 1
    nodes = {p["node"] for p in r.to_dict()["pods"].values()}
    assert len(nodes) == 3


def test_a_drained_node_is_cordoned_not_down() -> None:
    # One pod per hostname and a node per replica: the pod the drain evicts fits no other
    # node, and the drained node is up but cordoned (spec.unschedulable). The verdict said
    # "node-a1 is down" and "on the node that fails" of it.
    r = simulate(_set("one-per-node"), "node-drain", kube_version="1.34")
    assert not r.recovered
    assert "is cordoned" in r.verdict and "is down" not in r.verdict, r.verdict
    assert "1 of 6 on the drained node, forced by the constraints" in r.verdict, r.verdict
    lost = simulate(_set("one-per-node"), "node-loss", kube_version="1.34")
    assert "1 of 6 on the node that fails, forced by the constraints" in lost.verdict
    zone = simulate(_set("one-per-node"), "zone-loss", kube_version="1.34")
    assert "2 of 6 in the zone that fails, forced by the constraints" in zone.verdict, zone.verdict
