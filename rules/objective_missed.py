"""objective-missed: a recovery objective of the configuration that the simulation misses, where
no other rule names the manifest field that causes it."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Position, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration

from ._objectives import CAUSES, Assessment, assess, remediation_facts, remediation_phrase
from ._podspec import POD, containers, set_spec, template
from ._sim import timeline_block
from ._text import paragraph
from ._workload import nothing_at_stake

#: What the scenarios are called in messages.
WORDS = {
    "node-loss": "node loss",
    "zone-loss": "zone loss",
    "node-drain": "node drain",
    "rolling-update": "rolling update",
    "bad-rollout": "bad rollout",
}


class ObjectiveMissed(Rule):
    id = "objective-missed"
    severity = Severity.WARNING
    #: info: one replica that neither serves nor stores (as single-replica rates it)
    other_severities = (Severity.INFO,)
    summary = (
        "a recovery objective (objectives: in the configuration) that the simulation misses, "
        "quoted against the simulated figure, with the manifest field that decides it"
    )
    references = (
        "web: docs/concepts/workloads/pods/disruptions.md",
        "web: docs/concepts/scheduling-eviction/topology-spread-constraints.md",
        "web: docs/tasks/run-application/configure-pdb.md",
        "web: docs/concepts/workloads/controllers/statefulset.md",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1 or ctx.is_fragment:
            return
        for scenario in CAUSES:
            objective = ctx.objectives[scenario]
            if not objective.describe(1):
                continue  # nothing set for it
            a = assess(ctx, scenario)
            if a is None or not a.missed:
                continue
            field, at = self._deciding(ctx, scenario, a)
            how = remediation_phrase(ctx) if scenario == "node-loss" else ""
            head = f"{WORDS[scenario]}{' ' + how if how else ''}"
            facts = {
                **(remediation_facts(ctx) if how else {}),
                **a.objective_facts(),
                "decided_by": field,
            }
            if scenario == "bad-rollout":
                figure = "a revert does not repair it without deleting pods"
                facts["scenario"] = scenario
            elif a.slow:
                goal = a.result.goal
                if scenario == "node-drain":
                    took = goal.duration_s if goal is not None else None
                else:
                    took = a.result.time_to_recovery_s
                figure = "never completes" if took is None else f"took {fmt_duration(took)}"
                facts.update(scenario=scenario, took_s=took)
            else:
                figure = a.figure()
                facts.update(a.facts())
            msg = f"{head}: {figure} (objective {a.versus()}); decided by {field}"

            def explanation(a: Assessment = a, scenario: str = scenario, field: str = field) -> str:
                objective_text = ctx.objectives[scenario].describe(a.replicas)
                why = paragraph(
                    f"""The configuration's {scenario} objective is {objective_text}. The
                    simulation of {a.scenario} on Kubernetes {ctx.kube_version} misses it:
                    {a.figure()}. No other rule names its cause in the manifest, so this finding
                    points at the field that decides the figure: {field}. The simulated
                    placement is the worst the scheduling constraints allow."""
                )
                fix = paragraph(
                    f"""Fix: change {field} so that the simulated figure meets the objective
                    (ssrisk simulate --scenario {a.scenario} shows the whole timeline), state
                    what the platform does about it in the profile (node-remediation), or
                    relax the objective in the configuration if the set can live with it."""
                )
                return f"{why}\n{timeline_block(ctx, a.result)}\n{fix}\n"

            yield self.finding(
                ctx,
                at,
                msg,
                explanation,
                echo_of=self._causes(ctx, scenario, a),
                severity=Severity.INFO if ctx.replicas == 1 and nothing_at_stake(ctx) else None,
                facts=facts,
            )

    @staticmethod
    def _causes(ctx: CheckContext, scenario: str, a: Assessment) -> tuple[str, ...]:
        """The rules whose finding states the cause of this miss (of :data:`CAUSES`): placement
        only when more than one replica went at once, the recovery rules only when the miss is
        the recovery time, the rollout rules only for rollouts."""
        placement = {"replicas-share-failure-domain", "node-pinned-storage"}
        recovery = {
            "eviction-disabled-by-toleration",
            "no-automatic-failover",
            "rwo-volume-reattach",
            "zonal-volume-pinning",
            "node-pinned-storage",
        }
        out = []
        for rule_id in CAUSES[scenario]:
            if rule_id in placement and a.took <= 1 and rule_id not in recovery:
                continue
            if scenario == "node-loss" and rule_id in recovery - placement and not a.too_long:
                continue
            out.append(rule_id)
        return tuple(out)

    @staticmethod
    def _deciding(ctx: CheckContext, scenario: str, a: Assessment) -> tuple[str, Position]:
        """The manifest field that decides the missed figure, and where it is."""
        spec = set_spec(ctx.sts).pod_fields
        if scenario in ("node-loss", "zone-loss", "node-drain") and (a.too_many or a.too_long):
            if a.replicas > 1 and (a.took > 1 or scenario == "zone-loss"):
                for key in ("topologySpreadConstraints", "affinity"):
                    if key in spec:
                        return f"spec.template.spec.{key}", ctx.sts.pos(*POD, key)
                return "the placement constraints (none set)", ctx.sts.pos(*POD)
            return "replicas", ctx.replicas_at()
        if scenario == "node-drain" and a.slow:
            return "terminationGracePeriodSeconds", ctx.sts.pos(
                *POD, "terminationGracePeriodSeconds"
            )
        if scenario == "rolling-update" and a.slow:
            for c in containers(ctx.sts):
                if c.readiness is not None:
                    where = ctx.sts.pos(*c.readiness.path)
                    return "the readiness probe (when a new pod counts as Ready)", where
            return "replicas", ctx.replicas_at()
        if scenario in ("rolling-update", "bad-rollout"):
            path = ("spec", "updateStrategy")
            if "updateStrategy" not in set_spec(ctx.sts).fields and scenario == "bad-rollout":
                path = ("spec", "podManagementPolicy")
            return ".".join(path), ctx.sts.pos(*path)
        if scenario == "node-loss" and template(ctx.sts).tolerations:
            return "tolerations (and the profile's node-remediation)", ctx.sts.pos(
                *POD, "tolerations"
            )
        return "replicas (and the profile's node-remediation)", ctx.replicas_at()


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ObjectiveMissed()]
