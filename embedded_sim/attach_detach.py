"""Attach/detach controller (ADC): Multi-Attach, safe detach, 6-minute force detach.

pkg/controller/volume/attachdetach/reconciler/reconciler.go#reconcile (k8s-behavior.md B.7.1):
* a volume stays desired on a node while a non-terminated pod using it exists there
  (attachdetach/util/util.go#DetermineVolumeAction);
* a volume that is not multi-attachable cannot be attached elsewhere while attached
  ("Multi-Attach error");
* detach waits while the node reports the volume mounted, unless the node has the
  out-of-service taint (detach at once) or maxWaitForUnmountDuration (6 min) has passed and
  the node is not Ready (force detach; never with --disable-force-detach-on-timeout, >=1.30).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .cluster import Pod, Volume
from .versions import NODE_OUT_OF_SERVICE_VOLUME_DETACH
from .workload import TAINT_OUT_OF_SERVICE

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_RECONCILE = "pkg/controller/volume/attachdetach/reconciler/reconciler.go#reconcile"
SRC_ATTACH = "pkg/controller/volume/attachdetach/reconciler/reconciler.go#attachDesiredVolumes"
OOS_WHY = "node has the out-of-service taint (no unmount wait)"
SRC_MULTI = "pkg/controller/volume/attachdetach/reconciler/reconciler.go#reportMultiAttachError"


class AttachDetachController:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.waiters: dict[str, str] = {}  # claim -> pod name waiting to attach
        # claim -> node: maxWaitForUnmountDuration has passed but the node was Ready then; the
        # reconciler re-checks on every pass and force-detaches once the node is not Ready.
        self.force_held: dict[str, str] = {}

    # --- attach ---------------------------------------------------------------------------
    def request_attach(self, vol: Volume, pod: Pod) -> None:
        sim = self.sim
        target = pod.node
        if target is None:
            return
        self.waiters[vol.claim] = pod.name
        if vol.attaching_to == target:
            return
        if vol.attached_to == target and vol.detaching_from is None:
            return
        if vol.detaching_from == target:
            return  # detach from this very node in progress: attach again once it is done
        busy = vol.detaching_from is not None or (
            vol.attached_to is not None and not vol.multi_attach_allowed
        )
        if busy:
            where = vol.attached_to or vol.detaching_from
            sim.timeline.once(
                f"multi-{vol.claim}-{pod.uid}",
                sim.now,
                pod.name,
                "volume-multi-attach",
                f"{pod.name}: Multi-Attach error for volume of claim {vol.claim}: still "
                f"attached to {where}",
                SRC_MULTI,
            )
            return
        vol.attaching_to = target
        sim.loop.after(
            sim.profile.adc_reaction_s + sim.profile.attach_s,
            lambda: self._attached(vol, target),
            "adc-attach",
        )

    def _attached(self, vol: Volume, node: str) -> None:
        sim = self.sim
        if vol.attaching_to != node:
            return
        vol.attaching_to = None
        vol.attached_to = node
        vol.detach_requested_s = None
        sim.record(
            None, "volume-attached", f"volume of claim {vol.claim} attached to {node}", SRC_ATTACH
        )
        sim.changed()
        self._wake(vol)

    def _wake(self, vol: Volume) -> None:
        sim = self.sim
        name = self.waiters.get(vol.claim)
        if name is None:
            return
        pod = sim.cluster.pods.get(name)
        if pod is None or pod.node is None:
            return
        if vol.attached_to == pod.node:
            sim.kubelet.try_start(pod)
        elif vol.attached_to is None and vol.detaching_from is None:
            self.request_attach(vol, pod)

    # --- detach ---------------------------------------------------------------------------
    def on_pod_removed(self, pod: Pod) -> None:
        # A kubelet that is running unmounted the volumes before removing the object.
        self.release(pod, clean=self.sim.kubelet.node_running(pod.node))

    def release(self, pod: Pod, clean: bool) -> None:
        sim = self.sim
        for claim in pod.claims:
            vol = sim.cluster.volumes.get(claim)
            if vol is None or vol.attached_to is None or vol.attached_to != pod.node:
                continue
            if vol.detaching_from is not None or vol.detach_requested_s is not None:
                continue
            node_name = vol.attached_to
            if clean:
                vol.mounted_on_dead_node = False
                vol.detach_requested_s = sim.now
                sim.loop.after(
                    sim.profile.volumes_in_use_report_s + sim.profile.adc_reaction_s,
                    partial(self._detach, vol, node_name, "unmounted by the kubelet"),
                    "adc-detach",
                )
                continue
            vol.mounted_on_dead_node = True
            vol.detach_requested_s = sim.now
            oos = self._oos(node_name)
            force = self.force_detach_enabled()
            msg = f"volume of claim {vol.claim} still reported mounted on {node_name}; detach waits"
            if oos:
                msg = (
                    f"detach of the volume of claim {vol.claim} from {node_name} starts without "
                    f"waiting for unmount: {node_name} has the out-of-service taint"
                )
            elif force:
                msg += (
                    f"; force detach after maxWaitForUnmountDuration "
                    f"{sim.profile.max_wait_for_unmount_s:g} s if the node is not Ready"
                )
            else:
                msg += "; force detach on timeout is disabled: waits until the node returns"
            sim.record(pod.name, "volume-detach-waiting", msg, SRC_RECONCILE)
            if oos:
                sim.loop.after(
                    sim.profile.adc_reaction_s,
                    partial(self._detach, vol, node_name, OOS_WHY),
                    "adc-detach",
                )
            elif force:
                sim.loop.after(
                    sim.profile.max_wait_for_unmount_s,
                    partial(self._force, vol, node_name),
                    "adc-force",
                )

    def force_detach_enabled(self) -> bool:
        sim = self.sim
        if not sim.vd.disable_force_detach_flag_available:
            return True
        return not sim.profile.disable_force_detach_on_timeout

    def _oos(self, node_name: str) -> bool:
        sim = self.sim
        n = sim.cluster.nodes.get(node_name)
        return (
            n is not None
            and n.has_taint(TAINT_OUT_OF_SERVICE)
            and bool(sim.vd.gates.get(NODE_OUT_OF_SERVICE_VOLUME_DETACH, False))
        )

    def on_taints_changed(self, node_name: str) -> None:
        sim = self.sim
        if not self._oos(node_name):
            return
        for vol in sorted(sim.cluster.volumes.values(), key=lambda v: v.sort_key):
            if (
                vol.attached_to == node_name
                and vol.detach_requested_s is not None
                and vol.detaching_from is None
                and vol.mounted_on_dead_node
            ):
                sim.loop.after(
                    sim.profile.adc_reaction_s,
                    partial(self._detach, vol, node_name, OOS_WHY),
                    "adc-detach",
                )

    def _force(self, vol: Volume, node_name: str) -> None:
        """reconciler.go#reconcile, every pass: forceDetach = !isHealthy && timeout. The
        timeout stays expired, so a node that was Ready when it expired is force-detached on
        the first pass that finds it not Ready (on_node_health)."""
        sim = self.sim
        n = sim.cluster.nodes.get(node_name)
        if vol.attached_to != node_name or vol.detaching_from is not None:
            self.force_held.pop(vol.claim, None)
            return
        if not vol.mounted_on_dead_node:
            self.force_held.pop(vol.claim, None)
            return
        if n is not None and not n.deleted and n.ready == "True":
            # #110721: never force-detach from a healthy node; re-checked on every pass.
            self.force_held[vol.claim] = node_name
            sim.timeline.once(
                f"force-held-{vol.claim}-{node_name}",
                sim.now,
                None,
                "volume-detach-waiting",
                f"maxWaitForUnmountDuration passed for the volume of claim {vol.claim}, but "
                f"{node_name} is Ready: no force detach while it stays Ready",
                SRC_RECONCILE,
            )
            return
        self.force_held.pop(vol.claim, None)
        self._detach(
            vol,
            node_name,
            "force detach after maxWaitForUnmountDuration "
            f"{sim.profile.max_wait_for_unmount_s:g} s "
            "(node not Ready)",
        )

    def on_node_health(self, node_name: str) -> None:
        """A node turned not Ready or its Node object was deleted: the next reconcile pass
        force-detaches the volumes whose unmount wait already expired there."""
        for claim, held_on in sorted(self.force_held.items()):
            vol = self.sim.cluster.volumes.get(claim)
            if held_on == node_name and vol is not None:
                self.sim.loop.after(
                    self.sim.profile.adc_reaction_s,
                    partial(self._force, vol, node_name),
                    "adc-force",
                )

    def unmounted(self, vol: Volume, node_name: str, why: str) -> None:
        """The kubelet of `node_name` unmounted the volume (volumesInUse no longer lists it):
        the safe detach may proceed."""
        if vol.attached_to != node_name or not vol.mounted_on_dead_node:
            return
        vol.mounted_on_dead_node = False
        self.force_held.pop(vol.claim, None)
        self.sim.loop.after(
            self.sim.profile.volumes_in_use_report_s + self.sim.profile.adc_reaction_s,
            partial(self._detach, vol, node_name, why),
            "adc-detach",
        )

    def _in_use_on(self, vol: Volume, node_name: str) -> bool:
        """util.go#DetermineVolumeAction: a non-terminated pod on the node keeps it desired."""
        return any(
            p.node == node_name and vol.claim in p.claims and not p.terminal
            for p in self.sim.cluster.pods.values()
        )

    def _detach(self, vol: Volume, node_name: str, why: str) -> None:
        sim = self.sim
        if vol.attached_to != node_name or vol.detaching_from is not None:
            return
        if self._in_use_on(vol, node_name):
            # A new pod on the same node wants it before the reconciler detached: it stays.
            vol.detach_requested_s = None
            vol.mounted_on_dead_node = False
            return
        vol.detaching_from = node_name

        def done() -> None:
            vol.detaching_from = None
            vol.attached_to = None
            vol.detach_requested_s = None
            vol.mounted_on_dead_node = False
            sim.record(
                None,
                "volume-detached",
                f"volume of claim {vol.claim} detached from {node_name} ({why})",
                SRC_RECONCILE,
            )
            sim.changed()
            self._wake(vol)

        sim.loop.after(sim.profile.detach_s, done, "adc-detach-done")
