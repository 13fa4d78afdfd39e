"""``--format markdown``: a Markdown summary for GitHub's job summary (``$GITHUB_STEP_SUMMARY``)
or a pull request comment.

A heading with the counts, a table of the reported findings (severity, rule, place, message;
at most :data:`MAX_ROWS`, then how many more), the input errors, and, for the worst finding
whose StatefulSet was simulated, that simulation drawn as a Mermaid gantt of each ordinal's
states (:mod:`ssrisk.gantt`), which GitHub renders as a chart. Text from the checked
repository (paths, names, messages quoting values) is escaped so that it cannot become
Markdown or HTML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TextIO

from . import Reporter
from .escape import printable

if TYPE_CHECKING:
    from ..engine import Report
    from ..model import Finding

#: Findings listed in the table (a job summary is limited to 1 MiB; the rest are counted).
MAX_ROWS = 100
#: Characters that make inline Markdown or HTML (emphasis, code, links, tags, table cells,
#: strike-through, entities) or that GitHub turns into mentions and references (``@user``,
#: ``#123``): written as character references.
_SPECIAL = str.maketrans({c: f"&#{ord(c)};" for c in "\\`*_[]<>|~&@#"})


def md(text: str) -> str:
    """``text`` as literal Markdown inline text on one line: every character Markdown, HTML
    or GitHub would give a meaning written as a character reference, and no autolink
    (``http://``, ``www.``)."""
    flat = " ".join(printable(text).split()).translate(_SPECIAL)
    return flat.replace("://", ":&#47;&#47;").replace("www.", "www&#46;")


def worst(findings: list[Finding]) -> Finding | None:
    """The most severe finding with a drawing (the first in report order among equals)."""
    drawn = [f for f in findings if f.drawing is not None]
    return max(drawn, key=lambda f: f.severity) if drawn else None


class MarkdownReporter(Reporter):
    """Writes the Markdown summary."""

    @property
    def prints_explanations(self) -> bool:
        return False

    @property
    def draws_timelines(self) -> bool:
        return True

    def write(self, report: Report, out: TextIO) -> None:
        from ..gantt import mermaid_gantt

        active = report.reported()
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in active:
            counts[str(f.severity)] += 1
        lines = [
            f"## ssrisk: {len(active)} finding(s) in {report.statefulsets} StatefulSet(s)",
            "",
            f"{counts['error']} error, {counts['warning']} warning, {counts['info']} info; "
            f"{report.files} file(s), {len(report.errors)} input error(s)"
            + (f"; simulated on {md(', '.join(report.clusters))}" if report.clusters else ""),
            "",
        ]
        if active:
            lines += ["| severity | rule | where | message |", "| --- | --- | --- | --- |"]
            for f in active[:MAX_ROWS]:
                origin = f.position.rendered_from()
                where = md(str(f.position)) + (f" (from {md(origin)})" if origin else "")
                fix = ""
                if f.fix is not None:
                    numbers = f.fix.numbers()
                    simulated = f" (simulated: {md(numbers)})" if numbers else ""
                    word = "Advice" if f.fix.remedy.advice else "Fix"
                    fix = f" {word}: {md(f.fix.remedy.summary)}{simulated}."
                lines.append(
                    f"| {f.severity} | `{f.rule}` | {where} | {md(f.message)} ({md(str(f.obj))})"
                    f"{fix} |"
                )
            if len(active) > MAX_ROWS:
                lines.append(f"\n{len(active) - MAX_ROWS} more finding(s): see the other outputs.")
            lines.append("")
        if report.errors:
            lines.append("### Input errors\n")
            lines += [f"- {md(str(e))}" for e in report.errors[:MAX_ROWS]]
            lines.append("")
        top = worst(active)
        if top is not None:
            scope = top.checked_at.scope() if top.checked_at else ""
            lines += [
                f"### Worst failover: `{top.rule}` on {md(str(top.obj))}"
                + (f" ({md(scope)})" if scope else ""),
                "",
                f"{md(top.message)}",
                "",
                "Each bar is a pod's state after the fault (seconds after t=0), as simulated; "
                "red: not resolved when the simulation ends.",
                "",
                mermaid_gantt(top.drawing),
            ]
        out.write("\n".join(lines).rstrip("\n") + "\n")
