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
from functools import lru_cache, partial

from ssrisk.embedded_sim.podtemplate import Container

from ssrisk.model import K8sObject
from ssrisk.objectives import MINORITY, minority, resolve_max_unavailable
from ssrisk.rule import CheckContext

from ._podspec import set_spec, template

ANNOTATION = "ssrisk.io/quorum"

#: Consensus-based systems, by the repository name of their server image (the last path
#: component, without registry, tag, digest or architecture suffix: ``bitnami/etcd:3.5``,
#: ``quay.io/coreos/etcd``, ``k8s.gcr.io/etcd-amd64`` are ``etcd``). Only an exact name
#: counts: ``etcd-operator``, ``mongo-express``, ``consul-template`` and
#: ``elasticsearch-exporter`` are other programs about those systems, not members of them.
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

#: Server images published under another name, and the system they run: the Kubernetes
#: ZooKeeper tutorial's images, Confluent's ZooKeeper, the Bitnami and Percona Galera and
#: MongoDB servers, MongoDB's own server images, the enterprise builds of Vault and Consul,
#: NATS Streaming (clustered over RAFT) and a widely used Elasticsearch build.
SERVER_ALIASES: dict[str, str] = {
    "kubernetes-zookeeper": "zookeeper",
    "k8szk": "zookeeper",
    "cp-zookeeper": "zookeeper",
    "mariadb-galera": "galera",
    "percona-xtradb-cluster": "xtradb",
    "percona-server-mongodb": "mongodb",
    "mongodb-community-server": "mongodb",
    "mongodb-enterprise-server": "mongodb",
    "vault-enterprise": "vault",
    "consul-enterprise": "consul",
    "nats-streaming": "nats",
    "docker-elasticsearch-kubernetes": "elasticsearch",
}

#: Architecture suffixes of per-architecture image names (``etcd-amd64``).
_ARCH = re.compile(r"-(?:amd64|arm64|arm|ppc64le|s390x|386)$")


@lru_cache(maxsize=4096)
def image_system(image: str) -> str | None:
    """The quorum system whose server an image runs (``"bitnami/etcd:3.5"`` → ``"etcd"``),
    or ``None`` (``"etcd-operator"``, ``"postgres-exporter"``: not a server of one)."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    name = _ARCH.sub("", name)
    if name in QUORUM_IMAGES:
        return name
    return SERVER_ALIASES.get(name)


def quorum_system(ctx: CheckContext) -> str | None:
    """What makes ``ctx.sts`` a quorum system: ``"etcd"`` (from its server's image),
    ``"annotation"``, or ``None`` when it is not one (or the annotation says ``"false"``)."""
    return ctx.sts.memo("quorum_system", lambda: _quorum_system(ctx.sts))


def _quorum_system(sts: K8sObject) -> str | None:
    said = str(set_spec(sts).annotations.get(ANNOTATION, "")).strip().lower()
    if said in ("true", "false"):
        return "annotation" if said == "true" else None
    main = server_container(sts)
    if main is None:
        return None
    found = image_system(main.image) or _flag_system(main)
    if found is None or not _serves(found, main) or not _votes(found, main):
        return None
    return found


#: Server options that say which system a container of another image runs: ``mongod
#: --replSet`` makes a member of a MongoDB replica set ("Replica Set Elections"), whatever the
#: image is called (an operator's build of mongod).
_SERVER_FLAGS: dict[str, re.Pattern[str]] = {"mongodb": re.compile(r"(?:^|\s)--replSet\b")}


def _flag_system(container: Container) -> str | None:
    program = _program(container)
    return next((s for s, flag in _SERVER_FLAGS.items() if flag.search(program)), None)


# --- which container is the set's server ---------------------------------------------------

#: The pod annotation that names a pod's main container (kubectl uses it as the default for
#: ``logs`` and ``exec``: docs/reference/labels-annotations-taints "kubectl.kubernetes.io/
#: default-container").
DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"

#: Images of helper programs that run beside a server: metrics exporters, configuration
#: renderers and reloaders, service-mesh and auth proxies, log shippers.
_HELPER_IMAGE = re.compile(
    r"(?:exporter|reloader?|consul-template|envtemplate|confd|istio-proxy|"
    r"proxyv2|envoy|linkerd2?-proxy|oauth2-proxy|cloud-sql-proxy|fluent-bit|fluentd|"
    r"filebeat|promtail|vector|busybox|alpine|curl|kubectl|wal-g|backup)$"
)
#: Container names of such helpers (the Bitnami charts' ``metrics``, ``*-exporter``, ...).
_HELPER_NAME = re.compile(r"(?:^metrics$|exporter|sidecar|reloader|^istio-proxy$|^backup)")


def _image_name(container: Container) -> str:
    image = container.image
    return _ARCH.sub("", image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower())


def _is_helper(container: Container) -> bool:
    """A container that runs a helper beside the server (see :data:`_HELPER_IMAGE`), or a
    quorum system's client program (``vault agent``, ``etcdctl``: :func:`_serves`)."""
    if _HELPER_IMAGE.search(_image_name(container)):
        return True
    if _HELPER_NAME.search(container.name.lower()):
        return True
    system = image_system(container.image)
    return system is not None and not _serves(system, container)


def server_container(sts: K8sObject) -> Container | None:
    """The container that runs what the StatefulSet is for (its server), or ``None`` when
    it has no container: the one the pod template's ``kubectl.kubernetes.io/default-container``
    annotation names; else of the containers that mount a ``volumeClaimTemplates`` volume
    (the set's data; all of them when none does), the first that is not a helper (an
    exporter, a proxy, a configuration renderer, a client such as ``vault agent``: see
    :func:`_is_helper`), else the first of them. Restartable init containers (sidecars,
    KEP-753) are never the server."""
    return sts.memo("server_container", lambda: _server_container(sts))


def _server_container(sts: K8sObject) -> Container | None:
    model = template(sts)
    items = model.main
    if not items:
        return None
    named = model.annotations.get(DEFAULT_CONTAINER)
    for c in items:
        if named and c.name == named:
            return c
    claims = model.claim_names
    data = [c for c in items if any(m.name in claims for m in c.mounts)]
    pool = data or items
    return next((c for c in pool if not _is_helper(c)), pool[0])


#: Per system, the programs or subcommands of its image that are clients, not servers
#: (searched in what the container runs; ``^`` anchors a pattern at the program that runs):
#: Vault's ``agent`` and ``proxy`` (Vault docs "Vault Agent", "Vault Proxy") and OpenBao's,
#: ``consul-template`` and Consul's ``connect envoy`` / ``snapshot agent``, the etcd and
#: ZooKeeper command-line clients, and the MongoDB shell and tools (the server is ``mongod``).
_CLIENT_COMMANDS: dict[str, re.Pattern[str]] = {
    "vault": re.compile(r"^(?:\S*/)?(?:agent|proxy)\b|\bvault\s+(?:agent|proxy)\b"),
    "openbao": re.compile(r"^(?:\S*/)?(?:agent|proxy)\b|\bbao\s+(?:agent|proxy)\b"),
    "consul": re.compile(r"\bconsul-template\b|\bconsul\s+(?:connect\s+envoy|snapshot\s+agent)\b"),
    "etcd": re.compile(r"^(?:\S*/)?(?:etcdctl|etcdutl)\b"),
    "zookeeper": re.compile(r"^(?:\S*/)?zkCli(?:\.sh)?\b"),
    "mongo": re.compile(r"^(?:\S*/)?(?:mongosh|mongo|mongodump|mongorestore|mongoexport)\b"),
}
_CLIENT_COMMANDS["mongodb"] = _CLIENT_COMMANDS["mongo"]
#: Shells whose ``-c`` script is the program that runs.
_SHELLS = re.compile(r"^(?:\S*/)?(?:sh|bash|ash|dash)$")


#: A script's ``exec`` command at the start of one of its commands (the blanks before it are
#: not line breaks: a ``\s*`` there rescanned every following line break from each one).
_EXEC = re.compile(r"(?:^|[;&|\n])[^\S\n]*exec\s+([^;&|\n]+)")


def _program(container: Container) -> str:
    """What the container runs, as one line: ``command`` then ``args`` (a shell's ``-c``
    script in their place; empty when both are unset: the image's own entrypoint)."""
    words = [*container.command, *container.args]
    if len(words) >= 3 and _SHELLS.match(words[0]) and words[1].startswith("-") and "c" in words[1]:
        words = words[2:]
    script = " ".join(words).strip()
    # a script's last ``exec`` is what keeps running (the docker-entrypoint idiom)
    execs = _EXEC.findall(script)
    return execs[-1].strip() if execs else script


def _serves(system: str, container: Container) -> bool:
    """Whether a container of ``system``'s image runs its server rather than one of its
    client programs (:data:`_CLIENT_COMMANDS`; ``hashicorp/vault`` with ``args: [agent,
    ...]`` is a Vault Agent beside the application, not a Vault server)."""
    pattern = _CLIENT_COMMANDS.get(system)
    if pattern is None:
        return True
    program = _program(container)
    entry = re.sub(r"^(?:\S*/)?docker-entrypoint\.sh\s+", "", program)
    return not (pattern.search(program) or pattern.search(entry))


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


def _votes(system: str, container: Container) -> bool:
    """Whether a container of ``system`` is a voting member: always, except an Elasticsearch
    or OpenSearch node whose environment gives it roles without master / cluster_manager (or
    ``node.master: false``)."""
    if system not in _ROLE_SYSTEMS:
        return True
    for e in container.env:
        value = e.value
        if value is None:
            continue  # from a ConfigMap or Secret: unknown, a vote by default
        if _ROLES_ENV.search(e.name):
            roles = {r.strip().lower() for r in value.split(",")}
            return bool(roles & _MASTER_ROLES)
        if _LEGACY_MASTER_ENV.search(e.name) and value.strip().lower() == "false":
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
    ns = ctx.sts.namespace
    group = tuple((k, str(v)) for k, v in keys)
    tally = ctx.inventory.tally_labelled(
        ns, group, partial(_member_weight, system), ("quorum-members", system)
    )
    return total + tally.total - tally.weight(ctx.sts.name)


def _member_weight(system: str, other: K8sObject) -> int | None:
    """The voting replicas ``other`` adds to a quorum system ``system`` spanning
    StatefulSets (``None``: not a voting member set, such as a data-only one)."""
    if _quorum_system(other) != system:
        return None
    replicas = set_spec(other).replicas
    return 1 if replicas is None else replicas


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
