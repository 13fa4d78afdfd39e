"""What a claim ties a pod to (embedded_sim/storage.py): class resolution and node-local volumes."""

from __future__ import annotations

import pytest
from ssrisk.embedded_sim import ClusterProfile, simulate
from ssrisk.embedded_sim.storage import claim_class_name, resolve_claim

from .simdata import load


def test_beta_annotation_is_read_before_storage_class_name() -> None:
    # pkg/apis/core/v1/helper/helpers.go#GetPersistentVolumeClaimClass: "Use beta annotation first"
    template = load("local-by-annotation.yaml").sts["spec"]["volumeClaimTemplates"][0]
    assert claim_class_name(template) == "local-path"
    assert claim_class_name({"spec": {"storageClassName": "gp3"}}) == "gp3"
    assert claim_class_name({"spec": {}}) is None


@pytest.mark.parametrize(
    ("name", "topology"),
    [
        ("local-path", "local"),
        ("openebs-hostpath", "local"),
        ("local-nvme", "local"),
        ("openebs-jiva-default", "zonal"),  # replicated (iSCSI), not node-local: the assumption
        ("gp3", "zonal"),
    ],
)
def test_known_local_class_names_without_the_class_object(name: str, topology: str) -> None:
    st = resolve_claim(name, ("ReadWriteOnce",), "data", [], [], ClusterProfile())
    assert st.topology == topology
    assert (st.note is None) == (topology == "local")


@pytest.mark.parametrize("scenario", ["node-loss-out-of-service", "node-deleted"])
def test_node_local_volume_is_never_detached_and_pins_the_pod(scenario: str) -> None:
    r = simulate(load("local-by-annotation.yaml").sts, scenario, kube_version="1.34")
    # local volumes have no attacher: no Multi-Attach error, no detach wait, no attach
    for kind in ("volume-multi-attach", "volume-detach-waiting", "volume-detached"):
        assert r.events(kind) == [], kind
    pending = r.first("pod-pending", "kv-0")
    assert pending is not None and "volume node affinity conflict" in pending.event
    assert not r.recovered and r.manual_action_required
