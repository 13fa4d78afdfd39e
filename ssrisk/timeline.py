"""Human-readable rendering of simulation results, shared by rules and ``ssrisk simulate``."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .embedded_sim.result import TimelineEvent


@lru_cache(maxsize=8192)
def fmt_duration(t_s: float | None) -> str:
    """``347.6`` → ``"5m47.6s"``; ``None`` → ``"never"``."""
    if t_s is None:
        return "never"
    if isinstance(t_s, int) and not isinstance(t_s, bool):  # exact, however large (int64)
        whole = abs(t_s)
        minutes_i, sec_i = divmod(whole, 60)
        hours_i, minutes_i = divmod(minutes_i, 60)
        if hours_i:
            text = f"{hours_i}h{minutes_i:02d}m{sec_i}s"
        else:
            text = f"{minutes_i}m{sec_i}s" if minutes_i else f"{sec_i}s"
        return f"-{text}" if t_s < 0 else text
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

    Long timelines keep their first ``limit - 2`` and last 2 events. The lines are rendered
    once per behaviour: from the cached result a renamed copy stands for
    (``ScenarioResult.template()``), kept on it, and given each copy's names here.
    """
    template, rename = result.template() if hasattr(result, "template") else (result, None)
    parts = _cached(template, f"_ssrisk_timeline_parts_{limit}", lambda: _parts(template, limit))
    if rename is None or template is result:
        return [f"{head}{pod:<12} {tail}" if pod is not None else head for head, pod, tail in parts]
    names: dict[str, str] = {}
    lines = []
    for head, pod, tail in parts:
        if pod is None:
            lines.append(head)
            continue
        if pod not in names:
            names[pod] = rename(pod)
        lines.append(f"{head}{names[pod]:<12} {rename(tail)}")
    return lines


def _cached(result: Any, key: str, build: Any) -> Any:
    cache = getattr(result, "__dict__", None)
    if cache is None:
        return build()
    if key not in cache:
        cache[key] = build()  # results are not changed after simulate() returns them
    return cache[key]


def _parts(result: Any, limit: int) -> tuple[tuple[str, str | None, str], ...]:
    """Each line as (time column, pod, event and source): the pod column is padded only once
    its name is known (a renamed copy's names differ in length from the template's)."""
    events: list[TimelineEvent | None] = list(result.timeline)
    if len(events) > limit:
        events = [*events[: limit - 2], None, *events[-2:]]
    parts: list[tuple[str, str | None, str]] = []
    for ev in events:
        if ev is None:
            parts.append(("  …", None, ""))
            continue
        parts.append(
            (
                f"  t={fmt_duration(ev.t_s):>9}  ",
                ev.pod or "-",
                f"{ev.event}  [{ev.source}]",
            )
        )
    return tuple(parts)


def format_result(result: Any, where: str = "") -> str:
    """One result as a block: a header (``where``: the file and line of the StatefulSet),
    the full timeline and the verdict."""
    d = result.to_dict()
    obj = d.get("object", {})
    at = f"{where}: " if where else ""
    head = (
        f"== {at}{obj.get('namespace') or 'default'}/{obj.get('name')}  scenario "
        f"{d.get('scenario')}  (Kubernetes {d.get('kube_version', '')}, replicas "
        f"{d.get('replicas')}"
        + (f", on {shape.described}" if (shape := getattr(result, "cluster_shape", None)) else "")
        + ")"
    )
    body = timeline_lines(result, limit=10_000)
    tail = [f"  verdict: {d.get('verdict', '')}"]
    if d.get("placement"):
        tail.append(f"  placement: {d['placement']}")
    from .reporters.escape import printable

    # each is one line: a name's line break is written as \n, not started
    return "\n".join(printable(line) for line in [head, *body, *tail]) + "\n\n"


def event_time(result: Any, kind: str, pod: str | None = None) -> float | None:
    """Time of the first ``kind`` event (for ``pod`` if given) in ``result``, or ``None``."""
    ev = result.first(kind, pod=pod)
    return None if ev is None else float(ev.t_s)
