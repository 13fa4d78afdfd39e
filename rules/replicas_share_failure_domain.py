"""replicas-share-failure-domain: nothing stops several replicas landing on one node or zone.

The static numbers are the most replicas the scheduler's filters let into one node or zone
(k8s: pkg/scheduler/framework/plugins/interpodaffinity/filtering.go#Filter and
podtopologyspread/filtering.go#Filter); the simulated ones come from the simulator's worst
placement on the cluster profile's nodes. The message gives both and says why they differ.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import msgspec
from ssrisk.embedded_sim import ClusterShape, ScenarioResult

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Position, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule

from ._cluster import MAX_PODS_SOURCE, max_pods_per_node, min_domains_honoured
from ._podspec import (
    HOSTNAME_KEY,
    POD,
    ZONE_KEYS,
    Spread,
    colocation_path,
    host_port_path,
    pinned_hostname,
    selects,
    set_spec,
    spread_over,
    template,
)
from ._quorum import allowed_down, is_quorum
from ._sim import timeline_block
from ._text import paragraph

#: The longest one-line message (details go to the explanation).
MAX_MESSAGE_CHARS = 160
#: From this many replicas the set is expected to survive a zone loss as well.
ZONE_MIN_REPLICAS = 3

_COUNT = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _lost(n: int, k: int) -> str:
    """``"2 of 3 replicas (a majority)"`` for ``k`` of ``n`` replicas lost together."""
    k = min(k, n)
    if k >= n:
        tail = " (all of them)"
    elif k > n // 2:
        tail = " (a majority: a quorum of the rest is lost)"
    else:
        tail = ""
    return f"{k} of {n} replicas{tail}"


def _word(n: int) -> str:
    return _COUNT[n] if 0 <= n < len(_COUNT) else str(n)


def _zones(low: int, high: int) -> str:
    """``"one zone"``, ``"two zones"``, ``"one or two zones"``, ``"two to four zones"``."""
    if low == high:
        return f"{_word(low)} zone{'s' if low != 1 else ''}"
    joiner = " or " if high == low + 1 else " to "
    return f"{_word(low)}{joiner}{_word(high)} zones"


def per_node_cap(n: int, host: Spread) -> int:
    """Most replicas on one node allowed by the hostname constraint alone, in a cluster with at
    least ``n`` nodes: 1 for a required anti-affinity, ``maxSkew`` for a DoNotSchedule spread
    (some node still holds none, so the global minimum is 0), ``n`` without either."""
    return n if host.max_per_domain is None else min(host.max_per_domain, n)


def per_zone_cap(n: int, zone: Spread, zones: int, min_domains_on: bool) -> int:
    """Most of ``n`` replicas the zone constraint lets into one zone when the Nodes the pods
    may use (their node affinity, carrying the zone label) are in ``zones`` zones.

    PodTopologySpread only counts domains that have such Nodes
    (podtopologyspread/filtering.go#calPreFilterState) and admits a node when
    ``matching pods in its zone + 1 - global minimum <= maxSkew``; while fewer than ``minDomains``
    zones exist the global minimum is taken as 0 (#minMatchNum; minDomains is honoured from 1.27).
    A zone reaches ``M`` replicas only if every other zone then holds at least ``M - maxSkew``,
    so ``M - 1 + (zones - 1) * (M - maxSkew) <= n - 1``; the largest such ``M`` (and at least
    ``maxSkew``, reachable while other zones are empty) is the cap.
    """
    k = zone.max_per_domain
    if k is None:
        return n
    if zone.anti:
        return min(1, n)
    m = zone.min_domains if min_domains_on else 1
    if zones < m:
        return min(k, n)
    return min(n, max(k, (n + (zones - 1) * k) // zones))


def _cluster_shape(nodes: Sequence[Any]) -> tuple[int, int, str]:
    """``(zones, most nodes in one zone, "3 zones × 2 nodes")`` of the profile's nodes."""
    shape = ClusterShape.of(str(getattr(node, "zone", "")) for node in nodes)
    return shape.zones, shape.nodes_per_zone, shape.text


def _simulated_shape(ctx: CheckContext) -> tuple[int, int, str] | None:
    """The shape the simulation used (it may grow the assumed shape to hold the replicas)."""
    sim = ctx.try_simulate("node-loss")
    shape = sim.cluster_shape if sim is not None else None
    if shape is None:
        return None
    return shape.zones, shape.nodes_per_zone, shape.text


def _placement_limits(sim: ScenarioResult) -> list[str]:
    """The constraints that bound the simulated placement, in words."""
    basis = sim.placement_basis
    return list(basis.limits) if basis is not None else []


def _allowed(ctx: CheckContext, scenario: str, n: int, quorum: bool) -> int:
    """Replicas the scenario's objective lets go down at once (the default minority when the
    objective leaves max-unavailable unset)."""
    value = ctx.objectives[scenario].max_unavailable
    return allowed_down(ctx, value, n)


def _soft(spread: Spread) -> str:
    """``"anti-affinity"`` or ``"spread"``: what kind of preferred term ``spread.soft`` is."""
    return (
        "anti-affinity"
        if spread.soft is not None and "podAntiAffinity" in spread.soft
        else ("spread")
    )


def _cause(host: Spread, zone: Spread, host_bad: bool, zone_bad: bool) -> str:
    """What lets replicas share a node or zone, in a few words (a preferred term is named as
    such: it only scores nodes, interpodaffinity/scoring.go and podtopologyspread/scoring.go)."""
    if host_bad and zone_bad and host.max_per_domain is None and zone.max_per_domain is None:
        if host.soft is not None and zone.soft is not None:
            return f"the hostname {_soft(host)} and zone {_soft(zone)} are only preferred"
        if host.soft is not None:
            return f"the hostname {_soft(host)} is only preferred and nothing spreads zones"
        if zone.soft is not None:
            return f"nothing keeps replicas on separate nodes; the zone {_soft(zone)} is preferred"
        return "nothing keeps replicas on separate nodes or zones"
    if host_bad:
        if host.max_per_domain is not None:
            return f"the hostname spread allows maxSkew {host.max_per_domain}"
        if host.soft is not None:
            return f"the hostname {_soft(host)} is only preferred"
        if zone.max_per_domain is not None:
            return "nothing keeps replicas of one zone on separate nodes"
        return "nothing requires one replica per node"
    if zone.max_per_domain is not None:
        return f"the zone spread allows maxSkew {zone.max_per_domain}"
    if zone.soft is not None:
        return f"the zone {_soft(zone)} is only preferred"
    return "nothing spreads replicas over zones"


def _wrong_selector(ctx: CheckContext, spread: Spread) -> tuple[str, tuple[str | int, ...]] | None:
    """A required anti-affinity term or DoNotSchedule spread constraint on the topology of
    ``spread`` that does not count the set's own pods, as ``(cause, field)``: its labelSelector
    selects none of the pod's labels, or the term's ``namespaces`` leave out the set's own
    (types.go#newAffinityTerm). Written to keep the replicas apart, it counts other pods
    (interpodaffinity/filtering.go#Filter and podtopologyspread/filtering.go#Filter match the
    selector against existing pods)."""
    keys = ZONE_KEYS if spread.key in ZONE_KEYS else (HOSTNAME_KEY,)
    labels = ctx.pod_labels
    model = template(ctx.sts)
    own = ctx.sts.namespace or "default"
    for term in model.anti_affinity_required:
        if term.topology_key not in keys or term.selects_own_pods(labels, own):
            continue
        if selects(term.label_selector, labels):  # the namespaces leave the set's own out
            listed = ", ".join(term.namespaces)
            cause = f"the required podAntiAffinity counts only pods in {listed}, not {own}"
            return cause, (*term.path, "namespaces")
        cause = "the required podAntiAffinity selects none of the pod's labels"
        return cause, (*term.path, "labelSelector")
    for c in model.spread_constraints:
        if c.topology_key in keys and c.hard and not selects(c.label_selector, labels):
            cause = "the topologySpreadConstraint selects none of the pod's labels"
            return cause, (*c.path, "labelSelector")
    return None


class _OtherKey(msgspec.Struct, frozen=True):
    """A required podAntiAffinity over the set's own pods on a topology key other than the
    hostname and zone keys (a rack label): ``carried`` when every node of the profile carries
    the key, so the term admits one replica per node (interpodaffinity/filtering.go
    #satisfyPodAntiAffinity: a node without the label is not constrained), and then
    ``zone_cap``, the most values of the key among one zone's nodes."""

    key: str
    path: tuple[str | int, ...]
    carried: bool
    zone_cap: int

    def zone_claim(self, n: int) -> str:
        """What one zone failure can take when the values of the key per zone bound it."""
        return (
            f"the required podAntiAffinity on {self.key} allows one replica per value, and a "
            f"zone of the profile has {self.zone_cap} values: one zone failure can take up "
            f"to {_lost(n, self.zone_cap)}"
        )

    @property
    def not_simulated(self) -> str:
        return f"the podAntiAffinity on {self.key} is not simulated (no node has the label)"


def _host_spread(
    ctx: CheckContext, n: int, labels: Mapping[str, Any]
) -> tuple[Spread, tuple[str | int, ...] | None, _OtherKey | None]:
    """What limits replicas per node: the hostname constraint, a hostPort (NodePorts admits
    one pod of the set per node, like a required anti-affinity) or a required anti-affinity on
    another key every node carries; the required pod affinity that co-locates them (none with
    a hostPort: the hostPort cap wins); and that other-key anti-affinity."""
    host = spread_over(ctx.sts, (HOSTNAME_KEY,), labels)
    ports = host_port_path(ctx.sts)
    if ports is not None and (host.max_per_domain is None or host.max_per_domain > 1):
        host = Spread(HOSTNAME_KEY, 1, ports, None, 1, True)
    colocated = colocation_path(ctx.sts, labels) if ports is None else None
    other = _other_key_anti(ctx, labels)
    if other is not None and other.carried and (host.max_per_domain or n) > 1:
        # every node carries the key: one replica per value is at most one per node
        host = Spread(other.key, 1, other.path, None, 1, True)
    return host, colocated, other


def _on_profile_nodes(
    ctx: CheckContext, other: _OtherKey | None, node_worst: int, zone_worst: int
) -> tuple[int, int]:
    """The node and zone loss worst cases on the profile's nodes: a zone holds at most one
    replica per value of an other-key anti-affinity's key there; and when the profile lists
    the cluster's own nodes, the replicas the simulated node-loss and zone-loss found on the
    failed nodes (the worst placement the filters allow on them), where simulated."""
    if other is not None and other.carried:
        zone_worst = min(zone_worst, other.zone_cap)
    if ctx.profile_setting("placeholder_names") is not False:
        return node_worst, zone_worst
    for scenario in ("node-loss", "zone-loss"):
        sim = ctx.try_simulate(scenario)
        if sim is None:
            continue
        if scenario == "node-loss":
            node_worst = min(node_worst, sim.replicas_on_failed_nodes)
        else:
            zone_worst = min(zone_worst, sim.replicas_on_failed_nodes)
    return node_worst, zone_worst


def _other_key_anti(ctx: CheckContext, labels: Mapping[str, Any]) -> _OtherKey | None:
    """The first required podAntiAffinity on another topology key (:class:`_OtherKey`),
    judged on the nodes of the profile the pods may use (the simulator's nodes, with their
    labels and taints: embedded_sim/nodes.py#build_nodes, #pod_may_use)."""
    from ssrisk.embedded_sim import ClusterProfile
    from ssrisk.embedded_sim.nodes import build_nodes, pod_may_use
    from ssrisk.embedded_sim.workload import parse_statefulset

    own = ctx.sts.namespace or "default"
    for term in template(ctx.sts).anti_affinity_required:
        key = term.topology_key
        if not key or key == HOSTNAME_KEY or key in ZONE_KEYS:
            continue
        if not term.selects_own_pods(labels, own):
            continue
        wl = parse_statefulset(ctx.sts.data)
        built, _ = build_nodes(ctx.profile or ClusterProfile(), wl)
        by_zone: dict[str, set[str]] = {}
        for node in built:
            if not pod_may_use(wl, node):
                continue
            if key not in node.labels:
                return _OtherKey(key, term.path, False, 0)
            by_zone.setdefault(node.zone, set()).add(node.labels[key])
        cap = max((len(v) for v in by_zone.values()), default=0)
        return _OtherKey(key, term.path, bool(by_zone), cap)
    return None


class ReplicasShareFailureDomain(Rule):
    id = "replicas-share-failure-domain"
    severity = Severity.WARNING
    fix_scenarios = ("node-loss", "zone-loss", "node-drain")
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
        "k8s: pkg/scheduler/framework/plugins/podtopologyspread/filtering.go#calPreFilterState "
        "(only zones with Nodes the pod may use are domains; minDomains)",
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
        host, colocated, other = _host_spread(ctx, n, labels)
        zone = spread_over(ctx.sts, ZONE_KEYS, labels)
        md_on = min_domains_honoured(ctx)
        sim_zones, sim_nodes_per_zone, shape = _cluster_shape(ctx.profile_setting("nodes"))
        sim_shape = _simulated_shape(ctx)
        if sim_shape is not None:
            sim_zones, sim_nodes_per_zone, shape = sim_shape
        h_cap = per_node_cap(n, host)
        quorum = is_quorum(ctx)
        max_pods = max_pods_per_node(ctx)

        def node_cap(zones: int) -> int:
            return min(h_cap, per_zone_cap(n, zone, zones, md_on), max_pods)

        fewest = max(1, zone.min_domains if md_on else 1)  # zone count of the worst case
        node_worst = min(n, max_pods) if colocated is not None else node_cap(fewest)
        # the kubelet's pod limit, not the manifest, is what caps a node loss
        pods_capped = (
            node_worst
            == max_pods
            < min(n, h_cap if colocated is None else n, per_zone_cap(n, zone, fewest, md_on))
        )
        zone_worst = per_zone_cap(n, zone, sim_zones, md_on)
        node_worst, zone_worst = _on_profile_nodes(ctx, other, node_worst, zone_worst)
        node_ok = _allowed(ctx, "node-loss", n, quorum)
        zone_ok = _allowed(ctx, "zone-loss", n, quorum)
        host_bad = node_worst > max(1, node_ok)
        zone_bad = (
            n >= ZONE_MIN_REPLICAS
            and not zone.anti
            and (zone.max_per_domain is None or zone.max_per_domain > 1)
            and zone_worst > max(zone_ok, -(-n // max(sim_zones, 1)))
        )
        if not host_bad and not zone_bad:
            return

        claims: list[str] = []
        sims: list[str] = []
        took: list[int] = []  # how many each simulated loss took
        # when the simulation took fewer than the worst case, what the worst case needs
        # (so the one-line message never states two figures for one loss without a reason)
        node_if = zone_if = ""
        timelines: list[Any] = []  # the results whose timelines the explanation quotes
        simulated: dict[str, _Simulated | None] = {}  # the simulated losses, node then zone
        placement = ""
        if host_bad:
            if colocated is not None:
                claims.append(
                    f"a required pod affinity on {HOSTNAME_KEY} puts every replica on the node "
                    f"of the first one: one node failure takes {_lost(n, n)}"
                )
            else:
                claims.append(self._node_claim(n, host, zone, node_cap, fewest))
            node_sim = _node_simulated(ctx, n, node_worst, node_cap, sim_zones, fewest)
            node_if = node_sim.condition if node_sim is not None else ""
            simulated["node"] = node_sim
        if zone_bad and other is not None and other.carried and zone_worst == other.zone_cap:
            claims.append(other.zone_claim(n))
        elif zone_bad:
            claims.append(self._zone_claim(n, h_cap, zone, sim_zones, md_on))
            zone_sim = _zone_simulated(ctx, n, zone_worst, h_cap, sim_nodes_per_zone)
            zone_if = zone_sim.condition if zone_sim is not None else ""
            simulated["zone"] = zone_sim
        for found in filter(None, simulated.values()):  # (node loss first, then zone loss)
            sims.append(found.text)
            took.append(found.took)
            timelines.append(found.result)
            placement = placement or found.result.placement

        head, at = self._head(ctx, colocated, host, zone, host_bad, zone_bad)
        if other is not None and not other.carried:
            head, at = other.not_simulated, ctx.sts.pos(*other.path)
            claims.append(f"{other.not_simulated}; give the nodes' labels in the profile")
        cap = f" (at most {max_pods} pods a node)" if pods_capped and not node_if else ""
        msg = _summary(
            head, n, host_bad, zone_bad, (node_worst, node_if, cap), (zone_worst, zone_if)
        )
        if pods_capped and host_bad:
            claims.append(_pods_cap_claim(max_pods, n))
        detail = _detail(ctx, claims, sims, shape)
        objective = _objective_sentence(n, node_ok, zone_ok, quorum)
        worst = (node_worst if host_bad else None, zone_worst if zone_bad else None)
        quoted = (sim_zones, sim_nodes_per_zone) if took else None
        facts = _facts(n, worst, max_pods if cap else None, (host, zone), simulated, quoted)

        def explanation() -> str:
            return self._explanation(ctx, n, shape, placement, timelines, detail, objective)

        yield self.finding(ctx, at, msg, explanation, facts=facts)

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """Spread the pods with DoNotSchedule topology spread constraints (maxSkew 1) over
        zones, hosts, or both, as the finding needs: the scheduler then refuses a second pod
        in a domain while another has none (podtopologyspread/filtering.go#Filter).
        Smallest first: the one domain the finding names, then both."""
        selector = (ctx.sts.data.get("spec") or {}).get("selector") or {}
        labels = selector.get("matchLabels") if isinstance(selector, Mapping) else None
        if not isinstance(labels, Mapping) or not labels:
            return ()  # (a selector by expressions only: nothing simple to copy)
        pod_spec = ((ctx.sts.data.get("spec") or {}).get("template") or {}).get("spec") or {}
        existing = (
            pod_spec.get("topologySpreadConstraints") if isinstance(pod_spec, Mapping) else None
        )
        have = list(existing) if isinstance(existing, list) else []
        path = ("spec", "template", "spec", "topologySpreadConstraints")

        zone, host = "topology.kubernetes.io/zone", "kubernetes.io/hostname"

        def spread(*keys: str) -> Remedy | None:
            # a constraint of the domain that is only preferred becomes required; else one is
            # added (the API server refuses two of one topologyKey and whenUnsatisfiable:
            # validation.go#validateTopologySpreadConstraints)
            added, required = [], []
            for key in keys:
                same = [
                    i
                    for i, c in enumerate(have)
                    if isinstance(c, Mapping) and c.get("topologyKey") == key
                ]
                if not same:
                    added.append(
                        {
                            "maxSkew": 1,
                            "topologyKey": key,
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": {"matchLabels": dict(labels)},
                        }
                    )
                elif have[same[0]].get("whenUnsatisfiable") == "ScheduleAnyway":
                    required.append(Edit((*path, same[0], "whenUnsatisfiable"), "DoNotSchedule"))
                # (else required already: the shape's other domains are the change)
            if not added and not required:
                return None
            words = " and ".join(WORDS[key] for key in keys)
            if required and not added:
                summary = (
                    f"make the spread over {words} required (whenUnsatisfiable: DoNotSchedule)"
                )
            else:
                summary = (
                    f"spread the pods over {words} (topologySpreadConstraints, maxSkew 1, "
                    "DoNotSchedule)"
                )
            n = ctx.replicas
            caution = (
                "a pod template change: every pod is replaced once, in a rolling update; a "
                "pod whose volume is pinned to a zone the new spread refuses stays Pending, "
                "so check where the pods and their volumes are before applying it"
            )
            if host in keys:
                caution += (
                    f"; it needs {n} schedulable nodes (a tainted or cordoned node still "
                    "counts as a domain: nodeTaintsPolicy Ignore)"
                )
            advice = zone in keys and not zones_known
            if advice:
                caution += (
                    "; a node without the topology.kubernetes.io/zone label refuses these "
                    "pods, so state the cluster's zones in the profile (ssrisk profile) to "
                    "have ssrisk fix apply it"
                )
            # (the list is appended to first: an item's index names the list as written)
            appended = (Edit(path, [*have, *added]),) if added else ()
            return Remedy(summary, (*appended, *required), caution, advice=advice)

        # A required zone spread refuses every node without the zone label (a single-zone or
        # bare-metal cluster: podtopologyspread/filtering.go#Filter, "missing required
        # label"), so it is applied only where the cluster profile states the zones; on the
        # assumed cluster it is advice.
        zones_known = ctx.profile is not None and ctx.profile.cluster_source != "assumed"
        if is_quorum(ctx):  # (a quorum store keeps members apart on every cluster shape)
            shapes: tuple[tuple[str, ...], ...] = ((host, zone),)
        elif "node_loss_takes" not in finding.facts or "zone_loss_takes" in finding.facts:
            # (the hosts are kept apart already, or a host spread alone leaves the zones)
            shapes = ((zone,), (host, zone))
        else:
            shapes = ((host,), (zone,), (host, zone))
        return tuple(r for r in (spread(*shape) for shape in shapes) if r is not None)

    def _head(
        self,
        ctx: CheckContext,
        colocated: tuple[str | int, ...] | None,
        host: Spread,
        zone: Spread,
        host_bad: bool,
        zone_bad: bool,
    ) -> tuple[str, Position]:
        """The cause the message starts with, and the field it points at."""
        wrong = _wrong_selector(ctx, host if host_bad else zone)
        if colocated is not None and host_bad:
            return "a required pod affinity puts every replica on one node", ctx.sts.pos(*colocated)
        if wrong is not None:
            cause, path = wrong
            return cause, ctx.sts.pos(*path)
        head = _cause(host, zone, host_bad, zone_bad)
        return head, ctx.sts.pos(*self._position(ctx, host, zone, host_bad))

    @staticmethod
    def _node_claim(
        n: int, host: Spread, zone: Spread, node_cap: Callable[[int], int], fewest: int
    ) -> str:
        """What one node failure can take, by the number of zones when a zone constraint
        limits it."""
        if host.max_per_domain is None:
            how = "nothing requires one replica per node"
            if host.soft is not None:
                how += " (a preferred anti-affinity or ScheduleAnyway constraint only ranks nodes)"
        else:
            how = (
                f"the DoNotSchedule constraint on {HOSTNAME_KEY} allows maxSkew "
                f"{host.max_per_domain} (with at least {n} nodes)"
            )
        worst = node_cap(fewest)
        if zone.max_per_domain is None or node_cap(max(n, fewest)) == worst:
            return f"{how}: one node failure can take up to {_lost(n, worst)}"
        groups: list[tuple[int, int, int]] = []  # (first zone count, last zone count, cap)
        for zones in range(fewest, max(n, fewest) + 1):
            cap = node_cap(zones)
            if groups and groups[-1][2] == cap:
                groups[-1] = (groups[-1][0], zones, cap)
            else:
                groups.append((zones, zones, cap))
            if cap <= 1 or len(groups) > 4:
                break
        groups = groups[:4]
        text = (
            f"{how}, and the DoNotSchedule zone constraint (maxSkew {zone.max_per_domain}) "
            "counts only zones that have Nodes for the pods when a replica is scheduled, with "
            "replicas of one zone free to share a node: one node failure can take up to "
            f"{_lost(n, worst)} when those Nodes are in {_zones(groups[0][0], groups[0][1])}"
        )
        for i, (low, high, cap) in enumerate(groups[1:], start=1):
            last = i == len(groups) - 1
            span = f"{_word(low)} zones or more" if last and cap <= 1 else _zones(low, high)
            text += f", {_lost(n, cap).replace(' replicas', '')} with {span}"
        return text

    @staticmethod
    def _zone_claim(n: int, h_cap: int, zone: Spread, sim_zones: int, md_on: bool) -> str:
        """What one zone failure can take in a cluster with enough nodes per zone."""
        if zone.max_per_domain is None:
            need = -(-n // h_cap)
            room = f"in a zone with {need} or more nodes " if need > 1 else ""
            return (
                "nothing spreads the replicas over zones (topology.kubernetes.io/zone): "
                f"{room}one zone failure can take up to {_lost(n, n)}"
            )
        cap = per_zone_cap(n, zone, sim_zones, md_on)
        return (
            f"the DoNotSchedule zone constraint allows maxSkew {zone.max_per_domain}: with "
            f"{_word(sim_zones)} zones one zone failure can take up to {_lost(n, cap)}"
        )

    @staticmethod
    def _position(
        ctx: CheckContext, host: Spread, zone: Spread, host_bad: bool
    ) -> tuple[str | int, ...]:
        path = (host.soft or host.path) if host_bad else (zone.soft or zone.path or host.path)
        if path is None:
            path = (*POD, "affinity") if "affinity" in set_spec(ctx.sts).pod_fields else POD
        return path

    @staticmethod
    def _explanation(
        ctx: CheckContext,
        n: int,
        shape: str,
        placement: str,
        timelines: list[Any],
        detail: str,
        objective: str,
    ) -> str:
        found = paragraph(f"In detail: {detail}. {objective}")
        # only a quorum system stops below a majority (the objective sentence says which)
        quorum_note = f" With {n} members it needs {n // 2 + 1} alive." if is_quorum(ctx) else ""
        rules = paragraph(
            """The scheduler only guarantees what filters enforce: a requiredDuringScheduling pod
anti-affinity term (interpodaffinity filtering) or a topologySpreadConstraint with
whenUnsatisfiable: DoNotSchedule (podtopologyspread filtering). A preferred anti-affinity and
ScheduleAnyway constraints, including the cluster's default spreading, only score nodes: when
nodes are short (a small cluster, a drain, a node pool being replaced) the scheduler puts
replicas together and never moves them apart again."""
        )
        spread = paragraph(
            """A DoNotSchedule constraint admits a node when the matching pods in its domain, plus
the new one, exceed the smallest count of any domain by at most maxSkew. Domains are only the
zones (or nodes) that have a Node the pod may use when it is scheduled, and Terminating pods
are not counted (podtopologyspread/filtering.go#calPreFilterState, common.go). So a zone
constraint keeps one replica per zone only while every zone has Nodes; when a zone's nodes
are gone (a node pool replaced or scaled to zero) replacements pile into the other zones and
stay there. minDomains (honoured from Kubernetes 1.27) makes the scheduler treat missing zones
as empty, leaving such pods Pending instead."""
        )
        sim = paragraph(
            f"""The simulation uses the cluster profile's nodes ({shape}) and places the
replicas as badly as the hard constraints allow{f" ({placement})" if placement else ""}.
Its numbers can be lower than the worst case above because it has a fixed number of zones
and of nodes per zone.{quorum_note}"""
        )
        fix = paragraph(
            """Fix: add to the pod template a required anti-affinity on kubernetes.io/hostname
selecting the pods' own labels, or a topologySpreadConstraint (maxSkew: 1, whenUnsatisfiable:
DoNotSchedule) on kubernetes.io/hostname; from 3 replicas add one on topology.kubernetes.io/zone
too (with minDomains set to the number of zones if a Pending replacement is better than two
replicas in one zone)."""
        )
        blocks = "".join("\n" + timeline_block(ctx, t) for t in timelines)
        return f"{found}\n\n{rules}\n\n{spread}\n\n{sim}\n{blocks}\n{fix}\n"


#: How a remedy's summary names a spread's topology key.
WORDS = {"topology.kubernetes.io/zone": "zones", "kubernetes.io/hostname": "nodes"}


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ReplicasShareFailureDomain()]


class _Simulated(msgspec.Struct, frozen=True):
    """What the simulation of one loss adds to the finding: the sentence of the explanation,
    how many replicas it took, the condition the worst case needs when the
    simulation took fewer (``" when a node has room for 3"``), and the result itself."""

    text: str
    took: int
    condition: str
    result: Any
    #: The numbers ``condition`` states, as finding facts.
    condition_facts: Mapping[str, int] = msgspec.field(default_factory=dict)


def _node_simulated(
    ctx: CheckContext,
    n: int,
    node_worst: int,
    node_cap: Callable[[int], int],
    sim_zones: int,
    fewest: int,
) -> _Simulated | None:
    """The simulated node loss, when simulated: how many it took and, when fewer than the
    worst case, why (the zone constraint over the simulated zones, or a placement limit)."""
    sim = ctx.try_simulate("node-loss")
    if sim is None:
        return None
    took = sim.max_unavailable
    why = condition = ""
    limits = _placement_limits(sim)
    if took < node_worst and node_cap(sim_zones) <= took:
        why = (
            f", not {node_worst}, because the zone constraint spreads them over the "
            f"{_word(sim_zones)} zones there"
        )
        condition = (
            " when one zone has them all"
            if fewest == 1
            else f" when {_word(fewest)} zones have them all"
        )
        facts = {"zones_with_all": fewest}
    elif took < node_worst:
        if limits:
            why = f", not {node_worst}, because there {'; '.join(limits)}"
        condition = f" when a node has room for {node_worst}"
        facts = {"node_room_needed": node_worst}
    else:
        facts = {}
    text = f"node loss took {_lost(n, took)}{why}"
    return _Simulated(text, took, condition, sim, facts)


def _zone_simulated(
    ctx: CheckContext, n: int, zone_worst: int, h_cap: int, nodes_per_zone: int
) -> _Simulated | None:
    """The simulated zone loss, when simulated: how many it took and, when fewer than the
    worst case, why (too few nodes in a simulated zone for the hostname constraint)."""
    sim = ctx.try_simulate("zone-loss")
    if sim is None:
        return None
    took = sim.max_unavailable
    why = condition = ""
    capacity = h_cap * nodes_per_zone
    if took < zone_worst and capacity <= took:
        per_node = "one replica per node" if h_cap == 1 else f"{h_cap} replicas per node"
        why = (
            f", not {zone_worst}, because a zone there has only "
            f"{nodes_per_zone} node{'s' if nodes_per_zone != 1 else ''} and "
            f"the hostname constraint allows {per_node}"
        )
        needed = -(-zone_worst // max(h_cap, 1))
        condition = f" with {needed} nodes in a zone"
        facts = {"zone_nodes_needed": needed}
    elif took < zone_worst:
        condition = f" when a zone has room for {zone_worst}"
        facts = {"zone_room_needed": zone_worst}
    else:
        facts = {}
    text = f"zone loss took {_lost(n, took)}{why}"
    return _Simulated(text, took, condition, sim, facts)


def _facts(
    n: int,
    worst: tuple[int | None, int | None],
    max_pods: int | None,
    spreads: tuple[Spread, Spread],
    simulated: Mapping[str, _Simulated | None],
    shape: tuple[int, int] | None,
) -> dict[str, FactValue]:
    """The numbers the message states, as finding facts: the worst node and zone loss it
    reports (``None``: not reported), the kubelet's pod cap when it bounds the node loss, the
    spreads' maxSkew, each simulated loss and the condition its worst case needs, and the
    simulated cluster's shape (zones, nodes per zone) when a simulated figure is quoted."""
    facts: dict[str, FactValue] = {"replicas": n}
    for key, value in (("node_loss_takes", worst[0]), ("zone_loss_takes", worst[1])):
        if value is not None:
            facts[key] = value
    if max_pods is not None:
        facts["max_pods"] = max_pods
    for key, spread in zip(("host", "zone"), spreads, strict=True):
        if spread.max_per_domain is not None:
            facts[f"{key}_max_skew"] = spread.max_per_domain
    for kind, loss in simulated.items():
        if loss is not None:
            facts[f"simulated_{kind}_loss_took"] = loss.took
            facts.update(loss.condition_facts)
    if shape is not None:
        facts.update(zones=shape[0], nodes_per_zone=shape[1])
    return facts


def _summary(
    head: str,
    n: int,
    host_bad: bool,
    zone_bad: bool,
    node: tuple[int, str, str],
    zone: tuple[int, str],
) -> str:
    """The message: the cause, then the worst node loss (``node``: how many, the condition it
    needs, the kubelet's pod cap) and zone loss (how many, the condition), "worst case" when
    the figures hold on any cluster (a figure that needs more says what instead)."""
    (node_worst, node_if, cap), (zone_worst, zone_if) = node, zone
    worst = []
    if host_bad:
        worst.append(f"a node loss takes {node_worst} of {n}{node_if}{cap}")
    if zone_bad:
        takes = "" if host_bad else "takes "
        worst.append(f"a zone loss {takes}{zone_worst} of {n}{zone_if}")
    lead = "" if node_if or zone_if else "worst case "
    return f"{head}: {lead}{', '.join(worst)}"


def _objective_sentence(n: int, node_ok: int, zone_ok: int, quorum: bool) -> str:
    """What the objectives allow on node and zone loss, for the explanation."""
    return (
        f"The objectives allow {node_ok} of {n} replicas down on node loss and {zone_ok} "
        f"on zone loss ({'a quorum system' if quorum else 'not a quorum system'}: "
        "max-unavailable minority is "
        + ("(replicas - 1) // 2" if quorum else "replicas // 2")
        + ")."
    )


def _pods_cap_claim(max_pods: int, n: int) -> str:
    """Why a node loss takes no more than the kubelet's pod limit."""
    return (
        f"a node runs at most {max_pods} pods (the kubelet's maxPods, "
        f"{MAX_PODS_SOURCE}, as the profile's node-allocatable pods), so the other "
        f"{n - max_pods} replicas are on other nodes"
    )


def _detail(ctx: CheckContext, claims: list[str], sims: list[str], shape: str) -> str:
    """The claims of the explanation, then what the simulation took."""
    detail = "; ".join(claims)
    if sims:
        detail += (
            f"; simulated on Kubernetes {ctx.kube_version} with {shape} and the worst "
            f"placement the constraints allow: " + ", ".join(sims)
        )
    return detail
