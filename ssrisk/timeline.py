"""Human-readable rendering of simulation results, shared by rules and ``ssrisk simulate``."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=8192)
def fmt_duration(t_s: float | None) -> str:
    """``347.6`` → ``"5m47.6s"``; ``None`` → ``"never"``."""
    if t_s is None:
        return "never"
    total = round(float(t_s), 1)
    neg = total < 0
    total = abs(total)
    minutes, sec = divmod(total, 60)
    hours, minutes = divmod(int(minutes), 60)
    s = f"{sec:.1f}".rstrip("0").rstrip(".")
    if hours:
        text = f"{hours}h{minutes:02d}m{s}s"
    elif minutes:
        text = f"{minutes}m{s}s"
    else:
        text = f"{s}s"
    return f"-{text}" if neg else text


def timeline_lines(result: Any, limit: int = 14) -> list[str]:
    """The simulated timeline of ``result`` as ``t=…  pod  event  [source]`` lines.

    Long timelines keep their first ``limit - 2`` and last 2 events.
    """
    cache = getattr(result, "__dict__", None)
    key = f"_ssrisk_timeline_lines_{limit}"
    if cache is not None and key in cache:
        return list(cache[key])
    lines = _timeline_lines(result, limit)
    if cache is not None:
        cache[key] = tuple(lines)  # results are not changed after simulate() returns them
    return lines


def _timeline_lines(result: Any, limit: int) -> list[str]:
    events = list(result.to_dict().get("timeline", []))
    if len(events) > limit:
        events = [*events[: limit - 2], None, *events[-2:]]
    lines = []
    for ev in events:
        if ev is None:
            lines.append("  …")
            continue
        pod = ev.get("pod") or "-"
        lines.append(
            f"  t={fmt_duration(ev['t_s']):>9}  {pod:<12} {ev['event']}  [{ev.get('source', '')}]"
        )
    return lines


def format_result(result: Any) -> str:
    """One result as a block: a header, the full timeline and the verdict."""
    d = result.to_dict()
    obj = d.get("object", {})
    head = (
        f"== {obj.get('namespace') or 'default'}/{obj.get('name')}  scenario {d.get('scenario')}"
        f"  (Kubernetes {d.get('kube_version', '')}, replicas {d.get('replicas')})"
    )
    body = timeline_lines(result, limit=10_000)
    tail = [f"  verdict: {d.get('verdict', '')}"]
    if d.get("placement"):
        tail.append(f"  placement: {d['placement']}")
    return "\n".join([head, *body, *tail]) + "\n\n"


def event_time(result: Any, kind: str, pod: str | None = None) -> float | None:
    """Time of the first ``kind`` event (for ``pod`` if given) in ``result``, or ``None``."""
    ev = result.first(kind, pod=pod)
    return None if ev is None else float(ev.t_s)
