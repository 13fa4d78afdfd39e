"""kube-scheduler, reduced to what decides where a StatefulSet's pods can run.

The filter plugins are one module each in this package, named after the upstream plugin and
run in the upstream order (framework.py): NodeUnschedulable, NodeName, TaintToleration,
NodeAffinity, NodePorts, NodeResourcesFit, VolumeBinding, PodTopologySpread, InterPodAffinity.
A pod no node passes stays Pending with the scheduler's "0/N nodes are available" message.

Initial placement (the steady state every scenario starts from) is the *worst* one the filters
allow: every replica that may share the node of the lowest ordinal does, then its zone, so a
node or zone failure hits as many replicas as the constraints permit. The same constraints are
also used to place the replicas as the default scoring spreads them; when both placements put
the same number of replicas on the failing node (and zone), the numbers are *forced by the
constraints*, otherwise they are the *worst case* (`PlacementFacts`).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from ..budget import filter_pass_steps
from ..cluster import Node, Pod, Volume
from ..result import ClusterShape, PlacementFacts
from ..workload import HOSTNAME_KEY, ZONE_KEYS
from . import (
    inter_pod_affinity,
    node_name,
    node_ports,
    node_resources_fit,
    pod_topology_spread,
    volume_binding,
)
from .framework import FilterContext, OtherPod, plugins, run_filters

if TYPE_CHECKING:
    from ..simulation import Simulation

SRC_SCHEDULE = "pkg/scheduler/schedule_one.go#schedulePod"
SRC_VOLUME = volume_binding.SOURCE
SRC_BIND = "pkg/scheduler/schedule_one.go#bind"

#: Filters that say where a pod may run at all (its pinning), as opposed to room on a node.
_WHERE = ("NodeName", "NodeAffinity", "VolumeBinding")
#: Reasons that mean "this node is down or cordoned", not "the pod's constraints exclude it"
#: (the node's state tells which: a drained node is cordoned, not down).
_NODE_DOWN = ("node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready", "unschedulable")


def named(names: list[str], more: int = 0) -> str:
    """Node names for a verdict: all of them up to 8, else the first 6 and how many more
    (``more`` nodes not named are added to that count)."""
    if len(names) + more <= 8:
        return ", ".join(names)
    return f"{', '.join(names[:6])} and {len(names) - len(names[:6]) + more} more"


class Scheduler:
    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.pending: dict[str, int] = {}  # pod name -> cluster version at last failure
        wl = sim.wl
        spreads = sum(1 for r in wl.hard_rules if r.kind == "spread")
        checks = (
            len(wl.hard_rules)
            - spreads
            + len(wl.node_selector)
            + sum(len(term) for term in wl.node_affinity_terms)
        )
        #: steps of one filter pass over one node for this set's pods (budget.py)
        self.pass_steps = filter_pass_steps(checks, spreads)

    # --- contexts ---------------------------------------------------------------------------
    def _live_nodes(self) -> list[Node]:
        return [n for n in self.sim.cluster.nodes.values() if not n.deleted]

    def _first_node(self) -> str | None:
        wl = self.sim.wl
        if wl.node_name is None:
            return None
        return wl.node_name if wl.node_name in self.sim.cluster.nodes else None

    def context(self, pod: Pod) -> FilterContext:
        """What a scheduling attempt of `pod` sees now."""
        sim = self.sim
        others = [
            OtherPod(p.node, p.terminating)
            for p in sim.cluster.pods.values()
            if p is not pod
            and p.node is not None
            and p.node in sim.cluster.nodes
            and not p.terminal
        ]
        vols = [v for c in pod.claims if (v := sim.cluster.volumes.get(c)) is not None]
        return self._filter_context(self._live_nodes(), others, vols)

    def _filter_context(
        self, nodes: list[Node], others: list[OtherPod], vols: list[Volume]
    ) -> FilterContext:
        """A scheduling attempt's view, with the simulated version's reasons and gates."""
        vd = self.sim.vd
        return FilterContext(
            self.sim.wl,
            nodes,
            others,
            vols,
            self._first_node(),
            volume_conflict_reason=vd.volume_conflict_reason,
            min_domains_on=vd.min_domains_honoured,
            node_inclusion_on=vd.node_inclusion_policies,
        )

    # --- initial placement --------------------------------------------------------------------
    def _place(
        self, ordinals: list[int], choose: Callable[[list[Node], dict[str, int]], Node]
    ) -> dict[int, str | None]:
        """Place `ordinals` one by one with the filters; `choose` picks among feasible nodes
        given the set's pods per node so far."""
        sim = self.sim
        nodes = self._live_nodes()
        placed: dict[int, str | None] = {}
        others: list[OtherPod] = []
        load: dict[str, int] = {}
        for o in ordinals:
            sim.budget.spend(len(nodes) * self.pass_steps)  # a filter pass per node (budget.py)
            ctx = self._filter_context(nodes, list(others), [])
            ok = [n for n in nodes if run_filters(ctx, n) is None]
            if not ok:
                placed[o] = None
                continue
            n = choose(ok, load)
            placed[o] = n.name
            others.append(OtherPod(n.name))
            load[n.name] = load.get(n.name, 0) + 1
        return placed

    def initial_placement(
        self, ordinals: list[int], fault: str | None = None
    ) -> tuple[dict[int, str | None], str]:
        """The worst placement the constraints allow, and its description.

        The worst placement fills the node of the lowest ordinal, then its zone. On the
        assumed cluster every zone and node is alike; on a profile's nodes they are not (a
        zone of 3 nodes beside zones of 1, a pool of larger nodes), so the placement is tried
        from the first node of each kind of node (zone, labels, taints, allocatable) and the
        one that puts most replicas where the scenario's ``fault`` strikes is kept: most in
        the zone for a zone fault, else most on the node."""
        sim = self.sim
        nodes = self._live_nodes()
        if not nodes or not ordinals:
            self.facts = PlacementFacts(0, 0, 0, 0, (), ())
            return {}, "no pods to place"
        index = {n.name: i for i, n in enumerate(nodes)}
        out = self._place(ordinals, self._worst(index, None))
        if not sim.profile.placeholder_names:
            best = self._hits(ordinals, out, fault)
            for start in self._anchors(nodes)[1:]:
                tried = self._place(ordinals, self._worst(index, start))
                if self._hits(ordinals, tried, fault) > best:
                    out, best = tried, self._hits(ordinals, tried, fault)

        zload: dict[str, int] = {}

        def spread(ok: list[Node], load: dict[str, int]) -> Node:
            for z in zload:
                zload[z] = 0
            for name, c in load.items():
                z = sim.cluster.nodes[name].zone
                zload[z] = zload.get(z, 0) + c
            return min(ok, key=lambda n: (load.get(n.name, 0), zload.get(n.zone, 0), index[n.name]))

        alt = self._place(ordinals, spread)
        self.facts = self._facts(ordinals, out, alt)
        return out, self._describe(ordinals, out)

    @staticmethod
    def _worst(
        index: dict[str, int], start: Node | None
    ) -> Callable[[list[Node], dict[str, int]], Node]:
        """The worst placement's choice: the anchor node (``start`` when the first pod may
        use it, else the first node of its zone the pod may use, else the first such node),
        then a node of its zone, then node order."""
        anchor: dict[str, Node] = {}

        def worst(ok: list[Node], load: dict[str, int]) -> Node:
            if "node" not in anchor:
                same = [n for n in ok if start is not None and n.zone == start.zone]
                anchor["node"] = start if start in ok else (same or ok)[0]
            first = anchor["node"]
            return min(
                ok, key=lambda n: (n.name != first.name, n.zone != first.zone, index[n.name])
            )

        return worst

    def _anchors(self, nodes: list[Node]) -> list[Node]:
        """Where the worst placement may start: the first node of each zone, and of each
        size of node (allocatable) in it, that the first pod may use, in node order, at most
        16; a zone made of the same nodes as an earlier one (the same kinds, as many of
        each) fills alike and is not tried."""
        ctx = self._filter_context(nodes, [], [])
        kinds: dict[str, dict[tuple[object, ...], int]] = {}
        for n in nodes:
            labels = tuple(
                sorted(
                    (k, v) for k, v in n.labels.items() if k != HOSTNAME_KEY and k not in ZONE_KEYS
                )
            )
            kind = (labels, tuple((t.key, t.value, t.effect) for t in n.taints), n.allocatable)
            per_zone = kinds.setdefault(n.zone, {})
            per_zone[kind] = per_zone.get(kind, 0) + 1
        signatures: set[tuple[object, ...]] = set()
        alike: set[str] = set()
        for zone, per_kind in kinds.items():
            signature = tuple(sorted(per_kind.items(), key=repr))
            if signature in signatures:
                alike.add(zone)
            signatures.add(signature)
        seen: dict[tuple[object, ...], Node] = {}
        for n in nodes:
            key = (n.zone, n.allocatable)
            if n.zone in alike or key in seen:
                continue
            if run_filters(ctx, n) is None:
                seen[key] = n
        return list(seen.values())[:16]

    def _hits(
        self, ordinals: list[int], placed: dict[int, str | None], fault: str | None
    ) -> tuple[int, int]:
        """(replicas in the zone, on the node) of the lowest placed ordinal for a zone fault,
        else (on the node, in the zone)."""
        on_node, in_zone = self._on_first(ordinals, placed)
        return (in_zone, on_node) if fault == "zone" else (on_node, in_zone)

    def _on_first(self, ordinals: list[int], placed: dict[int, str | None]) -> tuple[int, int]:
        """(replicas on the node, in the zone) of the lowest placed ordinal: what a fault of
        that node or zone takes."""
        nodes = self.sim.cluster.nodes
        first = next((placed[o] for o in ordinals if placed.get(o)), None)
        if first is None:
            return 0, 0
        on_node = sum(1 for o in ordinals if placed.get(o) == first)
        zone = nodes[first].zone
        in_zone = sum(1 for o in ordinals if (n := placed.get(o)) and nodes[n].zone == zone)
        return on_node, in_zone

    def _facts(
        self, ordinals: list[int], worst: dict[int, str | None], spread: dict[int, str | None]
    ) -> PlacementFacts:
        sim = self.sim

        wn, wz = self._on_first(ordinals, worst)
        sn, sz = self._on_first(ordinals, spread)
        ctx = self._filter_context(self._live_nodes(), [], [])
        limits: list[str] = []
        if sim.wl.node_name is not None:
            limits.append(node_name.constraint(ctx))
        if sim.wl.host_ports:
            limits.append(node_ports.constraint(ctx))
        if any(r.kind in ("anti-affinity", "affinity") for r in sim.wl.hard_rules):
            limits.append(inter_pod_affinity.constraint(ctx))
        if any(r.kind == "spread" for r in sim.wl.hard_rules):
            limits.append(pod_topology_spread.constraint(ctx))
        roomiest = node_resources_fit.roomiest(ctx)
        if roomiest is not None and node_resources_fit.per_node(ctx, roomiest) < len(ordinals):
            limits.append(node_resources_fit.constraint(ctx))
        unplaced = tuple(o for o in ordinals if worst.get(o) is None)
        return PlacementFacts(wn, sn, wz, sz, tuple(limits), unplaced, sim.not_simulated)

    def _describe(self, ordinals: list[int], out: dict[int, str | None]) -> str:
        sim = self.sim
        facts = self.facts
        by_node: dict[str, list[str]] = {}
        for o in ordinals:
            n = out.get(o)
            if n is not None:
                by_node.setdefault(n, []).append(sim.wl.pod_name(o))
        parts = [
            f"{', '.join(pods)} on {n} ({sim.cluster.nodes[n].zone_text})"
            for n, pods in by_node.items()
        ]
        if not parts:
            return (
                f"no replica fits a node of the simulated cluster ({self.shape()}); {self._ask()}"
            )
        text = "; ".join(parts)
        if facts.forced_node and facts.forced_zone:
            basis = "forced by the constraints"
        else:
            basis = (
                f"the worst case the constraints allow ({facts.worst_node} on the first node, "
                f"{facts.worst_zone} in its zone; the scheduler's spreading would put "
                f"{facts.spread_node} and {facts.spread_zone})"
            )
        text += f". Placement: {basis}"
        if facts.limits:
            text += f": {'; '.join(facts.limits)}"
        elif facts.worst_node > 1:
            text += (
                ": no required podAntiAffinity, hostPort or DoNotSchedule topologySpreadConstraint "
                "on kubernetes.io/hostname keeps replicas apart"
            )
        if facts.not_simulated:
            text += f"; not simulated: {'; '.join(facts.not_simulated)}"
        if facts.unplaced:
            names = ", ".join(sim.wl.pod_name(o) for o in facts.unplaced)
            text += (
                f". {names} fit(s) no node of the simulated cluster ({self.shape()}) and stay(s) "
                f"Pending; {self._ask()}"
            )
        return text

    def _ask(self) -> str:
        """What to do when replicas fit no node: describe the cluster, or, when the profile
        lists its nodes, look at what the pods ask of them."""
        if not self.sim.profile.placeholder_names:
            return (
                "on the profile's nodes that is what the scheduler does: check the pods' "
                "requests, tolerations and node selection against the node pools"
            )
        return (
            "give the real cluster's shape with the profile's zones, nodes-per-zone, "
            "node-labels, node-taints and node-allocatable, or its nodes (ssrisk profile)"
        )

    def shape(self) -> str:
        """'3 zones × 2 nodes' of the live nodes."""
        return self.cluster_shape().text

    def cluster_shape(self) -> ClusterShape:
        """The zones, nodes per zone (the largest zone) and their text, of the live nodes."""
        zones = [n.zone for n in self._live_nodes()]
        nodes = self.sim.cluster.nodes
        for fold in self.sim.folds:  # the nodes simulated ones stand for, unless deleted too
            if not all(nodes[k].deleted for k in fold.kept if k in nodes):
                zones += [fold.zone] * fold.dropped
        return ClusterShape.of(zones, self.sim.profile.cluster_source)

    # --- runtime scheduling -------------------------------------------------------------------
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
        """Nodes that pass every filter for `pod`, and the count of each rejection reason."""
        ctx = self.context(pod)
        self.sim.budget.spend(len(ctx.nodes) * self.pass_steps)
        reasons: dict[str, int] = {}
        ok: list[Node] = []
        for n in ctx.nodes:
            res = run_filters(ctx, n)
            if res is None:
                ok.append(n)
            else:
                reasons[res[1]] = reasons.get(res[1], 0) + 1
        for proxy, dropped in self._fold_proxies(ctx):
            res = run_filters(ctx, proxy)
            if res is not None:  # the nodes it stands for are refused for the same reason
                reasons[res[1]] = reasons.get(res[1], 0) + dropped
        return ok, reasons

    def _fold_proxies(self, ctx: FilterContext) -> list[tuple[Node, int]]:
        """For each group of folded nodes (nodes.fold_nodes), a simulated node that stands for
        the dropped ones, and how many they are: a node of the group that holds none of the
        set's pods and, unless the fault took the whole group, is not one the fault took."""
        out: list[tuple[Node, int]] = []
        nodes = self.sim.cluster.nodes
        failed = set(self.sim.failed_nodes)
        for fold in self.sim.folds:
            members = [nodes[n] for n in fold.kept if n in nodes and not nodes[n].deleted]
            empty = [n for n in members if ctx.count_on(n.name) == 0]
            healthy = [n for n in empty if n.name not in failed]
            whole = all(n.name in failed for n in members)
            pick = healthy or (empty if whole else [])
            if pick:
                out.append((pick[0], fold.dropped))
        return out

    def pending_reason(self, pod: Pod) -> str:
        """Why no node takes `pod`, in words, for verdicts; empty when some node fits.

        First the constraints that say where the pod may run at all (NodeName, NodeAffinity,
        VolumeBinding: its pinning), then, for the nodes those leave, what rules each out
        (room: ports, resources, spreading, pod (anti-)affinity, taints) and which are down.
        """
        ctx = self.context(pod)
        self.sim.budget.spend(len(ctx.nodes) * self.pass_steps)
        where = [p for p in plugins() if p.NAME in _WHERE]
        pinned_by: list[ModuleType] = []
        down: list[str] = []
        cordoned: list[str] = []  # up, but spec.unschedulable (a drain's node)
        by_plugin: dict[str, list[str]] = {}
        # folded nodes (nodes.fold_nodes) are counted with the node that stands for them
        stands_for = {proxy.name: dropped for proxy, dropped in self._fold_proxies(ctx)}
        more: dict[str, int] = {}
        for n in ctx.nodes:
            out = next((p for p in where if p.filter(ctx, n) is not None), None)
            if out is not None:
                if out not in pinned_by:
                    pinned_by.append(out)
                continue
            res = run_filters(ctx, n)
            if res is None:
                return ""
            bucket = res[0]
            if any(k in res[1] for k in _NODE_DOWN):
                up = n.alive and n.ready == "True" and not n.deleted
                bucket = "cordoned" if up and n.unschedulable else "down"
            listed_in = {"down": down, "cordoned": cordoned}.get(bucket)
            if listed_in is None:
                listed_in = by_plugin.setdefault(bucket, [])
            listed_in.append(n.name)
            more[bucket] = more.get(bucket, 0) + stands_for.get(n.name, 0)
        nodes = self.sim.cluster.nodes
        down += [n.name for n in nodes.values() if n.deleted]
        more["down"] = more.get("down", 0) + sum(
            f.dropped for f in self.sim.folds if all(nodes[k].deleted for k in f.kept if k in nodes)
        )
        parts = [p.constraint(ctx) for p in sorted(pinned_by, key=where.index)]
        for plugin in plugins():
            names = by_plugin.get(plugin.NAME)
            if names:
                listed = named(names, more.get(plugin.NAME, 0))
                parts.append(f"{listed}: {plugin.constraint(ctx)}")
        for state, names in (("cordoned", cordoned), ("down", down)):
            if names:
                verb = "is" if len(names) + more.get(state, 0) == 1 else "are"
                parts.append(f"{named(names, more.get(state, 0))} {verb} {state}")
        if not parts:
            return "no node is left"
        return "; ".join(parts[:-1]) + (", and " if len(parts) > 1 else "") + parts[-1]

    def _schedule(self, pod: Pod) -> None:
        sim = self.sim
        if sim.cluster.pods.get(pod.name) is not pod or pod.node is not None or pod.terminating:
            return
        ok, reasons = self.feasible(pod)
        if not ok:
            self.record_pending(pod, reasons)
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
        self.bind(pod, best)
        sim.taints.process_pod(pod, best)
        if sim.cluster.pods.get(pod.name) is pod and not pod.terminating:
            sim.kubelet.on_bound(pod)

    def record_pending(self, pod: Pod, reasons: dict[str, int]) -> None:
        sim = self.sim
        total = sum(reasons.values())
        detail = ", ".join(f"{c} {r}" for r, c in sorted(reasons.items()))
        sim.timeline.once(
            f"pending-{pod.uid}-{detail}",
            sim.now,
            pod.name,
            "pod-pending",
            f"{pod.name} Pending: 0/{total} nodes are available: {detail}",
            SRC_VOLUME if "volume" in detail else SRC_SCHEDULE,
        )
        self.pending[pod.name] = sim.cluster.version

    def bind(self, pod: Pod, node: Node, record: bool = True) -> None:
        """Bind `pod` to `node`; claims provisioned on first use take the node's zone (zonal) or
        the node itself (local), as WaitForFirstConsumer provisioning does."""
        sim = self.sim
        pod.node = node.name
        for claim in pod.claims:
            vol = sim.cluster.volumes.get(claim)
            if vol is None:
                continue
            if vol.topology == "zonal" and vol.zone is None:
                vol.zone = node.zone
            if vol.topology == "local" and vol.node is None:
                vol.node = node.name
        if record:
            sim.record(
                pod.name,
                "pod-scheduled",
                f"{pod.name} scheduled to {node.name} ({node.zone_text})",
                SRC_BIND,
            )
            sim.changed()
