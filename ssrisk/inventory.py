"""An index of every loaded object, so rules can look at what surrounds a StatefulSet.

Cross-object lookups stay within one namespace, the way the controllers resolve them.
"""

from __future__ import annotations

import heapq
import os
from collections import ChainMap, Counter, defaultdict
from collections.abc import Iterable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, TypeVar

from .model import K8sObject
from .selectors import InvalidSelector, is_empty_selector, selector_matches

if TYPE_CHECKING:
    from .embedded_sim.storage import StorageIndex

DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)


#: Namespaced kinds whose copies in two rendered units mark those units as alternatives of
#: each other (environments, overlays of one base): cluster-scoped objects (StorageClasses,
#: PersistentVolumes, Namespaces) are often shared infrastructure copied into several places.
ALTERNATIVE_MARKERS = frozenset(
    {"StatefulSet", "Service", "PodDisruptionBudget", "PersistentVolumeClaim"}
)

Identity = tuple[str, str | None, str]


class Inventory:
    """Objects by kind and namespace.

    Build it once per run with every loaded object; lookups are read-only afterwards. Rules
    see it through :meth:`for_unit`: the objects as the rendered unit of the StatefulSet being
    checked sees them.
    """

    def __init__(self, objects: Iterable[K8sObject] = ()) -> None:
        self.by_kind: MutableMapping[str, list[K8sObject]] = defaultdict(list)
        # indexes, so that every lookup costs the same however large the repository is
        self._by_ns: MutableMapping[tuple[str, str | None], list[K8sObject]] = defaultdict(list)
        self._by_name: MutableMapping[tuple[str, str], list[K8sObject]] = defaultdict(list)
        self._pdb_indexes: dict[str | None, tuple[dict[tuple[str, str], list[int]], list[int]]] = {}
        self._views: dict[str, Inventory] = {}
        self._units: _Units | None = None
        self._storage: StorageIndex | None = None
        #: the unit a view sees from (``None``: the whole inventory)
        self._unit: str | None = None
        for obj in objects:
            kind = obj.kind
            self.by_kind[kind].append(obj)
            self._by_ns[(kind, obj.namespace)].append(obj)
            self._by_name[(kind, obj.name)].append(obj)

    def for_unit(self, unit: str) -> Inventory:
        """The objects as seen from the rendered unit ``unit`` (:attr:`K8sObject.unit`: a
        kustomization, a chart, a directory of plain files).

        Relations (PDBs, Services, StorageClasses, volumes) are resolved within the unit, and
        with objects of other units by identity: a unit that defines a copy of one of this
        unit's namespaced objects (the same kind, namespace and name: ``staging/`` and
        ``prod/``, two overlays of one base) is an alternative to it, never a complement, so
        none of its objects is seen; of the copies of one object in the other units only the
        first counts, so a redefinition is never counted twice. A default StorageClass (the
        ``is-default-class`` annotation) is the default only for claims of its own unit and
        of units below its directory (a default class at the top of a repository covers all
        of it); a class named by ``storageClassName`` is found by identity anywhere. Without
        any object defined in two units and without a default class out of reach, this is the
        inventory itself, at no cost.

        Every lookup method works on the view (they all go through the three indexes, which
        the view overlays); a new index added to ``__init__`` must be overlaid in
        :meth:`_view` too.
        """
        if self._units is None:
            self._units = _Units(self)
        if not self._units.shared and not self._units.scoped_defaults:
            return self
        view = self._views.get(unit)
        if view is None:
            hidden = self._units.hidden_from(unit) if self._units.shared else {}
            view = self._views[unit] = self._view(hidden, unit)
        return view

    def _view(self, hidden: dict[int, K8sObject], unit: str) -> Inventory:
        """This inventory as ``unit`` sees it, without the ``hidden`` objects (by ``id``; the
        indexes are overlaid only where a hidden object is listed, so a view costs what it
        hides)."""
        view = Inventory.__new__(Inventory)
        view._pdb_indexes = {}
        view._views = {}
        view._unit = unit
        view._units = _Units.none()
        view._storage = None
        if not hidden:  # the same objects: share the indexes, the PDB ones included
            view.by_kind, view._by_ns, view._by_name = self.by_kind, self._by_ns, self._by_name
            view._pdb_indexes = self._pdb_indexes
            return view
        objs = list(hidden.values())
        view.by_kind = _overlay(self.by_kind, hidden, {o.kind for o in objs})
        view._by_ns = _overlay(self._by_ns, hidden, {(o.kind, o.namespace) for o in objs})
        view._by_name = _overlay(self._by_name, hidden, {(o.kind, o.name) for o in objs})
        view._units = _Units.none()
        return view

    def of_kind(self, kind: str) -> list[K8sObject]:
        return self.by_kind.get(kind, [])

    @property
    def statefulsets(self) -> list[K8sObject]:
        return self.of_kind("StatefulSet")

    def service(self, namespace: str | None, name: str) -> K8sObject | None:
        """The Service ``name`` in ``namespace`` (the first one loaded, if defined twice)."""
        return self.named("Service", namespace, name)

    def services_named(self, name: str) -> list[K8sObject]:
        """Every Service called ``name``, in any namespace, in load order."""
        return list(self._by_name.get(("Service", name), ()))

    def pdbs_selecting(
        self, namespace: str | None, pod_labels: Mapping[str, Any], limit: int | None = None
    ) -> list[K8sObject]:
        """PodDisruptionBudgets in ``namespace`` whose selector selects pods with ``pod_labels``,
        in load order.

        policy/v1: an empty selector selects every pod in the namespace; policy/v1beta1: an
        empty selector selects nothing (web: docs/tasks/run-application/configure-pdb.md,
        "Specifying a PodDisruptionBudget"). Invalid selectors select nothing. PDBs are
        indexed by the least common of their ``matchLabels`` pairs, so a namespace with
        thousands of them costs a few dictionary lookups per StatefulSet, not a scan. With
        ``limit``, the search stops at that many (the first in load order): when thousands
        of PDBs select the same pods, each StatefulSet then costs ``limit``, not thousands.
        """
        by_pair, others = self._pdb_index(namespace)
        lists = [others, *(by_pair.get((str(k), str(v)), ()) for k, v in pod_labels.items())]
        ordered = self._by_ns.get(("PodDisruptionBudget", namespace), [])
        out: list[K8sObject] = []
        previous = -1
        for i in heapq.merge(*lists):  # each list is in load order: so is the merge
            if i == previous:
                continue
            previous = i
            if limit is not None and len(out) >= limit:
                break
            pdb = ordered[i]
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

    def _pdb_index(
        self, namespace: str | None
    ) -> tuple[dict[tuple[str, str], list[int]], list[int]]:
        """Positions of the namespace's PDBs by one required label pair, and the rest."""
        cached = self._pdb_indexes.get(namespace)
        if cached is not None:
            return cached
        by_pair: dict[tuple[str, str], list[int]] = defaultdict(list)
        others: list[int] = []
        pdbs = self._by_ns.get(("PodDisruptionBudget", namespace), [])
        pairs: list[list[tuple[str, str]] | None] = []
        seen: Counter[tuple[str, str]] = Counter()
        for pdb in pdbs:
            labels = pdb.get("spec", "selector", "matchLabels")
            if isinstance(labels, Mapping) and labels:
                mine = sorted((str(k), str(v)) for k, v in labels.items())
                seen.update(mine)
                pairs.append(mine)
            else:
                pairs.append(None)
        for i, required in enumerate(pairs):
            if required is None:
                others.append(i)
            else:
                # every matchLabels pair is required, so any one of them finds the PDB; the
                # least common one gives the fewest candidates to test
                by_pair[min(required, key=lambda pair: (seen[pair], pair))].append(i)
        self._pdb_indexes[namespace] = (by_pair, others)
        return by_pair, others

    def storage_class(self, name: str) -> K8sObject | None:
        """The StorageClass ``name`` (the first one loaded, if defined twice)."""
        return self.named("StorageClass", None, name)

    def storage_class_for_claim(self, claim_spec: Mapping[str, Any]) -> K8sObject | None:
        """The StorageClass a PersistentVolumeClaim spec gets, when the inputs define it.

        ``storageClassName: NAME`` names it; unset, the DefaultStorageClass admission plugin
        fills in the default class (plugin/pkg/admission/storage/storageclass/setdefault);
        ``""`` asks for no class (static binding only).
        """
        name = claim_spec.get("storageClassName")
        if name is None:
            return self.default_storage_class()
        return self.storage_class(str(name)) if name else None

    def default_storage_class(self) -> K8sObject | None:
        """The default StorageClass for claims of this view's unit (see :meth:`for_unit`)."""
        for sc in self.of_kind("StorageClass"):
            if is_default_class(sc) and self._default_reaches(sc):
                return sc
        return None

    def storage_class_data(self) -> list[Mapping[str, Any]]:
        """The StorageClasses as data for the simulator, which picks the default class by its
        annotation: a default class out of this unit's reach is given without it."""
        return [
            sc.data
            if not is_default_class(sc) or self._default_reaches(sc)
            else _without_default_annotation(sc.data)
            for sc in self.of_kind("StorageClass")
        ]

    def storage_inputs(
        self, class_names: Iterable[str | None]
    ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """The StorageClasses (:meth:`storage_class_data`) and PersistentVolumes a
        StatefulSet's claims asking for ``class_names`` can use, for the simulator's
        ``resolve_claim``, from an index made once per inventory
        (:class:`~ssrisk.embedded_sim.storage.StorageIndex`): each set costs time independent
        of how many classes and volumes there are."""
        if self._storage is None:
            from .embedded_sim.storage import storage_index

            pvs = [o.data for o in self.of_kind("PersistentVolume")]
            self._storage = storage_index(self.storage_class_data(), pvs)
        return self._storage.inputs(class_names)

    def _default_reaches(self, sc: K8sObject) -> bool:
        return self._unit is None or unit_covers(sc.unit, self._unit)

    def named(self, kind: str, namespace: str | None, name: str) -> K8sObject | None:
        """The object of ``kind`` called ``name`` in ``namespace`` (``None`` for cluster-scoped
        kinds); the first one loaded when it is defined twice."""
        for obj in self._by_name.get((kind, name), ()):
            if obj.namespace == namespace:
                return obj
        return None

    def in_namespace(self, kind: str, namespace: str | None) -> list[K8sObject]:
        """Every object of ``kind`` in ``namespace``, in load order."""
        return list(self._by_ns.get((kind, namespace), ()))

    def autoscaler_for(self, namespace: str | None, kind: str, name: str) -> K8sObject | None:
        """The HorizontalPodAutoscaler in ``namespace`` whose ``spec.scaleTargetRef`` names the
        ``kind`` object ``name`` (the first one loaded, when several do)."""
        for hpa in self._by_ns.get(("HorizontalPodAutoscaler", namespace), ()):
            ref = hpa.get("spec", "scaleTargetRef")
            if isinstance(ref, Mapping) and ref.get("kind") == kind and ref.get("name") == name:
                return hpa
        return None

    def namespace(self, name: str) -> K8sObject | None:
        """The Namespace object ``name``, when the inputs define it."""
        return self.named("Namespace", None, name)

    def persistent_volume_claim(self, namespace: str | None, name: str) -> K8sObject | None:
        """The PersistentVolumeClaim ``name`` in ``namespace``, when the inputs define it."""
        return self.named("PersistentVolumeClaim", namespace, name)

    def persistent_volume(self, name: str) -> K8sObject | None:
        """The PersistentVolume ``name`` (cluster-scoped), when the inputs define it."""
        return self.named("PersistentVolume", None, name)

    def persistent_volumes_of_class(self, storage_class: str) -> list[K8sObject]:
        """PersistentVolumes whose ``spec.storageClassName`` is ``storage_class``."""
        return [
            pv
            for pv in self.of_kind("PersistentVolume")
            if pv.get("spec", "storageClassName") == storage_class
        ]


K = TypeVar("K")


def _overlay(
    index: MutableMapping[K, list[K8sObject]], hidden: dict[int, K8sObject], keys: set[K]
) -> MutableMapping[K, list[K8sObject]]:
    """``index`` with the lists under ``keys`` filtered of the ``hidden`` objects (the rest
    is read through from ``index``, not copied)."""
    overlay = {key: [o for o in index.get(key, ()) if id(o) not in hidden] for key in keys}
    return ChainMap(overlay, index)


def is_default_class(sc: K8sObject) -> bool:
    """Whether the StorageClass ``sc`` carries the default-class annotation."""
    ann = sc.metadata.get("annotations")
    return isinstance(ann, Mapping) and any(
        str(ann.get(a, "")).lower() == "true" for a in DEFAULT_CLASS_ANNOTATIONS
    )


def _without_default_annotation(data: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = dict(data.get("metadata") or {})
    annotations = meta.get("annotations")
    if isinstance(annotations, Mapping):
        meta["annotations"] = {
            k: v for k, v in annotations.items() if k not in DEFAULT_CLASS_ANNOTATIONS
        }
    return {**data, "metadata": meta}


def unit_covers(outer: str, inner: str) -> bool:
    """Whether the unit ``inner`` is ``outer`` or lies in its directory tree (units are
    directories shown like the inputs; ``<stdin>`` covers only itself)."""
    if outer == inner:
        return True
    if outer.startswith("<") or inner.startswith("<"):
        return False
    a, b = os.path.abspath(outer), os.path.abspath(inner)
    return b == a or b.startswith(a.rstrip(os.sep) + os.sep)


class _Units:
    """Which rendered units define the same objects, and whether a default StorageClass is
    out of some StatefulSet's reach (computed once per inventory)."""

    def __init__(self, inventory: Inventory | None) -> None:
        self.by_unit: dict[str, list[K8sObject]] = defaultdict(list)
        #: identity -> its copies, for identities defined in more than one unit
        self.copies: dict[Identity, list[K8sObject]] = {}
        #: unit -> units that define a copy of one of its namespaced objects
        self.alternatives: dict[str, set[str]] = defaultdict(set)
        self.shared = False
        self.scoped_defaults = False
        if inventory is None:
            return
        defaults = [sc for sc in inventory.of_kind("StorageClass") if is_default_class(sc)]
        if defaults:
            units = {sts.unit for sts in inventory.statefulsets}
            self.scoped_defaults = any(
                not unit_covers(sc.unit, u) for sc in defaults for u in units
            )
        seen: dict[Identity, list[K8sObject]] = defaultdict(list)
        units_of: dict[Identity, set[str]] = defaultdict(set)
        for objs in inventory.by_kind.values():
            for o in objs:
                unit = o.unit
                identity = (o.kind, o.namespace, o.name)
                self.by_unit[unit].append(o)
                seen[identity].append(o)
                units_of[identity].add(unit)
        for identity, units in units_of.items():
            if len(units) < 2:
                continue
            self.copies[identity] = seen[identity]
            if identity[0] in ALTERNATIVE_MARKERS:
                for u in units:
                    self.alternatives[u].update(units - {u})
        self.shared = bool(self.copies)

    @classmethod
    def none(cls) -> _Units:
        return cls(None)

    def hidden_from(self, unit: str) -> dict[int, K8sObject]:
        """Every object (by ``id``) the unit ``unit`` does not see: all objects of its
        alternatives, and of each object copied into other units every copy but the unit's
        own (else the first)."""
        alternatives = self.alternatives.get(unit, set())
        hidden = {id(o): o for u in alternatives for o in self.by_unit.get(u, ())}
        for objs in self.copies.values():
            candidates = [o for o in objs if o.unit not in alternatives]
            if not candidates:
                continue
            own = [o for o in candidates if o.unit == unit]
            keep = own[0].unit if own else candidates[0].unit
            hidden.update((id(o), o) for o in candidates if o.unit != keep)
        return hidden


#: Node labels a PersistentVolume's node affinity pins a zone with (the second is the
#: deprecated beta label; docs: reference/labels-annotations-taints/#topologykubernetesiozone).
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def pv_is_local(pv: K8sObject) -> bool:
    """True for ``local`` and ``hostPath`` PersistentVolumes: their data lives on one node, so
    a pod using them can only run there (docs: concepts/storage/volumes/#local)."""
    spec = pv.get("spec")
    return isinstance(spec, Mapping) and (
        spec.get("local") is not None or spec.get("hostPath") is not None
    )


def pv_zones(pv: K8sObject) -> frozenset[str]:
    """Zones a PersistentVolume's ``spec.nodeAffinity.required`` allows (empty: no zone
    constraint). Terms are ORed, so the result is the union of the zones each term pins with
    an ``In`` requirement on a zone label (k8s.io/component-helpers/storage/volume/
    pv_helpers.go, CheckNodeAffinity; a term without a zone requirement allows every zone)."""
    terms = pv.get("spec", "nodeAffinity", "required", "nodeSelectorTerms")
    if not isinstance(terms, list):
        return frozenset()
    zones: set[str] = set()
    for term in terms:
        exprs = term.get("matchExpressions") if isinstance(term, Mapping) else None
        term_zones = [
            str(v)
            for e in (exprs if isinstance(exprs, list) else [])
            if isinstance(e, Mapping) and e.get("key") in ZONE_LABELS and e.get("operator") == "In"
            for v in (e.get("values") or [])
        ]
        if not term_zones:
            return frozenset()  # this term does not constrain the zone
        zones.update(term_zones)
    return frozenset(zones)
