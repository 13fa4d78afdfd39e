"""Loaded data keeps its positions compactly: they were most of the memory of a large run."""

from __future__ import annotations

import sys

from conftest import DATA, containers

from ssrisk.loading import load_path


def test_positions_cost_about_eight_bytes_each() -> None:
    loaded = load_path(str(DATA / "perf" / "risky.yaml"))
    found = [c for obj in loaded.objects for c in containers(obj.data)]
    entries = sum(len(c) + 1 for c in found)  # the container's own position and each key's
    held = sum(sys.getsizeof(c._pos) for c in found)
    assert entries > 150
    assert held / len(found) <= 64 + 8 * entries / len(found) + 16, held


def test_positions_of_keys_items_and_duplicates() -> None:
    obj = load_path(str(DATA / "perf" / "risky.yaml")).objects[0]
    assert str(obj.pos("spec", "template", "spec", "tolerations", 0)).endswith(":20:9")
    assert str(obj.pos("spec", "volumeClaimTemplates", 0, "spec", "storageClassName")).endswith(
        ":32:7"
    )
    lc = obj.data["spec"]["template"]["spec"]["containers"].lc
    assert lc.item(-1) == lc.item(0) == (21, 8)
    # a duplicate key: its last value, at the last place it is written, in the first's order
    dup = load_path(str(DATA / "bad" / "duplicate-key.yaml")).objects[0]
    assert dup.data["spec"]["replicas"] == 1 and next(iter(dup.data["spec"])) == "replicas"
    assert str(dup.pos("spec", "replicas")).endswith(":7:3")
    assert str(dup.pos("spec", "serviceName")).endswith(":8:3")
