"""Memoised `simulate()`: one run per distinct behaviour, renamed for every StatefulSet.

A repository holds many StatefulSets that differ only in their names, namespaces and label
values, and the linter asks for several scenarios of each. The outcome of a run depends only on

* the parsed workload (`workload.Workload`) without `namespace`, `name` and `labels`: label
  selectors (and the namespaces) of required pod (anti-)affinity and DoNotSchedule topology
  spread are already resolved against the pod's own labels and namespace into `hard_rules` at
  parse time, and nothing else in the simulator reads a label or the namespace;
* the storage each claim template resolves to (topology, binding mode, class name and the
  assumption note), which is all the simulator takes from StorageClasses and PVs;
* the PDBs passed in (already selected by the caller), without their names;
* scenario, Kubernetes version string, feature-gate overrides, profile and horizon.

A miss runs the simulation with placeholder names (`PLACEHOLDER_SET`, `placeholder_pdb(i)`) and
stores that result; every call returns a copy with the placeholders replaced by the caller's
names. Nothing in the simulator orders or decides by a name except by the ordinal part of pod
and claim names (see `cluster.Volume.sort_key`), so the renamed result is byte-identical to an
uncached run (tests/sim/test_memo.py proves it).
"""

from __future__ import annotations

import dataclasses
from _thread import allocate_lock
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Protocol, cast

import msgspec

from .disruption import DisruptionBudget
from .persist import FORMAT, decode_result, encode_result, key_bytes
from .podtemplate import PodTemplate, SetSpec
from .profile import ClusterProfile
from .result import PodResult, ScenarioResult, TimelineEvent
from .simulation import resolve_storage
from .workload import Workload, parse_statefulset

PLACEHOLDER_SET = "\x00set\x00"
MAX_ENTRIES = 4096
_NAME_FIELDS = frozenset({"namespace", "name", "labels", "notes"})
_DEFAULT_PROFILE = ClusterProfile()


def placeholder_pdb(index: int) -> str:
    """Name given to the `index`-th PDB during a cached run."""
    return f"\x00pdb{index}\x00"


def _freeze(v: Any) -> Hashable:
    """A hashable, order-stable form of plain manifest data."""
    if isinstance(v, Mapping):
        return ("map", tuple(sorted((str(k), _freeze(x)) for k, x in v.items())))
    if isinstance(v, (list, tuple)):
        return ("seq", tuple(_freeze(x) for x in v))
    if v is None or isinstance(v, (bool, int, float, str)):
        return (type(v).__name__, v)
    names = getattr(type(v), "__struct_fields__", None)  # a typed value of the model
    if names is not None:
        return _freeze({name: getattr(v, name) for name in names})
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return _freeze({f.name: getattr(v, f.name) for f in dataclasses.fields(v)})
    return _Unstable(repr(v))


class _Unstable:
    """A key part known only by its ``repr``: equal within a process, never kept outside it
    (a repr may name a memory address; `persist.key_bytes` cannot encode this)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unstable) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("repr", self.text))


_KEY_FIELDS: tuple[str, ...] = tuple(
    name for name in Workload.__struct_fields__ if name not in _NAME_FIELDS
)


def _workload_key(wl: Workload) -> Hashable:
    out: list[Hashable] = []
    for name in _KEY_FIELDS:
        v = getattr(wl, name)
        try:
            hash(v)
        except TypeError:
            v = _freeze(v)
        else:
            if isinstance(v, (bool, int, float)) or v is None:
                v = (type(v).__name__, v)  # keep 1, 1.0 and True apart
        out.append(v)
    return tuple(out)


class _HashedKey:
    """A large cache key that hashes once (a tuple computes its hash on every lookup, and a
    StatefulSet's key is looked up once per scenario)."""

    __slots__ = ("_hash", "value")

    def __init__(self, value: Hashable) -> None:
        self.value = value
        self._hash = hash(value)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, _HashedKey):
            return NotImplemented
        return self._hash == other._hash and self.value == other.value


class Prepared(msgspec.Struct, frozen=True, dict=True):
    """A call's cache key and real names; builds the placeholder-named inputs on a miss."""

    key: Hashable
    raw_statefulset: Mapping[str, Any]
    raw_pdbs: tuple[Mapping[str, Any], ...]
    name: str
    namespace: str
    pdb_names: tuple[str, ...]

    def key_for(self, scenario: str) -> Hashable:
        """The cache key of this call's inputs through `scenario`."""
        return (scenario, self.key)

    def statefulset(self) -> Mapping[str, Any]:
        """The manifest with metadata.name `PLACEHOLDER_SET`. The namespace stays: no result
        text names it (a renamed result takes this call's), and which pods an affinity term
        counts depends on it (`AffinityTerm.selects_own_pods`), as the key does."""
        sts = self.raw_statefulset
        meta = dict(sts["metadata"]) if isinstance(sts.get("metadata"), Mapping) else {}
        meta["name"] = PLACEHOLDER_SET
        return {**dict(sts), "metadata": meta}

    def renamer(self) -> Callable[[str], str]:
        """The substitution of this call's names for the placeholders, made once per call
        and shared by its results (each StatefulSet keeps several until it is reported)."""
        sub = self.__dict__.get("_renamer")
        if sub is None:
            sub = self.__dict__["_renamer"] = _renamer(self)  # (not a field: frozen stays)
        return cast(Callable[[str], str], sub)

    def pdbs(self) -> tuple[Mapping[str, Any], ...]:
        """The PDBs, named `placeholder_pdb(i)`."""
        return tuple(
            {**dict(raw), "metadata": {"name": placeholder_pdb(i)}}
            for i, raw in enumerate(self.raw_pdbs)
        )


def prepare_base(
    statefulset: Mapping[str, Any],
    *,
    kube_version: str,
    pdbs: Sequence[Mapping[str, Any]],
    storage_classes: Sequence[Mapping[str, Any]],
    persistent_volumes: Sequence[Mapping[str, Any]],
    profile: ClusterProfile | None,
    feature_gates: Mapping[str, bool] | None,
    horizon_s: float,
    template: PodTemplate | None = None,
    spec: SetSpec | None = None,
) -> Prepared | None:
    """Everything of a call but the scenario, parsed and keyed once (None: not cacheable).
    ``template`` and ``spec``: as for :func:`parse_statefulset`."""
    prof = profile or _DEFAULT_PROFILE
    sts = statefulset if isinstance(statefulset, Mapping) else {}
    wl = parse_statefulset(
        sts,
        prof.default_not_ready_toleration_s,
        prof.default_unreachable_toleration_s,
        template=template,
        spec=spec,
    )
    pdb_list = [x for x in pdbs if isinstance(x, Mapping)]
    parsed = [DisruptionBudget.from_object(x) for x in pdb_list]
    names = (wl.name, wl.namespace, *(p.name for p in parsed))
    if any("\x00" in n for n in names):
        return None
    storage = tuple(
        resolve_storage(ct, storage_classes, persistent_volumes, prof) for ct in wl.claim_templates
    )
    key = (
        str(kube_version).strip(),
        tuple(sorted((str(k), bool(v)) for k, v in (feature_gates or {}).items())),
        "default" if profile is None else profile,
        float(horizon_s),
        _workload_key(wl),
        storage,
        tuple((p.key, p.readable) for p in parsed),
    )
    return Prepared(
        key=CACHE.canonical(_HashedKey(key)),
        raw_statefulset=sts,
        raw_pdbs=tuple(pdb_list),
        name=wl.name,
        namespace=wl.namespace,
        pdb_names=tuple(p.name for p in parsed),
    )


_SEP = "\x01"


def _renamer(prep: Prepared) -> Callable[[str], str]:
    pairs = [(PLACEHOLDER_SET, prep.name)] + [
        (placeholder_pdb(i), n) for i, n in enumerate(prep.pdb_names)
    ]

    def sub(text: str) -> str:
        if "\x00" not in text:
            return text
        for old, new in pairs:
            text = text.replace(old, new)
        return text

    return sub


def _sub_all(texts: list[str], sub: Callable[[str], str]) -> list[str]:
    """`sub` over many strings with one join, replace and split (falls back per string)."""
    if not texts:
        return []
    joined = _SEP.join(texts)
    if joined.count(_SEP) == len(texts) - 1:
        out = sub(joined).split(_SEP)
        if len(out) == len(texts):
            return out
    return [sub(t) for t in texts]


def _sub_any(v: Any, sub: Callable[[str], str]) -> Any:
    if isinstance(v, str):
        return sub(v)
    if isinstance(v, list):
        return [_sub_any(x, sub) for x in v]
    if isinstance(v, tuple):
        return tuple(_sub_any(x, sub) for x in v)
    if isinstance(v, dict):
        return {_sub_any(k, sub): _sub_any(x, sub) for k, x in v.items()}
    return v


#: Fields of a result that hold names, renamed on first access (`RenamedResult`).
_NAMED_FIELDS = frozenset(
    {
        "pods",
        "timeline",
        "verdict",
        "assumptions",
        "placement",
        "description",
        "failed_nodes",
        "not_back_because",
        "placement_basis",
        "cluster_shape",
    }
)


class RenamedResult(ScenarioResult):
    """A cached placeholder-named result under a caller's names, renamed lazily.

    The fields without names (counts, times, flags) are copied at once; the others (`pods`,
    `timeline`, `verdict`, `assumptions`, `placement`, `description`, ...) are substituted on
    first access, one at a time, and then kept, each a fresh copy the caller may change.
    `to_dict()` renames only the keys of the cached result's dict that hold a name, and
    `template()` hands
    renderers the shared cached result, so text rendered from it once serves every
    StatefulSet that behaves the same. Equal, field for field and in `to_dict()`, to
    an uncached run (tests/sim/test_memo.py).
    """

    def __init__(
        self, base: ScenarioResult | None = None, prep: Prepared | None = None, **fields: Any
    ) -> None:
        if base is None or prep is None:  # built from fields (dataclasses.replace): not lazy
            super().__init__(**fields)
            self.__dict__["_base"] = None
            return
        # Not the dataclass __init__: the named fields are filled in by __getattr__.
        d = self.__dict__
        d["namespace"] = prep.namespace
        d["name"] = prep.name
        d["scenario"] = base.scenario
        d["kube_version"] = base.kube_version
        d["replicas"] = base.replicas
        d["recovered"] = base.recovered
        d["time_to_recovery_s"] = base.time_to_recovery_s
        d["manual_action_required"] = base.manual_action_required
        d["max_unavailable"] = base.max_unavailable
        d["budget_exhausted"] = base.budget_exhausted
        d["steps"] = base.steps
        d["shape_search"] = base.shape_search
        d["replicas_on_failed_nodes"] = base.replicas_on_failed_nodes
        d["node_unknown_range_s"] = base.node_unknown_range_s
        d["goal"] = base.goal
        d["node_returned_at_s"] = base.node_returned_at_s
        d["_base"] = base
        d["_sub"] = prep.renamer()
        d["_got"] = {}

    def __getattr__(self, attr: str) -> Any:
        # Only called for attributes not set yet: the named fields on first access.
        if attr not in _NAMED_FIELDS:
            raise AttributeError(attr)
        value = _renamed_field(self._base, attr, self._sub)
        self.__dict__[attr] = value
        return value

    def _value(self, key: str, default: Any = None) -> Any:
        """``to_dict()[key]``, renamed without building the rest of the dict."""
        got = self._got
        if key in got:
            return got[key]
        if key == "object":
            value: Any = {"kind": "StatefulSet", "namespace": self.namespace, "name": self.name}
        else:
            base = self._base.to_dict()
            if key not in base:
                return default
            value = base[key]
            if _named(self._base, key):
                value = _sub_any(value, self._sub)
        got[key] = value
        return value

    def template(self) -> tuple[ScenarioResult, Callable[[str], str]]:
        if self._base is None:
            return super().template()
        return self._base, self._sub

    def to_dict(self) -> dict[str, Any]:
        if self._base is None:
            return super().to_dict()
        cached = self.__dict__.get("_as_dict")
        if cached is None:
            cached = {k: self._value(k) for k in self._base.to_dict()}
            self.__dict__["_as_dict"] = cached
        return cached


def _named(res: ScenarioResult, key: str) -> bool:
    """Whether `res.to_dict()[key]` holds a placeholder name (known once per cached result:
    a value without one is shared as it is, read-only like every `to_dict()` value)."""
    named = res.__dict__.setdefault("_named_keys", {})
    if key not in named:
        named[key] = _has_placeholder(res.to_dict()[key])
    return bool(named[key])


def _has_placeholder(v: Any) -> bool:
    if isinstance(v, str):
        return "\x00" in v
    if isinstance(v, (list, tuple)):
        return any(_has_placeholder(x) for x in v)
    if isinstance(v, dict):
        return any(_has_placeholder(k) or _has_placeholder(x) for k, x in v.items())
    return False


def _renamed_field(res: ScenarioResult, attr: str, sub: Callable[[str], str]) -> Any:
    """Field `attr` of `res` with `sub` applied to the names it holds (a fresh copy)."""
    if attr == "timeline":
        tl = res.timeline
        events = _sub_all([e.event for e in tl], sub)
        pods: dict[str | None, str | None] = {None: None}
        timeline = []
        for e, text in zip(tl, events, strict=True):
            pod = e.pod
            if pod not in pods:
                pods[pod] = sub(pod) if pod is not None else None
            timeline.append(TimelineEvent(e.t_s, pods[pod], e.kind, text, e.source))
        return timeline
    if attr == "pods":
        return {sub(k): PodResult(v.unavailable_s, v.node) for k, v in res.pods.items()}
    if attr in ("assumptions", "failed_nodes"):
        return _sub_all(list(getattr(res, attr)), sub)
    if attr == "placement_basis":  # (frozen: shared as it is when it holds no name)
        basis = res.placement_basis
        if basis is None or not _has_placeholder(basis.limits):
            return basis
        return msgspec.structs.replace(basis, limits=tuple(_sub_all(list(basis.limits), sub)))
    if attr == "cluster_shape":
        shape = res.cluster_shape
        if shape is None or not _has_placeholder(shape.text):
            return shape
        return msgspec.structs.replace(shape, text=sub(shape.text))
    value = getattr(res, attr)  # verdict, placement, description, not_back_because
    return sub(value) if isinstance(value, str) and _has_placeholder(value) else value


def rename(res: ScenarioResult, prep: Prepared) -> ScenarioResult:
    """The placeholder-named `res` with the caller's names (renamed lazily: `RenamedResult`)."""
    return RenamedResult(res, prep)


class ResultStore(Protocol):
    """Bytes kept between processes for a cache key, given as its stable encoding
    (`persist.key_bytes`; a store names an entry by a digest of it): what a caller gives
    `ResultCache.store` (ssrisk keeps them in the user's cache directory). Neither method
    raises for a missing, unreadable or unwritable entry."""

    def load(self, digest_input: bytes) -> bytes | None: ...

    def save(self, digest_input: bytes, data: bytes) -> None: ...


class ResultCache:
    """Bounded LRU of placeholder-named results (thread-safe), and optionally a `store` that
    keeps them between processes (`persist.py` says which results it keeps)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self.store: ResultStore | None = None
        self.store_hits = 0
        self._data: OrderedDict[Hashable, ScenarioResult] = OrderedDict()
        self._keys: dict[Hashable, Hashable] = {}
        self._lock = allocate_lock()  # (threading.Lock, without importing threading)
        self.hits = 0
        self.misses = 0

    def canonical(self, key: Hashable) -> Hashable:
        """The first key seen equal to `key` (so that later lookups of a StatefulSet's
        scenarios compare keys by identity, not element by element)."""
        with self._lock:
            found = self._keys.get(key)
            if found is not None:
                return found
            if len(self._keys) >= self.max_entries:
                self._keys.clear()
            self._keys[key] = key
            return key

    def get(self, key: Hashable) -> ScenarioResult | None:
        with self._lock:
            res = self._data.get(key)
            if res is None:
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return res

    def put(self, key: Hashable, res: ScenarioResult) -> None:
        with self._lock:
            self._data[key] = res
            self._data.move_to_end(key)
            while len(self._data) > self.max_entries:
                self._data.popitem(last=False)

    def load(self, key: Hashable) -> ScenarioResult | None:
        """The result `store` keeps for `key` (then held in memory too), or `None`."""
        store = self.store
        if store is None:
            return None
        raw_key = _stored_key(key)
        data = store.load(raw_key) if raw_key is not None else None
        res = decode_result(data) if data is not None else None
        if res is not None:
            self.put(key, res)
            with self._lock:
                self.store_hits += 1
        return res

    def save(self, key: Hashable, res: ScenarioResult) -> None:
        """Give `store` the result of `key` (when it keeps such results)."""
        store = self.store
        if store is None:
            return
        raw_key = _stored_key(key)
        data = encode_result(res) if raw_key is not None else None
        if raw_key is not None and data is not None:
            store.save(raw_key, data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._keys.clear()
            self.hits = 0
            self.misses = 0
            self.store_hits = 0

    def info(self) -> dict[str, int]:
        """{"hits", "misses", "store_hits", "size", "max_entries"} since the last clear
        (`store_hits`: misses that `store` answered)."""
        with self._lock:
            return {
                "hits": self.hits,
                "misses": self.misses,
                "store_hits": self.store_hits,
                "size": len(self._data),
                "max_entries": self.max_entries,
            }


def _stored_key(key: Hashable) -> bytes | None:
    """`key` (``(scenario, _HashedKey)``) in its stable encoding, or `None`."""
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], _HashedKey):
        return key_bytes((FORMAT, key[0], key[1].value))
    return None


CACHE = ResultCache()
