"""pdb-missing: a replicated StatefulSet without a PodDisruptionBudget."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ssrisk.hookspecs import hookimpl
from ssrisk.model import POD_LABELS, Finding, ObjectRef, Severity
from ssrisk.remedy import Edit, Remedy, plain
from ssrisk.rule import CheckContext, Rule


class PdbMissing(Rule):
    id = "pdb-missing"
    severity = Severity.WARNING
    fix_scenarios = ("node-drain",)
    summary = (
        "replicas ≥ 2 and no PodDisruptionBudget selects the pods: drains and autoscaler "
        "scale-downs may evict several replicas at once"
    )
    references = (
        "web: docs/concepts/workloads/pods/disruptions.md",
        "web: docs/tasks/run-application/configure-pdb.md",
        "k8s: pkg/registry/core/pod/storage/eviction.go#Create (no PDB: the pod is evicted)",
        "k8s: staging/src/k8s.io/kubectl/pkg/drain/drain.go#evictPods",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        if n < 2 or ctx.is_fragment or ctx.pdbs():
            return
        ns = ctx.sts.namespace or "default"
        msg = (
            f"{n} replicas and no PodDisruptionBudget selects the pods: drains, node upgrades "
            "and autoscaler scale-downs can evict several at once"
        )
        labels = ", ".join(f"{k}={v}" for k, v in ctx.pod_labels.items()) or "no labels"
        explanation = f"""
No PodDisruptionBudget in namespace {ns} selects the pod labels ({labels}).
Without a PodDisruptionBudget the eviction API deletes any pod at once (eviction.go#Create).
kubectl drain evicts all pods of a node concurrently, and upgrade tooling and the cluster
autoscaler drain several nodes in parallel, so nothing keeps a quorum of the {n} replicas up
during maintenance. PDB selectors are matched against the pod template labels in the same
namespace (matchLabels and matchExpressions).

Fix: add a policy/v1 PodDisruptionBudget in namespace {ns} selecting the pod template labels,
with maxUnavailable: 1 (or minAvailable set to the quorum), and
unhealthyPodEvictionPolicy: AlwaysAllow.
"""
        yield self.finding(ctx, ctx.replicas_at(), msg, explanation, facts={"replicas": n})

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """A new policy/v1 PodDisruptionBudget, in the StatefulSet's namespace, that lets one
        pod go at a time (maxUnavailable 1), selecting what the set's own selector selects
        (the pods it owns: the API server requires the selector to match the template's
        labels), else, when that selects another workload's pods too, the template's stable
        labels (not a chart or version label). The unhealthy-pod policy is left to the owner
        (AlwaysAllow evicts pods that are only catching up, or all of them when readiness
        reflects the whole cluster). Named as the set, else ``<set>-pdb``; none when both
        names are taken or no selector selects these pods alone."""
        selector = ctx.sts.get("spec", "selector")
        if not isinstance(selector, dict) or not (
            selector.get("matchLabels") or selector.get("matchExpressions")
        ):
            return ()
        ns = ctx.sts.namespace
        if not ctx.sts.name:
            return ()  # (a set without a name: no budget name to derive)
        name = next(
            (
                candidate
                for candidate in (ctx.sts.name, f"{ctx.sts.name}-pdb")
                if ctx.inventory.named("PodDisruptionBudget", ns, candidate) is None
            ),
            None,
        )
        if name is None:
            return ()
        stable = {k: v for k, v in ctx.pod_labels.items() if k not in CHURNING_LABELS}
        chosen = next(
            (
                sel
                for sel in (plain(selector), {"matchLabels": plain(stable)})
                if sel.get("matchLabels") or sel.get("matchExpressions")
                if not _selects_others(ctx, sel)
            ),
            None,
        )
        if chosen is None:
            return ()  # (a budget over other workloads' pods too: their drains change)
        written_ns = ctx.sts.metadata.get("namespace")
        meta: dict[str, Any] = {"name": name}
        if isinstance(written_ns, str):
            meta["namespace"] = written_ns
        pdb = {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": meta,
            "spec": {"maxUnavailable": 1, "selector": chosen},
        }
        ref = ObjectRef("policy/v1", "PodDisruptionBudget", ns, name)
        new = Edit((), pdb, obj=ref, at=ctx.sts.start(), create=True)
        return (Remedy(f"add PodDisruptionBudget {name} with maxUnavailable 1", (new,)),)


#: Pod labels that change with every release of a chart or image: a budget's selector
#: leaves them out (it would stop selecting the pods after an upgrade).
CHURNING_LABELS = frozenset(
    {
        "helm.sh/chart",
        "app.kubernetes.io/version",
        "app.kubernetes.io/managed-by",
        "chart",
        "heritage",
        "release",
        "version",
        "controller-revision-hash",
        "pod-template-hash",
        "statefulset.kubernetes.io/pod-name",
    }
)


def _selects_others(ctx: CheckContext, selector: Any) -> bool:
    """Whether ``selector`` selects the pods of another workload of the set's namespace (any
    of the run's manifests, as the eviction API would count them: a pod with two budgets
    cannot be evicted at all, eviction.go#Create), or of another definition of this set."""
    from ssrisk.inventory import pdb_selects
    from ssrisk.model import K8sObject

    probe = K8sObject(
        data={"apiVersion": "policy/v1", "spec": {"selector": plain(selector)}},
        path=ctx.sts.path,
        line_offset=0,
        namespace=ctx.sts.namespace,
    )
    for kind, at in POD_LABELS.items():  # (the run models StatefulSets: ssrisk fix reads
        # the other kinds in the set's directory, ssrisk.fixer._budget_clash)
        for other in ctx.inventory.of_kind(kind):
            if other is ctx.sts or other.namespace != ctx.sts.namespace:
                continue
            labels = other.get(*at)
            if isinstance(labels, dict) and pdb_selects(probe, labels):
                return True
    return False


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PdbMissing()]
