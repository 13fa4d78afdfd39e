"""Embedded discrete-event simulator of the Kubernetes control plane around one StatefulSet.

`simulate()` runs one StatefulSet manifest through one failure scenario and returns a
`ScenarioResult` whose timeline cites, for every step, the Kubernetes source that causes it.
Standard library only; deterministic; bounded (horizon, event count and, when given, a budget
of counted steps: budget.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .budget import STEP_MEANING, Budget, BudgetExhausted
from .memo import CACHE, prepare_base, rename
from .podtemplate import PodTemplate, SetSpec
from .profile import ClusterProfile, NodeSpec, default_nodes
from .result import ClusterShape, Goal, PlacementFacts, PodResult, ScenarioResult, TimelineEvent
from .scenarios import DESCRIPTIONS, SCENARIOS, run
from .versions import (
    DEFAULT_KUBE_VERSION,
    KNOWN_GATES,
    SUPPORTED_VERSIONS,
    KubeVersion,
    parse_kube_version,
    version_defaults,
)
from .workload import check_replica_limit

__all__ = [
    "DEFAULT_KUBE_VERSION",
    "DESCRIPTIONS",
    "KNOWN_GATES",
    "SCENARIOS",
    "SUPPORTED_VERSIONS",
    "Budget",
    "ClusterProfile",
    "ClusterShape",
    "Goal",
    "KubeVersion",
    "NodeSpec",
    "PlacementFacts",
    "PodResult",
    "ScenarioResult",
    "Simulator",
    "TimelineEvent",
    "cache_clear",
    "cache_info",
    "default_nodes",
    "parse_kube_version",
    "simulate",
    "version_defaults",
]


class Simulator:
    """One StatefulSet and the objects around it, parsed and keyed once, to run scenarios.

    Arguments as for :func:`simulate`; `max_steps` is the work budget all scenarios of this
    set share (budget.py; None: no limit). Raises ValueError when the set has more replicas
    than `workload.MAX_SIMULATED_REPLICAS`; :meth:`run` raises ValueError for an unknown
    scenario, Kubernetes version or feature gate. `template` and `spec`, when the caller has
    them, are `parse_template` and `parse_spec` of `statefulset` (not parsed again).
    """

    def __init__(
        self,
        statefulset: Mapping[str, Any],
        *,
        kube_version: str = DEFAULT_KUBE_VERSION,
        pdbs: Sequence[Mapping[str, Any]] = (),
        storage_classes: Sequence[Mapping[str, Any]] = (),
        persistent_volumes: Sequence[Mapping[str, Any]] = (),
        profile: ClusterProfile | None = None,
        feature_gates: Mapping[str, bool] | None = None,
        horizon_s: float = 86400.0,
        use_cache: bool = True,
        max_steps: int | None = None,
        template: PodTemplate | None = None,
        spec: SetSpec | None = None,
    ) -> None:
        check_replica_limit(statefulset)
        self._statefulset = statefulset
        self.budget = Budget(max_steps) if max_steps is not None else None
        self._kwargs: dict[str, Any] = {
            "kube_version": kube_version,
            "storage_classes": storage_classes,
            "persistent_volumes": persistent_volumes,
            "profile": profile,
            "feature_gates": feature_gates,
            "horizon_s": horizon_s,
        }
        self._pdbs = pdbs
        self._base = (
            prepare_base(statefulset, pdbs=pdbs, template=template, spec=spec, **self._kwargs)
            if use_cache
            else None
        )

    def run(self, scenario: str) -> ScenarioResult:
        """The result of `scenario` (memoised as described in :func:`simulate`); when the
        set's budget runs out, a result with `budget_exhausted` set and nothing concluded."""
        if scenario not in SCENARIOS:
            raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
        budget = self.budget
        try:
            if self._base is None:
                result, _ = run(
                    self._statefulset, scenario, pdbs=self._pdbs, budget=budget, **self._kwargs
                )
                return result
            prep = self._base
            key = prep.key_for(scenario)
            cached = CACHE.get(key)
            if cached is None:
                cached = CACHE.load(key)  # (kept by an earlier process: `memo.ResultStore`)
            if cached is None:
                cached, _ = run(
                    prep.statefulset(), scenario, pdbs=prep.pdbs(), budget=budget, **self._kwargs
                )
                CACHE.put(key, cached)
                CACHE.save(key, cached)
            elif budget is not None:  # as if it ran: the same steps with or without the cache
                if cached.shape_search is not None:
                    budget.charge_once(*cached.shape_search)
                budget.spend(cached.steps)
            return rename(cached, prep)
        except BudgetExhausted as exc:
            return self._exhausted(scenario, exc.budget)

    def _exhausted(self, scenario: str, budget: Budget) -> ScenarioResult:
        meta = self._statefulset.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        spec = self._statefulset.get("spec")
        replicas = spec.get("replicas", 1) if isinstance(spec, Mapping) else 1
        return ScenarioResult(
            namespace=str(meta.get("namespace") or "default"),
            name=str(meta.get("name") or ""),
            scenario=scenario,
            kube_version=str(self._kwargs["kube_version"]),
            replicas=replicas if isinstance(replicas, int) else 1,
            recovered=False,
            time_to_recovery_s=None,
            manual_action_required=False,
            max_unavailable=0,
            pods={},
            timeline=[],
            verdict=(
                f"not simulated in full: placing the replicas and running the scenarios took "
                f"more than the {budget.steps} simulation steps this StatefulSet may take "
                f"({STEP_MEANING}); nothing about this scenario is concluded"
            ),
            assumptions=[],
            placement="not simulated in full",
            description="",
            failed_nodes=[],
            placement_basis=None,
            cluster_shape=None,
            not_back_because=None,
            budget_exhausted=True,
            steps=budget.used,
        )


def simulate(
    statefulset: Mapping[str, Any],
    scenario: str,
    *,
    kube_version: str = DEFAULT_KUBE_VERSION,
    pdbs: Sequence[Mapping[str, Any]] = (),
    storage_classes: Sequence[Mapping[str, Any]] = (),
    persistent_volumes: Sequence[Mapping[str, Any]] = (),
    profile: ClusterProfile | None = None,
    feature_gates: Mapping[str, bool] | None = None,
    horizon_s: float = 86400.0,
    use_cache: bool = True,
    max_steps: int | None = None,
) -> ScenarioResult:
    """Run `statefulset` (manifest as plain data) through `scenario`.

    `pdbs` are the PodDisruptionBudgets that select the set's pods; `storage_classes` and
    `persistent_volumes` the objects of those kinds in the input; times in seconds. Results are
    memoised (`memo.py`, LRU of 4096 behaviours, keyed without names and label values), so
    StatefulSets that differ only in names cost one run, and kept between processes when
    `memo.CACHE.store` is set (`persist.py`); `use_cache=False` always runs.
    The returned object is the caller's own copy. To run several scenarios of one set, a
    :class:`Simulator` parses its inputs once. `max_steps` bounds the work (budget.py): past
    it the result has `budget_exhausted` set and concludes nothing.

    Raises ValueError for an unknown scenario, Kubernetes version or feature gate, and for
    more replicas than `workload.MAX_SIMULATED_REPLICAS`.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}")
    return Simulator(
        statefulset,
        kube_version=kube_version,
        pdbs=pdbs,
        storage_classes=storage_classes,
        persistent_volumes=persistent_volumes,
        profile=profile,
        feature_gates=feature_gates,
        horizon_s=horizon_s,
        use_cache=use_cache,
        max_steps=max_steps,
    ).run(scenario)


def cache_clear() -> None:
    """Forget every memoised result (and the hit/miss counts)."""
    CACHE.clear()


def cache_info() -> dict[str, int]:
    """{"hits", "misses", "store_hits", "size", "max_entries"} of the result cache since the
    last clear (`store_hits`: misses that a store kept between processes answered)."""
    return CACHE.info()
