"""NodeName: spec.nodeName binds the pod to that node and nothing else.

pkg/scheduler/framework/plugins/nodename/node_name.go#Filter (a pod with nodeName is not even
queued for scheduling: the API server binds it; the effect on placement is the same)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cluster import Node
    from .framework import FilterContext

NAME = "NodeName"
SOURCE = "pkg/scheduler/framework/plugins/nodename/node_name.go#Filter"


def filter(ctx: FilterContext, node: Node) -> str | None:
    if ctx.wl.node_name is not None and node.name != ctx.first_node:
        return "node(s) didn't match the requested node name"
    return None


def constraint(ctx: FilterContext) -> str:
    return f"spec.nodeName ties it to {ctx.first_node}"
