"""long-termination-grace: a long terminationGracePeriodSeconds dominates rollouts and drains."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule, RuleOption
from ssrisk.timeline import fmt_duration

from ._podspec import template
from ._systems import recognise

#: A grace period above this many seconds is reported by default (Kubernetes' default is 30 s).
THRESHOLD_S = 300


class LongTerminationGrace(Rule):
    id = "long-termination-grace"
    severity = Severity.WARNING
    summary = (
        f"terminationGracePeriodSeconds above {THRESHOLD_S} s (option max-grace-period-s) and "
        "above what the system's clean shutdown needs: every pod replacement may wait that "
        "long, a rollout up to replicas × grace"
    )
    options = (
        RuleOption(
            "max-grace-period-s",
            THRESHOLD_S,
            0,
            31_536_000,
            "the longest terminationGracePeriodSeconds not reported, in seconds",
        ),
    )
    references = (
        "web: docs/concepts/workloads/pods/pod-lifecycle.md (Termination of Pods)",
        "k8s: pkg/kubelet/pod_workers.go#calculateEffectiveGracePeriod",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#processReplica",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        grace = template(ctx.sts).grace_period_s
        if grace is None or grace <= self.option(ctx, "max-grace-period-s"):
            return
        if ctx.replicas < 1:
            return
        found = recognise(ctx)
        if found is not None and found.system.grace_s is not None and grace <= found.system.grace_s:
            return  # what the system's clean shutdown needs (its catalog entry's shutdown)
        n = max(ctx.replicas, 1)
        worst = n * grace
        msg = f"terminationGracePeriodSeconds {grace}: each pod replacement can wait " + (
            f"{fmt_duration(grace)} plus start-up"
            if n == 1
            else f"{fmt_duration(grace)}; a rolling update of {n} replicas up to "
            f"{fmt_duration(worst)} ({n} × {grace} s) plus start-up"
        )

        def explanation() -> str:
            return f"""
A StatefulSet pod is replaced by deleting it and creating a pod of the same name, and the
new pod can only be created once the old object is gone. The kubelet removes it when the
containers have stopped, which may take up to terminationGracePeriodSeconds ({grace} s) after
SIGTERM (plus 2 s for a preStop hook still running). A rolling update replaces one pod at a
time, so in the worst case it takes replicas × grace = {n} × {grace} s = {fmt_duration(worst)}
plus start-up; a node drain waits the same per evicted pod, and upgrade tooling with a drain
timeout gives up first.

Fix: make the application stop promptly on SIGTERM and set terminationGracePeriodSeconds to
what a clean shutdown really needs.
"""

        at = ctx.sts.pos("spec", "template", "spec", "terminationGracePeriodSeconds")
        facts = {"grace_period_s": grace, "replicas": n, "rollout_wait_s": worst}
        yield self.finding(ctx, at, msg, explanation, facts=facts)

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """The grace the system's clean shutdown needs (its catalog entry's, with a source);
        without one, shortening the grace is advice, not a fix: a shutdown cut short (a
        Cassandra drain) costs more than the wait."""
        found = recognise(ctx)
        needs = found.system.grace_s if found is not None else None
        if found is None or needs is None:
            return ()  # (without a sourced shutdown time, shortening it is advice, not a fix)
        seconds = int(needs)
        edit = Edit(("spec", "template", "spec", "terminationGracePeriodSeconds"), seconds)
        # (a grace period is a ceiling a clean exit ends sooner: lowering it risks a kill in
        # the middle of a shutdown this set may need, which only its owner can tell)
        caution = (
            f"{seconds} s is the catalog's shutdown time for {found.system.name}; a clean exit "
            "ends the grace period sooner anyway, and a shorter one kills a slower shutdown "
            "midway: measure this set's before lowering it"
        )
        return (
            Remedy(
                f"set terminationGracePeriodSeconds to {seconds}", (edit,), caution, advice=True
            ),
        )


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [LongTerminationGrace()]
