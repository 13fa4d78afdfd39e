"""liveness-equals-readiness: a liveness probe that fails whenever the pod is merely unready."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import POD, as_int, containers
from ._probes import is_process_check
from ._text import paragraph

HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
#: Probe defaults (k8s: pkg/apis/core/v1/defaults.go, SetDefaults_Probe).
DEFAULTS = {"periodSeconds": 10, "failureThreshold": 3, "timeoutSeconds": 1}


def _handler(probe: Mapping[str, Any]) -> tuple[str, Any] | None:
    for key in HANDLERS:
        if key in probe:
            return key, probe[key]
    return None


def _value(probe: Mapping[str, Any], key: str) -> int:
    value = as_int(probe.get(key))
    return value if value is not None and value > 0 else DEFAULTS[key]


def gives_up_by(probe: Mapping[str, Any]) -> int:
    """Seconds of consecutive failures after which the kubelet acts on ``probe``:
    failureThreshold × periodSeconds (prober/worker.go#doProbe)."""
    return _value(probe, "failureThreshold") * _value(probe, "periodSeconds")


class LivenessEqualsReadiness(Rule):
    id = "liveness-equals-readiness"
    severity = Severity.WARNING
    summary = (
        "a livenessProbe that runs the readiness check and fails no later than it: a replica "
        "that is only unready (busy, catching up, without quorum) is restarted"
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
        for field, i, c in containers(ctx.sts):
            live, ready = c.get("livenessProbe"), c.get("readinessProbe")
            if not isinstance(live, Mapping) or not isinstance(ready, Mapping):
                continue
            handler = _handler(live)
            if handler is None or handler != _handler(ready):
                continue
            if gives_up_by(live) > gives_up_by(ready):
                continue  # the docs' pattern: same endpoint, more patience
            if is_process_check(live):
                continue  # a check that fails only when the process is gone (ZooKeeper ruok)
            name = str(c.get("name", "?"))
            msg = (
                f"container {name!r}: the livenessProbe is its readiness check and gives up as "
                "soon: an unready replica is restarted, not left to recover"
            )
            live_s, ready_s = gives_up_by(live), gives_up_by(ready)

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

            at = ctx.sts.pos(*POD, field, i, "livenessProbe")
            yield self.finding(ctx, at, msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [LivenessEqualsReadiness()]
