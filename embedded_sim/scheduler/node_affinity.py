"""NodeAffinity: spec.nodeSelector and the required node affinity must match the node's labels.

pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go#Filter (nodeSelector pairs and
requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, via
k8s.io/component-helpers/scheduling/corev1/nodeaffinity#GetRequiredNodeAffinity). The matching
itself is nodes.py#node_selection_matches, shared with the topology spread's domain count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..nodes import node_selection_matches

if TYPE_CHECKING:
    from ..cluster import Node
    from .framework import FilterContext

NAME = "NodeAffinity"
SOURCE = "pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go#Filter"


def filter(ctx: FilterContext, node: Node) -> str | None:
    if not node_selection_matches(ctx.wl, node.labels, node.name):
        return "node(s) didn't match Pod's node affinity/selector"
    return None


def constraint(ctx: FilterContext) -> str:
    from . import named

    ok = [n.name for n in ctx.nodes if node_selection_matches(ctx.wl, n.labels, n.name)]
    where = named(ok) if ok else "no node"
    return f"its nodeSelector / node affinity only matches {where}"
