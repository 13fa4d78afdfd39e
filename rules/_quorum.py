"""Which StatefulSets run a quorum (majority-vote) system (helpers for rules).

A quorum system stops accepting writes when a majority of its members is down, so losing half
of an even number of members is an outage; other replicated systems (an HA pair of Prometheus
servers, a primary with read replicas) keep serving with half. Which systems elect by majority,
and which of their members vote, is the catalog's (``rules/systems/``: ``replication.model:
quorum``, or ``voting_roles`` where only some roles vote, with each system's source); the
annotation ``ssrisk.io/quorum: "true"`` (or ``"false"``) on the StatefulSet says it for any
other workload.
"""

from __future__ import annotations

import re
from functools import partial

from ssrisk.embedded_sim.lazyre import lazy
from ssrisk.embedded_sim.podtemplate import Container

from ssrisk.model import K8sObject
from ssrisk.objectives import MINORITY, minority, resolve_max_unavailable
from ssrisk.rule import CheckContext

from ._podspec import set_spec
from ._systems import (
    Catalog,
    System,
    cluster_name,
    ctx_catalog,
    recognise_set,
)
from ._systems import recognise as recognise_system

ANNOTATION = "ssrisk.io/quorum"


def quorum_system(ctx: CheckContext) -> str | None:
    """What makes ``ctx.sts`` a quorum system: the catalog id of the system its server runs
    (``"etcd"``) when that member votes, ``"annotation"``, or ``None`` when it is not one (or
    the annotation says ``"false"``)."""
    return ctx.memo("quorum_system", lambda: _ctx_quorum_system(ctx))


def _ctx_quorum_system(ctx: CheckContext) -> str | None:
    said = _said(ctx.sts)
    if said is not None:
        return "annotation" if said else None
    found = recognise_system(ctx)
    if found is None:
        return None
    return found.system.id if votes(found.system, found.container) else None


def _said(sts: K8sObject) -> bool | None:
    said = str(set_spec(sts).annotations.get(ANNOTATION, "")).strip().lower()
    return {"true": True, "false": False}.get(said)


def _quorum_system(sts: K8sObject, cat: Catalog) -> str | None:
    """:func:`quorum_system` of another StatefulSet (no context: ``cat`` is the run's)."""
    said = _said(sts)
    if said is not None:
        return "annotation" if said else None
    found = recognise_set(sts, cat)
    return found.system.id if found is not None and votes(found.system, found.container) else None


def votes(system: System, container: Container | None) -> bool:
    """Whether a member of ``system`` whose server is ``container`` votes in its majority
    election: every member of a quorum system, unless the entry's ``voting_roles`` limit it
    to some roles (Elasticsearch and OpenSearch master-eligible nodes, Kafka KRaft
    controllers); then the member's roles are read from the environment variables the entry
    names (comma-separated; a value from a ConfigMap or Secret, or none, counts as the
    entry's ``default_votes``). A legacy ``node.master: false`` also takes the vote away."""
    if not system.elects:
        return False
    if not system.voting_roles:
        return True
    if container is None:
        return system.default_votes
    for e in container.env:
        if e.value is None:
            continue
        if any(p.search(e.name) for p in system.voting_env):
            roles = {r.strip().lower() for r in e.value.split(",")}
            return bool(roles & system.voting_roles)
        if _LEGACY_MASTER_ENV.search(e.name) and e.value.strip().lower() == "false":
            return False
    return system.default_votes


_LEGACY_MASTER_ENV = lazy(r"(?:^|[._])node[._]master$", re.I)


#: Labels that tie StatefulSets into one installation (Helm's and the recommended labels).
INSTANCE_LABELS = ("app.kubernetes.io/instance", "release")


def members(ctx: CheckContext, system: str) -> int:
    """Voting members of the quorum system across StatefulSets: ``ctx.replicas`` plus the
    replicas of other StatefulSets in the namespace that run the same system and carry the same
    instance label (a MongoDB arbiter beside its data members, an Elasticsearch master set
    beside a data set), or the whole system group of the set (:func:`rules._group.group_of`:
    an ensemble split over sets), whichever is larger."""
    from ._group import group_of

    labels = ctx.pod_labels
    keys = [(k, labels[k]) for k in INSTANCE_LABELS if labels.get(k)]
    spread = group_of(ctx)
    total = spread.total if spread is not None and spread.system == system else ctx.replicas
    if not keys or system == "annotation":
        return total
    ns = ctx.sts.namespace
    group = tuple((k, str(v)) for k, v in keys)
    own = _cluster(ctx.sts, ctx_catalog(ctx))
    tally = ctx.inventory.tally_labelled(
        ns,
        group,
        partial(_member_weight, system, ctx_catalog(ctx), own),
        ("quorum-members", system, own),
    )
    return max(total, ctx.replicas + tally.total - tally.weight(ctx.sts.name))


def _cluster(sts: K8sObject, cat: Catalog) -> str | None:
    """The cluster name of a set's server (:func:`rules._systems.cluster_name`)."""
    found = recognise_set(sts, cat)
    if found is None or found.container is None:
        return None
    return cluster_name(found.system, found.container)


def _member_weight(system: str, cat: Catalog, cluster: str | None, other: K8sObject) -> int | None:
    """The voting replicas ``other`` adds to a quorum system ``system`` spanning
    StatefulSets (``None``: not a voting member set, such as a data-only one, or a member of
    another cluster of the installation: a shard beside the config server)."""
    theirs = _cluster(other, cat)
    if cluster is not None and theirs is not None and theirs != cluster:
        return None
    if _quorum_system(other, cat) != system:
        return None
    replicas = set_spec(other).replicas
    return 1 if replicas is None else replicas


def allowed_down(ctx: CheckContext, value: int | str | None, replicas: int | None = None) -> int:
    """How many of the set's replicas an objective's ``max-unavailable`` ``value`` lets go at
    once (``None``: the default, minority). ``minority`` of a quorum system is counted over all
    its voting members (:func:`members`: an arbiter in another set counts) and is at most the
    set's own replicas; of a set that is one of several forming a system
    (:func:`rules._group.group_of`) it is half of the whole system, at most the set's own
    replicas; of other sets it is at most half."""
    n = ctx.replicas if replicas is None else replicas
    value = MINORITY if value is None else value
    return ctx.memo(("allowed_down", value, n), lambda: _allowed_down(ctx, value, n))


def _allowed_down(ctx: CheckContext, value: int | str, n: int) -> int:
    from ._group import peer_group

    system = quorum_system(ctx)
    if value == MINORITY and system is not None:
        total = max(n, members(ctx, system) if n == ctx.replicas else n)
        return min(n, minority(total, True))
    spread = peer_group(ctx) if value == MINORITY and n == ctx.replicas else None
    if spread is not None and spread.total > n:
        # one set of a system spread over several (a ring of one set per zone): the minority
        # is counted over the whole system, and is at most the set's own replicas
        return min(n, minority(spread.total, False))
    return resolve_max_unavailable(value, n, system is not None)


def is_quorum(ctx: CheckContext) -> bool:
    """Whether ``ctx.sts`` runs a quorum system (see :func:`quorum_system`)."""
    return quorum_system(ctx) is not None
