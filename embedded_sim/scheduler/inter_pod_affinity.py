"""InterPodAffinity: required pod anti-affinity (none of the selected pods in the node's domain)
and required pod affinity (one of them in the node's domain) over the set's own pods.

pkg/scheduler/framework/plugins/interpodaffinity/filtering.go#Filter
(satisfyExistingPodsAntiAffinity, satisfyPodAntiAffinity, satisfyPodAffinity). Existing pods
count whatever their state, terminating ones included. A required affinity that selects the
pod's own labels is satisfied anywhere while no such pod exists yet (the first pod of the set).
Terms about other workloads' pods are not modelled (workload.foreign_affinity_terms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pod_topology_spread import domain

if TYPE_CHECKING:
    from ..cluster import Node
    from .framework import FilterContext

NAME = "InterPodAffinity"
SOURCE = "pkg/scheduler/framework/plugins/interpodaffinity/filtering.go#Filter"


def filter(ctx: FilterContext, node: Node) -> str | None:
    rules = [r for r in ctx.wl.hard_rules if r.kind in ("anti-affinity", "affinity")]
    if not rules:
        return None
    by_name = {n.name: n for n in ctx.nodes}
    for rule in rules:
        here = domain(rule, node)
        present = [domain(rule, by_name[p.node]) for p in ctx.others if p.node in by_name]
        if rule.kind == "anti-affinity" and here in present:
            return "node(s) didn't match pod anti-affinity rules"
        if rule.kind == "affinity" and present and here not in present:
            return "node(s) didn't match pod affinity rules"
    return None


def constraint(ctx: FilterContext) -> str:
    parts = []
    for r in ctx.wl.hard_rules:
        if r.kind == "anti-affinity":
            parts.append(f"required anti-affinity allows one pod per {r.topology_key}")
        elif r.kind == "affinity":
            parts.append(f"required pod affinity keeps the pods in one {r.topology_key}")
    return " and ".join(parts)
