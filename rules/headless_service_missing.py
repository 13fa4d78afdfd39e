"""headless-service-missing: the governing Service named by serviceName is absent or unusable."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, K8sObject, Position, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.selectors import map_selector_matches

from ._podspec import service, set_spec
from ._workload import per_pod_names

#: What is lost, by whether something addresses the pods by name (see
#: :meth:`HeadlessServiceMissing._finding`).
LOST = "the pods get no per-pod DNS names"
LOST_UNUSED = "no per-pod DNS names, which nothing here is known to use"


class HeadlessServiceMissing(Rule):
    id = "headless-service-missing"
    severity = Severity.WARNING
    other_severities = (Severity.INFO,)
    summary = (
        "serviceName names no Service in the namespace, a Service that is not headless, or one "
        "whose selector does not select the pods: no stable per-pod DNS names (a warning where "
        "the system or a container addresses pods by them)"
    )
    references = (
        "web: docs/concepts/workloads/controllers/statefulset.md (Stable Network ID)",
        "web: docs/concepts/services-networking/dns-pod-service.md (A/AAAA records)",
        "k8s: pkg/controller/endpointslice/reconciler.go (hostname from pod.spec.hostname and "
        "subdomain)",
        "k8s: pkg/controller/statefulset/stateful_set_utils.go#initIdentity",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1:
            return
        name = set_spec(ctx.sts).service_name
        ns = ctx.sts.namespace or "default"
        if not isinstance(name, str) or not name:
            if ctx.is_fragment:
                return  # a patch that leaves serviceName to the object it patches
            at = ctx.sts.pos("spec", "serviceName")
            yield self._finding(ctx, at, "serviceName is not set: {lost}", name or "")
            return
        at = ctx.sts.pos("spec", "serviceName")
        candidates = ctx.inventory.all_named("Service", ctx.sts.namespace, name)
        if not candidates:
            elsewhere = sorted(
                {s.namespace or "default" for s in ctx.inventory.services_named(name)}
            )
            # (at most three named: thousands of namespaces must not make the message long)
            shown = ", ".join(elsewhere[:3])
            more = f" and {len(elsewhere) - 3} more" if len(elsewhere) > 3 else ""
            where = f" (there is one in namespace {shown}{more})" if elsewhere else ""
            yield self._finding(
                ctx,
                at,
                f"serviceName {name!r} names no Service in namespace {ns}{where}: {{lost}}",
                name,
                _where_facts(ns, elsewhere),
            )
            return
        problems = [self._problem(svc, ctx.pod_labels, name) for svc in candidates]
        if any(p is None for p in problems):
            return  # one of the Services of that name is good (the others may be other apps')
        same_file = [
            p for svc, p in zip(candidates, problems, strict=True) if svc.path == ctx.sts.path
        ]
        problem = (same_file or problems)[0]
        assert problem is not None
        yield self._finding(
            ctx,
            at,
            f"{problem}: {{lost}}",
            name,
        )

    @staticmethod
    def _problem(svc: K8sObject, labels: Mapping[str, Any], name: str) -> str | None:
        """Why ``svc`` cannot govern the StatefulSet's pods, or ``None`` when it can."""
        model = service(svc)
        if not model.headless:
            shown = model.cluster_ip if model.cluster_ip is not None else "unset"
            return f"Service {name!r} is not headless (clusterIP {shown})"
        selector = model.selector
        if not map_selector_matches(selector, labels):
            shown = ", ".join(f"{k}={v}" for k, v in selector.items()) if selector else "none"
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            return f"headless Service {name!r} selects {shown}, not these pods"
        return None

    def _finding(
        self,
        ctx: CheckContext,
        at: Position,
        template: str,
        name: str,
        facts: Mapping[str, FactValue] | None = None,
    ) -> Finding:
        """The finding at ``at``; ``template``'s ``{lost}`` says what is lost. Only per-pod DNS
        names depend on the governing Service: the StatefulSet controller creates the pods
        without it (stateful_set_utils.go#initIdentity sets hostname and subdomain). Where the
        catalogued system's members address each other by those names, or a container names
        one, a warning; else nothing is known to use them (a single-instance database reached
        through a ClusterIP Service, a ring that gossips pod IPs): info."""
        why = per_pod_names(ctx, name)
        served = why is not None
        msg = template.replace("{lost}", LOST if served else LOST_UNUSED)

        def explanation() -> str:
            usage = (
                f"""
Here {why}, so peers or clients that look one up get NXDOMAIN: a warning.
"""
                if served
                else """
Nothing here is known to address the pods by those names: the system is not one whose members
use per-pod DNS names (rules/systems/) and no container names one (such as
$(POD_NAME).<serviceName> or <name>-0.<serviceName>), so this is a note (info). Name the
system with the annotation ssrisk.io/system where ssrisk does not recognise it.
"""
            )
            return f"""
A StatefulSet gives each pod the hostname {ctx.pod_name(0)} and the subdomain serviceName, but
the DNS records {ctx.pod_name(0)}.<serviceName>.<namespace>.svc only exist when a headless
Service (clusterIP: None) of that name, in the same namespace, selects the pods: the
EndpointSlice controller publishes each selected pod with its hostname, and cluster DNS serves
those records. Without them replicas cannot find each other by name, clients cannot reach a
given ordinal, and after a failover the peers keep pointing at nothing.

The Kubernetes documentation states it as a limitation: StatefulSets need a headless Service
responsible for the network identity of the pods, and you must create it ("Limitations" and
"Stable Network ID" in docs/concepts/workloads/controllers/statefulset.md). Only those names
depend on it: the StatefulSet controller creates the pods and sets their hostname and
subdomain whether or not the Service exists (stateful_set_utils.go#initIdentity).
{usage}
If the Service is in another file, check the files together (or name it with --context).

Fix: create a Service named {name or "after spec.serviceName"} in the StatefulSet's namespace
with clusterIP: None and a selector matching the pod template labels (clusterIP cannot be
changed on an existing Service: create a second, headless one and point serviceName at it).
"""

        return self.finding(
            ctx,
            at,
            msg,
            explanation,
            severity=Severity.WARNING if served else Severity.INFO,
            facts={"service": name, "addressed_by_name": served, **(facts or {})},
        )


def _where_facts(namespace: str, elsewhere: Sequence[str]) -> dict[str, FactValue]:
    """The facts of a missing Service's message: its namespace and where one of that name is."""
    facts: dict[str, FactValue] = {"namespace": namespace, "namespaces_with_it": len(elsewhere)}
    if len(elsewhere) > 3:
        facts["more_namespaces"] = len(elsewhere) - 3
    return facts


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [HeadlessServiceMissing()]
