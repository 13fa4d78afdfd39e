"""readiness-probe-missing: without a readiness probe, Ready means only "started"."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule

from ._podspec import containers
from ._systems import Recognised, recognise
from ._workload import per_pod_names, serves

WHY = """
Without a readiness probe the kubelet reports a container ready as soon as it is running
(prober_manager.go#UpdatePodStatus), so the pod turns Ready before the application has loaded
data, joined its cluster or caught up with replication. The StatefulSet controller uses Ready
to order start-up under OrderedReady and to pace rolling updates (one pod at a time, each
waiting for the previous to be Ready), so an update can restart every replica in turn while
none has really recovered; PodDisruptionBudgets count such pods as healthy too.
"""
SERVED = """
The pods serve (a declared container port, or a Service with ports that selects them): Service
endpoints list a pod as soon as it is Ready, so clients are sent to it before it can answer.
"""
NOT_SERVED = """
No container declares a port and no Service with ports selects the pods, so no client is sent
to them by a Service: what Ready decides here is only the pace of start-up and rollouts from one
replica to the next (with one replica, nothing: this is then a note, info).
"""
FIX = """
Fix: add a readinessProbe that checks that the member can serve (and has rejoined its
cluster), with a startupProbe for slow starts.
"""


class ReadinessProbeMissing(Rule):
    id = "readiness-probe-missing"
    severity = Severity.WARNING
    fix_delays_ready = True
    other_severities = (Severity.INFO,)
    summary = (
        "no container has a readiness probe: a pod is Ready as soon as it starts, so ordered "
        "start-up, rolling updates and Service endpoints do not wait for the application"
    )
    references = (
        "web: docs/concepts/workloads/pods/pod-lifecycle.md (Container probes)",
        "k8s: pkg/kubelet/prober/prober_manager.go#UpdatePodStatus",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#processReplica",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1 or ctx.is_fragment:
            return
        found = list(containers(ctx.sts))
        if not found or any(c.readiness is not None for c in found):
            return
        names = ", ".join(c.name or "?" for c in found)
        if len(names) > 40:
            names = names[:37] + "..."
        # Ready matters for two things: sending clients (only to a set that serves) and pacing
        # start-up and rollouts from one pod to the next (only with several replicas). A pod
        # that is neither served to nor paced loses nothing without a probe: a note.
        served = serves(ctx)
        severity = Severity.WARNING if served or ctx.replicas > 1 else Severity.INFO
        if ctx.pod_management_policy == "OrderedReady" and ctx.replicas > 1:
            effect = "start-up and rollouts move on as soon as containers run"
            effect += ", not when they serve" if served else ""
        elif served:
            effect = "rollouts move on and clients are sent as soon as containers run"
        elif ctx.replicas > 1:
            effect = "rollouts move on as soon as containers run (no port: no client is sent)"
        else:
            effect = (
                "Ready means only running (no port, one replica: no client or rollout waits on it)"
            )
        msg = f"no readiness probe on any container ({names}): {effect}"
        explanation = WHY + (SERVED if served else NOT_SERVED) + FIX
        main = [c for c in found if c.field == "containers"] or found
        facts: dict[str, FactValue] = {
            "containers": tuple(c.name or "?" for c in found),
            "served": served,
        }
        yield self.finding(
            ctx, ctx.sts.pos(*main[0].path), msg, explanation, severity=severity, facts=facts
        )

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """A TCP readiness probe on the main container's client port (of the ports it declares,
        the first in its system's catalog entry, else the first declared): the kubelet
        reports the container Ready once the port accepts a connection
        (pkg/probe/tcp/tcp.go#DoTCPProbe), a check of this member alone, so it cannot hold a
        cold start waiting for peers. None for a container that declares no TCP port (what
        to probe is the application's to say: advice)."""
        found = [c for c in containers(ctx.sts) if c.field == "containers"]
        system = recognise(ctx)
        if system is not None and system.container is not None:
            found = [system.container]
        if len(found) != 1:
            return ()  # (which container serves is the owner's to say: advice)
        main = found[0]
        ports = [p.container_port for p in main.ports if p.protocol == "TCP" and p.container_port]
        if not ports or not _listens_alone(ctx, system):
            return ()
        if system is not None:
            order = system.system.port_order
            ports.sort(key=lambda p: order.index(p) if p in order else len(order))
        probe = {"tcpSocket": {"port": ports[0]}, "periodSeconds": 10}
        caution = (
            "a pod template change: every pod is replaced once, in a rolling update; a TCP "
            "check says the process listens, not that it has caught up: a probe of the "
            "system's own health command says more"
        )
        edit = Edit((*main.path, "readinessProbe"), probe)
        name = main.name or "the main container"
        return (
            Remedy(f"add a TCP readiness probe on port {ports[0]} to {name}", (edit,), caution),
        )


def _listens_alone(ctx: CheckContext, found: Recognised | None) -> bool:
    """Whether the server can be expected to open its port before its peers run: not a
    catalogued system that elects, replicates to peers or waits for them at a cold start (an
    etcd, a Kafka in KRaft mode, a Galera node opens its client port only once the cluster
    formed: a TCP probe would hold OrderedReady's first pod for ever), and not a set whose
    pods address each other by per-pod DNS names (a peer list: the same wait)."""
    if found is not None:
        s = found.system
        if s.elects or s.cold_start_needs_peers or s.model not in SINGLE_MODELS:
            return False
    service = ctx.sts.get("spec", "serviceName")
    return per_pod_names(ctx, service if isinstance(service, str) else "") is None


#: Replication models whose server starts without peers.
SINGLE_MODELS = frozenset({"single-instance", "independent"})


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ReadinessProbeMissing()]
