"""Quoting simulation results in findings (helpers for rules)."""

from __future__ import annotations

from ssrisk.embedded_sim import ScenarioResult

from ssrisk.rule import CheckContext
from ssrisk.timeline import timeline_lines


def timeline_block(ctx: CheckContext, result: ScenarioResult) -> str:
    """The simulated timeline of ``result`` with its verdict, as an explanation paragraph.

    Kept on ``result`` (a set's result is quoted by several rules' explanations; results are
    not changed once simulated)."""
    kept = result.__dict__.setdefault("_ssrisk_blocks", {})
    block = kept.get(ctx.kube_version)
    if block is None:
        on = f" on {result.cluster_shape.described}" if result.cluster_shape is not None else ""
        block = kept[ctx.kube_version] = (
            f"Simulated timeline (scenario {result.scenario}, Kubernetes "
            f"{ctx.kube_version}){on}:\n"
            + "\n".join(timeline_lines(result))
            + f"\nVerdict: {result.verdict}\n"
        )
    return block


def unavailable_pods(result: ScenarioResult) -> tuple[int, int]:
    """``(pods ever unavailable, pods never back)`` in ``result``."""
    hit = [p for p in result.pods.values() if p.unavailable_s != 0]
    never = [p for p in hit if p.unavailable_s is None]
    return len(hit), len(never)
