"""A simulated failover drawn as a chart: each ordinal's states over time, as a Mermaid gantt
(GitHub renders ``mermaid`` blocks in Markdown: job summaries, pull request comments,
``ssrisk simulate --format markdown``). People see a stuck ordinal faster than they read a
timeline.

The states come from the simulation's timeline events (``embedded_sim.result.TimelineEvent``
kinds), read per pod: a pod is available until an event takes it out (not Ready, an eviction,
a deletion), then goes through the states the events name (Terminating, gone, Pending,
attaching its volume, starting) until it is Ready again. A pod that is not Ready when the
simulation ends keeps its last state to the end, marked critical.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

#: Event kind → the state a pod is in from that event on (``None``: available again).
STATE_OF: dict[str, str | None] = {
    "pod-not-ready": "not Ready",
    "pod-readiness-failing": "not Ready",
    "drain-evicted": "Terminating",
    "pod-deletion-requested": "Terminating",
    "pod-terminating-stuck": "stuck Terminating",
    "pod-terminated": "gone",
    "pod-deleted": "gone",
    "pod-force-deleted": "gone",
    "pod-created": "Pending",
    "pod-scheduled": "Pending",
    "volume-detach-waiting": "waiting for its volume",
    "volume-multi-attach": "waiting for its volume",
    "volume-detached": "attaching its volume",
    "volume-attached": "attaching its volume",
    "volume-mounted": "starting",
    "pod-started": "starting",
    "pod-ready": None,
}

#: At most this many pods are drawn (the lowest ordinals; the chart says how many more).
MAX_PODS = 12


@dataclass(frozen=True)
class Span:
    """One state of one pod: ``[start_s, end_s)`` seconds after the fault."""

    pod: str
    state: str
    start_s: float
    end_s: float
    #: The pod is still in this state when the simulation ends.
    unresolved: bool = False


@dataclass(frozen=True)
class Drawing:
    """What a chart shows: a scenario of one StatefulSet, its pods' spans, where it ends."""

    title: str
    #: The pods drawn, in ordinal order (a pod without spans stayed available throughout).
    pods: tuple[str, ...]
    spans: tuple[Span, ...]
    end_s: float
    more_pods: int = 0


def _ordinal(pod: str) -> tuple[int, str]:
    m = re.search(r"-(\d+)$", pod)
    return (int(m.group(1)) if m else 1 << 30, pod)


def spans_of(events: Iterable[Any], pods: Sequence[str], recovered: bool) -> tuple[Span, ...]:
    """The spans of ``pods`` (names) read from timeline ``events`` (``t_s``, ``pod``, ``kind``),
    in ordinal order, each pod's in time order. ``recovered``: whether the scenario ends with
    the set available (else a pod's last state is drawn as unresolved)."""
    events = list(events)
    end = max((float(e.t_s) for e in events), default=0.0)
    out: list[Span] = []
    for pod in sorted(pods, key=_ordinal):
        state: str | None = None
        since = 0.0
        for e in events:
            if e.pod != pod or e.kind not in STATE_OF:
                continue
            new = STATE_OF[e.kind]
            if new == state:
                continue
            t = float(e.t_s)
            if state is not None and t > since:
                out.append(Span(pod, state, since, t))
            state, since = new, t
        if state is not None:
            out.append(Span(pod, state, since, max(end, since), unresolved=not recovered))
    return tuple(out)


def drawing_of(result: Any, title: str | None = None) -> Drawing:
    """The :class:`Drawing` of a simulated scenario (``embedded_sim.result.ScenarioResult``)."""
    pods = sorted(result.pods, key=_ordinal)
    shown = pods[:MAX_PODS]
    spans = spans_of(result.timeline, shown, result.recovered)
    end = max([float(e.t_s) for e in result.timeline] + [s.end_s for s in spans] + [1.0])
    if not result.recovered:
        end = end + max(60.0, round(end * 0.1))  # room to see that it does not end
    return Drawing(
        title or f"{result.scenario}: {result.namespace}/{result.name} (simulated)",
        tuple(shown),
        spans,
        end,
        len(pods) - len(shown),
    )


def _label(text: str) -> str:
    """Text Mermaid keeps as a label: no ``:``, ``;``, ``#`` or line breaks, at most 60
    characters (manifest names are attacker-controlled)."""
    cleaned = re.sub(r"[^A-Za-z0-9 ._/()-]", " ", text)
    return " ".join(cleaned.split())[:60] or "-"


def mermaid_gantt(drawing: Drawing) -> str:
    """The drawing as a fenced Markdown ``mermaid`` gantt block: one section per pod, a bar
    per state, unresolved states marked ``crit``. Times are milliseconds after the fault
    (``dateFormat x``: Mermaid reads ``X`` as seconds in some versions and as milliseconds in
    others, ``x`` as milliseconds in all), and the axis shows seconds since t=0 (``%s``, which
    does not depend on the reader's time zone as ``%H:%M`` would)."""
    lines = [
        "```mermaid",
        "gantt",
        f"    title {_label(drawing.title)}",
        "    dateFormat x",
        "    axisFormat %s s",
    ]
    by_pod: dict[str, list[Span]] = {pod: [] for pod in drawing.pods}
    for span in drawing.spans:
        by_pod.setdefault(span.pod, []).append(span)
    for pod, spans in by_pod.items():
        lines.append(f"    section {_label(pod)}")
        at = 0.0
        for span in spans:
            if span.start_s > at:
                lines.append(f"    available :done, {_num(at)}, {_num(span.start_s)}")
            end = drawing.end_s if span.unresolved else span.end_s
            tag = "crit, " if span.unresolved else "active, "
            state = span.state + (" (not resolved)" if span.unresolved else "")
            lines.append(f"    {_label(state)} :{tag}{_num(span.start_s)}, {_num(end)}")
            at = end
        if at < drawing.end_s:
            lines.append(f"    available :done, {_num(at)}, {_num(drawing.end_s)}")
    if drawing.more_pods:
        lines.append(f"    section {drawing.more_pods} more pods not drawn")
    lines.append("```")
    return "\n".join(lines) + "\n"


def _num(t_s: float) -> str:
    """Milliseconds (Mermaid's ``x`` format reads Unix milliseconds)."""
    return str(round(t_s * 1000))
