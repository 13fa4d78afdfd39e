"""Positions read from the packed form (``yamlpos.locate``, behind ``K8sObject.pos``) are
the positions a step-by-step walk of ``lc.key``/``lc.item`` gives, for every field of every
object the test data and the shared corpus load, and for paths that leave the data."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, ROOT

from ssrisk.loading import load_path
from ssrisk.yamlpos import locate

CORPUS = ROOT.parent / "shared" / "corpus"


def _walk_lc(data: Any, keys: tuple[str | int, ...]) -> tuple[int, int]:
    """The reference: follow ``lc`` one key at a time (what positions meant before)."""
    node = data
    lc = getattr(node, "lc", None)
    line, col = (lc.line, lc.col) if lc is not None else (0, 0)
    for key in keys:
        lc = getattr(node, "lc", None)
        if isinstance(key, int):
            if not isinstance(node, list) or not 0 <= key < len(node):
                break
            if lc is not None:
                line, col = lc.item(key)
            node = node[key]
        else:
            if not isinstance(node, Mapping) or key not in node:
                break
            if lc is not None:
                line, col = lc.key(key)
            node = node[key]
    return line, col


def _paths(
    node: Any, seen: set[int], prefix: tuple[str | int, ...] = (), depth: int = 0
) -> Iterator[tuple[str | int, ...]]:
    yield prefix
    if depth > 12 or id(node) in seen:  # (an alias is walked once)
        return
    if isinstance(node, Mapping | list):
        seen.add(id(node))
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield from _paths(v, seen, (*prefix, k), depth + 1)
        yield (*prefix, "no-such-key", "deeper")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, seen, (*prefix, i), depth + 1)
        yield (*prefix, len(node))
        yield (*prefix, -1)


def _files() -> list[Path]:
    roots = [DATA, CORPUS] if CORPUS.is_dir() else [DATA]
    return sorted(p for r in roots for p in r.rglob("*.y*ml") if p.is_file() and not p.is_symlink())


def test_locate_gives_the_positions_of_the_lc_walk() -> None:
    checked = 0
    for path in _files():
        if path.stat().st_size > 200_000:
            continue
        for obj in load_path(str(path)).objects[:50]:
            for keys in itertools.islice(_paths(obj.data, set()), 2000):
                assert locate(obj.data, keys) == _walk_lc(obj.data, keys), (path, keys)
                checked += 1
    assert checked > 10_000


@pytest.mark.parametrize("data", [{"a": {"b": 1}}, [1, [2]], None, "text"])
def test_data_without_positions_is_at_the_start(data: Any) -> None:
    assert locate(data, ("a", "b")) == locate(data, (0, 1)) == (0, 0)
