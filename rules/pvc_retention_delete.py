"""pvc-retention-delete: persistentVolumeClaimRetentionPolicy that deletes data."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._cluster import STATEFULSET_AUTO_DELETE_PVC, gate_enabled

WHAT = {
    "whenScaled": (
        "a scale-down deletes the claims (and, with a Delete reclaim policy, the volumes) of "
        "removed ordinals: scaling up again starts them empty"
    ),
    "whenDeleted": (
        "deleting the StatefulSet deletes every claim: an uninstall or a delete-and-recreate to "
        "change an immutable field loses all data"
    ),
}


class PvcRetentionDelete(Rule):
    id = "pvc-retention-delete"
    severity = Severity.WARNING
    summary = (
        "persistentVolumeClaimRetentionPolicy whenScaled or whenDeleted: Delete removes the "
        "data volumes on scale-down or deletion"
    )
    references = (
        "web: docs/concepts/workloads/controllers/statefulset.md (PersistentVolumeClaim retention)",
        "KEP-1847 (StatefulSetAutoDeletePVC: beta and on from 1.27, GA in 1.32)",
        "k8s: pkg/controller/statefulset/stateful_pod_control.go#UpdatePodClaimForRetentionPolicy",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if not gate_enabled(ctx, STATEFULSET_AUTO_DELETE_PVC):
            # off by default before 1.27: the API server then drops the field (KEP-1847)
            return
        if not ctx.sts.get("spec", "volumeClaimTemplates"):
            return
        base = ("spec", "persistentVolumeClaimRetentionPolicy")
        for field, what in WHAT.items():
            if ctx.sts.get(*base, field) != "Delete":
                continue
            msg = f"{field}: Delete: {what}"

            def explanation(field: str = field) -> str:  # bound: runs after the loop
                return f"""
With persistentVolumeClaimRetentionPolicy.{field}: Delete the StatefulSet controller sets
owner references on the claims (stateful_pod_control.go#UpdatePodClaimForRetentionPolicy) and
the garbage collector deletes them: whenScaled when an ordinal is scaled away, whenDeleted
when the StatefulSet is deleted. The PersistentVolume then follows its reclaim policy (Delete
for dynamically provisioned volumes). Node failures and pod replacement do not delete claims.
The default, Retain, keeps them.

Fix: use Retain for data that matters (clean up claims explicitly), or keep Delete only for
caches and replicas that rebuild their data from peers.
"""

            yield self.finding(ctx, ctx.sts.pos(*base, field), msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PvcRetentionDelete()]
