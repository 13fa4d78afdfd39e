"""Wiring of the simulated control plane around one StatefulSet, plus availability tracking."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .apiserver import ApiServer
from .attach_detach import AttachDetachController
from .budget import Budget
from .clock import EventLoop
from .cluster import Cluster, Node, Pod, Taint, Volume
from .disruption import DisruptionBudget
from .drain import Drain
from .events import Timeline
from .garbage_collector import GarbageCollector
from .kubelet import Kubelet
from .node_lifecycle import NodeLifecycleController
from .nodes import BuiltNode, Fold, build_nodes, fold_nodes, named_nodes
from .podgc import PodGC
from .profile import ClusterProfile, default_nodes
from .result import ClusterShape
from .scheduler import Scheduler
from .statefulset_controller import StatefulSetController
from .storage import ClaimStorage, resolve_claim
from .taint_eviction import TaintEvictionController
from .versions import version_defaults
from .workload import ClaimTemplate, parse_statefulset


def resolve_storage(
    ct: ClaimTemplate,
    classes: Sequence[Mapping[str, Any]],
    pvs: Sequence[Mapping[str, Any]],
    p: ClusterProfile,
) -> ClaimStorage:
    """How the volumes of claim template `ct` behave (storage.py#resolve_claim)."""
    return resolve_claim(ct.storage_class_name, ct.access_modes, ct.name, classes, pvs, p)


#: Nodes per zone the assumed shape grew to, and the steps the search took, by placement key
#: (Simulation._grow_shape): every scenario of a set starts from the same steady state, so the
#: search runs once per set (and a later set is charged the same steps, budget.py).
_GROWN_SHAPES: dict[tuple[object, ...], tuple[int, int]] = {}
#: The budget of a simulation given none: counts steps, never runs out.
UNLIMITED_STEPS = 2**62


class Simulation:
    """One StatefulSet in a simulated cluster. Components talk through this object."""

    def __init__(
        self,
        statefulset: Mapping[str, Any],
        *,
        kube_version: str,
        pdbs: Sequence[Mapping[str, Any]] = (),
        storage_classes: Sequence[Mapping[str, Any]] = (),
        persistent_volumes: Sequence[Mapping[str, Any]] = (),
        profile: ClusterProfile | None = None,
        feature_gates: Mapping[str, bool] | None = None,
        horizon_s: float = 86400.0,
        instant_delete: bool = False,
        manual_sync: bool = False,
        budget: Budget | None = None,
    ) -> None:
        self.profile = profile or ClusterProfile()
        self.budget = budget if budget is not None else Budget(UNLIMITED_STEPS)
        # the assumed shape's search this run used (placement key, its steps), and the steps
        # charged for it here: a set pays for the search once, whichever scenario ran it
        self.shape_search: tuple[object, int] | None = None
        self.shape_search_charged = 0
        self.vd = version_defaults(kube_version, feature_gates)
        self.kube_version = str(kube_version).strip().lstrip("v")
        p = self.profile
        self.wl = parse_statefulset(
            statefulset if isinstance(statefulset, Mapping) else {},
            p.default_not_ready_toleration_s,
            p.default_unreachable_toleration_s,
        )
        self.instant_delete = instant_delete
        self.manual_sync = manual_sync
        self.loop = EventLoop(horizon_s)
        self.timeline = Timeline()
        self.cluster = Cluster()
        built, node_notes = build_nodes(p, self.wl)
        self.folds: list[Fold] = []
        if not p.placeholder_names:  # the profile's nodes: pools of identical nodes
            most_domains = max((r.min_domains for r in self.wl.hard_rules), default=1)
            keep = max(self.wl.replicas + 2, most_domains)
            built, self.folds = fold_nodes(built, keep, named_nodes(self.wl))
        self._add_nodes(built)
        self.grace_s = (
            p.node_monitor_grace_period_s
            if p.node_monitor_grace_period_s is not None
            else self.vd.node_monitor_grace_period_s
        )
        self.templates: dict[str, bool] = {"rev-1": False}
        self.notes: list[str] = list(node_notes)
        if self.folds:
            dropped = sum(f.dropped for f in self.folds)
            self.notes.append(
                f"{dropped} of the profile's nodes are not simulated one by one: each has the "
                "zone, labels, taints and allocatable of a simulated node, so which of them a "
                "pod runs on does not change the outcome; the scheduler's messages count them"
            )
        self.not_simulated = self._unsimulated_terms(built)
        if self.wl.foreign_affinity_terms:
            self.notes.append(
                f"{self.wl.foreign_affinity_terms} required (anti-)affinity term(s) about other "
                "workloads' pods are not simulated (only this StatefulSet's pods are placed)"
            )
        self.storage: list[ClaimStorage] = []
        for ct in self.wl.claim_templates:
            st = resolve_storage(ct, storage_classes, persistent_volumes, p)
            self.storage.append(st)
            if st.note:
                self.notes.append(st.note)
            if st.topology == "hostpath":
                self.notes.append(
                    f"claim template {ct.name!r}: {st.basis}: nothing keeps a pod on the node "
                    "that holds its data; a replacement elsewhere starts with an empty directory"
                )
        budgets = [DisruptionBudget.from_object(x) for x in pdbs if isinstance(x, Mapping)]
        # (a budget the API server would reject is not there; none reaches here from check)
        self.api = ApiServer(self, [b for b in budgets if b.readable])
        self.kubelet = Kubelet(self)
        self.nlc = NodeLifecycleController(self)
        self.taints = TaintEvictionController(self)
        self.podgc = PodGC(self)
        self.scheduler = Scheduler(self)
        self.adc = AttachDetachController(self)
        self.drain = Drain(self)
        self.stsc = StatefulSetController(self)
        self.gc = GarbageCollector(self)
        self.placement = ""
        self.initial_shape: ClusterShape | None = None
        self.initial_nodes: dict[int, str] = {}
        self.failed_nodes: list[str] = []
        self.observers: list[Callable[[Simulation], None]] = []
        # availability tracking
        self.goal: Callable[[], bool] = lambda: True
        self._avail: dict[int, bool] = {}
        self._down_since: dict[int, float] = {}
        self._down_total: dict[int, float] = {}
        self._all_ok_since: float | None = 0.0
        self.max_unavailable = 0
        # Ordinals no node accepted in the steady state: Pending from the start, left out of
        # max_unavailable (which counts replicas a fault took).
        self.baseline_down: set[int] = set()
        self.loop.after_step = self._after_step

    # --- services used by the components -------------------------------------------------
    @property
    def now(self) -> float:
        return self.loop.now

    def record(self, pod: str | None, kind: str, event: str, source: str) -> None:
        self.timeline.add(self.now, pod, kind, event, source)

    def changed(self) -> None:
        self.cluster.touch()
        self.drain.on_change()

    def loop_has_other_work(self) -> bool:
        return any(not e.cancelled and e.label != "drain-retry" for e in self.loop._heap)

    def is_broken(self, revision: str) -> bool:
        return self.templates.get(revision, False)

    def start_to_ready_s(self) -> float:
        """Seconds from container start to Ready.

        pkg/kubelet/prober/worker.go: without a readinessProbe a running container counts as
        ready at once; with one, the probe runs every periodSeconds from the container's start,
        skips results before initialDelaySeconds, and passes only once the application is up
        (profile.app_start_to_ready_s, an assumption): the first tick k·periodSeconds at or
        after both.
        """
        delay = self.wl.start_to_ready_s
        period = self.wl.readiness_period_s
        if delay is None or period is None:
            return 0.0
        wanted = max(delay, self.profile.app_start_to_ready_s)
        return math.ceil(round(wanted / period, 6)) * period

    def ensure_claims(self, ordinal: int, source: str) -> None:
        """Recreate missing PVCs of an ordinal.

        stateful_pod_control.go#createMissingPersistentVolumeClaims, called by
        stateful_set_control.go#processReplica for a Pending pod.
        """
        for ct in self.wl.claim_templates:
            claim = f"{ct.name}-{self.wl.name}-{ordinal}"
            vol = self.cluster.volumes.get(claim)
            if vol is None or vol.deleted:
                self.claims_for(ordinal)
                self.record(
                    self.wl.pod_name(ordinal),
                    "pvc-created",
                    f"PVC {claim} recreated for the Pending pod",
                    source,
                )

    def claims_for(self, ordinal: int) -> tuple[str, ...]:
        """PVC names of an ordinal (`<template>-<set>-<ordinal>`), created when missing."""
        out: list[str] = []
        for ct, st in zip(self.wl.claim_templates, self.storage, strict=False):
            claim = f"{ct.name}-{self.wl.name}-{ordinal}"
            vol = self.cluster.volumes.get(claim)
            if vol is None or vol.deleted:
                vol = Volume(
                    claim, ordinal, ct.access_modes, st.topology, st.binding, st.class_name, ct.name
                )
                if st.topology == "zonal" and st.binding == "Immediate":
                    # Immediate binding provisions without regard to the pod [A: first zone].
                    first = next(iter(self.cluster.nodes.values()), None)
                    vol.zone = first.zone if first else None
                self.cluster.volumes[claim] = vol
            out.append(claim)
        return tuple(out)

    # --- set-up ----------------------------------------------------------------------
    def steady_state(self, fault: str | None = None) -> None:
        """All replicas Running, Ready and available at t=0 on the worst allowed placement
        for a ``fault`` of one node or one zone (Scheduler.initial_placement); a replica that
        fits no node is Pending from the start (scheduler.PlacementFacts)."""
        ords = self.stsc.ordinals()
        placement, text = self.scheduler.initial_placement(ords, fault)
        if self.scheduler.facts.unplaced and not self.profile.shape_stated:
            placement, text = self._grow_shape(ords, placement, text)
        self.placement = text
        self.initial_shape = self.scheduler.cluster_shape()
        self.initial_nodes = {o: n for o in ords if (n := placement.get(o)) is not None}
        for o in ords:
            node_name = placement.get(o)
            pod = Pod(
                name=self.wl.pod_name(o),
                ordinal=o,
                revision="rev-1",
                uid=self.cluster.next_uid(),
                created_s=-3600.0,
                claims=self.claims_for(o),
            )
            self.cluster.pods[pod.name] = pod
            if node_name is None:
                self.baseline_down.add(o)  # Pending: no node takes it
                continue
            node = self.cluster.nodes[node_name]
            pod.node = node.name
            pod.phase = "Running"
            pod.ready = True
            pod.ready_since_s = -3600.0
            pod.containers_running = True
            for c in pod.claims:
                vol = self.cluster.volumes[c]
                if vol.topology == "zonal":
                    vol.zone = node.zone
                if vol.topology == "local":
                    vol.node = node.name
                if vol.needs_attach:
                    vol.attached_to = node.name
        for o in sorted(self.baseline_down):
            pod = self.cluster.pods[self.wl.pod_name(o)]
            _, reasons = self.scheduler.feasible(pod)
            self.scheduler.record_pending(pod, reasons)
        self._observe()

    def _grow_shape(
        self, ords: list[int], placement: dict[int, str | None], text: str
    ) -> tuple[dict[int, str | None], str]:
        """The assumed cluster shape, grown by whole nodes per zone (up to one node per replica
        in every zone) to the fewest that place as many replicas as any size does: the default
        3 zones × 2 nodes is a shape, not the user's inventory, and a cluster whose set cannot
        even start is a different problem than failover. The result notes the shape used.
        Sizes are tried by doubling, then bisection: a few placements, not one per size."""
        p = self.profile
        zones = list(dict.fromkeys(ns.zone for ns in p.nodes))
        per_zone = max(sum(1 for ns in p.nodes if ns.zone == z) for z in zones) if zones else 0
        if not p.placeholder_names or p.nodes != default_nodes(len(zones), per_zone):
            return placement, text  # nodes given one by one: the user's inventory
        key = self._placement_key(ords)
        grown = _GROWN_SHAPES.get(key)
        if grown is not None:
            npz, steps = grown
            self.shape_search = (key, steps)
            before = self.budget.used
            self.budget.charge_once(key, steps)  # what the search cost, once per budget
            self.shape_search_charged = self.budget.used - before
            if npz != per_zone:
                self._use_shape(p, len(zones), npz)
                placement, text = self.scheduler.initial_placement(ords)
                self._note_grown(len(zones), npz)
            return placement, text
        tried: dict[int, int] = {per_zone: len(self.scheduler.facts.unplaced)}
        searching_from = self.budget.used

        def unplaced_with(npz: int) -> int:
            if npz not in tried:
                self._use_shape(p, len(zones), npz)
                self.scheduler.initial_placement(ords)
                tried[npz] = len(self.scheduler.facts.unplaced)
            return tried[npz]

        limit = max(per_zone, len(ords))
        lo, hi = per_zone, per_zone
        while hi < limit and unplaced_with(hi) > 0:
            lo, hi = hi, min(limit, hi * 2)
        best = unplaced_with(hi)
        while hi - lo > 1:  # the fewest nodes per zone that still place as many
            mid = (lo + hi) // 2
            if unplaced_with(mid) <= best:
                hi = mid
            else:
                lo = mid
        npz = hi if best < tried[per_zone] else per_zone
        if len(_GROWN_SHAPES) >= 1024:
            _GROWN_SHAPES.clear()
        _GROWN_SHAPES[key] = (npz, self.budget.used - searching_from)
        self.shape_search = (key, self.budget.used - searching_from)
        self.shape_search_charged = self.budget.used - searching_from
        self.budget.charged.add(key)
        self._use_shape(p, len(zones), npz)
        placement, text = self.scheduler.initial_placement(ords)
        if npz != per_zone:
            self._note_grown(len(zones), npz)
        return placement, text

    def _use_shape(self, p: ClusterProfile, zones: int, per_zone: int) -> None:
        self.cluster.nodes = {}
        built, _ = build_nodes(p.with_overrides(nodes=default_nodes(zones, per_zone)), self.wl)
        self._add_nodes(built)

    def _note_grown(self, zones: int, per_zone: int) -> None:
        self.notes.append(
            f"the assumed cluster shape was grown to {zones} zones × {per_zone} nodes so that "
            "the hard scheduling constraints place every replica they can; give the real shape "
            "with the profile's zones and nodes-per-zone"
        )

    def _placement_key(self, ords: list[int]) -> tuple[object, ...]:
        """Everything the steady-state placement depends on (not names)."""
        wl = self.wl
        return (
            self.profile,
            len(ords),
            wl.hard_rules,
            tuple(sorted(wl.node_selector.items())),
            wl.node_name,
            wl.node_affinity_terms,
            wl.host_ports,
            wl.requests,
            wl.tolerations,
        )

    def _unsimulated_terms(self, built: list[BuiltNode]) -> tuple[str, ...]:
        """The hard placement terms and parts of terms not simulated, in words, for the
        verdict: terms about other workloads' pods, label-key fields (workload.py
        #_unmodelled_terms), and the terms whose topology key no node of an assumed cluster
        carries, which are left out and noted: the assumed nodes only carry the hostname and
        zone labels, so such a term (a rack label) says nothing about them. On nodes given one
        by one (a profile made from the cluster) those terms stay and act as Kubernetes acts on
        a node without the label (scheduler/pod_topology_spread.py, inter_pod_affinity.py)."""
        said: list[str] = []
        if self.wl.foreign_affinity_terms:
            said.append(
                f"{self.wl.foreign_affinity_terms} required (anti-)affinity term(s) about "
                "other workloads' pods"
            )
        said.extend(self.wl.unmodelled_terms)
        if self.profile.placeholder_names:
            carried = {k for b in built for k in b.labels}
            left = [r for r in self.wl.hard_rules if r.topology_key not in carried]
            if left:
                self.wl.hard_rules = tuple(r for r in self.wl.hard_rules if r not in left)
                keyed = list(dict.fromkeys(str(r) for r in left))
                said.extend(keyed)
                self.notes.append(
                    f"not simulated: {'; '.join(keyed)} (no node of the assumed cluster "
                    "carries that label; give the nodes' labels in the profile, e.g. with "
                    "ssrisk profile)"
                )
        return tuple(said)

    def _add_nodes(self, built: list[BuiltNode]) -> None:
        for b in built:
            self.cluster.nodes[b.name] = Node(
                b.name,
                b.zone,
                labels=dict(b.labels),
                allocatable=b.allocatable,
                taints=[Taint(t.key, t.effect, t.value, -3600.0) for t in b.taints],
            )

    def lose_node(self, node: Node, why: str, source: str) -> None:
        node.alive = False
        node.lost_at_s = self.now
        self.failed_nodes.append(node.name)
        on = [p.name for p in self.cluster.pods_on(node.name)]
        self.record(
            None,
            "fault",
            f"{node.name} ({node.zone_text}) {why}; pods on it: {', '.join(on) or 'none'}",
            source,
        )
        self.changed()
        self.nlc.node_lost(node)

    def return_node(self, node: Node, rebooted: bool, source: str) -> None:
        """The kubelet of a lost node runs again and reaches the API server (B.9.1)."""
        if node.alive or node.deleted:
            return
        node.alive = True
        node.lost_at_s = None
        how = "after a reboot (containers gone)" if rebooted else "(containers kept running)"
        self.record(
            None,
            "node-returned",
            f"{node.name} is back {how}: the kubelet renews its Lease and syncs its pods",
            source,
        )
        self.changed()
        self.kubelet.node_returned(node.name, rebooted)
        self.nlc.node_returned(node)

    # --- availability tracking -----------------------------------------------------------
    def pod_serving(self, o: int) -> bool:
        pod = self.cluster.pods.get(self.wl.pod_name(o))
        if pod is None or pod.ordinal != o or pod.terminating or pod.node is None:
            return False
        if not pod.available(self.now, self.wl.min_ready_seconds):
            return False
        return self.kubelet.node_running(pod.node)

    def _observe(self) -> None:
        now = self.now
        ords = self.stsc.ordinals()
        down = 0
        for o in ords:
            ok = self.pod_serving(o)
            prev = self._avail.get(o)
            if prev is None:
                self._avail[o] = ok
                self._down_total.setdefault(o, 0.0)
                if not ok:
                    self._down_since[o] = now
            elif prev and not ok:
                self._down_since[o] = now
                self._avail[o] = False
            elif not prev and ok:
                start = self._down_since.pop(o, now)
                self._down_total[o] = self._down_total.get(o, 0.0) + (now - start)
                self._avail[o] = True
            if not ok and o not in self.baseline_down:
                down += 1
        self.max_unavailable = max(self.max_unavailable, down)
        all_ok = down == 0 and self.goal() and all(self.pod_serving(o) for o in self.baseline_down)
        if all_ok and self._all_ok_since is None:
            self._all_ok_since = now
        elif not all_ok:
            self._all_ok_since = None

    def _after_step(self) -> None:
        # an event costs about one step per replica: the controllers and the availability
        # tracking look at every pod of the set (budget.py)
        self.budget.spend(max(1, self.wl.replicas))
        self._observe()
        for obs in self.observers:
            obs(self)

    def unavailable_s(self, o: int) -> float | None:
        if not self._avail.get(o, False):
            return None
        return self._down_total.get(o, 0.0)

    @property
    def recovered_at(self) -> float | None:
        return self._all_ok_since
