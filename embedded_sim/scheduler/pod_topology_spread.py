"""PodTopologySpread (whenUnsatisfiable: DoNotSchedule): matching pods in the node's domain, plus
this one, may exceed the smallest count of any domain by at most maxSkew.

pkg/scheduler/framework/plugins/podtopologyspread/filtering.go#Filter and #calPreFilterState:
domains are those of the nodes that pass the pod's nodeAffinity / nodeSelector
(nodeAffinityPolicy Honor, the default), terminating pods are not counted, nodes without the
topology label are skipped. minDomains is not modelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..nodes import node_selection_matches

if TYPE_CHECKING:
    from ..cluster import Node
    from ..workload import SpreadRule
    from .framework import FilterContext

NAME = "PodTopologySpread"
SOURCE = "pkg/scheduler/framework/plugins/podtopologyspread/filtering.go#Filter"


def domain(rule: SpreadRule, node: Node) -> str:
    return node.name if rule.topology_key == "hostname" else node.zone


def _counts(ctx: FilterContext, index: int, rule: SpreadRule) -> tuple[dict[str, int], int]:
    """Matching pods per eligible domain of `rule`, and the smallest count (computed once per
    scheduling attempt: the plugin's PreFilter state)."""
    key = ("pod-topology-spread", index)
    cached = ctx.memo.get(key)
    if not isinstance(cached, tuple):
        eligible = [n for n in ctx.nodes if node_selection_matches(ctx.wl, n.labels, n.name)]
        by_name = {n.name: n for n in ctx.nodes}
        counts: dict[str, int] = {domain(rule, n): 0 for n in eligible}
        for p in ctx.others:
            n = by_name.get(p.node)
            if n is None or p.terminating:
                continue
            d = domain(rule, n)
            if d in counts:
                counts[d] += 1
        cached = (counts, min(counts.values()) if counts else 0)
        ctx.memo[key] = cached
    return cached


def filter(ctx: FilterContext, node: Node) -> str | None:
    for i, rule in enumerate(ctx.wl.hard_rules):
        if rule.kind != "spread":
            continue
        counts, lowest = _counts(ctx, i, rule)
        if counts.get(domain(rule, node), 0) + 1 - lowest > rule.max_skew:
            return "node(s) didn't match pod topology spread constraints"
    return None


def constraint(ctx: FilterContext) -> str:
    rules = [r for r in ctx.wl.hard_rules if r.kind == "spread"]
    said = dict.fromkeys(f"a {r.topology_key} spread with maxSkew {r.max_skew}" for r in rules)
    return " and ".join(said)  # (a constraint written twice is said once)
