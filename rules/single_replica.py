"""single-replica: a StatefulSet with one replica has no failover at all."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.timeline import fmt_duration

from ._cluster import default_toleration_s, out_of_service_works, seconds
from ._group import group_of, peer_group
from ._objectives import assess, remediation_facts, remediation_phrase
from ._podspec import UNREACHABLE, budget, set_spec
from ._quorum import members, quorum_system
from ._sim import timeline_block
from ._systems import holds_no_data, recognise
from ._text import paragraph
from ._workload import holds_state, nothing_at_stake
from .pdb_blocks_drain import MAX_MESSAGE_CHARS, only_one

#: What the one pod's outage costs (see :meth:`SingleReplica._kind`).
STATE, SERVICE, NOTHING = "state", "service", "nothing"
SEVERITY = {STATE: Severity.ERROR, SERVICE: Severity.WARNING, NOTHING: Severity.INFO}

#: Why the outage costs what the severity says (a paragraph of the explanation).
COST = {
    STATE: """A volume claim holds the pod's data, so no other pod can take over: the set is
    down until this pod runs again on its volume. That is an error.""",
    SERVICE: """No claim holds data here (no volumeClaimTemplates, no PersistentVolumeClaim
    volume) but the pods serve clients (a declared container port, or a Service with ports
    that selects them): nothing is lost with the pod and any pod could take over, yet the
    StatefulSet controller does not replace it while the old object exists, so the service
    stays down until someone acts. A Deployment would have a new pod running a few minutes
    after a node loss, as soon as the taint eviction deletes the old one (the ReplicaSet
    controller does not count a pod being deleted: pkg/controller/controller_utils.go
    #IsPodActive). No data is at stake, so a warning.""",
    NOTHING: """No container declares a port, no Service with ports selects the pods and no
    claim holds data: nothing is sent to this pod and nothing is lost with it (a toolbox, a
    job runner, a sleep loop), so there is nothing to fail over: a note (info), unless a budget
    blocks drains. Declared ports or a claim make it a warning or an error.""",
}


class SingleReplica(Rule):
    id = "single-replica"
    severity = Severity.ERROR
    other_severities = (Severity.WARNING, Severity.INFO)
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
        raw = set_spec(ctx.sts).replicas
        if ctx.replicas != 1 or (raw is None and ctx.autoscaler() is None and ctx.is_fragment):
            return
        system = quorum_system(ctx)
        if system is not None and members(ctx, system) >= 3:
            return  # one member (a MongoDB arbiter) of a larger quorum of the same installation
        group = peer_group(ctx)
        if group is not None and group.total >= 2 and (system is None or group.total >= 3):
            return  # one member of a system spread over several sets (a ring of one per zone)
        if self._holds_nothing_beside_members(ctx):
            return  # a witness or arbiter beside the members that hold the data
        pod = ctx.pod_name(0)
        loss = assess(ctx, "node-loss")
        how = remediation_phrase(ctx)
        facts: dict[str, FactValue] = {"replicas": 1}
        if loss is not None:
            facts.update(loss.facts(), **(remediation_facts(ctx) if how else {}))
        if loss is None:
            outcome = "not replaced on node loss until an operator acts"
        elif loss.never_back:
            outcome = f"simulated node loss{' ' + how if how else ''}: not back without an operator"
        else:
            t = loss.result.time_to_recovery_s
            outcome = f"simulated node loss{' ' + how if how else ''}: back at {fmt_duration(t)}"
        blocking = self._blocking_pdb(ctx)
        # a budget that blocks drains whatever the replicas (maxUnavailable: 0): reported by
        # pdb-blocks-drain, and a drain hangs rather than takes the set down
        hangs = blocking is None and self._drains_hang(ctx)
        kind = self._kind(ctx)
        pdb = f"PDB {blocking!r}" if blocking else None
        msg = self._message(ctx, kind, pdb, outcome, drains=not hangs)
        if len(msg) > MAX_MESSAGE_CHARS and blocking is not None:
            msg = self._message(ctx, kind, "its PDB", outcome)
        # What the outage costs decides the severity: stored data stuck behind a lost node is
        # an error; a service that stores nothing is a warning (no data at stake, but down
        # until someone acts); a pod that neither serves nor stores has nothing to fail over
        # (info). A budget that never lets a drain through hangs every drain of the node
        # whatever the pod does, and is folded in here: an error as pdb-blocks-drain is.
        severity = Severity.ERROR if blocking is not None else SEVERITY[kind]
        facts.update(kind=kind, blocking_pdb=blocking, drains_hang=hangs or blocking is not None)

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
                    node hangs until someone deletes the pod or the budget, whatever the pod
                    serves or stores (an error, as pdb-blocks-drain reports it); with 3 replicas
                    the same budget would allow one eviction."""
                )
            every += "\n\n" + paragraph(COST[kind])
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
                if kind == STATE
                else f"""Fix: run at least 2 replicas spread over nodes, or run the pods as a
                Deployment if they need no stable identity; or accept the outage and keep a
                runbook ({runbook})."""
                if kind == SERVICE
                else f"""Nothing to fix if the pod serves no one (a toolbox, a job runner). If
                it does, declare its ports (containerPort), which makes this a warning, and run
                2 replicas; a runbook for a lost node: {runbook}."""
            )
            return f"{every}\n\n{node_loss}\n{timeline}\n{fix}\n"

        yield self.finding(ctx, ctx.replicas_at(), msg, explain, severity=severity, facts=facts)

    @staticmethod
    def _kind(ctx: CheckContext) -> str:
        """What an outage of the one pod costs: :data:`STATE` (a claim holds its data, or a
        kustomize patch that sets ``replicas`` leaves the pod template to its base, which the
        check cannot see), :data:`SERVICE` (it serves and stores nothing) or :data:`NOTHING`
        (neither)."""
        if nothing_at_stake(ctx):
            return NOTHING
        if holds_state(ctx.sts) or ctx.is_fragment:
            return STATE  # (a patch leaves containers and claims to its base: as stateful)
        return SERVICE

    @staticmethod
    def _message(
        ctx: CheckContext, kind: str, pdb: str | None, outcome: str, drains: bool = True
    ) -> str:
        """The one-line message; ``pdb`` names the budget that blocks drains (folded here);
        without ``drains`` a drain hangs on a budget reported on its own, so it is no outage."""
        head = ctx.replicas_field
        events = "node loss, drain and rollout" if drains else "node loss and rollout"
        if kind == STATE:
            what = (
                f"every node loss and rollout is a full outage, {pdb} blocks drains"
                if pdb
                else f"every {events} is a full outage"
            )
        elif kind == SERVICE:
            head += " and no volume claim"
            what = (
                f"every node loss and rollout stops its service, {pdb} blocks drains"
                if pdb
                else f"every {events} stops its service"
            )
        else:
            head += ", no ports and no volume claim"
            what = (
                f"nothing to fail over, but {pdb} blocks drains of its node"
                if pdb
                else "nothing serves or stores here"
            )
        return f"{head}: {what}; {outcome}"

    @staticmethod
    def _holds_nothing_beside_members(ctx: CheckContext) -> bool:
        """Whether the set's server holds no data (its catalog entry's ``no_data_when``: a
        repmgr witness, a MongoDB arbiter) and belongs to a group of sets of its system."""
        found = recognise(ctx)
        whole = group_of(ctx)
        if found is None or found.container is None or whole is None or whole.total < 2:
            return False
        return holds_no_data(found.system, found.container, ctx.pod_labels)

    @staticmethod
    def _drains_hang(ctx: CheckContext) -> bool:
        """Whether a PodDisruptionBudget of the set never lets its one pod be evicted (or
        several select it, which makes the eviction API refuse every eviction)."""
        pdbs = ctx.pdbs()
        if len(pdbs) > 1:
            return True
        b = budget(pdbs[0], 1) if pdbs else None
        return b is not None and b.allowed(1) == 0

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
