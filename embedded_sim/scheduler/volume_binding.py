"""VolumeBinding: a bound PersistentVolume's node affinity must match the node.

pkg/scheduler/framework/plugins/volumebinding/volume_binding.go#Filter ->
binder.go#FindPodVolumes: "node(s) didn't match PersistentVolume's node affinity" (from 1.33;
"node(s) had volume node affinity conflict" before: versions.VersionDefaults). A StatefulSet keeps
each ordinal's claim, so a local volume ties the ordinal to its node and a zonal disk to its zone
for good (storage.py). Unbound WaitForFirstConsumer claims are provisioned where the pod lands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..cluster import Node
    from .framework import FilterContext

NAME = "VolumeBinding"
SOURCE = "pkg/scheduler/framework/plugins/volumebinding/volume_binding.go#Filter"


def filter(ctx: FilterContext, node: Node) -> str | None:
    for vol in ctx.volumes:
        if vol.topology == "zonal" and vol.zone is not None and vol.zone != node.zone:
            return ctx.volume_conflict_reason
        if vol.topology == "local" and vol.node is not None and vol.node != node.name:
            return ctx.volume_conflict_reason
    return None


def constraint(ctx: FilterContext) -> str:
    for vol in ctx.volumes:
        if vol.topology == "local" and vol.node is not None:
            return f"its local volume (claim {vol.claim}) is on {vol.node}"
        if vol.topology == "zonal" and vol.zone is not None:
            return f"its zonal volume (claim {vol.claim}) is in {vol.zone}"
    return "its volumes are pinned elsewhere"
