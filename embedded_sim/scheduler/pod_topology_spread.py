"""PodTopologySpread (whenUnsatisfiable: DoNotSchedule): matching pods in the node's domain, plus
this one, may exceed the global minimum by at most maxSkew.

pkg/scheduler/framework/plugins/podtopologyspread/filtering.go#calPreFilterState and #Filter:

* a node counts towards the domains only if it carries the topology key of every DoNotSchedule
  constraint of the pod (common.go#nodeLabelsMatchSpreadConstraints);
* with NodeInclusionPolicyInPodTopologySpread on (default from 1.26), each constraint counts the
  nodes its policies include (common.go#matchNodeInclusionPolicies): nodeAffinityPolicy Honor
  (the default) only nodes that match the pod's nodeSelector / required node affinity,
  nodeTaintsPolicy Honor only nodes whose NoSchedule / NoExecute taints the pod tolerates
  (Ignore, the default: every node); with the gate off, only nodes that match the pod's node
  affinity count, whatever the policies say;
* terminating pods are not counted (common.go#countPodsMatchSelector);
* the global minimum is the smallest count of any domain, or 0 while there are fewer domains
  than minDomains (filtering.go#minMatchNum); minDomains reads as 1 unless it is set and
  MinDomainsInPodTopologySpread is on (default from 1.27), so no domain at all means 0;
* a node without the topology label is refused (ErrReasonNodeLabelNotMatch).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..nodes import node_selection_matches
from .taint_toleration import untolerated_taint

if TYPE_CHECKING:
    from ..cluster import Node
    from ..workload import SpreadRule
    from .framework import FilterContext

NAME = "PodTopologySpread"
SOURCE = "pkg/scheduler/framework/plugins/podtopologyspread/filtering.go#Filter"
#: filtering.go ErrReasonConstraintsNotMatch and ErrReasonNodeLabelNotMatch.
REASON = "node(s) didn't match pod topology spread constraints"
REASON_LABEL = REASON + " (missing required label)"


def domain(rule: SpreadRule, node: Node) -> str | None:
    """The node's value of the rule's topology label (None: the node does not carry it)."""
    return node.labels.get(rule.topology_key)


def _node_facts(ctx: FilterContext) -> dict[str, tuple[bool, bool, bool]]:
    """Per node name, once per scheduling attempt: (carries every spread topology key,
    matches the pod's node selection, has a NoSchedule / NoExecute taint the pod does not
    tolerate)."""
    key = "pod-topology-spread-nodes"
    cached = ctx.memo.get(key)
    if isinstance(cached, dict):
        return cached
    spreads = [r for r in ctx.wl.hard_rules if r.kind == "spread"]
    keys = {r.topology_key for r in spreads}
    wl = ctx.wl
    # each fact is only worked out when a constraint reads it (the default policies never
    # read the taints; a pod without node selection matches every node)
    selects = (bool(wl.node_selector) or bool(wl.node_affinity_terms)) and (
        not ctx.node_inclusion_on or any(r.node_affinity_policy == "Honor" for r in spreads)
    )
    taints = ctx.node_inclusion_on and any(r.node_taints_policy == "Honor" for r in spreads)
    facts = {
        n.name: (
            all(k in n.labels for k in keys),
            not selects or node_selection_matches(wl, n.labels, n.name),
            taints and untolerated_taint(ctx, n) is not None,
        )
        for n in ctx.nodes
    }
    ctx.memo[key] = facts
    return facts


def _included(ctx: FilterContext, rule: SpreadRule, facts: tuple[bool, bool, bool]) -> bool:
    """Whether a node with `facts` (:func:`_node_facts`) is one of the rule's domains' nodes
    (calPreFilterState)."""
    labelled, selected, tainted = facts
    if not labelled:
        return False
    honour_affinity = not ctx.node_inclusion_on or rule.node_affinity_policy == "Honor"
    if honour_affinity and not selected:
        return False
    honour_taints = ctx.node_inclusion_on and rule.node_taints_policy == "Honor"
    return not (honour_taints and tainted)


def _counts(ctx: FilterContext, index: int, rule: SpreadRule) -> tuple[dict[str, int], int]:
    """Matching pods per domain of `rule`, and the global minimum (computed once per
    scheduling attempt: the plugin's PreFilter state)."""
    key = ("pod-topology-spread", index)
    cached = ctx.memo.get(key)
    if not isinstance(cached, tuple):
        counts: dict[str, int] = {}
        included: dict[str, str] = {}
        facts = _node_facts(ctx)
        for n in ctx.nodes:
            if _included(ctx, rule, facts[n.name]):
                d = n.labels[rule.topology_key]
                counts.setdefault(d, 0)
                included[n.name] = d
        for p in ctx.others:
            at = included.get(p.node)
            if at is not None and not p.terminating:
                counts[at] += 1
        min_domains = rule.min_domains if ctx.min_domains_on else 1
        lowest = min(counts.values()) if len(counts) >= min_domains else 0
        cached = (counts, lowest)
        ctx.memo[key] = cached
    return cached


def filter(ctx: FilterContext, node: Node) -> str | None:
    for i, rule in enumerate(ctx.wl.hard_rules):
        if rule.kind != "spread":
            continue
        here = domain(rule, node)
        if here is None:
            return REASON_LABEL
        counts, lowest = _counts(ctx, i, rule)
        if counts.get(here, 0) + 1 - lowest > rule.max_skew:
            return REASON
    return None


def constraint(ctx: FilterContext) -> str:
    rules = [r for r in ctx.wl.hard_rules if r.kind == "spread"]
    said = dict.fromkeys(
        f"a {r.domain_word} spread with maxSkew {r.max_skew}"
        + (f" and minDomains {r.min_domains}" if r.min_domains > 1 and ctx.min_domains_on else "")
        for r in rules
    )
    return " and ".join(said)  # (a constraint written twice is said once)
