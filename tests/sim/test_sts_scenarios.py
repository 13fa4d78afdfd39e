"""S-scenarios from sts-controller-scenarios.md, replayed step by step ("delete is instant").

Every harness checks the upstream invariants after every controller pass (stsinv.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from .stsinv import harness


def sts(replicas: int, policy: str = "OrderedReady", **spec: Any) -> dict[str, Any]:
    s: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "ss", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "podManagementPolicy": policy,
            "selector": {"matchLabels": {"foo": "bar"}},
            "template": {
                "metadata": {"labels": {"foo": "bar"}},
                "spec": {"containers": [{"name": "c"}]},
            },
            "volumeClaimTemplates": [
                {"metadata": {"name": "datadir"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
            ],
        },
    }
    s["spec"].update(spec)
    return s


POLICIES = ["OrderedReady", "Parallel"]


def test_S05_ordered_scaling_halts_on_unhealthy_pod() -> None:
    h = harness(sts(1))
    h.bring_up()
    h.set_ready(0, False)
    h.scale(3)
    for _ in range(5):
        h.sync()
    assert h.ordinals() == [0]
    h.bring_up()
    assert [p for p in h.created_order()] == ["ss-0", "ss-1", "ss-2"]
    for o in range(3):
        h.set_ready(o, False)
    h.scale(0)
    for _ in range(5):
        h.sync()
    assert h.ordinals() == [0, 1, 2]
    for o in range(3):
        h.set_ready(o, True, since_s=-3600)
    for _ in range(5):
        h.sync()
    assert h.ordinals() == []
    assert h.removed_order() == ["ss-2", "ss-1", "ss-0"]


def test_S06_parallel_scaling_with_unhealthy_pods() -> None:
    h = harness(sts(1, "Parallel"))
    h.bring_up()
    h.set_ready(0, False)
    h.scale(3)
    h.sync()
    assert h.ordinals() == [0, 1, 2]
    for o in (1, 2):
        h.set_running(o)
    h.scale(0)
    h.sync()
    assert h.ordinals() == []


def test_S07_terminating_pod_blocks_scale_up() -> None:
    h = harness(sts(3), order=False)  # the test removes pod 0 by hand
    h.bring_up()
    h.scale(5)
    h.plant_terminating(0)
    h.sync()
    assert h.ordinals() == [0, 1, 2]
    h.remove(0)
    h.sync()
    assert h.ordinals() == [0, 1, 2]
    assert h.pod(0).phase == "Pending"


def test_S09_lower_ordinal_recreated_while_higher_unhealthy() -> None:
    h = harness(sts(2))
    h.sync()
    assert h.ordinals() == [0]
    h.set_running(0)
    h.sync()
    assert h.ordinals() == [0]
    h.set_ready(0, since_s=-10)
    h.sync()
    assert h.ordinals() == [0, 1]
    h.set_running(1)
    h.remove(0)
    h.sync()
    assert h.ordinals() == [0, 1]
    assert h.pod(0).claims == ("datadir-ss-0",)


@pytest.mark.parametrize("delete_fails", [False, True])
@pytest.mark.parametrize("phase", ["Failed", "Succeeded"])
@pytest.mark.parametrize("policy", POLICIES)
def test_S12_failed_pod_deleted_and_recreated(policy: str, phase: str, delete_fails: bool) -> None:
    h = harness(sts(3, policy))
    h.sync()
    assert h.calls("delete-pod") == 0
    first = h.ordinals()[0]
    h.set_phase(first, phase)
    if delete_fails:  # ...WithDeleteFailure: one sync whose pod DELETE fails
        h.fail("delete-pod")
        err = h.sync()
        assert err is not None and err.verb == "delete-pod"
        assert h.calls("delete-pod") == 1 and first in h.ordinals()
    h.sync()
    assert first not in h.ordinals()
    assert h.calls("delete-pod") == 1 + delete_fails
    h.sync()
    assert h.calls("delete-pod") == 1 + delete_fails
    assert h.pod(first).phase == "Pending"
    assert h.stsc.creates == (2 if policy == "OrderedReady" else 4)


@pytest.mark.parametrize("policy", POLICIES)
def test_S13_deleted_pods_replaced_in_order_keep_claims(policy: str) -> None:
    h = harness(sts(5, policy), order=False)  # pods removed by hand
    h.bring_up()
    claims = {o: h.pod(o).claims for o in h.ordinals()}
    for o in (0, 2, 4):
        h.remove(o)
    for o in (0, 2, 4):
        h.sync()
        h.set_running(o)
        h.sync()
        h.set_ready(o, since_s=-3600)
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4]
    assert {o: h.pod(o).claims for o in h.ordinals()} == claims


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("scale_to", [3, 5])
def test_S24_partition_keeps_lower_ordinals(policy: str, scale_to: int) -> None:
    h = harness(
        sts(3, policy, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}),
        order=False,  # update test: INV-UPDATE (upstream checks INV-ORDER in scale tests)
    )
    h.bring_up()
    new = h.new_revision()
    h.scale(scale_to)
    for _ in range(30):
        h.sync()
        for o, p in h.pods().items():
            if not p.running_and_ready():
                h.set_ready(o, since_s=-3600)
    revs = {o: p.revision for o, p in h.pods().items()}
    assert revs[0] == revs[1] == "rev-1"
    assert all(revs[o] == new for o in range(2, scale_to))


def test_S25_rolling_update_and_rollback() -> None:
    h = harness(sts(3), order=False)  # update test: INV-UPDATE
    h.bring_up()
    assert h.stsc.current_revision == h.stsc.update_revision == "rev-1"
    h.set_ready(1, False)
    new = h.new_revision()
    assert h.stsc.update_revision != h.stsc.current_revision
    h.sync()
    assert all(p.revision == "rev-1" for p in h.pods().values())  # blocked on ss-1
    h.set_ready(1, True, since_s=-3600)
    h.bring_up()
    assert h.stsc.current_revision == new
    h.set_ready(1, False)
    h.stsc.update_revision = "rev-1"  # rollback reuses the original revision
    h.sync()
    h.set_ready(1, True, since_s=-3600)
    h.bring_up()
    assert h.stsc.current_revision == "rev-1"
    assert all(p.revision == "rev-1" for p in h.pods().values())


def _s38(
    policy: str,
    replicas: int,
    partition: int,
    mu: int,
    notready: list[int],
    terminating: list[int],
    min_ready: int = 0,
    not_avail: list[int] | None = None,
) -> list[int]:
    h = harness(
        sts(
            replicas,
            policy,
            minReadySeconds=min_ready,
            updateStrategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"partition": partition, "maxUnavailable": mu},
            },
        ),
        update=False,  # the 1.37 counting replaces broken low ordinals first (#137666)
        kube_version="1.37",
    )
    h.bring_up()
    for o in notready:
        h.set_ready(o, False)
    for o in terminating:
        h.plant_terminating(o)
    for o in not_avail or []:
        h.set_ready(o, True)  # Ready just now: not yet available
    h.new_revision()
    h.stsc.rolling_update_step()
    return h.ordinals()


@pytest.mark.parametrize(
    ("replicas", "partition", "mu", "notready", "terminating", "remain"),
    [
        (1, 0, 1, [0], [], []),
        (3, 0, 1, [2], [], [0, 1]),
        (5, 0, 2, [3, 4], [], [0, 1, 2]),
        (3, 0, 1, [], [2], [0, 1, 2]),
        (5, 0, 3, [3], [4], [0, 1, 4]),
        (5, 0, 3, [4], [3], [0, 1, 3]),
        (5, 2, 1, [4], [], [0, 1, 2, 3]),
        (5, 2, 1, [2], [], [0, 1, 3, 4]),
        (5, 2, 1, [1], [], [0, 1, 2, 3, 4]),
        (5, 3, 2, [3, 4], [], [0, 1, 2]),
        (5, 3, 2, [1, 4], [], [0, 1, 2, 3]),
        (4, 0, 2, [0, 1], [], [2, 3]),
        (5, 0, 3, [0, 1], [], [2, 3]),
    ],
)
def test_S38_parallel_137_counting(
    replicas: int,
    partition: int,
    mu: int,
    notready: list[int],
    terminating: list[int],
    remain: list[int],
) -> None:
    assert _s38("Parallel", replicas, partition, mu, notready, terminating) == remain


def test_S38_parallel_min_ready_not_available() -> None:
    assert _s38("Parallel", 3, 0, 1, [], [], min_ready=30, not_avail=[2]) == [0, 1]


@pytest.mark.parametrize(
    ("replicas", "partition", "mu", "notready", "terminating", "remain"),
    [
        (1, 0, 1, [0], [], [0]),
        (3, 0, 1, [2], [], [0, 1, 2]),
        (5, 0, 2, [4], [], [0, 1, 2, 3]),
        (3, 0, 1, [], [2], [0, 1, 2]),
        (5, 0, 3, [3], [4], [0, 1, 2, 4]),
        (5, 0, 3, [4], [3], [0, 1, 2, 3]),
        (5, 2, 1, [4], [], [0, 1, 2, 3, 4]),
    ],
)
def test_S38_ordered_ready_137_counting(
    replicas: int,
    partition: int,
    mu: int,
    notready: list[int],
    terminating: list[int],
    remain: list[int],
) -> None:
    assert _s38("OrderedReady", replicas, partition, mu, notready, terminating) == remain


def test_S34_max_unavailable_2_partition_3_ordered() -> None:
    h = harness(
        sts(
            6,
            updateStrategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"partition": 3, "maxUnavailable": 2},
            },
        ),
        feature_gates={"MaxUnavailableStatefulSet": True},
        order=False,  # update test: INV-UPDATE only
    )
    h.bring_up()
    h.new_revision()
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3]
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4]
    h.set_ready(4, since_s=-3600)
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4, 5]
    h.set_ready(5, since_s=-3600)
    h.sync()
    assert h.ordinals() == [0, 1, 2, 4, 5]
    h.sync()
    assert h.ordinals() == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("terminating", "deleted"),
    [
        ([], 2),
        ([5], 1),
        ([3], 1),
        ([4], 1),
        ([5, 4], 0),
        ([5, 3], 0),
        ([4, 3], 0),
        ([5, 4, 3], 0),
        ([2], 1),
        ([1], 1),
    ],
)
def test_S36_terminating_pods_use_budget(terminating: list[int], deleted: int) -> None:
    h = harness(
        sts(
            6,
            updateStrategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"partition": 3, "maxUnavailable": 2},
            },
        ),
        feature_gates={"MaxUnavailableStatefulSet": True},
    )
    h.bring_up()
    for o in terminating:
        h.plant_terminating(o)
    h.new_revision()
    h.stsc.rolling_update_step()
    assert len(h.ordinals()) == 6 - deleted


def test_S41_ordered_scale_down_waits_for_availability() -> None:
    h = harness(sts(3, minReadySeconds=30))
    h.bring_up()
    for o in range(3):
        h.set_ready(o, since_s=h.sim.now - 10)
    h.scale(1)
    h.sync()
    assert h.ordinals() == [0, 1, 2]


def test_S53_start_ordinal() -> None:
    h = harness(sts(3, ordinals={"start": 5}))
    h.bring_up()
    assert h.ordinals() == [5, 6, 7]
    h25 = harness(sts(2, ordinals={"start": 5}), kube_version="1.25")
    h25.bring_up()
    assert h25.ordinals() == [0, 1]
