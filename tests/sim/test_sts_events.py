"""S55: which pod events wake which set (stateful_set_test.go #TestStatefulSetController*Pod*)."""

from __future__ import annotations

from dataclasses import replace

from ssrisk.embedded_sim.cluster import OwnerRef
from ssrisk.embedded_sim.pod_events import PodEventRouter, PodInfo, SetInfo, Tombstone

FOO = {"matchLabels": {"foo": "bar"}}
SET1 = SetInfo("foo", "uid-1", FOO)
SET2 = SetInfo("bar", "uid-2", FOO)
SET3 = SetInfo("baz", "uid-3", {"matchLabels": {"foo": "other"}})


def owned(s: SetInfo, rv: str = "1") -> PodInfo:
    ref = OwnerRef("StatefulSet", s.name, s.uid, controller=True)
    return PodInfo(f"{s.name}-0", {"foo": "bar"}, ref, rv)


def orphan(rv: str = "1", labels: dict[str, str] | None = None) -> PodInfo:
    return PodInfo("foo-0", {"foo": "bar"} if labels is None else labels, None, rv)


def test_S55_add_owned_pod_wakes_its_set() -> None:
    r = PodEventRouter([SET1, SET2])
    r.add_pod(owned(SET1))
    assert r.queue == ["default/foo"]


def test_S55_add_orphan_wakes_every_matching_set() -> None:
    r = PodEventRouter([SET1, SET2, SET3])
    r.add_pod(orphan())
    assert sorted(r.queue) == ["default/bar", "default/foo"]  # 2 of 3


def test_S55_add_pod_whose_set_is_gone_wakes_nothing() -> None:
    r = PodEventRouter([SET2])
    r.add_pod(owned(SET1))
    assert r.queue == []


def test_S55_add_terminating_pod_is_a_delete() -> None:
    r = PodEventRouter([SET1, SET2])
    r.add_pod(replace(orphan(), deleting=True))
    assert r.queue == []  # a deleted orphan wakes nobody


def test_S55_update_owned_pod() -> None:
    r = PodEventRouter([SET1, SET2])
    r.update_pod(owned(SET1, "1"), owned(SET1, "2"))
    assert r.queue == ["default/foo"]


def test_S55_update_pod_with_no_set() -> None:
    r = PodEventRouter([SET2])
    r.update_pod(owned(SET1, "1"), owned(SET1, "2"))
    assert r.queue == []


def test_S55_update_same_resource_version() -> None:
    r = PodEventRouter([SET1, SET2])
    r.update_pod(owned(SET1, "1"), owned(SET1, "1"))
    assert r.queue == []


def test_S55_update_orphan_with_new_labels() -> None:
    r = PodEventRouter([SET1, SET2])
    r.update_pod(orphan("1", {"foo": "bar", "x": "1"}), orphan("2"))
    assert len(r.queue) == 2


def test_S55_update_pod_change_controller_ref() -> None:
    r = PodEventRouter([SET1, SET2])
    r.update_pod(owned(SET2, "1"), replace(owned(SET1, "2"), name="bar-0"))
    assert sorted(r.queue) == ["default/bar", "default/foo"]


def test_S55_update_pod_release() -> None:
    r = PodEventRouter([SET1, SET2])
    r.update_pod(owned(SET1, "1"), replace(owned(SET1, "2"), controller=None))
    assert len(r.queue) == 2


def test_S55_delete_pod() -> None:
    r = PodEventRouter([SET1, SET2])
    r.delete_pod(owned(SET1))
    assert r.queue == ["default/foo"]


def test_S55_delete_orphan_wakes_nothing() -> None:
    r = PodEventRouter([SET1, SET2])
    r.delete_pod(orphan())
    assert r.queue == []


def test_S55_delete_tombstone() -> None:
    r = PodEventRouter([SET1, SET2])
    r.delete_pod(Tombstone("default/foo-0", owned(SET1)))
    assert r.queue == ["default/foo"]


def test_S55_overlapping_sets_both_found() -> None:
    r = PodEventRouter([SET1, SET2])
    assert {s.name for s in r.sets_for_pod(orphan())} == {"foo", "bar"}
    assert r.sets_for_pod(orphan(labels={})) == []
