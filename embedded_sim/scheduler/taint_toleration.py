"""TaintToleration: every NoSchedule and NoExecute taint of the node must be tolerated.

pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go#Filter
(v1helper.FindMatchingUntoleratedTaint over NoSchedule and NoExecute taints; PreferNoSchedule
only scores). The node lifecycle controller's unreachable / not-ready taints are what keep
replacements off a lost node; the profile's node taints (a dedicated pool) apply from t=0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cluster import Node, Taint
    from .framework import FilterContext

NAME = "TaintToleration"
SOURCE = "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go#Filter"


def untolerated_taint(ctx: FilterContext, node: Node) -> Taint | None:
    """The node's first NoSchedule / NoExecute taint the pod does not tolerate
    (v1helper.FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc), else None."""
    for t in node.taints:
        if t.effect in ("NoSchedule", "NoExecute") and not any(
            tol.tolerates(t.key, t.value, t.effect) for tol in ctx.wl.tolerations
        ):
            return t
    return None


def filter(ctx: FilterContext, node: Node) -> str | None:
    t = untolerated_taint(ctx, node)
    if t is None:
        return None
    shown = f"{t.key}: {t.value}" if t.value else t.key
    return f"node(s) had untolerated taint {{{shown}}}"


def constraint(ctx: FilterContext) -> str:
    seen = []
    for n in ctx.nodes:
        t = untolerated_taint(ctx, n)
        if t is not None:
            text = f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
            if text not in seen:
                seen.append(text)
    return f"the pods do not tolerate the taint {', '.join(seen)}" if seen else "taints"
