"""``--format text``: one line per finding, ``path:line:col: severity rule-id message``.

Coloured with rich on a terminal; plain when piped or when ``NO_COLOR`` is set.
"""

from __future__ import annotations

import os
import textwrap
from collections import Counter
from typing import TYPE_CHECKING, TextIO

from ..references import reference_urls
from . import Reporter
from .escape import printable, safe_lines

if TYPE_CHECKING:
    from ..engine import Report
    from ..model import Finding

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan", "suppressed": "dim"}


def _use_colour(out: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


#: Width of explanation prose on a terminal (indented by 4).
PROSE_WIDTH = 95


def _wrap_prose(text: str) -> str:
    """Wrap long prose lines; indented lines (timelines, commands) are kept as they are."""
    out = []
    for line in text.splitlines():
        if len(line) > PROSE_WIDTH + 5 and not line[:1].isspace():  # hand-wrapped text fits
            out.append(
                textwrap.fill(line, PROSE_WIDTH, break_on_hyphens=False, break_long_words=False)
            )
        else:
            out.append(line)
    return "\n".join(out)


class TextReporter(Reporter):
    @property
    def prints_explanations(self) -> bool:
        return self.explain

    def write(self, report: Report, out: TextIO) -> None:
        lines: list[tuple[str, str, str]] = []  # (plain, style, extra)
        for n in report.notices:
            lines.append((printable(str(n)), "dim", ""))
        for e in report.errors:
            lines.append((printable(str(e)), "bold red", ""))
        active = report.reported()
        shown = report.findings if self.show_suppressed else active
        # One PDB or StorageClass can concern several StatefulSets: the same rule at the same
        # place then gets a line per StatefulSet, which must say which one it is about.
        # (a Helm template or a kustomization; a position is compared by path, line, column)
        origins = [f.position.rendered_from() for f in shown]
        keys = [
            (f.position.path, f.position.line, f.position.column, f.rule, origin)
            for f, origin in zip(shown, origins, strict=True)
        ]
        seen = Counter(keys)
        for f, origin, key in zip(shown, origins, keys, strict=True):
            sev = str(f.severity)
            text = f"{f.position}: {sev} {f.rule} {f.message}"
            if origin:
                text += f" (from {origin})"
            where = f.checked_at
            if seen[key] > 1:
                text += f" [{f.obj}" + (f" at {where.path}:{where.line}]" if where else "]")
            elif where is not None and where.path != f.position.path:
                # on a related object (a PDB, a StorageClass, a patch): which set it is about
                text += f" [{f.obj}]"
            if f.suppressed:
                sev = "suppressed"
                text += f" [suppressed: {f.suppression_reason or 'no reason given'}]"
            extra = ""
            explanation = f.explanation if self.explain else ""  # built on reading: read once
            if explanation and f.fix is not None:  # (verified: the rule finds nothing after it)
                explanation += "\n\n" + _fix_text(f)
            if explanation:
                body = textwrap.indent(_wrap_prose(safe_lines(explanation)), "    ")
                urls = reference_urls(f.references, report.kube_version)
                refs = "".join(
                    f"\n    - {printable(r)}" + (f" <{url}>" if url else "")
                    for r, url in zip(f.references, urls, strict=True)
                )
                extra = body + ("\n    References:" + refs if refs else "")
            lines.append((printable(text), _STYLE.get(sev, ""), extra))
        for note in report.run_notes:
            extra = ""
            if self.explain and note.explanation:
                extra = textwrap.indent(_wrap_prose(note.explanation), "    ")
                refs = "".join(f"\n    - {r}" for r in note.references)
                extra += "\n    References:" + refs if refs else ""
            lines.append((str(note), _STYLE["info"], extra))
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in active:
            counts[str(f.severity)] += 1
        summary = (
            f"{len(active)} finding(s) ({counts['error']} error, "
            f"{counts['warning']} warning, {counts['info']} info) in {report.statefulsets} "
            f"StatefulSet(s), {report.files} file(s); {len(report.errors)} input error(s)"
        )
        hidden = len(report.findings) - len(active)
        if hidden or report.baselined:
            summary += f"; {hidden} suppressed, {report.baselined} in the baseline"
        if report.folded:
            summary += f"; {len(report.folded)} more folded into the finding of their cause"
        if report.statefulsets and report.clusters:
            summary += f"; simulated on {' and '.join(report.clusters)}"
        # the output policy, after all formatting (wrapping can start a line anywhere)
        lines = [(safe_lines(text), style, safe_lines(extra)) for text, style, extra in lines]
        if _use_colour(out):
            from rich.console import Console
            from rich.text import Text

            console = Console(file=out, highlight=False, soft_wrap=True)
            for text, style, extra in lines:
                console.print(Text(text, style=style))
                if extra:
                    console.print(Text(extra))
            console.print(Text(summary, style="bold"))
        else:
            for text, _style, extra in lines:
                out.write(text + "\n")
                if extra:
                    out.write(extra + "\n")
            out.write(summary + "\n")


def _fix_text(f: Finding) -> str:
    """The paragraph ``--explain`` ends a finding with when it has a verified fix."""
    fix = f.fix
    edits = "; ".join(str(e) for e in fix.remedy.edits)
    head = "Advice (not applied by ssrisk fix; " if fix.remedy.advice else "Fix ("
    text = f"{head}verified: {f.rule} finds nothing after it): {fix.remedy.summary} ({edits})"
    numbers = fix.numbers()
    if numbers:
        text += (
            f". Simulated on {fix.cluster}: {numbers}" if fix.cluster else f". Simulated: {numbers}"
        )
    if fix.remedy.caution:
        text += f". Before applying it: {fix.remedy.caution}"
    return text
