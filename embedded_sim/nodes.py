"""The simulated cluster's nodes: names, zones, labels, taints and allocatable resources.

Each node gets the well-known labels the kubelet and the cloud provider set
(staging/src/k8s.io/api/core/v1/well_known_labels.go: kubernetes.io/hostname,
topology.kubernetes.io/zone and the deprecated failure-domain.beta.kubernetes.io/zone), then
the profile's `node_labels` and the NodeSpec's own labels; its taints are the profile's
`node_taints` plus the NodeSpec's; its allocatable is the NodeSpec's or the profile's
`node_allocatable`.

The default cluster (zones × nodes-per-zone) is a shape, not a real inventory: its names are
placeholders (`ClusterProfile.placeholder_names`). When the manifest selects hostnames or zones
by name (nodeSelector, required node affinity, spec.nodeName), those names are given to the
simulated nodes and zones, in order, so that a set restricted to one zone is simulated in one
zone and a set pinned to a host is simulated on one host. A label key that no node carries is
assumed to satisfy the manifest's own node selection (the node pool it asks for exists with the
profile's shape); the result lists these assumptions, and stating `node_labels` in the profile
makes the check strict.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import msgspec

from .profile import Allocatable, ClusterProfile, NodeTaint
from .workload import HOSTNAME_KEY, ZONE_KEYS, NodeSelectorRequirement, Workload


class BuiltNode(msgspec.Struct, frozen=True):
    """A node as the simulation creates it (cluster.Node is built from this)."""

    name: str
    zone: str
    labels: Mapping[str, str]
    taints: tuple[NodeTaint, ...]
    allocatable: Allocatable


def requirement_matches(req: NodeSelectorRequirement, labels: Mapping[str, str], name: str) -> bool:
    """k8s.io/component-helpers/scheduling/corev1/nodeaffinity#nodeSelectorRequirementsAsSelector
    semantics for one requirement (matchFields: metadata.name only)."""
    if req.field:
        if req.key != "metadata.name":
            return False
        present, value = True, name
    else:
        present, value = req.key in labels, labels.get(req.key, "")
    op = req.operator
    if op == "In":
        return present and value in req.values
    if op == "NotIn":
        return not present or value not in req.values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt") and present and len(req.values) == 1:
        try:
            have, want = int(value), int(req.values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def node_selection_matches(wl: Workload, labels: Mapping[str, str], name: str) -> bool:
    """NodeAffinity filter: spec.nodeSelector (every pair) and the required node affinity
    (nodeSelectorTerms ORed, requirements of a term ANDed; an empty term matches nothing).
    pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go#Filter."""
    if any(labels.get(k) != v for k, v in wl.node_selector.items()):
        return False
    if not wl.node_affinity_terms:
        return True
    return any(
        term and all(requirement_matches(r, labels, name) for r in term)
        for term in wl.node_affinity_terms
    )


def pod_may_use(wl: Workload, node: BuiltNode) -> bool:
    """Whether the set's pods may run on `node` at all: its tolerations tolerate every
    NoSchedule and NoExecute taint (TaintToleration) and its node selection matches
    (NodeAffinity); resources and the other pods are not looked at."""
    tolerated = all(
        any(tol.tolerates(t.key, t.value, t.effect) for tol in wl.tolerations)
        for t in node.taints
        if t.effect in ("NoSchedule", "NoExecute")
    )
    return tolerated and node_selection_matches(wl, node.labels, node.name)


def _wanted(wl: Workload, keys: tuple[str, ...], fields: bool) -> list[str]:
    """Names the manifest selects for `keys` (In values, nodeSelector values), in order."""
    out: list[str] = []
    for k in keys:
        if k in wl.node_selector:
            out.append(wl.node_selector[k])
    for term in wl.node_affinity_terms[:1]:
        for r in term:
            if r.operator == "In" and (
                (r.field and fields and r.key == "metadata.name") or (not r.field and r.key in keys)
            ):
                out.extend(r.values)
    return list(dict.fromkeys(out))


def _satisfying_value(req: NodeSelectorRequirement) -> str | None:
    """A label value that satisfies `req` (None: leave the label absent)."""
    if req.operator == "In" and req.values:
        return req.values[0]
    if req.operator == "Exists":
        return "true"
    if req.operator in ("Gt", "Lt") and len(req.values) == 1:
        try:
            n = int(req.values[0])
        except ValueError:
            return None
        return str(n + 1 if req.operator == "Gt" else n - 1)
    return None


def build_nodes(profile: ClusterProfile, wl: Workload) -> tuple[list[BuiltNode], list[str]]:
    """The nodes of the simulated cluster for `wl`, and the assumptions made about them."""
    notes: list[str] = []
    specs = list(profile.nodes)
    zone_names: dict[str, str] = {}
    host_names: dict[str, str] = {}
    if profile.placeholder_names:
        zones = list(dict.fromkeys(s.zone for s in specs))
        wanted_zones = _wanted(wl, ZONE_KEYS, fields=False)
        zone_names = dict(zip(zones, wanted_zones, strict=False))
        if zone_names:
            notes.append(
                "the simulated zones are named after the zones the manifest selects ("
                + ", ".join(f"{z} = {n}" for z, n in zone_names.items())
                + ")"
            )
        wanted_hosts = _wanted(wl, (HOSTNAME_KEY,), fields=True)
        if wl.node_name is not None and wl.node_name not in wanted_hosts:
            wanted_hosts.insert(0, wl.node_name)
        host_names = {s.name: h for s, h in zip(specs, wanted_hosts, strict=False)}
        if host_names:
            notes.append(
                "the simulated nodes are named after the hostnames the manifest selects ("
                + ", ".join(
                    f"{h} in {zone_names.get(s.zone, s.zone)}"
                    for s in specs
                    if (h := host_names.get(s.name))
                )
                + "; which zones they are in is not in the manifest)"
            )
    base = dict(profile.node_labels)
    built: list[BuiltNode] = []
    for s in specs:
        name = host_names.get(s.name, s.name)
        zone = zone_names.get(s.zone, s.zone)
        # a node of no zone (zone "") carries no zone label: the node lifecycle controller
        # files it in zone "" (nodetopology.GetZoneKey)
        zoned = {k: zone for k in ZONE_KEYS} if zone else {}
        labels = {HOSTNAME_KEY: name, **zoned, **base, **dict(s.labels)}
        built.append(
            BuiltNode(
                name,
                zone,
                labels,
                (*profile.node_taints, *s.taints),
                s.allocatable or profile.node_allocatable,
            )
        )
    stated = {k for b in built for k in b.labels}
    assumed: dict[str, str] = {}
    for k, v in wl.node_selector.items():
        if k not in stated:
            assumed[k] = v
    for r in wl.node_affinity_terms[0] if wl.node_affinity_terms else ():
        if not r.field and r.key not in stated and r.key not in assumed:
            value = _satisfying_value(r)
            if value is not None:
                assumed[r.key] = value
    if assumed:
        built = [
            BuiltNode(b.name, b.zone, {**b.labels, **assumed}, b.taints, b.allocatable)
            for b in built
        ]
        notes.append(
            "every node is assumed to carry the labels the pods select ("
            + ", ".join(f"{k}={v}" for k, v in assumed.items())
            + "); give the cluster's node-labels in the profile to check them"
        )
    return built, notes


class Fold(msgspec.Struct, frozen=True):
    """Nodes of one pool that only differ by name, simulated as the first few of them:
    `kept` are simulated, `dropped` more like them are not (:func:`fold_nodes`)."""

    zone: str
    kept: tuple[str, ...]
    dropped: int


def named_nodes(wl: Workload) -> set[str]:
    """Node names the set's pods select by name: spec.nodeName, a kubernetes.io/hostname
    nodeSelector, and the values of hostname or metadata.name requirements of any required
    node affinity term (names are the one thing that tells nodes of a pool apart)."""
    out = {wl.node_selector[HOSTNAME_KEY]} if HOSTNAME_KEY in wl.node_selector else set()
    if wl.node_name:
        out.add(wl.node_name)
    for term in wl.node_affinity_terms:
        for r in term:
            if (r.field and r.key == "metadata.name") or (not r.field and r.key == HOSTNAME_KEY):
                out.update(r.values)
    return out


def fold_nodes(
    built: list[BuiltNode], keep: int, named: Collection[str] = ()
) -> tuple[list[BuiltNode], list[Fold]]:
    """``built`` with each group of nodes that differ only by name (same zone, labels but the
    hostname, taints and allocatable) cut to its first ``keep``, and the groups that were cut;
    a node in ``named`` (:func:`named_nodes`: the manifest selects it by name) is always kept,
    besides the ``keep``.

    Such nodes are interchangeable to every filter and controller the simulator runs: a filter
    reads a node's labels, taints, allocatable and the set's pods on it. The set's pods occupy
    at most one node each, and a scenario adds at most one occupied node to a group (the
    failed or drained node whose pods are still terminating while their replacements run:
    a lost zone is a group of its own), so with ``keep`` at least replicas + 2 an empty node of
    the group is always simulated and stands for the others; ``keep`` at least the largest
    minDomains keeps every count of domains that a spread compares with it. The node
    lifecycle controller's zone states do not change either: one lost node never makes a zone
    partially disrupted (more than 2 NotReady nodes are needed:
    node_lifecycle_controller.go#ComputeZoneState) and a lost zone is fully disrupted however
    many nodes it has. The scheduler counts the dropped nodes in its messages
    (Simulation.folds), so "0/N nodes are available" keeps the cluster's N."""
    groups: dict[tuple[object, ...], list[BuiltNode]] = {}
    for b in built:
        labels = tuple(sorted((k, v) for k, v in b.labels.items() if k != HOSTNAME_KEY))
        groups.setdefault((b.zone, labels, b.taints, b.allocatable), []).append(b)
    kept_names: set[str] = set()
    folds: list[Fold] = []
    for members in groups.values():
        others = [b for b in members if b.name not in named]
        kept = [b for b in members if b.name in named] + others[:keep]
        kept_names.update(b.name for b in kept)
        if len(others) > keep:
            folds.append(Fold(members[0].zone, tuple(b.name for b in kept), len(others) - keep))
    return [b for b in built if b.name in kept_names], folds
