"""single-replica: a StatefulSet with one replica has no failover at all."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration

from ._cluster import default_toleration_s, out_of_service_works, seconds
from ._objectives import assess, remediation_phrase
from ._podspec import UNREACHABLE, budget
from ._quorum import members, quorum_system
from ._sim import timeline_block
from ._text import paragraph
from .pdb_blocks_drain import MAX_MESSAGE_CHARS, only_one


class SingleReplica(Rule):
    id = "single-replica"
    severity = Severity.ERROR
    summary = (
        "one replica (replicas: 1, unset, or an autoscaler's minReplicas: 1): every node loss, "
        "drain and rollout is an outage of the whole set"
    )
    references = (
        "web: docs/tasks/run-application/force-delete-stateful-set-pod.md",
        "k8s: pkg/controller/tainteviction/taint_eviction.go#processPodOnNode",
        "k8s: pkg/controller/statefulset/stateful_set_control.go#processReplica",
        "k8s: pkg/apis/apps/v1/defaults.go#SetDefaults_StatefulSet (replicas defaults to 1)",
        "web: docs/tasks/run-application/horizontal-pod-autoscale.md",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        raw = ctx.sts.get("spec", "replicas")
        if ctx.replicas != 1 or (raw is None and ctx.autoscaler() is None and ctx.is_fragment):
            return
        system = quorum_system(ctx)
        if system is not None and members(ctx, system) >= 3:
            return  # one member (a MongoDB arbiter) of a larger quorum of the same installation
        pod = ctx.pod_name(0)
        loss = assess(ctx, "node-loss")
        how = remediation_phrase(ctx)
        if loss is None:
            outcome = "not replaced on node loss until an operator acts"
        elif loss.never_back:
            outcome = f"simulated node loss{' ' + how if how else ''}: not back without an operator"
        else:
            t = loss.result.time_to_recovery_s
            outcome = f"simulated node loss{' ' + how if how else ''}: back at {fmt_duration(t)}"
        blocking = self._blocking_pdb(ctx)
        if blocking is None:
            what = "every node loss, drain and rollout is a full outage"
        else:  # the drain does not take the pod: it hangs (pdb-blocks-drain, folded here)
            what = f"every node loss and rollout is a full outage, PDB {blocking!r} blocks drains"
        msg = f"{ctx.replicas_field}: {what}; {outcome}"
        if len(msg) > MAX_MESSAGE_CHARS and blocking is not None:
            what = "every node loss and rollout is a full outage, its PDB blocks drains"
            msg = f"{ctx.replicas_field}: {what}; {outcome}"

        def explain() -> str:
            default = seconds(default_toleration_s(ctx, UNREACHABLE))
            runbook = (
                "force delete, or the node.kubernetes.io/out-of-service taint"
                if out_of_service_works(ctx)
                else "force delete or Node deletion; the out-of-service taint needs 1.26"
            )
            objective = ctx.objectives["node-loss"].describe(1)
            timeline = "\n" + timeline_block(ctx, loss.result) if loss is not None else ""
            every = paragraph(
                """With a single replica every disruption of the one pod is an outage of the
                whole StatefulSet: a node loss, a drain of its node (a PodDisruptionBudget either
                lets the eviction through or blocks the drain for ever) and every rolling update,
                which deletes the pod before its replacement starts."""
            )
            if blocking is not None:
                every += "\n\n" + paragraph(
                    f"""The PodDisruptionBudget {blocking!r} needs the one pod healthy, so the
                    eviction API never lets it go (eviction.go#Create) and every drain of its
                    node hangs until someone deletes the pod or the budget; with 3 replicas the
                    same budget would allow one eviction."""
                )
            node_loss = paragraph(
                f"""On node loss the node lifecycle controller marks the node Unknown after
                node-monitor-grace-period and the pod NotReady (it leaves the Service endpoints);
                the taint eviction controller deletes the pod after its unreachable toleration
                ({default} by default); the deletion is graceful, so only the lost kubelet could
                complete it, and the StatefulSet controller will not create a new {pod} while the
                old object exists. One replica cannot meet the node-loss objective
                ({objective})."""
            )
            fix = paragraph(
                f"""Fix: run at least 2 replicas (3 for quorum systems) spread over nodes, or
                accept the outage and keep a runbook ({runbook}); with an autoscaler, raise its
                minReplicas."""
            )
            return f"{every}\n\n{node_loss}\n{timeline}\n{fix}\n"

        yield self.finding(ctx, ctx.replicas_at(), msg, explain)

    @staticmethod
    def _blocking_pdb(ctx: CheckContext) -> str | None:
        """The name of the one PodDisruptionBudget of the set that never allows an eviction
        only because there is one replica (pdb-blocks-drain folds its finding into this one)."""
        pdbs = ctx.pdbs()
        if len(pdbs) != 1:
            return None
        b = budget(pdbs[0], 1)
        if b is None or b.allowed(1) != 0 or b.desired_healthy <= 0:
            return None
        return pdbs[0].name if only_one(pdbs[0], 1) else None


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [SingleReplica()]
