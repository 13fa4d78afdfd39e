"""Embedded discrete-event simulator of the Kubernetes control plane around one StatefulSet.

`simulate()` runs one StatefulSet manifest through one failure scenario and returns a
`ScenarioResult` whose timeline cites, for every step, the Kubernetes source that causes it.
Standard library only; deterministic; bounded (horizon and event count).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .profile import ClusterProfile, NodeSpec, default_nodes
from .result import PodResult, ScenarioResult, TimelineEvent
from .scenarios import DESCRIPTIONS, SCENARIOS, run
from .versions import (
    DEFAULT_KUBE_VERSION,
    KNOWN_GATES,
    SUPPORTED_VERSIONS,
    KubeVersion,
    parse_kube_version,
    version_defaults,
)

__all__ = [
    "DEFAULT_KUBE_VERSION",
    "DESCRIPTIONS",
    "KNOWN_GATES",
    "SCENARIOS",
    "SUPPORTED_VERSIONS",
    "ClusterProfile",
    "KubeVersion",
    "NodeSpec",
    "PodResult",
    "ScenarioResult",
    "TimelineEvent",
    "default_nodes",
    "parse_kube_version",
    "simulate",
    "version_defaults",
]


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
) -> ScenarioResult:
    """Run `statefulset` (manifest as plain data) through `scenario`.

    Raises ValueError for an unknown scenario, Kubernetes version or feature gate.
    """
    result, _ = run(
        statefulset,
        scenario,
        kube_version=kube_version,
        pdbs=pdbs,
        storage_classes=storage_classes,
        persistent_volumes=persistent_volumes,
        profile=profile,
        feature_gates=feature_gates,
        horizon_s=horizon_s,
    )
    return result
