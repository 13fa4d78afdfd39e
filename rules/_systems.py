"""The catalog of stateful systems: what runs in a StatefulSet, as data (helpers for rules).

Each system is one YAML file in ``rules/systems/`` (``<id>.yaml``, checked against
``ssrisk/schemas/system.schema.json``): how to recognise its server container (image names,
server programs, environment variables, arguments; and the client programs of the same image,
which are not servers), its replication model, where its data lives, whether members address
each other by per-pod DNS names, which probes depend on peers, what a clean shutdown and a
full-cluster cold start need, and how it recovers. Every section names its source.

Users add systems or override sections of built-in ones with the configuration's ``systems:``
section (same fields) or a plugin's ``ssrisk_systems`` hook; the annotation
``ssrisk.io/system: <id>`` on the StatefulSet (or its pod template) names the system where
recognition cannot (``none``: no catalogued system).

Recognition reads what the container runs, not the image name alone: a container is scored
against every entry (a matching argument pattern 3, a declared port that only that system's
server uses 3, a server-only environment variable 2, the server program 2, the image name 1)
and the highest score wins; a container whose command line
matches an entry's ``clients`` patterns is never that system's server (``vault agent``,
``etcdctl``, ``mongosh``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from ssrisk.embedded_sim.lazyre import lazy
from ssrisk.embedded_sim.podtemplate import Container

if TYPE_CHECKING:
    from ssrisk.model import K8sObject
    from ssrisk.rule import CheckContext

#: Where the built-in entries are.
CATALOG_DIR = Path(__file__).parent / "systems"
#: The annotation that names a StatefulSet's system (on the set or its pod template).
ANNOTATION = "ssrisk.io/system"
#: The annotation's value for "no catalogued system".
NONE = "none"

#: Architecture suffixes of per-architecture image names (``etcd-amd64``).
_ARCH = re.compile(r"-(?:amd64|arm64|arm|ppc64le|s390x|386)$")
#: Shells whose ``-c`` script is the program that runs.
_SHELLS = lazy(r"^(?:\S*/)?(?:sh|bash|ash|dash)$")
#: A script's ``exec`` command at the start of one of its commands.
_EXEC = re.compile(r"(?:^|[;&|\n])[^\S\n]*exec\s+([^;&|\n]+)")
#: Launchers that run the program named after them.
_LAUNCHER = re.compile(
    r"^(?:\S*/)?(?:docker-entrypoint\.sh|tini|dumb-init|gosu\s+\S+|su-exec\s+\S+|"
    r"/opt/bitnami/scripts/\S+/(?:entrypoint|run)\.sh)(?:\s+--)?\s+"
)


class System(msgspec.Struct, frozen=True):
    """One catalog entry, typed. Durations in seconds; ``None``: the catalog does not say."""

    id: str
    name: str
    category: str
    images: frozenset[str] = frozenset()
    commands: frozenset[str] = frozenset()
    env: frozenset[str] = frozenset()
    args: tuple[LazyPattern, ...] = ()
    clients: tuple[LazyPattern, ...] = ()
    ports: frozenset[int] = frozenset()
    #: The same ports in the catalog's order: the one clients connect to first (a readiness
    #: probe the fixes add checks the first of them the container declares).
    port_order: tuple[int, ...] = ()
    #: ``quorum``, ``primary-replica``, ``sharded``, ``independent`` or ``single-instance``.
    model: str = "single-instance"
    automatic_promotion: bool | None = None
    promoted_by: tuple[str, ...] = ()
    cluster_env: frozenset[str] = frozenset()
    cluster_settings: tuple[str, ...] = ()
    factor_default: int | None = None
    factor_env: frozenset[str] = frozenset()
    factor_settings: tuple[str, ...] = ()
    factor_not_when: tuple[LazyPattern, ...] = ()
    voting_env: tuple[LazyPattern, ...] = ()
    voting_roles: frozenset[str] = frozenset()
    default_votes: bool = True
    durable: bool = True
    often_cache: bool = False
    no_data_when: tuple[LazyPattern, ...] = ()
    data_paths: tuple[str, ...] = ()
    data_env: frozenset[str] = frozenset()
    data_settings: tuple[str, ...] = ()
    per_pod_dns: bool | None = None
    peer_probes: tuple[LazyPattern, ...] = ()
    local_probes: tuple[LazyPattern, ...] = ()
    grace_s: int | None = None
    minimum_grace_s: int | None = None
    shutdown_what: str = ""
    cold_start_needs_peers: bool | None = None
    cold_start_what: str = ""
    sealed: bool = False
    manual_rejoin: bool = False
    recovery_what: str = ""
    #: section name → source (a documentation page or a source file and function)
    sources: Mapping[str, str] = msgspec.field(default_factory=dict)
    #: where the entry comes from: a file of the catalog, the configuration, a plugin
    origin: str = ""

    def source(self, section: str) -> str:
        """The source of a section's facts (``""`` when the entry has none)."""
        return self.sources.get(section, "")

    @property
    def elects(self) -> bool:
        """Whether some members vote in a majority election (the model is quorum, or roles
        vote: Kafka KRaft controllers, Elasticsearch master-eligible nodes)."""
        return self.model == "quorum" or bool(self.voting_roles)


class LazyPattern:
    """A catalog pattern, compiled when it is first searched: the catalog holds about 170
    and a run consults few of them (compiling them all was about 20 ms of every run's start).
    Patterns are checked when an entry is read (:func:`pattern_problem`)."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> re.Match[str] | None:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern)
        return compiled.search(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LazyPattern) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r})"


def _patterns(values: Iterable[str]) -> tuple[LazyPattern, ...]:
    return tuple(LazyPattern(str(v)) for v in values)


def parse_entry(raw: Mapping[str, Any], origin: str) -> System:
    """The typed entry of a mapping that follows ``catalog.schema.json`` (checked by the
    caller: the catalog's tests for the built-in files, the configuration for its own)."""
    rec = raw.get("recognise") or {}
    rep = raw.get("replication") or {}
    factor = rep.get("factor") or {}
    voting = rep.get("voting_roles") or {}
    data = raw.get("data") or {}
    peers = raw.get("peers") or {}
    probes = raw.get("probes") or {}
    shut = raw.get("shutdown") or {}
    cold = raw.get("cold_start") or {}
    rec_ = raw.get("recovery") or {}
    sources = {
        k: str(v["source"]) for k, v in raw.items() if isinstance(v, Mapping) and "source" in v
    }
    return System(
        id=str(raw["id"]),
        name=str(raw.get("name") or raw["id"]),
        category=str(raw.get("category") or ""),
        images=frozenset(str(i).lower() for i in rec.get("images", ())),
        commands=frozenset(rec.get("commands", ())),
        env=frozenset(rec.get("env", ())),
        args=_patterns(rec.get("args", ())),
        ports=frozenset(int(p) for p in rec.get("ports", ())),
        port_order=tuple(int(p) for p in rec.get("ports", ())),
        clients=_patterns(rec.get("clients", ())),
        model=str(rep.get("model") or "single-instance"),
        automatic_promotion=rep.get("automatic_promotion"),
        promoted_by=tuple(rep.get("promoted_by", ())),
        cluster_env=frozenset(rep.get("cluster_env", ())),
        cluster_settings=tuple(rep.get("cluster_settings", ())),
        factor_default=factor.get("default"),
        factor_env=frozenset(factor.get("env", ())),
        factor_settings=tuple(factor.get("settings", ())),
        factor_not_when=_patterns(factor.get("not_when", ())),
        voting_env=_patterns(voting.get("env", ())),
        voting_roles=frozenset(voting.get("roles", ())),
        default_votes=bool(voting.get("default_votes", True)),
        durable=bool(data.get("durable", True)),
        often_cache=bool(data.get("often_cache", False)),
        no_data_when=_patterns(data.get("no_data_when", ())),
        data_paths=tuple(data.get("paths", ())),
        data_env=frozenset(data.get("env", ())),
        data_settings=tuple(data.get("settings", ())),
        per_pod_dns=peers.get("per_pod_dns"),
        peer_probes=_patterns(probes.get("peer_dependent", ())),
        local_probes=_patterns(probes.get("local", ())),
        grace_s=shut.get("grace_s"),
        minimum_grace_s=shut.get("minimum_s"),
        shutdown_what=str(shut.get("what") or ""),
        cold_start_needs_peers=cold.get("needs_peers"),
        cold_start_what=str(cold.get("what") or ""),
        sealed=bool(rec_.get("sealed", False)),
        manual_rejoin=bool(rec_.get("manual_rejoin", False)),
        recovery_what=str(rec_.get("what") or ""),
        sources=sources,
        origin=origin,
    )


def merge_entry(base: Mapping[str, Any] | None, override: Mapping[str, Any]) -> dict[str, Any]:
    """``override``'s sections over ``base``'s (a section is replaced whole, so its facts
    and its source stay together)."""
    merged = dict(base or {})
    merged.update(override)
    return merged


def system_schema() -> dict[str, Any]:
    """The JSON schema of an entry (``ssrisk/schemas/system.schema.json``)."""
    import json
    from importlib.resources import files

    text = files("ssrisk.schemas").joinpath("system.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def builtin_entries() -> dict[str, dict[str, Any]]:
    """The raw built-in entries by id, read from ``rules/systems/*.yaml`` (once per process)."""
    return _builtin_entries()


@lru_cache(maxsize=1)
def _builtin_entries() -> dict[str, dict[str, Any]]:
    # ssrisk's own reader (the compiled one where built: about a quarter of PyYAML's time,
    # which every run pays); the catalog's tests check the entries against the schema
    from ssrisk.yamlpos import load_documents

    out: dict[str, dict[str, Any]] = {}
    for path in sorted(CATALOG_DIR.glob("*.yaml")):
        raw, _duplicates = next(load_documents(path.read_text(encoding="utf-8")))
        out[str(raw["id"])] = raw
    return out


#: Ports that web servers, application frameworks and metrics exporters listen on by
#: convention (HTTP 80/443 and their 8000-range alternates, Prometheus 9090, node exporter
#: 9100, Node.js 3000, Flask 5000): on its own such a port recognises no system.
GENERIC_PORTS = frozenset({80, 443, 3000, 5000, 8000, 8008, 8080, 8081, 8443, 8888, 9090, 9100})


class Catalog:
    """Systems by id, with the indexes recognition reads (built once per set of extra
    entries: the configuration's and plugins')."""

    def __init__(self, systems: Iterable[System]) -> None:
        self.systems: dict[str, System] = {s.id: s for s in systems}
        self._by_image: dict[str, list[System]] = {}
        self._by_command: dict[str, list[System]] = {}
        self._by_env: dict[str, list[System]] = {}
        self._with_args = [s for s in self.systems.values() if s.args]
        by_port: dict[int, list[System]] = {}
        for s in self.systems.values():
            for port in s.ports:
                by_port.setdefault(port, []).append(s)
        #: ports that only one system's server listens on (Redis Cluster's bus, 16379), and
        #: that generic web and metrics servers do not use too (CockroachDB's 8080 is any web
        #: application's: a port like that names no system on its own)
        self._unique_port = {
            p: found[0]
            for p, found in by_port.items()
            if len(found) == 1 and p not in GENERIC_PORTS
        }
        for s in self.systems.values():
            for image in s.images:
                self._by_image.setdefault(image, []).append(s)
            for command in s.commands:
                self._by_command.setdefault(command, []).append(s)
            for name in s.env:
                self._by_env.setdefault(name, []).append(s)

    def get(self, system_id: str) -> System | None:
        return self.systems.get(system_id)

    def __len__(self) -> int:
        return len(self.systems)

    def by_image(self, image: str) -> list[System]:
        """The systems whose server an image may run (by its repository name)."""
        return self._by_image.get(image_name(image), [])

    def match(self, container: Container) -> System | None:
        """The system whose server ``container`` runs, or ``None`` (see the module's scoring;
        a client of the system is not its server)."""
        program = program_line(container)
        scores: dict[str, int] = {}

        def add(found: Iterable[System], points: int) -> None:
            for s in found:
                scores[s.id] = scores.get(s.id, 0) + points

        add(self._by_image.get(image_name(container.image), ()), 1)
        add(self._by_command.get(_first_word(program), ()), 2)
        for name in {e.name for e in container.env}:
            add(self._by_env.get(name, ()), 2)
        if program:  # (no pattern of these matches an empty line: ssrisk.config refuses it)
            add((s for s in self._with_args if any(p.search(program) for p in s.args)), 3)
        ports = {p.container_port for p in container.ports}
        add((self._unique_port[p] for p in ports if p in self._unique_port), 3)
        best: System | None = None
        best_score = 0
        for system_id, score in scores.items():
            s = self.systems[system_id]
            if score > best_score and not is_client(s, program):
                best, best_score = s, score
        return best


def is_client(system: System, program: str) -> bool:
    """Whether ``program`` (:func:`program_line`) runs one of the system's client or helper
    programs rather than its server (never for an empty line: the image's entrypoint)."""
    if not program:
        return False
    stripped = _LAUNCHER.sub("", program)
    return any(p.search(program) or p.search(stripped) for p in system.clients)


def catalog(extra: tuple[tuple[str, str, str], ...] = ()) -> Catalog:
    """The built-in catalog with ``extra`` entries ``(id, fields as JSON, origin)`` added, or
    laid over the built-in entry of that id section by section (:func:`merge_entry`); built
    once per distinct ``extra`` (``catalog()`` and ``catalog(())`` are one)."""
    return _catalog(extra)


@lru_cache(maxsize=16)
def _catalog(extra: tuple[tuple[str, str, str], ...]) -> Catalog:
    import json

    merged: dict[str, tuple[dict[str, Any], str]] = {
        k: (v, f"rules/systems/{k}.yaml") for k, v in builtin_entries().items()
    }
    for system_id, fields, origin in extra:
        base = merged.get(system_id, (None, ""))[0]
        merged[system_id] = (merge_entry(base, {**json.loads(fields), "id": system_id}), origin)
    return Catalog(parse_entry(e, origin) for e, origin in merged.values())


# --- what a container runs ----------------------------------------------------------------


@lru_cache(maxsize=4096)
def image_name(image: str) -> str:
    """An image's repository name: the last path component, without registry, tag, digest or
    architecture suffix (``quay.io/coreos/etcd-amd64:v3.5`` → ``etcd``)."""
    name = image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return _ARCH.sub("", name)


def program_line(container: Container) -> str:
    """What the container runs, as one line: ``command`` then ``args`` (a shell's ``-c``
    script in their place, and of a script its last ``exec``; empty when both are unset: the
    image's own entrypoint)."""
    words = [*container.command, *container.args]
    if len(words) >= 3 and _SHELLS.match(words[0]) and words[1].startswith("-") and "c" in words[1]:
        words = words[2:]
    script = " ".join(words).strip()
    execs = _EXEC.findall(script)
    return execs[-1].strip() if execs else script


def _first_word(program: str) -> str:
    """The name of the program a command line starts (after a launcher), without its
    directory."""
    stripped = _LAUNCHER.sub("", program)
    first = stripped.split(None, 1)[0] if stripped.strip() else ""
    return first.rsplit("/", 1)[-1]


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


def _is_helper(container: Container) -> bool:
    """A container that runs a helper beside the server (see :data:`_HELPER_IMAGE`), or a
    catalogued system's client program (``vault agent``, ``etcdctl``: the entry's
    ``clients``)."""
    if _HELPER_IMAGE.search(image_name(container.image)):
        return True
    if _HELPER_NAME.search(container.name.lower()):
        return True
    program = program_line(container)
    return any(is_client(s, program) for s in catalog().by_image(container.image))


def server_container(sts: K8sObject) -> Container | None:
    """The container that runs what the StatefulSet is for (its server), or ``None`` when
    it has no container: the one the pod template's ``kubectl.kubernetes.io/default-container``
    annotation names; else of the containers that mount a ``volumeClaimTemplates`` volume
    (the set's data; all of them when none does), the first that is not a helper (an
    exporter, a proxy, a configuration renderer, a client such as ``vault agent``: see
    :func:`_is_helper`), else the first container that is not a helper (a claim mounted only
    by a backup sidecar), else the first of them. Restartable init containers (sidecars,
    KEP-753) are never the server."""
    return sts.memo("server_container", lambda: _server_container(sts))


def _server_container(sts: K8sObject) -> Container | None:
    model = sts.pod_template()
    items = model.main
    if not items:
        return None
    named = model.annotations.get(DEFAULT_CONTAINER)
    for c in items:
        if named and c.name == named:
            return c
    claims = model.claim_names
    data = [c for c in items if any(m.name in claims for m in c.mounts)]
    for pool in (data, items):  # a claim on an exporter or a backup sidecar only: the others
        found = next((c for c in pool if not _is_helper(c)), None)
        if found is not None:
            return found
    return (data or items)[0]


# --- a StatefulSet's system ---------------------------------------------------------------


class Recognised(msgspec.Struct, frozen=True):
    """The system a StatefulSet runs: the entry, the container that is its server, and how it
    was recognised (``"annotation"`` or ``"container"``)."""

    system: System
    container: Container | None
    how: str


def annotated_system(sts: K8sObject) -> str | None:
    """The ``ssrisk.io/system`` annotation's value (on the StatefulSet, else on its pod
    template), lower case; ``None`` when neither has it."""
    for source in (sts.set_spec().annotations, sts.pod_template().annotations):
        value = source.get(ANNOTATION)
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    return None


def recognise(ctx: CheckContext) -> Recognised | None:
    """The catalogued system ``ctx.sts`` runs (once per StatefulSet), or ``None``."""
    return ctx.memo("system", lambda: _recognise(ctx))


def _recognise(ctx: CheckContext) -> Recognised | None:
    return recognise_set(ctx.sts, ctx_catalog(ctx))


def recognise_set(sts: K8sObject, cat: Catalog) -> Recognised | None:
    """The catalogued system any StatefulSet runs, with ``cat`` the run's catalog: the one
    ``ssrisk.io/system`` names (``none``: no system), else the one its server container is
    recognised as; ``None`` when neither says. Once per set and catalog (a set is also
    recognised as the other set of its namespace's groups and quorums)."""
    return sts.memo(("recognised", cat), lambda: _recognise_set(sts, cat))


def _recognise_set(sts: K8sObject, cat: Catalog) -> Recognised | None:
    named = annotated_system(sts)
    server = server_container(sts)
    if named is not None:
        if named == NONE:
            return None
        entry = cat.get(named)
        return Recognised(entry, server, "annotation") if entry is not None else None
    if server is None:
        return None
    entry = cat.match(server)
    return Recognised(entry, server, "container") if entry is not None else None


def ctx_catalog(ctx: CheckContext) -> Catalog:
    """The run's catalog: the built-in entries with the configuration's and plugins'."""
    return catalog(ctx.systems)


def companions(ctx: CheckContext) -> frozenset[str]:
    """Ids of the systems the pod's other containers run (a Redis Sentinel beside Redis)."""
    cat = ctx_catalog(ctx)
    found = (cat.match(c) for c in ctx.sts.pod_template().running)
    return frozenset(s.id for s in found if s is not None)


# --- where the data lives -------------------------------------------------------------------


class DataDir(msgspec.Struct, frozen=True):
    """Where a server keeps its data: ``path``, and how ssrisk knows (``"env NAME"``,
    ``"--setting"``, or ``"default"`` for the catalog's default paths of the common images;
    ``candidates`` then lists them)."""

    path: str
    how: str
    candidates: tuple[str, ...] = ()
    #: ``candidates`` are all data directories (a list the manifest sets), not alternatives
    every: bool = False


def _setting_value(name: str, text: str) -> str | None:
    """The value of setting ``name`` in a command line or configuration text: ``name=V``,
    ``name V`` (a flag), ``name: V``; the first of a comma-separated list."""
    found = _setting_pattern(name).search(text)
    return found.group(1) if found else None


@lru_cache(maxsize=256)
def _setting_pattern(name: str) -> re.Pattern[str]:
    """``name`` as a setting: after a blank, a quote or dashes (``--default.replication.
    factor=3`` sets ``default.replication.factor``), not inside a longer name."""
    bare = re.escape(name.lstrip("-"))
    return re.compile(rf"(?<![\w.]){'-{0,2}'}{bare}(?:=|:[^\S\n]*|[^\S\n]+(?=[^-\s]))([^\s,;\"']+)")


def data_dir(system: System, container: Container) -> DataDir | None:
    """The data directory of ``system``'s server ``container``: set by one of the entry's
    ``data.env`` variables (a literal value), else by one of its ``data.settings`` on the
    command line, else the entry's default paths (``None`` when it has none)."""
    env, raw = resolved_env(container)
    for name in sorted(system.data_env & env.keys(), key=list(env).index):
        value = env[name]
        if value is None:
            value = _known_parent(raw[name] or "")
            if value is None:
                return None  # a variable ssrisk cannot read: where the data is is unknown
        dirs = tuple(d.strip() for d in value.split(",") if d.strip())
        if dirs:  # every directory of a list (Kafka's log.dirs) holds data
            return DataDir(dirs[0], f"env {name}", dirs if len(dirs) > 1 else (), every=True)
    program = " ".join([*container.command, *container.args])
    for setting in system.data_settings:
        value = _setting_value(setting, program)
        if value and "$(" in value:
            value = expand_env(value, container)
            if value is None:
                return None
        if value and value.startswith("/"):
            return DataDir(value, setting)
    if system.data_paths:
        return DataDir(system.data_paths[0], "default", system.data_paths)
    return None


def holds_no_data(
    system: System,
    container: Container,
    labels: Mapping[str, Any],
    patterns: tuple[LazyPattern, ...] | None = None,
) -> bool:
    """Whether the entry's ``data.no_data_when`` patterns (or ``patterns``) mark this member as
    one that holds no data (a MongoDB arbiter): searched in ``NAME=value`` of the literal env
    entries, the command line and ``key=value`` of the pod labels."""
    patterns = system.no_data_when if patterns is None else patterns
    if not patterns:
        return False
    texts = [f"{e.name}={e.value}" for e in container.env if e.value is not None]
    texts += [program_line(container)] + [f"{k}={v}" for k, v in labels.items()]
    return any(p.search(t) for p in patterns for t in texts)


def _known_parent(value: str) -> str | None:
    """The directory a path with an unreadable variable is certainly in: the text before its
    first ``$(``, up to the last ``/`` (``/data/mnesia/$(NODE)`` is in ``/data/mnesia``);
    ``None`` when that is not an absolute directory."""
    head = value.split("$(", 1)[0]
    parent = head.rsplit("/", 1)[0] if "/" in head else ""
    return parent if parent.startswith("/") and len(parent) > 1 else None


_ENV_REF = lazy(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def resolved_env(container: Container) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The container's environment as the kubelet builds it, and the values as written:
    entries in order, a later one of a name replacing an earlier one, and ``$(NAME)``
    expanded from the variables defined *before* it (a reference to one defined later, or not
    at all, stays as written; ``$$(`` is a literal ``$(``: docs/tasks/inject-data-application/
    define-interdependent-environment-variables.md). ``None``: a value ssrisk cannot know
    (``valueFrom`` a ConfigMap, a Secret or the downward API, or text that refers to one)."""
    env: dict[str, str | None] = {}
    raw: dict[str, str | None] = {}
    for e in container.env:
        raw[e.name] = e.value
        env[e.name] = None if e.value is None else _expand(e.value, env)
        # (a name redefined moves to its last place, as the kubelet's map keeps the last)
        env[e.name] = env.pop(e.name)
    return env, raw


def _expand(value: str, defined: Mapping[str, str | None]) -> str | None:
    unknown = False

    def one(m: re.Match[str]) -> str:
        nonlocal unknown
        if m.start() > 0 and value[m.start() - 1] == "$":
            return m.group(0)
        if m.group(1) not in defined:
            return m.group(0)  # not (yet) defined: the kubelet leaves the text as it is
        found = defined[m.group(1)]
        if found is None:
            unknown = True
            return ""
        return found

    out = _ENV_REF.sub(one, value) if "$(" in value else value
    return None if unknown else out.replace("$$(", "$(")


def expand_env(value: str, container: Container) -> str | None:
    """``value`` with ``$(NAME)`` references to the container's literal env entries
    expanded, as the kubelet expands them (dependent environment variables:
    docs/tasks/inject-data-application/define-interdependent-environment-variables.md;
    ``$$(NAME)`` stays literal); ``None`` when one names a variable without a literal value
    (from a ConfigMap, a Secret or the downward API)."""
    if "$(" not in value:
        return value
    out = _expand(value, resolved_env(container)[0])
    return None if out is None or _ENV_REF.search(out) else out


def cluster_name(system: System, container: Container) -> str | None:
    """The name of the cluster the member belongs to (a MongoDB replica set name), from the
    entry's ``cluster_env`` or ``cluster_settings``; ``None`` when the manifest does not say."""
    for e in container.env:
        if e.name in system.cluster_env and e.value:
            return e.value
    program = " ".join([*container.command, *container.args])
    for name in system.cluster_settings:
        value = _setting_value(name, program)
        if value:
            return value
    return None


def covering_mount(container: Container, path: str) -> tuple[str, str] | None:
    """``(volume name, mountPath)`` of the container's mount that holds ``path`` (the longest
    mountPath that is ``path`` or one of its parents), or ``None``."""
    best: tuple[str, str] | None = None
    target = path.rstrip("/") or "/"
    for m in container.mounts:
        mp = m.mount_path.rstrip("/") or "/"
        holds = target == mp or target.startswith(mp + "/") or mp == "/"
        if holds and (best is None or len(mp) > len(best[1])):
            best = (m.name, m.mount_path)
    return best


def factor_of(system: System, container: Container) -> tuple[int, str] | None:
    """``(replication factor, where it is set)`` of a sharded ``system`` whose server is
    ``container``: one of the entry's ``factor.env`` variables, one of its ``factor.settings``
    in the command line or an environment value (``KAFKA_OPTS``-style), else the entry's
    default (``"default"``). ConfigMaps are not read: a factor set only in a mounted
    configuration file is not seen. ``None`` when a variable sets it to a value ssrisk
    cannot read (another variable, a ConfigMap) or to no valid factor."""
    env, _raw = resolved_env(container)
    for name in sorted(system.factor_env & env.keys(), key=list(env).index):
        value = env[name]
        if value is None or not value.strip().isdigit() or int(value) < 1:
            return None  # set, but to nothing ssrisk can read (or an invalid factor)
        return int(value.strip()), f"env {name}"
    texts = [" ".join([*container.command, *container.args])]
    texts += [e.value for e in container.env if e.value]
    for name in system.factor_settings:
        for text in texts:
            value = _setting_value(name, text)
            if value is not None:
                return (int(value), name) if value.isdigit() and int(value) >= 1 else None
    return (system.factor_default or 1), "default"


def server_system(sts: K8sObject, cat: Catalog) -> str | None:
    """The catalog id of the system another StatefulSet runs (:func:`recognise_set`), or
    ``None``."""
    found = recognise_set(sts, cat)
    return found.system.id if found is not None else None


# --- patterns that run in linear time -------------------------------------------------------

#: Characters a white-space class must not match (tried on a few of every kind).
_NOT_SPACE = "aZ0_-.,;/|&:=$@!"


def pattern_problem(pattern: str) -> str | None:
    """Why a catalog pattern could take more than linear time on an attacker's command line,
    or ``None``: a backreference; a repeated group that itself repeats or alternates
    (``(a+)+``, ``(a|aa)+``); two repeats in a row (``[x,]*[x,]*``, whose splits multiply);
    or, in a pattern not anchored at its start, an unbounded repeat other than of white space
    followed by more pattern (``x[^;]*y`` rescans the rest of the line from every ``x``:
    write ``x[^;]{0,200}y``), or a bounded one of more than :data:`MAX_BOUND`. Matching such a
    pattern costs at most about MAX_BOUND steps a character. The pattern is compiled first
    (``re.error`` is a problem too)."""
    try:
        parsed = _sre_parse(pattern)
    except re.error as exc:
        return f"not a regular expression: {exc}"
    items = list(parsed)
    anchored = bool(items) and items[0][0] == _AT and items[0][1] in _START_ANCHORS
    return _walk(items, anchored, top=True)


def _stdlib(new: str, old: str) -> Any:
    """The regular expression parser's module: ``re._parser`` (3.11+) or ``sre_parse``."""
    import importlib

    try:
        return importlib.import_module(new)
    except ImportError:  # Python 3.10
        return importlib.import_module(old)


def _sre_parse(pattern: str) -> Any:
    return _stdlib("re._parser", "sre_parse").parse(pattern)


_sre_c = _stdlib("re._constants", "sre_constants")

_AT = _sre_c.AT
_START_ANCHORS = (_sre_c.AT_BEGINNING, _sre_c.AT_BEGINNING_STRING)
_REPEATS = tuple(
    getattr(_sre_c, name)
    for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
    if hasattr(_sre_c, name)
)
_UNBOUNDED = _sre_c.MAXREPEAT


#: The longest bounded repeat that may stand before more pattern.
MAX_BOUND = 200


def _walk(items: list[Any], anchored: bool, top: bool) -> str | None:
    previous_repeats = False
    for i, (op, av) in enumerate(items):
        if op == _sre_c.GROUPREF or op == _sre_c.GROUPREF_EXISTS:
            return "a backreference"
        repeats = op in _REPEATS and av[1] > 1
        if repeats and previous_repeats:
            return "two repeats in a row (their splits multiply: join or bound them)"
        previous_repeats = repeats
        if op in _REPEATS:
            _low, high, body = av
            if high > 1 and _repeats_or_branches(list(body)):
                return "a repeated group that repeats or alternates inside (nested quantifier)"
            last = top and i == len(items) - 1
            if not anchored and not last:
                if high == _UNBOUNDED and not _only_space(list(body)):
                    return "an unbounded repeat followed by more pattern (bound it: {0,200})"
                if high != _UNBOUNDED and high > MAX_BOUND:
                    return f"a repeat of more than {MAX_BOUND} followed by more pattern"
            found = _walk(list(body), anchored, top=False)
        elif op == _sre_c.SUBPATTERN:
            found = _walk(list(av[-1]), anchored, top=False)
        elif op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
            found = _walk(list(av[1]), anchored, top=False)
        elif op == _sre_c.BRANCH:
            found = next((p for b in av[1] if (p := _walk(list(b), anchored, False))), None)
        else:
            found = None
        if found:
            return found
    return None


def _repeats_or_branches(items: list[Any]) -> bool:
    for op, av in items:
        if op == _sre_c.BRANCH:
            return True
        if op in _REPEATS and av[1] > 1:
            return True
        if op == _sre_c.SUBPATTERN and _repeats_or_branches(list(av[-1])):
            return True
        if op in _REPEATS and _repeats_or_branches(list(av[2])):
            return True
    return False


def _only_space(items: list[Any]) -> bool:
    """Whether a repeat's body matches white space only (``\\s+`` between two words: its runs
    never overlap the words around them, so it rescans nothing)."""
    if len(items) != 1:
        return False
    try:
        one = re.compile(_item_text(items[0]))
    except (re.error, ValueError):
        return False
    return not any(one.fullmatch(c) for c in _NOT_SPACE)


def _item_text(item: Any) -> str:
    """A regular expression for one parsed item (a class, a literal, a negated literal)."""
    op, av = item
    if op == _sre_c.LITERAL:
        return re.escape(chr(av))
    if op == _sre_c.NOT_LITERAL:
        return "[^" + re.escape(chr(av)) + "]"
    if op == _sre_c.IN:
        parts: list[str] = []
        negate = ""
        for kind, value in av:
            if kind == _sre_c.NEGATE:
                negate = "^"
            elif kind == _sre_c.LITERAL:
                parts.append(re.escape(chr(value)))
            elif kind == _sre_c.RANGE:
                parts.append(re.escape(chr(value[0])) + "-" + re.escape(chr(value[1])))
            elif kind == _sre_c.CATEGORY:
                parts.append(_CATEGORY.get(value, "\\w"))
        return "[" + negate + "".join(parts) + "]"
    raise ValueError("not a class")


_CATEGORY = {
    _sre_c.CATEGORY_DIGIT: "\\d",
    _sre_c.CATEGORY_NOT_DIGIT: "\\D",
    _sre_c.CATEGORY_SPACE: "\\s",
    _sre_c.CATEGORY_NOT_SPACE: "\\S",
    _sre_c.CATEGORY_WORD: "\\w",
    _sre_c.CATEGORY_NOT_WORD: "\\W",
}


def entry_patterns(raw: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """``(key path, pattern)`` of every regular expression of a raw entry."""
    for section, keys in _PATTERN_KEYS.items():
        block = raw.get(section)
        if not isinstance(block, Mapping):
            continue
        for key in keys:
            if "." in key:
                outer, inner = key.split(".")
                values = (block.get(outer) or {}).get(inner) or ()
                path: tuple[str | int, ...] = (section, outer, inner)
            else:
                values = block.get(key) or ()
                path = (section, key)
            for i, value in enumerate(values):
                if isinstance(value, str):
                    yield (*path, i), value


_PATTERN_KEYS = {
    "recognise": ("args", "clients"),
    "replication": ("voting_roles.env", "factor.not_when"),
    "data": ("no_data_when",),
    "probes": ("peer_dependent", "local"),
}
