"""Quoting simulation results in findings (helpers for rules)."""

from __future__ import annotations

from typing import Any

from ssrisk.rule import CheckContext
from ssrisk.timeline import timeline_lines


def timeline_block(ctx: CheckContext, result: Any) -> str:
    """The simulated timeline of ``result`` with its verdict, as an explanation paragraph."""
    return (
        f"Simulated timeline (scenario {result.get('scenario', '?')}, Kubernetes "
        f"{ctx.kube_version}):\n"
        + "\n".join(timeline_lines(result))
        + f"\nVerdict: {result.get('verdict', '')}\n"
    )


def unavailable_pods(result: Any) -> tuple[int, int]:
    """``(pods ever unavailable, pods never back)`` in ``result``."""
    pods = result.get("pods") or {}
    hit = [p for p in pods.values() if p.get("unavailable_s") != 0]
    never = [p for p in hit if p.get("unavailable_s") is None]
    return len(hit), len(never)
