"""What a probe checks, read from its handler (helpers for rules): a check the local process
answers alone, or one that needs the member's peers."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ssrisk.embedded_sim.lazyre import lazy
from ssrisk.embedded_sim.podtemplate import Probe

from ._scan import followed_by

if TYPE_CHECKING:
    from ssrisk.model import K8sObject

    from ._systems import System

#: Readiness checks answered by the local process alone, with no peer, quorum or leader:
#: ZooKeeper's ``ruok`` ("imok" does not mean the server joined the quorum: ZooKeeper
#: Administrator's Guide, "The Four Letter Words"; ``zookeeper-ready`` and ``zkOk.sh`` are
#: the ruok scripts of the Kubernetes "Running ZooKeeper" tutorial's images), ``pg_isready``,
#: ``mysqladmin``/``mariadb-admin ping``, Redis ``PING`` and ``rabbitmq-diagnostics ping``
#: (RabbitMQ "Monitoring", health check stage 1).
LOCAL_EXEC = lazy(r"\bruok\b|zookeeper-ready|\bzkOk\.sh\b|\bpg_isready\b", re.I)
#: Clients whose ``ping`` (later in the same command: no ``|``, ``;`` or ``&`` between) is
#: answered by the local server alone.
PING_CLIENT = lazy(
    r"\b(?:mysqladmin|mariadb-admin|redis-cli|valkey-cli|rabbitmq-diagnostics)\b", re.I
)
_PING = lazy(r"\bping\b", re.I)


def local_exec(text: str) -> bool:
    """Whether an exec check's command line (:func:`probe_text`) is answered by the local
    process alone (:data:`LOCAL_EXEC`, or a :data:`PING_CLIENT`'s ``ping``), in time linear in
    the command line."""
    return LOCAL_EXEC.search(text) is not None or followed_by(PING_CLIENT, _PING, text, "|;&")


#: HTTP readiness paths a server answers on its own: a root page, Prometheus-style
#: ``/-/ready`` and ``/-/healthy`` (the Alertmanager and Prometheus web handlers), ``/ping``.
LOCAL_PATHS = frozenset({"/", "/-/ready", "/-/healthy", "/ping"})
#: Readiness checks that need peers: Elasticsearch ``_cluster/health``, CockroachDB
#: ``/health?ready=1``, Consul ``/v1/status/leader``, ``etcdctl endpoint health``, Galera
#: ``wsrep_*`` state, MongoDB primary/secondary state, RabbitMQ cluster checks, ZooKeeper
#: ``srvr``/``mntr`` mode (leader or follower).
PEER_CHECK = re.compile(
    r"_cluster/health|/health\?ready=1|/v1/status/leader|endpoint\s+health|\bwsrep_"
    r"|isWritablePrimary|\bismaster\b|check_port_connectivity|cluster_status"
    r"|\b(?:srvr|mntr)\b",
    re.I,
)


def probe_text(probe: Probe) -> tuple[str, str]:
    """``(kind, text)`` of a probe: ``("exec", command line)``, ``("httpGet", path)``,
    ``("tcpSocket", "")``, ``("grpc", "")`` or ``("", "")``."""
    handler = probe.handler
    if handler is None:
        return "", ""
    if handler.kind == "exec":
        return "exec", handler.command_line
    return handler.kind, handler.http_path


#: Exec checks that answer whenever the process runs, even while it loads its data or has no
#: quorum: ZooKeeper's ``ruok`` (its RuokCommand prints "imok" unconditionally: zookeeper-server
#: NIOServerCnxn / FourLetterCommands; the tutorial's ``zookeeper-ready`` and ``zkOk.sh`` run
#: it). Not pg_isready or a database ping: those fail during crash recovery, which a liveness
#: probe must not cut short.
PROCESS_EXEC = lazy(r"\bruok\b|zookeeper-ready|\bzkOk\.sh\b", re.I)


def is_process_check(probe: Probe) -> bool:
    """Whether ``probe`` only tells that the process runs: a TCP connect (the kernel completes
    it from the listen backlog, however busy the process) or ZooKeeper's ruok
    (:data:`PROCESS_EXEC`). Such a check does not fail while a member is busy, catching up or
    without quorum."""
    kind, text = probe_text(probe)
    return kind == "tcpSocket" or (kind == "exec" and PROCESS_EXEC.search(text) is not None)


def depends_on_peers(probe: Probe, system: System | None) -> bool | None:
    """Whether ``probe`` passes only while the member's peers (a quorum, a primary, a green
    cluster) are up: ``True`` for a known cluster check (:data:`PEER_CHECK`, or the system's
    catalog entry's ``probes.peer_dependent``), ``False`` for one the local process answers
    alone (a TCP connect, :func:`local_exec`, a :data:`LOCAL_PATHS` page, or the entry's
    ``probes.local``), ``None`` when ssrisk cannot tell (a script of the image, an
    application page)."""
    kind, text = probe_text(probe)
    if system is not None and any(p.search(text) for p in system.peer_probes):
        return True
    if PEER_CHECK.search(text):
        return True
    if kind == "tcpSocket" or (kind == "exec" and local_exec(text)):
        return False
    if kind == "httpGet" and text.split("?", 1)[0] in LOCAL_PATHS:
        return False
    if system is not None and any(p.search(text) for p in system.local_probes):
        return False
    return None


def readiness_needs_peers(sts: K8sObject, system: System | None) -> tuple[bool | None, str]:
    """Whether the readiness probes of ``sts`` need peers to pass (:func:`depends_on_peers`,
    with the catalog entry of the system it runs): ``(True, probe)`` when one does,
    ``(False, probe)`` when every one is a local check, ``(None, probe)`` when ssrisk cannot
    tell (a script of the image). ``probe`` describes the deciding probe."""
    local: list[str] = []
    unknown = ""
    for c in sts.pod_template().running:
        probe = c.readiness
        if probe is None:
            continue
        kind, text = probe_text(probe)
        shown = f"{kind} {text}".strip()[:80]
        needs = depends_on_peers(probe, system)
        if needs:
            return True, shown
        if needs is False:
            local.append(shown)
        elif not unknown:
            unknown = shown or "a readiness probe"
    if unknown:
        return None, unknown
    return (False, local[0]) if local else (None, "")
