"""Cached results as bytes, for a store that keeps them between processes (`memo.ResultStore`).

The simulator does no I/O: a caller that wants results kept between runs gives
`memo.CACHE` a store of bytes, and this module turns a cache key into a stable digest input
(`key_bytes`) and a placeholder-named `ScenarioResult` into bytes and back (`encode_result`,
`decode_result`).

* **Keys.** A key (`Prepared.key_for`) is encoded as MessagePack with sets and dict keys in a
  deterministic order; two keys have the same bytes only when they are equal (each position of
  the key tuple holds one type; ints, floats, bools and strings stay apart). A key holding a
  value `memo._freeze` could only describe by its `repr` is not encoded (`None`): a repr may
  name a memory address, which another process reuses for another object.
* **Results.** Every field of `ScenarioResult` but the namespace (which the first caller's
  cached result holds and no renamed copy reads: each takes its caller's) is written in
  order, exactly typed (an int stays an int, a tuple a tuple), and read back through typed
  mirrors (`_Stored`; a mirror keeps each number's type where the result's own type says
  `float` and may hold an int), so a truncated or foreign file fails to decode (`None`) rather than
  making a result. A result whose `shape_search` is set (the assumed shape's search, charged
  once per budget by a key that lives in one process: `simulation._GROWN_SHAPES`) or whose
  budget ran out is not encoded: it is run again, as without a store.
  `tests/sim/test_persist.py` checks that every result of the simulator's test data reads
  back equal, field by field and in `repr`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import msgspec

from .result import ClusterShape, Goal, PlacementFacts, PodResult, ScenarioResult, TimelineEvent

#: Bump when the bytes written change meaning.
FORMAT = 1

Number = int | float


class _Pod(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    unavailable_s: Number | None
    node: str | None


class _Goal(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    name: str
    completed: bool
    duration_s: Number | None
    timed: bool


class _Stored(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    """`ScenarioResult`'s fields, in its order (a test keeps the two in step)."""

    namespace: str
    name: str
    scenario: str
    kube_version: str
    replicas: int
    recovered: bool
    time_to_recovery_s: Number | None
    manual_action_required: bool
    max_unavailable: int
    pods: dict[str, _Pod]
    timeline: list[tuple[Number, str | None, str, str, str]]
    verdict: str
    assumptions: list[str]
    placement: str
    description: str
    failed_nodes: list[str]
    placement_basis: PlacementFacts | None  # (no float: decoded as they are)
    cluster_shape: ClusterShape | None
    not_back_because: str | None
    replicas_on_failed_nodes: int
    node_unknown_range_s: tuple[Number, Number]
    node_returned_at_s: Number | None
    goal: _Goal | None
    budget_exhausted: bool
    steps: int
    shape_search: None


_FIELDS = tuple(f.name for f in dataclasses.fields(ScenarioResult))
_KEY_ENCODER = msgspec.msgpack.Encoder(order="deterministic")
_ENCODER = msgspec.msgpack.Encoder()


@functools.cache
def _decoder() -> msgspec.msgpack.Decoder[_Stored]:
    return msgspec.msgpack.Decoder(_Stored)  # (made on first use: a few ms of type analysis)


def key_bytes(key: Any) -> bytes | None:
    """The stable encoding of a cache key (`Prepared.key_for`), or `None` when it has none."""
    try:
        return bytes(_KEY_ENCODER.encode(key))
    except (TypeError, ValueError, OverflowError):  # (`memo._Unstable` has no encoding)
        return None


def encode_result(res: ScenarioResult) -> bytes | None:
    """A placeholder-named result as bytes, or `None` for one that is not kept (see the
    module docstring)."""
    if res.shape_search is not None or res.budget_exhausted:
        return None
    row: list[Any] = []
    for name in _FIELDS:
        value = getattr(res, name)
        if name == "namespace":
            value = ""  # (a renamed copy takes its caller's: `memo.RenamedResult`)
        elif name == "pods":
            value = {k: (p.unavailable_s, p.node) for k, p in value.items()}
        elif name == "goal" and value is not None:
            value = [getattr(value, f) for f in value.__struct_fields__]
        row.append(value)
    try:
        return bytes(_ENCODER.encode(row))
    except (TypeError, ValueError, OverflowError):
        return None


def decode_result(data: bytes) -> ScenarioResult | None:
    """The result :func:`encode_result` wrote, or `None` when ``data`` is not one."""
    try:
        s = _decoder().decode(data)
    except (msgspec.DecodeError, ValueError, TypeError):
        return None
    values = {name: getattr(s, name) for name in _FIELDS}
    values["pods"] = {k: PodResult(p.unavailable_s, p.node) for k, p in s.pods.items()}
    values["timeline"] = [TimelineEvent(*e) for e in s.timeline]
    goal = s.goal
    if goal is not None:
        values["goal"] = Goal(goal.name, goal.completed, goal.duration_s, goal.timed)
    return ScenarioResult(**values)
