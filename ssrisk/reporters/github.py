"""``--format github``: GitHub Actions workflow commands, shown as annotations on the diff.

One line per unsuppressed finding, ``::error file=PATH,line=L,col=C,title=RULE::MESSAGE``
(``warning`` and ``notice`` for the lower severities), one per input error and warning
notice, then the plain summary line. ``PATH`` is relative to the repository root
(``GITHUB_WORKSPACE``, else the checked tree's root: :mod:`ssrisk.reporters.repository`), as
GitHub maps annotations to files. Chosen by default when ``GITHUB_ACTIONS=true`` and no
``--format`` is given. Escaping follows the Actions toolkit (``@actions/core``
``command.ts``: ``escapeData`` and ``escapeProperty``): ``%``, CR and LF in messages, plus
``:`` and ``,`` in properties, are percent-encoded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from ..model import Severity
from . import Reporter
from .escape import printable

if TYPE_CHECKING:
    from ..engine import Report

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """Escape a workflow command message (``escapeData`` of @actions/core); other control
    characters are written as backslash escapes (:func:`~ssrisk.reporters.escape.printable`)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return printable(text)


def escape_property(text: str) -> str:
    """Escape a workflow command property value (``escapeProperty`` of @actions/core)."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(
    level: str,
    message: str,
    *,
    file: str,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """One workflow command line (without the newline)."""
    props = [f"file={escape_property(file)}"]
    if line is not None:
        props.append(f"line={line}")
        if col is not None:
            props.append(f"col={col}")
    if title:
        props.append(f"title={escape_property(title)}")
    return f"::{level} {','.join(props)}::{escape_data(message)}"


class GithubReporter(Reporter):
    """Writes workflow commands for every finding, input error and warning."""

    @property
    def prints_explanations(self) -> bool:
        return False

    def write(self, report: Report, out: TextIO) -> None:
        from .repository import RepositoryPaths, stream_source

        spelt = RepositoryPaths().spelt  # GitHub maps files relative to the repository root
        lines: list[str] = []
        for level, items in (("error", report.errors), ("warning", report.notices)):
            for e in items:
                if level == "warning" and getattr(e, "level", "") != "warning":
                    continue
                if e.path.startswith("<"):  # standard input: no file (its lines are the stream's)
                    where = f"{e.path}:{e.line}: " if e.line is not None else f"{e.path}: "
                    lines.append(f"::{level} title=ssrisk::{escape_data(where + e.message)}")
                    continue
                lines.append(
                    command(level, e.message, file=spelt(e.path), line=e.line, col=e.column)
                )
        shown = report.reported()
        for f in shown:
            origin = f.position.rendered_from()  # a Helm template or a kustomization
            message = f"{f.message} ({f.obj}{f', from {origin}' if origin else ''})"
            title = f"ssrisk {f.rule}"
            if f.position.path.startswith("<"):  # standard input: its template, else no file
                template = stream_source(f.position.path, f.position.source)
                if template is None:
                    lines.append(f"::{COMMANDS[f.severity]} title={escape_property(title)}::"
                                 f"{escape_data(message)}")  # fmt: skip
                else:
                    lines.append(command(COMMANDS[f.severity], message, file=spelt(template),
                                         title=title))  # fmt: skip
                continue
            lines.append(
                command(
                    COMMANDS[f.severity],
                    message,
                    file=spelt(f.position.path),
                    line=f.position.line,
                    col=f.position.column,
                    title=title,
                )
            )
        for note in report.run_notes:  # a fact of the run, not of one file
            title = escape_property(f"ssrisk {note.rule}")
            text = escape_data(f"{note.message} ({note.statefulsets} StatefulSet(s))")
            lines.append(f"::notice title={title}::{text}")
        suppressed = len(report.findings) - len(shown)
        lines.append(
            f"ssrisk: {len(shown)} finding(s), {suppressed} suppressed, "
            f"{report.baselined} in the baseline, {len(report.errors)} input error(s) in "
            f"{report.statefulsets} StatefulSet(s)"
        )
        out.write("\n".join(lines) + "\n")
