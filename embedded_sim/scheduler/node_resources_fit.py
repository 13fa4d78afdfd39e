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


def constraint(ctx: FilterContext) -> str:
    alloc = ctx.nodes[0].allocatable if ctx.nodes else None
    fit = per_node(ctx, ctx.nodes[0]) if ctx.nodes else 0
    return f"the requests fit {fit} pod(s) per node ({alloc} allocatable)"
