"""prestop-destroys-state: a preStop hook that wipes the data or leaves the cluster on every
termination."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator

from ssrisk.embedded_sim.lazyre import lazy
from ssrisk.embedded_sim.podtemplate import Container

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._podspec import containers, template
from ._scan import followed_by
from ._text import paragraph

#: Commands that take a member out of its cluster for good (each system's own documentation:
#: etcd "Runtime reconfiguration" member remove; Cassandra nodetool decommission; RabbitMQ
#: rabbitmqctl forget_cluster_node, reset; Redis CLUSTER FORGET / RESET; MongoDB rs.remove();
#: ZooKeeper reconfig -remove; CockroachDB node decommission; Consul leave).
MEMBERSHIP = (
    (lazy(r"\betcdctl\b"), lazy(r"\bmember\s+remove\b"), "etcdctl member remove"),
    (lazy(r"\bnodetool\b"), lazy(r"\bdecommission\b"), "nodetool decommission"),
    (
        lazy(r"\brabbitmqctl\b"),
        lazy(r"\b(forget_cluster_node|force_reset|reset)\b"),
        "rabbitmqctl",
    ),
    (None, lazy(r"\bcluster\s+(forget|reset)\b", re.I), "redis-cli cluster forget/reset"),
    (None, lazy(r"\brs\.remove\s*\("), "rs.remove()"),
    (lazy(r"\breconfig\b"), lazy(r"-remove\b"), "zookeeper reconfig -remove"),
    (
        lazy(r"\bcockroach\b"),
        lazy(r"\bnode\s+decommission\b"),
        "cockroach node decommission",
    ),
    (lazy(r"\bconsul\b"), lazy(r"\bleave\b"), "consul leave"),
)
"""Each as ``(program, then, name)``: the program's name and, later on the same line, what
it is told to do (matched by :func:`rules._scan.followed_by`, in linear time), or
``then`` alone."""

#: ``rm`` with a recursive flag: a word of letters holding an ``r`` (the lookahead keeps the
#: scan of a long flag word linear; ``-[a-zA-Z]*[rR][a-zA-Z]*`` backtracked over it).
_RM = lazy(r"\brm\s+(-(?=[a-zA-Z]*[rR])[a-zA-Z]+\s+|--recursive\s+)+")
#: Where a shell command ends.
_COMMAND_END = lazy(r";|&&|\|\|")


def _removed_paths(text: str) -> list[str]:
    """Paths given to a recursive ``rm`` in a shell command."""
    out: list[str] = []
    for command in _COMMAND_END.split(text):
        # what follows the first ``rm -r`` of a command holds the words of any later one
        m = _RM.search(command)
        if m is None:
            continue
        rest = command[m.end() :]
        try:
            words = shlex.split(rest)
        except ValueError:
            words = rest.split()
        out.extend(w for w in words if w.startswith("/") or w.startswith("$"))
    return out


def _under(path: str, mount: str) -> bool:
    p, m = path.rstrip("/*") or "/", mount.rstrip("/") or "/"
    return p == m or p.startswith(m + "/") or m.startswith(p + "/") or p == "/"


def destroyed_state(c: Container, claims: frozenset[str] | set[str]) -> str | None:
    """What a container's preStop exec hook destroys: ``"the data in /var/lib/x"`` when it
    removes a directory of a volume claim mount, ``"its cluster membership (etcdctl member
    remove)"`` when it leaves the cluster; ``None`` otherwise."""
    if c.pre_stop is None or c.pre_stop.kind != "exec":
        return None
    text = c.pre_stop.command_line
    for program, then, what in MEMBERSHIP:
        said = then.search(text) if program is None else followed_by(program, then, text, "\n")
        if said:
            return f"its cluster membership ({what})"
    mounts = [m.mount_path for m in c.mounts if m.name in claims and m.mount_path]
    for path in _removed_paths(text):
        for mount in mounts:
            if _under(path, mount):
                return f"the data in {mount}"
    return None


def _consequence(what: str) -> str:
    """What one restart costs when the hook destroys ``what``: the data (the member comes
    back empty) or the membership (the cluster shrinks, and the member must be added back)."""
    if what.startswith("its cluster membership"):
        return (
            "a reconfiguration: the member is removed from the cluster (a Raft or gossip "
            "membership change that shrinks the quorum; Consul: consul leave on a server "
            "reconfigures the cluster to fewer servers, and a node that left does not rejoin "
            "from its snapshot on restart, commands/leave) and must be added back when the "
            "pod returns"
        )
    return (
        "the loss of a member: it rejoins empty and must be rebuilt from its peers (a full "
        "resync per rolling update)"
    )


class PreStopDestroysState(Rule):
    id = "prestop-destroys-state"
    severity = Severity.WARNING
    never_folded = True  # (data destroyed: never folded into another finding)
    summary = (
        "a preStop hook that deletes the data directory of a volume claim or takes the member "
        "out of its cluster: it runs on every termination, not only on scale-down"
    )
    references = (
        "web: docs/concepts/containers/container-lifecycle-hooks.md (PreStop)",
        "web: docs/concepts/workloads/pods/pod-lifecycle.md (Termination of Pods)",
        "k8s: pkg/kubelet/kuberuntime/kuberuntime_container.go#executePreStopHook",
        "web: developer.hashicorp.com/consul/commands/leave",
        "web: etcd.io/docs/latest/op-guide/runtime-configuration (remove a member)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.replicas < 1:
            return
        claims = template(ctx.sts).claim_names
        for c in containers(ctx.sts):
            what = destroyed_state(c, claims)
            if what is None:
                continue
            name = c.name or "?"
            msg = (
                f"container {name!r}: preStop destroys {what} on every termination, each "
                "rollout and drain included"
            )

            def explanation(what: str = what) -> str:
                why = paragraph(
                    f"""The kubelet runs a preStop hook before every termination of the
                    container: a rolling update, a drain or eviction, a deletion, a liveness
                    failure, a preemption (container-lifecycle-hooks, PreStop;
                    kuberuntime_container.go#executePreStopHook), not only when the StatefulSet
                    is scaled down. A StatefulSet brings the same ordinal back with the same
                    claim, so a hook that destroys {what} turns every routine restart into
                    {_consequence(what)}, and while several restart at once (a zone drain, a
                    rollout with maxUnavailable) the cluster can lose data or quorum."""
                )
                fix = paragraph(
                    """Fix: leave the data and the membership alone on termination; remove a
                    member explicitly when it is really retired (a scale-down job or an
                    operator), and keep preStop for a graceful stop (stop accepting work, hand
                    over leadership, flush)."""
                )
                return f"{why}\n\n{fix}\n"

            at = ctx.sts.pos(*c.path, "lifecycle", "preStop")
            facts = {"container": name, "destroys": what}
            yield self.finding(ctx, at, msg, explanation, facts=facts)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [PreStopDestroysState()]
