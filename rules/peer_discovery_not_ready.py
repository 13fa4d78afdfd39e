"""peer-discovery-not-ready: members find each other through a headless Service that only
publishes Ready pods."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ssrisk.embedded_sim.podtemplate import Container

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, K8sObject, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.selectors import map_selector_matches

from ._podspec import containers, service, set_spec
from ._probes import LOCAL_PATHS, PEER_CHECK, local_exec, probe_text
from ._quorum import quorum_system
from ._text import paragraph

#: Environment variable names that carry a peer list or the Service to discover peers with.
_PEER_ENV = re.compile(r"SERVICE|DISCOVERY|PEER|SEED|CLUSTER|MEMBER|JOIN|SERVERS|ENSEMBLE", re.I)


def readiness_needs_peers(sts: K8sObject) -> tuple[bool | None, str]:
    """Whether the readiness probes of ``sts`` need peers to pass: ``(True, probe)`` when one
    is a known cluster check, ``(False, probe)`` when every one is a known local check (a
    TCP connect, ZooKeeper ruok, pg_isready, a root page...), ``(None, probe)`` when ssrisk
    cannot tell (a script of the image). ``probe`` describes the deciding probe."""
    local: list[str] = []
    unknown = ""
    for c in containers(sts):
        probe = c.readiness
        if probe is None:
            continue
        kind, text = probe_text(probe)
        shown = f"{kind} {text}".strip()[:80]
        if PEER_CHECK.search(text):
            return True, shown
        local_check = (
            kind == "tcpSocket"
            or (kind == "exec" and local_exec(text))
            or (kind == "httpGet" and text.split("?", 1)[0] in LOCAL_PATHS)
        )
        if local_check:
            local.append(shown)
        elif not unknown:
            unknown = shown or "a readiness probe"
    if unknown:
        return None, unknown
    return (False, local[0]) if local else (None, "")


def _strings(c: Container) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of a container's command, args and literal env values."""
    for item in c.command:
        yield "command", item
    for item in c.args:
        yield "args", item
    for e in c.env:
        if e.value is not None:
            yield f"env {e.name}", e.value


def peer_evidence(sts: K8sObject, service: str) -> str | None:
    """Where the pod template names its peers through ``service``: a per-pod DNS name of the
    set's own pods (``<name>-<ordinal>.<service>``, ``$(POD_NAME).<service>``; another set's pod
    behind the same Service is not a peer) in a command, argument or env value, or an
    env variable for peer discovery (``K8S_SERVICE_NAME``, ``*_SEEDS``, ...) that names the
    Service; ``None`` when nothing does."""
    dns = word = None  # compiled only for a text that names the Service at all
    for c in containers(sts):
        for where, text in _strings(c):
            if service not in text:
                continue
            if dns is None or word is None:
                own = re.escape(sts.name) + r"-\d+"  # <name>-<ordinal>, or a pod-name variable
                dns = re.compile(
                    r"(?:(?<![\w-])" + own + r"|[)}])\." + re.escape(service) + r"(?![\w-])"
                )
                word = re.compile(r"(?<![\w.-])" + re.escape(service) + r"(?![\w-])")
            if dns.search(text):
                return where
            if where.startswith("env ") and _PEER_ENV.search(where) and word.search(text):
                return where
    return None


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
        needs, probe = readiness_needs_peers(ctx.sts)
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
