"""pdb-quorum-loss: a PodDisruptionBudget that lets drains take the majority of the replicas."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.hookspecs import hookimpl
from ssrisk.inventory import pdb_selects
from ssrisk.model import Finding, K8sObject, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule

from ._group import group_of
from ._podspec import budget
from ._quorum import allowed_down, quorum_system
from ._text import paragraph
from ._workload import nothing_at_stake


class PdbQuorumLoss(Rule):
    id = "pdb-quorum-loss"
    severity = Severity.WARNING
    fix_scenarios = ("node-drain",)
    other_severities = (Severity.ERROR, Severity.INFO)
    summary = (
        "a PodDisruptionBudget whose maxUnavailable or minAvailable lets evictions take a "
        "majority of a quorum system (more than half of other sets), or the only replica"
    )
    references = (
        "k8s: pkg/controller/disruption/disruption.go#getExpectedPodCount",
        "k8s: pkg/registry/core/pod/storage/eviction.go#Create",
        "web: docs/tasks/run-application/configure-pdb.md (Think about how your application "
        "reacts to disruptions)",
        "web: docs/concepts/workloads/pods/disruptions.md",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        pdbs = ctx.pdbs()
        if n < 1 or len(pdbs) != 1:  # several PDBs: pdb-blocks-drain (every eviction fails)
            return
        pdb = pdbs[0]
        n, sets = _selected_members(ctx, pdb)
        if min(sets) != ctx.sts.name:
            return  # one budget over a group of sets: reported once, on the first of them
        b = budget(pdb, n)
        if b is None or b.field is None:
            return
        allowed = b.allowed(n)
        system = quorum_system(ctx)
        limit = allowed_down(ctx, None, n)
        if allowed <= limit:
            return
        at = pdb.pos("spec", b.field)
        # A budget that lets routine maintenance (a drain, a node upgrade) take a quorum
        # system's majority is an outage by design: an error, like a single replica. For
        # other sets, more than half at once and the only replica stay warnings (the only
        # replica's outage is single-replica's error, which this finding folds into).
        severity = Severity.ERROR if system is not None and n > 1 else Severity.WARNING
        if n == 1 and nothing_at_stake(ctx):
            severity = Severity.INFO  # (as single-replica rates it: nothing to fail over)
        if n == 1:
            msg = (
                f"PodDisruptionBudget {pdb.name!r} {b.field}: {b.raw} lets a drain evict the only "
                "replica: every drain of its node is an outage"
            )
        elif system is not None:
            msg = (
                f"PodDisruptionBudget {pdb.name!r} {b.field}: {b.raw} lets drains evict {allowed} "
                f"of {n} {system} members at once; a majority needs at most {limit} gone"
            )
        else:
            msg = (
                f"PodDisruptionBudget {pdb.name!r} {b.field}: {b.raw} lets drains evict {allowed} "
                f"of {n} replicas at once, more than half"
            )
        desired = n - limit

        def explanation() -> str:
            what = (
                f"a quorum system ({system}) keeps accepting writes only while a majority, "
                f"{n // 2 + 1} of {n}, is up"
                if system is not None
                else "ssrisk takes at most half of a set that is not a quorum system as the "
                "most that may go at once"
            )
            why = paragraph(
                f"""The disruption controller allows evictions while currentHealthy is above
                desiredHealthy (disruption.go#getExpectedPodCount; percentages are rounded up),
                and the eviction API admits them one by one against that budget
                (eviction.go#Create). Here {b.field}: {b.raw} gives desiredHealthy
                {b.desired_healthy} of {n}, so {allowed} pod(s) may be evicted at once: node
                upgrades, the cluster autoscaler and kubectl drain of several nodes in parallel
                all consume the same budget. But {what}."""
            )
            fix = paragraph(
                f"""Fix: allow at most {limit} disruption(s): maxUnavailable: {limit} or
                minAvailable: {desired}{" (and run at least 3 replicas)" if n < 3 else ""};
                add unhealthyPodEvictionPolicy: AlwaysAllow so broken pods never block drains."""
                if limit > 0
                else """Fix: run enough replicas that one can go (3 for a quorum system), then
                allow one disruption (maxUnavailable: 1)."""
            )
            return f"{why}\n\n{fix}\n"

        yield self.finding(
            ctx,
            at,
            msg,
            explanation,
            severity=severity,
            echo_of=("single-replica", "quorum-replicas"),
            facts={
                "pdb": pdb.name,
                "field": b.field,
                "value": b.raw,
                "evictable": allowed,
                "replicas": n,
                "system": system,
                "majority_tolerates": limit,
            },
        )

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        return _keep_quorum(ctx, finding)


def _keep_quorum(ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
    """A budget that lets one member go at a time (maxUnavailable 1, in place of minAvailable
    when that is the field): a planned eviction and an unplanned failure then still leave the
    majority. None when the majority tolerates no loss (a single replica or a quorum of two:
    more replicas, a decision the manifest cannot show), or for a budget in an API version no
    longer served."""
    facts = finding.facts
    limit, n, field = facts.get("majority_tolerates"), facts.get("replicas"), facts.get("field")
    pdbs = [p for p in ctx.pdbs() if p.name == facts.get("pdb")]
    if not isinstance(limit, int) or not isinstance(n, int) or limit < 1 or len(pdbs) != 1:
        return ()
    (pdb,) = pdbs

    def edit(key: str, value: object = None, remove: bool = False) -> Edit:
        return Edit(("spec", key), value, remove=remove, obj=pdb.ref, at=pdb.start())

    if pdb.api_version != "policy/v1":
        return ()  # (a budget in an API version no longer served: its version first)
    # one planned eviction at a time: with the minority's worth, planned evictions and one
    # unplanned failure together could still take the majority
    one = Remedy("set maxUnavailable to 1", (edit("maxUnavailable", 1),))
    if field == "minAvailable":
        swap = (edit("minAvailable", remove=True), edit("maxUnavailable", 1))
        return (Remedy("replace minAvailable with maxUnavailable: 1", swap),)
    return (one,)


def _selected_members(ctx: CheckContext, pdb: K8sObject) -> tuple[int, list[str]]:
    """The pods ``pdb`` counts and the sets they belong to: the set's replicas, plus those of
    the other StatefulSets of its system group (:func:`rules._group.group_of`) whose pods it
    selects too (one budget over a ring of one set per zone counts every member:
    disruption.go#getExpectedPodCount adds up the scale of every controller of the pods it
    selects)."""
    group = group_of(ctx)
    total, names = ctx.replicas, [ctx.sts.name]
    for name, replicas in group.replicas.items() if group is not None else ():
        if name == ctx.sts.name:
            continue
        other = ctx.inventory.named("StatefulSet", ctx.sts.namespace, name)
        if other is not None and pdb_selects(pdb, other.pod_template().labels):
            total += replicas
            names.append(name)
    return total, names


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PdbQuorumLoss()]
