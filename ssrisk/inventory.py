"""An index of every loaded object, so rules can look at what surrounds a StatefulSet.

Cross-object lookups stay within one namespace, the way the controllers resolve them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from .model import K8sObject
from .selectors import InvalidSelector, is_empty_selector, selector_matches

DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


class Inventory:
    """Objects by kind and namespace.

    Build it once per run with every loaded object; lookups are read-only afterwards.
    """

    def __init__(self, objects: Iterable[K8sObject] = ()) -> None:
        self.by_kind: dict[str, list[K8sObject]] = defaultdict(list)
        for obj in objects:
            self.by_kind[obj.kind].append(obj)

    def of_kind(self, kind: str) -> list[K8sObject]:
        return self.by_kind.get(kind, [])

    @property
    def statefulsets(self) -> list[K8sObject]:
        return self.of_kind("StatefulSet")

    def service(self, namespace: str | None, name: str) -> K8sObject | None:
        """The Service ``name`` in ``namespace`` (the first one loaded, if defined twice)."""
        for svc in self.of_kind("Service"):
            if svc.namespace == namespace and svc.name == name:
                return svc
        return None

    def services_named(self, name: str) -> list[K8sObject]:
        return [s for s in self.of_kind("Service") if s.name == name]

    def pdbs_selecting(
        self, namespace: str | None, pod_labels: Mapping[str, Any]
    ) -> list[K8sObject]:
        """PodDisruptionBudgets in ``namespace`` whose selector selects pods with ``pod_labels``.

        policy/v1: an empty selector selects every pod in the namespace; policy/v1beta1: an
        empty selector selects nothing (web: docs/tasks/run-application/configure-pdb.md,
        "Specifying a PodDisruptionBudget"). Invalid selectors select nothing.
        """
        out = []
        for pdb in self.of_kind("PodDisruptionBudget"):
            if pdb.namespace != namespace:
                continue
            sel = pdb.get("spec", "selector")
            if is_empty_selector(sel):
                if pdb.api_version == "policy/v1":
                    out.append(pdb)
                continue
            try:
                if isinstance(sel, Mapping) and selector_matches(sel, pod_labels):
                    out.append(pdb)
            except InvalidSelector:
                continue
        return out

    def storage_class(self, name: str) -> K8sObject | None:
        for sc in self.of_kind("StorageClass"):
            if sc.name == name:
                return sc
        return None

    def default_storage_class(self) -> K8sObject | None:
        for sc in self.of_kind("StorageClass"):
            ann = sc.metadata.get("annotations")
            if isinstance(ann, Mapping) and any(
                str(ann.get(a, "")).lower() == "true" for a in DEFAULT_CLASS_ANNOTATIONS
            ):
                return sc
        return None
