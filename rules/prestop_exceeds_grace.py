"""prestop-exceeds-grace: a preStop sleep that uses up the whole termination grace period."""

from __future__ import annotations

import math
from collections.abc import Iterator

from ssrisk.embedded_sim.lazyre import lazy

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import containers, grace_period_s, template


class PreStopExceedsGrace(Rule):
    id = "prestop-exceeds-grace"
    severity = Severity.WARNING
    summary = (
        "a preStop sleep (exec sleep or the sleep action) as long as the termination grace "
        "period or longer: the application gets no time to shut down cleanly"
    )
    references = (
        "web: docs/concepts/workloads/pods/pod-lifecycle.md (Termination of Pods)",
        "web: docs/concepts/containers/container-lifecycle-hooks.md",
        "k8s: pkg/kubelet/kuberuntime/kuberuntime_container.go#killContainer",
        "KEP-3960 (PodLifecycleSleepAction)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1:
            return
        grace = grace_period_s(ctx.sts)
        for c in containers(ctx.sts):
            pre = c.pre_stop
            if pre is None:
                continue
            secs = pre.sleeps_s
            at = ctx.sts.pos(*pre.path, "seconds" if pre.kind == "sleep" else "command")
            if secs is None or secs < grace:
                continue
            if pre.kind == "exec" and _signals_first(pre.command_line):
                continue  # the hook starts the shutdown itself (pkill -USR1), then waits
            if math.isinf(secs):
                sleeps, a_sleep = "for ever (sleep infinity)", "A sleep that never ends"
            else:
                shown = int(secs) if secs == int(secs) else secs
                sleeps, a_sleep = f"{shown} s", f"A sleep of {shown} s"
            written = template(ctx.sts).grace_period_s
            grace_text = (
                f"{grace}"
                if written == grace or written is None
                else (f"{written}, read as {grace}")
            )
            msg = (
                f"container {c.name or '?'!r} sleeps {sleeps} in preStop but "
                f"terminationGracePeriodSeconds is {grace_text}: no time is left for a clean "
                "shutdown"
            )

            def explanation(a_sleep: str = a_sleep) -> str:  # bound: runs after the loop
                return f"""
The preStop hook runs before SIGTERM and its time counts against the pod's grace period
({grace} s here). When the hook is still running at the end of the grace period the kubelet
grants a one-time 2 s extension and then kills the containers (pod-lifecycle docs,
"Termination of Pods"; kuberuntime_container.go#killContainer). {a_sleep} leaves
the application no time to flush data, leave its cluster or hand over leadership, so every
rolling update, drain and scale-down ends in an unclean kill.

Fix: make the preStop sleep a few seconds (enough for endpoints to drop the pod) and set
terminationGracePeriodSeconds to the sleep plus the time a clean shutdown needs.
"""

            facts = {
                "container": c.name or "?",
                "sleep_s": None if math.isinf(secs) else shown,
                "grace_period_s": grace,
                **({"written_grace_period_s": written} if grace_text != f"{grace}" else {}),
            }
            yield self.finding(ctx, at, msg, explanation, facts=facts)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PreStopExceedsGrace()]


_SIGNAL = lazy(r"\b(?:kill|pkill|killall)\b")
_SLEEP = lazy(r"\bsleep\b")


def _signals_first(command: str) -> bool:
    """Whether a preStop command signals a process before it sleeps (``pkill -10 memcached;
    sleep 60``: the application's clean shutdown starts at once, inside the hook, and has the
    whole grace period, so the long sleep only keeps the container until the kill)."""
    signal, sleep = _SIGNAL.search(command), _SLEEP.search(command)
    return signal is not None and (sleep is None or signal.start() < sleep.start())
