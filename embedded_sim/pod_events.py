"""Which pod events wake which StatefulSet (the controller's pod informer handlers).

pkg/controller/statefulset/stateful_set.go #addPod, #updatePod, #deletePod,
#resolveControllerRef and #getStatefulSetsForPod (the lister's GetPodStatefulSets in
pkg/client/listers/apps/v1/statefulset_expansion.go). The simulation itself runs one set, whose
pods always wake it; this router covers namespaces with several sets, where an orphan or a pod
whose controller reference changed wakes every set that selects it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cluster import OwnerRef
from .workload import _selector_matches

SRC_EVENTS = "pkg/controller/statefulset/stateful_set.go#updatePod"


@dataclass(frozen=True)
class SetInfo:
    """A StatefulSet as the router sees it: name, UID, spec.selector (metav1.LabelSelector)."""

    name: str
    uid: str
    selector: Mapping[str, Any]
    namespace: str = "default"

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class PodInfo:
    name: str
    labels: Mapping[str, str]
    controller: OwnerRef | None  # metav1.GetControllerOf
    resource_version: str
    deleting: bool = False  # metadata.deletionTimestamp set
    namespace: str = "default"


@dataclass(frozen=True)
class Tombstone:
    """cache.DeletedFinalStateUnknown: a delete seen only after a relist."""

    key: str
    obj: PodInfo


@dataclass
class PodEventRouter:
    """The sets known to the informer and the work queue (keys, deduplicated, in order)."""

    sets: list[SetInfo]
    queue: list[str] = field(default_factory=list)

    def _enqueue(self, s: SetInfo) -> None:
        if s.key not in self.queue:  # workqueue: a key waits at most once
            self.queue.append(s.key)

    def resolve_controller_ref(self, namespace: str, ref: OwnerRef) -> SetInfo | None:
        """#resolveControllerRef: a StatefulSet of that name whose UID matches, else None."""
        if ref.kind != "StatefulSet":
            return None
        for s in self.sets:
            if s.namespace == namespace and s.name == ref.name:
                return s if s.uid == ref.uid else None
        return None

    def sets_for_pod(self, pod: PodInfo) -> list[SetInfo]:
        """#getStatefulSetsForPod: every set in the namespace whose non-empty selector matches
        the pod's labels (more than one is a user error upstream, but all are returned)."""
        if not pod.labels:
            return []
        return [
            s
            for s in self.sets
            if s.namespace == pod.namespace and _selector_matches(s.selector, pod.labels)
        ]

    def add_pod(self, pod: PodInfo) -> None:
        """#addPod."""
        if pod.deleting:
            self.delete_pod(pod)
            return
        if pod.controller is not None:
            s = self.resolve_controller_ref(pod.namespace, pod.controller)
            if s is not None:
                self._enqueue(s)
            return
        for s in self.sets_for_pod(pod):
            self._enqueue(s)

    def update_pod(self, old: PodInfo, cur: PodInfo) -> None:
        """#updatePod: an unchanged resourceVersion (a relist) wakes nothing."""
        if cur.resource_version == old.resource_version:
            return
        label_changed = dict(cur.labels) != dict(old.labels)
        ref_changed = cur.controller != old.controller
        if ref_changed and old.controller is not None:
            s = self.resolve_controller_ref(old.namespace, old.controller)
            if s is not None:
                self._enqueue(s)
        if cur.controller is not None:
            s = self.resolve_controller_ref(cur.namespace, cur.controller)
            if s is not None:
                self._enqueue(s)
            return
        if label_changed or ref_changed:
            for s in self.sets_for_pod(cur):
                self._enqueue(s)

    def delete_pod(self, obj: PodInfo | Tombstone) -> None:
        """#deletePod: orphans wake nobody (nobody adopts a deleted pod)."""
        pod = obj.obj if isinstance(obj, Tombstone) else obj
        if pod.controller is None:
            return
        s = self.resolve_controller_ref(pod.namespace, pod.controller)
        if s is not None:
            self._enqueue(s)
