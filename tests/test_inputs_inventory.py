"""The objects around a StatefulSet, indexed by kind and namespace, read from a manifest file."""

from __future__ import annotations

from conftest import DATA, run_cli
from ssrisk.embedded_sim.objects import PersistentVolume

from ssrisk.inventory import Inventory
from ssrisk.model import K8sObject
from ssrisk.renderers.inputs import load_inputs
from ssrisk.settings import Settings

SURROUNDINGS = DATA / "inputs" / "surroundings.yaml"


def pv_class(pv: K8sObject) -> str:
    return PersistentVolume.from_object(pv.data).class_name


def _inventory() -> Inventory:
    loaded, errors = load_inputs([str(SURROUNDINGS)], Settings(namespace="elsewhere"))
    assert errors == [] and [e for lf in loaded for e in lf.errors] == []
    return Inventory(o for lf in loaded for o in lf.objects)


def test_cluster_scoped_and_namespaced_lookups() -> None:
    inv = _inventory()
    ns = inv.named("Namespace", None, "data")
    assert ns is not None and ns.namespace is None
    pvc = inv.named("PersistentVolumeClaim", "data", "data-db-0")
    assert pvc is not None and pvc.get("spec", "storageClassName") == "local"
    assert inv.named("PersistentVolumeClaim", "elsewhere", "data-db-0") is None
    default = inv.default_storage_class()
    assert default is not None and default.name == "standard"
    local = [pv.name for pv in inv.of_kind("PersistentVolume") if pv_class(pv) == "local"]
    assert local == ["local-pv-1"]


def test_persistent_volume_node_affinity() -> None:
    inv = _inventory()
    local, zonal = (
        inv.named("PersistentVolume", None, "local-pv-1"),
        inv.named("PersistentVolume", None, "zonal-pv"),
    )
    assert local is not None and zonal is not None
    local_pv, zonal_pv = (
        PersistentVolume.from_object(local.data),
        PersistentVolume.from_object(zonal.data),
    )
    assert local_pv.topology == "local" and zonal_pv.topology is None
    assert zonal_pv.zones == {"europe-west1-b"} and local_pv.zones == frozenset()


def test_pdb_selectors_as_kubernetes_evaluates_them() -> None:
    inv = _inventory()

    def names(labels: dict[str, str]) -> list[str]:
        return sorted(p.name for p in inv.pdbs_selecting("data", labels))

    # policy/v1 empty selector: every pod in the namespace; v1beta1 empty selector: none
    assert names({"app": "web"}) == ["everything"]
    assert names({"app": "db", "tier": "backend"}) == ["everything", "not-canary"]
    assert names({"app": "db", "tier": "backend", "track": "canary"}) == ["everything"]
    assert names({"app": "db"}) == ["everything"]  # tier must exist
    assert inv.pdbs_selecting("elsewhere", {"app": "db", "tier": "x"}) == []


def test_custom_resources_are_counted_not_loaded() -> None:
    report = run_cli("check", "--format", "json", str(SURROUNDINGS)).json()
    assert report["errors"] == []
    assert report["summary"]["skipped_documents"] == 1  # the Certificate
    assert _inventory().of_kind("Certificate") == []
