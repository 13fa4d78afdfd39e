"""NodePorts: a hostPort can be bound by one pod per node (per protocol and host IP).

pkg/scheduler/framework/plugins/nodeports/node_ports.go#Filter (fitsPorts over the ports of the
pods already on the node; hostIP 0.0.0.0 conflicts with every IP). Every pod of a StatefulSet
asks for the same ports, so hostPorts allow at most one of its pods per node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cluster import Node
    from .framework import FilterContext

NAME = "NodePorts"
SOURCE = "pkg/scheduler/framework/plugins/nodeports/node_ports.go#Filter"


def filter(ctx: FilterContext, node: Node) -> str | None:
    if ctx.wl.host_ports and ctx.count_on(node.name) > 0:
        return "node(s) didn't have free ports for the requested pod ports"
    return None


def ports(ctx: FilterContext) -> str:
    return ", ".join(f"{p.port}/{p.protocol}" for p in ctx.wl.host_ports)


def constraint(ctx: FilterContext) -> str:
    return f"hostPort {ports(ctx)} allows one pod per node"
