"""Output formats. Each is a :class:`Reporter` registered through the ``ssrisk_reporters`` hook."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO, cast

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

    @property
    def prints_folded_explanations(self) -> bool:
        """Whether this format prints the explanations of folded findings (``Finding.
        folded_into``; dropped unbuilt when no format of the run does). False unless a
        format says otherwise."""
        return False

    @property
    def draws_timelines(self) -> bool:
        """Whether this format draws findings' simulated timelines (``Finding.drawing``,
        kept by the engine only then)."""
        return False

    def write(self, report: Report, out: TextIO) -> None:
        raise NotImplementedError


class _Lazy:
    """A built-in reporter class, imported when a run uses its format (a run imports only the
    reporters it writes with: start-up time)."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __call__(self, **options: Any) -> Reporter:
        import importlib

        cls = getattr(importlib.import_module(self.module, __package__), self.name)
        return cast(Reporter, cls(**options))


@hookimpl
def ssrisk_reporters() -> dict[str, Callable[..., Reporter]]:
    return {
        "text": _Lazy(".text", "TextReporter"),
        "json": _Lazy(".json", "JsonReporter"),
        "sarif": _Lazy(".sarif", "SarifReporter"),
        "junit": _Lazy(".junit", "JunitReporter"),
        "github": _Lazy(".github", "GithubReporter"),
        "markdown": _Lazy(".markdown", "MarkdownReporter"),
    }
