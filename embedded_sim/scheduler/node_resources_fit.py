"""NodeResourcesFit: the pod's requests must fit the node's allocatable minus what the pods on
it request, and the node must have room for one more pod.

pkg/scheduler/framework/plugins/noderesources/fit.go#Filter (fitsRequest: "Insufficient cpu",
"Insufficient memory", "Too many pods"); requests as workload.py#_pod_requests sums them. Only
this set's pods are on the simulated nodes; their allocatable is the cluster profile's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cluster import Node
    from .framework import FilterContext

NAME = "NodeResourcesFit"
SOURCE = "pkg/scheduler/framework/plugins/noderesources/fit.go#Filter"


def filter(ctx: FilterContext, node: Node) -> str | None:
    alloc = node.allocatable
    if alloc is None:
        return None
    n = ctx.count_on(node.name)
    if n + 1 > alloc.pods:
        return "Too many pods"
    req = ctx.wl.requests
    if req.cpu_m > 0 and (n + 1) * req.cpu_m > alloc.cpu_m:
        return "Insufficient cpu"
    if req.memory_b > 0 and (n + 1) * req.memory_b > alloc.memory_b:
        return "Insufficient memory"
    return None


def per_node(ctx: FilterContext, node: Node) -> int:
    """How many of the set's pods fit on `node` by resources alone."""
    alloc = node.allocatable
    if alloc is None:
        return 10**9
    caps = [alloc.pods]
    req = ctx.wl.requests
    if req.cpu_m > 0:
        caps.append(int(alloc.cpu_m // req.cpu_m))
    if req.memory_b > 0:
        caps.append(int(alloc.memory_b // req.memory_b))
    return max(0, min(caps))


def roomiest(ctx: FilterContext) -> Node | None:
    """Of the nodes the pod may use (its tolerations and node selection admit them), the one
    that fits most of the set's pods by resources (the first node when none is usable)."""
    from .node_affinity import filter as affinity
    from .taint_toleration import untolerated_taint

    usable = [
        n for n in ctx.nodes if untolerated_taint(ctx, n) is None and affinity(ctx, n) is None
    ]
    pool = usable or list(ctx.nodes)
    return max(pool, key=lambda n: per_node(ctx, n)) if pool else None


def constraint(ctx: FilterContext) -> str:
    node = roomiest(ctx)
    alloc = node.allocatable if node is not None else None
    fit = per_node(ctx, node) if node is not None else 0
    return f"the requests fit {fit} pod(s) per node ({alloc} allocatable)"
