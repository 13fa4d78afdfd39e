"""Discrete-event loop: a heap of (t_s, seq, callback). Deterministic, bounded."""

from __future__ import annotations

import heapq
from collections.abc import Callable

import msgspec

Callback = Callable[[], None]

DEFAULT_MAX_EVENTS = 20000


class _Entry(msgspec.Struct, order=True):
    """One scheduled callback. Entries order by ``(t_s, seq)``: ``seq`` is unique, so the
    comparison never reaches the fields after it."""

    t_s: float
    seq: int
    cb: Callback
    label: str = ""
    cancelled: bool = False


class Handle:
    """Returned by `EventLoop.at`; `cancel()` drops the callback if it has not run."""

    __slots__ = ("_entry",)

    def __init__(self, entry: _Entry) -> None:
        self._entry = entry

    def cancel(self) -> None:
        self._entry.cancelled = True

    @property
    def t_s(self) -> float:
        return self._entry.t_s

    @property
    def active(self) -> bool:
        return not self._entry.cancelled


class EventLoop:
    """Runs callbacks in (time, insertion order); stops at `horizon_s` or `max_events`."""

    def __init__(self, horizon_s: float, max_events: int = DEFAULT_MAX_EVENTS) -> None:
        self.now: float = 0.0
        self.horizon_s = horizon_s
        self.max_events = max_events
        self.processed = 0
        self.truncated = False
        self._heap: list[_Entry] = []
        self._seq = 0
        self.after_step: Callable[[], None] | None = None

    def at(self, t_s: float, cb: Callback, label: str = "") -> Handle:
        t = max(float(t_s), self.now)
        self._seq += 1
        e = _Entry(round(t, 6), self._seq, cb, label)
        heapq.heappush(self._heap, e)
        return Handle(e)

    def after(self, dt_s: float, cb: Callback, label: str = "") -> Handle:
        return self.at(self.now + max(0.0, dt_s), cb, label)

    def pending(self) -> int:
        return sum(1 for e in self._heap if not e.cancelled)

    def run(self) -> None:
        while self._heap:
            e = heapq.heappop(self._heap)
            if e.cancelled:
                continue
            if e.t_s > self.horizon_s:
                heapq.heappush(self._heap, e)
                break
            if self.processed >= self.max_events:
                self.truncated = True
                break
            self.now = e.t_s
            self.processed += 1
            e.cb()
            if self.after_step is not None:
                self.after_step()
