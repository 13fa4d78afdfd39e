"""What a volume claim template ties a pod to: storage class resolution and classification.

The class of a claim is its `volume.beta.kubernetes.io/storage-class` annotation when present,
else `spec.storageClassName` (pkg/apis/core/v1/helper/helpers.go#GetPersistentVolumeClaimClass:
"Use beta annotation first"); a claim with neither gets the default class from the
DefaultStorageClass admission plugin (plugin/pkg/admission/storage/storageclass/setdefault/
admission.go#Admit, which skips claims that have either, helper#PersistentVolumeClaimHasClass).

Classification ("topology") decides what the simulator does with the volume:

* "local": the disk of one node (a local PV, a hostPath PV with node affinity, or a node-local
  provisioner). The PV carries a node affinity, so the scheduler's VolumeBinding filter only
  accepts that node (pkg/scheduler/framework/plugins/volumebinding/binder.go#FindPodVolumes);
  it is never attached or detached by the attach/detach controller (local and hostPath volumes
  are not attachable plugins: pkg/volume/local/local.go, pkg/volume/hostpath/host_path.go), so
  no Multi-Attach error and no 6-minute wait apply.
* "hostpath": a hostPath PV without node affinity (the in-tree kubernetes.io/host-path test
  provisioner, minikube's and Docker Desktop's single-node provisioners): never attached, and
  nothing keeps the pod on the node that holds the data, so a replacement on another node
  starts with an empty directory.
* "zonal": a block disk of one zone (node affinity on the zone label), attached by the
  attach/detach controller; ReadWriteOnce makes it exclusive to one node.
* "regional": a block disk replicated over zones; attached like a zonal one, no zone pinning.
* "network": a shared file system (NFS, CephFS, EFS, ...), mounted, not attached.

When the StorageClass object is not in the input, a class name that is a known node-local
name is classified "local" (NODE_LOCAL_CLASS_NAMES, NODE_LOCAL_CLASS_RE); anything else falls
back to the cluster profile's `assume_default_storage`, and the result says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .profile import ClusterProfile

#: The legacy claim annotation, read before spec.storageClassName (BetaStorageClassAnnotation).
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"

DEFAULT_CLASS_ANNOTATIONS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)

#: Provisioners whose volumes live on one node's disks. Sources: web: docs/concepts/storage/
#: storage-classes.md ("Local": kubernetes.io/no-provisioner) and the drivers' documentation
#: (rancher/local-path-provisioner, openebs/dynamic-localpv-provisioner, openebs lvm-localpv and
#: zfs-localpv, topolvm, kubernetes-csi/csi-driver-host-path, the minikube, MicroK8s and Docker
#: Desktop hostpath provisioners, the in-tree kubernetes.io/host-path test provisioner).
NODE_LOCAL_PROVISIONERS = frozenset(
    {
        "kubernetes.io/no-provisioner",
        "rancher.io/local-path",
        "openebs.io/local",
        "local.csi.openebs.io",
        "zfs.csi.openebs.io",
        "topolvm.io",
        "topolvm.cybozu.com",
        "hostpath.csi.k8s.io",
        "microk8s.io/hostpath",
    }
)

#: Provisioners of hostPath PersistentVolumes without node affinity (single-node development
#: clusters): pkg/volume/hostpath/host_path.go (kubernetes.io/host-path, "for development and
#: testing only"), the minikube storage-provisioner and Docker Desktop's hostpath provisioner.
HOSTPATH_PROVISIONERS = frozenset(
    {"kubernetes.io/host-path", "k8s.io/minikube-hostpath", "docker.io/hostpath"}
)

#: Class names that those provisioners install by default, used when the StorageClass object is
#: not in the input (k3s and rancher/local-path-provisioner: local-path; the local volume docs
#: and sig-storage-local-static-provisioner examples: local-storage, fast-disks; OpenEBS:
#: openebs-hostpath, openebs-device, openebs-lvmpv, openebs-zfspv; MicroK8s: microk8s-hostpath;
#: Docker Desktop: hostpath; TopoLVM: topolvm-provisioner).
NODE_LOCAL_CLASS_NAMES = frozenset(
    {
        "local-path",
        "local-storage",
        "fast-disks",
        "openebs-hostpath",
        "openebs-device",
        "openebs-lvmpv",
        "openebs-zfspv",
        "microk8s-hostpath",
        "topolvm-provisioner",
    }
)
#: Other names that say "node-local" by convention: local, local-*, *-local, localpv*, *hostpath*.
NODE_LOCAL_CLASS_RE = re.compile(r"^(local|local-.+|.+-local|localpv.*|.*hostpath.*)$")

NETWORK_FS_HINTS = ("nfs", "cephfs", "efs.csi", "filestore", "file.csi.azure.com", "glusterfs")
NON_ZONAL_BLOCK_HINTS = ("rbd.csi.ceph.com", "driver.longhorn.io", "portworx", "csi.vsphere")

#: What the simulator does with each topology (shown in explanations).
TOPOLOGY_WORDS = {
    "local": "node-local (never attached or detached; the pod can only run on that node)",
    "hostpath": "a hostPath directory of one node (never attached; nothing keeps the pod there)",
    "zonal": "a zonal block volume (attached to one node at a time, pinned to its zone)",
    "regional": "a regional block volume (attached to one node at a time)",
    "network": "network storage (mounted, not attached)",
}


def _m(v: Any) -> Mapping[str, Any]:
    return v if isinstance(v, Mapping) else {}


@dataclass(frozen=True)
class ClaimStorage:
    """How one claim template's volumes behave.

    `topology` is "local", "zonal", "regional" or "network"; `binding` the volumeBindingMode;
    `class_name` the class asked for ("" for static binding, "(default)" when no class and no
    default class is known); `basis` says what decided it, in words; `note` is set when the
    result is an assumption of the cluster profile rather than read from the input.
    """

    topology: str
    binding: str
    class_name: str
    basis: str
    note: str | None = None

    @property
    def node_local(self) -> bool:
        """The data lives on one node's disk (pinned "local", or unpinned "hostpath")."""
        return self.topology in ("local", "hostpath")

    @property
    def pinned(self) -> bool:
        """The PV's node affinity keeps the pod on the node that holds the data."""
        return self.topology == "local"

    @property
    def attachable(self) -> bool:
        """Goes through the attach/detach controller (Multi-Attach, force detach)."""
        return self.topology in ("zonal", "regional")


def claim_class_name(template: Mapping[str, Any]) -> str | None:
    """The class a claim asks for: the beta annotation first, then spec.storageClassName;
    None when it asks for neither (the default class then applies).

    pkg/apis/core/v1/helper/helpers.go#GetPersistentVolumeClaimClass.
    """
    ann = _m(_m(template.get("metadata")).get("annotations"))
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        value = ann[BETA_STORAGE_CLASS_ANNOTATION]
        return value if isinstance(value, str) else str(value)
    name = _m(template.get("spec")).get("storageClassName")
    return name if isinstance(name, str) else None


def classify_class(sc: Mapping[str, Any], modes: Sequence[str]) -> tuple[str, str, str]:
    """(topology, binding mode, basis) of a StorageClass object (binding defaults to Immediate,
    the API default: pkg/apis/storage/v1/defaults.go#SetDefaults_StorageClass)."""
    prov = sc.get("provisioner") if isinstance(sc.get("provisioner"), str) else ""
    assert isinstance(prov, str)
    binding = sc.get("volumeBindingMode")
    bmode = binding if binding in ("Immediate", "WaitForFirstConsumer") else "Immediate"
    name = str(_m(sc.get("metadata")).get("name", ""))
    params = {str(k): str(v) for k, v in _m(sc.get("parameters")).items()}
    if prov in HOSTPATH_PROVISIONERS:
        return "hostpath", bmode, f"StorageClass {name!r} (provisioner {prov}, hostPath volumes)"
    if prov in NODE_LOCAL_PROVISIONERS or "local" in prov.split(".")[0]:
        return "local", bmode, f"StorageClass {name!r} (provisioner {prov}, node-local disks)"
    basis = f"StorageClass {name!r} (provisioner {prov or 'none'})"
    if any(h in prov for h in NETWORK_FS_HINTS) or any(
        m in ("ReadWriteMany", "ReadOnlyMany") for m in modes
    ):
        return "network", bmode, basis
    if params.get("replication-type", "").startswith("regional") or params.get(
        "skuName", params.get("skuname", "")
    ).upper().endswith("ZRS"):
        return "regional", bmode, basis
    if any(h in prov for h in NON_ZONAL_BLOCK_HINTS):
        return "regional", bmode, basis
    return "zonal", bmode, basis


def local_class_name(name: str) -> bool:
    """A class name that node-local provisioners install (used without the class object)."""
    return name in NODE_LOCAL_CLASS_NAMES or bool(NODE_LOCAL_CLASS_RE.match(name))


def _pv_topology(pv: Mapping[str, Any]) -> str | None:
    """ "local" for a local PV or a hostPath PV with node affinity, "hostpath" for a hostPath PV
    without one, None otherwise."""
    spec = _m(pv.get("spec"))
    if "local" in spec:
        return "local"
    if "hostPath" in spec:
        return "local" if _m(spec.get("nodeAffinity")).get("required") else "hostpath"
    return None


def _pv_class(pv: Mapping[str, Any]) -> str:
    """pkg/apis/core/v1/helper/helpers.go#GetPersistentVolumeClass (annotation first)."""
    ann = _m(_m(pv.get("metadata")).get("annotations"))
    if BETA_STORAGE_CLASS_ANNOTATION in ann:
        return str(ann[BETA_STORAGE_CLASS_ANNOTATION])
    name = _m(pv.get("spec")).get("storageClassName")
    return name if isinstance(name, str) else ""


@dataclass(frozen=True)
class StorageIndex:
    """What :func:`resolve_claim` reads of a cluster's StorageClasses and PersistentVolumes,
    indexed once (:func:`storage_index`), so that each StatefulSet's claims cost time
    independent of how many there are: a set is handed only the classes and volumes its
    claims can use (:meth:`inputs`)."""

    #: StorageClass by name (the last one of a name)
    by_name: Mapping[str, Mapping[str, Any]]
    #: the default StorageClass (the last one annotated as the default)
    default: Mapping[str, Any] | None
    #: by class, the first node-local PersistentVolume of it (``_pv_topology``)
    node_pvs: Mapping[str, Mapping[str, Any]]

    def inputs(
        self, class_names: Iterable[str | None]
    ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """``(classes, volumes)`` to give :func:`resolve_claim` for claims asking for
        ``class_names`` (``None``: no class): it answers with them as with every class and
        volume of the cluster."""
        wanted = list(dict.fromkeys(c or "" for c in class_names))
        classes = [self.by_name[c] for c in wanted if c in self.by_name]
        if self.default is not None:
            classes.append(self.default)  # (last: the default resolve_claim keeps)
        return classes, [self.node_pvs[c] for c in wanted if c in self.node_pvs]


def storage_index(
    classes: Sequence[Mapping[str, Any]], pvs: Sequence[Mapping[str, Any]]
) -> StorageIndex:
    """Index ``classes`` and ``pvs`` as :func:`resolve_claim` reads them, in one pass."""
    by_name: dict[str, Mapping[str, Any]] = {}
    default: Mapping[str, Any] | None = None
    for sc in classes:
        if not isinstance(sc, Mapping):
            continue
        meta = _m(sc.get("metadata"))
        name = meta.get("name")
        if isinstance(name, str):
            by_name[name] = sc
        ann = _m(meta.get("annotations"))
        if any(str(ann.get(a, "")).lower() == "true" for a in DEFAULT_CLASS_ANNOTATIONS):
            default = sc
    node_pvs: dict[str, Mapping[str, Any]] = {}
    for pv in pvs:
        cls = node_local_class(pv) if isinstance(pv, Mapping) else None
        if cls is not None:
            node_pvs.setdefault(cls, pv)
    return StorageIndex(by_name, default, node_pvs)


def node_local_class(pv: Mapping[str, Any]) -> str | None:
    """The class of a PersistentVolume that pins its pod to a node (a local or hostPath
    volume, ``_pv_topology``), as :class:`StorageIndex` files it; ``None`` for any other
    volume."""
    return _pv_class(pv) if _pv_topology(pv) is not None else None


def resolve_claim(
    class_name: str | None,
    access_modes: Sequence[str],
    template_name: str,
    classes: Sequence[Mapping[str, Any]],
    pvs: Sequence[Mapping[str, Any]],
    profile: ClusterProfile,
) -> ClaimStorage:
    """How the volumes of a claim template asking for `class_name` behave (see the module)."""
    index = storage_index(classes, pvs)
    default = index.default
    if class_name is None and default is not None:
        topo, bmode, basis = classify_class(default, access_modes)
        name = str(_m(default.get("metadata")).get("name", "default"))
        return ClaimStorage(topo, bmode, name, f"the default {basis}")
    if class_name and class_name in index.by_name:
        topo, bmode, basis = classify_class(index.by_name[class_name], access_modes)
        return ClaimStorage(topo, bmode, class_name, basis)
    pv = index.node_pvs.get(class_name or "")
    if pv is not None:
        pv_topo = _pv_topology(pv) or "local"  # (indexed only when it has a topology)
        pv_name = str(_m(pv.get("metadata")).get("name", "?"))
        what = f"class {class_name!r}" if class_name else 'storageClassName ""'
        kind = "local" if pv_topo == "local" else "hostPath"
        return ClaimStorage(
            pv_topo,
            "WaitForFirstConsumer",
            class_name or "",
            f"{kind} PersistentVolumes of {what} (e.g. {pv_name})",
        )
    if class_name == "":
        note = (
            f'claim template {template_name!r}: storageClassName "" (static PVs); assumed zonal '
            "block volumes"
        )
        return ClaimStorage("zonal", "Immediate", "", 'storageClassName "" (static PVs)', note)
    if class_name == "hostpath":
        return ClaimStorage(
            "hostpath",
            "Immediate",
            class_name,
            "class 'hostpath', Docker Desktop's hostPath provisioner (the StorageClass is not in "
            "the input)",
        )
    if class_name and local_class_name(class_name):
        return ClaimStorage(
            "local",
            "WaitForFirstConsumer",
            class_name,
            f"class {class_name!r}, a name node-local provisioners use (the StorageClass is not "
            "in the input)",
        )
    topo = profile.assume_default_storage
    if any(m in ("ReadWriteMany", "ReadOnlyMany") for m in access_modes):
        topo = "network"
    what = (
        f"StorageClass {class_name!r} not in the input"
        if class_name
        else "no default StorageClass in the input"
    )
    note = (
        f"claim template {template_name!r}: {what}; assumed {topo} storage with "
        f"{profile.assume_default_binding} binding"
    )
    return ClaimStorage(
        topo, profile.assume_default_binding, class_name or "(default)", f"{what} (assumed)", note
    )
