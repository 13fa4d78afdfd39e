"""The StatefulSet manifest as the simulator sees it, after API-server defaulting.

Tolerant of garbage: a field of the wrong type falls back to its default, never an exception.
Defaulting sources: pkg/apis/apps/v1/defaults.go#SetDefaults_StatefulSet (replicas 1,
podManagementPolicy OrderedReady, updateStrategy RollingUpdate with partition 0,
PVC retention Retain/Retain), pkg/apis/core/v1/defaults.go#SetDefaults_PodSpec
(terminationGracePeriodSeconds 30), and the DefaultTolerationSeconds admission plugin.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .podtemplate import (
    NodeSelectorRequirement,
    PodTemplate,
    Toleration,
    _list,
    _map,
    _num,
    _str,
    parse_template,
)
from .selectors import selects

TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"
HOSTNAME_KEY = "kubernetes.io/hostname"
#: Zone labels: the GA key and the deprecated beta key (staging/src/k8s.io/api/core/v1/
#: well_known_labels.go, LabelTopologyZone and LabelFailureDomainBetaZone).
ZONE_KEYS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


def _int(v: Any, default: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return default
    return int(v)


@dataclass(frozen=True)
class ClaimTemplate:
    name: str
    access_modes: tuple[str, ...]
    # storage.py#claim_class_name: the beta annotation, else spec.storageClassName; None = neither
    # (the default class applies).
    storage_class_name: str | None


@dataclass(frozen=True)
class SpreadRule:
    """A hard placement rule over the set's own pods, per topology domain ("hostname" or
    "zone"): required anti-affinity (none of ours in the domain), required affinity (one of ours
    in the domain, unless none exists yet) or a DoNotSchedule spread (`max_skew`)."""

    topology_key: str
    kind: str  # "anti-affinity", "affinity" or "spread"
    max_skew: int = 1


@dataclass(frozen=True)
class HostPort:
    """A container port with hostPort (pkg/scheduler/framework/plugins/nodeports)."""

    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"


@dataclass(frozen=True)
class Requests:
    """The pod's resource requests as the scheduler sums them (millicores, bytes)."""

    cpu_m: float = 0.0
    memory_b: float = 0.0


@dataclass
class Workload:
    namespace: str
    name: str
    replicas: int
    pod_management_policy: str
    termination_grace_period_s: float
    update_strategy: str
    partition: int
    max_unavailable_raw: Any
    ordinals_start: int
    min_ready_seconds: float
    tolerations: tuple[Toleration, ...]
    claim_templates: tuple[ClaimTemplate, ...]
    when_deleted: str
    when_scaled: str
    hard_rules: tuple[SpreadRule, ...]
    node_selector: Mapping[str, str]
    node_name: str | None
    # Longest readinessProbe initialDelaySeconds; None without a probe (Ready at start).
    start_to_ready_s: float | None
    has_readiness_probe: bool
    # Longest readinessProbe periodSeconds (default 10 s), None without a probe.
    readiness_period_s: float | None
    prestop_s: float | None  # parsed `sleep N`, 0 if no hook, None = hook of unknown length
    labels: Mapping[str, str]
    has_empty_dir: bool = False
    # spec.revisionHistoryLimit (SetDefaults_StatefulSet: 10).
    revision_history_limit: int = 10
    # requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms (ORed; each term ANDs
    # its requirements); () = no required node affinity.
    node_affinity_terms: tuple[tuple[NodeSelectorRequirement, ...], ...] = ()
    host_ports: tuple[HostPort, ...] = ()
    requests: Requests = field(default_factory=Requests)
    # Required (anti-)affinity terms about other workloads' pods, which the simulation cannot
    # place (it only holds this set's pods): counted, reported as not modelled.
    foreign_affinity_terms: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def parallel(self) -> bool:
        return self.pod_management_policy == "Parallel"

    @property
    def monotonic(self) -> bool:
        # stateful_set_utils.go#allowsBurst: only Parallel allows bursting.
        return not self.parallel

    def pod_name(self, ordinal: int) -> str:
        return f"{self.name}-{ordinal}"


def _topology(key: str) -> str | None:
    if key == HOSTNAME_KEY:
        return "hostname"
    if key in ZONE_KEYS:
        return "zone"
    return None


def _prestop_seconds(template: PodTemplate) -> float | None:
    """The longest preStop sleep of the main containers (0 without hooks; None when a hook's
    length is unknown): the kubelet runs the hooks of a pod's containers in parallel
    (pkg/kubelet/kuberuntime/kuberuntime_container.go#killContainersWithSyncResult)."""
    total = 0.0
    for c in template.main:
        if c.pre_stop is None:
            continue
        secs = c.pre_stop.sleeps_s
        if secs is None:
            return None
        total = max(total, secs)
    return total


def with_default_tolerations(
    written: tuple[Toleration, ...], profile_ns: float = 300.0, profile_nu: float = 300.0
) -> tuple[Toleration, ...]:
    """The pod's tolerations after admission: those of the template (the model's) and the
    defaults DefaultTolerationSeconds adds."""
    tols = list(written)
    # plugin/pkg/admission/defaulttolerationseconds/admission.go#Admit: add
    # {Exists, NoExecute, 300 s} for not-ready / unreachable unless a toleration suppresses it
    for key, secs in ((TAINT_NOT_READY, profile_ns), (TAINT_UNREACHABLE, profile_nu)):
        present = any(t.suppresses_default(key) for t in tols)
        if not present:
            tols.append(Toleration(key, "Exists", "", "NoExecute", secs, defaulted=True))
    return tuple(tols)


def parse_statefulset(
    sts: Mapping[str, Any], default_not_ready_s: float = 300.0, default_unreachable_s: float = 300.0
) -> Workload:
    meta = _map(sts.get("metadata"))
    spec = _map(sts.get("spec"))
    tmpl = _map(spec.get("template"))
    tmeta = _map(tmpl.get("metadata"))
    pspec = _map(tmpl.get("spec"))
    notes: list[str] = []

    replicas = max(0, _int(spec.get("replicas"), 1))
    pmp = _str(spec.get("podManagementPolicy"), "OrderedReady")
    if pmp not in ("OrderedReady", "Parallel"):
        pmp = "OrderedReady"
    tgp = _num(pspec.get("terminationGracePeriodSeconds"), 30.0)
    us = _map(spec.get("updateStrategy"))
    ustype = _str(us.get("type"), "RollingUpdate")
    if ustype not in ("RollingUpdate", "OnDelete", "Recreate"):
        ustype = "RollingUpdate"
    ru = _map(us.get("rollingUpdate"))
    partition = max(0, _int(ru.get("partition"), 0))
    max_unavailable_raw = ru.get("maxUnavailable", 1)
    ordinals_start = max(0, _int(_map(spec.get("ordinals")).get("start"), 0))
    min_ready = max(0.0, _num(spec.get("minReadySeconds"), 0.0) or 0.0)
    labels = {str(k): str(v) for k, v in _map(tmeta.get("labels")).items()}

    template = parse_template(sts)
    claims = _claim_templates(template)

    ret = _map(spec.get("persistentVolumeClaimRetentionPolicy"))
    when_deleted = _str(ret.get("whenDeleted"), "Retain")
    when_scaled = _str(ret.get("whenScaled"), "Retain")

    namespace = _str(meta.get("namespace"), "default") or "default"
    rules, foreign = _hard_rules(template, namespace)

    containers = _list(pspec.get("containers"))
    has_probe, start_to_ready, probe_period = _readiness(template)

    node_name = pspec.get("nodeName")
    init = _list(pspec.get("initContainers"))
    sidecars = [c for c in init if _map(c).get("restartPolicy") == "Always"]
    return Workload(
        namespace=_str(meta.get("namespace"), "default") or "default",
        name=_str(meta.get("name"), "statefulset") or "statefulset",
        replicas=replicas,
        pod_management_policy=pmp,
        termination_grace_period_s=max(0.0, tgp if tgp is not None else 30.0),
        update_strategy=ustype,
        partition=partition,
        max_unavailable_raw=max_unavailable_raw,
        ordinals_start=ordinals_start,
        min_ready_seconds=min_ready,
        tolerations=with_default_tolerations(
            template.tolerations, default_not_ready_s, default_unreachable_s
        ),
        claim_templates=tuple(claims),
        when_deleted=when_deleted,
        when_scaled=when_scaled,
        hard_rules=tuple(rules),
        node_selector={str(k): str(v) for k, v in _map(pspec.get("nodeSelector")).items()},
        node_name=node_name if isinstance(node_name, str) and node_name else None,
        start_to_ready_s=start_to_ready,
        has_readiness_probe=has_probe,
        readiness_period_s=probe_period,
        prestop_s=_prestop_seconds(template),
        labels=labels,
        has_empty_dir=any("emptyDir" in _map(v) for v in _list(pspec.get("volumes"))),
        revision_history_limit=_int(spec.get("revisionHistoryLimit"), 10),
        node_affinity_terms=tuple(
            (*t.match_expressions, *t.match_fields) for t in template.node_affinity_required
        ),
        host_ports=_host_ports([*containers, *sidecars], pspec.get("hostNetwork") is True),
        requests=_pod_requests(containers, init, _map(pspec.get("overhead"))),
        foreign_affinity_terms=foreign,
        notes=notes,
    )


def _claim_templates(template: PodTemplate) -> list[ClaimTemplate]:
    """spec.volumeClaimTemplates: name, access modes (ReadWriteOnce when none) and class."""
    return [
        ClaimTemplate(t.name or "data", t.access_modes or ("ReadWriteOnce",), t.class_name)
        for t in template.claim_templates
    ]


def _hard_rules(template: PodTemplate, namespace: str) -> tuple[list[SpreadRule], int]:
    """The required pod (anti-)affinity terms and DoNotSchedule spread constraints that
    select the set's own pods, on a topology the model knows, and how many required terms
    select other pods (the model's reading: :meth:`AffinityTerm.selects_own_pods`)."""
    labels = {str(k): str(v) for k, v in template.labels.items()}
    rules: list[SpreadRule] = []
    foreign = 0
    for kind, terms in (
        ("anti-affinity", template.anti_affinity_required),
        ("affinity", template.affinity_required),
    ):
        for term in terms:
            topo = _topology(term.topology_key)
            if term.selects_own_pods(labels, namespace):
                if topo:
                    rules.append(SpreadRule(topo, kind, 1))
            else:
                foreign += 1
    for tsc in template.spread_constraints:
        topo = _topology(tsc.topology_key)
        if tsc.hard and topo and selects(tsc.label_selector, labels):
            rules.append(SpreadRule(topo, "spread", tsc.max_skew))
    return rules, foreign


def _readiness(template: PodTemplate) -> tuple[bool, float | None, float | None]:
    """Whether a main container has a readiness probe, the longest initialDelaySeconds and the
    longest periodSeconds of them (kubelet prober/worker.go)."""
    probes = [c.readiness for c in template.main if c.readiness is not None]
    if not probes:
        return False, None, None
    return (
        True,
        float(max(p.initial_delay_s for p in probes)),
        float(max(p.period_s for p in probes)),
    )


def _host_ports(containers: list[Any], host_network: bool) -> tuple[HostPort, ...]:
    """Container ports bound on the node: hostPort > 0, and with hostNetwork every containerPort
    (SetDefaults_Pod sets hostPort = containerPort for hostNetwork pods)."""
    out: list[HostPort] = []
    for c in containers:
        for port in _list(_map(c).get("ports")):
            pm = _map(port)
            hp = _int(pm.get("hostPort"), 0)
            if hp <= 0 and host_network:
                hp = _int(pm.get("containerPort"), 0)
            if hp > 0:
                out.append(
                    HostPort(
                        hp,
                        _str(pm.get("protocol"), "TCP") or "TCP",
                        _str(pm.get("hostIP"), "0.0.0.0") or "0.0.0.0",
                    )
                )
    return tuple(dict.fromkeys(out))


#: A quantity's number and suffix (matched on the stripped text). No two parts can take the
#: same characters, so a long unreadable value costs linear time (``\d+\.?\d*`` took minutes
#: on 50,000 digits and a ``!``).
_QUANTITY_RE = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)")
_SUFFIX = {
    "": 1.0, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}  # fmt: skip


def parse_quantity(v: Any) -> float | None:
    """A resource.Quantity ("500m", "1.5", "2Gi", "1e9", 4) as a number; None if unreadable."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if not isinstance(v, str):
        return None
    return _parse_quantity_text(v)


@functools.lru_cache(maxsize=1024)
def _parse_quantity_text(v: str) -> float | None:
    """`parse_quantity` of a string (a few distinct values, read for every StatefulSet)."""
    m = _QUANTITY_RE.fullmatch(v.strip())
    if m is None or m.group(2) not in _SUFFIX:
        return None
    try:
        return float(m.group(1)) * _SUFFIX[m.group(2)]
    except ValueError:
        return None


def _container_requests(c: Any) -> tuple[float, float]:
    """requests, defaulted from limits where a request is not set (SetDefaults_Pod)."""
    res = _map(_map(c).get("resources"))
    req, lim = _map(res.get("requests")), _map(res.get("limits"))
    out = []
    for name, scale in (("cpu", 1000.0), ("memory", 1.0)):
        q = parse_quantity(req.get(name)) if name in req else parse_quantity(lim.get(name))
        out.append(max(0.0, (q or 0.0) * scale))
    return out[0], out[1]


def _pod_requests(containers: list[Any], init: list[Any], overhead: Mapping[str, Any]) -> Requests:
    """k8s.io/component-helpers/resource/helpers.go#PodRequests: the containers plus the
    restartable init containers (sidecars), or the largest init container with the sidecars
    started before it if that is more, plus spec.overhead."""
    cpu = mem = 0.0
    for c in containers:
        c_cpu, c_mem = _container_requests(c)
        cpu, mem = cpu + c_cpu, mem + c_mem
    side_cpu = side_mem = 0.0
    init_cpu = init_mem = 0.0
    for c in init:
        c_cpu, c_mem = _container_requests(c)
        if _map(c).get("restartPolicy") == "Always":
            side_cpu, side_mem = side_cpu + c_cpu, side_mem + c_mem
        else:
            init_cpu, init_mem = max(init_cpu, side_cpu + c_cpu), max(init_mem, side_mem + c_mem)
    cpu, mem = max(cpu + side_cpu, init_cpu), max(mem + side_mem, init_mem)
    o_cpu = parse_quantity(overhead.get("cpu")) or 0.0
    o_mem = parse_quantity(overhead.get("memory")) or 0.0
    return Requests(cpu + o_cpu * 1000.0, mem + o_mem)


def resolve_max_unavailable(raw: Any, replicas: int) -> int:
    """stateful_set_utils.go#getStatefulSetMaxUnavailable (see
    :func:`embedded_sim.disruption.rolling_max_unavailable`)."""
    from .disruption import rolling_max_unavailable

    return rolling_max_unavailable(raw, replicas)


#: The simulator follows every pod individually, and its cost grows faster than linearly
#: with the pod count: `simulate()` refuses larger sets with ValueError instead of running for
#: minutes (the step harness used by the controller tests has no such limit).
MAX_SIMULATED_REPLICAS = 250


def check_replica_limit(statefulset: Mapping[str, Any]) -> None:
    """Raise ValueError when ``spec.replicas`` exceeds :data:`MAX_SIMULATED_REPLICAS`."""
    replicas = _int(_map(_map(statefulset).get("spec")).get("replicas"), 1)
    if replicas > MAX_SIMULATED_REPLICAS:
        raise ValueError(
            f"replicas {replicas} is more than the {MAX_SIMULATED_REPLICAS} pods the simulator "
            "models one by one; not simulated"
        )
