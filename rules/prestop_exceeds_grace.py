"""prestop-exceeds-grace: a preStop sleep that uses up the whole termination grace period."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import POD, as_int, containers, grace_period_s

_SLEEP = re.compile(r"(?:^|[\s;&|(/])sleep\s+(\d+(?:\.\d+)?)([smh]?)(?=$|[\s;&|)])")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600}


def sleep_seconds(command: Any) -> float | None:
    """Total seconds slept by ``sleep N`` calls in an exec command (``None`` if none)."""
    if isinstance(command, list):
        text = " ".join(str(c) for c in command)
    elif isinstance(command, str):
        text = command
    else:
        return None
    found = [float(v) * _UNIT[u] for v, u in _SLEEP.findall(text)]
    return sum(found) if found else None


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
        for field, i, c in containers(ctx.sts):
            pre = (
                c.get("lifecycle", {}).get("preStop")
                if isinstance(c.get("lifecycle"), Mapping)
                else None
            )
            if not isinstance(pre, Mapping):
                continue
            base = (*POD, field, i, "lifecycle", "preStop")
            secs: float | None = None
            if isinstance(pre.get("sleep"), Mapping):
                secs = as_int(pre["sleep"].get("seconds"))
                at = ctx.sts.pos(*base, "sleep", "seconds")
            elif isinstance(pre.get("exec"), Mapping):
                secs = sleep_seconds(pre["exec"].get("command"))
                at = ctx.sts.pos(*base, "exec", "command")
            if secs is None or secs < grace:
                continue
            shown = int(secs) if secs == int(secs) else secs
            msg = (
                f"container {c.get('name', '?')!r} sleeps {shown} s in preStop but "
                f"terminationGracePeriodSeconds is {grace}: no time is left for a clean shutdown"
            )

            def explanation(shown: float = shown) -> str:  # bound: runs after the loop
                return f"""
The preStop hook runs before SIGTERM and its time counts against the pod's grace period
({grace} s here). When the hook is still running at the end of the grace period the kubelet
grants a one-time 2 s extension and then kills the containers (pod-lifecycle docs,
"Termination of Pods"; kuberuntime_container.go#killContainer). A sleep of {shown} s leaves
the application no time to flush data, leave its cluster or hand over leadership, so every
rolling update, drain and scale-down ends in an unclean kill.

Fix: make the preStop sleep a few seconds (enough for endpoints to drop the pod) and set
terminationGracePeriodSeconds to the sleep plus the time a clean shutdown needs.
"""

            yield self.finding(ctx, at, msg, explanation)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PreStopExceedsGrace()]
