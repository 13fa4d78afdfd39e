"""An index of every loaded object, so rules can look at what surrounds a StatefulSet.

Cross-object lookups stay within one namespace, the way the controllers resolve them.
"""

from __future__ import annotations

import heapq
import os
from collections import Counter, defaultdict
from collections.abc import (
    Callable,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    Sequence,
)
from typing import TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from .model import K8sObject
from .paths import ancestors
from .selectors import InvalidSelector, is_empty_selector, map_selector_matches, selector_matches

if TYPE_CHECKING:
    from .embedded_sim.objects import StorageClass
    from .embedded_sim.storage import StorageIndex


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

    Every lookup reads one index (a *space*: objects by kind, by kind and namespace, by kind
    and name, or one of the lookup-specific spaces of :data:`_SPACES`) through
    :meth:`_list`, which a unit's view overrides; so every lookup costs the same however
    many objects, units and copies of one object the inputs hold.
    """

    def __init__(self, objects: Iterable[K8sObject] = ()) -> None:
        self.by_kind: MutableMapping[str, list[K8sObject]] = defaultdict(list)
        # indexes, so that every lookup costs the same however large the repository is
        self._by_ns: MutableMapping[tuple[str, str | None], list[K8sObject]] = defaultdict(list)
        self._by_name: MutableMapping[tuple[str, str], list[K8sObject]] = defaultdict(list)
        #: every object in load order, and each one's position in it (by ``id``)
        self._objects: list[K8sObject] = []
        self._seq: dict[int, int] = {}
        self._spaces: dict[str, Mapping[Hashable, list[K8sObject]]] = {
            "kind": cast(Mapping[Hashable, list[K8sObject]], self.by_kind),
            "ns": cast(Mapping[Hashable, list[K8sObject]], self._by_ns),
            "name": cast(Mapping[Hashable, list[K8sObject]], self._by_name),
        }
        #: for the lookup-specific spaces: the keys each object (by ``id``) is filed under
        self._space_keys: dict[str, dict[int, tuple[Hashable, ...]]] = {}
        self._views: dict[str, Inventory] = {}
        self._units: _Units | None = None
        self._storage: StorageIndex | None = None
        self._memo: dict[Hashable, Any] = {}
        #: the unit a view sees from (``None``: the whole inventory)
        self._unit: str | None = None
        for obj in objects:
            kind = obj.kind
            self._seq[id(obj)] = len(self._objects)
            self._objects.append(obj)
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

        A view is made from parts shared by every unit with the same alternatives (see
        :class:`_Units`) plus the unit's own objects, so N units that each define a copy of
        one object cost N views of their own size, not N views of N.
        """
        if self._units is None:
            self._units = _Units(self)
        if not self._units.shared and not self._units.scoped_defaults:
            return self
        view = self._views.get(unit)
        if view is None:
            view = self._views[unit] = _UnitView(self, self._units, unit)
        return view

    def _space(self, space: str) -> Mapping[Hashable, list[K8sObject]]:
        index = self._spaces.get(space)
        if index is None:
            built: dict[Hashable, list[K8sObject]] = defaultdict(list)
            keys_of: dict[int, tuple[Hashable, ...]] = {}
            for obj, keys in _SPACES[space](self):
                keys_of[id(obj)] = keys
                for key in keys:
                    built[key].append(obj)
            index = self._spaces[space] = built
            self._space_keys[space] = keys_of
        return index

    def _list(self, space: str, key: Hashable) -> Sequence[K8sObject]:
        """The objects filed under ``key`` in ``space``, in load order."""
        return self._space(space).get(key, ())

    def _keys_of(self, space: str, obj: K8sObject) -> tuple[Hashable, ...]:
        """The keys ``obj`` is filed under in ``space``."""
        if space == "kind":
            return (obj.kind,)
        if space == "ns":
            return ((obj.kind, obj.namespace),)
        if space == "name":
            return ((obj.kind, obj.name),)
        if space == "id":
            return (identity(obj),)
        self._space(space)
        return self._space_keys[space].get(id(obj), ())

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, once per ``key`` and inventory (or view): for figures that several
        StatefulSets of one unit read (the members of a cluster spanning StatefulSets)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return cast(T, self._memo[key])

    def of_kind(self, kind: str) -> list[K8sObject]:
        return list(self._list("kind", kind))

    @property
    def statefulsets(self) -> list[K8sObject]:
        return self.of_kind("StatefulSet")

    def chart_renders(self) -> tuple[Any, ...]:
        """Each distinct render of a chart (a variant: ``RenderedObject.chart_render``) that
        a StatefulSet of the run came from (every unit's, even from a unit's view), once, in
        load order (computed once)."""
        whole = getattr(self, "_base", self)
        if whole is not self:
            return cast(Inventory, whole).chart_renders()
        found = self.__dict__.get("_chart_renders")
        if found is None:
            seen: dict[Any, None] = {}
            for sts in self.statefulsets:
                render = getattr(sts, "chart_render", None)
                if render is not None:
                    seen.setdefault(render, None)
            found = self.__dict__["_chart_renders"] = tuple(seen)
        return cast(tuple[Any, ...], found)

    def service(self, namespace: str | None, name: str) -> K8sObject | None:
        """The Service ``name`` in ``namespace`` (the first one loaded, if defined twice)."""
        return self.named("Service", namespace, name)

    def services_named(self, name: str) -> list[K8sObject]:
        """Every Service called ``name``, in any namespace, in load order."""
        return list(self._list("name", ("Service", name)))

    def serving_services(
        self, namespace: str | None, pod_labels: Mapping[str, Any]
    ) -> list[K8sObject]:
        """Services in ``namespace`` that declare ports and whose selector selects pods with
        ``pod_labels`` (:func:`~ssrisk.selectors.map_selector_matches`: an empty selector
        selects nothing), in load order; indexed like :meth:`pdbs_selecting`."""
        out: list[K8sObject] = []
        for svc in self._candidates("svc", namespace, pod_labels):
            if map_selector_matches(svc.get("spec", "selector"), pod_labels):
                out.append(svc)
        return out

    def statefulsets_labelled(self, namespace: str | None, key: str, value: str) -> list[K8sObject]:
        """StatefulSets in ``namespace`` whose pod template's label ``key`` reads ``value``
        (compared as text), in load order."""
        if value == "None":  # (a template without the label reads "None" too)
            return [
                sts
                for sts in self.in_namespace("StatefulSet", namespace)
                if str(_template_labels(sts).get(key)) == value
            ]
        return list(self._list("sts-label", (namespace, key, value)))

    def tally_labelled(
        self,
        namespace: str | None,
        group: tuple[tuple[str, str], ...],
        weigh: Callable[[K8sObject], int | None],
        key: Hashable,
    ) -> Tally:
        """The sum of ``weigh(sts)`` (``None``: not counted), in all and by name, over the
        StatefulSets in ``namespace`` whose pod template's labels read every pair of
        ``group`` (at least one pair; compared as text), as this inventory sees them; ``key``
        names ``weigh`` (the same key, the same function).

        The whole inventory's tally is made once; a unit's view subtracts what it does not
        see when that is a few objects (a chain of environments: its neighbours), so N views
        cost N times their hidden objects, not N times N (:meth:`_unseen`).
        """
        whole = self._whole()
        memo_key = ("tally-labelled", namespace, group, key)
        pair, counted, tally = whole.memo(
            memo_key, lambda: whole._tally_labelled(namespace, group, weigh)
        )
        hidden = self._unseen("sts-label", (namespace, *pair)) if pair is not None else None
        if hidden is None:  # (too many hidden to name: this view's own tally)
            return self.memo(
                (*memo_key, "seen"), lambda: self._tally_labelled(namespace, group, weigh)[2]
            )
        less = [counted[id(o)] for o in hidden if id(o) in counted]
        return tally.without(less) if less else tally

    def _tally_labelled(
        self,
        namespace: str | None,
        group: tuple[tuple[str, str], ...],
        weigh: Callable[[K8sObject], int | None],
    ) -> tuple[tuple[str, str] | None, dict[int, tuple[str, int]], Tally]:
        """The pair of ``group`` whose list is read (``None``: a value reading ``None``, which
        no index holds), each counted StatefulSet's (name, weight) by ``id``, and the tally."""
        lists = [(pair, self.statefulsets_labelled(namespace, *pair)) for pair in group]
        pair, candidates = min(lists, key=lambda pl: len(pl[1]))  # (the rarest pair)
        counted: dict[int, tuple[str, int]] = {}
        for sts in candidates:
            labels = _template_labels(sts)
            if all(str(labels.get(k)) == v for k, v in group):
                weight = weigh(sts)
                if weight is not None:
                    counted[id(sts)] = (sts.name, weight)
        read = None if "None" in dict(group).values() else pair
        return read, counted, Tally.of(counted.values())

    def _whole(self) -> Inventory:
        """The whole inventory (this one, or the one a view is of)."""
        return self

    def _unseen(self, space: str, key: Hashable) -> list[K8sObject] | None:
        """The objects of the whole inventory's list under ``key`` in ``space`` that this
        inventory does not see, or ``None`` when they are too many to be cheap to name."""
        return []

    def volumes_claimed_by_ordinal(self, namespace: str, prefix: str) -> list[K8sObject]:
        """PersistentVolumes whose ``spec.claimRef`` is in ``namespace`` (``None``: default)
        and names ``prefix`` followed by digits (a claim of a StatefulSet's ordinal), in load
        order; it may also hold volumes whose claim name is ``prefix`` alone."""
        return list(self._list("pv-claim", (namespace, prefix)))

    def pdbs_selecting(
        self,
        namespace: str | None,
        pod_labels: Mapping[str, Any],
        limit: int | None = None,
        every_definition: bool = False,
    ) -> list[K8sObject]:
        """PodDisruptionBudgets in ``namespace`` whose selector selects pods with ``pod_labels``,
        in load order; of several definitions of one PDB only the last (:meth:`replaced`),
        unless ``every_definition`` (to judge each manifest as written).

        policy/v1: an empty selector selects every pod in the namespace; policy/v1beta1: an
        empty selector selects nothing (web: docs/tasks/run-application/configure-pdb.md,
        "Specifying a PodDisruptionBudget"). Invalid selectors select nothing. PDBs are
        indexed by the least common of their ``matchLabels`` pairs, so a namespace with
        thousands of them costs a few dictionary lookups per StatefulSet, not a scan. With
        ``limit``, the search stops at that many (the first in load order): when thousands
        of PDBs select the same pods, each StatefulSet then costs ``limit``, not thousands.
        """
        out: list[K8sObject] = []
        for pdb in self._candidates("pdb", namespace, pod_labels):
            if limit is not None and len(out) >= limit:
                break
            if pdb_selects(pdb, pod_labels) and (every_definition or not self.replaced(pdb)):
                out.append(pdb)
        return out

    def replaced(self, obj: K8sObject) -> bool:
        """Whether a later definition of ``obj`` (the same kind, namespace and name) is seen
        here: ``kubectl apply`` of the inputs in order leaves only the last one, so an earlier
        copy in the same unit counts for nothing (copies in other units are alternatives, not
        seen: :meth:`for_unit`)."""
        same = [o for o in self._list("name", (obj.kind, obj.name)) if o.namespace == obj.namespace]
        return bool(same) and same[-1] is not obj

    def defined_twice(self, obj: K8sObject) -> bool:
        """Whether another object of the same kind, namespace and name is seen here."""
        same = [o for o in self._list("name", (obj.kind, obj.name)) if o.namespace == obj.namespace]
        return len(same) > 1

    def _candidates(
        self, space: str, namespace: str | None, pod_labels: Mapping[str, Any]
    ) -> Iterator[K8sObject]:
        """The objects of a selector space (:func:`_selector_space`) that may select pods with
        ``pod_labels``: those filed under one of the pod's label pairs, and those filed under
        no pair; each once, in load order."""
        lists = [
            self._lazy(space, (namespace, None)),
            *(self._lazy(space, (namespace, (str(k), str(v)))) for k, v in pod_labels.items()),
        ]
        seq = self._seq
        previous: K8sObject | None = None
        for obj in heapq.merge(*lists, key=lambda o: seq[id(o)]):
            if obj is not previous:
                previous = obj
                yield obj

    def _lazy(self, space: str, key: Hashable) -> Iterator[K8sObject]:
        """:meth:`_list`, read one object at a time (a view reads only as far as it is
        needed: pdbs_selecting stops at its limit)."""
        return iter(self._list(space, key))

    def storage_class(self, name: str) -> K8sObject | None:
        """The StorageClass ``name`` (the last one loaded, if defined twice: what ``kubectl
        apply`` of the inputs in order leaves, and what the simulator reads)."""
        found = [
            o for o in self._list("name", ("StorageClass", name)) if o.metadata.get("name") == name
        ]
        return found[-1] if found else None

    def storage_class_for_claim(self, name: str | None) -> K8sObject | None:
        """The StorageClass a claim that asks for class ``name`` gets, when the inputs define
        it (``name`` as :func:`embedded_sim.storage.claim_class_name` reads a claim: the beta
        annotation, else ``storageClassName``).

        A name is looked up; None (neither set) gets the default class the DefaultStorageClass
        admission plugin fills in (plugin/pkg/admission/storage/storageclass/setdefault);
        ``""`` asks for no class (static binding only).
        """
        if name is None:
            return self.default_storage_class()
        return self.storage_class(str(name)) if name else None

    def default_storage_class(self) -> K8sObject | None:
        """The default StorageClass for claims of this view's unit (see :meth:`for_unit`):
        of the whole inventory, the class :func:`embedded_sim.objects.default_class` picks
        of those annotated as the default."""

        def pick() -> K8sObject | None:
            seq = self._seq
            found = [o for lst in self._space("sc-default").values() for o in lst]
            return chosen_default(sorted(found, key=lambda o: seq[id(o)]))

        return self.memo("default-storage-class", pick)

    def storage_class_data(self) -> list[Mapping[str, Any]]:
        """The StorageClasses as data for the simulator, which picks the default class by its
        annotation: a default class out of this unit's reach is given without it."""
        return [self._class_data(sc) for sc in self.of_kind("StorageClass")]

    def _class_data(self, sc: K8sObject) -> Mapping[str, Any]:
        if not is_default_class(sc) or self._default_reaches(sc):
            return sc.data
        return _without_default_annotation(sc.data)

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
        return self._unit is None or sc.cluster_wide or unit_covers(sc.unit, self._unit)

    def named(self, kind: str, namespace: str | None, name: str) -> K8sObject | None:
        """The object of ``kind`` called ``name`` in ``namespace`` (``None`` for cluster-scoped
        kinds); the first one loaded when it is defined twice."""
        found = self._list("id", (kind, namespace, name))
        return found[0] if found else None

    def all_named(self, kind: str, namespace: str | None, name: str) -> list[K8sObject]:
        """Every object of ``kind`` called ``name`` in ``namespace``, in load order."""
        return list(self._list("id", (kind, namespace, name)))

    def in_namespace(self, kind: str, namespace: str | None) -> list[K8sObject]:
        """Every object of ``kind`` in ``namespace``, in load order."""
        return list(self._list("ns", (kind, namespace)))

    def autoscaler_for(self, namespace: str | None, kind: str, name: str) -> K8sObject | None:
        """The HorizontalPodAutoscaler in ``namespace`` whose ``spec.scaleTargetRef`` names the
        ``kind`` object ``name`` (the first one loaded, when several do)."""
        found = self._list("hpa", (namespace, kind, name))
        return found[0] if found else None


K = TypeVar("K")
T = TypeVar("T")

_NO_SIG: frozenset[Identity] = frozenset()


def identity(obj: K8sObject) -> Identity:
    """What makes two objects copies of one: kind, namespace and name."""
    return (obj.kind, obj.namespace, obj.name)


def pdb_selects(pdb: K8sObject, pod_labels: Mapping[str, Any]) -> bool:
    """Whether the PodDisruptionBudget ``pdb`` selects pods with ``pod_labels`` (see
    :meth:`Inventory.pdbs_selecting`)."""
    sel = pdb.get("spec", "selector")
    if is_empty_selector(sel):
        return pdb.api_version == "policy/v1"
    try:
        return isinstance(sel, Mapping) and selector_matches(sel, pod_labels)
    except InvalidSelector:
        return False


class Tally(msgspec.Struct, frozen=True):
    """Weights added up (:meth:`Inventory.tally_labelled`): ``total``, and by name
    (:meth:`weight`); ``counts``: how many were added, by name."""

    total: int
    weights: Mapping[str, int]
    counts: Mapping[str, int]
    #: (weights, counts) taken away from the by-name figures (a view's hidden objects)
    less: tuple[Mapping[str, int], Mapping[str, int]] = ({}, {})

    @classmethod
    def of(cls, weighed: Iterable[tuple[str, int]]) -> Tally:
        weights: dict[str, int] = {}
        counts: dict[str, int] = {}
        for name, weight in weighed:
            weights[name] = weights.get(name, 0) + weight
            counts[name] = counts.get(name, 0) + 1
        return cls(sum(weights.values()), weights, counts)

    def without(self, weighed: Iterable[tuple[str, int]]) -> Tally:
        """This tally less ``weighed`` (of this tally's own): costs their number, not the
        tally's."""
        less = Tally.of(weighed)
        return Tally(
            self.total - less.total, self.weights, self.counts, (less.weights, less.counts)
        )

    def weight(self, name: str) -> int:
        """What the objects named ``name`` add up to (0: none)."""
        return self.weights.get(name, 0) - self.less[0].get(name, 0)

    def by_name(self) -> dict[str, int]:
        """Every name counted with its weight, in first-counted order (costs the names)."""
        return {
            name: self.weight(name)
            for name, n in self.counts.items()
            if n > self.less[1].get(name, 0)
        }


def _template_labels(sts: K8sObject) -> Mapping[str, Any]:
    labels = sts.get("spec", "template", "metadata", "labels")
    return labels if isinstance(labels, Mapping) else {}


def _selector_space(
    objs: Iterable[K8sObject], pairs_of: Callable[[K8sObject], list[tuple[str, str]] | None]
) -> Iterator[tuple[K8sObject, tuple[Hashable, ...]]]:
    """File each object under ``(namespace, pair)`` for the least common, within its
    namespace, of the label pairs its selector requires (``pairs_of``; any one of them finds
    it, the least common gives a lookup the fewest candidates), or under ``(namespace,
    None)`` when it requires none."""
    items = [(o, pairs_of(o)) for o in objs]
    seen: Counter[tuple[str | None, tuple[str, str]]] = Counter()
    for o, pairs in items:
        seen.update((o.namespace, p) for p in pairs or ())
    for o, pairs in items:
        ns = o.namespace
        if not pairs:
            yield o, ((ns, None),)
        else:
            yield o, ((ns, min(pairs, key=lambda p: (seen[(ns, p)], p))),)


def _pdb_pairs(pdb: K8sObject) -> list[tuple[str, str]] | None:
    labels = pdb.get("spec", "selector", "matchLabels")
    if isinstance(labels, Mapping) and labels:
        return sorted((str(k), str(v)) for k, v in labels.items())
    return None


def _service_pairs(svc: K8sObject) -> list[tuple[str, str]] | None:
    # map_selector_matches reads a missing pod label as "None": a pair of that value is no
    # sure sign, so it is never the one a Service is filed under
    sel = svc.get("spec", "selector")
    if not isinstance(sel, Mapping):
        return None
    return sorted((str(k), str(v)) for k, v in sel.items() if str(v) != "None") or None


def _serving(inventory: Inventory) -> Iterator[K8sObject]:
    for svc in inventory.by_kind.get("Service", ()):
        ports = svc.get("spec", "ports")
        sel = svc.get("spec", "selector")
        if isinstance(ports, list) and ports and isinstance(sel, Mapping) and sel:
            yield svc


def _hpa_keys(inventory: Inventory) -> Iterator[tuple[K8sObject, tuple[Hashable, ...]]]:
    for hpa in inventory.by_kind.get("HorizontalPodAutoscaler", ()):
        ref = hpa.get("spec", "scaleTargetRef")
        if isinstance(ref, Mapping):
            kind, name = ref.get("kind"), ref.get("name")
            if isinstance(kind, str) and isinstance(name, str):
                yield hpa, ((hpa.namespace, kind, name),)


def _sts_label_keys(inventory: Inventory) -> Iterator[tuple[K8sObject, tuple[Hashable, ...]]]:
    for sts in inventory.by_kind.get("StatefulSet", ()):
        labels = _template_labels(sts)
        yield sts, tuple((sts.namespace, str(k), str(v)) for k, v in labels.items())


def _claim_keys(inventory: Inventory) -> Iterator[tuple[K8sObject, tuple[Hashable, ...]]]:
    for pv in inventory.by_kind.get("PersistentVolume", ()):
        ref = pv.get("spec", "claimRef")
        if isinstance(ref, Mapping):
            name = str(ref.get("name") or "")
            end = len(name)
            while end and name[end - 1].isdigit():
                end -= 1
            yield pv, ((str(ref.get("namespace") or "default"), name[:end]),)


def _unit_dir(unit: str) -> str:
    """A unit as :func:`unit_covers` compares it."""
    return unit if unit.startswith("<") else os.path.abspath(unit)


#: Where a default StorageClass of a ``--context`` input reaches (:attr:`K8sObject.cluster_wide`):
#: every unit's claims.
_EVERY_UNIT = "<cluster>"


def _unit_dirs(unit: str) -> list[str]:
    """The units that cover ``unit`` (:func:`unit_covers`), as :func:`_unit_dir` gives them:
    itself and every directory above it, and the cluster's (``--context``) defaults."""
    dirs = [unit] if unit.startswith("<") else list(ancestors(os.path.abspath(unit)))
    return [*dirs, _EVERY_UNIT]


def _default_unit(sc: K8sObject) -> str:
    """The unit whose claims (and those of units below it) the default class ``sc`` is the
    default for, as :func:`_unit_dir` gives units."""
    return _EVERY_UNIT if sc.cluster_wide else _unit_dir(sc.unit)


def _default_class_keys(inventory: Inventory) -> Iterator[tuple[K8sObject, tuple[Hashable, ...]]]:
    for sc in inventory.by_kind.get("StorageClass", ()):
        if is_default_class(sc):
            yield sc, (_default_unit(sc),)


def _node_volume_keys(inventory: Inventory) -> Iterator[tuple[K8sObject, tuple[Hashable, ...]]]:
    from .embedded_sim.storage import node_local_class

    for pv in inventory.by_kind.get("PersistentVolume", ()):
        cls = node_local_class(pv.data)
        if cls is not None:
            yield pv, (cls,)


#: The lookup-specific spaces: each files objects of the whole inventory under its keys.
_SPACES: dict[str, Callable[[Inventory], Iterable[tuple[K8sObject, tuple[Hashable, ...]]]]] = {
    "id": lambda inv: ((o, (identity(o),)) for o in inv._objects),
    "pdb": lambda inv: _selector_space(inv.by_kind.get("PodDisruptionBudget", ()), _pdb_pairs),
    "svc": lambda inv: _selector_space(_serving(inv), _service_pairs),
    "hpa": _hpa_keys,
    "sts-label": _sts_label_keys,
    "pv-claim": _claim_keys,
    "sc-default": _default_class_keys,
    "pv-node": _node_volume_keys,
}


class _ViewIndex(Mapping[Hashable, list[K8sObject]]):
    """One of a view's three main indexes, read through :meth:`_UnitView._list`."""

    def __init__(self, view: _UnitView, space: str) -> None:
        self._view, self._space_name = view, space

    def __getitem__(self, key: Hashable) -> list[K8sObject]:
        found = self._view._list(self._space_name, key)
        if not found:
            raise KeyError(key)
        return found

    def __iter__(self) -> Iterator[Hashable]:
        base = self._view._base._space(self._space_name)
        return (key for key in base if self._view._list(self._space_name, key))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class _UnitView(Inventory):
    """The inventory as the unit ``unit`` sees it (:meth:`Inventory.for_unit`).

    Each list is the part every unit with the same alternatives sees (``_Units.shared_part``,
    made once for them) without the objects the unit defines a copy of, merged in load order
    with the unit's own objects.
    """

    #: Objects :meth:`_lazy` skips before it makes the shared list.
    SKIPS = 32

    def __init__(self, base: Inventory, units: _Units, unit: str) -> None:
        self._base = base
        self._parts = units
        self._unit = unit
        self._sig = units.sig.get(unit, _NO_SIG)
        self._own = units.by_unit.get(unit, [])
        self._own_ids = {identity(o) for o in self._own}
        self._own_index: dict[str, dict[Hashable, list[K8sObject]]] = {}
        self._cache: dict[tuple[str, Hashable], list[K8sObject]] = {}
        self._objects = []
        self._seq = base._seq
        self._spaces = {}
        self._space_keys = {}
        self._views = {}
        self._units = _Units.none()
        self._storage = None
        self._memo = {}
        self.by_kind = cast(MutableMapping[str, list[K8sObject]], _ViewIndex(self, "kind"))
        self._by_ns = cast(
            MutableMapping[tuple[str, str | None], list[K8sObject]], _ViewIndex(self, "ns")
        )
        self._by_name = cast(
            MutableMapping[tuple[str, str], list[K8sObject]], _ViewIndex(self, "name")
        )

    def for_unit(self, unit: str) -> Inventory:
        return self._base.for_unit(unit)

    def _space(self, space: str) -> Mapping[Hashable, list[K8sObject]]:
        return self._base._space(space)

    def _keys_of(self, space: str, obj: K8sObject) -> tuple[Hashable, ...]:
        return self._base._keys_of(space, obj)

    def _list(self, space: str, key: Hashable) -> list[K8sObject]:
        cached = self._cache.get((space, key))
        if cached is not None:
            return cached
        shared = self._parts.shared_part(self._base, space, key, self._sig)
        if self._own_ids:
            shared = [o for o in shared if identity(o) not in self._own_ids]
        own = self._own_under(space).get(key, ())
        if own:
            seq = self._seq
            out = list(heapq.merge(shared, own, key=lambda o: seq[id(o)]))
        else:
            out = list(shared)
        self._cache[(space, key)] = out
        return out

    def _own_under(self, space: str) -> dict[Hashable, list[K8sObject]]:
        index = self._own_index.get(space)
        if index is None:
            index = self._own_index[space] = defaultdict(list)
            for obj in self._own:
                for key in self._base._keys_of(space, obj):
                    index[key].append(obj)
        return index

    #: Units and copied objects :meth:`_unseen` looks at, at the most.
    UNSEEN_LIMIT = 64

    def _whole(self) -> Inventory:
        return self._base

    def _unseen(self, space: str, key: Hashable) -> list[K8sObject] | None:
        # the objects of the alternatives, and the copies not kept (as _lazy decides)
        parts, sig = self._parts, self._sig
        alternatives = parts.alternatives(sig, self.UNSEEN_LIMIT)
        shared = parts.shared_list(self._base, space, key)
        if alternatives is None or len(shared.copied) > self.UNSEEN_LIMIT:
            return None
        hidden = [
            o for u in alternatives if u != self._unit for o in shared.signed_by_unit.get(u, ())
        ]
        for o in shared.copied:
            ident = identity(o)
            kept = self._unit if ident in self._own_ids else parts.keep(ident, sig)
            if o.unit != kept:
                hidden.append(o)
        return hidden

    def _lazy(self, space: str, key: Hashable) -> Iterator[K8sObject]:
        """:meth:`_list` one object at a time: the whole inventory's list is read as far as
        it is needed, with the objects this unit does not see skipped; past ``skips`` of
        them (:attr:`SKIPS`), the list shared by the units of this one's alternatives is made
        (once for all of them) and read on from there."""
        cached = self._cache.get((space, key))
        if cached is not None:
            yield from cached
            return
        parts, sig, unit, own_ids = self._parts, self._sig, self._unit, self._own_ids
        skipped = 0
        last = -1
        seq = self._seq
        for obj in self._base._list(space, key):
            ident = identity(obj)
            if ident in own_ids:
                seen = obj.unit == unit
            elif ident in parts.copies:
                seen = obj.unit == parts.keep(ident, sig)
            else:
                seen = parts.sig.get(obj.unit, _NO_SIG).isdisjoint(sig)
            if seen:
                last = seq[id(obj)]
                yield obj
                continue
            skipped += 1
            if skipped > self.SKIPS:
                for rest in self._list(space, key):
                    if seq[id(rest)] > last:
                        yield rest
                return

    def _reaching_defaults(self) -> list[K8sObject]:
        """The default StorageClasses of this unit and of the directories above it, in load
        order (found once per view)."""

        def find() -> list[K8sObject]:
            assert self._unit is not None
            found = [o for d in _unit_dirs(self._unit) for o in self._list("sc-default", d)]
            seq = self._seq
            return sorted(found, key=lambda o: seq[id(o)])

        return self.memo("reaching-defaults", find)

    def default_storage_class(self) -> K8sObject | None:
        return chosen_default(self._reaching_defaults())

    def storage_inputs(
        self, class_names: Iterable[str | None]
    ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        # what storage_index(self.storage_class_data(), volumes).inputs(class_names) gives,
        # read from the view's lists instead of made from all of its classes and volumes
        wanted = list(dict.fromkeys(c or "" for c in class_names))
        classes: list[Mapping[str, Any]] = []
        for c in wanted:
            named = [
                o for o in self._list("name", ("StorageClass", c)) if o.metadata.get("name") == c
            ]
            if named:  # (the last of a name, as storage_index keeps it)
                classes.append(self._class_data(named[-1]))
        default = self.default_storage_class()
        if default is not None and not any(c is default.data for c in classes):
            classes.append(default.data)
        volumes = [found[0].data for c in wanted if (found := self._list("pv-node", c))]
        return classes, volumes


class _Units:
    """Which rendered units define the same objects, and whether a default StorageClass is
    out of some StatefulSet's reach (computed once per inventory, in one pass).

    A unit's alternatives are the units that define a copy of one of its namespaced objects
    of :data:`ALTERNATIVE_MARKERS`: they are the units sharing one of its *signature*, the
    set of such objects it defines. What a unit sees of the objects it does not define itself
    depends on its signature alone, so it is computed once per signature
    (:meth:`shared_part`).
    """

    def __init__(self, inventory: Inventory | None) -> None:
        self.by_unit: dict[str, list[K8sObject]] = defaultdict(list)
        #: identity -> the units defining it, in load order, for identities defined in more
        #: than one unit
        self.copies: dict[Identity, list[str]] = {}
        #: unit -> the identities of ALTERNATIVE_MARKERS it shares with another unit
        self.sig: dict[str, frozenset[Identity]] = {}
        self.shared = False
        self.scoped_defaults = False
        self._keep: dict[tuple[Identity, frozenset[Identity]], str | None] = {}
        self._groups: dict[tuple[str, Hashable], dict[Identity, dict[str, list[K8sObject]]]] = {}
        self._lists: dict[tuple[str, Hashable], _SharedList] = {}
        self._parts: dict[tuple[frozenset[Identity], str, Hashable], list[K8sObject]] = {}
        if inventory is None:
            return
        defaults = [sc for sc in inventory.of_kind("StorageClass") if is_default_class(sc)]
        # (a cluster's default, read with --context, reaches every unit: only the defaults of
        # the checked files are scoped, and only where one leaves some set's unit out)
        tree_units = {_unit_dir(sc.unit) for sc in defaults if not sc.cluster_wide}
        if tree_units:
            units = {sts.unit for sts in inventory.statefulsets}
            self.scoped_defaults = any(not _covered(u, tree_units) for u in units)
        units_of: dict[Identity, dict[str, None]] = defaultdict(dict)
        for o in inventory._objects:
            self.by_unit[o.unit].append(o)
            units_of[identity(o)][o.unit] = None
        sig: dict[str, set[Identity]] = defaultdict(set)
        for ident, units_here in units_of.items():
            if len(units_here) < 2:
                continue
            self.copies[ident] = list(units_here)
            if ident[0] in ALTERNATIVE_MARKERS:
                for u in units_here:
                    sig[u].add(ident)
        self.sig = {u: frozenset(s) for u, s in sig.items()}
        self.shared = bool(self.copies)

    @classmethod
    def none(cls) -> _Units:
        return cls(None)

    def keep(self, ident: Identity, sig: frozenset[Identity]) -> str | None:
        """The unit whose copies of ``ident`` a unit of signature ``sig`` that defines none
        sees: the first defining it that is not an alternative (shares no identity of
        ``sig``), or ``None``."""
        key = (ident, sig)
        if key not in self._keep:
            self._keep[key] = next(
                (u for u in self.copies[ident] if self.sig.get(u, _NO_SIG).isdisjoint(sig)),
                None,
            )
        return self._keep[key]

    def shared_list(self, inventory: Inventory, space: str, key: Hashable) -> _SharedList:
        """The list under ``key`` in ``space`` sorted by who sees what (made once)."""
        shared = self._lists.get((space, key))
        if shared is None:
            shared = self._lists[(space, key)] = _SharedList(self, inventory._list(space, key))
        return shared

    def alternatives(self, sig: frozenset[Identity], limit: int) -> frozenset[str] | None:
        """The units sharing an identity of ``sig`` (the asking unit among them), or
        ``None`` when that takes more than ``limit`` units to say."""
        if sum(len(self.copies[ident]) for ident in sig) > limit:
            return None
        return frozenset(u for ident in sig for u in self.copies[ident])

    def shared_part(
        self, inventory: Inventory, space: str, key: Hashable, sig: frozenset[Identity]
    ) -> list[K8sObject]:
        """What a unit of signature ``sig`` sees under ``key`` in ``space`` of the objects
        whose identity it does not define, in load order."""
        cache_key = (sig, space, key)
        part = self._parts.get(cache_key)
        if part is not None:
            return part
        shared = self.shared_list(inventory, space, key)
        if shared.all_alternatives(sig):
            # (no O(list) walk per signature: a chain of units that all also copy one object
            # has as many signatures as units, and each would walk every list)
            part = shared.part_for(self, sig, inventory._seq)
            self._parts[cache_key] = part
            return part
        groups = self._groups.get((space, key))
        if groups is None:
            groups = self._groups[(space, key)] = defaultdict(lambda: defaultdict(list))
            for o in inventory._list(space, key):
                groups[identity(o)][o.unit].append(o)
        part = []
        for ident, per_unit in groups.items():
            if ident in self.copies:
                unit = self.keep(ident, sig)
                part.extend(per_unit.get(unit, ()) if unit is not None else ())
            else:
                ((unit, objs),) = per_unit.items()
                if self.sig.get(unit, _NO_SIG).isdisjoint(sig):
                    part.extend(objs)
        if len(groups) > 1:
            seq = inventory._seq
            part.sort(key=lambda o: seq[id(o)])
        self._parts[cache_key] = part
        return part


class _SharedList:
    """One list of the inventory (a space's key) sorted by what decides who sees each object
    (:meth:`_Units.shared_part`), so that a signature sharing an identity with every unit that
    has one and defines objects here is answered from the objects of units without a
    signature alone: those units are never anyone's alternatives.

    ``fixed``: objects of units without a signature that every such signature sees (an
    identity defined once, or first defined by a unit without a signature); ``varying``:
    objects of units without a signature whose identity a unit with one defines first (seen
    when :meth:`_Units.keep` keeps their unit).
    """

    __slots__ = ("common", "copied", "fixed", "signed", "signed_by_unit", "varying")

    def __init__(self, units: _Units, objects: Iterable[K8sObject]) -> None:
        self.fixed: list[K8sObject] = []
        self.varying: list[K8sObject] = []
        #: objects whose identity several units define; objects of units with a signature
        #: whose identity only they define, by unit (for :meth:`_UnitView.unseen`)
        self.copied: list[K8sObject] = []
        self.signed_by_unit: dict[str, list[K8sObject]] = defaultdict(list)
        common: frozenset[Identity] | None = None
        self.signed = False
        for o in objects:
            copies = units.copies.get(identity(o))
            if copies is not None:
                self.copied.append(o)
            own = units.sig.get(o.unit)
            if own is not None:
                self.signed = True
                common = own if common is None else common & own
                if copies is None:
                    self.signed_by_unit[o.unit].append(o)
                continue
            if copies is None or (copies[0] == o.unit and copies[0] not in units.sig):
                self.fixed.append(o)
            elif copies[0] in units.sig:
                self.varying.append(o)
            # (else a unit without a signature defines it first: only that one is seen)
        #: identities every unit with a signature that defines objects here defines
        self.common = common or _NO_SIG

    def all_alternatives(self, sig: frozenset[Identity]) -> bool:
        """Whether every unit with a signature that defines objects here is an alternative of
        a unit of signature ``sig`` (shares one of its identities)."""
        return not self.signed or not sig.isdisjoint(self.common)

    def part_for(
        self, units: _Units, sig: frozenset[Identity], seq: Mapping[int, int]
    ) -> list[K8sObject]:
        """What :meth:`_Units.shared_part` gives for ``sig`` when :meth:`all_alternatives`
        (``seq``: the inventory's load order by object id)."""
        if not self.varying:
            return self.fixed
        seen = [o for o in self.varying if units.keep(identity(o), sig) == o.unit]
        if not seen:
            return self.fixed
        return sorted([*self.fixed, *seen], key=lambda o: seq[id(o)])


def _covered(unit: str, default_units: set[str]) -> bool:
    """Whether ``unit`` is one of ``default_units`` (as :func:`_unit_dir` gives them) or lies
    below one."""
    return any(d in default_units for d in _unit_dirs(unit))


def storage_class_model(sc: K8sObject) -> StorageClass:
    """The typed model of the StorageClass ``sc`` (:class:`embedded_sim.objects.StorageClass`),
    parsed once per object."""
    from .embedded_sim.objects import StorageClass

    return sc.memo("storage-class", lambda: StorageClass.from_object(sc.data))


def is_default_class(sc: K8sObject) -> bool:
    """Whether the StorageClass ``sc`` carries the default-class annotation."""
    return storage_class_model(sc).is_default


def chosen_default(classes: Sequence[K8sObject]) -> K8sObject | None:
    """Of ``classes`` (in load order), the default class a claim naming none gets
    (:func:`embedded_sim.objects.default_class`)."""
    from .embedded_sim.objects import default_class

    models = [storage_class_model(sc) for sc in classes]
    chosen = default_class(models)
    return next((sc for sc, m in zip(classes, models, strict=True) if m is chosen), None)


def _without_default_annotation(data: Mapping[str, Any]) -> Mapping[str, Any]:
    from .embedded_sim.objects import DEFAULT_CLASS_ANNOTATIONS

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
