"""The typed model of the objects around a StatefulSet: its Services, StorageClasses and
PersistentVolumes, each parsed once from the mapping as written (validation has named what the
API server would reject; here such a value reads as absent). The StatefulSet and its pod
template are :mod:`embedded_sim.podtemplate`'s; PodDisruptionBudgets
:mod:`embedded_sim.disruption`'s.

Every reading of these objects by the rules and the simulator goes through here, so that one
Kubernetes rule has one implementation:

* a Service is headless when ``clusterIP`` (or the first of ``clusterIPs``) is ``None``
  (web: docs/concepts/services-networking/service.md, "Headless Services");
* a StorageClass's binding mode defaults to Immediate
  (pkg/apis/storage/v1/defaults.go#SetDefaults_StorageClass), and which of several default
  classes a claim gets is :func:`default_class`'s;
* a PersistentVolume's class is the beta annotation first
  (pkg/apis/core/v1/helper/helpers.go#GetPersistentVolumeClass), and the zones its node
  affinity allows are :attr:`PersistentVolume.zones`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import msgspec

#: The legacy annotation read before ``storageClassName`` (BetaStorageClassAnnotation).
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

#: pkg/volume/util/storageclass.go#IsDefaultAnnotation (the GA and the beta annotation).
DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)

#: Node labels a PersistentVolume's node affinity pins a zone with: the well-known label, its
#: deprecated beta form (web: docs/reference/labels-annotations-taints, topology.kubernetes.io/
#: zone) and the topology keys the EBS and GCE PD CSI drivers write
#: (aws-ebs-csi-driver docs/parameters.md, gcp-compute-persistent-disk-csi-driver README).
PV_ZONE_KEYS = (
    "topology.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/zone",
    "topology.ebs.csi.aws.com/zone",
    "topology.gke.io/zone",
)

_MAPS = (dict, Mapping)


def _map(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, _MAPS) else {}


def _name(obj: Mapping[str, Any]) -> str:
    name = _map(obj.get("metadata")).get("name")
    return str(name) if isinstance(name, (str, int)) and not isinstance(name, bool) else ""


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _map(_map(obj.get("metadata")).get("annotations"))


class Service(msgspec.Struct, frozen=True):
    """A Service, as the StatefulSet controller and DNS read it.

    ``cluster_ip`` is ``spec.clusterIP`` as written (``None`` when unset); ``selector`` the
    ``spec.selector`` mapping (``None`` when unset or not a mapping: it selects no pod).
    """

    name: str
    namespace: str | None
    cluster_ip: str | None
    headless: bool
    selector: Mapping[str, Any] | None
    publish_not_ready_addresses: bool

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> Service:
        """The model of a Service manifest. Never raises."""
        spec = _map(obj.get("spec"))
        ip = spec.get("clusterIP")
        ips = spec.get("clusterIPs")
        first = ips[0] if isinstance(ips, list) and ips else None
        namespace = _map(obj.get("metadata")).get("namespace")
        selector = spec.get("selector")
        return Service(
            name=_name(obj),
            namespace=namespace if isinstance(namespace, str) else None,
            cluster_ip=ip if isinstance(ip, str) else None,
            headless=ip == "None" or first == "None",
            selector=selector if isinstance(selector, _MAPS) else None,
            publish_not_ready_addresses=spec.get("publishNotReadyAddresses") is True,
        )


class StorageClass(msgspec.Struct, frozen=True):
    """A StorageClass.

    ``binding_mode`` is ``volumeBindingMode`` as written (``None`` when unset or not one of
    the two modes); :attr:`binding` the mode in effect. ``parameters`` hold the keys in lower
    case and the values as text: the CSI drivers this model reads parameters of compare keys
    without case (gcp-compute-persistent-disk-csi-driver pkg/common/parameters.go, the
    azuredisk-csi-driver's parameter parsing).
    """

    name: str
    provisioner: str
    binding_mode: str | None
    parameters: Mapping[str, str]
    is_default: bool
    #: ``metadata.creationTimestamp`` (``None`` when absent or unreadable)
    created: datetime | None

    @property
    def binding(self) -> str:
        """The binding mode in effect (Immediate unless WaitForFirstConsumer is set)."""
        return self.binding_mode or "Immediate"

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> StorageClass:
        """The model of a StorageClass manifest. Never raises."""
        prov = obj.get("provisioner")
        mode = obj.get("volumeBindingMode")
        ann = _annotations(obj)
        created = _map(obj.get("metadata")).get("creationTimestamp")
        return StorageClass(
            name=_name(obj),
            provisioner=prov if isinstance(prov, str) else "",
            binding_mode=mode if mode in ("Immediate", "WaitForFirstConsumer") else None,
            parameters={str(k).lower(): str(v) for k, v in _map(obj.get("parameters")).items()},
            # the exact text "true" (a "True" or "yes" leaves the class not default)
            is_default=any(ann.get(a) == "true" for a in DEFAULT_CLASS_ANNOTATIONS),
            created=_timestamp(created),
        )


def _timestamp(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def default_class(classes: Iterable[StorageClass]) -> StorageClass | None:
    """The default class a claim that names none gets, of ``classes`` (in load order): of the
    classes annotated as the default, the newest by ``creationTimestamp``, then the first by
    name (pkg/volume/util/storageclass.go#GetDefaultClass, since 1.26: kubernetes/kubernetes
    #110559); of equal ones, the first loaded. A class without a timestamp is the oldest."""
    best: StorageClass | None = None
    for sc in classes:
        if sc.is_default and (best is None or _newer(sc, best)):
            best = sc
    return best


def _newer(a: StorageClass, b: StorageClass) -> bool:
    """Whether ``a`` sorts before ``b`` in GetDefaultClass's order (a strict order)."""
    ta, tb = _epoch(a.created), _epoch(b.created)
    return ta > tb if ta != tb else a.name < b.name


def _epoch(t: datetime | None) -> float:
    if t is None:
        return float("-inf")
    try:
        return t.timestamp()
    except (OverflowError, OSError, ValueError):
        return float("-inf")


class PersistentVolume(msgspec.Struct, frozen=True):
    """A PersistentVolume.

    ``source`` is ``"local"``, ``"hostPath"`` or ``None`` (any other volume source);
    ``pinned_to_node`` whether its node affinity is required (a local volume's always is:
    pkg/apis/core/validation#validateLocalVolumeSource needs it). ``claim`` is the
    ``(namespace, name)`` of ``spec.claimRef`` (namespace ``"default"`` when unset), ``None``
    when the volume is not bound. ``zones`` are the zones its required node affinity allows
    (empty: no zone constraint), and ``zone_path`` the field path of the first requirement
    that names one.
    """

    name: str
    class_name: str
    source: str | None
    pinned_to_node: bool
    claim: tuple[str, str] | None
    zones: frozenset[str]
    zone_path: tuple[str | int, ...] | None

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> PersistentVolume:
        """The model of a PersistentVolume manifest. Never raises."""
        spec = _map(obj.get("spec"))
        ann = _annotations(obj)
        if BETA_STORAGE_CLASS_ANNOTATION in ann:
            class_name = str(ann[BETA_STORAGE_CLASS_ANNOTATION])
        else:
            sc = spec.get("storageClassName")
            class_name = sc if isinstance(sc, str) else ""
        source = "local" if "local" in spec else "hostPath" if "hostPath" in spec else None
        affinity = _map(spec.get("nodeAffinity"))
        ref = spec.get("claimRef")
        claim = None
        if isinstance(ref, _MAPS):
            ns = ref.get("namespace")
            claim = (str(ns) if ns else "default", str(ref.get("name") or ""))
        zones, path = _zones(affinity)
        return PersistentVolume(
            name=_name(obj),
            class_name=class_name,
            source=source,
            pinned_to_node=bool(affinity.get("required")),
            claim=claim,
            zones=zones,
            zone_path=path,
        )

    @property
    def topology(self) -> str | None:
        """``"local"`` for a local volume or a hostPath one pinned to its node, ``"hostpath"``
        for a hostPath volume without node affinity, ``None`` for any other
        (:mod:`embedded_sim.storage` says what each does)."""
        if self.source == "local":
            return "local"
        if self.source == "hostPath":
            return "local" if self.pinned_to_node else "hostpath"
        return None


def _zones(affinity: Mapping[str, Any]) -> tuple[frozenset[str], tuple[str | int, ...] | None]:
    """The zones ``nodeAffinity.required`` allows: its terms are ORed, so the union of what
    each allows, and a term without an ``In`` requirement on a zone key allows every zone
    (k8s.io/component-helpers/storage/volume/pv_helpers.go#CheckNodeAffinity); with the path
    of the first zone requirement."""
    terms = _map(affinity.get("required")).get("nodeSelectorTerms")
    if not isinstance(terms, list):
        return frozenset(), None
    zones: set[str] = set()
    first: tuple[str | int, ...] | None = None
    for ti, term in enumerate(terms):
        exprs = term.get("matchExpressions") if isinstance(term, _MAPS) else None
        term_zones: list[str] = []
        for ei, e in enumerate(exprs if isinstance(exprs, list) else []):
            if not isinstance(e, _MAPS) or e.get("key") not in PV_ZONE_KEYS:
                continue
            if e.get("operator") != "In" or not isinstance(e.get("values"), list):
                continue
            term_zones.extend(str(v) for v in e["values"])
            if first is None:
                first = ("spec", "nodeAffinity", "required", "nodeSelectorTerms", ti)
                first += ("matchExpressions", ei)
        if not term_zones:
            return frozenset(), None  # (this term allows every zone)
        zones.update(term_zones)
    return frozenset(zones), first
