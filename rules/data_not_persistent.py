"""data-not-persistent: a stateful system keeps its data on an emptyDir or on no volume."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
from ssrisk.embedded_sim.podtemplate import Container, PodTemplate

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Position, Severity
from ssrisk.rule import CheckContext, Rule

from ._group import peer_group
from ._podspec import template
from ._systems import DataDir, System, covering_mount, data_dir, holds_no_data, recognise
from ._text import paragraph

#: Models in which a member that starts empty copies its data back from its peers (while a
#: majority, or another copy of each shard, is up). Not primary and replicas: the primary that
#: comes back empty has nothing to copy from, and may hand its emptiness to the replicas.
_RESYNC_MODELS = frozenset({"quorum", "sharded"})


class _Where(msgspec.Struct, frozen=True):
    """Where the data directory is: ``kind`` is ``"emptyDir"``, ``"ephemeral"`` (a generic
    ephemeral volume), ``"container"`` (no volume: the container's writable layer) or
    ``"persistent"``; ``volume`` names the volume, ``at`` is the field to point at."""

    kind: str
    volume: str
    path: str
    at: tuple[str | int, ...]


class DataNotPersistent(Rule):
    id = "data-not-persistent"
    severity = Severity.ERROR
    other_severities = (Severity.WARNING, Severity.INFO)
    summary = (
        "a catalogued stateful system keeps its data directory on an emptyDir, a generic "
        "ephemeral volume or the container's own filesystem: a rescheduled pod starts empty"
    )
    references = (
        "web: docs/concepts/storage/volumes.md (emptyDir: deleted when the pod is removed "
        "from its node)",
        "web: docs/concepts/storage/ephemeral-volumes.md",
        "web: docs/concepts/workloads/controllers/statefulset.md (Stable Storage)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        found = recognise(ctx)
        if found is None or found.container is None or ctx.replicas < 1 or ctx.is_fragment:
            return
        system, server = found.system, found.container
        if not system.durable or holds_no_data(system, server, ctx.pod_labels):
            return
        where_dir = data_dir(system, server)
        if where_dir is None:
            return
        model = template(ctx.sts)
        where = _locate(model, server, where_dir)
        if where is None or where.kind == "persistent":
            return
        yield self._finding(ctx, system, server, where_dir, where)

    def _finding(
        self, ctx: CheckContext, system: System, server: Container, dd: DataDir, where: _Where
    ) -> Finding:
        group = peer_group(ctx)  # one member set of a ring of sets re-syncs from the others
        n = group.total if group is not None and group.system == system.id else ctx.replicas
        replicated = n > 1 and system.model in _RESYNC_MODELS
        resyncs = replicated and not system.manual_rejoin
        copies = n > 1 and system.model == "independent"  # an HA pair keeps its own copies
        on = {
            "emptyDir": f"on emptyDir {where.volume!r}",
            "ephemeral": f"on ephemeral volume {where.volume!r}",
            "container": "on no volume",
        }[where.kind]
        set_by = "" if dd.how == "default" else f" ({dd.how})"
        if resyncs:
            consequence = "a rescheduled member starts empty and must copy it all from its peers"
        elif replicated:
            consequence = "a rescheduled member starts empty and cannot rejoin on its own"
        elif copies:
            consequence = "a rescheduled pod starts empty; the others keep their copies"
        else:
            consequence = "a rescheduled pod starts empty and the data is lost"
        if system.often_cache:
            consequence = "a rescheduled pod starts empty (fine only for a cache)"
        msg = f"{system.id} keeps its data in {where.path} {on}: {consequence}"
        at: Position = ctx.sts.pos(*where.at)
        rejoin = system.recovery_what if system.manual_rejoin else ""

        def explanation() -> str:
            lines = [
                paragraph(
                    f"""ssrisk recognises {system.name} in container {server.name!r}
                    (catalog: {system.origin}; data: {system.source("data")}). Its data
                    directory is {where.path}{set_by}, {on}{
                        " (the container's own filesystem)" if where.kind == "container" else ""
                    }. An emptyDir (or a generic ephemeral volume) is created when the pod is
                    scheduled to a node and deleted when the pod leaves it; the container's own
                    filesystem does not even survive a container restart. A StatefulSet
                    replaces a pod after a node loss, a drain, an eviction or a rollout, so the
                    replacement starts with an empty data directory{
                        f"; a member copies the data back from its peers, but all {n} replaced "
                        "together (a full restart, a zone loss) lose it"
                        if resyncs
                        else ""
                    }."""
                ),
                paragraph(rejoin and f"{system.name}: {rejoin} ({system.source('recovery')})."),
                self.page_section("How to fix"),
            ]
            return "\n\n".join(line for line in lines if line) + "\n"

        facts: dict[str, FactValue] = {
            "system": system.id,
            "data_path": where.path,
            "storage": where.kind,
            "replicas": n,
            "set_by": dd.how,
        }
        return self.finding(
            ctx,
            at,
            msg,
            explanation,
            severity=Severity.INFO
            if system.often_cache
            else Severity.WARNING
            if resyncs or copies
            else Severity.ERROR,
            facts=facts,
        )


def _locate(model: PodTemplate, server: Container, dd: DataDir) -> _Where | None:
    """Where ``dd`` is stored (:class:`_Where`); ``None`` when ssrisk cannot tell (a hostPath
    or another kind of volume, or default paths of which none is mounted while some other
    persistent volume is: the image may keep its data elsewhere). Of a list of directories
    the manifest sets (``dd.every``), the first that is not on a persistent volume."""
    if dd.every and dd.candidates:
        for path in dd.candidates:
            where = _locate(model, server, DataDir(path, dd.how))
            if where is not None and where.kind != "persistent":
                return where
        return None
    persistent = model.claim_names | {v.name for v in model.volumes if v.claim_name is not None}
    volumes = {v.name: v for v in model.volumes}
    paths = dd.candidates or (dd.path,)
    seen: list[_Where] = []
    for path in paths:
        mount = covering_mount(server, path)
        if mount is None:
            continue
        name, mount_path = mount
        index = next(i for i, m in enumerate(server.mounts) if m.mount_path == mount_path)
        mount_at = server.mounts[index].path
        at = (*mount_at, "mountPath") if mount_at else server.path
        if name in persistent:
            return _Where("persistent", name, path, at)
        volume = volumes.get(name)
        if volume is None:
            continue
        if volume.empty_dir or volume.ephemeral:
            seen.append(_Where("emptyDir" if volume.empty_dir else "ephemeral", name, path, at))
    if seen:
        return seen[0]
    mounts_persistent = any(m.name in persistent for m in server.mounts)
    if dd.how == "default" and mounts_persistent:
        return None  # the image may be configured to keep its data on that volume
    if any(covering_mount(server, p) is not None for p in paths):
        return None  # on a hostPath, a configMap...: another rule's matter
    return _Where("container", "", dd.path, server.path)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [DataNotPersistent()]
