"""Result objects returned by `simulate()`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple


def _same(text: str) -> str:
    return text


def _num(v: float | None) -> float | int | None:
    """Round times to 0.1 s for stable output; integral values print as int."""
    if v is None:
        return None
    r = round(float(v), 1)
    return int(r) if r == int(r) else r


class TimelineEvent(NamedTuple):
    """One observable step, with the Kubernetes source that makes it happen.

    Immutable; a named tuple because results carry many of them and are copied per caller.
    """

    t_s: float
    pod: str | None
    kind: str
    event: str
    source: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "t_s": _num(self.t_s),
            "pod": self.pod,
            "kind": self.kind,
            "event": self.event,
            "source": self.source,
        }


@dataclass
class PodResult:
    """Per-pod outcome; `unavailable_s` is 0 if never unavailable, None if never back."""

    unavailable_s: float | None
    node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"unavailable_s": _num(self.unavailable_s), "node": self.node}


@dataclass
class ScenarioResult:
    """Outcome of one StatefulSet through one scenario."""

    namespace: str
    name: str
    scenario: str
    kube_version: str
    replicas: int
    recovered: bool
    time_to_recovery_s: float | None
    manual_action_required: bool
    max_unavailable: int
    pods: dict[str, PodResult]
    timeline: list[TimelineEvent]
    verdict: str
    assumptions: list[str]
    placement: str
    extra: dict[str, Any] = field(default_factory=dict)
    #: True when the run stopped because its work budget ran out (budget.py): nothing about
    #: the scenario was concluded, and the other fields say nothing.
    budget_exhausted: bool = False
    #: Simulation steps the run took (budget.py) besides the assumed shape's search, which
    #: `shape_search` holds as (placement key, steps); a cached result is charged both again,
    #: the search once per budget.
    steps: int = 0
    shape_search: tuple[object, int] | None = None

    def first(self, kind: str, pod: str | None = None) -> TimelineEvent | None:
        """First timeline event of `kind` (for `pod`, if given)."""
        for ev in self.timeline:
            if ev.kind == kind and (pod is None or ev.pod == pod):
                return ev
        return None

    def events(self, kind: str, pod: str | None = None) -> list[TimelineEvent]:
        """All timeline events of `kind` (for `pod`, if given), in time order."""
        return [ev for ev in self.timeline if ev.kind == kind and (pod is None or ev.pod == pod)]

    def __iter__(self) -> Iterator[TimelineEvent]:
        return iter(self.timeline)

    def get(self, key: str, default: Any = None) -> Any:
        """``to_dict().get(key, default)``, without building the rest of the dict on a renamed
        copy of a cached result (``memo.RenamedResult``). Read-only, like ``to_dict()``."""
        return self.to_dict().get(key, default)

    def template(self) -> tuple[ScenarioResult, Callable[[str], str]]:
        """The result this one is a renamed copy of, and the function that puts this result's
        names into that result's text: ``(self, identity)`` for a result that is no copy.

        Text rendered from the template (and cached on it) is the same for every StatefulSet
        that behaves the same; each renamed copy then only substitutes its names (see
        ``ssrisk.timeline.timeline_lines``). Names appear in the template's strings only as
        whole placeholders, so a renderer must not measure or pad a name it is given.
        """
        return self, _same

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (the ``ssrisk simulate --format json`` shape).

        Computed once: a result is not changed after ``simulate()`` returns it, and the dict
        must be treated as read-only by callers.
        """
        cached = self.__dict__.get("_as_dict")
        if cached is not None:
            return cached
        d: dict[str, Any] = {
            "object": {"kind": "StatefulSet", "namespace": self.namespace, "name": self.name},
            "scenario": self.scenario,
            "kube_version": self.kube_version,
            "replicas": self.replicas,
            "recovered": self.recovered,
            "time_to_recovery_s": _num(self.time_to_recovery_s),
            "manual_action_required": self.manual_action_required,
            "max_unavailable": self.max_unavailable,
            "pods": {k: v.to_dict() for k, v in self.pods.items()},
            "timeline": [e.to_dict() for e in self.timeline],
            "verdict": self.verdict,
            "assumptions": list(self.assumptions),
            "placement": self.placement,
        }
        if self.budget_exhausted:
            d["budget_exhausted"] = True
        for k, v in self.extra.items():
            d[k] = _num(v) if isinstance(v, float) else v
        self.__dict__["_as_dict"] = d
        return d
