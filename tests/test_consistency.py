"""No two findings about the same StatefulSet contradict each other, nor the simulation.

Property-based (hypothesis, a fixed derandomized sample of manifests, a few seconds): each
generated StatefulSet, with the objects around it, is written to a file and checked with every
built-in rule; then

* storage: a claim whose volumes are node-local or network storage (never attached) gets no
  rwo-volume-reattach finding, and a node-local one gets node-pinned-storage;
* pinning: a set pinned to one host (node-pinned-storage) gets neither rwo-volume-reattach nor
  replicas-share-failure-domain, and no message of a pinned set (host, or node-local volumes)
  says its pods are back after a node loss;
* placement: when the simulation finds one replica per node forced by the manifest (required
  hostname anti-affinity, hostPort, a hostname spread of maxSkew 1), no message says a node
  failure takes two or more; the "node loss took K" and "zone loss took K" numbers are the
  simulation's.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from failure_domain import contradictions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssrisk.embedded_sim import simulate
from ssrisk.embedded_sim.profile import ClusterProfile
from ssrisk.embedded_sim.storage import claim_class_name, resolve_claim

from ssrisk.config import build_settings
from ssrisk.engine import check
from ssrisk.plugins import collect_rules, plugin_manager

RULES = collect_rules(plugin_manager())
SETTINGS = build_settings(None, kube_version="1.34")
HOST = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
LOCAL_CLASS = {
    "apiVersion": "storage.k8s.io/v1",
    "kind": "StorageClass",
    "metadata": {"name": "local-disks"},
    "provisioner": "kubernetes.io/no-provisioner",
    "volumeBindingMode": "WaitForFirstConsumer",
}
CLASSES = [None, "gp3", "local-path", "openebs-hostpath", "hostpath", "local-disks", "nfs-client"]
BACK = re.compile(r"\bback (after|at)\b")
TAKES = re.compile(r"(?:one node failure|node loss) (?:can take up to|takes|took) (\d+) of")


@st.composite
def manifests(draw: st.DrawFn) -> list[dict[str, Any]]:
    labels = {"app": "db"}
    container: dict[str, Any] = {"name": "db", "image": "example.org/db:1.0"}
    if draw(st.booleans()):
        container["ports"] = [{"containerPort": 4222, "hostPort": 4222}]
    if draw(st.booleans()):
        container["resources"] = {"requests": {"cpu": draw(st.sampled_from(["500m", "3"]))}}
    pod: dict[str, Any] = {"containers": [container]}
    pin = draw(st.sampled_from(["none", "hostname-selector", "node-name", "zone-affinity"]))
    if pin == "hostname-selector":
        pod["nodeSelector"] = {HOST: "db-host-1"}
    elif pin == "node-name":
        pod["nodeName"] = "db-host-1"
    elif pin == "zone-affinity":
        pod["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["eu-1a"]}]}
                    ]
                }
            }
        }
    placement = draw(st.sampled_from(["none", "anti-host", "anti-zone", "affinity", "spread"]))
    term = {"topologyKey": HOST, "labelSelector": {"matchLabels": dict(labels)}}
    if placement in ("anti-host", "anti-zone"):
        key = HOST if placement == "anti-host" else ZONE
        pod.setdefault("affinity", {})["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [{**term, "topologyKey": key}]
        }
    elif placement == "affinity":
        pod.setdefault("affinity", {})["podAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [term]
        }
    elif placement == "spread":
        pod["topologySpreadConstraints"] = [
            {
                "maxSkew": draw(st.integers(1, 2)),
                "topologyKey": HOST,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": dict(labels)},
            }
        ]
    if draw(st.booleans()):
        pod["tolerations"] = [draw(st.sampled_from([{"operator": "Exists"}, {
            "key": "node.kubernetes.io/unreachable", "operator": "Exists",
            "effect": "NoExecute", "tolerationSeconds": 30,
        }]))]  # fmt: skip
    spec: dict[str, Any] = {
        "serviceName": "db",
        "replicas": draw(st.integers(1, 4)),
        "selector": {"matchLabels": dict(labels)},
        "template": {"metadata": {"labels": dict(labels)}, "spec": pod},
    }
    if draw(st.booleans()):
        spec["podManagementPolicy"] = "Parallel"
    docs: list[dict[str, Any]] = []
    if draw(st.booleans()):
        cls = draw(st.sampled_from(CLASSES))
        template: dict[str, Any] = {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": [draw(st.sampled_from(["ReadWriteOnce", "ReadWriteMany"]))],
                "resources": {"requests": {"storage": "10Gi"}},
            },
        }
        if cls is not None and draw(st.booleans()):
            template["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": cls}
        elif cls is not None:
            template["spec"]["storageClassName"] = cls
        spec["volumeClaimTemplates"] = [template]
        if cls == "local-disks":
            docs.append(LOCAL_CLASS)
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"}}
    docs.append({**sts, "spec": spec})
    return docs


def _messages(findings: list[Any], rule: str | None = None) -> list[str]:
    return [f.message for f in findings if rule is None or f.rule == rule]


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(manifests())
def test_findings_about_one_statefulset_agree(docs: list[dict[str, Any]]) -> None:
    sts = docs[-1]
    classes = [d for d in docs if d["kind"] == "StorageClass"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "set.yaml"
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
        report = check([str(path)], RULES, SETTINGS)
    assert report.errors == []
    findings = report.findings
    rules = {f.rule for f in findings}
    pinned_msgs = _messages(findings, "node-pinned-storage")
    host_pinned = any("tied to node" in m for m in pinned_msgs)

    # storage
    for template in sts["spec"].get("volumeClaimTemplates", []):
        storage = resolve_claim(
            claim_class_name(template),
            tuple(template["spec"]["accessModes"]),
            "data",
            classes,
            [],
            ClusterProfile(),
        )
        if not storage.attachable:
            assert "rwo-volume-reattach" not in rules, (storage, findings)
        if storage.node_local:
            assert any("volume claim 'data'" in m for m in pinned_msgs), (storage, pinned_msgs)

    # pinning
    if host_pinned:
        assert not rules & {"rwo-volume-reattach", "replicas-share-failure-domain"}, findings
    if host_pinned or any("lives on one node" in m for m in pinned_msgs):
        assert not [m for m in _messages(findings) if BACK.search(m)], findings

    # placement
    node_loss = simulate(sts, "node-loss", kube_version="1.34", storage_classes=classes)
    zone_loss = simulate(sts, "zone-loss", kube_version="1.34", storage_classes=classes)
    facts = node_loss.to_dict()["placement_basis"]
    one_per_node = ("hostPort", "one pod per hostname", "hostname spread with maxSkew 1")
    by_manifest = any(w in limit for limit in facts["limits"] for w in one_per_node)
    if facts["node"]["worst_case"] == 1 and by_manifest:
        for m in _messages(findings):
            assert all(int(k) < 2 for k in TAKES.findall(m)), m
    for m in _messages(findings, "replicas-share-failure-domain"):
        assert contradictions(m) == [], m  # a worst case says what it needs
        node_k, zone_k = _simulated(m)
        if node_k is not None:
            assert node_k == node_loss.max_unavailable, (m, node_loss.verdict)
        if zone_k is not None:
            assert zone_k == zone_loss.max_unavailable, (m, zone_loss.verdict)


SIMULATED = re.compile(r"\(simulated(?: on [^:()]+)?: (\d+)(?: of \d+)?(?: and (\d+))?")


def _simulated(message: str) -> tuple[int | None, int | None]:
    """The simulated (node loss, zone loss) replica counts a replicas-share-failure-domain
    message quotes: "node loss took K of N" / "zone loss took K of N", or the short form
    "(simulated on <shape>: A and B)" (node, zone; "(simulated: A and B)" when the shape does
    not fit in the line) or "(...: K of N)" for the one loss named."""
    node = re.findall(r"node loss took (\d+) of", message)
    zone = re.findall(r"zone loss took (\d+) of", message)
    if node or zone:
        return (int(node[0]) if node else None), (int(zone[0]) if zone else None)
    s = SIMULATED.search(message)
    if s is None:
        return None, None
    if s.group(2) is not None:
        return int(s.group(1)), int(s.group(2))
    if "zone loss" in message and "node loss" not in message:
        return None, int(s.group(1))
    return int(s.group(1)), None
