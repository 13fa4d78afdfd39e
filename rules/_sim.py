"""Quoting simulation results in findings (helpers for rules)."""

from __future__ import annotations

from typing import Any

from ssrisk.rule import CheckContext
from ssrisk.timeline import fmt_duration, timeline_lines


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


def recovery_phrase(result: Any) -> str:
    """``"back after 6m12s"`` or ``"not back without an operator"``, with the simulation's
    reason when it has one (``"not back without an operator: web-0 stays Pending: its zonal
    volume ... is in zone-a ..."``)."""
    t = getattr(result, "time_to_recovery_s", None)
    if getattr(result, "recovered", False) and t is not None:
        return f"back after {fmt_duration(t)}"
    why = result.get("not_back_because") if hasattr(result, "get") else None
    return f"not back without an operator ({why})" if why else "not back without an operator"
