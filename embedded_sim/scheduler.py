"""kube-scheduler, reduced to the filters that decide StatefulSet failover.

Filters (pkg/scheduler/framework/plugins/...): NodeUnschedulable, TaintToleration,
VolumeBinding / VolumeZone (PV node affinity), InterPodAffinity (required anti-affinity),
PodTopologySpread (DoNotSchedule), NodeName. Resources are assumed to fit [A].

Initial placement is the *worst* one the hard constraints allow: every replica that may share
the node of the lowest ordinal does, then its zone (so one node or zone failure hits as many
replicas as possible).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cluster import Node, Pod
from .workload import TAINT_UNSCHEDULABLE, SpreadRule

if TYPE_CHECKING:
    from .simulation import Simulation

SRC_SCHEDULE = "pkg/scheduler/schedule_one.go#schedulePod"
SRC_VOLUME = "pkg/scheduler/framework/plugins/volumebinding/volume_binding.go#Filter"
SRC_BIND = "pkg/scheduler/schedule_one.go#bind"


def _domain(rule: SpreadRule, node: Node) -> str:
    return node.name if rule.topology_key == "hostname" else node.zone


def rules_allow(
    rules: tuple[SpreadRule, ...], node: Node, nodes: list[Node], placed: list[Node]
) -> str | None:
    """None if `node` satisfies the hard rules given our pods already on `placed`."""
    for rule in rules:
        dom = _domain(rule, node)
        counts: dict[str, int] = {}
        for n in nodes:
            counts.setdefault(_domain(rule, n), 0)
        for n in placed:
            counts[_domain(rule, n)] = counts.get(_domain(rule, n), 0) + 1
        if rule.kind == "anti-affinity":
            if counts.get(dom, 0) > 0:
                return "node(s) didn't match pod anti-affinity rules"
        else:
            lowest = min(counts.values()) if counts else 0
            if counts.get(dom, 0) + 1 - lowest > rule.max_skew:
                return "node(s) didn't match pod topology spread constraints"
    return None


class Scheduler:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.pending: dict[str, int] = {}  # pod name -> cluster version at last failure

    # --- initial (worst) placement -------------------------------------------------------
    def initial_placement(self, ordinals: list[int]) -> tuple[dict[int, str], str]:
        sim = self.sim
        nodes = [n for n in sim.cluster.nodes.values() if not n.deleted]
        if not nodes or not ordinals:
            return {}, "no pods to place"
        first = nodes[0]
        rules = sim.wl.hard_rules
        out: dict[int, str] = {}
        placed: list[Node] = []
        unplaceable: list[int] = []
        for o in ordinals:
            order = sorted(
                nodes,
                key=lambda n: (n.name != first.name, n.zone != first.zone, nodes.index(n)),
            )
            chosen = None
            if sim.wl.node_name is not None:
                chosen = first
            else:
                for n in order:
                    if rules_allow(rules, n, nodes, placed) is None:
                        chosen = n
                        break
            if chosen is None:
                unplaceable.append(o)
                chosen = order[-1]
            out[o] = chosen.name
            placed.append(chosen)
        by_node: dict[str, list[str]] = {}
        for o, nn in out.items():
            by_node.setdefault(nn, []).append(sim.wl.pod_name(o))
        parts = [
            f"{', '.join(pods)} on {n} ({sim.cluster.nodes[n].zone})" for n, pods in by_node.items()
        ]
        text = "; ".join(parts)
        host_rule = any(r.topology_key == "hostname" for r in rules)
        if sim.wl.node_name is not None:
            text += (
                f". spec.nodeName pins every pod to one node ({sim.wl.node_name!r} -> {first.name})"
            )
        elif len(by_node.get(first.name, [])) > 1:
            text += (
                ". No required podAntiAffinity or DoNotSchedule topologySpreadConstraint on "
                "kubernetes.io/hostname: the worst placement the constraints allow puts "
                f"{len(by_node[first.name])} replicas on the node that fails"
            )
        elif host_rule:
            text += ". Hard hostname spreading keeps replicas on different nodes"
        if unplaceable:
            text += (
                f". {len(unplaceable)} replica(s) cannot satisfy the hard spreading rules in "
                f"a cluster of {len(nodes)} nodes (they would stay Pending; the scenario places "
                "them anyway: give the real cluster's shape with the profile's zones and "
                "nodes-per-zone)"
            )
        return out, text

    # --- runtime scheduling -------------------------------------------------------------
    def enqueue(self, pod: Pod) -> None:
        if self.sim.instant_delete:
            return
        self.sim.loop.after(self.sim.profile.scheduling_s, lambda: self._schedule(pod), "schedule")

    def retry_pending(self) -> None:
        sim = self.sim
        for name, ver in sorted(self.pending.items()):
            pod = sim.cluster.pods.get(name)
            if pod is None or pod.node is not None or pod.terminating:
                self.pending.pop(name, None)
                continue
            if ver != sim.cluster.version:
                self.pending.pop(name, None)
                self.enqueue(pod)

    def feasible(self, pod: Pod) -> tuple[list[Node], dict[str, int]]:
        sim = self.sim
        nodes = [n for n in sim.cluster.nodes.values() if not n.deleted]
        others = [
            sim.cluster.nodes[p.node]
            for p in sim.cluster.pods.values()
            if p is not pod
            and p.node is not None
            and p.node in sim.cluster.nodes
            and not p.terminal
        ]
        reasons: dict[str, int] = {}
        ok: list[Node] = []
        for n in nodes:
            why = self._filter(pod, n, nodes, others)
            if why is None:
                ok.append(n)
            else:
                reasons[why] = reasons.get(why, 0) + 1
        return ok, reasons

    def _filter(self, pod: Pod, n: Node, nodes: list[Node], others: list[Node]) -> str | None:
        sim = self.sim
        tols = sim.wl.tolerations
        if sim.wl.node_name is not None and n.name != nodes[0].name:
            return "node(s) didn't match the requested node name"
        if n.unschedulable and not any(
            t.tolerates(TAINT_UNSCHEDULABLE, "", "NoSchedule") for t in tols
        ):
            return "node(s) were unschedulable"
        for t in n.taints:
            if t.effect in ("NoSchedule", "NoExecute") and not any(
                tol.tolerates(t.key, t.value, t.effect) for tol in tols
            ):
                return f"node(s) had untolerated taint {{{t.key}}}"
        for claim in pod.claims:
            vol = sim.cluster.volumes.get(claim)
            if vol is None:
                continue
            if vol.topology == "zonal" and vol.zone is not None and vol.zone != n.zone:
                return "node(s) had volume node affinity conflict"
            if vol.topology == "local" and vol.node is not None and vol.node != n.name:
                return "node(s) had volume node affinity conflict"
        return rules_allow(sim.wl.hard_rules, n, nodes, others)

    def _schedule(self, pod: Pod) -> None:
        sim = self.sim
        if sim.cluster.pods.get(pod.name) is not pod or pod.node is not None or pod.terminating:
            return
        ok, reasons = self.feasible(pod)
        if not ok:
            total = sum(reasons.values())
            detail = ", ".join(f"{c} {r}" for r, c in sorted(reasons.items()))
            key = detail
            sim.timeline.once(
                f"pending-{pod.uid}-{key}",
                sim.now,
                pod.name,
                "pod-pending",
                f"{pod.name} Pending: 0/{total} nodes are available: {detail}",
                SRC_VOLUME if "volume" in detail else SRC_SCHEDULE,
            )
            self.pending[pod.name] = sim.cluster.version
            return
        # Default scoring spreads pods of one set: least-loaded node, then zone, then order.
        load: dict[str, int] = {}
        zload: dict[str, int] = {}
        for p in sim.cluster.pods.values():
            if p.node is not None and p is not pod and p.node in sim.cluster.nodes:
                load[p.node] = load.get(p.node, 0) + 1
                z = sim.cluster.nodes[p.node].zone
                zload[z] = zload.get(z, 0) + 1
        names = list(sim.cluster.nodes)
        best = min(
            ok,
            key=lambda n: (
                n.ready != "True" or not n.alive,
                load.get(n.name, 0),
                zload.get(n.zone, 0),
                names.index(n.name),
            ),
        )
        pod.node = best.name
        for claim in pod.claims:
            vol = sim.cluster.volumes.get(claim)
            if vol is None:
                continue
            if vol.topology == "zonal" and vol.zone is None:
                vol.zone = best.zone
            if vol.topology == "local" and vol.node is None:
                vol.node = best.name
        sim.record(
            pod.name,
            "pod-scheduled",
            f"{pod.name} scheduled to {best.name} ({best.zone})",
            SRC_BIND,
        )
        sim.changed()
        sim.taints.process_pod(pod, best)
        if sim.cluster.pods.get(pod.name) is pod and not pod.terminating:
            sim.kubelet.on_bound(pod)
