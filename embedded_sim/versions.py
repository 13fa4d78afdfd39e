"""Kubernetes versions as data: defaults and feature gates per minor (and patch) release.

Every value below comes from ../shared/docs/k8s-behavior.md sections A.2, C, E.1 and E.2,
which cite kubernetes/kubernetes `pkg/features/kube_features.go`,
`cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go#AddFlags` and the
kubernetes/website feature-gate pages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import msgspec

MIN_MINOR = 25
MAX_MINOR = 37
SUPPORTED_VERSIONS: tuple[str, ...] = tuple(f"1.{m}" for m in range(MIN_MINOR, MAX_MINOR + 1))
DEFAULT_KUBE_VERSION = "1.37"

# Gate names the simulator understands (overridable per run).
MAX_UNAVAILABLE_STATEFULSET = "MaxUnavailableStatefulSet"
NODE_OUT_OF_SERVICE_VOLUME_DETACH = "NodeOutOfServiceVolumeDetach"
STATEFULSET_AUTO_DELETE_PVC = "StatefulSetAutoDeletePVC"
PDB_UNHEALTHY_POD_EVICTION_POLICY = "PDBUnhealthyPodEvictionPolicy"
STATEFULSET_START_ORDINAL = "StatefulSetStartOrdinal"
STATEFULSET_RECREATE_STRATEGY = "StatefulSetRecreateStrategy"
POD_DISRUPTION_CONDITIONS = "PodDisruptionConditions"
# Gates the API server's validation reads (ssrisk.validation).
POD_LIFECYCLE_SLEEP_ACTION = "PodLifecycleSleepAction"
POD_LIFECYCLE_SLEEP_ACTION_ALLOW_ZERO = "PodLifecycleSleepActionAllowZero"
SIDECAR_CONTAINERS = "SidecarContainers"
TAINT_TOLERATION_COMPARISON_OPERATORS = "TaintTolerationComparisonOperators"
# Gates the scheduler's PodTopologySpread reads (embedded_sim/scheduler/pod_topology_spread.py).
MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD = "MinDomainsInPodTopologySpread"
NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD = "NodeInclusionPolicyInPodTopologySpread"

KNOWN_GATES: tuple[str, ...] = (
    MAX_UNAVAILABLE_STATEFULSET,
    NODE_OUT_OF_SERVICE_VOLUME_DETACH,
    STATEFULSET_AUTO_DELETE_PVC,
    PDB_UNHEALTHY_POD_EVICTION_POLICY,
    STATEFULSET_START_ORDINAL,
    STATEFULSET_RECREATE_STRATEGY,
    POD_DISRUPTION_CONDITIONS,
    POD_LIFECYCLE_SLEEP_ACTION,
    POD_LIFECYCLE_SLEEP_ACTION_ALLOW_ZERO,
    SIDECAR_CONTAINERS,
    TAINT_TOLERATION_COMPARISON_OPERATORS,
    MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD,
    NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD,
)

_VERSION_RE = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?\s*$")


class KubeVersion(msgspec.Struct, frozen=True, order=True):
    """A Kubernetes release, `1.<minor>[.<patch>]`; patch None means "x.y" without a patch."""

    major: int
    minor: int
    patch: int | None = None

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}"
        return base if self.patch is None else f"{base}.{self.patch}"

    @property
    def minor_str(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def latest_patch(self) -> bool:
        """True for "x.y" without a patch, read as the latest patch of that minor release (a
        cluster runs a current patch; patch-dependent defaults take their last value)."""
        return self.patch is None


def parse_kube_version(value: str | KubeVersion) -> KubeVersion:
    """Parse "1.34", "1.35.2" or "v1.35.2"; ValueError for anything outside 1.25 … 1.37."""
    if isinstance(value, KubeVersion):
        kv = value
    else:
        m = _VERSION_RE.match(str(value))
        if m is None:
            raise ValueError(
                f"unknown Kubernetes version {value!r}: expected '1.<minor>' or "
                f"'1.<minor>.<patch>', supported {SUPPORTED_VERSIONS[0]} … {SUPPORTED_VERSIONS[-1]}"
            )
        kv = KubeVersion(
            int(m.group(1)), int(m.group(2)), None if m.group(3) is None else int(m.group(3))
        )
    if kv.major != 1 or not (MIN_MINOR <= kv.minor <= MAX_MINOR):
        raise ValueError(
            f"unsupported Kubernetes version {str(value)!r}: the simulator covers "
            f"{SUPPORTED_VERSIONS[0]} … {SUPPORTED_VERSIONS[-1]}"
        )
    return kv


class VersionDefaults(msgspec.Struct, frozen=True):
    """Control-plane defaults and feature gates of one release."""

    version: KubeVersion
    # kube-controller-manager --node-monitor-grace-period: 40 s up to 1.31, 50 s from 1.32
    # (kubernetes/kubernetes#126287; cmd/kube-controller-manager/app/options/
    # nodelifecyclecontroller.go#AddFlags).
    node_monitor_grace_period_s: float
    gates: Mapping[str, bool]
    # --disable-force-detach-on-timeout exists from 1.30 (#120344), default false.
    disable_force_detach_flag_available: bool
    # Source path of the taint eviction logic: inside the NLC up to 1.28, a separate
    # controller from 1.29 (KEP-3902).
    taint_eviction_source: str
    maxunavailable_counting: str  # "1.35" or "1.37" (k8s-behavior.md E.3.1)
    # The rolling-update step waits for a replaced pod to be *available* (Ready for
    # minReadySeconds) only from 1.34: "Statefulset now respects minReadySeconds"
    # (kubernetes/kubernetes#130909, CHANGELOG-1.34.md, v1.34.0-beta.0). Before, it waited for
    # Ready only (isHealthy), so a Parallel set (whose replica pass does not block on
    # availability) rolled on as soon as the new pod was Ready.
    update_waits_for_min_ready: bool = True
    # VolumeBinding's reason for a node a bound volume's node affinity excludes
    # (volumebinding/binder.go, ErrReasonNodeConflict): "node(s) had volume node affinity
    # conflict" up to 1.32, "node(s) didn't match PersistentVolume's node affinity" from 1.33
    # (kubernetes/kubernetes#129887, merged 2025-01-29 for v1.33).
    volume_conflict_reason: str = "node(s) didn't match PersistentVolume's node affinity"

    @property
    def min_domains_honoured(self) -> bool:
        """Whether the scheduler reads a topology spread constraint's minDomains
        (MinDomainsInPodTopologySpread: on by default from 1.27)."""
        return bool(self.gates.get(MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD, False))

    @property
    def node_inclusion_policies(self) -> bool:
        """Whether the scheduler reads nodeAffinityPolicy / nodeTaintsPolicy
        (NodeInclusionPolicyInPodTopologySpread: on by default from 1.26)."""
        return bool(self.gates.get(NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD, False))


#: ``(gate, first minor that has it, first minor it is on by default or None)`` for the gates
#: whose default changes only at minor releases (pkg/features/kube_features.go):
GATE_STAGES: tuple[tuple[str, int, int | None], ...] = (
    # KEP-2268: alpha (off) 1.25, beta-on 1.26, GA 1.28.
    (NODE_OUT_OF_SERVICE_VOLUME_DETACH, MIN_MINOR, 26),
    # KEP-1847: beta-on from 1.27.
    (STATEFULSET_AUTO_DELETE_PVC, MIN_MINOR, 27),
    # KEP-3017: n/a 1.25, alpha-off 1.26, beta-on 1.27.
    (PDB_UNHEALTHY_POD_EVICTION_POLICY, 26, 27),
    # KEP-3335: n/a 1.25, alpha-off 1.26, beta-on 1.27.
    (STATEFULSET_START_ORDINAL, 26, 27),
    # KEP-3541: n/a up to 1.36, alpha-off 1.37.
    (STATEFULSET_RECREATE_STRATEGY, 37, None),
    # KEP-3329: alpha-off 1.25, beta-on 1.26, GA 1.31.
    (POD_DISRUPTION_CONDITIONS, MIN_MINOR, 26),
    # KEP-3960 (preStop/postStart sleep action): alpha-off 1.29, beta-on 1.30, GA 1.34.
    (POD_LIFECYCLE_SLEEP_ACTION, 29, 30),
    # KEP-4818 (a zero sleep): alpha-off 1.32, beta-on 1.33, GA 1.34.
    (POD_LIFECYCLE_SLEEP_ACTION_ALLOW_ZERO, 32, 33),
    # KEP-753 (restartable init containers): alpha-off 1.28, beta-on 1.29, GA 1.33.
    (SIDECAR_CONTAINERS, 28, 29),
    # KEP-5471 (Lt and Gt tolerations): alpha-off from 1.35.
    (TAINT_TOLERATION_COMPARISON_OPERATORS, 35, None),
    # KEP-3022 (minDomains): alpha-off 1.24, beta-off 1.25, beta-on 1.27, GA 1.30.
    (MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD, MIN_MINOR, 27),
    # KEP-3094 (nodeAffinityPolicy / nodeTaintsPolicy): alpha-off 1.25, beta-on 1.26, GA 1.33.
    (NODE_INCLUSION_POLICY_IN_POD_TOPOLOGY_SPREAD, MIN_MINOR, 26),
)


def _gates(kv: KubeVersion) -> dict[str, bool]:
    m = kv.minor
    g: dict[str, bool] = {}
    # KEP-961: off 1.25–1.34, on 1.35.0–1.35.3, off 1.35.4+ ("Fixes a 1.35 regression in
    # StatefulSet Parallel pod management by disabling the MaxUnavailableStatefulSet feature by
    # default", #137926, CHANGELOG-1.35.md 1.35.4) and 1.36 (#137904), on again 1.37 (#139466)
    # with the #137666 counting. A bare "1.35" is the latest 1.35 patch: off.
    if m <= 34 or m == 36:
        g[MAX_UNAVAILABLE_STATEFULSET] = False
    elif m == 35:
        g[MAX_UNAVAILABLE_STATEFULSET] = kv.patch is not None and kv.patch <= 3
    else:
        g[MAX_UNAVAILABLE_STATEFULSET] = True
    for gate, exists_from, on_from in GATE_STAGES:
        if m >= exists_from:
            g[gate] = on_from is not None and m >= on_from
    return g


def version_defaults(
    version: str | KubeVersion, overrides: Mapping[str, bool] | None = None
) -> VersionDefaults:
    """Defaults for `version`, gates overridden by `overrides` (ValueError if unknown)."""
    kv = parse_kube_version(version)
    gates = _gates(kv)
    for name, val in (overrides or {}).items():
        if name not in KNOWN_GATES:
            raise ValueError(
                f"unknown feature gate {name!r}; the simulator models: {', '.join(KNOWN_GATES)}"
            )
        gates[name] = bool(val)
    grace = 40.0 if kv.minor <= 31 else 50.0
    if kv.minor <= 28:
        te_src = "pkg/controller/nodelifecycle/scheduler/taint_manager.go#processPodOnNode"
    else:
        te_src = "pkg/controller/tainteviction/taint_eviction.go#processPodOnNode"
    # E.3.1: gate on + 1.24–1.36 -> 1.35 counting; 1.37+ -> 1.37 counting (#137666).
    counting = "1.37" if kv.minor >= 37 else "1.35"
    return VersionDefaults(
        version=kv,
        node_monitor_grace_period_s=grace,
        gates=gates,
        disable_force_detach_flag_available=kv.minor >= 30,
        taint_eviction_source=te_src,
        maxunavailable_counting=counting,
        update_waits_for_min_ready=kv.minor >= 34,
        volume_conflict_reason=(
            "node(s) didn't match PersistentVolume's node affinity"
            if kv.minor >= 33
            else "node(s) had volume node affinity conflict"
        ),
    )
