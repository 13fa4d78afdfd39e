"""Output formats. Each is a :class:`Reporter` registered through the ``ssrisk_reporters`` hook."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from ..engine import Report
    from ..rule import Rule


class Reporter:
    """Writes a :class:`~ssrisk.engine.Report` to a stream."""

    def __init__(self, *, explain: bool = False, rules: dict[str, Rule] | None = None) -> None:
        self.explain = explain
        self.rules = rules or {}

    def write(self, report: Report, out: TextIO) -> None:
        raise NotImplementedError


@hookimpl
def ssrisk_reporters() -> dict[str, type[Reporter]]:
    from .json import JsonReporter
    from .text import TextReporter

    return {"text": TextReporter, "json": JsonReporter}
