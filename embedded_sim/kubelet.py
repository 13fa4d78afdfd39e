"""Kubelet: pod start-up (volumes, containers, readiness) and termination (preStop, grace)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .cluster import Pod, Volume

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_POD_WORKERS = "pkg/kubelet/pod_workers.go#managePodLoop"
SRC_GRACE = "pkg/kubelet/pod_workers.go#calculateEffectiveGracePeriod"
SRC_STATUS = "pkg/kubelet/status/status_manager.go#syncPod"
SRC_PROBE = "pkg/kubelet/prober/worker.go#doProbe"
SRC_VOLUME = "pkg/kubelet/volumemanager/volume_manager.go#WaitForAttachAndMount"
SRC_SHUTDOWN = "pkg/kubelet/nodeshutdown/nodeshutdown_manager.go#killPods"


class Kubelet:
    """One logical kubelet per node; behaviour depends on `Node.alive`."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim

    def _live(self, pod: Pod) -> bool:
        return self.sim.cluster.pods.get(pod.name) is pod

    def node_running(self, node_name: str | None) -> bool:
        if node_name is None:
            return False
        n = self.sim.cluster.nodes.get(node_name)
        return n is not None and n.alive and not n.deleted and not n.shutting_down

    # --- start-up -----------------------------------------------------------------------
    def on_bound(self, pod: Pod) -> None:
        sim = self.sim
        if not self.node_running(pod.node):
            sim.record(
                pod.name,
                "pod-pending",
                f"{pod.name} bound to {pod.node}, whose kubelet is not running: stays Pending",
                SRC_POD_WORKERS,
            )
            return
        self.try_start(pod)

    def try_start(self, pod: Pod) -> None:
        """volume_manager.go#WaitForAttachAndMount: every volume attached before mount."""
        sim = self.sim
        if not self._live(pod) or pod.terminating or pod.phase != "Pending" or pod.node is None:
            return
        # One step per volume looked at (budget.py): a pod with V claims is looked at again
        # after each of its V attaches, V*V in all, which thousands of volumeClaimTemplates
        # would otherwise make minutes of uncounted work.
        sim.budget.spend(len(pod.claims))
        waiting = False
        for claim in pod.claims:
            vol = sim.cluster.volumes.get(claim)
            if vol is None or not vol.needs_attach:
                continue
            if (
                vol.attached_to != pod.node
                or vol.attaching_to is not None
                or vol.detaching_from is not None
            ):
                waiting = True
                sim.adc.request_attach(vol, pod)
        if waiting:
            return
        delay = (sim.profile.mount_s if pod.claims else 0.0) + sim.profile.image_pull_s
        sim.loop.after(delay, lambda: self._started(pod), "kubelet-start")

    def _started(self, pod: Pod) -> None:
        sim = self.sim
        if not self._live(pod) or pod.terminating or not self.node_running(pod.node):
            return
        if pod.claims:
            sim.record(
                pod.name, "volume-mounted", f"{pod.name} volumes mounted on {pod.node}", SRC_VOLUME
            )
        pod.phase = "Running"
        pod.containers_running = True
        sim.record(
            pod.name, "pod-started", f"{pod.name} containers started on {pod.node}", SRC_POD_WORKERS
        )
        sim.changed()
        sim.stsc.request_sync()
        delay = sim.start_to_ready_s()
        if pod.broken:
            sim.loop.after(delay, lambda: self._readiness_fails(pod), "kubelet-probe")
        else:
            sim.loop.after(delay, lambda: self._ready(pod), "kubelet-ready")

    def _readiness_fails(self, pod: Pod) -> None:
        if not self._live(pod) or pod.terminating:
            return
        self.sim.record(
            pod.name,
            "pod-readiness-failing",
            f"{pod.name} (revision {pod.revision}) never becomes Ready",
            SRC_PROBE,
        )

    def _ready(self, pod: Pod) -> None:
        sim = self.sim
        if not self._live(pod) or pod.terminating or not self.node_running(pod.node):
            return
        n = sim.cluster.nodes[pod.node] if pod.node else None
        if n is not None and n.ready != "True":
            return
        pod.ready = True
        pod.ready_since_s = sim.now
        sim.record(pod.name, "pod-ready", f"{pod.name} Running and Ready on {pod.node}", SRC_STATUS)
        sim.changed()
        sim.stsc.request_sync()
        mrs = sim.wl.min_ready_seconds
        if mrs > 0:
            # stateful_set_control.go: the controller re-queues the set after minReadySeconds.
            sim.loop.after(mrs, lambda: self._available(pod), "available")

    def _available(self, pod: Pod) -> None:
        sim = self.sim
        if not self._live(pod) or not pod.available(sim.now, sim.wl.min_ready_seconds):
            return
        sim.record(
            pod.name,
            "pod-available",
            f"{pod.name} available (Ready for minReadySeconds {sim.wl.min_ready_seconds:g} s)",
            "pkg/api/v1/pod/util.go#IsPodAvailable",
        )
        sim.changed()
        sim.stsc.request_sync()

    # --- termination --------------------------------------------------------------------
    def shutdown_duration_s(self, grace_s: float) -> float:
        """Time from SIGTERM/preStop to containers gone, bounded by the grace period.

        docs/concepts/workloads/pods/pod-lifecycle.md (Termination of Pods): preStop runs
        inside the grace period; a still-running hook gets a one-time 2 s extension
        (pkg/kubelet/kuberuntime/kuberuntime_container.go#killContainer).
        """
        p = self.sim.profile
        pre = self.sim.wl.prestop_s
        if pre is None:
            pre = p.prestop_hook_s
        want = pre + min(p.app_shutdown_s, grace_s)
        limit = grace_s + (2.0 if pre > 0 else 0.0)
        return max(0.0, min(want, limit))

    def on_deletion(self, pod: Pod) -> None:
        sim = self.sim
        if not self.node_running(pod.node):
            sim.record(
                pod.name,
                "pod-terminating-stuck",
                f"{pod.name} stays Terminating: the kubelet on {pod.node} is not there to "
                "confirm termination; the object is only removed by the kubelet, a force "
                "delete, PodGC or Node deletion",
                "docs/tasks/run-application/force-delete-stateful-set-pod.md",
            )
            return
        grace = pod.deletion_grace_s if pod.deletion_grace_s is not None else 30.0
        dur = self.shutdown_duration_s(grace) if pod.containers_running else 0.0
        sim.loop.after(dur, lambda: self._terminated(pod), "kubelet-kill")

    def _terminated(self, pod: Pod) -> None:
        sim = self.sim
        if not self._live(pod):
            return
        if not self.node_running(pod.node):
            self.on_deletion(pod)
            return
        pod.containers_running = False
        pod.ready = False
        sim.record(
            pod.name,
            "pod-terminated",
            f"{pod.name} containers stopped on {pod.node}",
            SRC_GRACE,
        )
        sim.loop.after(
            sim.profile.kubelet_cleanup_s,
            lambda: sim.api.remove_pod(
                pod,
                SRC_STATUS,
                f"kubelet on {pod.node} confirmed termination and unmounted volumes",
            ),
            "kubelet-cleanup",
        )

    # --- return after an outage (k8s-behavior.md A.1 step 7a, B.9.1) --------------------
    def node_returned(self, node_name: str, rebooted: bool) -> None:
        """The kubelet starts again and syncs the pods bound to its node.

        Pods with a deletionTimestamp are stopped with their full DeletionGracePeriodSeconds
        (pod_workers.go#calculateEffectiveGracePeriod: the grace is not reduced by the time
        already elapsed), then unmounted and removed (status_manager.go#syncPod). Containers
        of a node that rebooted are gone; after a kubelet stop or a partition they kept
        running and get SIGTERM now. Pending pods bound to the node start.
        """
        sim = self.sim
        delay = sim.profile.kubelet_return_sync_s
        # Volumes of pods deleted from the API while the node was away (force delete, PodGC):
        # the kubelet's pod cleanup finds them orphaned and unmounts them (kubelet_pods.go
        # #HandlePodCleanups) [A: timing as for a terminating pod].
        in_use = {claim for p in sim.cluster.pods_on(node_name) for claim in p.claims}
        for vol in sorted(sim.cluster.volumes.values(), key=lambda v: v.sort_key):
            if (
                vol.attached_to == node_name
                and vol.mounted_on_dead_node
                and vol.claim not in in_use
            ):
                sim.loop.after(
                    delay + sim.profile.kubelet_cleanup_s,
                    partial(self._orphan_unmounted, vol, node_name),
                    "kubelet-cleanup",
                )
        for pod in sim.cluster.pods_on(node_name):
            if rebooted:
                pod.containers_running = False
            if pod.terminating:
                sim.loop.after(delay, partial(self.on_deletion, pod), "kubelet-sync")
            elif pod.phase == "Pending":
                sim.loop.after(delay, partial(self.try_start, pod), "kubelet-sync")
            elif pod.phase == "Running" and not pod.containers_running:
                sim.loop.after(
                    delay + sim.profile.mount_s,
                    partial(self._restarted, pod),
                    "kubelet-start",
                )

    def _orphan_unmounted(self, vol: Volume, node_name: str) -> None:
        if not self.node_running(node_name):
            return
        self.sim.adc.unmounted(
            vol, node_name, f"unmounted by the returning kubelet of {node_name} (orphaned pod)"
        )

    def _restarted(self, pod: Pod) -> None:
        sim = self.sim
        if not self._live(pod) or pod.terminating or not self.node_running(pod.node):
            return
        pod.containers_running = True
        sim.record(
            pod.name,
            "pod-started",
            f"{pod.name} containers restarted on {pod.node} after the reboot",
            SRC_POD_WORKERS,
        )
        sim.changed()
        sim.loop.after(sim.start_to_ready_s(), partial(self._ready, pod), "kubelet-ready")

    def node_ready(self, node_name: str) -> None:
        """Node Ready again: running containers pass their next readiness probe.

        Assumption [A]: one readinessProbe periodSeconds after the node status (prober
        workers restart with the kubelet, pkg/kubelet/prober/worker.go#doProbe); without a
        probe the kubelet reports Ready on its next status sync.
        """
        sim = self.sim
        period = sim.wl.readiness_period_s or 0.0
        for pod in sim.cluster.pods_on(node_name):
            if pod.terminating or pod.ready or pod.phase != "Running":
                continue
            if pod.containers_running and not pod.broken:
                sim.loop.after(period, partial(self._ready, pod), "kubelet-ready")

    # --- graceful node shutdown ---------------------------------------------------------
    def graceful_shutdown(self, node_name: str) -> None:
        """KEP-2000: regular pods get shutdownGracePeriod - ...CriticalPods; they end Failed."""
        sim = self.sim
        p = sim.profile
        budget = max(0.0, p.shutdown_grace_period_s - p.shutdown_grace_period_critical_pods_s)
        for pod in sim.cluster.pods_on(node_name):
            grace = min(sim.wl.termination_grace_period_s, budget)
            dur = self.shutdown_duration_s(grace) if pod.containers_running else 0.0
            sim.loop.after(dur, partial(self._shutdown_failed, pod), "shutdown-kill")

    def _shutdown_failed(self, pod: Pod) -> None:
        sim = self.sim
        if not self._live(pod):
            return
        pod.phase = "Failed"
        pod.ready = False
        pod.containers_running = False
        sim.record(
            pod.name,
            "pod-failed",
            f"{pod.name} phase Failed: terminated because the node is shutting down",
            SRC_SHUTDOWN,
        )
        sim.changed()
        # Volumes were unmounted cleanly: the attach/detach controller may detach now
        # (pkg/controller/volume/attachdetach/util/util.go#DetermineVolumeAction).
        sim.adc.release(pod, clean=True)
        sim.stsc.request_sync()
