"""What the pods of a StatefulSet do, as far as the manifests say: hold state, serve clients
(helpers for rules; nothing here reports anything).

A rule whose harm needs one of these (an outage of stored data, clients sent to a pod that is
not ready, per-pod names that peers resolve) reads them here, so that every rule draws the line
in the same place:

- a set **holds state** when a claim gives its pods a volume that outlives them: a
  ``volumeClaimTemplates`` entry, or a pod volume that mounts a PersistentVolumeClaim
  (``emptyDir`` and generic ephemeral volumes go with the pod and hold nothing across a
  replacement: docs/concepts/storage/ephemeral-volumes.md);
- a set **serves** when a container (or sidecar) declares a port, or a Service of its namespace
  that selects its pods declares one (the Service sends clients to the pods' endpoints:
  docs/concepts/services-networking/service.md). Declared container ports are informational
  to Kubernetes (a process may listen on others), so a set that declares none and is behind no
  Service with ports is taken at its word: nothing is sent to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ssrisk.embedded_sim.lazyre import lazy
from ssrisk.embedded_sim.podtemplate import Container

from ssrisk.model import K8sObject

from ._podspec import containers, template

if TYPE_CHECKING:
    from ssrisk.rule import CheckContext


def holds_state(sts: K8sObject) -> bool:
    """Whether a claim gives the pods a volume that outlives them (``volumeClaimTemplates``, or
    a ``persistentVolumeClaim`` pod volume)."""
    return sts.memo("holds_state", lambda: _holds_state(sts))


def _holds_state(sts: K8sObject) -> bool:
    model = template(sts)
    return bool(model.claim_templates) or any(v.claim_name is not None for v in model.volumes)


def declares_ports(sts: K8sObject) -> bool:
    """Whether a container or sidecar of the template declares a port."""
    return any(c.ports for c in containers(sts))


def serves(ctx: CheckContext) -> bool:
    """Whether clients can be sent to the pods: a container port is declared, or a Service of
    the namespace with ports selects them."""
    return ctx.memo("serves", lambda: _serves(ctx))


def _serves(ctx: CheckContext) -> bool:
    if declares_ports(ctx.sts):
        return True
    return bool(ctx.inventory.serving_services(ctx.sts.namespace, ctx.pod_labels))


def nothing_at_stake(ctx: CheckContext) -> bool:
    """Whether the set's pods neither hold state (:func:`holds_state`) nor serve
    (:func:`serves`), in a manifest that is no fragment: an outage of one replica of such a set
    has nothing to fail over (single-replica's info case). A rule whose finding on one replica
    echoes single-replica's takes the same severity then, so that the finding it is folded
    into is never less severe than it is."""
    return not holds_state(ctx.sts) and not ctx.is_fragment and not serves(ctx)


def per_pod_names(ctx: CheckContext, service: str) -> str | None:
    """Why the pods are addressed by their per-pod DNS names (``<pod>.<service>``), or
    ``None`` when nothing says so: the catalogued system's members address each other by them
    (``peers.per_pod_dns``), or a container names one or hands the Service to a peer
    discovery setting (:func:`peer_evidence`)."""
    from ._systems import recognise

    found = recognise(ctx)
    if found is not None and found.system.per_pod_dns:
        return f"{found.system.id} members address each other by per-pod DNS names"
    where = peer_evidence(ctx.sts, service) if service else None
    return f"the pod template names its peers through it ({where})" if where else None


#: Environment variable names that carry a peer list or the Service to discover peers with.
_PEER_ENV = lazy(r"SERVICE|DISCOVERY|PEER|SEED|CLUSTER|MEMBER|JOIN|SERVERS|ENSEMBLE", re.I)


def _strings(c: Container) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of a container's command, args and literal env values."""
    for item in c.command:
        yield "command", item
    for item in c.args:
        yield "args", item
    for e in c.env:
        if e.value is not None:
            yield f"env {e.name}", e.value


def peer_evidence(sts: K8sObject, service: str) -> str | None:
    """Where the pod template names its peers through ``service``: a per-pod DNS name of the
    set's own pods (``<name>-<ordinal>.<service>``, ``$(POD_NAME).<service>``; another set's pod
    behind the same Service is not a peer) in a command, argument or env value, or an
    env variable for peer discovery (``K8S_SERVICE_NAME``, ``*_SEEDS``, ...) that names the
    Service; ``None`` when nothing does."""
    dns = word = None  # compiled only for a text that names the Service at all
    for c in containers(sts):
        for where, text in _strings(c):
            if service not in text:
                continue
            if dns is None or word is None:
                own = re.escape(sts.name) + r"-\d+"  # <name>-<ordinal>, or a pod-name variable
                dns = re.compile(
                    r"(?:(?<![\w-])" + own + r"|[)}])\." + re.escape(service) + r"(?![\w-])"
                )
                word = re.compile(r"(?<![\w.-])" + re.escape(service) + r"(?![\w-])")
            if dns.search(text):
                return where
            if where.startswith("env ") and _PEER_ENV.search(where) and word.search(text):
                return where
    return None
