"""The StatefulSet manifest as the simulator sees it, after API-server defaulting.

Tolerant of garbage: a field of the wrong type falls back to its default, never an exception.
Defaulting sources: pkg/apis/apps/v1/defaults.go#SetDefaults_StatefulSet (replicas 1,
podManagementPolicy OrderedReady, updateStrategy RollingUpdate with partition 0,
PVC retention Retain/Retain), pkg/apis/core/v1/defaults.go#SetDefaults_PodSpec
(terminationGracePeriodSeconds 30), and the DefaultTolerationSeconds admission plugin.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .podtemplate import (
    HostPort,
    NodeSelectorRequirement,
    PodTemplate,
    Requests,
    SetSpec,
    Toleration,
    _map,
    _str,
    parse_spec,
    parse_template,
)
from .profile import DEFAULT_TOLERATION_S
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


class ClaimTemplate(msgspec.Struct, frozen=True):
    name: str
    access_modes: tuple[str, ...]
    # storage.py#claim_class_name: the beta annotation, else spec.storageClassName; None = neither
    # (the default class applies).
    storage_class_name: str | None


class SpreadRule(msgspec.Struct, frozen=True):
    """A hard placement rule over the set's own pods, per domain of the node label
    ``topology_key`` (any key: kubernetes.io/hostname, a zone key, a rack label): required
    anti-affinity (none of ours in the domain), required affinity (one of ours in the domain,
    unless none exists yet) or a DoNotSchedule spread (``max_skew``, ``min_domains`` and the
    node inclusion policies, read as pkg/scheduler/framework/plugins/podtopologyspread/
    common.go#filterTopologySpreadConstraints reads them)."""

    topology_key: str
    kind: str  # "anti-affinity", "affinity" or "spread"
    max_skew: int = 1
    min_domains: int = 1
    node_affinity_policy: str = "Honor"  # NodeInclusionPolicy: "Honor" or "Ignore"
    node_taints_policy: str = "Ignore"

    @property
    def domain_word(self) -> str:
        """``"hostname"``, ``"zone"`` or the label key itself, for verdicts."""
        if self.topology_key == HOSTNAME_KEY:
            return "hostname"
        return "zone" if self.topology_key in ZONE_KEYS else self.topology_key

    def __str__(self) -> str:
        """``"required anti-affinity on example.com/rack"``, ``"a DoNotSchedule spread on …"``."""
        what = {
            "anti-affinity": "required anti-affinity",
            "affinity": "required pod affinity",
            "spread": "DoNotSchedule topology spread",
        }.get(self.kind, self.kind)
        return f"{what} on {self.topology_key}"


class Workload(msgspec.Struct):
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
    requests: Requests = msgspec.field(default_factory=Requests)
    # Required (anti-)affinity terms about other workloads' pods, which the simulation cannot
    # place (it only holds this set's pods): counted, reported as not modelled.
    foreign_affinity_terms: int = 0
    # Parts of the hard placement terms the simulator does not model, in words (the
    # matchLabelKeys of a spread, the matchLabelKeys / mismatchLabelKeys of a pod affinity
    # term): the simulation names them as not simulated.
    unmodelled_terms: tuple[str, ...] = ()
    notes: list[str] = msgspec.field(default_factory=list)

    @property
    def parallel(self) -> bool:
        return self.pod_management_policy == "Parallel"

    @property
    def monotonic(self) -> bool:
        # stateful_set_utils.go#allowsBurst: only Parallel allows bursting.
        return not self.parallel

    def pod_name(self, ordinal: int) -> str:
        return f"{self.name}-{ordinal}"


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
    written: tuple[Toleration, ...],
    profile_ns: float = DEFAULT_TOLERATION_S,
    profile_nu: float = DEFAULT_TOLERATION_S,
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
    sts: Mapping[str, Any],
    default_not_ready_s: float = DEFAULT_TOLERATION_S,
    default_unreachable_s: float = DEFAULT_TOLERATION_S,
    *,
    template: PodTemplate | None = None,
    spec: SetSpec | None = None,
) -> Workload:
    """The StatefulSet as the simulator runs it: the model's template and spec fields
    (:func:`parse_template`, :func:`parse_spec`), defaulted as the API server does. Never
    raises.

    ``template`` and ``spec``, when given, are those :func:`parse_template` and
    :func:`parse_spec` give for ``sts`` (a caller that keeps them saves parsing them again).
    """
    meta = _map(sts.get("metadata"))
    if template is None:
        template = parse_template(sts)
    if spec is None:
        spec = parse_spec(sts)
    pmp = spec.pod_management_policy
    ustype = spec.update_strategy_type
    namespace = _str(meta.get("namespace"), "default") or "default"
    rules, foreign = _hard_rules(template, namespace)
    unmodelled = _unmodelled_terms(template)
    has_probe, start_to_ready, probe_period = _readiness(template)
    return Workload(
        namespace=namespace,
        name=_str(meta.get("name"), "statefulset") or "statefulset",
        replicas=max(0, 1 if spec.replicas is None else spec.replicas),
        pod_management_policy=pmp if pmp in ("OrderedReady", "Parallel") else "OrderedReady",
        termination_grace_period_s=float(template.effective_grace_period_s),
        update_strategy=(
            ustype if ustype in ("RollingUpdate", "OnDelete", "Recreate") else "RollingUpdate"
        ),
        partition=max(0, spec.partition or 0),
        max_unavailable_raw=1 if spec.max_unavailable is None else spec.max_unavailable,
        ordinals_start=max(0, spec.ordinals_start or 0),
        min_ready_seconds=float(max(0, spec.min_ready_seconds or 0)),
        tolerations=with_default_tolerations(
            template.tolerations, default_not_ready_s, default_unreachable_s
        ),
        claim_templates=tuple(_claim_templates(template)),
        when_deleted=spec.retention_when_deleted or "Retain",
        when_scaled=spec.retention_when_scaled or "Retain",
        hard_rules=tuple(rules),
        node_selector={str(k): str(v) for k, v in template.node_selector.items()},
        node_name=template.node_name,
        start_to_ready_s=start_to_ready,
        has_readiness_probe=has_probe,
        readiness_period_s=probe_period,
        prestop_s=_prestop_seconds(template),
        labels={str(k): str(v) for k, v in template.labels.items()},
        has_empty_dir=template.has_empty_dir,
        revision_history_limit=(
            10 if spec.revision_history_limit is None else spec.revision_history_limit
        ),
        node_affinity_terms=tuple(
            (*t.match_expressions, *t.match_fields) for t in template.node_affinity_required
        ),
        host_ports=template.host_ports,
        requests=template.requests,
        foreign_affinity_terms=foreign,
        unmodelled_terms=unmodelled,
    )


def _claim_templates(template: PodTemplate) -> list[ClaimTemplate]:
    """spec.volumeClaimTemplates: name, access modes (ReadWriteOnce when none) and class."""
    return [
        ClaimTemplate(t.name or "data", t.access_modes or ("ReadWriteOnce",), t.class_name)
        for t in template.claim_templates
    ]


def _hard_rules(template: PodTemplate, namespace: str) -> tuple[list[SpreadRule], int]:
    """The required pod (anti-)affinity terms and DoNotSchedule spread constraints that
    select the set's own pods (on any topology key: the simulation notes a key no simulated
    node carries as not simulated), and how many required terms select other pods (the
    model's reading: :meth:`AffinityTerm.selects_own_pods`)."""
    labels = {str(k): str(v) for k, v in template.labels.items()}
    rules: list[SpreadRule] = []
    foreign = 0
    for kind, terms in (
        ("anti-affinity", template.anti_affinity_required),
        ("affinity", template.affinity_required),
    ):
        for term in terms:
            if term.selects_own_pods(labels, namespace):
                if term.topology_key:
                    rules.append(SpreadRule(term.topology_key, kind, 1))
            else:
                foreign += 1
    for tsc in template.spread_constraints:
        if tsc.hard and tsc.topology_key and selects(tsc.label_selector, labels):
            rules.append(
                SpreadRule(
                    tsc.topology_key,
                    "spread",
                    tsc.max_skew,
                    tsc.min_domains,
                    tsc.node_affinity_policy,
                    tsc.node_taints_policy,
                )
            )
    return rules, foreign


def _unmodelled_terms(template: PodTemplate) -> tuple[str, ...]:
    """The label-key fields of hard placement terms, in words: the scheduler merges the pod's
    values of those labels into the selector (podtopologyspread/common.go
    #filterTopologySpreadConstraints; the API server for pod affinity, KEP-3633), which
    matters when pods of one set carry different values (controller-revision-hash during a
    rollout); the simulator matches the selector as written."""
    out: list[str] = []
    for kind, terms in (
        ("anti-affinity", template.anti_affinity_required),
        ("pod affinity", template.affinity_required),
    ):
        for term in terms:
            if term.label_keys:
                keys = ", ".join(term.label_keys)
                out.append(f"the label keys ({keys}) of a required {kind} term")
    for tsc in template.spread_constraints:
        if tsc.hard and tsc.match_label_keys:
            keys = ", ".join(tsc.match_label_keys)
            out.append(f"matchLabelKeys ({keys}) of a DoNotSchedule topology spread")
    return tuple(dict.fromkeys(out))


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
