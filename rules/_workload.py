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

from typing import TYPE_CHECKING

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
