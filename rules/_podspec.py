"""Reading the pod template of a StatefulSet the way Kubernetes reads it (helpers for rules).

Nothing here reports anything; the rule modules decide what is a risk.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import msgspec
from ssrisk.embedded_sim import workload as _model
from ssrisk.embedded_sim.disruption import DisruptionBudget, parse_int_or_percent
from ssrisk.embedded_sim.objects import PersistentVolume, Service
from ssrisk.embedded_sim.podtemplate import (
    Container,
    PodTemplate,
    SetSpec,
)
from ssrisk.embedded_sim.selectors import selects
from ssrisk.embedded_sim.workload import Toleration

from ssrisk.model import FORGOTTEN, K8sObject

if TYPE_CHECKING:
    from ssrisk.embedded_sim.storage import ClaimStorage

    from ssrisk.rule import CheckContext

#: Path of the pod spec inside a StatefulSet.
POD = ("spec", "template", "spec")

#: The well-known node labels and taints, the model's (embedded_sim/workload.py).
HOSTNAME_KEY = _model.HOSTNAME_KEY
ZONE_KEYS = _model.ZONE_KEYS
UNREACHABLE = _model.TAINT_UNREACHABLE
NOT_READY = _model.TAINT_NOT_READY
OUT_OF_SERVICE = _model.TAINT_OUT_OF_SERVICE
#: kube-apiserver --default-unreachable-toleration-seconds / --default-not-ready-toleration-seconds
DEFAULT_TOLERATION_S = _model.DEFAULT_TOLERATION_S


def as_int(value: Any) -> int | None:
    """``value`` if it is a YAML integer (not a bool), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def minor(kube_version: str) -> int:
    """The minor number of ``"1.NN"`` or ``"1.NN.P"`` (37 when unreadable)."""
    parts = kube_version.split(".")
    try:
        return int(parts[1])
    except (IndexError, ValueError):
        return 37


def node_monitor_grace_period_s(kube_version: str) -> int:
    """kube-controller-manager --node-monitor-grace-period default for ``kube_version`` (the
    model's version data, :func:`ssrisk.embedded_sim.versions.version_defaults`: 40 s up to
    1.31, 50 s from 1.32, kubernetes/kubernetes#126287)."""
    from ssrisk.embedded_sim.versions import version_defaults

    try:
        return int(version_defaults(kube_version).node_monitor_grace_period_s)
    except ValueError:  # (an unreadable version reads as the newest, as minor() does)
        return int(version_defaults(f"1.{minor(kube_version)}").node_monitor_grace_period_s)


def grace_period_s(sts: K8sObject) -> int:
    """The grace period a pod of ``sts`` is deleted with, in seconds (the model's
    :attr:`PodTemplate.effective_grace_period_s`: 30 when unset, 1 when negative)."""
    return template(sts).effective_grace_period_s


def template(sts: K8sObject) -> PodTemplate:
    """The typed pod and claim templates of ``sts`` (the model's, parsed once per object)."""
    found = sts.__dict__.get("_template")  # (read by nearly every rule: no call when kept)
    if found is None or found is FORGOTTEN:
        return sts.pod_template()
    return cast(PodTemplate, found)


def set_spec(sts: K8sObject) -> SetSpec:
    """The StatefulSet's own spec fields as written (the model's, parsed once per object)."""
    return sts.set_spec()


def containers(sts: K8sObject) -> tuple[Container, ...]:
    """Every container and restartable init container (a sidecar, ``restartPolicy: Always``,
    KEP-753) of the template, sidecars first."""
    return template(sts).running


# --- tolerations -----------------------------------------------------------------------------


class Eviction(msgspec.Struct, frozen=True):
    """When the taint eviction controller deletes a pod for one NoExecute node taint.

    ``after_s`` is ``None`` when the pod tolerates the taint for ever, ``0`` when it does not
    tolerate it at all. ``index`` is the toleration that decides it (``None`` for the default
    added by admission), ``defaulted`` whether the DefaultTolerationSeconds admission plugin
    adds the 300 s toleration.
    """

    taint: str
    after_s: int | None
    index: int | None
    defaulted: bool


def tolerations(sts: K8sObject) -> tuple[Toleration, ...]:
    """The template's tolerations as the model reads them (:meth:`Toleration.parse`; an entry
    that is no mapping tolerates nothing), in order."""
    return template(sts).tolerations


def eviction_for(sts: K8sObject, taint: str, default_s: float = DEFAULT_TOLERATION_S) -> Eviction:
    """When a pod of ``sts`` is deleted after the NoExecute taint ``taint`` appears.

    ``default_s`` is the toleration DefaultTolerationSeconds adds (kube-apiserver
    --default-unreachable-toleration-seconds / --default-not-ready-toleration-seconds, 300 s
    unless the cluster profile says otherwise); a whole number of seconds is returned as int.

    Sources: admission as in :meth:`Toleration.suppresses_default` (its tolerations are
    appended after the pod's own); k8s:
    pkg/controller/tainteviction/taint_eviction.go#processPodOnNode, which takes for each
    taint only the *first* toleration of the list that tolerates it
    (pkg/apis/core/v1/helper/helpers.go#GetMatchingTolerations), then #getMinTolerationTime
    (a NoExecute taint that is not tolerated deletes at once; a tolerationSeconds <= 0 means
    now; none means never).
    """
    tols = tolerations(sts)
    defaulted = not any(t.suppresses_default(taint) for t in tols)
    matching: list[tuple[int | None, float | None]] = [
        (i, t.toleration_seconds) for i, t in enumerate(tols) if t.tolerates(taint, "", "NoExecute")
    ]
    if defaulted:
        matching.append((None, default_s))
    if not matching:
        return Eviction(taint, 0, None, defaulted)
    index, secs = matching[0]
    if secs is None:
        return Eviction(taint, None, index, defaulted)
    whole = int(secs) if float(secs).is_integer() else math.ceil(secs)
    return Eviction(taint, max(whole, 0), index, defaulted)


def tolerated_for_ever(sts: K8sObject, taint: str, value: str = "") -> bool:
    """Whether pods of ``sts`` tolerate the NoExecute taint ``taint=value`` without any
    tolerationSeconds, so the taint never deletes them: the first toleration that tolerates it
    decides (k8s: pkg/apis/core/v1/helper/helpers.go#GetMatchingTolerations, then
    taint_eviction.go#getMinTolerationTime). No admission default applies: use
    :func:`eviction_for` for the unreachable and not-ready taints."""
    matching = [t for t in tolerations(sts) if t.tolerates(taint, value, "NoExecute")]
    return bool(matching) and matching[0].toleration_seconds is None


# --- selectors and spreading -----------------------------------------------------------------


class Spread(msgspec.Struct, frozen=True):
    """How a template limits replicas per topology domain.

    ``max_per_domain`` is 1 for a required anti-affinity (``anti``), ``maxSkew`` for a
    DoNotSchedule topology spread constraint, ``None`` when nothing limits it. ``path`` is the
    field that does it (or the soft one that does not), for positions. ``min_domains`` is the
    constraint's ``minDomains`` (1 when unset, as the scheduler reads it: k8s: pkg/scheduler/
    framework/plugins/podtopologyspread/common.go#filterTopologySpreadConstraints).
    """

    key: str
    max_per_domain: int | None
    path: tuple[str | int, ...] | None
    soft: tuple[str | int, ...] | None
    min_domains: int = 1
    anti: bool = False


def spread_over(sts: K8sObject, keys: tuple[str, ...], labels: Mapping[str, Any]) -> Spread:
    """The strongest hard limit on replicas per domain of topology ``keys`` in the template.

    Sources: required podAntiAffinity terms are filters (k8s: pkg/scheduler/framework/plugins/
    interpodaffinity/filtering.go); topologySpreadConstraints with whenUnsatisfiable
    DoNotSchedule are filters, ScheduleAnyway only scores (k8s: pkg/scheduler/framework/
    plugins/podtopologyspread/filtering.go); preferred terms only score.
    """
    best: int | None = None
    path: tuple[str | int, ...] | None = None
    soft: tuple[str | int, ...] | None = None
    min_domains = 1
    model = template(sts)
    for term in model.anti_affinity_required:
        if term.topology_key in keys and term.selects_own_pods(labels, sts.namespace):
            best, path = 1, term.path
            break
    for term in model.anti_affinity_preferred:
        if term.topology_key in keys and soft is None:
            soft = term.path[:-2]  # (the preferred list, as before)
    for c in model.spread_constraints:
        if c.topology_key not in keys or not selects(c.label_selector, labels):
            continue
        if not c.hard:
            if soft is None:
                soft = (*c.path, "whenUnsatisfiable")
            continue
        if best is None or c.max_skew < best:
            best, path = c.max_skew, c.path
            min_domains = c.min_domains
    is_anti = path is not None and "podAntiAffinity" in path
    return Spread(keys[0], best, path, soft, 1 if is_anti else min_domains, is_anti)


def host_port_path(sts: K8sObject) -> tuple[str | int, ...] | None:
    """Where the template binds a port on the node (a container's ``hostPort``, or
    ``hostNetwork: true`` with a containerPort), else ``None``. The scheduler's NodePorts filter
    (k8s: pkg/scheduler/framework/plugins/nodeports/node_ports.go#Filter) then admits one pod of
    the set per node, as a required anti-affinity on the hostname would."""
    ports = template(sts).host_ports
    return ports[0].path if ports else None


def colocation_path(sts: K8sObject, labels: Mapping[str, Any]) -> tuple[str | int, ...] | None:
    """A required pod affinity on the hostname that selects the set's own pods: the scheduler's
    InterPodAffinity filter then puts every replica on the node of the first one
    (k8s: pkg/scheduler/framework/plugins/interpodaffinity/filtering.go#satisfyPodAffinity)."""
    for term in template(sts).affinity_required:
        if term.topology_key == HOSTNAME_KEY and term.selects_own_pods(labels, sts.namespace):
            return term.path
    return None


def pinned_hostname(sts: K8sObject) -> tuple[str, tuple[str | int, ...]] | None:
    """The one node every pod is tied to by ``nodeName``, a ``kubernetes.io/hostname``
    nodeSelector, or a required node affinity allowing a single hostname; else ``None``."""
    return sts.memo("pinned_hostname", lambda: _pinned_hostname(sts))


def _pinned_hostname(sts: K8sObject) -> tuple[str, tuple[str | int, ...]] | None:
    model = template(sts)
    if model.node_name:
        return model.node_name, (*POD, "nodeName")
    sel = model.node_selector.get(HOSTNAME_KEY)
    if isinstance(sel, (str, int)) and str(sel):
        return str(sel), (*POD, "nodeSelector", HOSTNAME_KEY)
    terms = model.node_affinity_required
    if not terms:
        return None
    hosts: set[str] = set()
    first: tuple[str | int, ...] | None = None
    for term in terms:  # terms are ORed: every term must pin to a hostname
        found = None
        for ei, e in enumerate(term.match_expressions):
            if e.key == HOSTNAME_KEY and e.operator == "In" and len(e.values) == 1:
                found = e.values[0]
                if first is None:
                    first = (*term.path, "matchExpressions", ei)
        if found is None:
            return None
        hosts.add(found)
    if len(hosts) == 1 and first is not None:
        return hosts.pop(), first
    return None


# --- storage ---------------------------------------------------------------------------------


def claim_storage(ctx: CheckContext, index: int) -> ClaimStorage | None:
    """How the volumes of ``spec.volumeClaimTemplates[index]`` behave, resolved exactly as the
    simulator resolves them (``embedded_sim/storage.py``: the class from the beta annotation or
    ``storageClassName``, the StorageClass and PersistentVolume objects of the input, known
    node-local class names, else the cluster profile's assumption). ``None`` for a template that
    is not a mapping."""
    return ctx.memo(("claim_storage", index), lambda: _claim_storage(ctx, index))


def _claim_storage(ctx: CheckContext, index: int) -> ClaimStorage | None:
    claim = next((t for t in template(ctx.sts).claim_templates if t.index == index), None)
    if claim is None:
        return None
    from ssrisk.embedded_sim.storage import resolve_claim

    classes, volumes = ctx.inventory.storage_inputs([claim.class_name])
    return resolve_claim(
        claim.class_name,
        claim.access_modes or ("ReadWriteOnce",),
        claim.name or f"#{index}",
        classes,
        volumes,
        ctx.effective_profile,
    )


# --- Services --------------------------------------------------------------------------------


def service(svc: K8sObject) -> Service:
    """The typed model of a Service (:class:`ssrisk.embedded_sim.objects.Service`), parsed
    once per object."""
    return svc.memo("service", lambda: Service.from_object(svc.data))


def is_headless(svc: K8sObject) -> bool:
    """Whether a Service is headless (the model's reading)."""
    return service(svc).headless


def persistent_volume(pv: K8sObject) -> PersistentVolume:
    """The typed model of a PersistentVolume, parsed once per object."""
    return pv.memo("persistent-volume", lambda: PersistentVolume.from_object(pv.data))


# --- PodDisruptionBudgets --------------------------------------------------------------------


def scaled(value: Any, total: int) -> int | None:
    """An int-or-percent value scaled to ``total``, rounding up, as the disruption controller
    does (:mod:`ssrisk.embedded_sim.disruption`). ``None`` for what the API server rejects."""
    amount = parse_int_or_percent(value)
    return None if amount is None else amount.scaled(total, round_up=True)


class Budget(msgspec.Struct, frozen=True):
    """What a PDB allows over a StatefulSet of ``replicas``: the model's budget
    (:class:`ssrisk.embedded_sim.disruption.DisruptionBudget`) read for that scale.

    ``field`` names the field it comes from (``minAvailable``, ``maxUnavailable`` or ``None``
    when neither is set, which allows no eviction: disruption.go#updatePdbStatus).
    """

    model: DisruptionBudget
    replicas: int

    @property
    def field(self) -> str | None:
        return self.model.field

    @property
    def raw(self) -> Any:
        return self.model.raw

    @property
    def desired_healthy(self) -> int:
        return self.model.desired_healthy(self.replicas)

    def allowed(self, healthy: int) -> int:
        """disruptionsAllowed with ``healthy`` pods Ready."""
        return self.model.allowed(healthy, self.replicas)


def budget(pdb: K8sObject, replicas: int) -> Budget | None:
    """The budget of ``pdb`` over a StatefulSet with ``replicas`` (``None`` if a budget field
    holds what the API server rejects). No API version defaults a budget: one that sets
    neither field allows no eviction (see :mod:`ssrisk.embedded_sim.disruption`)."""
    model = pdb.memo("budget", lambda: DisruptionBudget.from_object(pdb.data))
    return Budget(model, replicas) if model.readable else None
