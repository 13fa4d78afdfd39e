"""pvc-retention-delete: persistentVolumeClaimRetentionPolicy that deletes data."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule

from ._cluster import STATEFULSET_AUTO_DELETE_PVC, gate_enabled
from ._podspec import set_spec, template
from ._text import paragraph

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

#: Both fields set to Delete (one finding: one block, one cause).
BOTH = (
    "deleting the StatefulSet deletes every claim, and a scale-down those of removed ordinals: "
    "their data is lost"
)


class PvcRetentionDelete(Rule):
    id = "pvc-retention-delete"
    severity = Severity.WARNING
    never_folded = True  # (data destroyed: never folded into another finding)
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
        if not template(ctx.sts).claim_templates:
            return
        spec = set_spec(ctx.sts)
        base = ("spec", "persistentVolumeClaimRetentionPolicy")
        said = {
            "whenDeleted": spec.retention_when_deleted,
            "whenScaled": spec.retention_when_scaled,
        }
        fields = [f for f in WHAT if said[f] == "Delete"]
        if not fields:
            return
        # One block, one cause: both fields set to Delete are one finding (at the block), whose
        # message and explanation keep both consequences.
        if len(fields) == 1:
            msg = f"{fields[0]}: Delete: {WHAT[fields[0]]}"
            at = ctx.sts.pos(*base, fields[0])
        else:
            msg = f"whenDeleted and whenScaled: Delete: {BOTH}"
            at = ctx.sts.pos(*base)

        def explanation() -> str:
            which = " and ".join(f"{f}: Delete" for f in fields)
            lost = "\n".join(f"- {f}: {WHAT[f]}." for f in fields)
            head = paragraph(
                f"""With persistentVolumeClaimRetentionPolicy {which} the StatefulSet controller
                sets owner references on the claims
                (stateful_pod_control.go#UpdatePodClaimForRetentionPolicy) and the garbage
                collector deletes them:"""
            )
            return f"""
{head}

{lost}

The PersistentVolume then follows its reclaim policy (Delete for dynamically provisioned
volumes). Node failures and pod replacement do not delete claims. The default, Retain, keeps
them.

Fix: use Retain for data that matters (clean up claims explicitly), or keep Delete only for
caches and replicas that rebuild their data from peers.
"""

        facts = {f"{f[4:].lower()}_deletes_claims": f in fields for f in WHAT}
        yield self.finding(ctx, at, msg, explanation, facts=facts)

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        return _retain(ctx)


def _retain(ctx: CheckContext) -> Sequence[Remedy]:
    """Retain for each field set to Delete: the claims (and data) outlive scale-downs and the
    StatefulSet's deletion, as they do by default."""
    spec = set_spec(ctx.sts)
    said = {"whenDeleted": spec.retention_when_deleted, "whenScaled": spec.retention_when_scaled}
    fields = [f for f in WHAT if said[f] == "Delete"]
    if not fields:
        return ()
    base = ("spec", "persistentVolumeClaimRetentionPolicy")
    edits = tuple(Edit((*base, f), "Retain") for f in fields)
    return (Remedy(f"set {' and '.join(fields)} to Retain", edits),)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PvcRetentionDelete()]
