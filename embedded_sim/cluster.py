"""Cluster state: nodes, pods, PVCs/PVs and volume attachments (plain data, no behaviour)."""

from __future__ import annotations

import re
from functools import lru_cache

import msgspec

from .profile import Allocatable

#: UID of the simulated StatefulSet (one set per simulation).
SET_UID = "uid-statefulset"

# stateful_set_utils.go#statefulPodRegex / #getParentNameAndOrdinal.
_STATEFUL_POD_RE = re.compile(r"(.*)-([0-9]+)$")


@lru_cache(maxsize=4096)
def parent_and_ordinal(name: str) -> tuple[str, int]:
    """stateful_set_utils.go#getParentNameAndOrdinal: ("", -1) when the name has no ordinal."""
    m = _STATEFUL_POD_RE.fullmatch(name)
    if m is None:
        return "", -1
    return m.group(1), int(m.group(2))


class OwnerRef(msgspec.Struct, frozen=True):
    """metav1.OwnerReference (apiVersion folded into kind)."""

    kind: str  # "StatefulSet", "Pod", "ConfigMap", ...
    name: str
    uid: str
    controller: bool = False


class Taint(msgspec.Struct):
    key: str
    effect: str
    value: str = ""
    added_s: float = 0.0


class Node(msgspec.Struct):
    name: str
    zone: str
    # Ground truth: is the kubelet running and able to reach the API server?
    alive: bool = True
    # Ready condition as stored in the API: "True", "False" (kubelet) or "Unknown" (NLC).
    ready: str = "True"
    taints: list[Taint] = msgspec.field(default_factory=list)
    unschedulable: bool = False
    deleted: bool = False
    shutting_down: bool = False
    lost_at_s: float | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    allocatable: Allocatable | None = None  # status.allocatable (None: unlimited)

    @property
    def zone_text(self) -> str:
        """The zone for messages: its name, or "no zone" for a node without a zone label."""
        return self.zone or "no zone"

    def has_taint(self, key: str, effect: str | None = None) -> bool:
        return any(t.key == key and (effect is None or t.effect == effect) for t in self.taints)

    def add_taint(self, t: Taint) -> bool:
        if self.has_taint(t.key, t.effect):
            return False
        self.taints.append(t)
        return True

    def remove_taint(self, key: str, effect: str) -> bool:
        before = len(self.taints)
        self.taints = [t for t in self.taints if not (t.key == key and t.effect == effect)]
        return len(self.taints) != before


class Pod(msgspec.Struct):
    name: str
    ordinal: int
    revision: str
    uid: int
    created_s: float
    node: str | None = None
    phase: str = "Pending"  # Pending, Running, Failed, Succeeded
    ready: bool = False
    ready_since_s: float | None = None
    deletion_s: float | None = None
    deletion_grace_s: float | None = None
    containers_running: bool = False
    broken: bool = False
    claims: tuple[str, ...] = ()
    # metadata.ownerReferences controller: SET_UID (owned by the set), None (orphan) or the
    # UID of another controller.
    controller_uid: str | None = SET_UID
    labels_match: bool = True  # the pod's labels match the set's selector
    identity_drift: bool = False  # pod-name label no longer matches (#identityMatches)

    @property
    def uid_str(self) -> str:
        return f"uid-pod-{self.uid}"

    @property
    def terminating(self) -> bool:
        return self.deletion_s is not None

    @property
    def terminal(self) -> bool:
        return self.phase in ("Failed", "Succeeded")

    def running_and_ready(self) -> bool:
        # stateful_set_utils.go#isRunningAndReady
        return self.phase == "Running" and self.ready

    def available(self, now: float, min_ready_s: float) -> bool:
        # podutil.IsPodAvailable: Ready for at least minReadySeconds.
        if not self.running_and_ready() or self.ready_since_s is None:
            return False
        return min_ready_s <= 0 or now >= self.ready_since_s + min_ready_s


class Volume(msgspec.Struct):
    """A PVC and its bound PV (one per claim template per ordinal)."""

    claim: str
    ordinal: int
    access_modes: tuple[str, ...]
    topology: str  # "zonal", "local" or "network"
    binding: str  # "WaitForFirstConsumer" or "Immediate"
    storage_class: str
    template: str = ""  # claim template name (sorting is by template and ordinal, never name)
    zone: str | None = None  # pinned zone (zonal) once provisioned
    node: str | None = None  # pinned node (local) once provisioned
    attached_to: str | None = None
    attaching_to: str | None = None
    detaching_from: str | None = None
    detach_requested_s: float | None = None
    mounted_on_dead_node: bool = False
    deleted: bool = False
    # KEP-1847: metadata.ownerReferences maintained by the StatefulSet controller.
    owner_refs: list[OwnerRef] = msgspec.field(default_factory=list)
    finalizers: tuple[str, ...] = ()
    deletion_requested: bool = False  # deletionTimestamp set, kept by a finalizer

    @property
    def sort_key(self) -> tuple[str, str]:
        # Same order as the claim names `<template>-<set>-<ordinal>`, without the set name.
        return (self.template, str(self.ordinal))

    @property
    def needs_attach(self) -> bool:
        # Only block volumes go through the attach/detach controller; shared file systems
        # (ReadWriteMany / ReadOnlyMany on network storage) do not.
        return self.topology in ("zonal", "regional")

    @property
    def multi_attach_allowed(self) -> bool:
        # reconciler.go#isMultiAttachAllowed: RWX or ROX in the spec allows several nodes.
        return any(m in ("ReadWriteMany", "ReadOnlyMany") for m in self.access_modes)


class Cluster(msgspec.Struct):
    nodes: dict[str, Node] = msgspec.field(default_factory=dict)
    pods: dict[str, Pod] = msgspec.field(default_factory=dict)
    volumes: dict[str, Volume] = msgspec.field(default_factory=dict)
    version: int = 0  # bumped on every mutation (used to detect fixed points)
    # Other objects that exist and can own claims: (kind, name, uid).
    others: set[tuple[str, str, str]] = msgspec.field(default_factory=set)
    _uid: int = 0
    _deletions: int = 0
    _zone_index: tuple[tuple[int, int, int], dict[str, list[Node]]] | None = None

    def next_uid(self) -> int:
        self._uid += 1
        return self._uid

    def touch(self) -> None:
        self.version += 1

    def pods_on(self, node: str) -> list[Pod]:
        return sorted((p for p in self.pods.values() if p.node == node), key=lambda p: p.ordinal)

    def zone_nodes(self, zone: str) -> list[Node]:
        """The Node objects of `zone` that exist, in node order (looked up once per set of
        nodes: nodes are added when the cluster is built and only ever marked deleted, by
        :meth:`delete_node`)."""
        key = self.nodes_key()
        if self._zone_index is None or self._zone_index[0] != key:
            index: dict[str, list[Node]] = {}
            for n in self.nodes.values():
                if not n.deleted:
                    index.setdefault(n.zone, []).append(n)
            self._zone_index = (key, index)
        return list(self._zone_index[1].get(zone, ()))

    def nodes_key(self) -> tuple[int, int, int]:
        """Changes whenever the set of existing Node objects does (for caches of them)."""
        return (id(self.nodes), len(self.nodes), self._deletions)

    def zones(self) -> list[str]:
        """The zones that have a Node object, sorted."""
        self.zone_nodes("")
        assert self._zone_index is not None
        return sorted(z for z, nodes in self._zone_index[1].items() if nodes)

    def delete_node(self, node: Node) -> None:
        """Mark `node` deleted (its Node object is gone)."""
        node.deleted = True
        self._deletions += 1
