"""replicas-share-failure-domain: nothing stops several replicas landing on one node or zone."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import HOSTNAME_KEY, POD, ZONE_KEYS, Spread, pinned_hostname, spread_over
from ._sim import timeline_block

#: From this many replicas the set is expected to survive a zone loss as well.
ZONE_MIN_REPLICAS = 3


def _lost(n: int, k: int) -> str:
    """``"2 of 3 replicas (a majority)"`` for ``k`` of ``n`` replicas lost together."""
    majority = k > n // 2
    tail = (
        " (all of them)"
        if k >= n
        else " (a majority: a quorum of the rest is lost)"
        if majority
        else ""
    )
    return f"{min(k, n)} of {n} replicas{tail}"


class ReplicasShareFailureDomain(Rule):
    id = "replicas-share-failure-domain"
    severity = Severity.WARNING
    summary = (
        "no required pod anti-affinity or DoNotSchedule topology spread on kubernetes.io/hostname "
        "(and on zones from 3 replicas): one node or zone failure can take several replicas"
    )
    references = (
        "web: docs/concepts/scheduling-eviction/topology-spread-constraints.md",
        "web: docs/concepts/scheduling-eviction/assign-pod-node.md "
        "(Inter-pod affinity and anti-affinity)",
        "k8s: pkg/scheduler/framework/plugins/interpodaffinity/filtering.go#Filter",
        "k8s: pkg/scheduler/framework/plugins/podtopologyspread/filtering.go#Filter",
        "k8s: pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (system default "
        "constraints are ScheduleAnyway)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        if (
            n < 2 or ctx.is_fragment or pinned_hostname(ctx.sts) is not None
        ):  # node-pinned-storage reports that
            return
        labels = ctx.pod_labels
        host = spread_over(ctx.sts, (HOSTNAME_KEY,), labels)
        zone = spread_over(ctx.sts, ZONE_KEYS, labels)
        if zone.max_per_domain == 1 and zone.path is not None and "podAntiAffinity" in zone.path:
            host = Spread(HOSTNAME_KEY, 1, zone.path, None)  # one per zone is one per node
        problems: list[str] = []
        host_k = host.max_per_domain
        if host_k is None or host_k > 1:
            k = n if host_k is None else min(host_k, n)
            how = (
                "nothing requires one replica per node"
                if host_k is None
                else f"the DoNotSchedule constraint on {HOSTNAME_KEY} allows maxSkew {host_k}"
            )
            if host.soft is not None and host_k is None:
                how += " (a preferred anti-affinity or ScheduleAnyway constraint only ranks nodes)"
            problems.append(f"{how}: one node failure can take {_lost(n, k)}")
        zone_k = zone.max_per_domain
        if n >= ZONE_MIN_REPLICAS and (zone_k is None or zone_k > 1):
            k = n if zone_k is None else min(zone_k, n)
            how = (
                "nothing spreads the replicas over zones (topology.kubernetes.io/zone)"
                if zone_k is None
                else f"the zone constraint allows maxSkew {zone_k}"
            )
            problems.append(f"{how}: one zone failure can take {_lost(n, k)}")
        if not problems:
            return
        sim = ctx.try_simulate("node-loss")
        quoted = ""
        if sim is not None:
            d = sim.to_dict()
            quoted = (
                f"; in the simulation (Kubernetes {ctx.kube_version}, placement "
                f"{d.get('placement') or 'as scheduled'}) node loss made "
                f"{d.get('max_unavailable', '?')} of {n} replicas unavailable at once"
            )
        msg = "; ".join(problems) + quoted
        timeline = "\n" + timeline_block(ctx, sim) if sim is not None else ""
        explanation = f"""
The scheduler only guarantees what filters enforce: a requiredDuringScheduling pod
anti-affinity term (interpodaffinity filtering) or a topologySpreadConstraint with
whenUnsatisfiable: DoNotSchedule (podtopologyspread filtering). A preferred anti-affinity and
ScheduleAnyway constraints, including the cluster's default spreading, only score nodes: when
nodes are short (a small cluster, a drain, a node pool being replaced) the scheduler puts
replicas together, and from then on one node or zone failure takes all of them at once. With
{n} replicas a quorum system needs {n // 2 + 1} alive.
{timeline}
Fix: add to the pod template a required anti-affinity on kubernetes.io/hostname selecting the
pods' own labels, or a topologySpreadConstraint (maxSkew: 1, whenUnsatisfiable: DoNotSchedule)
on kubernetes.io/hostname; from 3 replicas add one on topology.kubernetes.io/zone too.
"""
        host_bad = host_k is None or host_k > 1
        path = (host.soft or host.path) if host_bad else (zone.soft or host.path)
        if path is None:
            spec = ctx.sts.get(*POD)
            path = (*POD, "affinity") if spec and "affinity" in spec else POD
        yield self.finding(ctx, ctx.sts.pos(*path), msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ReplicasShareFailureDomain()]
