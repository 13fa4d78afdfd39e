"""Recovery objectives against simulated results (helpers for rules).

The objectives are the run's (``ssrisk.objectives``: the configuration's ``objectives`` over
the defaults); the simulated figures are the embedded simulator's. Node loss is simulated the
way the cluster profile says the platform handles a dead node (``node-remediation``): nothing
(``node-loss``), the out-of-service taint (``node-loss-out-of-service``) or Node deletion
(``node-deleted``).
"""

from __future__ import annotations

from collections.abc import Mapping

import msgspec
from ssrisk.embedded_sim import ScenarioResult

from ssrisk.model import FactValue
from ssrisk.objectives import Objective, fmt_objective_duration
from ssrisk.rule import CheckContext
from ssrisk.timeline import fmt_duration

from ._quorum import allowed_down

#: Per scenario, the rules whose finding names the cause of a missed objective (most specific
#: first); a miss is folded into the first of them that reports the StatefulSet.
CAUSES: Mapping[str, tuple[str, ...]] = {
    "node-loss": (
        "single-replica",
        "quorum-replicas",
        "replicas-share-failure-domain",
        "node-pinned-storage",
        "eviction-disabled-by-toleration",
        "no-automatic-failover",
        "rwo-volume-reattach",
        "zonal-volume-pinning",
    ),
    "zone-loss": (
        "single-replica",
        "quorum-replicas",
        "replicas-share-failure-domain",
        "zonal-volume-pinning",
        "node-pinned-storage",
    ),
    "node-drain": (
        "single-replica",
        "pdb-blocks-drain",
        "pdb-quorum-loss",
        "pdb-missing",
        "replicas-share-failure-domain",
        "long-termination-grace",
        "prestop-exceeds-grace",
    ),
    "rolling-update": (
        "single-replica",
        "quorum-replicas",
        "max-unavailable-rollout",
        "partition-blocks-update",
        "long-termination-grace",
    ),
    "bad-rollout": (
        "ordered-ready-stall",
        "max-unavailable-rollout",
        "update-strategy-ondelete",
        "single-replica",
    ),
}


def causes(scenario: str, before: str) -> tuple[str, ...]:
    """The cause rules of ``scenario`` listed before the rule ``before`` (what a finding of
    ``before`` about that scenario is an echo of)."""
    ids = CAUSES[scenario]
    return ids[: ids.index(before)] if before in ids else ids


def remediation(ctx: CheckContext) -> str:
    """The profile's ``node_remediation``: ``"none"``, ``"out-of-service"`` or
    ``"node-deletion"``."""
    from ssrisk.embedded_sim.profile import NODE_LOSS_SCENARIOS

    value = ctx.profile_setting("node_remediation")
    return value if value in NODE_LOSS_SCENARIOS else "none"


def node_loss_scenario(ctx: CheckContext) -> str:
    """The scenario that simulates a node loss on this cluster (the simulator's
    ``NODE_LOSS_SCENARIOS``, as ``ssrisk simulate`` picks it by default)."""
    from ssrisk.embedded_sim.profile import NODE_LOSS_SCENARIOS

    return NODE_LOSS_SCENARIOS[remediation(ctx)]


def remediation_phrase(ctx: CheckContext) -> str:
    """``"with the out-of-service taint at 2m0s"``, ``"with the Node deleted at 2m0s"`` or
    ``""`` (no remediation: nothing replaces a dead node)."""
    how = remediation(ctx)
    if how == "out-of-service":
        at = fmt_duration(ctx.profile_setting("out_of_service_after_s"))
        return f"with the out-of-service taint at {at}"
    if how == "node-deletion":
        return (
            f"with the Node deleted at {fmt_duration(ctx.profile_setting('node_deleted_after_s'))}"
        )
    return ""


def remediation_facts(ctx: CheckContext) -> dict[str, FactValue]:
    """What :func:`remediation_phrase` states, as data: the remediation and when it acts."""
    how = remediation(ctx)
    if how == "out-of-service":
        return {
            "node_remediation": how,
            "remediation_s": ctx.profile_setting("out_of_service_after_s"),
        }
    if how == "node-deletion":
        return {
            "node_remediation": how,
            "remediation_s": ctx.profile_setting("node_deleted_after_s"),
        }
    return {}


class Assessment(msgspec.Struct, frozen=True):
    """One simulated scenario against its objective.

    ``took`` is the most replicas unavailable at once, ``allowed`` the objective's
    ``max-unavailable`` for ``replicas`` (``None`` when not set). ``outage_s`` is how long the
    set stayed beyond ``allowed``, measured until every replica was back (``None``: never back
    in the simulation; ``0``: never beyond it).
    """

    scenario: str
    objective: Objective
    result: ScenarioResult
    replicas: int
    took: int
    allowed: int | None
    outage_s: float | None

    @property
    def beyond(self) -> bool:
        """More replicas went down than ``max-unavailable`` allows (any, when it is unset)."""
        return self.took > (self.allowed or 0)

    @property
    def too_many(self) -> bool:
        """``max-unavailable`` missed, where no ``recover-within`` bounds the outage instead
        (with one, losing more is fine when every replica is back in time)."""
        limit = self.objective.recover_within_s
        return self.allowed is not None and limit is None and self.took > self.allowed

    @property
    def too_long(self) -> bool:
        """An outage beyond ``max-unavailable`` that lasted longer than ``recover-within``."""
        limit = self.objective.recover_within_s
        if limit is None or not self.beyond:
            return False
        return self.outage_s is None or self.outage_s > limit

    @property
    def never_back(self) -> bool:
        return not self.result.recovered

    @property
    def slow(self) -> bool:
        """``complete-within`` missed (drain or rollout), or not completed at all."""
        limit = self.objective.complete_within_s
        if limit is None:
            return False
        r = self.result
        done, took = r.recovered, r.time_to_recovery_s
        if r.goal is not None and r.goal.name in ("drain", "rollout"):
            done = r.goal.completed
            if r.goal.timed:
                took = r.goal.duration_s
        return not done or took is None or float(took) > limit

    @property
    def manual_revert(self) -> bool:
        """``revert-without-manual-delete: true`` missed: the bad rollout needs a hand."""
        if not self.objective.revert_without_manual_delete:
            return False
        return self.never_back or self.result.manual_action_required

    @property
    def missed(self) -> bool:
        return self.too_many or self.too_long or self.slow or self.manual_revert

    @property
    def worst_case(self) -> bool:
        """Whether the replicas the fault hit are the worst placement the constraints allow
        rather than where spreading or the constraints force them (the simulator says so)."""
        basis = self.result.placement_basis
        if basis is None:
            return False
        if self.scenario == "zone-loss":
            return not basis.forced_zone
        return not basis.forced_node

    def figure(self) -> str:
        """The simulated figure: ``"1 of 1 down, not back"``, ``"worst case 2 of 3 down, back
        at 8m30s"``."""
        worst = "worst case " if self.worst_case and self.took > 1 else ""
        head = f"{worst}{self.took} of {self.replicas} down"
        if self.never_back:
            return head + ", not back"
        t = self.result.time_to_recovery_s
        return head + (f", back at {fmt_duration(t)}" if t is not None else "")

    def facts(self) -> dict[str, FactValue]:
        """What :meth:`figure` states, as data: the scenario, how many of how many replicas
        were down at once, whether that is the worst placement, and when every replica was
        back (``recovery_s``, ``None``: not back)."""
        t = self.result.time_to_recovery_s
        return {
            "scenario": self.scenario,
            "unavailable": self.took,
            "replicas": self.replicas,
            "worst_case": self.worst_case and self.took > 1,
            "recovery_s": None if self.never_back else t,
        }

    def objective_facts(self) -> dict[str, FactValue]:
        """The objective values :meth:`versus` names, as data."""
        out: dict[str, FactValue] = {}
        if self.too_many:
            out["objective_max_unavailable"] = self.allowed
        if self.too_long:
            out["objective_recover_within_s"] = self.objective.recover_within_s or 0.0
        if self.slow:
            out["objective_complete_within_s"] = self.objective.complete_within_s or 0.0
        return out

    def versus(self) -> str:
        """The objective keys missed, with their values: ``"max-unavailable 0, recover-within
        15m"``."""
        parts = []
        if self.too_many:
            parts.append(f"max-unavailable {self.allowed}")
        if self.too_long:
            within = self.objective.recover_within_s or 0.0
            parts.append(f"recover-within {fmt_objective_duration(within)}")
        if self.slow:
            within = self.objective.complete_within_s or 0.0
            parts.append(f"complete-within {fmt_objective_duration(within)}")
        if self.manual_revert:
            parts.append("revert-without-manual-delete")
        return ", ".join(parts)


def assess(ctx: CheckContext, scenario: str) -> Assessment | None:
    """``scenario`` (``"node-loss"`` is this cluster's node loss) simulated for ``ctx.sts``
    and compared with the run's objective for it; ``None`` when it cannot be simulated."""
    objective = ctx.objectives[scenario]
    simulated = node_loss_scenario(ctx) if scenario == "node-loss" else scenario
    result = ctx.try_simulate(simulated)
    if result is None:
        return None
    shape = result.cluster_shape
    if scenario == "zone-loss" and shape is not None and shape.zones <= 1:
        return None  # one zone: its loss is the whole cluster's, which no manifest survives
    replicas = result.replicas or ctx.replicas
    took = result.max_unavailable
    allowed = (
        None
        if objective.max_unavailable is None
        else allowed_down(ctx, objective.max_unavailable, replicas)
    )
    if took <= (allowed or 0):
        outage: float | None = 0.0
    elif result.recovered and result.time_to_recovery_s is not None:
        outage = float(result.time_to_recovery_s)
    else:
        outage = None
    return Assessment(simulated, objective, result, replicas, took, allowed, outage)
