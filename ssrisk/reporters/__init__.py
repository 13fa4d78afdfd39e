"""Output formats. Each is a :class:`Reporter` registered through the ``ssrisk_reporters`` hook."""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..hookspecs import hookimpl

if TYPE_CHECKING:
    from ..engine import Report
    from ..rule import Rule


class Reporter:
    """Writes a :class:`~ssrisk.engine.Report` to a stream."""

    def __init__(
        self,
        *,
        explain: bool = False,
        rules: dict[str, Rule] | None = None,
        show_suppressed: bool = False,
    ) -> None:
        self.explain = explain
        self.rules = rules or {}
        #: Whether human-oriented formats list suppressed findings (``--show-suppressed``);
        #: machine formats (json, sarif, junit) always carry them, marked suppressed.
        self.show_suppressed = show_suppressed

    @property
    def prints_explanations(self) -> bool:
        """Whether this format prints findings' explanations (when none of the run's formats
        does, rules' explanations are not built). True unless a format says otherwise."""
        return True

    def write(self, report: Report, out: TextIO) -> None:
        raise NotImplementedError


@hookimpl
def ssrisk_reporters() -> dict[str, type[Reporter]]:
    from .github import GithubReporter
    from .json import JsonReporter
    from .junit import JunitReporter
    from .sarif import SarifReporter
    from .text import TextReporter

    return {
        "text": TextReporter,
        "json": JsonReporter,
        "sarif": SarifReporter,
        "junit": JunitReporter,
        "github": GithubReporter,
    }
