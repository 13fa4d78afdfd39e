"""Result objects returned by `simulate()`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec


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


class PodResult(msgspec.Struct):
    """Per-pod outcome; `unavailable_s` is 0 if never unavailable, None if never back."""

    unavailable_s: float | None
    node: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"unavailable_s": _num(self.unavailable_s), "node": self.node}


class PlacementFacts(msgspec.Struct, frozen=True):
    """How the steady-state placement relates to the failure a scenario injects.

    `worst_node` / `worst_zone`: replicas the worst allowed placement puts on the node (zone)
    of the lowest ordinal; `spread_node` / `spread_zone`: the same for the placement the default
    scoring would choose. `forced` when both agree for node and zone. `limits` names the
    constraints that bound the worst case, in words. `unplaced`: ordinals no node accepts.
    `not_simulated`: the hard placement terms left out because no simulated node carries their
    topology key, in words (``"required anti-affinity on example.com/rack"``).
    """

    worst_node: int
    spread_node: int
    worst_zone: int
    spread_zone: int
    limits: tuple[str, ...]
    unplaced: tuple[int, ...]
    not_simulated: tuple[str, ...] = ()

    @property
    def forced_node(self) -> bool:
        return self.worst_node == self.spread_node

    @property
    def forced_zone(self) -> bool:
        return self.worst_zone == self.spread_zone

    def to_dict(self) -> dict[str, object]:
        return {
            "node": {
                "worst_case": self.worst_node,
                "spread": self.spread_node,
                "basis": "forced by the constraints" if self.forced_node else "worst case",
            },
            "zone": {
                "worst_case": self.worst_zone,
                "spread": self.spread_zone,
                "basis": "forced by the constraints" if self.forced_zone else "worst case",
            },
            "limits": list(self.limits),
            "unplaced": list(self.unplaced),
            **({"not_simulated": list(self.not_simulated)} if self.not_simulated else {}),
        }


class ClusterShape(msgspec.Struct, frozen=True):
    """The simulated cluster's live nodes when the fault starts: `zones`, `nodes_per_zone` (the
    largest zone) and `text` ("3 zones × 2 nodes", or "5 nodes in 3 zones" when uneven);
    `source` says where the nodes come from: ``"assumed"`` (ssrisk's default shape, grown to
    hold the replicas), ``"configured"`` (the profile's zones and nodes-per-zone) or
    ``"profile"`` (the profile's nodes, as ssrisk profile lists a real cluster's)."""

    zones: int
    nodes_per_zone: int
    text: str
    source: str = "assumed"

    @property
    def described(self) -> str:
        """The cluster in words: ``"the profile's nodes (9 nodes in 3 zones)"``."""
        what = {
            "profile": "the profile's nodes",
            "configured": "the profile's zones and nodes-per-zone",
        }.get(self.source, "an assumed cluster")
        return f"{what} ({self.text})"

    @classmethod
    def of(cls, zones: Iterable[str], source: str = "assumed") -> ClusterShape:
        """The shape of nodes in ``zones`` (one zone name per node)."""
        per_zone: dict[str, int] = {}
        for zone in zones:
            per_zone[zone] = per_zone.get(zone, 0) + 1
        if not per_zone:
            return cls(0, 0, "no nodes", source)
        counts = set(per_zone.values())
        z, most = len(per_zone), max(counts)
        if len(counts) == 1:
            text = f"{z} zone{'s' if z != 1 else ''} × {most} node{'s' if most != 1 else ''}"
        else:
            text = f"{sum(per_zone.values())} nodes in {z} zones"
        return cls(z, most, text, source)

    def to_dict(self) -> dict[str, int | str]:
        return {
            "zones": self.zones,
            "nodes_per_zone": self.nodes_per_zone,
            "text": self.text,
            "source": self.source,
        }


class Goal(msgspec.Struct, frozen=True):
    """Whether the operation a scenario starts finished: `name` is ``drain``, ``rollout`` or
    ``scale_down`` (the JSON keys are ``<name>_completed`` and, when `timed`,
    ``<name>_duration_s``); `duration_s` is when it finished (None: it did not)."""

    name: str
    completed: bool
    duration_s: float | None = None
    timed: bool = True

    def items(self) -> list[tuple[str, object]]:
        out: list[tuple[str, object]] = [(f"{self.name}_completed", self.completed)]
        if self.timed:
            out.append((f"{self.name}_duration_s", _num(self.duration_s)))
        return out


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
    #: The fields below hold names (renamed per caller on a cached result: memo.RenamedResult)
    #: and so have no defaults. What the scenario does, in one sentence:
    description: str
    #: Nodes the fault took down.
    failed_nodes: list[str]
    placement_basis: PlacementFacts | None
    cluster_shape: ClusterShape | None
    #: Why the set never recovers without an operator (None when it recovers or is cut off).
    not_back_because: str | None
    #: How many replicas ran on the failed nodes when the fault started.
    replicas_on_failed_nodes: int = 0
    #: When the lost node's Ready condition turns Unknown: node-monitor-grace-period - 10 s to
    #: + 5 s (the Lease is renewed every 10 s; the controller looks every 5 s).
    node_unknown_range_s: tuple[float, float] = (0.0, 0.0)
    #: When the lost node came back (node-loss with the profile's node-returns-after-s).
    node_returned_at_s: float | None = None
    #: The scenario's operation (drain, rollout, scale-down) and whether it finished.
    goal: Goal | None = None
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
        if self.budget_exhausted:  # nothing was concluded: no more to say
            d["budget_exhausted"] = True
            self.__dict__["_as_dict"] = d
            return d
        if self.node_returned_at_s is not None:
            d["node_returned_at_s"] = _num(self.node_returned_at_s)
        if self.goal is not None:
            d.update(self.goal.items())
        if self.not_back_because is not None:
            d["not_back_because"] = self.not_back_because
        d["node_unknown_range_s"] = list(self.node_unknown_range_s)
        d["failed_nodes"] = list(self.failed_nodes)
        d["replicas_on_failed_nodes"] = self.replicas_on_failed_nodes
        d["description"] = self.description
        if self.placement_basis is not None:
            d["placement_basis"] = self.placement_basis.to_dict()
        if self.cluster_shape is not None:
            d["cluster_shape"] = self.cluster_shape.to_dict()
        self.__dict__["_as_dict"] = d
        return d
