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
    from ..workload import SpreadRule
    from .framework import FilterContext

NAME = "InterPodAffinity"
SOURCE = "pkg/scheduler/framework/plugins/interpodaffinity/filtering.go#Filter"


def _present(ctx: FilterContext, rule: SpreadRule) -> set[str]:
    """The domains of `rule`'s topology that hold one of the set's other pods (computed once
    per scheduling attempt, like the plugin's PreFilter state)."""
    key = ("inter-pod-affinity", rule.topology_key)
    cached = ctx.memo.get(key)
    if not isinstance(cached, set):
        by_name = {n.name: n for n in ctx.nodes}
        cached = {
            d
            for p in ctx.others
            if p.node in by_name and (d := domain(rule, by_name[p.node])) is not None
        }
        ctx.memo[key] = cached
    return cached


def filter(ctx: FilterContext, node: Node) -> str | None:
    for rule in ctx.wl.hard_rules:
        if rule.kind not in ("anti-affinity", "affinity"):
            continue
        present = _present(ctx, rule)
        here = domain(rule, node)
        if rule.kind == "anti-affinity" and here is not None and here in present:
            return "node(s) didn't match pod anti-affinity rules"
        if rule.kind == "affinity" and present and here not in present:
            return "node(s) didn't match pod affinity rules"
    return None


def constraint(ctx: FilterContext) -> str:
    parts = []
    for r in ctx.wl.hard_rules:
        if r.kind == "anti-affinity" and not any(r.topology_key in n.labels for n in ctx.nodes):
            # interpodaffinity/filtering.go: a node without the label is not constrained
            parts.append(
                f"required anti-affinity on {r.topology_key} limits nothing (no node has it)"
            )
        elif r.kind == "anti-affinity":
            parts.append(f"required anti-affinity allows one pod per {r.domain_word}")
        elif r.kind == "affinity":
            parts.append(f"required pod affinity keeps the pods in one {r.domain_word}")
    return " and ".join(dict.fromkeys(parts))  # (a term written twice is said once)
