"""cold-start-deadlock: OrderedReady waits for a first pod that waits for its peers."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.remedy import Edit, Remedy
from ssrisk.rule import CheckContext, Rule

from ._podspec import set_spec
from ._probes import readiness_needs_peers
from ._quorum import votes
from ._systems import recognise
from ._text import paragraph

#: Systems whose cold start needs one chosen member to bootstrap the cluster (Galera: only the
#: node with safe_to_bootstrap, galera_new_cluster(1)): starting every member at once does not
#: end the wait, so Parallel is no fix for them.
BOOTSTRAPPED = frozenset({"galera"})


class ColdStartDeadlock(Rule):
    id = "cold-start-deadlock"
    severity = Severity.WARNING
    summary = (
        "podManagementPolicy OrderedReady (the default) with members that turn Ready only "
        "once their peers run (the system's cold start, or a readiness probe that needs "
        "peers): after every member stopped, the first pod waits for peers that are never "
        "created"
    )
    references = (
        "k8s: pkg/controller/statefulset/stateful_set_control.go#updateStatefulSet "
        "(OrderedReady: a pod is created only when its predecessors are Running and Ready)",
        "web: docs/concepts/workloads/controllers/statefulset.md (Pod Management Policies)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        n = ctx.replicas
        if n < 2 or ctx.is_fragment or ctx.pod_management_policy != "OrderedReady":
            return
        found = recognise(ctx)
        system = found.system if found is not None else None
        if system is not None and system.model == "primary-replica":
            return  # a replica waits for its primary, which starts on its own (ordinal 0, or
            # a set of its own), so a full stop does not deadlock
        needs, probe = readiness_needs_peers(ctx.sts, system)
        by_system = system is not None and bool(system.cold_start_needs_peers)
        # a data node's cluster check waits for the master-eligible nodes, which vote in a set
        # of their own and start on their own (unless it waits for green: its shard copies)
        if found is not None and found.system.voting_roles and "green" not in probe:
            voter = votes(found.system, found.container)
        else:
            voter = True
        if not voter:
            return
        if needs is False or (needs is None and not (by_system and probe)):
            return  # Ready on its own (a local check, or no readiness probe at all)
        first, second = ctx.pod_name(0), ctx.pod_name(1)
        if needs:
            cause = "its readiness probe needs peers"
        else:
            assert system is not None
            cause = f"{system.id} members wait for their peers after a full stop"
        msg = (
            f"OrderedReady creates {second} only once {first} is Ready, and {cause}: a cold "
            "start deadlocks"
        )
        explicit = set_spec(ctx.sts).pod_management_policy is not None
        at = ctx.sts.pos("spec", "podManagementPolicy") if explicit else ctx.sts.start()

        def explanation() -> str:
            how = paragraph(
                f"""With podManagementPolicy OrderedReady the StatefulSet controller creates
                the pods one at a time and creates {second} only when {first} is Running and
                Ready (stateful_set_control.go#updateStatefulSet; "Pod Management Policies"
                in docs/concepts/workloads/controllers/statefulset.md). After every member
                stopped (a power cut, a cluster restore, deleting all pods, a scale to zero
                and back), {first} starts alone."""
            )
            what = (
                f"Its readiness probe ({probe}) passes only once the member has its peers, "
                "so it stays unready, and the controller waits for it for ever."
                if needs
                else ""
            )
            if by_system and system is not None:
                what += (
                    f" {system.name}: {system.cold_start_what or 'a member waits for its peers'}"
                    f" ({system.source('cold_start')})."
                )
            fix = paragraph(
                """Fix: set podManagementPolicy: Parallel (all members start together; it
                changes only how pods are created and deleted, not rolling updates), or make
                readiness check only the local process. podManagementPolicy cannot be
                changed on an existing StatefulSet: delete it with --cascade=orphan and
                create it again."""
            )
            return f"{how}\n\n{paragraph(what)}\n\n{fix}\n"

        facts: dict[str, FactValue] = {
            "replicas": n,
            "readiness_needs_peers": bool(needs),
            "system": system.id if system is not None else "",
        }
        yield self.finding(ctx, at, msg, explanation, facts=facts)

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """podManagementPolicy Parallel: the controller creates every missing pod without
        waiting for its predecessors to be Ready (stateful_set_control.go#updateStatefulSet),
        so the members start together. The field is immutable
        (validation.go#ValidateStatefulSetUpdate): the caution says how to change it."""
        if finding.facts.get("system") in BOOTSTRAPPED:
            return ()  # (only the most advanced member may start the cluster: a runbook)
        edit = Edit(("spec", "podManagementPolicy"), "Parallel")
        caution = (
            "podManagementPolicy cannot be changed on an existing StatefulSet: delete it with "
            "kubectl delete --cascade=orphan (its pods and volumes stay) and create it again; "
            "a decision for the set's owner, so ssrisk fix does not write it"
        )
        return (Remedy("set podManagementPolicy to Parallel", (edit,), caution, advice=True),)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [ColdStartDeadlock()]
