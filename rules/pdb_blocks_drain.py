"""pdb-blocks-drain: a PodDisruptionBudget that makes node drains hang."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from ssrisk.embedded_sim.disruption import DisruptionBudget

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, K8sObject, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import MAX_PDBS, CheckContext, Rule

from ._cluster import PDB_UNHEALTHY_POD_EVICTION_POLICY, gate_enabled
from ._podspec import budget
from ._quorum import members, quorum_system
from ._sim import timeline_block

#: The longest one-line message (details go to the explanation).
MAX_MESSAGE_CHARS = 160
EVICTION_SOURCE = "k8s: pkg/registry/core/pod/storage/eviction.go#Create"


def _needs(desired: int, n: int) -> str:
    """What a minAvailable budget asks of the ``n`` replicas: ``"needs all 3 pods healthy"``,
    ``"needs its only pod healthy"``, ``"needs 2 pods healthy, more than the 1 replica"``."""
    if desired > n:
        return f"needs {desired} pods healthy, more than the {n} replica{'s' if n != 1 else ''}"
    return "needs its only pod healthy" if n == 1 else f"needs all {n} pods healthy"


def only_one(pdb: K8sObject, n: int) -> bool:
    """Whether ``pdb`` blocks every eviction only because the set runs one replica: over 3
    replicas the same budget (``minAvailable: 1`` or ``51%``) allows one (``maxUnavailable: 0``,
    ``minAvailable: 100%`` or a budget that sets neither never does)."""
    return n == 1 and _frees_at_three(pdb)


def _frees_at_three(pdb: K8sObject) -> bool:
    more = budget(pdb, 3)
    return more is not None and more.allowed(3) > 0


def _cause(ctx: CheckContext, pdb: K8sObject) -> tuple[str, ...]:
    """The rule whose finding states why ``pdb`` never allows an eviction when more replicas
    would free it: single-replica for one replica; quorum-replicas for a two-member quorum,
    whose budget rightly keeps both (evicting either stops the quorum)."""
    n = ctx.replicas
    if only_one(pdb, n):
        return ("single-replica",)
    system = quorum_system(ctx)
    if n == 2 and system is not None and members(ctx, system) == 2 and _frees_at_three(pdb):
        return ("quorum-replicas",)
    return ()


class PdbBlocksDrain(Rule):
    id = "pdb-blocks-drain"
    severity = Severity.ERROR
    fix_scenarios = ("node-drain",)
    other_severities = (Severity.INFO,)
    summary = (
        "a PodDisruptionBudget that never allows an eviction (maxUnavailable 0, minAvailable ≥ "
        "replicas), several PDBs on the same pods, or broken pods that can block drains"
    )
    references = (
        EVICTION_SOURCE,
        "k8s: pkg/controller/disruption/disruption.go#getExpectedPodCount",
        "k8s: pkg/controller/disruption/disruption.go#updatePdbStatus",
        "web: docs/tasks/run-application/configure-pdb.md",
        "k8s: staging/src/k8s.io/kubectl/pkg/drain/drain.go#evictPods",
        "kubernetes/kubernetes#66811",
        "kubernetes/kubernetes#72320",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        if n < 1:
            return
        pdbs = sorted(ctx.pdbs(), key=lambda p: (p.path, p.start().line))
        if len(pdbs) > 1:
            yield self._several(ctx, pdbs)
            return  # every eviction fails; budgets do not matter
        for pdb in pdbs:
            b = budget(pdb, n)
            if b is None:
                continue
            if b.allowed(n) == 0:  # (also a budget that sets neither field)
                yield self._never(ctx, pdb, b.field, b.raw, b.desired_healthy, _cause(ctx, pdb))
            elif b.allowed(n) == 1 and n >= 2:
                f = self._unhealthy_policy(ctx, pdb, b.model)
                if f is not None:
                    yield f

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """For a budget that allows no eviction: one that allows one (minAvailable one below
        the replicas, keeping the field; else maxUnavailable 1). For drains that broken pods
        hang: unhealthyPodEvictionPolicy AlwaysAllow (evict pods that are not Ready whatever
        the budget: disruption.go, KEP-3017). Several budgets on one set, or one replica,
        need a decision the manifest cannot show: no candidate."""
        n = ctx.replicas
        pdbs = [p for p in ctx.pdbs() if p.name == finding.facts.get("pdb")]
        if n < 2 or len(pdbs) != 1 or pdbs[0].api_version != "policy/v1":
            return ()  # (a budget in an API version no longer served: its version first)
        (pdb,) = pdbs
        ref, at = pdb.ref, pdb.start()

        def edit(key: str, value: object = None, remove: bool = False) -> Edit:
            return Edit(("spec", key), value, remove=remove, obj=ref, at=at)

        if "unhealthy_pod_eviction_policy" in finding.facts:
            if quorum_system(ctx) is not None:
                # a member that is only catching up is not Ready but still votes: evicting
                # it whatever the budget can take the majority (advice, not a fix)
                return ()
            policy = edit("unhealthyPodEvictionPolicy", "AlwaysAllow")
            return (Remedy("set unhealthyPodEvictionPolicy to AlwaysAllow", (policy,)),)
        spec = pdb.data.get("spec")
        one = Remedy("set maxUnavailable to 1", (edit("maxUnavailable", 1),))
        if not isinstance(spec, dict) or "minAvailable" not in spec:
            return (one,)
        if not isinstance(spec.get("minAvailable"), int):  # a percentage: keep it relative
            return (
                Remedy(
                    "replace minAvailable with maxUnavailable: 1",
                    (edit("minAvailable", remove=True), edit("maxUnavailable", 1)),
                ),
            )
        keep = Remedy(f"set minAvailable to {n - 1}", (edit("minAvailable", n - 1),))
        swap = Remedy(
            "replace minAvailable with maxUnavailable: 1",
            (edit("minAvailable", remove=True), edit("maxUnavailable", 1)),
        )
        return (keep, swap)

    def _never(
        self,
        ctx: CheckContext,
        pdb: K8sObject,
        field: str | None,
        raw: object,
        desired: int,
        echo: tuple[str, ...],
    ) -> Finding:
        n = ctx.replicas
        at = pdb.pos("spec", field) if field else pdb.pos("spec")
        setting = f"{field}: {raw}" if field else ""
        sim = ctx.try_simulate("node-drain")
        quoted = ""
        if sim is not None:
            quoted = "" if sim.goal is not None and sim.goal.completed else " (simulated)"
        if field is None:
            msg = (
                f"PodDisruptionBudget {pdb.name!r} sets neither minAvailable nor "
                f"maxUnavailable, so it never allows an eviction and drains of their nodes "
                f"hang{quoted}"
            )
        elif field == "maxUnavailable":
            msg = (
                f"PodDisruptionBudget {pdb.name!r} {setting} never allows an eviction, so "
                f"drains of their nodes hang{quoted}"
            )
        else:
            msg = (
                f"PodDisruptionBudget {pdb.name!r} {setting} {_needs(desired, n)}: no eviction "
                f"is ever allowed, so drains of their nodes hang{quoted}"
            )
        if len(msg) > MAX_MESSAGE_CHARS:
            msg = msg.replace("PodDisruptionBudget", "PDB", 1)

        def explanation() -> str:
            timeline = "\n" + timeline_block(ctx, sim) if sim is not None else ""
            if field is not None:
                head = f"""
The disruption controller sets disruptionsAllowed = currentHealthy − desiredHealthy
(disruption.go#getExpectedPodCount; percentages are rounded up). Here desiredHealthy is
{desired} and at most {n} pods are ever healthy, so disruptionsAllowed is always 0. The"""
            else:
                head = """
This budget sets neither minAvailable nor maxUnavailable, and no API version defaults either:
the disruption controller then counts no expected pods (disruption.go#getExpectedPodCount)
and keeps disruptionsAllowed at 0 while it counts none (disruption.go#updatePdbStatus). The"""
            return (
                head
                + f"""
eviction API answers 429 "Cannot evict pod as it would violate the pod's disruption budget"
(eviction.go#Create), and kubectl drain retries every 5 s with no timeout by default
(drain.go#evictPods), so node upgrades and autoscaler scale-downs stall until someone deletes
the pod by hand or removes the PDB (kubernetes/kubernetes#66811).
{timeline}
Fix: allow at least one disruption: maxUnavailable: 1, or minAvailable at most replicas − 1
(and run at least 2 replicas); keep minAvailable for quorum (e.g. 2 of 3).
"""
            )

        # Never allowing an eviction blocks every drain and node upgrade for ever, as a single
        # replica makes every one an outage: an error, like single-replica (the unhealthy
        # policy case blocks drains only while something else is wrong: info). When more
        # replicas would free the budget, the rule that reports too few states the cause
        # (single-replica names the blocked drains; quorum-replicas, two members)
        return self.finding(
            ctx,
            at,
            msg,
            explanation,
            severity=Severity.ERROR,
            echo_of=echo,
            facts={
                "pdb": pdb.name,
                **({"field": field, "value": cast(FactValue, raw)} if field else {}),
                "desired_healthy": desired,
                "replicas": n,
                "simulated": bool(quoted),
            },
        )

    def _several(self, ctx: CheckContext, pdbs: list[K8sObject]) -> Finding:
        names = ", ".join(repr(p.name) for p in pdbs[:MAX_PDBS]) + (
            ", ..." if len(pdbs) > MAX_PDBS else ""
        )
        count = str(len(pdbs)) if len(pdbs) <= MAX_PDBS else f"more than {MAX_PDBS}"
        last = pdbs[-1]
        shown = names if len(names) <= 50 else f"{pdbs[0].name!r} and others"
        msg = (
            f"{count} PodDisruptionBudgets ({shown}) select these pods: the eviction API "
            "refuses pods with more than one PDB, so drains of their nodes fail"
        )
        explanation = f"""
The PodDisruptionBudgets {names} all select these pods.
The eviction subresource looks up the PDBs that select the pod and answers 500 "This pod has
more than one PodDisruptionBudget, which the eviction subresource does not support." when
there are several (eviction.go#Create), whatever the budgets allow. kubectl drain does not
retry that answer as it retries a 429 (drain.go#evictPods): the drain fails on every node
that runs one of these pods. The cluster autoscaler and managed node upgrades evict through
the same API, so node upgrades and scale-downs stop there too.

Fix: keep one PodDisruptionBudget per set of pods; make the selectors of the others exclude
these pods.
"""
        # every eviction of these pods fails, whatever the budgets allow: every drain and node
        # upgrade is blocked for ever, like a budget that never allows one (an error)
        return self.finding(
            ctx,
            last.pos("spec", "selector"),
            msg,
            explanation,
            references=(EVICTION_SOURCE,),
            severity=Severity.ERROR,
            facts={"pdbs": len(pdbs)} if len(pdbs) <= MAX_PDBS else {"pdbs_more_than": MAX_PDBS},
        )

    def _unhealthy_policy(
        self, ctx: CheckContext, pdb: K8sObject, model: DisruptionBudget
    ) -> Finding | None:
        if not gate_enabled(ctx, PDB_UNHEALTHY_POD_EVICTION_POLICY):  # beta and on from 1.27
            return None
        if model.unhealthy_policy == "AlwaysAllow":
            return None
        policy = model.unhealthy_policy if model.unhealthy_policy_set else "unset"
        at = (
            pdb.pos("spec", "unhealthyPodEvictionPolicy")
            if model.unhealthy_policy_set
            else pdb.pos("spec")
        )
        msg = (
            f"PodDisruptionBudget {pdb.name!r} allows one disruption, unhealthyPodEvictionPolicy "
            f"{policy}: with two pods broken, drains hang"
        )
        explanation = """
With the default policy IfHealthyBudget, the eviction API lets a pod that is not Ready go
without consuming budget only while currentHealthy ≥ desiredHealthy (eviction.go#Create).
This budget allows exactly one disruption, so as soon as two pods are unhealthy no pod of the
set can be evicted, the broken ones included, and kubectl drain retries for ever
(kubernetes/kubernetes#72320). unhealthyPodEvictionPolicy: AlwaysAllow (KEP-3017, beta and on
by default from Kubernetes 1.27, GA in 1.31) lets broken pods be evicted at any time; the
Kubernetes docs recommend it for most applications.

Fix: set spec.unhealthyPodEvictionPolicy: AlwaysAllow on the PDB.
"""
        facts = {"pdb": pdb.name, "unhealthy_pod_eviction_policy": policy}
        return self.finding(ctx, at, msg, explanation, severity=Severity.INFO, facts=facts)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PdbBlocksDrain()]
