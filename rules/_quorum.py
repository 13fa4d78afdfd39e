"""Which StatefulSets run a quorum (majority-vote) system (helpers for rules).

A quorum system stops accepting writes when a majority of its members is down, so losing half
of an even number of members is an outage; other replicated systems (an HA pair of Prometheus
servers, a primary with read replicas) keep serving with half. ssrisk recognises the common
consensus-based images by name, and the annotation ``ssrisk.io/quorum: "true"`` (or
``"false"``) on the StatefulSet says it for any other image.

Sources (each system's own documentation of its majority rule): etcd FAQ "Why an odd number of
cluster members?"; ZooKeeper Administrator's Guide "Clustered (Multi-Server) Setup"; Consul
"Consensus Protocol" (deployment table); Vault "Integrated Storage" (Raft quorum); CockroachDB
"Replication Layer" (Raft majority per range); MongoDB "Replica Set Elections"; RabbitMQ
"Quorum Queues" and "Clustering" (partition handling pause_minority); NATS "JetStream
Clustering" (RAFT); Galera Cluster "Quorum Components"; Elasticsearch and OpenSearch "Voting
configurations" (a majority of master-eligible nodes).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ssrisk.model import K8sObject
from ssrisk.objectives import MINORITY, minority, resolve_max_unavailable
from ssrisk.rule import CheckContext

from ._podspec import containers

ANNOTATION = "ssrisk.io/quorum"

#: Image name parts (the last path segment, split at "-") of consensus-based systems.
QUORUM_IMAGES = frozenset(
    {
        "etcd",
        "zookeeper",
        "consul",
        "vault",
        "openbao",
        "cockroach",
        "cockroachdb",
        "mongo",
        "mongodb",
        "rabbitmq",
        "nats",
        "galera",
        "xtradb",
        "elasticsearch",
        "opensearch",
    }
)

_SPLIT = re.compile(r"[-_.]")


@lru_cache(maxsize=4096)
def image_system(image: str) -> str | None:
    """The quorum system an image runs (``"bitnami/etcd:3.5"`` → ``"etcd"``), or ``None``."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    for part in _SPLIT.split(name):
        if part in QUORUM_IMAGES:
            return part
    return None


def quorum_system(ctx: CheckContext) -> str | None:
    """What makes ``ctx.sts`` a quorum system: ``"etcd"`` (from an image), ``"annotation"``,
    or ``None`` when it is not one (or the annotation says ``"false"``)."""
    return ctx.sts.memo("quorum_system", lambda: _quorum_system(ctx.sts))


def _quorum_system(sts: K8sObject) -> str | None:
    meta = sts.metadata.get("annotations")
    if isinstance(meta, dict) or hasattr(meta, "get"):
        said = str(meta.get(ANNOTATION, "") if meta else "").strip().lower()
        if said in ("true", "false"):
            return "annotation" if said == "true" else None
    for field, _i, c in containers(sts):
        if field == "containers":
            found = image_system(str(c.get("image") or ""))
            if found:
                return found if _votes(found, c) else None
    return None


#: Systems where only some node roles vote: Elasticsearch and OpenSearch elect the master from
#: master-eligible nodes only (Elasticsearch "Voting configurations", OpenSearch "Creating a
#: cluster": node.roles master / cluster_manager); data, ingest and coordinating-only nodes
#: hold no vote.
_ROLE_SYSTEMS = frozenset({"elasticsearch", "opensearch"})
#: Environment variables that set the node's roles: the ``node.roles`` setting itself (the
#: official images read settings from the environment) and the Bitnami images'
#: ``*_NODE_ROLES`` (comma-separated; empty means coordinating only) and ``*_NODE_TYPE``.
_ROLES_ENV = re.compile(r"(?:^|[._])node[._](?:roles|type)$", re.I)
_LEGACY_MASTER_ENV = re.compile(r"(?:^|[._])node[._]master$", re.I)
_MASTER_ROLES = frozenset({"master", "cluster_manager"})


def _votes(system: str, container: object) -> bool:
    """Whether a container of ``system`` is a voting member: always, except an Elasticsearch
    or OpenSearch node whose environment gives it roles without master / cluster_manager (or
    ``node.master: false``)."""
    if system not in _ROLE_SYSTEMS or not hasattr(container, "get"):
        return True
    env = container.get("env")
    for e in env if isinstance(env, list) else []:
        if not hasattr(e, "get") or not isinstance(e.get("name"), str):
            continue
        value = e.get("value")
        if not isinstance(value, str):
            continue  # from a ConfigMap or Secret: unknown, a vote by default
        if _ROLES_ENV.search(e["name"]):
            roles = {r.strip().lower() for r in value.split(",")}
            return bool(roles & _MASTER_ROLES)
        if _LEGACY_MASTER_ENV.search(e["name"]) and value.strip().lower() == "false":
            return False
    return True


#: Labels that tie StatefulSets into one installation (Helm's and the recommended labels).
INSTANCE_LABELS = ("app.kubernetes.io/instance", "release")


def members(ctx: CheckContext, system: str) -> int:
    """Voting members of the quorum system across StatefulSets: ``ctx.replicas`` plus the
    replicas of other StatefulSets in the namespace that run the same system and carry the same
    instance label (a MongoDB arbiter beside its data members, an Elasticsearch master set
    beside a data set)."""
    labels = ctx.pod_labels
    keys = [(k, labels[k]) for k in INSTANCE_LABELS if labels.get(k)]
    total = ctx.replicas
    if not keys or system == "annotation":
        return total
    for other in ctx.inventory.in_namespace("StatefulSet", ctx.sts.namespace):
        if other is ctx.sts or other.name == ctx.sts.name:
            continue
        tl = other.get("spec", "template", "metadata", "labels")
        if not isinstance(tl, dict) and not hasattr(tl, "get"):
            continue
        if not all(str(tl.get(k)) == str(v) for k, v in keys):
            continue
        replicas = other.get("spec", "replicas")
        if _quorum_system(other) == system:  # a voting member set (not a data-only one)
            ok = isinstance(replicas, int) and not isinstance(replicas, bool)
            total += replicas if ok else 1
    return total


def allowed_down(ctx: CheckContext, value: int | str | None, replicas: int | None = None) -> int:
    """How many of the set's replicas an objective's ``max-unavailable`` ``value`` lets go at
    once (``None``: the default, minority). ``minority`` of a quorum system is counted over all
    its voting members (:func:`members`: an arbiter in another set counts) and is at most the
    set's own replicas; of other sets it is at most half."""
    n = ctx.replicas if replicas is None else replicas
    value = MINORITY if value is None else value
    return ctx.memo(("allowed_down", value, n), lambda: _allowed_down(ctx, value, n))


def _allowed_down(ctx: CheckContext, value: int | str, n: int) -> int:
    system = quorum_system(ctx)
    if value == MINORITY and system is not None:
        total = max(n, members(ctx, system) if n == ctx.replicas else n)
        return min(n, minority(total, True))
    return resolve_max_unavailable(value, n, system is not None)


def is_quorum(ctx: CheckContext) -> bool:
    """Whether ``ctx.sts`` runs a quorum system (see :func:`quorum_system`)."""
    return quorum_system(ctx) is not None
