"""node-pinned-storage: pods (or their data) that can never move to another node."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.embedded_sim.storage import BETA_STORAGE_CLASS_ANNOTATION as BETA_CLASS

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import claim_storage, containers, pinned_hostname, template

#: hostPath prefixes that hold node plumbing, not application data.
SYSTEM_PATHS = (
    "/dev", "/sys", "/proc", "/etc", "/run", "/var/run", "/var/log", "/lib/modules", "/usr",
    "/boot", "/var/lib/kubelet", "/var/lib/docker", "/var/lib/containerd", "/opt/cni",
    "/var/lib/cni", "/tmp",
)  # fmt: skip


def _system_path(path: str) -> bool:
    p = "/" + path.strip().strip("/")
    return p == "/" or any(p == s or p.startswith(s + "/") for s in SYSTEM_PATHS)


class NodePinnedStorage(Rule):
    id = "node-pinned-storage"
    severity = Severity.WARNING
    other_severities = (Severity.ERROR,)  # every replica pinned to one node
    summary = (
        "local PersistentVolumes, hostPath data, nodeName or a nodeSelector on one hostname: "
        "the pod (or its data) can never move to another node"
    )
    references = (
        "web: docs/concepts/storage/volumes.md (local, hostPath)",
        "k8s: pkg/scheduler/framework/plugins/volumebinding/binder.go#FindPodVolumes",
        "k8s: pkg/scheduler/framework/plugins/nodename/node_name.go#Filter",
        "web: docs/concepts/scheduling-eviction/assign-pod-node.md (nodeName)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        if n < 1:
            return
        pinned = pinned_hostname(ctx.sts)
        if pinned is not None:
            node, path = pinned
            yield self.finding(
                ctx,
                ctx.sts.pos(*path),
                f"every pod is tied to node {node!r}: its loss takes all {n} replica(s), and none "
                "can start elsewhere until it returns",
                f"""
{path[-1] if isinstance(path[-1], str) else "the node affinity"} in the pod template applies
to every replica, so all of them run on node {node!r} (nodeName bypasses the scheduler
entirely; a hostname selector or node affinity leaves one feasible node). When that node is
lost or drained, the replacement pods are created with the same constraint and stay Pending.

Fix: remove the node pinning; pin data with local PersistentVolumes per ordinal (one node each)
or, better, use replicated or network storage so pods can move.
""",
                severity=Severity.ERROR if n >= 2 else None,
                facts={"node": node, "replicas": n},
            )
        yield from self._host_paths(ctx)
        yield from self._local_volumes(ctx)

    def _host_paths(self, ctx: CheckContext) -> Iterator[Finding]:
        mounted = {m.name for c in containers(ctx.sts) for m in c.mounts if not m.read_only}
        for vol in template(ctx.sts).volumes:
            host_path = vol.host_path
            if host_path is None or _system_path(host_path) or vol.name not in mounted:
                continue
            yield self.finding(
                ctx,
                ctx.sts.pos(*vol.path, "hostPath", "path"),
                f"volume {vol.name!r} keeps data in hostPath {host_path}: a pod moved "
                "to another node starts empty, and a lost node's data is gone",
                """
A hostPath volume is a directory of whichever node the pod runs on. Nothing ties the pod to
that node: after a node loss, drain or reschedule, the StatefulSet pod starts on another node
and sees that node's (usually empty) directory, while its data stays behind or is lost with
the node. Two ordinals on one node also share the same directory.

Fix: use volumeClaimTemplates with a StorageClass (local PersistentVolumes at least keep the
pod with its data and make the pinning visible to the scheduler).
""",
                facts={"volume": vol.name, "host_path": host_path},
            )

    def _local_volumes(self, ctx: CheckContext) -> Iterator[Finding]:
        for vct in template(ctx.sts).claim_templates:
            i = vct.index
            storage = claim_storage(ctx, i)
            if storage is None or not storage.node_local:
                continue
            reason = storage.basis
            name = vct.name or f"#{i}"
            base = ("spec", "volumeClaimTemplates", i, "spec")
            ann = ("spec", "volumeClaimTemplates", i, "metadata", "annotations", BETA_CLASS)
            if vct.class_from_annotation:
                at = ctx.sts.pos(*ann)
            elif vct.class_name:
                at = ctx.sts.pos(*base, "storageClassName")
            else:
                at = ctx.sts.pos(*base)
            if not storage.pinned:
                yield self.finding(
                    ctx,
                    at,
                    f"volume claim {name!r} is a hostPath directory of one node that nothing "
                    "keeps the pod on: a replacement elsewhere starts empty",
                    f"""
The claim uses {reason}.

A hostPath PersistentVolume without a node affinity (what the in-tree kubernetes.io/host-path
test provisioner and the single-node minikube and Docker Desktop provisioners create) is a
directory on whichever node provisioned it. The scheduler does not keep the pod on that node:
after a node loss or drain the StatefulSet pod starts on another node with that node's empty
directory at the same path.

Fix: these provisioners are for single-node development clusters; use a StorageClass of the
real cluster (network or replicated storage, or local PersistentVolumes with node affinity).
""",
                )
                continue
            yield self.finding(
                ctx,
                at,
                f"volume claim {name!r} is node-local: when its node is lost, the ordinal stays "
                "Pending until the node returns or the claim is deleted",
                f"""
The claim uses {reason}.

A local PersistentVolume carries a node affinity for the node whose disk it is, and a
StatefulSet keeps each ordinal's claim (and so its volume) across pod replacements. The
scheduler's VolumeBinding filter then only accepts that node for the ordinal
("node(s) didn't match PersistentVolume's node affinity"; before 1.33 "had volume node
affinity conflict"). After a node loss the replacement pod stays
Pending; the ways out are bringing the node back, or deleting the claim (losing that
replica's data) so a new volume is provisioned elsewhere and the application re-replicates.

Fix: keep node-local storage for applications that replicate their data themselves, run
enough replicas to lose one node, and document the runbook (delete the PVC and the pod of the
lost ordinal); otherwise use network or replicated storage.
""",
            )


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [NodePinnedStorage()]
