"""What a claim ties a pod to (embedded_sim/storage.py): class resolution and node-local volumes."""

from __future__ import annotations

import pytest
from ssrisk.embedded_sim import ClusterProfile, simulate
from ssrisk.embedded_sim.storage import claim_class_name, resolve_claim

from .simdata import load


def test_beta_annotation_is_read_before_storage_class_name() -> None:
    # pkg/apis/core/v1/helper/helpers.go#GetPersistentVolumeClaimClass: "Use beta annotation first"
    template = load("local-by-annotation.yaml").sts["spec"]["volumeClaimTemplates"][0]
    assert claim_class_name(template) == "local-path"
    assert claim_class_name({"spec": {"storageClassName": "gp3"}}) == "gp3"
    assert claim_class_name({"spec": {}}) is None


@pytest.mark.parametrize(
    ("name", "topology"),
    [
        ("local-path", "local"),
        ("openebs-hostpath", "local"),
        ("local-nvme", "local"),
        ("openebs-jiva-default", "zonal"),  # replicated (iSCSI), not node-local: the assumption
        ("gp3", "zonal"),
    ],
)
def test_known_local_class_names_without_the_class_object(name: str, topology: str) -> None:
    st = resolve_claim(name, ("ReadWriteOnce",), "data", [], [], ClusterProfile())
    assert st.topology == topology
    assert (st.note is None) == (topology == "local")


@pytest.mark.parametrize("scenario", ["node-loss-out-of-service", "node-deleted"])
def test_node_local_volume_is_never_detached_and_pins_the_pod(scenario: str) -> None:
    r = simulate(load("local-by-annotation.yaml").sts, scenario, kube_version="1.34")
    # local volumes have no attacher: no Multi-Attach error, no detach wait, no attach
    for kind in ("volume-multi-attach", "volume-detach-waiting", "volume-detached"):
        assert r.events(kind) == [], kind
    pending = r.first("pod-pending", "kv-0")
    assert pending is not None and "didn't match PersistentVolume's node affinity" in pending.event
    assert not r.recovered and r.manual_action_required


def _sc(name: str, default: bool = False, binding: str = "WaitForFirstConsumer") -> dict:
    ann = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    return {
        "kind": "StorageClass",
        "metadata": {"name": name, "annotations": ann},
        "provisioner": "kubernetes.io/no-provisioner" if binding else "ebs.csi.aws.com",
        "volumeBindingMode": binding,
    }


def _pv(name: str, cls: str, local: bool) -> dict:
    spec: dict = {"storageClassName": cls}
    spec["local" if local else "csi"] = {"path": "/x"} if local else {"driver": "d"}
    return {"kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


_CLASSES = [
    _sc("fast"), _sc("slow", default=True), _sc("fast", binding="Immediate"),
    _sc("other", default=True, binding="Immediate"), "not a mapping",
]  # fmt: skip
_PVS = [
    _pv("a", "fast", False), _pv("b", "fast", True), _pv("c", "fast", True),
    _pv("d", "", True), _pv("e", "gone", True), _pv("f", "slow", False),
]  # fmt: skip


@pytest.mark.parametrize("class_name", [None, "", "fast", "slow", "other", "gone", "nowhere"])
@pytest.mark.parametrize("with_default", [True, False])
def test_the_storage_index_answers_as_every_class_and_volume(
    class_name: str | None, with_default: bool
) -> None:
    """A set is handed only the classes and volumes its claims can use (StorageIndex.inputs,
    made once per inventory): resolve_claim answers with them as with all of them (the
    last class of a name, the default GetDefaultClass picks, the first node-local volume of a
    class)."""
    from ssrisk.embedded_sim.profile import ClusterProfile
    from ssrisk.embedded_sim.storage import resolve_claim, storage_index

    classes = [
        c
        for c in _CLASSES
        if with_default or not (isinstance(c, dict) and c["metadata"]["annotations"])
    ]
    profile = ClusterProfile()
    every = resolve_claim(class_name, ("ReadWriteOnce",), "data", classes, _PVS, profile)
    some_classes, some_pvs = storage_index(classes, _PVS).inputs([class_name])
    assert (
        resolve_claim(class_name, ("ReadWriteOnce",), "data", some_classes, some_pvs, profile)
        == every
    )
    assert len(some_classes) <= 2 and len(some_pvs) <= 1


def _class(name: str, provisioner: str, **fields: object) -> dict[str, object]:
    meta: dict[str, object] = {"name": name}
    for key in ("annotations", "creationTimestamp"):
        if key in fields:
            meta[key] = fields.pop(key)
    return {"kind": "StorageClass", "metadata": meta, "provisioner": provisioner, **fields}


_DEFAULT = {"storageclass.kubernetes.io/is-default-class": "true"}


@pytest.mark.parametrize(
    ("classes", "chosen"),
    [
        # no creationTimestamp: the first by name, whatever the load order
        (
            [
                _class("z-wait", "ebs.csi.aws.com", annotations=_DEFAULT),
                _class("a-now", "x", annotations=_DEFAULT),
            ],
            "a-now",
        ),
        # the newest first (pkg/volume/util/storageclass.go#GetDefaultClass)
        (
            [
                _class(
                    "a-old", "x", annotations=_DEFAULT, creationTimestamp="2024-01-01T00:00:00Z"
                ),
                _class(
                    "z-new", "x", annotations=_DEFAULT, creationTimestamp="2025-06-01T00:00:00Z"
                ),
            ],
            "z-new",
        ),
        # a class without the annotation is never the default
        ([_class("a-plain", "x"), _class("b-default", "x", annotations=_DEFAULT)], "b-default"),
        # only the exact text "true" (storageclass.go#IsDefaultAnnotation; "True" was read too)
        (
            [
                _class("a-capital", "x", annotations={next(iter(_DEFAULT)): "True"}),
                _class("b-default", "x", annotations=_DEFAULT),
            ],
            "b-default",
        ),
    ],
)
def test_of_several_default_classes_a_claim_gets_the_one_get_default_class_picks(
    classes: list[dict[str, object]], chosen: str
) -> None:
    from ssrisk.inventory import Inventory
    from ssrisk.model import K8sObject

    st = resolve_claim(None, ("ReadWriteOnce",), "data", classes, [], ClusterProfile())
    assert st.class_name == chosen
    # the rules' lookup (Inventory.default_storage_class) picks the same class
    inventory = Inventory(K8sObject(c, "classes.yaml", 0, None, i) for i, c in enumerate(classes))
    found = inventory.default_storage_class()
    assert found is not None and found.name == chosen


@pytest.mark.parametrize(
    ("parameters", "topology"),
    [
        ({"replication-type": "regional-pd"}, "regional"),
        ({"Replication-Type": "Regional-PD"}, "regional"),  # keys and values without case
        ({"replication-type": "none"}, "zonal"),
        ({"skuName": "Premium_ZRS"}, "regional"),
        ({"skuname": "StandardSSD_ZRS"}, "regional"),
        ({"skuName": "Premium_LRS"}, "zonal"),
    ],
)
def test_zone_redundant_parameters_make_a_class_regional(
    parameters: dict[str, str], topology: str
) -> None:
    sc = _class("disks", "pd.csi.storage.gke.io", parameters=parameters)
    st = resolve_claim("disks", ("ReadWriteOnce",), "data", [sc], [], ClusterProfile())
    assert st.topology == topology
