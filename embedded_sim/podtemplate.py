"""A StatefulSet's pod template and claim templates as typed values: the fields rules and the
simulator read, parsed once per object, each keeping the field path it came from (for
positions).

Parsing is lenient: a value of the wrong type reads as absent (validation reports it at its
field; kustomize patches and other fragments leave fields out). Defaults are the API
server's where it sets one (pkg/apis/core/v1/defaults.go: ``terminationGracePeriodSeconds``
30, a probe's ``httpGet.path`` none, a topology spread constraint's ``whenUnsatisfiable``
required, read as DoNotSchedule); a field the API server leaves unset stays None.
"""

from __future__ import annotations

import math
from _thread import allocate_lock
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, TypeVar, cast

import msgspec

from .keyed import Keyed
from .lazyre import lazy
from .quantity import parse_quantity
from .selectors import selects
from .storage import BETA_STORAGE_CLASS_ANNOTATION, claim_class_name

#: Field path of a value inside a StatefulSet: ``("spec", "template", "spec", "containers", 0)``.
Path = tuple[str | int, ...]

#: Path of the pod spec inside a StatefulSet.
POD: Path = ("spec", "template", "spec")


#: A ``sleep N`` call in a command line, with coreutils' suffixes (s, m, h, d; GNU sleep
#: "NUMBER[SUFFIX]", and ``infinity`` in any case), at the start of a word (``/bin/sleep``)
#: and ending one; not one sent to the background (``sleep 40 &``: the hook does not wait).
_SLEEP = lazy(
    r"(?:^|[\s;&|(/])sleep\s+(\d+(?:\.\d+)?|(?i:infinity|inf))([smhd]?)(?=$|[\s;&|)])"
    r"(?!\s*&(?!&))"
)
_SLEEP_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def sleep_seconds(text: str) -> float | None:
    """Total seconds slept by the ``sleep N`` calls of an exec command line (``None`` if
    none; ``math.inf`` for ``sleep infinity``): the hook runs to its end, so each call's time
    counts."""
    found = [
        math.inf if v.lower() in ("infinity", "inf") else float(v) * _SLEEP_UNIT[u]
        for v, u in _SLEEP.findall(text)
    ]
    return sum(found) if found else None


#: terminationGracePeriodSeconds when unset (pkg/apis/core/v1/defaults.go#SetDefaults_PodSpec)
DEFAULT_GRACE_PERIOD_S = 30

#: What a loaded mapping is: dict first (loaders hand in dict subclasses, and the Mapping ABC
#: check alone is slow).
_MAPS = (dict, Mapping)


def _map(v: Any) -> Mapping[str, Any]:
    # dict first: loaders hand in dict subclasses, and the Mapping ABC check is slow
    return v if isinstance(v, (dict, Mapping)) else {}


def _list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, (list, tuple)) else []


def _int(v: Any) -> int | None:
    return None if isinstance(v, bool) or not isinstance(v, int) else v


def _text(v: Any) -> str:
    """A scalar as text ("" for null, an empty value or a mapping or list)."""
    if v is None or isinstance(v, (dict, list, Mapping)):
        return ""
    return str(v)


def _str(v: Any, default: str = "") -> str:
    return v if isinstance(v, str) else default


def _num(v: Any, default: float | None) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return default
    return float(v)


def _words(v: Any) -> tuple[str, ...]:
    return tuple(str(w) for w in _list(v))


class Handler(Keyed, frozen=True):
    """A probe's or lifecycle hook's action: ``kind`` is ``exec``, ``httpGet``, ``tcpSocket``,
    ``grpc`` or ``sleep`` (``""`` for none the model knows); ``command`` the exec words,
    ``http_path`` the httpGet path (``"/"`` when unset), ``sleep_s`` the sleep action's
    seconds (KEP-3960; None when not an integer)."""

    kind: str
    path: Path
    command: tuple[str, ...] = ()
    http_path: str = ""
    sleep_s: int | None = None
    #: The handler as written (not compared: two handlers are the same check when the
    #: fields above are equal).
    spec: Mapping[str, Any] = msgspec.field(default_factory=dict)

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.path, self.command, self.http_path, self.sleep_s)

    @property
    def command_line(self) -> str:
        """The exec words joined by spaces (``""`` for another kind)."""
        return " ".join(self.command)

    @property
    def sleeps_s(self) -> float | None:
        """Seconds the handler sleeps: the sleep action's, or the ``sleep N`` calls of an exec
        command added up (:func:`sleep_seconds`); None when it says no length."""
        if self.kind == "sleep":
            return self.sleep_s  # (an int: exact however large)
        return sleep_seconds(self.command_line) if self.kind == "exec" else None

    @classmethod
    def parse(cls, raw: Any, path: Path, kinds: tuple[str, ...]) -> Handler | None:
        """The first of ``kinds`` that ``raw`` sets as a mapping, or None."""
        spec = _map(raw)
        for kind in kinds:
            handler = spec.get(kind)
            if not isinstance(handler, _MAPS):
                continue
            at = (*path, kind)
            if kind == "exec":
                return cls(kind, at, command=_words(handler.get("command")), spec=handler)
            if kind == "httpGet":
                return cls(kind, at, http_path=_text(handler.get("path")) or "/", spec=handler)
            if kind == "sleep":
                return cls(kind, at, sleep_s=_int(handler.get("seconds")), spec=handler)
            return cls(kind, at, spec=handler)
        return None


#: The handlers of a probe, in the order they are looked for (pkg/apis/core/types.go
#: ProbeHandler), and of a lifecycle hook (LifecycleHandler, with KEP-3960's sleep).
PROBE_KINDS = ("exec", "httpGet", "tcpSocket", "grpc")
HOOK_KINDS = ("exec", "httpGet", "tcpSocket", "sleep")


#: Probe defaults (pkg/apis/core/v1/defaults.go#SetDefaults_Probe: 0 or unset reads as these).
PROBE_PERIOD_S = 10
PROBE_FAILURE_THRESHOLD = 3


class Probe(msgspec.Struct, frozen=True):
    """A readiness, liveness or startup probe: its handler (None: none the model knows) and
    its ``periodSeconds`` and ``failureThreshold`` with the API server's defaults."""

    path: Path
    handler: Handler | None
    period_s: int = PROBE_PERIOD_S
    failure_threshold: int = PROBE_FAILURE_THRESHOLD
    #: initialDelaySeconds (0 when unset or not a positive integer)
    initial_delay_s: int = 0

    @property
    def gives_up_after_s(self) -> int:
        """Seconds of consecutive failures after which the kubelet acts on the probe:
        failureThreshold × periodSeconds (pkg/kubelet/prober/worker.go#doProbe)."""
        return self.failure_threshold * self.period_s


class VolumeMount(Keyed, frozen=True):
    """A container's ``volumeMounts`` entry; ``path`` is its field path (not compared)."""

    name: str
    mount_path: str
    read_only: bool
    sub_path: str = ""
    path: Path = ()

    def key(self) -> tuple[Any, ...]:
        return (self.name, self.mount_path, self.read_only, self.sub_path)


class ContainerPort(msgspec.Struct, frozen=True):
    path: Path
    container_port: int | None
    host_port: int | None
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"


class HostPort(Keyed, frozen=True):
    """A port the pod binds on its node (pkg/scheduler/framework/plugins/nodeports):
    ``path`` is the field that binds it (the port's ``hostPort``, or ``hostNetwork``; not
    compared)."""

    port: int
    protocol: str = "TCP"
    host_ip: str = "0.0.0.0"
    path: Path = ()

    def key(self) -> tuple[Any, ...]:
        return (self.port, self.protocol, self.host_ip)


class Requests(msgspec.Struct, frozen=True):
    """Resource requests as the scheduler sums them (millicores, bytes)."""

    cpu_m: float = 0.0
    memory_b: float = 0.0


_NO_REQUESTS = Requests()


class EnvVar(msgspec.Struct, frozen=True):
    """An ``env`` entry: ``value`` is None when it comes from ``valueFrom`` or is not text."""

    name: str
    value: str | None


class Container(msgspec.Struct, frozen=True):
    """A container of the template: ``field`` is ``containers`` or ``initContainers``,
    ``index`` its position there; ``sidecar`` for an init container with ``restartPolicy:
    Always`` (KEP-753: it runs beside the main containers)."""

    field: str
    index: int
    name: str
    image: str
    command: tuple[str, ...]
    args: tuple[str, ...]
    env: tuple[EnvVar, ...]
    ports: tuple[ContainerPort, ...]
    mounts: tuple[VolumeMount, ...]
    pre_stop: Handler | None
    readiness: Probe | None
    liveness: Probe | None
    startup: Probe | None
    sidecar: bool
    #: resources.requests, each defaulted from resources.limits when unset (SetDefaults_Pod)
    requests: Requests = _NO_REQUESTS

    @property
    def path(self) -> Path:
        return (*POD, self.field, self.index)

    @property
    def runs(self) -> bool:
        """Whether it runs beside the others (a main container or a sidecar), not to completion
        before them."""
        return self.field == "containers" or self.sidecar


class Volume(msgspec.Struct, frozen=True):
    """A pod volume: its name and, for the kinds rules look at, its source: ``host_path``
    (hostPath's ``path``), ``claim_name`` (persistentVolumeClaim's ``claimName``;
    ``""`` when unset), ``empty_dir``, ``ephemeral`` (a generic ephemeral volume: a claim
    made for the pod and deleted with it, docs/concepts/storage/ephemeral-volumes.md),
    ``config_map`` (configMap's ``name``)."""

    index: int
    name: str
    host_path: str | None
    claim_name: str | None
    empty_dir: bool = False
    ephemeral: bool = False
    config_map: str | None = None

    @property
    def path(self) -> Path:
        return (*POD, "volumes", self.index)


class ClaimTemplate(msgspec.Struct, frozen=True):
    """A ``volumeClaimTemplates`` entry: ``class_name`` is the beta annotation's class, else
    ``storageClassName``, else None (the default class applies); ``class_from_annotation``
    says which. ``has_spec``: the entry has a ``spec`` mapping."""

    index: int
    name: str
    access_modes: tuple[str, ...]
    class_name: str | None
    class_from_annotation: bool
    has_spec: bool

    @property
    def path(self) -> Path:
        return ("spec", "volumeClaimTemplates", self.index)


class AffinityTerm(msgspec.Struct, frozen=True):
    """A pod (anti-)affinity term: its topology key, label selector (as written: read with
    :func:`embedded_sim.selectors.selects`), the namespaces it lists and whether it has a
    namespaceSelector."""

    path: Path
    topology_key: str
    label_selector: Any
    namespaces: tuple[str, ...]
    namespace_selector: bool
    # matchLabelKeys / mismatchLabelKeys (KEP-3633): label keys whose values the API server
    # merges into the selector; not modelled (the simulation names them)
    label_keys: tuple[str, ...] = ()

    def selects_own_pods(self, labels: Mapping[str, Any], namespace: str | None) -> bool:
        """Whether the term counts the set's own pods (``labels`` in ``namespace``): a term
        without ``namespaces`` and ``namespaceSelector`` looks in the pod's own namespace; a
        listed namespace or any namespaceSelector may include it (pkg/scheduler/framework/
        types.go#newAffinityTerm)."""
        own = namespace or "default"
        if self.namespaces and own not in self.namespaces and not self.namespace_selector:
            return False
        return selects(self.label_selector, labels)


class SpreadConstraint(msgspec.Struct, frozen=True):
    """A topologySpreadConstraint: ``when_unsatisfiable`` defaults to DoNotSchedule,
    ``max_skew`` and ``min_domains`` read below 1 (or unset) as 1, ``node_affinity_policy``
    unset as Honor and ``node_taints_policy`` unset as Ignore, as the scheduler reads them
    (pkg/scheduler/framework/plugins/podtopologyspread/common.go
    #filterTopologySpreadConstraints)."""

    path: Path
    topology_key: str
    label_selector: Any
    when_unsatisfiable: str
    max_skew: int
    min_domains: int
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    # matchLabelKeys (KEP-3243): pod label keys whose values are ANDed into the selector; not
    # modelled (the simulation names them)
    match_label_keys: tuple[str, ...] = ()

    @property
    def hard(self) -> bool:
        """A filter (DoNotSchedule), not only a score (ScheduleAnyway)."""
        return self.when_unsatisfiable == "DoNotSchedule"


class NodeSelectorRequirement(msgspec.Struct, frozen=True):
    """One matchExpressions (or matchFields, `field=True`: metadata.name) requirement."""

    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()
    field: bool = False


class NodeSelectorTerm(msgspec.Struct, frozen=True):
    """A required node affinity term: its matchExpressions and matchFields, in order (an entry
    that is no mapping reads as key "" In nothing, so indexes stay the manifest's)."""

    path: Path
    match_expressions: tuple[NodeSelectorRequirement, ...]
    match_fields: tuple[NodeSelectorRequirement, ...]


#: The taint effects (k8s.io/api/core/v1 TaintEffect; pkg/apis/core/validation#validateTaintEffect).
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
#: Toleration operators: Equal (also when empty) and Exists; Lt and Gt compare numbers behind
#: the TaintTolerationComparisonOperators gate (KEP-5471, alpha in 1.35).
TOLERATION_OPERATORS = ("Equal", "Exists")
NUMERIC_TOLERATION_OPERATORS = ("Lt", "Gt")


class Toleration(msgspec.Struct, frozen=True):
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: float | None = None
    defaulted: bool = False  # added by the DefaultTolerationSeconds admission plugin

    @staticmethod
    def parse(raw: Any) -> Toleration:
        """A toleration as written (a mapping; anything else tolerates nothing the API server
        would store). ``tolerationSeconds`` that is not a number reads as unset."""
        m = _map(raw)
        return Toleration(
            key=_str(m.get("key")),
            operator=_str(m.get("operator"), "Equal") or "Equal",
            value=_str(m.get("value")),
            effect=_str(m.get("effect")),
            # an int64 stays exact (9223372036854775807 is not quoted one higher)
            toleration_seconds=seconds
            if isinstance(seconds := m.get("tolerationSeconds"), int)
            and not isinstance(seconds, bool)
            else _num(seconds, None),
        )

    def suppresses_default(self, key: str) -> bool:
        """Whether this toleration stops DefaultTolerationSeconds from adding its toleration
        for ``key`` (plugin/pkg/admission/defaulttolerationseconds/admission.go#Admit: a key of
        ``key`` or empty and an effect of NoExecute or empty; operator and value are not
        looked at)."""
        return self.key in (key, "") and self.effect in ("NoExecute", "")

    def tolerates(self, key: str, value: str, effect: str) -> bool:
        """k8s.io/api/core/v1/toleration.go#ToleratesTaint."""
        if self.effect and self.effect != effect:
            return False
        if self.key and self.key != key:
            return False
        if self.operator == "Exists":
            return True
        if self.operator in ("Equal", ""):
            return self.value == value
        return False

    def describe(self) -> str:
        k = self.key or "<any key>"
        eff = self.effect or "<any effect>"
        ts = (
            "no tolerationSeconds"
            if self.toleration_seconds is None
            else (f"tolerationSeconds {self.toleration_seconds:g}")
        )
        return f"{k} {self.operator} {eff} ({ts})"


class PodTemplate(msgspec.Struct, frozen=True, dict=True):
    """What the template of one StatefulSet says, typed (:func:`parse_template`)."""

    labels: Mapping[str, Any]
    annotations: Mapping[str, Any]
    containers: tuple[Container, ...]
    volumes: tuple[Volume, ...]
    claim_templates: tuple[ClaimTemplate, ...]
    host_network: bool
    #: terminationGracePeriodSeconds as written (None: unset or not an integer; the API
    #: server's default is 30).
    grace_period_s: int | None = None
    #: The tolerations in order (:meth:`Toleration.parse`; an entry that is no mapping
    #: tolerates nothing).
    tolerations: tuple[Toleration, ...] = ()
    node_name: str | None = None
    node_selector: Mapping[str, Any] = msgspec.field(default_factory=dict)
    #: podAntiAffinity / podAffinity terms: required, and the preferred ones' podAffinityTerm.
    anti_affinity_required: tuple[AffinityTerm, ...] = ()
    anti_affinity_preferred: tuple[AffinityTerm, ...] = ()
    affinity_required: tuple[AffinityTerm, ...] = ()
    spread_constraints: tuple[SpreadConstraint, ...] = ()
    #: nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
    node_affinity_required: tuple[NodeSelectorTerm, ...] = ()
    #: spec.overhead (RuntimeClass pod overhead), added to the pod's requests
    overhead: Requests = _NO_REQUESTS

    @property
    def effective_grace_period_s(self) -> int:
        """The grace period the pod's deletion gets: 30 s when unset
        (pkg/apis/core/v1/defaults.go#SetDefaults_PodSpec), 1 s when negative (the delete path
        since 1.22, kubernetes/kubernetes#98866; the pods' defaulting since 1.27, #115606)."""
        value = self.grace_period_s
        if value is None:
            return DEFAULT_GRACE_PERIOD_S
        return 1 if value < 0 else value

    @cached_property
    def host_ports(self) -> tuple[HostPort, ...]:
        """The ports the pod binds on its node, once each: a running container's hostPort >
        0, and with hostNetwork every containerPort (SetDefaults_Pod sets hostPort =
        containerPort for hostNetwork pods)."""
        out: list[HostPort] = []
        for c in (*self.main, *(c for c in self.containers if c.sidecar)):
            for p in c.ports:
                if p.host_port is not None and p.host_port > 0:
                    out.append(HostPort(p.host_port, p.protocol, p.host_ip, (*p.path, "hostPort")))
                elif self.host_network and (p.container_port or 0) > 0:
                    port = p.container_port or 0
                    out.append(HostPort(port, p.protocol, p.host_ip, (*POD, "hostNetwork")))
        return tuple(dict.fromkeys(out))

    @cached_property
    def requests(self) -> Requests:
        """k8s.io/component-helpers/resource/helpers.go#PodRequests: the main containers plus
        the sidecars, or the largest init container with the sidecars started before it if
        that is more, plus spec.overhead."""
        cpu = sum(c.requests.cpu_m for c in self.main)
        mem = sum(c.requests.memory_b for c in self.main)
        side_cpu = side_mem = init_cpu = init_mem = 0.0
        for c in self.containers:
            if c.field != "initContainers":
                continue
            if c.sidecar:
                side_cpu, side_mem = side_cpu + c.requests.cpu_m, side_mem + c.requests.memory_b
            else:
                init_cpu = max(init_cpu, side_cpu + c.requests.cpu_m)
                init_mem = max(init_mem, side_mem + c.requests.memory_b)
        cpu, mem = max(cpu + side_cpu, init_cpu), max(mem + side_mem, init_mem)
        return Requests(cpu + self.overhead.cpu_m, mem + self.overhead.memory_b)

    @property
    def has_empty_dir(self) -> bool:
        return any(v.empty_dir for v in self.volumes)

    @cached_property
    def running(self) -> tuple[Container, ...]:
        """The containers that run beside each other: sidecars first, then the main ones."""
        return tuple(c for c in self.containers if c.runs)

    @cached_property
    def main(self) -> tuple[Container, ...]:
        return tuple(c for c in self.containers if c.field == "containers")

    @cached_property
    def claim_names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.claim_templates)


def _probe(raw: Any, path: Path) -> Probe | None:
    if not isinstance(raw, _MAPS):
        return None
    period, failures = _int(raw.get("periodSeconds")), _int(raw.get("failureThreshold"))
    delay = _int(raw.get("initialDelaySeconds"))
    return Probe(
        path,
        Handler.parse(raw, path, PROBE_KINDS),
        period if period is not None and period > 0 else PROBE_PERIOD_S,
        failures if failures is not None and failures > 0 else PROBE_FAILURE_THRESHOLD,
        delay if delay is not None and delay > 0 else 0,
    )


def _requests(c: Mapping[str, Any]) -> Requests:
    """A container's requests, defaulted from its limits where a request is not set
    (SetDefaults_Pod); an unreadable or negative quantity reads as 0."""
    res = c.get("resources")
    if not isinstance(res, _MAPS):
        return _NO_REQUESTS
    req, lim = _map(res.get("requests")), _map(res.get("limits"))
    if not req and not lim:
        return _NO_REQUESTS
    cpu = parse_quantity(req["cpu"]) if "cpu" in req else parse_quantity(lim.get("cpu"))
    mem = parse_quantity(req["memory"]) if "memory" in req else parse_quantity(lim.get("memory"))
    return Requests(max(0.0, (cpu or 0.0) * 1000.0), max(0.0, mem or 0.0))


def _overhead(pod: Mapping[str, Any]) -> Requests:
    over = pod.get("overhead")
    if not isinstance(over, _MAPS):
        return _NO_REQUESTS
    cpu, mem = parse_quantity(over.get("cpu")) or 0.0, parse_quantity(over.get("memory")) or 0.0
    return Requests(cpu * 1000.0, mem)


def _env_value(v: Any) -> str | None:
    """An env entry's literal value as text (an integer written unquoted too); None else."""
    if isinstance(v, str):
        return v
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _container(field: str, index: int, c: Mapping[str, Any]) -> Container:
    at: Path = (*POD, field, index)
    pre = _map(c.get("lifecycle")).get("preStop")
    env = tuple(
        EnvVar(e["name"], _env_value(e.get("value")))
        for e in _list(c.get("env"))
        if isinstance(e, _MAPS) and isinstance(e.get("name"), str)
    )
    ports = tuple(
        ContainerPort(
            (*at, "ports", j),
            _int(p.get("containerPort")),
            _int(p.get("hostPort")),
            _str(p.get("protocol"), "TCP") or "TCP",
            _str(p.get("hostIP"), "0.0.0.0") or "0.0.0.0",
        )
        for j, p in enumerate(_list(c.get("ports")))
        if isinstance(p, _MAPS)
    )
    mounts = tuple(
        VolumeMount(
            _text(m.get("name")),
            _text(m.get("mountPath")),
            bool(m.get("readOnly")),
            _text(m.get("subPath")),
            (*at, "volumeMounts", j),
        )
        for j, m in enumerate(_list(c.get("volumeMounts")))
        if isinstance(m, _MAPS)
    )
    hook_at: Path = (*at, "lifecycle", "preStop")
    return Container(
        field=field,
        index=index,
        name=_text(c.get("name")),
        image=_text(c.get("image")),
        command=_words(c.get("command")),
        args=_words(c.get("args")),
        env=env,
        ports=ports,
        mounts=mounts,
        pre_stop=Handler.parse(pre, hook_at, HOOK_KINDS) if isinstance(pre, _MAPS) else None,
        readiness=_probe(c.get("readinessProbe"), (*at, "readinessProbe")),
        liveness=_probe(c.get("livenessProbe"), (*at, "livenessProbe")),
        startup=_probe(c.get("startupProbe"), (*at, "startupProbe")),
        sidecar=field == "initContainers" and c.get("restartPolicy") == "Always",
        requests=_requests(c),
    )


def _claim_template(index: int, t: Mapping[str, Any]) -> ClaimTemplate:
    meta, spec = _map(t.get("metadata")), t.get("spec")
    modes = tuple(m for m in _list(_map(spec).get("accessModes")) if isinstance(m, str))
    return ClaimTemplate(
        index=index,
        name=_text(meta.get("name")),
        access_modes=modes,
        class_name=claim_class_name(t),
        class_from_annotation=BETA_STORAGE_CLASS_ANNOTATION in _map(meta.get("annotations")),
        has_spec=isinstance(spec, _MAPS),
    )


def _affinity_term(term: Any, path: Path) -> AffinityTerm | None:
    if not isinstance(term, _MAPS):
        return None
    return AffinityTerm(
        path,
        _text(term.get("topologyKey")),
        term.get("labelSelector"),
        tuple(str(n) for n in _list(term.get("namespaces"))),
        term.get("namespaceSelector") is not None,
        tuple(
            str(k)
            for field in ("matchLabelKeys", "mismatchLabelKeys")
            for k in _list(term.get(field))
        ),
    )


def _affinity(pod: Mapping[str, Any], kind: str) -> tuple[tuple[AffinityTerm, ...], ...]:
    """The required terms and the preferred ones' podAffinityTerm of ``kind``."""
    at: Path = (*POD, "affinity", kind)
    section = _map(_map(pod.get("affinity")).get(kind))
    req = "requiredDuringSchedulingIgnoredDuringExecution"
    pref = "preferredDuringSchedulingIgnoredDuringExecution"
    required = (_affinity_term(t, (*at, req, i)) for i, t in enumerate(_list(section.get(req))))
    preferred = (
        _affinity_term(_map(w).get("podAffinityTerm"), (*at, pref, i, "podAffinityTerm"))
        for i, w in enumerate(_list(section.get(pref)))
    )
    return tuple(t for t in required if t), tuple(t for t in preferred if t)


def _at_least_1(v: Any) -> int:
    n = _int(v)
    return n if n is not None and n >= 1 else 1


def _policy(raw: Any, default: str) -> str:
    """A NodeInclusionPolicy (Honor or Ignore); anything else reads as the default."""
    return raw if raw in ("Honor", "Ignore") else default


def _spread(pod: Mapping[str, Any]) -> tuple[SpreadConstraint, ...]:
    out = []
    for i, c in enumerate(_list(pod.get("topologySpreadConstraints"))):
        if not isinstance(c, _MAPS):
            continue
        when = c.get("whenUnsatisfiable")
        out.append(
            SpreadConstraint(
                (*POD, "topologySpreadConstraints", i),
                _text(c.get("topologyKey")),
                c.get("labelSelector"),
                when if isinstance(when, str) else "DoNotSchedule",
                _at_least_1(c.get("maxSkew")),
                _at_least_1(c.get("minDomains")),
                _policy(c.get("nodeAffinityPolicy"), "Honor"),
                _policy(c.get("nodeTaintsPolicy"), "Ignore"),
                tuple(str(k) for k in _list(c.get("matchLabelKeys"))),
            )
        )
    return tuple(out)


def _requirements(raw: Any, is_field: bool) -> tuple[NodeSelectorRequirement, ...]:
    out = []
    for e in _list(raw):
        em = _map(e)
        op = em.get("operator")
        out.append(
            NodeSelectorRequirement(
                _text(em.get("key")) if isinstance(em.get("key"), str) else "",
                op if isinstance(op, str) else "In",
                tuple(str(v) for v in _list(em.get("values"))),
                is_field,
            )
        )
    return tuple(out)


def _node_affinity(pod: Mapping[str, Any]) -> tuple[NodeSelectorTerm, ...]:
    at: Path = (
        *POD,
        "affinity",
        "nodeAffinity",
        "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms",
    )
    node = _map(_map(pod.get("affinity")).get("nodeAffinity"))
    req = _map(node.get("requiredDuringSchedulingIgnoredDuringExecution"))
    return tuple(
        NodeSelectorTerm(
            (*at, i),
            _requirements(_map(t).get("matchExpressions"), False),
            _requirements(_map(t).get("matchFields"), True),
        )
        for i, t in enumerate(_list(req.get("nodeSelectorTerms")))
    )


class SetSpec(msgspec.Struct, frozen=True):
    """A StatefulSet's own ``spec`` fields, as written: None where the manifest leaves a field
    out (or gives it a type the API server would reject), so a rule can tell an explicit value
    from the default (:class:`embedded_sim.workload.Workload` holds the defaulted values the
    simulator runs). ``fields`` and ``pod_fields`` are the keys the spec and the pod spec set
    (to a value other than null)."""

    replicas: int | None
    service_name: str | None
    selector: Any
    pod_management_policy: str | None
    update_strategy_type: str | None
    partition: int | None
    max_unavailable: Any
    retention_when_deleted: str | None
    retention_when_scaled: str | None
    fields: frozenset[str]
    pod_fields: frozenset[str]
    #: the StatefulSet's own ``metadata.annotations`` (the template's are
    #: :attr:`PodTemplate.annotations`)
    annotations: Mapping[str, Any]
    #: ``ordinals.start``, ``minReadySeconds`` (s), ``revisionHistoryLimit``
    ordinals_start: int | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def parse_spec(statefulset: Mapping[str, Any]) -> SetSpec:
    """The StatefulSet's own spec fields (:class:`SetSpec`; shared as :func:`parse_template`'s
    result is). Never raises."""
    return _parsed(statefulset, SetSpec, _parse_spec)


def _parse_spec(statefulset: Mapping[str, Any]) -> SetSpec:
    spec = _map(statefulset.get("spec"))
    strategy = _map(spec.get("updateStrategy"))
    rolling = _map(strategy.get("rollingUpdate"))
    retention = _map(spec.get("persistentVolumeClaimRetentionPolicy"))
    pod = _map(_map(spec.get("template")).get("spec"))
    return SetSpec(
        replicas=_int(spec.get("replicas")),
        service_name=_opt_str(spec.get("serviceName")),
        selector=spec.get("selector"),
        pod_management_policy=_opt_str(spec.get("podManagementPolicy")),
        update_strategy_type=_opt_str(strategy.get("type")),
        partition=_int(rolling.get("partition")),
        max_unavailable=rolling.get("maxUnavailable"),
        retention_when_deleted=_opt_str(retention.get("whenDeleted")),
        retention_when_scaled=_opt_str(retention.get("whenScaled")),
        fields=frozenset(str(k) for k, v in spec.items() if v is not None),
        pod_fields=frozenset(str(k) for k, v in pod.items() if v is not None),
        annotations=_map(_map(statefulset.get("metadata")).get("annotations")),
        ordinals_start=_int(_map(spec.get("ordinals")).get("start")),
        min_ready_seconds=_int(spec.get("minReadySeconds")),
        revision_history_limit=_int(spec.get("revisionHistoryLimit")),
    )


#: The last models parsed, by the identity of the manifest they were parsed from and their
#: type: the rules and the simulator read the same loaded object, which is not changed after
#: loading, so one parse serves both. Each entry keeps its manifest alive, so an id is not
#: reused while cached.
_PARSED: OrderedDict[tuple[int, type], tuple[Mapping[str, Any], Any]] = OrderedDict()
_PARSED_MAX = 128
_PARSED_LOCK = allocate_lock()  # (threading.Lock, without importing threading)
_T = TypeVar("_T")


def _parsed(
    statefulset: Mapping[str, Any], kind: type[_T], parse: Callable[[Mapping[str, Any]], _T]
) -> _T:
    key = (id(statefulset), kind)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] is statefulset:
        return cast(_T, hit[1])
    parsed = parse(statefulset)
    with _PARSED_LOCK:
        _PARSED[key] = (statefulset, parsed)
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)
    return parsed


def parse_template(statefulset: Mapping[str, Any]) -> PodTemplate:
    """The typed template of a StatefulSet manifest (a mapping as loaded from YAML; not to be
    changed afterwards: the result is shared by whoever parses the same object).

    Never raises: entries that are not mappings are left out (validation names them).
    """
    return _parsed(statefulset, PodTemplate, _parse_template)


def _parse_template(statefulset: Mapping[str, Any]) -> PodTemplate:
    spec = _map(statefulset.get("spec"))
    template = _map(spec.get("template"))
    meta, pod = _map(template.get("metadata")), _map(template.get("spec"))
    containers = tuple(
        _container(field, i, c)
        for field in ("initContainers", "containers")
        for i, c in enumerate(_list(pod.get(field)))
        if isinstance(c, _MAPS)
    )
    volumes = tuple(
        Volume(
            i,
            _text(v.get("name")),
            hp["path"]
            if isinstance(hp := v.get("hostPath"), _MAPS) and isinstance(hp.get("path"), str)
            else None,
            _text(pvc.get("claimName"))
            if isinstance(pvc := v.get("persistentVolumeClaim"), _MAPS)
            else None,
            "emptyDir" in v,
            "ephemeral" in v,
            _text(cm.get("name")) if isinstance(cm := v.get("configMap"), _MAPS) else None,
        )
        for i, v in enumerate(_list(pod.get("volumes")))
        if isinstance(v, _MAPS)
    )
    claims = tuple(
        _claim_template(i, t)
        for i, t in enumerate(_list(spec.get("volumeClaimTemplates")))
        if isinstance(t, _MAPS)
    )
    anti_required, anti_preferred = _affinity(pod, "podAntiAffinity")
    node_name = pod.get("nodeName")
    return PodTemplate(
        node_name=node_name if isinstance(node_name, str) and node_name else None,
        node_selector=_map(pod.get("nodeSelector")),
        grace_period_s=_int(pod.get("terminationGracePeriodSeconds")),
        tolerations=tuple(
            Toleration.parse(t) for t in _list(pod.get("tolerations")) if isinstance(t, _MAPS)
        ),
        anti_affinity_required=anti_required,
        anti_affinity_preferred=anti_preferred,
        affinity_required=_affinity(pod, "podAffinity")[0],
        spread_constraints=_spread(pod),
        node_affinity_required=_node_affinity(pod),
        labels=_map(meta.get("labels")),
        annotations=_map(meta.get("annotations")),
        containers=containers,
        volumes=volumes,
        claim_templates=claims,
        host_network=pod.get("hostNetwork") is True,
        overhead=_overhead(pod),
    )
