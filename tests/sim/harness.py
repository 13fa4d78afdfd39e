"""A step-exact driver of the StatefulSet controller for tests, like upstream's unit tests:
deletes are instant, nothing is scheduled or started by itself, and the controller syncs only
when asked (``../shared/docs/sts-controller-scenarios.md``, "How to use it")."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ssrisk.embedded_sim.apiserver import ApiError
from ssrisk.embedded_sim.cluster import SET_UID, Pod, Volume
from ssrisk.embedded_sim.simulation import Simulation
from ssrisk.embedded_sim.statefulset_controller import StatefulSetController


class StepHarness:
    """Step-exact driver for the StatefulSet controller, like upstream unit tests.

    "Delete is instant" (grace 0, the object vanishes), nothing is scheduled or started by
    itself, and the controller only syncs when `sync()` is called. Tests move pods through
    their life by hand between syncs (sts-controller-scenarios.md, "How to use it").
    """

    def __init__(
        self,
        statefulset: Mapping[str, Any],
        *,
        kube_version: str = "1.34",
        feature_gates: Mapping[str, bool] | None = None,
        gc: bool = True,
    ) -> None:
        """`gc=False`: no garbage collector, like upstream's unit-test harness."""
        self.sim = Simulation(
            statefulset,
            kube_version=kube_version,
            feature_gates=feature_gates,
            instant_delete=True,
            manual_sync=True,
        )
        self.sim.gc.enabled = gc
        self._revs = 1
        # Checks run after every controller pass (the upstream invariants, in tests).
        self.after_sync: list[Callable[[StepHarness], None]] = []

    @property
    def stsc(self) -> StatefulSetController:
        return self.sim.stsc

    def sync(self) -> ApiError | None:
        """One controller pass, then the checks; returns the pass's API error or None."""
        err = self.sim.stsc.sync()
        for check in self.after_sync:
            check(self)
        return err

    def fail(self, verb: str, nth: int | None = 1) -> None:
        """The `nth` `verb` call from now fails (None: every one until `heal`); see
        apiserver.VERBS."""
        self.sim.api.inject_fault(verb, nth)

    def heal(self) -> None:
        """Forget every injected API fault."""
        self.sim.api.clear_faults()

    def calls(self, verb: str) -> int:
        """How many `verb` calls reached the API server so far (failed ones included)."""
        return self.sim.api.calls[verb]

    def claim(self, ordinal: int, template: str | None = None) -> Volume:
        """The PVC object of an ordinal (first claim template unless named)."""
        wl = self.sim.wl
        t = template or wl.claim_templates[0].name
        return self.sim.cluster.volumes[f"{t}-{wl.name}-{ordinal}"]

    def delete_set(self) -> None:
        """DELETE the StatefulSet (background propagation): the object is gone and the garbage
        collector deletes the pods it controls and the claims only it (or they) owned."""
        self.sim.stsc.exists = False
        self.sim.gc.collect_pods()
        self.sim.gc.collect_claims()

    def collect_garbage(self) -> None:
        """One garbage-collector pass over pods and claims."""
        self.sim.gc.collect_pods()
        self.sim.gc.collect_claims()

    def add_pod(
        self,
        ordinal: int,
        *,
        ready: bool = True,
        terminating: bool = False,
        name: str | None = None,
        owned: bool = True,
        labels_match: bool = True,
    ) -> Pod:
        """Plant a pod of the current revision (Running, Ready for an hour unless told).

        `owned=False` plants an orphan (no controller reference); `name` overrides
        `<set>-<ordinal>`; `labels_match=False` gives it labels the selector does not match."""
        sim = self.sim
        pod = Pod(
            name=name or sim.wl.pod_name(ordinal),
            ordinal=ordinal,
            revision=sim.stsc.current_revision,
            uid=sim.cluster.next_uid(),
            created_s=sim.now - 3600.0,
            phase="Running",
            ready=ready,
            ready_since_s=sim.now - 3600.0 if ready else None,
            containers_running=True,
            claims=sim.claims_for(ordinal),
            controller_uid=SET_UID if owned else None,
            labels_match=labels_match,
        )
        sim.cluster.pods[pod.name] = pod
        if terminating:
            pod.deletion_s = sim.now
            pod.deletion_grace_s = 30.0
        return pod

    def delete_claims(self, ordinal: int) -> None:
        """Delete the PVCs of an ordinal (the volumes are gone with them)."""
        for vol in self.sim.cluster.volumes.values():
            if vol.ordinal == ordinal:
                vol.deleted = True

    def live_claims(self) -> list[str]:
        return sorted(v.claim for v in self.sim.cluster.volumes.values() if not v.deleted)

    def ready_replicas(self) -> int:
        return sum(1 for p in self.pods().values() if p.running_and_ready())

    def available_replicas(self) -> int:
        """status.availableReplicas: Ready for minReadySeconds and not terminating."""
        now, mrs = self.sim.now, self.sim.wl.min_ready_seconds
        return sum(1 for p in self.pods().values() if not p.terminating and p.available(now, mrs))

    def pods(self) -> dict[int, Pod]:
        """The set's pods (those it controls) by ordinal."""
        return self.sim.stsc._pods()

    def ordinals(self) -> list[int]:
        return sorted(self.pods())

    def pod(self, ordinal: int) -> Pod:
        return self.pods()[ordinal]

    def advance(self, dt_s: float) -> None:
        self.sim.loop.now += dt_s

    def set_running(self, ordinal: int) -> None:
        p = self.pod(ordinal)
        p.phase = "Running"
        p.containers_running = True

    def set_ready(self, ordinal: int, ready: bool = True, since_s: float | None = None) -> None:
        p = self.pod(ordinal)
        p.phase = "Running"
        p.ready = ready
        p.ready_since_s = (self.sim.now if since_s is None else since_s) if ready else None

    def set_phase(self, ordinal: int, phase: str) -> None:
        self.pod(ordinal).phase = phase

    def plant_terminating(self, ordinal: int) -> None:
        p = self.pod(ordinal)
        p.deletion_s = self.sim.now
        p.deletion_grace_s = 30.0

    def remove(self, ordinal: int) -> None:
        """The pod object is gone (deleted by someone else, finalizers done)."""
        del self.sim.cluster.pods[self.pod(ordinal).name]

    def scale(self, replicas: int) -> None:
        self.sim.stsc.replicas = replicas

    def new_revision(self, broken: bool = False) -> str:
        self._revs += 1
        rev = f"rev-{self._revs}"
        self.sim.templates[rev] = broken
        self.sim.stsc.update_revision = rev
        return rev

    def created_order(self) -> list[str]:
        return [e.pod or "" for e in self.sim.timeline.events if e.kind == "pod-created"]

    def removed_order(self) -> list[str]:
        return [e.pod or "" for e in self.sim.timeline.events if e.kind == "pod-deleted"]

    def bring_up(self, max_rounds: int = 200) -> None:
        """Sync and make every pod Running+Ready (available for an hour) until the set is up."""
        for _ in range(max_rounds):
            self.sync()
            pods = self.pods()
            for o, p in sorted(pods.items()):
                if not p.running_and_ready() and not p.terminating and not p.terminal:
                    self.set_ready(o, since_s=self.sim.now - 3600.0)
            pods = self.pods()
            want = set(self.sim.stsc.ordinals())
            if set(pods) == want and all(
                p.running_and_ready() and p.revision == self.sim.stsc.update_revision
                for p in pods.values()
            ):
                self.sync()
                return
        raise AssertionError("set did not come up")
