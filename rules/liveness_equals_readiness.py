"""liveness-equals-readiness: a liveness probe that fails whenever the pod is merely unready."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import containers
from ._probes import depends_on_peers, is_process_check
from ._systems import recognise
from ._text import paragraph


class LivenessEqualsReadiness(Rule):
    id = "liveness-equals-readiness"
    severity = Severity.WARNING
    other_severities = (Severity.INFO,)
    summary = (
        "a livenessProbe that runs the readiness check and fails no later than it: a replica "
        "that is only unready is restarted (a warning when the check needs peers: every "
        "replica is restarted while they are down)"
    )
    references = (
        "web: docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes.md",
        "web: docs/concepts/workloads/pods/pod-lifecycle.md (Container probes)",
        "k8s: pkg/kubelet/prober/worker.go#doProbe",
        "k8s: pkg/apis/core/v1/defaults.go#SetDefaults_Probe",
        "kubernetes/website#39930",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1:
            return
        for c in containers(ctx.sts):
            live, ready = c.liveness, c.readiness
            if live is None or ready is None or live.handler is None or ready.handler is None:
                continue
            if (live.handler.kind, live.handler.spec) != (ready.handler.kind, ready.handler.spec):
                continue
            if live.gives_up_after_s > ready.gives_up_after_s:
                continue  # the docs' pattern: same endpoint, more patience
            if is_process_check(live):
                continue  # a check that fails only when the process is gone (ZooKeeper ruok)
            name = c.name or "?"
            live_s, ready_s = live.gives_up_after_s, ready.gives_up_after_s
            found = recognise(ctx)
            peers = depends_on_peers(live, found.system if found is not None else None)
            if peers is False:
                continue  # a check the local process answers alone: restarts only that one
            if peers:
                msg = (
                    f"container {name!r}: the livenessProbe runs its readiness check, which "
                    f"needs peers, and gives up after {live_s} s: while peers are down every "
                    "replica is restarted"
                )
            else:
                msg = (
                    f"container {name!r}: the livenessProbe runs its readiness check and gives "
                    f"up after {live_s} s, no later than readiness: an unready replica is "
                    "restarted"
                )

            def explanation(live_s: int = live_s, ready_s: int = ready_s) -> str:
                why = paragraph(
                    f"""The kubelet restarts a container whose liveness probe fails
                    failureThreshold times in a row (prober/worker.go#doProbe), and removes a
                    pod from Service endpoints when its readiness probe fails. Here both run
                    the same check, and liveness gives up after {live_s} s, readiness after
                    {ready_s} s. So every condition that should only take a replica out of
                    rotation (a slow disk, a long compaction, replaying a log after a restart,
                    a lost quorum) restarts it instead, which throws away that progress and, for
                    a quorum system whose members all turn unready together, restarts every
                    member. The Kubernetes task "Configure Liveness, Readiness and Startup Probes"
                    advises, when a liveness probe uses the readiness endpoint, a higher
                    failureThreshold, so that the pod is seen unready for a while before it is
                    killed (kubernetes/website#39930)."""
                )
                fix = paragraph(
                    """Fix: make the liveness probe check only that the process is alive (not
                    that it can serve), or keep the endpoint and give liveness a much higher
                    failureThreshold; use a startupProbe for slow starts."""
                )
                return f"{why}\n\n{fix}\n"

            at = ctx.sts.pos(*live.path)
            facts: dict[str, FactValue] = {
                "container": name,
                "liveness_gives_up_s": live_s,
                "readiness_gives_up_s": ready_s,
            }
            facts["needs_peers"] = bool(peers)
            severity = Severity.WARNING if peers else Severity.INFO
            yield self.finding(ctx, at, msg, explanation, severity=severity, facts=facts)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [LivenessEqualsReadiness()]
