"""The scheduler's filter framework, reduced to what StatefulSet failover depends on.

pkg/scheduler/framework/runtime/framework.go#RunFilterPlugins runs the filter plugins in the
configured order for each node and stops at the first that rejects it; the rejections of all
nodes make the "0/N nodes are available: ..." message (pkg/scheduler/schedule_one.go
#findNodesThatFitPod, FitError). The default order (pkg/scheduler/apis/config/v1/
default_plugins.go) is kept: NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
NodePorts, NodeResourcesFit, VolumeBinding, PodTopologySpread, InterPodAffinity.

A filter is a module with `NAME`, `SOURCE`, `filter(ctx, node) -> str | None` (None: the node
fits; else the upstream reason) and `constraint(ctx) -> str` (the rule in words, for verdicts).
Filters only see a `FilterContext`: the pod's workload, the candidate nodes and where this set's
other pods are, so the same code places the steady state and schedules replacements.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from ..cluster import Node, Volume
    from ..workload import Workload


class OtherPod(msgspec.Struct, frozen=True):
    """Another pod of the set, as the scheduler's snapshot shows it (NodeInfo)."""

    node: str
    terminating: bool = False


class FilterContext(msgspec.Struct):
    """What one scheduling attempt of one pod sees."""

    wl: Workload
    nodes: Sequence[Node]  # every Node object that exists (deleted ones excluded)
    others: Sequence[OtherPod]  # the set's other bound, non-terminal pods
    volumes: Sequence[Volume] = ()  # the pod's claims
    first_node: str | None = None  # where spec.nodeName points (nodes.py names it)
    _by_node: dict[str, int] | None = msgspec.field(default=None)
    # per-attempt values filters derive from the whole snapshot (PreFilter state upstream),
    # computed once instead of once per node
    memo: dict[object, object] = msgspec.field(default_factory=dict)
    # the version's VolumeBinding reason (versions.VersionDefaults.volume_conflict_reason)
    volume_conflict_reason: str = "node(s) didn't match PersistentVolume's node affinity"
    # the version's PodTopologySpread gates (versions.VersionDefaults.min_domains_honoured and
    # .node_inclusion_policies)
    min_domains_on: bool = True
    node_inclusion_on: bool = True

    def count_on(self, node_name: str) -> int:
        """The set's other pods bound to `node_name` (terminating ones included)."""
        if self._by_node is None:
            counts: dict[str, int] = {}
            for p in self.others:
                counts[p.node] = counts.get(p.node, 0) + 1
            self._by_node = counts
        return self._by_node.get(node_name, 0)


Filter = Callable[["FilterContext", "Node"], "str | None"]


_PLUGINS: tuple[ModuleType, ...] = ()


def plugins() -> tuple[ModuleType, ...]:
    """The filter plugins in the default order."""
    global _PLUGINS
    if not _PLUGINS:
        _PLUGINS = _load_plugins()
    return _PLUGINS


def _load_plugins() -> tuple[ModuleType, ...]:
    from . import (
        inter_pod_affinity,
        node_affinity,
        node_name,
        node_ports,
        node_resources_fit,
        node_unschedulable,
        pod_topology_spread,
        taint_toleration,
        volume_binding,
    )

    return (
        node_unschedulable,
        node_name,
        taint_toleration,
        node_affinity,
        node_ports,
        node_resources_fit,
        volume_binding,
        pod_topology_spread,
        inter_pod_affinity,
    )


def run_filters(ctx: FilterContext, node: Node) -> tuple[str, str] | None:
    """(plugin name, reason) of the first plugin that rejects `node`, or None if it fits."""
    for plugin in plugins():
        why = plugin.filter(ctx, node)
        if why is not None:
            return plugin.NAME, why
    return None
