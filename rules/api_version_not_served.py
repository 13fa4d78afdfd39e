"""api-version-not-served: a StatefulSet in an API version that no supported cluster serves."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import MAX_PDBS, CheckContext, Rule

from ._text import paragraph

#: StatefulSet API versions removed in Kubernetes 1.16 (web: blog/2019/07/18/
#: api-deprecations-in-1-16; kubernetes/kubernetes#70672).
REMOVED_IN_1_16 = frozenset({"apps/v1beta1", "apps/v1beta2"})
#: PodDisruptionBudget API versions removed in Kubernetes 1.25 (web: docs/reference/using-api/
#: deprecation-guide.md, "v1.25").
PDB_REMOVED_IN_1_25 = frozenset({"policy/v1beta1"})


class ApiVersionNotServed(Rule):
    id = "api-version-not-served"
    severity = Severity.ERROR
    covers_all = True
    summary = (
        "a StatefulSet in apps/v1beta1 or apps/v1beta2, which Kubernetes stopped serving in "
        "1.16: the API server rejects it, so none of its settings take effect; a "
        "PodDisruptionBudget of the set in policy/v1beta1 (not served since 1.25), so the set "
        "has no budget"
    )
    references = (
        "web: blog/2019/07/18/api-deprecations-in-1-16",
        "web: docs/reference/using-api/deprecation-guide.md",
        "kubernetes/kubernetes#70672",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        version = ctx.sts.api_version
        if version not in REMOVED_IN_1_16:
            yield from self._budgets(ctx)
            return
        msg = (
            f"apiVersion {version} is not served since Kubernetes 1.16: the API server rejects "
            "this StatefulSet (use apps/v1)"
        )
        explanation = paragraph(
            f"""Kubernetes 1.16 stopped serving StatefulSet in apps/v1beta1 and apps/v1beta2
            (the "Deprecated APIs Removed In 1.16" announcement); every release ssrisk models
            (1.25 to 1.37) answers kubectl apply of this manifest with "no matches for kind
            StatefulSet in version {version}". Nothing else is checked on it: none of its
            settings can take effect as written."""
        )
        fix = paragraph(
            """Fix: change apiVersion to apps/v1 and mind what apps/v1 does differently:
            spec.selector is required (and must match the template labels; apps/v1beta1
            defaulted it from them) and immutable, and updateStrategy defaults to RollingUpdate
            (apps/v1beta1 defaulted to OnDelete)."""
        )
        facts = {"api_version": version, "not_served_since": "1.16"}
        yield self.finding(
            ctx, ctx.sts.pos("apiVersion"), msg, f"{explanation}\n\n{fix}\n", facts=facts
        )

    def _budgets(self, ctx: CheckContext) -> Iterator[Finding]:
        """A PodDisruptionBudget of the set in policy/v1beta1, which no release ssrisk models
        serves (removed in 1.25): its apply fails, so on the cluster the set has no budget.
        The finding is on the budget; the set's other findings still read the budget it was
        meant to be (what the fix gives)."""
        # every manifest as written: one replaced by a later definition still fails to apply
        every = ctx.inventory.pdbs_selecting(
            ctx.sts.namespace, ctx.pod_labels, limit=MAX_PDBS + 1, every_definition=True
        )
        for pdb in every:
            if pdb.api_version not in PDB_REMOVED_IN_1_25:
                continue
            msg = (
                f"PodDisruptionBudget {pdb.name!r}: {pdb.api_version} is not served since "
                "Kubernetes 1.25, so the set has no budget (use policy/v1)"
            )
            facts = {"pdb": pdb.name, "api_version": pdb.api_version, "not_served_since": "1.25"}
            yield self.finding(ctx, pdb.pos("apiVersion"), msg, obj=pdb.ref, facts=facts)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ApiVersionNotServed()]
