"""A volume stays attached when the replacement pod lands on the same node.

The attach/detach controller detaches a cleanly unmounted volume only after the node stops
listing it in status.volumesInUse (pkg/controller/volume/attachdetach/reconciler/
reconciler.go#reconcile, MountedByNode), which the kubelet reports on its next status
update; a pod scheduled to that node before then makes the volume desired again
(util.go#DetermineVolumeAction), so nothing is detached and re-attached.
"""

from __future__ import annotations

from ssrisk.embedded_sim import simulate

from .simdata import load


def test_bad_rollout_on_the_same_node_keeps_the_volume_attached() -> None:
    res = simulate(load("pg-single.yaml").sts, "bad-rollout", kube_version="1.34")
    assert res.events("volume-detached") == [] and res.events("volume-attached") == []
    assert res.events("volume-multi-attach") == []


def test_drain_to_another_node_detaches_after_the_unmount_is_reported() -> None:
    res = simulate(load("pg-single.yaml").sts, "node-drain", kube_version="1.34")
    removed = res.first("pod-deleted", "pg-0")
    detached = res.first("volume-detached")
    assert removed is not None and detached is not None
    # volumesInUse report (5 s) + reconciler (0.1 s) + CSI detach (15 s) after the removal
    assert detached.t_s - removed.t_s == 20.1
    assert res.to_dict()["drain_completed"] is True
