"""NodeUnschedulable: a cordoned node (spec.unschedulable) takes no new pods unless they
tolerate the node.kubernetes.io/unschedulable:NoSchedule taint.

pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go#Filter
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..workload import TAINT_UNSCHEDULABLE

if TYPE_CHECKING:
    from ..cluster import Node
    from .framework import FilterContext

NAME = "NodeUnschedulable"
SOURCE = "pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go#Filter"


def filter(ctx: FilterContext, node: Node) -> str | None:
    if node.unschedulable and not any(
        t.tolerates(TAINT_UNSCHEDULABLE, "", "NoSchedule") for t in ctx.wl.tolerations
    ):
        return "node(s) were unschedulable"
    return None


def constraint(ctx: FilterContext) -> str:
    return "cordoned nodes take no new pods"
