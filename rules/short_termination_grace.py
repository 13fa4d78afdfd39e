"""short-termination-grace: the grace period cuts the system's clean shutdown short."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule

from ._podspec import template
from ._systems import recognise
from ._text import paragraph


class ShortTerminationGrace(Rule):
    id = "short-termination-grace"
    severity = Severity.WARNING
    summary = (
        "terminationGracePeriodSeconds (30 s when unset) is shorter than the time the clean "
        "shutdown of the system the set runs needs (its catalog entry's shutdown.minimum_s): "
        "the kubelet kills it midway"
    )
    references = (
        "web: docs/concepts/workloads/pods/pod-lifecycle.md (Termination of Pods)",
        "k8s: pkg/kubelet/kuberuntime/kuberuntime_container.go#killContainer",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        found = recognise(ctx)
        if found is None or ctx.replicas < 1 or ctx.is_fragment:
            return
        system = found.system
        needed = system.minimum_grace_s
        if needed is None:
            return
        model = template(ctx.sts)
        grace = model.effective_grace_period_s
        if grace >= needed:
            return
        unset = model.grace_period_s is None
        shown = f"{grace} s (unset: the default)" if unset else f"{grace} s"
        what = system.shutdown_what or "a clean shutdown"
        msg = (
            f"{system.id} may need {needed} s to shut down cleanly, and "
            f"terminationGracePeriodSeconds gives it {shown}: the kubelet kills it midway"
        )

        def explanation() -> str:
            why = paragraph(
                f"""ssrisk recognises {system.name} (catalog: {system.origin}). On every pod
                deletion (a rollout, a drain, an eviction, a scale-down) the kubelet sends
                SIGTERM, waits at most terminationGracePeriodSeconds ({grace} s here), then
                kills the containers with SIGKILL. {system.name}'s clean shutdown
                ({what}) may need {needed} s ({system.source("shutdown")}); cut short, the
                member restarts with recovery work to do (log replay, unclean leader
                elections, under-replicated data), which lengthens the very rollout or drain
                that stopped it."""
            )
            fix = paragraph(
                f"""Fix: set terminationGracePeriodSeconds to at least {needed} s (a pod that
                stops sooner is replaced sooner: the grace period is a bound, not a wait)."""
            )
            return f"{why}\n\n{fix}\n"

        at = (
            ctx.sts.pos("spec", "template", "spec", "terminationGracePeriodSeconds")
            if not unset
            else ctx.sts.pos("spec", "template", "spec")
        )
        facts: dict[str, FactValue] = {
            "system": system.id,
            "grace_period_s": grace,
            "shutdown_needs_s": needed,
        }
        yield self.finding(ctx, at, msg, explanation, facts=facts)

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """The grace period the system's clean shutdown needs (its catalog entry's
        shutdown.minimum_s): a bound, not a wait."""
        needed = finding.facts.get("shutdown_needs_s")
        if not isinstance(needed, (int, float)):
            return ()
        seconds = int(-(-needed // 1))  # (whole seconds, rounded up: the API takes integers)
        edit = Edit(("spec", "template", "spec", "terminationGracePeriodSeconds"), seconds)
        return (Remedy(f"set terminationGracePeriodSeconds to {seconds}", (edit,)),)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ShortTerminationGrace()]
