"""Units that define copies of one object, and lookups over many objects of one namespace.

N directories that each define the same Service (or StatefulSet, PDB, StorageClass) make
every unit an alternative to the others; each unit's view of the inventory was made by
hiding every other unit's objects, so N views cost N each (2,000 directories of one Service
took 19.7 s and 836 MB; 3,000 copies of one StatefulSet 103 s and 3.6 GB). Views are now
made from parts shared by every unit with the same alternatives plus the unit's own objects.

The lookups the rules make for every StatefulSet (Services that route to its pods, the sets
of one release, the volumes its claims are bound to, its autoscaler) read an index too; they
scanned the whole namespace (2,000 sets and Services without ports in one namespace: 30 s of
a 48 s run).

Two kinds of test: every lookup of a view equals the same lookup made by brute force over
the objects the unit sees as the earlier hiding defined them (hypothesis, derandomized), and
each attack shape costs linear CPU time.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ssrisk.embedded_sim.storage import storage_index
from test_hostile_scaling import _scales_linearly

from ssrisk.engine import check
from ssrisk.inventory import (
    ALTERNATIVE_MARKERS,
    Inventory,
    _UnitView,
    _without_default_annotation,
    is_default_class,
    pdb_selects,
    unit_covers,
)
from ssrisk.loading import load_text
from ssrisk.model import K8sObject
from ssrisk.plugins import collect_rules, plugin_manager
from ssrisk.selectors import (
    map_selector_matches,
)
from ssrisk.settings import Settings

UNITS = ["a", "a/b", "c", "c/d/e", "<stdin>"]
NAMES = ["x", "y", "z"]
NAMESPACES = ["n1", "n2"]
LABELS = [{"app": "x"}, {"app": "y"}, {"app": "x", "tier": "db"}, {}, {"app": "None"}]


def _object(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(
            [
                "StatefulSet",
                "Service",
                "PodDisruptionBudget",
                "PersistentVolumeClaim",
                "StorageClass",
                "PersistentVolume",
                "HorizontalPodAutoscaler",
            ]
        )
    )
    name = draw(st.sampled_from(NAMES))
    meta: dict[str, Any] = {"name": name}
    labels = draw(st.sampled_from(LABELS))
    if kind == "StorageClass":
        if draw(st.booleans()):
            meta["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
        return {"apiVersion": "storage.k8s.io/v1", "kind": kind, "metadata": meta,
                "provisioner": draw(st.sampled_from(["a", "b"]))}  # fmt: skip
    if kind == "PersistentVolume":
        spec: dict[str, Any] = {"storageClassName": draw(st.sampled_from(["fast", "slow"]))}
        if draw(st.booleans()):
            spec["local"] = {"path": "/d"}
        spec["claimRef"] = {
            "namespace": draw(st.sampled_from(NAMESPACES)),
            "name": draw(st.sampled_from(["data-x-0", "data-x-12", "data-x-", "data-y-1"])),
        }
        return {"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": spec}
    meta["namespace"] = draw(st.sampled_from(NAMESPACES))
    if kind == "StatefulSet":
        template_labels = {**labels, "release": draw(st.sampled_from(["r1", "r2"]))}
        spec = {"serviceName": draw(st.sampled_from(NAMES)), "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": template_labels}}}  # fmt: skip
        return {"apiVersion": "apps/v1", "kind": kind, "metadata": meta, "spec": spec}
    if kind == "Service":
        spec = {"selector": labels}
        if draw(st.booleans()):
            spec["ports"] = [{"port": 80}]
        return {"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": spec}
    if kind == "PodDisruptionBudget":
        version = draw(st.sampled_from(["policy/v1", "policy/v1beta1"]))
        sel: dict[str, Any] = {"matchLabels": labels} if labels else {}
        if draw(st.booleans()):
            sel["matchExpressions"] = [{"key": "tier", "operator": "Exists"}]
        return {"apiVersion": version, "kind": kind, "metadata": meta,
                "spec": {"maxUnavailable": 1, "selector": sel}}  # fmt: skip
    if kind == "HorizontalPodAutoscaler":
        ref = {"kind": "StatefulSet", "name": draw(st.sampled_from(NAMES))}
        return {"apiVersion": "autoscaling/v2", "kind": kind, "metadata": meta,
                "spec": {"scaleTargetRef": ref, "maxReplicas": 3}}  # fmt: skip
    return {"apiVersion": "v1", "kind": kind, "metadata": meta, "spec": {}}


@st.composite
def inventories(draw: st.DrawFn) -> list[K8sObject]:
    """Objects of a few units, with copies of one identity in several of them."""
    objects: list[K8sObject] = []
    for unit in draw(st.lists(st.sampled_from(UNITS), min_size=1, max_size=6)):
        docs = [_object(draw) for _ in range(draw(st.integers(1, 6)))]
        path = "<stdin>" if unit == "<stdin>" else f"{unit}/m{len(objects)}.yaml"
        text = "\n---\n".join(json.dumps(d) for d in docs)
        objects.extend(load_text(text, path).objects)
    return objects


def _seen_from(objects: list[K8sObject], unit: str) -> list[K8sObject]:
    """The objects ``unit`` sees, as the views made them before (the oracle): every object
    of its alternatives hidden, and of each object copied into other units every copy but the
    unit's own (else the first)."""
    by_unit: dict[str, list[K8sObject]] = defaultdict(list)
    copies: dict[tuple[str, str | None, str], list[K8sObject]] = defaultdict(list)
    for o in objects:
        by_unit[o.unit].append(o)
        copies[(o.kind, o.namespace, o.name)].append(o)
    alternatives: set[str] = set()
    for ident, objs in copies.items():
        units = {o.unit for o in objs}
        if len(units) > 1 and ident[0] in ALTERNATIVE_MARKERS and unit in units:
            alternatives |= units - {unit}
    hidden = {id(o) for u in alternatives for o in by_unit[u]}
    for objs in copies.values():
        if len({o.unit for o in objs}) < 2:
            continue
        candidates = [o for o in objs if o.unit not in alternatives]
        if candidates:
            own = [o for o in candidates if o.unit == unit]
            keep = own[0].unit if own else candidates[0].unit
            hidden |= {id(o) for o in candidates if o.unit != keep}
    return [o for o in objects if id(o) not in hidden]


def _pdbs(seen: list[K8sObject], ns: str | None, labels: Mapping[str, Any]) -> list[K8sObject]:
    """The PDBs that select ``labels``, each the last definition of its namespace and name
    seen (kubectl apply of the inputs in order leaves that one)."""
    last = {(o.namespace, o.name): o for o in seen if o.kind == "PodDisruptionBudget"}
    return [
        o
        for o in seen
        if o.kind == "PodDisruptionBudget"
        and o.namespace == ns
        and pdb_selects(o, labels)
        and last[(o.namespace, o.name)] is o
    ]


def _name(o: K8sObject) -> str:
    return o.name


def _claim_stem(pv: K8sObject) -> tuple[str, str]:
    ref = pv.get("spec", "claimRef")
    name = str(ref.get("name") or "")
    return str(ref.get("namespace") or "default"), name.rstrip("0123456789")


def _group(labels: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The label pairs a set spanning StatefulSets is told by (as rules/_quorum.py)."""
    return tuple((k, str(labels[k])) for k in ("app", "release") if labels.get(k))


def _weight(sts: K8sObject) -> int | None:
    """What a StatefulSet counts in a tally: its replicas; a set named z of release r2
    counts nothing."""
    if sts.name == "z" and sts.get("spec", "template", "metadata", "labels", "release") == "r2":
        return None
    replicas = sts.get("spec", "replicas")
    return replicas if isinstance(replicas, int) else 1


def _tally(sets: list[K8sObject], group: tuple[tuple[str, str], ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in sets:
        labels = o.get("spec", "template", "metadata", "labels")
        labels = labels if isinstance(labels, Mapping) else {}
        weight = _weight(o)
        if group and weight is not None and all(str(labels.get(k)) == v for k, v in group):
            out[o.name] = out.get(o.name, 0) + weight
    return out


def _lookups(inventory: Inventory, sts: K8sObject) -> dict[str, Any]:
    """Every lookup a rule makes for ``sts``, by object identity (``id``)."""
    ns, labels = sts.namespace, sts.get("spec", "template", "metadata", "labels") or {}
    names = ["fast", "slow", None]

    def ids(objs: list[K8sObject]) -> list[int]:
        return [id(o) for o in objs]

    def one(obj: K8sObject | None) -> int | None:
        return None if obj is None else id(obj)

    return {
        "of_kind": {k: ids(inventory.of_kind(k)) for k in ALTERNATIVE_MARKERS | {"StorageClass"}},
        "in_namespace": ids(inventory.in_namespace("Service", ns)),
        "named": [one(inventory.named(k, ns, n)) for k in ALTERNATIVE_MARKERS for n in NAMES],
        "service": one(inventory.service(ns, str(sts.get("spec", "serviceName")))),
        "services_named": {n: ids(inventory.services_named(n)) for n in NAMES},
        "pdbs": ids(inventory.pdbs_selecting(ns, labels)),
        "pdbs_limit_1": ids(inventory.pdbs_selecting(ns, labels, limit=1)),
        "serving": ids(inventory.serving_services(ns, labels)),
        "release": ids(inventory.statefulsets_labelled(ns, "release", str(labels.get("release")))),
        "hpa": one(inventory.autoscaler_for(ns, "StatefulSet", sts.name)),
        "tally": (
            inventory.tally_labelled(ns, _group(labels), _weight, "test-weight").by_name()
            if _group(labels)
            else {}
        ),
        "claimed": ids(inventory.volumes_claimed_by_ordinal(ns or "default", "data-x-")),
        "default": one(inventory.default_storage_class()),
        "storage": inventory.storage_inputs(names),
    }


def _expected(seen: list[K8sObject], sts: K8sObject, unit: str | None) -> dict[str, Any]:
    """:func:`_lookups` made by brute force over ``seen``."""
    ns, labels = sts.namespace, sts.get("spec", "template", "metadata", "labels") or {}

    def reaches(sc: K8sObject) -> bool:
        return unit is None or unit_covers(sc.unit, unit)

    def ids(objs: list[K8sObject]) -> list[int]:
        return [id(o) for o in objs]

    def first(objs: list[K8sObject]) -> int | None:
        return id(objs[0]) if objs else None

    def of(kind: str, where: Callable[[K8sObject], bool] = lambda o: True) -> list[K8sObject]:
        return [o for o in seen if o.kind == kind and where(o)]

    classes = [
        sc.data if not is_default_class(sc) or reaches(sc) else _without_default_annotation(sc.data)
        for sc in of("StorageClass")
    ]
    pvs = [pv.data for pv in of("PersistentVolume")]
    pdbs = _pdbs(seen, ns, labels)
    return {
        "of_kind": {k: ids(of(k)) for k in ALTERNATIVE_MARKERS | {"StorageClass"}},
        "in_namespace": ids(of("Service", lambda o: o.namespace == ns)),
        "named": [
            first(of(k, lambda o, n=n: o.namespace == ns and o.name == n))  # type: ignore[misc]
            for k in ALTERNATIVE_MARKERS
            for n in NAMES
        ],
        "service": first(
            of("Service", lambda o: o.namespace == ns and o.name == sts.get("spec", "serviceName"))
        ),
        "services_named": {n: ids(of("Service", lambda o, n=n: o.name == n)) for n in NAMES},  # type: ignore[misc]
        "pdbs": ids(pdbs),
        "pdbs_limit_1": ids(pdbs[:1]),
        "serving": ids(
            of(
                "Service",
                lambda o: (
                    o.namespace == ns
                    and bool(o.get("spec", "ports"))
                    and map_selector_matches(o.get("spec", "selector"), labels)
                ),
            )
        ),
        "release": ids(
            of(
                "StatefulSet",
                lambda o: (
                    o.namespace == ns
                    and str((o.get("spec", "template", "metadata", "labels") or {}).get("release"))
                    == str(labels.get("release"))
                ),
            )
        ),
        "hpa": first(
            of(
                "HorizontalPodAutoscaler",
                lambda o: (
                    o.namespace == ns
                    and o.get("spec", "scaleTargetRef", "kind") == "StatefulSet"
                    and o.get("spec", "scaleTargetRef", "name") == sts.name
                ),
            )
        ),
        "tally": _tally(of("StatefulSet", lambda o: o.namespace == ns), _group(labels)),
        "claimed": ids(
            of("PersistentVolume", lambda o: _claim_stem(o) == (ns or "default", "data-x-"))
        ),
        # GetDefaultClass: newest first (these have no creationTimestamp), then by name
        "default": first(
            sorted(of("StorageClass", lambda o: is_default_class(o) and reaches(o)), key=_name)
        ),
        "storage": storage_index(classes, pvs).inputs(["fast", "slow", None]),
    }


@settings(
    max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
@given(inventories(), st.sampled_from([0, 1, _UnitView.SKIPS]))
def test_every_lookup_of_a_view_is_what_the_unit_sees(objects: list[K8sObject], skips: int) -> None:
    """``skips``: how many objects a lazy lookup skips before it makes the shared list (0:
    at the first it does not see)."""
    inventory = Inventory(objects)
    default = _UnitView.SKIPS
    _UnitView.SKIPS = skips
    try:
        for sts in inventory.statefulsets:
            view = inventory.for_unit(sts.unit)
            assert _lookups(view, sts) == _expected(_seen_from(objects, sts.unit), sts, sts.unit)
    finally:
        _UnitView.SKIPS = default
    for sts in inventory.statefulsets:  # the whole inventory: every object, all in reach
        assert _lookups(inventory, sts) == _expected(objects, sts, None)


_STS = (
    'apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {{name: "{sts}", namespace: ns}}\n'
    "spec:\n  serviceName: db\n  replicas: 3\n  selector: {{matchLabels: {{app: db}}}}\n"
    "  template:\n    metadata: {{labels: {{app: db, release: r1}}}}\n"
    "    spec: {{containers: [{{name: c, image: {image}}}]}}\n"
    "  volumeClaimTemplates:\n  - metadata: {{name: data}}\n"
    "    spec: {{accessModes: [ReadWriteOnce], storageClassName: {cls}}}\n"
)
_SVC = (
    'apiVersion: v1\nkind: Service\nmetadata: {{name: "{svc}", namespace: ns}}\n'
    "spec: {{clusterIP: None, selector: {{app: db}}}}\n"
)
_PDB = (
    'apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {{name: "{pdb}", '
    "namespace: ns}}\nspec: {{maxUnavailable: 1, selector: {{matchLabels: {{app: db}}}}}}\n"
)
_CLASS = (
    'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: "{cls}"{default}}}\n'
    "provisioner: ebs.csi.aws.com\n"
)
_DEFAULT = ", annotations: {storageclass.kubernetes.io/is-default-class: 'true'}"
_PV = (
    'apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: "pv{i}"}}\n'
    "spec: {{storageClassName: fast, claimRef: {{namespace: ns, name: data-s{i}-0}}}}\n"
)
_HPA = (
    'apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {{name: "h{i}", '
    "namespace: ns}}\nspec: {{scaleTargetRef: {{kind: StatefulSet, name: s{i}}}, maxReplicas: 5}}\n"
)


def _unit_docs(shape: str, i: int) -> list[str]:
    """The documents of unit ``i`` of ``shape``."""
    sts = {"sts": f"s{i}", "image": "nginx", "cls": "fast"}
    if shape == "one Service in every unit":
        return [_SVC.format(svc="db"), _STS.format(**sts)]
    if shape == "one StatefulSet in every unit":
        return [_SVC.format(svc="db"), _STS.format(**{**sts, "sts": "db"})]
    if shape == "one PDB in every unit":
        return [_PDB.format(pdb="db"), _STS.format(**sts)]
    if shape == "one StorageClass in every unit":
        return [_CLASS.format(cls="fast", default=""), _STS.format(**sts)]
    if shape == "a default class in every unit":
        return [_CLASS.format(cls=f"c{i}", default=_DEFAULT), _STS.format(**sts)]
    if shape == "pairs of units share a Service":
        return [_SVC.format(svc=f"db{i // 2}"), _PDB.format(pdb=f"p{i}"), _STS.format(**sts)]
    if shape == "a chain of units sharing Services":
        return [_SVC.format(svc=f"x{i}"), _SVC.format(svc=f"x{i + 1}"), _STS.format(**sts)]
    if shape == "a chain of environments with etcd sets of one release":
        etcd = _STS.format(**{**sts, "image": "quay.io/coreos/etcd:v3.5.0"})
        return [_SVC.format(svc=f"x{i}"), _SVC.format(svc=f"x{i + 1}"), etcd]
    if shape == "a chain of units that all copy one Service":
        return [
            _SVC.format(svc="db"),
            _PDB.format(pdb=f"x{i}"),
            _PDB.format(pdb=f"x{i + 1}"),
            _STS.format(**sts),
        ]
    raise AssertionError(shape)


VIEW_SHAPES = [
    "one Service in every unit",
    "one StatefulSet in every unit",
    "one PDB in every unit",
    "one StorageClass in every unit",
    "a default class in every unit",
    "pairs of units share a Service",
    "a chain of units sharing Services",
    "a chain of units that all copy one Service",
    "a chain of environments with etcd sets of one release",
]


def _objects(docs_of: Callable[[int], list[str]], n: int, units: bool) -> list[K8sObject]:
    objects: list[K8sObject] = []
    for i in range(n):
        path = f"u{i}/m.yaml" if units else "one/m.yaml"
        objects.extend(load_text("---\n".join(docs_of(i)), path).objects)
    return objects


@pytest.mark.parametrize("shape", VIEW_SHAPES)
def test_units_with_copies_of_one_object_cost_linear_time(shape: str) -> None:
    """The lookups every StatefulSet's rules make, from its unit's view, for N units."""

    def make(n: int) -> Callable[[], object]:
        objects = _objects(lambda i: _unit_docs(shape, i), n, units=True)

        def run() -> object:
            inventory = Inventory(objects)
            for sts in inventory.statefulsets:
                view = inventory.for_unit(sts.unit)
                labels = {"app": "db", "release": "r1"}
                view.service("ns", "db")
                view.pdbs_selecting("ns", labels, limit=2)
                view.serving_services("ns", labels)
                view.storage_inputs(["fast", None])
                view.default_storage_class()
                view.autoscaler_for("ns", "StatefulSet", sts.name)
                view.tally_labelled("ns", (("app", "db"), ("release", "r1")), _weight, "w")
            return inventory

        return run

    inventory = make(4)()
    assert isinstance(inventory, Inventory) and len(inventory.statefulsets) == 4
    _scales_linearly(make, 50)


def _many_in_one_namespace(what: str, i: int) -> list[str]:
    sts = {"sts": f"s{i}", "image": "nginx", "cls": "fast"}
    if what == "Services without ports":
        return [_SVC.format(svc=f"svc{i}"), _STS.format(**sts)]
    if what == "etcd sets of one release":
        return [_STS.format(**{**sts, "image": "quay.io/coreos/etcd:v3.5.0"})]
    if what == "volumes bound to claims":
        return [_PV.format(i=i), _STS.format(**sts)]
    if what == "autoscalers":
        return [_HPA.format(i=i), _STS.format(**sts)]
    if what == "etcd sets of one instance, each its own release":
        etcd = _STS.format(**{**sts, "image": "quay.io/coreos/etcd:v3.5.0"})
        return [etcd.replace("release: r1", f"release: r{i}, app.kubernetes.io/instance: one")]
    if what == "one Service name in every namespace":
        return [
            _SVC.format(svc="db").replace("namespace: ns", f"namespace: n{i}"),
            _STS.format(**sts).replace("namespace: ns", f"namespace: n{i}"),
        ]
    raise AssertionError(what)


@pytest.mark.parametrize(
    "what",
    [
        "Services without ports",
        "etcd sets of one release",
        "volumes bound to claims",
        "autoscalers",
        "etcd sets of one instance, each its own release",
        "one Service name in every namespace",
    ],
)
def test_rule_lookups_over_one_namespace_cost_linear_time(what: str) -> None:
    """N StatefulSets in one namespace, each with one object of ``what``: the rules' lookups
    for every set (whether a Service routes to its pods, the members of its release, the
    volumes bound to its claims, its autoscaler) read an index, not the namespace."""
    from ssrisk.rules._quorum import members
    from ssrisk.rules._workload import serves

    from ssrisk.rule import CheckContext

    def make(n: int) -> Callable[[], object]:
        objects = _objects(lambda i: _many_in_one_namespace(what, i), n, units=False)

        def run() -> object:
            inventory = Inventory(objects)
            out = []
            for sts in inventory.statefulsets:
                ctx = CheckContext.of(sts, inventory, Settings())
                out.append(
                    (
                        serves(ctx),
                        members(ctx, "etcd"),
                        ctx.replicas,
                        ctx.inventory.volumes_claimed_by_ordinal("ns", f"data-{sts.name}-"),
                        ctx.inventory.all_named("Service", sts.namespace, "db"),
                    )
                )
            return out

        return run

    result = make(4)()
    assert isinstance(result, list) and len(result) == 4
    if what == "etcd sets of one release":
        assert {r[1] for r in result} == {12}  # 4 sets of 3 members each
    if what == "autoscalers":
        assert {r[2] for r in result} == {1}  # minReplicas defaults to 1
    if what == "volumes bound to claims":
        assert all(len(r[3]) == 1 for r in result)
    _scales_linearly(make, 50)


def test_a_service_name_in_many_namespaces_makes_a_short_message(tmp_path: Path) -> None:
    """serviceName naming a Service that exists only in other namespaces: the message named
    every one of them, so N namespaces made N findings of N names each (4,000, 2 MB of
    input, wrote 766 MB of text); it names three and counts the rest."""
    docs = [_SVC.format(svc="db").replace("namespace: ns", f"namespace: n{i}") for i in range(10)]
    path = tmp_path / "m.yaml"
    path.write_text("---\n".join([*docs, _STS.format(sts="s", image="nginx", cls="fast")]))
    report = check([str(path)], collect_rules(plugin_manager()), Settings(jobs=1))
    [finding] = [f for f in report.findings if f.rule == "headless-service-missing"]
    assert "namespace n0, n1, n2 and 7 more)" in finding.message


def test_a_views_tally_leaves_out_what_the_unit_does_not_see() -> None:
    """tally_labelled from each unit: a and b share a Service (alternatives), c stands alone,
    d and e define copies of one StatefulSet; each view's tally is the whole inventory's
    less what it hides, as brute force over what the unit sees gives it."""
    svc = "apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: ns}\n"

    def sts(name: str) -> str:
        return _STS.format(sts=name, image="quay.io/coreos/etcd:v3.5.0", cls="fast")

    units = {"a": [svc, sts("s2")], "b": [svc, sts("s3")], "c": [sts("s4")],
             "d": [sts("dup")], "e": [sts("dup")]}  # fmt: skip
    objects = [
        o for u, docs in units.items() for o in load_text("---\n".join(docs), f"{u}/m.yaml").objects
    ]
    inventory = Inventory(objects)
    group = (("app", "db"), ("release", "r1"))
    assert inventory.tally_labelled("ns", group, _weight, "w").by_name() == {
        "s2": 3, "s3": 3, "s4": 3, "dup": 6
    }  # fmt: skip
    for unit in units:
        view = inventory.for_unit(unit)
        sets = [o for o in _seen_from(objects, unit) if o.kind == "StatefulSet"]
        assert view.tally_labelled("ns", group, _weight, "w").by_name() == _tally(sets, group)
    assert inventory.for_unit("a").tally_labelled("ns", group, _weight, "w").by_name() == {
        "s2": 3, "s4": 3, "dup": 3
    }  # fmt: skip
