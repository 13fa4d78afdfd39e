"""What a probe checks, read from its handler (helpers for rules): a check the local process
answers alone, or one that needs the member's peers."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ._scan import followed_by

#: Readiness checks answered by the local process alone, with no peer, quorum or leader:
#: ZooKeeper's ``ruok`` ("imok" does not mean the server joined the quorum: ZooKeeper
#: Administrator's Guide, "The Four Letter Words"; ``zookeeper-ready`` and ``zkOk.sh`` are
#: the ruok scripts of the Kubernetes "Running ZooKeeper" tutorial's images), ``pg_isready``,
#: ``mysqladmin``/``mariadb-admin ping``, Redis ``PING`` and ``rabbitmq-diagnostics ping``
#: (RabbitMQ "Monitoring", health check stage 1).
LOCAL_EXEC = re.compile(r"\bruok\b|zookeeper-ready|\bzkOk\.sh\b|\bpg_isready\b", re.I)
#: Clients whose ``ping`` (later in the same command: no ``|``, ``;`` or ``&`` between) is
#: answered by the local server alone.
PING_CLIENT = re.compile(
    r"\b(?:mysqladmin|mariadb-admin|redis-cli|valkey-cli|rabbitmq-diagnostics)\b", re.I
)
_PING = re.compile(r"\bping\b", re.I)


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


def probe_text(probe: Mapping[str, Any]) -> tuple[str, str]:
    """``(kind, text)`` of a probe: ``("exec", command line)``, ``("httpGet", path)``,
    ``("tcpSocket", "")``, ``("grpc", "")`` or ``("", "")``."""
    for kind in ("exec", "httpGet", "tcpSocket", "grpc"):
        handler = probe.get(kind)
        if not isinstance(handler, Mapping):
            continue
        if kind == "exec":
            cmd = handler.get("command")
            words = cmd if isinstance(cmd, list) else []
            return kind, " ".join(str(w) for w in words)
        if kind == "httpGet":
            return kind, str(handler.get("path") or "/")
        return kind, ""
    return "", ""


#: Exec checks that answer whenever the process runs, even while it loads its data or has no
#: quorum: ZooKeeper's ``ruok`` (its RuokCommand prints "imok" unconditionally: zookeeper-server
#: NIOServerCnxn / FourLetterCommands; the tutorial's ``zookeeper-ready`` and ``zkOk.sh`` run
#: it). Not pg_isready or a database ping: those fail during crash recovery, which a liveness
#: probe must not cut short.
PROCESS_EXEC = re.compile(r"\bruok\b|zookeeper-ready|\bzkOk\.sh\b", re.I)


def is_process_check(probe: Mapping[str, Any]) -> bool:
    """Whether ``probe`` only tells that the process runs: a TCP connect (the kernel completes
    it from the listen backlog, however busy the process) or ZooKeeper's ruok
    (:data:`PROCESS_EXEC`). Such a check does not fail while a member is busy, catching up or
    without quorum."""
    kind, text = probe_text(probe)
    return kind == "tcpSocket" or (kind == "exec" and PROCESS_EXEC.search(text) is not None)
