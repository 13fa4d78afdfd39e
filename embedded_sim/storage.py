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

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

from . import objects as _objects
from .lazyre import lazy
from .objects import PersistentVolume, StorageClass, default_class
from .profile import ClusterProfile

#: Read before spec.storageClassName (the model's; kept here for the readers of this module).
BETA_STORAGE_CLASS_ANNOTATION = _objects.BETA_STORAGE_CLASS_ANNOTATION

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
NODE_LOCAL_CLASS_RE = lazy(r"^(local|local-.+|.+-local|localpv.*|.*hostpath.*)$")

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


class ClaimStorage(msgspec.Struct, frozen=True):
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


def classify_class(sc: StorageClass, modes: Sequence[str]) -> tuple[str, str, str]:
    """(topology, binding mode, basis) of a StorageClass for claims with access ``modes``."""
    prov = sc.provisioner
    bmode = sc.binding
    name = sc.name
    params = sc.parameters
    if prov in HOSTPATH_PROVISIONERS:
        return "hostpath", bmode, f"StorageClass {name!r} (provisioner {prov}, hostPath volumes)"
    if prov in NODE_LOCAL_PROVISIONERS or "local" in prov.split(".")[0]:
        return "local", bmode, f"StorageClass {name!r} (provisioner {prov}, node-local disks)"
    basis = f"StorageClass {name!r} (provisioner {prov or 'none'})"
    if any(h in prov for h in NETWORK_FS_HINTS) or any(
        m in ("ReadWriteMany", "ReadOnlyMany") for m in modes
    ):
        return "network", bmode, basis
    if regional_parameters(params) or any(h in prov for h in NON_ZONAL_BLOCK_HINTS):
        return "regional", bmode, basis
    return "zonal", bmode, basis


#: Provisioners of zonal block disks (a disk lives in one zone). Sources: the drivers' docs
#: (aws-ebs-csi-driver, gcp-compute-persistent-disk-csi-driver, azuredisk-csi-driver,
#: cloud-provider-openstack cinder-csi-plugin, alibaba-cloud-csi-driver, IBM VPC block CSI)
#: and the in-tree plugins they replace (web: docs/concepts/storage/storage-classes.md).
KNOWN_ZONAL_PROVISIONERS = frozenset(
    {
        "ebs.csi.aws.com",
        "kubernetes.io/aws-ebs",
        "pd.csi.storage.gke.io",
        "kubernetes.io/gce-pd",
        "disk.csi.azure.com",
        "kubernetes.io/azure-disk",
        "cinder.csi.openstack.org",
        "kubernetes.io/cinder",
        "diskplugin.csi.alibabacloud.com",
        "vpc.block.csi.ibm.io",
    }
)


def pins_zone(sc: StorageClass, modes: Sequence[str]) -> bool:
    """Whether ``sc`` makes, for claims with access ``modes``, disks of one zone by a
    provisioner known to (:data:`KNOWN_ZONAL_PROVISIONERS`): a class :func:`classify_class`
    reads as "zonal" but whose provisioner is unknown may not be."""
    return sc.provisioner in KNOWN_ZONAL_PROVISIONERS and classify_class(sc, modes)[0] == "zonal"


def regional_parameters(params: Mapping[str, str]) -> bool:
    """Whether a class's parameters (keys in lower case) ask for disks replicated over zones:
    GCE ``replication-type: regional-pd`` (gcp-compute-persistent-disk-csi-driver
    pkg/common/parameters.go, values compared in lower case) or an Azure zone-redundant
    ``skuName`` (``Premium_ZRS``, ``StandardSSD_ZRS``: azuredisk-csi-driver docs/
    driver-parameters.md)."""
    if params.get("replication-type", "").lower().startswith("regional"):
        return True
    return params.get("skuname", "").upper().endswith("ZRS")


def local_class_name(name: str) -> bool:
    """A class name that node-local provisioners install (used without the class object)."""
    return name in NODE_LOCAL_CLASS_NAMES or bool(NODE_LOCAL_CLASS_RE.match(name))


class StorageIndex(msgspec.Struct, frozen=True):
    """What :func:`resolve_claim` reads of a cluster's StorageClasses and PersistentVolumes,
    indexed once (:func:`storage_index`), so that each StatefulSet's claims cost time
    independent of how many there are: a set is handed only the classes and volumes its
    claims can use (:meth:`inputs`)."""

    #: StorageClass by name (the last one of a name: what ``kubectl apply`` leaves)
    by_name: Mapping[str, Mapping[str, Any]]
    #: the default StorageClass (:func:`embedded_sim.objects.default_class`)
    default: Mapping[str, Any] | None
    #: by class, the first node-local PersistentVolume of it (``PersistentVolume.topology``)
    node_pvs: Mapping[str, Mapping[str, Any]]

    def inputs(
        self, class_names: Iterable[str | None]
    ) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
        """``(classes, volumes)`` to give :func:`resolve_claim` for claims asking for
        ``class_names`` (``None``: no class): it answers with them as with every class and
        volume of the cluster (the default class is among them, and wins over them as it
        wins over all)."""
        wanted = list(dict.fromkeys(c or "" for c in class_names))
        classes = [self.by_name[c] for c in wanted if c in self.by_name]
        if self.default is not None and not any(c is self.default for c in classes):
            classes.append(self.default)
        return classes, [self.node_pvs[c] for c in wanted if c in self.node_pvs]


def storage_index(
    classes: Sequence[Mapping[str, Any]], pvs: Sequence[Mapping[str, Any]]
) -> StorageIndex:
    """Index ``classes`` and ``pvs`` as :func:`resolve_claim` reads them, in one pass."""
    by_name: dict[str, Mapping[str, Any]] = {}
    models: dict[int, Mapping[str, Any]] = {}
    parsed: list[StorageClass] = []
    for sc in classes:
        if not isinstance(sc, Mapping):
            continue
        model = StorageClass.from_object(sc)
        if model.name:
            by_name[model.name] = sc
        models[id(model)] = sc
        parsed.append(model)
    chosen = default_class(parsed)
    node_pvs: dict[str, Mapping[str, Any]] = {}
    for pv in pvs:
        cls = node_local_class(pv) if isinstance(pv, Mapping) else None
        if cls is not None:
            node_pvs.setdefault(cls, pv)
    return StorageIndex(by_name, models[id(chosen)] if chosen else None, node_pvs)


def node_local_class(pv: Mapping[str, Any]) -> str | None:
    """The class of a PersistentVolume that pins its pod to a node (a local or hostPath
    volume, ``PersistentVolume.topology``), as :class:`StorageIndex` files it; ``None`` for
    any other volume."""
    model = PersistentVolume.from_object(pv)
    return model.class_name if model.topology is not None else None


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
        model = StorageClass.from_object(default)
        topo, bmode, basis = classify_class(model, access_modes)
        return ClaimStorage(topo, bmode, model.name or "default", f"the default {basis}")
    if class_name and class_name in index.by_name:
        model = StorageClass.from_object(index.by_name[class_name])
        topo, bmode, basis = classify_class(model, access_modes)
        return ClaimStorage(topo, bmode, class_name, basis)
    found = index.node_pvs.get(class_name or "")
    if found is not None:
        pv = PersistentVolume.from_object(found)
        pv_topo = pv.topology or "local"  # (indexed only when it has a topology)
        what = f"class {class_name!r}" if class_name else 'storageClassName ""'
        kind = "local" if pv_topo == "local" else "hostPath"
        return ClaimStorage(
            pv_topo,
            "WaitForFirstConsumer",
            class_name or "",
            f"{kind} PersistentVolumes of {what} (e.g. {pv.name or '?'})",
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
    known = profile.default_storage_class
    if not class_name and known:
        what = f"the cluster's default StorageClass {known!r} (the profile's)"
    note = (
        f"claim template {template_name!r}: {what}; assumed {topo} storage with "
        f"{profile.assume_default_binding} binding"
    )
    return ClaimStorage(
        topo, profile.assume_default_binding, class_name or "(default)", f"{what} (assumed)", note
    )
