"""Cluster profile: nodes, zones, controller timings and the labelled timing assumptions.

Values tagged [A] in ../shared/docs/k8s-behavior.md B.10 are assumptions; each appears in
`ASSUMPTIONS` with its label so results can quote what they rest on.
"""

from __future__ import annotations

from typing import Any

import msgspec

#: kube-apiserver --default-not-ready-toleration-seconds and
#: --default-unreachable-toleration-seconds (plugin/pkg/admission/defaulttolerationseconds)
DEFAULT_TOLERATION_S = 300


class NodeTaint(msgspec.Struct, frozen=True):
    """A taint the cluster puts on its nodes (spec.taints), e.g. a dedicated node pool."""

    key: str
    effect: str  # NoSchedule, PreferNoSchedule or NoExecute
    value: str = ""


class Allocatable(msgspec.Struct, frozen=True):
    """A node's status.allocatable: millicores, bytes and pods."""

    cpu_m: int = 4000
    memory_b: int = 16 * 1024**3
    pods: int = 110

    def __str__(self) -> str:
        cpu = f"{self.cpu_m / 1000:g} CPU" if self.cpu_m % 100 == 0 else f"{self.cpu_m}m CPU"
        gib = self.memory_b / 1024**3
        mem = f"{gib:.4g} GiB" if gib >= 1 else f"{self.memory_b / 1024**2:.4g} MiB"
        return f"{cpu}, {mem} memory, {self.pods} pods"


class NodeSpec(msgspec.Struct, frozen=True):
    """One simulated node.

    `labels` and `taints` are added to the profile's `node_labels` / `node_taints`; the
    well-known hostname and zone labels come from `name` and `zone` (nodes.py). `allocatable`
    None takes the profile's `node_allocatable`.
    """

    name: str
    zone: str
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[NodeTaint, ...] = ()
    allocatable: Allocatable | None = None


def default_nodes(zones: int = 3, nodes_per_zone: int = 2) -> tuple[NodeSpec, ...]:
    """Nodes node-a1, node-a2, node-b1 … in zones zone-a, zone-b, zone-c."""
    out: list[NodeSpec] = []
    for z in range(zones):
        letter = chr(ord("a") + z)
        for n in range(1, nodes_per_zone + 1):
            out.append(NodeSpec(f"node-{letter}{n}", f"zone-{letter}"))
    return tuple(out)


#: The scenario that is a node loss on a platform with each ``ClusterProfile.node_remediation``:
#: nothing replaces the node (``node-loss``), a remediation controller applies the
#: out-of-service taint (``node-loss-out-of-service``) or the Node object is deleted
#: (``node-deleted``).
NODE_LOSS_SCENARIOS: dict[str, str] = {
    "none": "node-loss",
    "out-of-service": "node-loss-out-of-service",
    "node-deletion": "node-deleted",
}


class ClusterProfile(msgspec.Struct, frozen=True):
    """Everything about the simulated cluster that is not in the manifests. All overridable."""

    nodes: tuple[NodeSpec, ...] = msgspec.field(default_factory=default_nodes)
    # Generated nodes (default_nodes: zones × nodes-per-zone) have placeholder names: when the
    # manifest selects hostnames or zones by name, the simulator gives those names to its nodes
    # and zones instead of leaving the set unschedulable (nodes.py). False: the names are real.
    placeholder_names: bool = True
    # False: `nodes` is an assumed shape (default_nodes), which grows by whole nodes per zone
    # when the set's hard constraints (anti-affinity, hostPort, resources, spreading) leave
    # replicas without a node, so the steady state holds every replica (simulation.py); the
    # result says so. True (zones / nodes-per-zone given): the shape is the cluster's.
    shape_stated: bool = False
    # Labels and taints of every node (the node pool the StatefulSet runs on), and each node's
    # allocatable resources. A label key none of them states is assumed to satisfy the
    # manifest's own nodeSelector / node affinity (nodes.py), and the result says so.
    node_labels: tuple[tuple[str, str], ...] = ()
    node_taints: tuple[NodeTaint, ...] = ()
    node_allocatable: Allocatable = msgspec.field(default_factory=Allocatable)

    # --- controller settings (cited defaults) ---
    # kubelet Lease renew interval (docs/reference/node/node-status.md, Heartbeats).
    lease_renew_interval_s: float = 10.0
    # --node-monitor-period (nodelifecyclecontroller.go#AddFlags).
    node_monitor_period_s: float = 5.0
    # None -> per-version default (40 s <=1.31, 50 s >=1.32).
    node_monitor_grace_period_s: float | None = None
    # --node-eviction-rate / --secondary-node-eviction-rate / thresholds (same file).
    node_eviction_rate: float = 0.1
    secondary_node_eviction_rate: float = 0.01
    large_cluster_size_threshold: int = 50
    unhealthy_zone_threshold: float = 0.55
    # kube-apiserver --default-{not-ready,unreachable}-toleration-seconds.
    default_not_ready_toleration_s: float = float(DEFAULT_TOLERATION_S)
    default_unreachable_toleration_s: float = float(DEFAULT_TOLERATION_S)
    # pkg/controller/podgc/gc_controller.go: gcCheckPeriod 20 s, quarantineTime 40 s.
    podgc_period_s: float = 20.0
    podgc_quarantine_s: float = 40.0
    # reconciler.go maxWaitForUnmountDuration (6 min).
    max_wait_for_unmount_s: float = 360.0
    # kube-controller-manager --disable-force-detach-on-timeout (>=1.30, default false).
    disable_force_detach_on_timeout: bool = False
    # kubectl drain: 429 retry every 5 s (drain.go#evictPods), poll deletion every 1 s.
    drain_evict_retry_s: float = 5.0
    drain_poll_s: float = 1.0
    # kubectl drain --delete-emptydir-data (default false: pods with emptyDir block the drain).
    drain_delete_emptydir_data: bool = False
    # Taint queue period (rate_limited_queue.go / NodeEvictionPeriod 100 ms).
    taint_queue_period_s: float = 0.1

    # --- timing assumptions [A] (k8s-behavior.md B.10) ---
    nlc_detection_offset_s: float = -2.5  # typical T_u = G - 2.5 s; range [G-10, G+5]
    podgc_phase_s: float = 10.0  # PodGC passes at phase + k*period
    controller_reaction_s: float = 0.5
    adc_reaction_s: float = 0.1
    scheduling_s: float = 1.0
    attach_s: float = 15.0
    detach_s: float = 15.0
    mount_s: float = 2.0
    image_pull_s: float = 0.0
    app_start_to_ready_s: float = 10.0
    app_shutdown_s: float = 5.0
    prestop_hook_s: float = 0.0
    kubelet_cleanup_s: float = 0.5
    # The attach/detach controller detaches a cleanly unmounted volume only once the node's
    # status no longer lists it in volumesInUse (reconciler.go#reconcile, MountedByNode); the
    # kubelet reports that on its next status update (nodeStatusUpdateFrequency 10 s): half of
    # it on average. A pod scheduled to the same node before then keeps the volume attached.
    volumes_in_use_report_s: float = 5.0
    kubelet_nodestatus_s: float = 0.5
    # A returning kubelet acts on its pods this long after it starts; with kubelet_cleanup_s
    # the pod of a rebooted node is gone 10 s after the return (k8s-behavior.md B.9.1).
    kubelet_return_sync_s: float = 9.5

    # --- scenario parameters [A] ---
    out_of_service_after_s: float = 600.0
    # node-loss only: the node comes back (kubelet restarts / partition heals) at this time
    # (None = it never returns). k8s-behavior.md B.9.1. A return is an external event like the
    # out-of-service taint: the result counts as recovered without an operator on the
    # Kubernetes side, and the verdict says the recovery needed the node back.
    node_returns_after_s: float | None = None
    # True: the node rebooted (power off), containers are gone when the kubelet returns.
    # False (default): kubelet stop or network partition, containers kept running.
    node_returns_rebooted: bool = False
    node_deleted_after_s: float = 120.0
    # How the platform replaces a node that stopped heartbeating, without an operator:
    # "none" (nothing does: the node-loss scenario), "out-of-service" (remediation applies
    # node.kubernetes.io/out-of-service at out_of_service_after_s: node-loss-out-of-service)
    # or "node-deletion" (the Node object is deleted at node_deleted_after_s: node-deleted).
    # Rules read it to pick the scenario that is this cluster's node loss; the scenarios
    # themselves do not depend on it.
    node_remediation: str = "none"
    revert_after_s: float = 600.0
    shutdown_grace_period_s: float = 30.0
    shutdown_grace_period_critical_pods_s: float = 10.0
    # zone-loss: delete the lost zone's Node objects after this many seconds (None = kept).
    zone_loss_nodes_deleted_after_s: float | None = None
    # Storage used when the manifest names no class and no default class is supplied.
    assume_default_storage: str = "zonal"  # "zonal" | "network" | "local"
    assume_default_binding: str = "WaitForFirstConsumer"
    # The name of the cluster's default StorageClass that assume_default_storage /
    # assume_default_binding describe ("" unknown: ssrisk profile writes it).
    default_storage_class: str = ""

    def with_overrides(self, **kw: Any) -> ClusterProfile:
        return msgspec.structs.replace(self, **kw)

    @property
    def cluster_source(self) -> str:
        """Where the nodes come from (result.ClusterShape.source): ``"profile"`` (listed one
        by one, as ssrisk profile writes them), ``"configured"`` (zones and nodes-per-zone
        given) or ``"assumed"``."""
        if not self.placeholder_names:
            return "profile"
        return "configured" if self.shape_stated else "assumed"

    @property
    def node_loss_scenario(self) -> str:
        """The scenario that is a node loss on this cluster (:data:`NODE_LOSS_SCENARIOS` of
        ``node_remediation``; ``"node-loss"`` for an unknown value)."""
        return NODE_LOSS_SCENARIOS.get(self.node_remediation, "node-loss")


# Labelled assumptions (shown in every result, formatted with the profile's values).
ASSUMPTIONS: tuple[tuple[str, str], ...] = (
    ("nlc_detection_offset_s", "node marked Unknown at G{v:+g} s (typical; range G-10 … G+5)"),
    ("controller_reaction_s", "controller reaction (informer + workqueue) {v:g} s"),
    ("scheduling_s", "scheduling a pod takes {v:g} s"),
    ("attach_s", "CSI attach {v:g} s"),
    ("detach_s", "CSI detach {v:g} s"),
    ("mount_s", "volume mount {v:g} s"),
    ("image_pull_s", "image pull {v:g} s (image cached on the node)"),
    (
        "app_start_to_ready_s",
        "app ready {v:g} s after its containers start (with a readinessProbe, Ready at the "
        "first probe at or after that and initialDelaySeconds; without one, Ready at start)",
    ),
    ("app_shutdown_s", "app shutdown on SIGTERM min({v:g} s, terminationGracePeriodSeconds)"),
    ("kubelet_cleanup_s", "kubelet unmount + object removal after containers stop {v:g} s"),
    (
        "volumes_in_use_report_s",
        "the kubelet reports an unmounted volume out of volumesInUse {v:g} s later",
    ),
    ("podgc_phase_s", "PodGC passes at {v:g} s + k×20 s"),
    ("node_allocatable", "each node has {v} allocatable for these pods (NodeResourcesFit)"),
)

# Shown only when the scenario has the node come back (node_returns_after_s).
RETURN_ASSUMPTIONS: tuple[tuple[str, str], ...] = (
    ("kubelet_nodestatus_s", "a returning kubelet posts Ready=True {v:g} s after it starts"),
    (
        "kubelet_return_sync_s",
        "a returning kubelet acts on its pods {v:g} s after it starts (terminating pods then "
        "get their full deletion grace period)",
    ),
)


def assumption_lines(p: ClusterProfile, node_returns: bool = False) -> list[str]:
    """The labelled assumptions with this profile's values (node-return ones on request)."""
    table = ASSUMPTIONS + (RETURN_ASSUMPTIONS if node_returns else ())
    out = []
    for name, fmt in table:
        if name == "node_allocatable" and not p.placeholder_names:
            out.append("each node has the allocatable the profile lists for it (NodeResourcesFit)")
            continue
        out.append(fmt.format(v=getattr(p, name)))
    return out
