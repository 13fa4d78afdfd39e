"""peer-discovery-not-ready: members find each other through a headless Service that only
publishes Ready pods."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, K8sObject, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.selectors import map_selector_matches

from ._podspec import containers, service, set_spec
from ._probes import readiness_needs_peers
from ._quorum import quorum_system
from ._systems import recognise
from ._text import paragraph
from ._workload import peer_evidence


class PeerDiscoveryNotReady(Rule):
    id = "peer-discovery-not-ready"
    severity = Severity.WARNING
    summary = (
        "pods find their peers through the headless Service, which publishes only Ready pods "
        "(no publishNotReadyAddresses): a cold start of a peer-dependent system can deadlock"
    )
    references = (
        "k8s: pkg/controller/endpointslice/utils.go#podToEndpoint (ready = "
        "PublishNotReadyAddresses || IsPodReady)",
        "web: docs/reference/kubernetes-api/service-resources/service-v1.md "
        "(publishNotReadyAddresses)",
        "web: docs/concepts/workloads/controllers/statefulset.md (Pod Management Policies)",
        "web: www.rabbitmq.com/docs/cluster-formation (Kubernetes peer discovery)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        name = set_spec(ctx.sts).service_name
        if n < 2 or ctx.is_fragment or not isinstance(name, str) or not name:
            return
        found = list(containers(ctx.sts))
        if not any(c.readiness is not None for c in found):
            return  # without a readiness probe a pod is Ready as soon as it runs
        governing = self._governing(ctx, name)
        if governing is None or service(governing).publish_not_ready_addresses:
            return
        where = peer_evidence(ctx.sts, name)
        if where is None:
            return
        known = recognise(ctx)
        needs, probe = readiness_needs_peers(ctx.sts, known.system if known else None)
        system = quorum_system(ctx)
        if needs is False or (needs is None and system is None):
            # a member that reports Ready on its own becomes resolvable on its own: the
            # cluster forms as members come up (an Alertmanager, a ZooKeeper with ruok)
            return
        if needs:
            basis = f"its readiness probe ({probe}) passes only once the member has its peers"
        else:
            what = "a quorum system" if system == "annotation" else f"{system}, a quorum system"
            basis = (
                f"it runs {what}, and its readiness probe ({probe}) is not one known to pass "
                "without peers"
            )
        ordered = ctx.pod_management_policy == "OrderedReady"
        first, second = ctx.pod_name(0), ctx.pod_name(1)
        if ordered:
            msg = (
                f"pods find peers through Service {name!r}, which lists Ready pods only, and "
                f"OrderedReady waits for {first} to be Ready: a cold start can deadlock"
            )
        else:
            ready = "are Ready only with peers" if needs else "may need peers to be Ready"
            msg = (
                f"pods find peers through Service {name!r}, which lists Ready pods only, "
                f"and {ready}: a cold start can deadlock"
            )
        at = governing.pos("spec")
        policy = "OrderedReady" if ordered else "Parallel"

        def explanation() -> str:
            why = paragraph(
                f"""The EndpointSlice controller marks an endpoint ready only when its pod is
                Ready, unless the Service sets publishNotReadyAddresses
                (endpointslice/utils.go#podToEndpoint), and cluster DNS answers the per-pod names
                <pod>.{name} of a headless Service only for ready endpoints. These pods look up
                their peers through {name!r} ({where}), so a member that waits for its peers
                before it reports Ready waits for names that do not resolve yet. This one
                {"does" if needs else "may"}: {basis}."""
            )
            if ordered:
                how = (
                    f"the controller creates {second} only after {first} is Running and Ready, "
                    "so a first start, or a restart of every member after a power cut, waits "
                    f"for ever when {first} needs a peer to become Ready"
                )
            else:
                how = (
                    "every member starts at once, but none can resolve the others until they "
                    "are Ready, which a peer-dependent system (ZooKeeper, etcd, RabbitMQ, "
                    "Galera, Cassandra seeds) reaches only with its peers"
                )
            cold = paragraph(
                f"""With {policy}: {how}. Systems that need no peer to report Ready (a
                readiness probe that only checks the local process, such as ZooKeeper's ruok,
                pg_isready or a TCP connect) are not reported; if this one is such a probe,
                suppress the finding with that reason."""
            )
            fix = paragraph(
                f"""Fix: set publishNotReadyAddresses: true on the headless Service {name!r}
                (clients should use a separate Service that lists Ready pods only){
                    " and podManagementPolicy: Parallel on the StatefulSet" if ordered else ""
                }."""
            )
            return f"{why}\n\n{cold}\n\n{fix}\n"

        yield self.finding(ctx, at, msg, explanation)

    @staticmethod
    def _governing(ctx: CheckContext, name: str) -> K8sObject | None:
        """The headless Service ``name`` of the StatefulSet's namespace that selects its pods
        (headless-service-missing reports the others)."""
        for svc in ctx.inventory.all_named("Service", ctx.sts.namespace, name):
            model = service(svc)
            if model.headless and map_selector_matches(model.selector, ctx.pod_labels):
                return svc
        return None


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PeerDiscoveryNotReady()]
