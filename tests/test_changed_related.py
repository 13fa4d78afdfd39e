"""Which StatefulSets a commit of related objects concerns (``--changed``).

Each set's lookups were made once per changed object (a commit of 2,000 StorageClasses
beside 2,000 sets took minutes); ``ChangedRelated`` indexes the changed objects once. The
test holds the earlier per-object definition as the oracle: over the corpus and the test
data, each object alone and all of them together concern the same sets as it says.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conftest import DATA, SHARED
from ssrisk.embedded_sim.storage import claim_class_name

from ssrisk.changed import ChangedRelated
from ssrisk.inventory import Inventory
from ssrisk.loading import load_text
from ssrisk.model import K8sObject


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _relates(sts: K8sObject, obj: K8sObject, inventory: Inventory) -> bool:
    """The oracle: the earlier definition, one changed object at a time."""
    kind = obj.kind
    if kind == "Namespace":
        return obj.name == sts.namespace
    if kind == "PodDisruptionBudget":
        labels = _m(sts.get("spec", "template", "metadata", "labels"))
        return obj.namespace == sts.namespace and any(
            p is obj for p in inventory.pdbs_selecting(sts.namespace, labels)
        )
    if kind == "Service":
        return obj.namespace == sts.namespace and obj.name == sts.get("spec", "serviceName")
    if kind == "HorizontalPodAutoscaler":
        return inventory.autoscaler_for(sts.namespace, "StatefulSet", sts.name) is obj
    claims = [_m(t) for t in sts.get("spec", "volumeClaimTemplates") or []]
    if kind == "StorageClass":
        return any(inventory.storage_class_for_claim(claim_class_name(c)) is obj for c in claims)
    if kind == "PersistentVolume":
        classes = set()
        for c in claims:
            sc = inventory.storage_class_for_claim(claim_class_name(c))
            classes.add(sc.name if sc is not None else claim_class_name(c))
        return obj.get("spec", "storageClassName") in classes
    if kind == "PersistentVolumeClaim":
        prefixes = [f"{_m(c.get('metadata')).get('name')}-{sts.name}-" for c in claims]
        return obj.namespace == sts.namespace and any(obj.name.startswith(p) for p in prefixes)
    return False


def _objects(root: Path) -> list[K8sObject]:
    out: list[K8sObject] = []
    for path in sorted(root.rglob("*.yaml")):
        if "templates" in path.parts:
            continue
        try:
            out.extend(load_text(path.read_text(encoding="utf-8"), str(path)).objects)
        except (UnicodeDecodeError, ValueError):
            continue
    return out


def test_changed_objects_concern_the_sets_the_earlier_definition_named() -> None:
    roots = [DATA, *([SHARED / "corpus"] if (SHARED / "corpus").is_dir() else [])]
    checked = 0
    for root in roots:
        objects = _objects(root)
        inventory = Inventory(objects)
        others = [o for o in objects if o.kind != "StatefulSet"]
        related = ChangedRelated(others)
        for sts in inventory.statefulsets:
            view = inventory.for_unit(sts.unit)
            alone = [ChangedRelated([o]).relate_to(sts, view) for o in others]
            assert alone == [_relates(sts, o, view) for o in others], sts.ref
            assert related.relate_to(sts, view) == any(alone)
            checked += sum(alone)
    assert checked > 100  # the inputs hold many related objects
