"""What rules quote about the cluster: profile values, version defaults and feature gates.

Messages must give the numbers the simulation used: the configured cluster profile
(``CheckContext.profile_setting``) and the defaults and feature gates of ``--kube-version``
(the simulator's version table, ``embedded_sim/versions.py``, sourced from
pkg/features/kube_features.go and ../shared/docs/k8s-behavior.md A.2 and C).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from ssrisk.embedded_sim.versions import (
    MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD,
    VersionDefaults,
    version_defaults,
)

from ssrisk.rule import CheckContext
from ssrisk.timeline import fmt_duration

from ._podspec import (
    NOT_READY,
    OUT_OF_SERVICE,
    minor,
    node_monitor_grace_period_s,
    tolerated_for_ever,
)

NODE_OUT_OF_SERVICE_VOLUME_DETACH = "NodeOutOfServiceVolumeDetach"
STATEFULSET_AUTO_DELETE_PVC = "StatefulSetAutoDeletePVC"
PDB_UNHEALTHY_POD_EVICTION_POLICY = "PDBUnhealthyPodEvictionPolicy"


@lru_cache(maxsize=256)
def version_facts(kube_version: str) -> VersionDefaults:
    """The model's defaults and gates of ``kube_version`` (an unreadable version reads as
    the minor :func:`minor` gives it): every version fact a rule states comes from there."""
    try:
        return version_defaults(kube_version)
    except ValueError:
        return version_defaults(f"1.{minor(kube_version)}")


def seconds(value: float) -> str:
    """``300.0`` → ``"300 s"``; ``62.5`` → ``"62.5 s"``."""
    number = int(value) if float(value).is_integer() else value
    return f"{number} s"


def gate_enabled(ctx: CheckContext, gate: str) -> bool:
    """Whether feature gate ``gate`` is on for ``ctx.kube_version`` with ``ctx.feature_gates``
    overrides (the simulator's ``version_defaults``; a gate that does not exist yet in that
    release is off)."""
    overrides: Mapping[str, bool] = ctx.feature_gates or {}
    if gate in overrides:
        return bool(overrides[gate])
    return _gate_default(ctx.kube_version, gate)


def _gate_default(kube_version: str, gate: str) -> bool:
    """Whether ``gate`` is on by default in ``kube_version``."""
    return bool(version_facts(kube_version).gates.get(gate, False))


def min_domains_honoured(ctx: CheckContext) -> bool:
    """Whether the scheduler reads ``minDomains`` on ``ctx.kube_version`` (the
    MinDomainsInPodTopologySpread gate: on by default from 1.27) with the run's overrides."""
    return gate_enabled(ctx, MIN_DOMAINS_IN_POD_TOPOLOGY_SPREAD)


def out_of_service_works(ctx: CheckContext) -> bool:
    """Whether the ``node.kubernetes.io/out-of-service`` taint releases pods and volumes:
    NodeOutOfServiceVolumeDetach (KEP-2268) gates both PodGC's force delete of terminating pods
    (k8s: pkg/controller/podgc/gc_controller.go#gcTerminating) and the attach/detach
    controller's immediate detach (reconciler.go#reconcile); alpha and off in 1.25."""
    return gate_enabled(ctx, NODE_OUT_OF_SERVICE_VOLUME_DETACH)


def node_monitor_grace_s(ctx: CheckContext) -> float:
    """kube-controller-manager --node-monitor-grace-period: the profile's, else the version
    default (40 s up to 1.31, 50 s from 1.32)."""
    value = ctx.profile_setting("node_monitor_grace_period_s")
    return float(value) if value else float(node_monitor_grace_period_s(ctx.kube_version))


def default_toleration_s(ctx: CheckContext, taint: str) -> float:
    """The tolerationSeconds DefaultTolerationSeconds adds for ``taint`` (kube-apiserver
    --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds) in the
    cluster profile."""
    if taint == NOT_READY:
        return float(ctx.profile_setting("default_not_ready_toleration_s"))
    return float(ctx.profile_setting("default_unreachable_toleration_s"))


def force_detach_after_s(ctx: CheckContext) -> float | None:
    """When the attach/detach controller force-detaches a volume still mounted on a node that
    is not Ready (maxWaitForUnmountDuration, 6 min), or ``None`` when the profile sets
    --disable-force-detach-on-timeout (a flag from 1.30). Source: k8s: pkg/controller/volume/
    attachdetach/reconciler/reconciler.go#reconcile."""
    flag = version_facts(ctx.kube_version).disable_force_detach_flag_available
    if ctx.profile_setting("disable_force_detach_on_timeout") and flag:
        return None
    return float(ctx.profile_setting("max_wait_for_unmount_s"))


def force_detach_phrase(ctx: CheckContext) -> str:
    """``"6m0s"`` later, or that it never happens with the flag set."""
    after = force_detach_after_s(ctx)
    if after is None:
        return "never (--disable-force-detach-on-timeout is set)"
    return f"{fmt_duration(after)} later"


def out_of_service_tolerated(ctx: CheckContext) -> bool:
    """Whether the pods tolerate ``node.kubernetes.io/out-of-service=nodeshutdown:NoExecute``
    for ever (a catch-all toleration does), so that taint never deletes them."""
    return tolerated_for_ever(ctx.sts, OUT_OF_SERVICE, "nodeshutdown")


def operator_actions(ctx: CheckContext) -> str:
    """The operator actions that let the StatefulSet replace a pod stuck on a lost node, for
    ``ctx.kube_version``: ``"force-deletes the pod, taints the node ... or deletes the
    Node"``. The out-of-service taint is left out where it does nothing: before 1.26
    (NodeOutOfServiceVolumeDetach off) and for pods that tolerate it."""
    if out_of_service_works(ctx) and not out_of_service_tolerated(ctx):
        return (
            "force-deletes the pod, taints the node node.kubernetes.io/out-of-service or deletes "
            "the Node"
        )
    return "force-deletes the pod or deletes the Node"


def out_of_service_off(ctx: CheckContext) -> str:
    """A clause saying why the out-of-service taint does nothing here ("" when it works)."""
    if out_of_service_works(ctx):
        if out_of_service_tolerated(ctx):
            return (
                "a toleration also covers node.kubernetes.io/out-of-service, so that taint "
                "does not delete the pods"
            )
        return ""
    return (
        f"the node.kubernetes.io/out-of-service taint does nothing for it on Kubernetes "
        f"{ctx.kube_version}, where NodeOutOfServiceVolumeDetach (KEP-2268) is off; it is on "
        "by default from 1.26"
    )


#: Where the default of a node's pod capacity comes from.
MAX_PODS_SOURCE = (
    "default 110: pkg/kubelet/apis/config/v1beta1/defaults.go#SetDefaults_KubeletConfiguration"
)


def max_pods_per_node(ctx: CheckContext) -> int:
    """The most pods one node of the cluster profile runs: the largest ``pods`` of its nodes'
    allocatable (``profile: node-allocatable``, default 110, the kubelet's maxPods default,
    :data:`MAX_PODS_SOURCE`). The NodeResourcesFit filter never places more pods on a node
    (k8s: pkg/scheduler/framework/plugins/noderesources/fit.go#fitsRequest, "Too many pods")."""
    default = ctx.profile_setting("node_allocatable")
    nodes = ctx.profile_setting("nodes") or ()
    pods = [getattr(getattr(n, "allocatable", None) or default, "pods", 0) for n in nodes]
    return int(max(pods, default=getattr(default, "pods", 110)))
