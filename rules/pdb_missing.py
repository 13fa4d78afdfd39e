"""pdb-missing: a replicated StatefulSet without a PodDisruptionBudget."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule


class PdbMissing(Rule):
    id = "pdb-missing"
    severity = Severity.WARNING
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


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PdbMissing()]
