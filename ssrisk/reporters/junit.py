"""``--format junit``: JUnit XML for GitLab, Jenkins and other CI that read test reports.

One ``<testsuite name="ssrisk">``; one ``<testcase>`` per checked StatefulSet, named
``"StatefulSet <namespace>/<name>"`` with the file as ``classname`` (plus `` (from
<kustomization directory>)`` for an object built by kustomize, since overlays of one base give
objects of the same name, and ``variant <name>`` for a configured chart variant), as a test
report counts tests: a StatefulSet passes or fails.
A case with a finding at or above ``fail-on`` has one ``<failure>`` (``type`` is the highest
severity, ``message`` its finding; the text lists every finding with its position and
explanation); a case with findings below ``fail-on`` only passes, listing them in
``<system-out>``; a case whose findings are all suppressed is ``<skipped>`` with the reason;
an unreadable input is a case ``read <path>`` with an ``<error>``.
Written one case at a time (:func:`write_junit`), in the layout junitparser's pretty output
had.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO, TypeAlias

from . import Reporter
from .escape import printable, printable_block, safe_lines

if TYPE_CHECKING:
    from ..engine import Report
    from ..model import Finding, ObjectRef, Position


#: A test case: the object, where the checked StatefulSet starts, its kustomization and
#: chart variant (``Position.scope``).
_Key: TypeAlias = "tuple[ObjectRef, Position | None, str]"


def _case_name(obj: ObjectRef, scope: str) -> str:
    return printable(f"{obj}" + (f" (from {scope})" if scope else ""))


def _failure_text(findings: list[Finding]) -> str:
    parts = []
    for f in findings:
        body = f"{f.position}: {f.severity} {f.rule} {f.message}"
        explanation = f.explanation  # built on reading: read once
        if explanation:
            body += "\n\n" + explanation
        if f.references:
            body += "\n\nReferences:\n" + "\n".join(f"- {r}" for r in f.references)
        parts.append(body)
    return printable_block("\n\n".join(parts))


def _xml(text: str) -> str:
    """``text`` escaped for XML character data and double-quoted attribute values (``&``,
    ``<``, ``"``, ``>``; characters XML 1.0 does not allow were already escaped by
    :func:`~ssrisk.reporters.escape.printable`)."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;").replace(">", "&gt;")
    )


def _element(tag: str, attrs: dict[str, str], text: str | None = None, depth: int = 3) -> str:
    """One element on its own line(s), indented by ``depth`` tabs: empty (``<tag .../>``) or
    holding ``text`` (which may span lines)."""
    head = "\t" * depth + f"<{tag}" + "".join(f' {k}="{_xml(v)}"' for k, v in attrs.items())
    if text is None:
        return head + "/>\n"
    return f"{head}>{_xml(text)}</{tag}>\n"


class _Cases:
    """The test cases of one report, each ``(key, file)``: every checked StatefulSet, in report
    order, then the keys of findings on objects not checked as such. Iterated once to count
    and once to write; nothing per case is kept."""

    def __init__(self, report: Report) -> None:
        self.report = report
        # Keyed by where the checked StatefulSet starts: two files (or two overlays of one
        # base, two variants of one chart) can define objects with the same namespace and
        # name. (Position equality ignores the kustomization and variant: the key names them.)
        self.by_case: dict[_Key, list[Finding]] = defaultdict(list)
        for f in report.findings:
            at = f.checked_at
            self.by_case[(f.obj, at, at.scope() if at else "")].append(f)
        self._checked = {(ref, pos, pos.scope()) for ref, pos in report.checked}

    def __iter__(self) -> Iterator[tuple[_Key, str]]:
        for ref, pos in self.report.checked:
            yield (ref, pos, pos.scope()), pos.path
        for key, found in self.by_case.items():
            if key not in self._checked:
                yield key, found[0].position.path

    def outcome(self, key: _Key) -> str:
        """``failure`` (an unsuppressed finding that fails the run), ``skipped`` (all
        suppressed) or ``passed`` (none, or only findings below ``fail-on``)."""
        found = self.by_case.get(key)
        if not found:
            return "passed"
        if all(f.suppressed for f in found):
            return "skipped"
        active = [f for f in found if not f.suppressed]
        return "failure" if any(self.report.fails(f) for f in active) else "passed"


def write_junit(report: Report, out: TextIO) -> None:
    """Write the JUnit XML document of ``report`` to ``out`` (UTF-8 text with an XML
    declaration, tab-indented as junitparser's pretty output was), one test case at a time:
    a case's failure text (its findings' explanations) is made when it is written and
    dropped after, and the suite's counts are computed in one pass before. Each piece is
    made safe for CI logs (:func:`~ssrisk.reporters.escape.safe_lines`) as it is written.
    """
    cases = _Cases(report)
    tests = failures = skipped = 0
    for key, _path in cases:
        tests += 1
        outcome = cases.outcome(key)
        failures += outcome == "failure"
        skipped += outcome == "skipped"
    errors = len(report.errors)
    tests += errors
    counts = f'tests="{tests}" failures="{failures}" errors="{errors}" skipped="{skipped}"'
    head = [
        '<?xml version="1.0" encoding="utf-8"?>\n',
        f'<testsuites name="ssrisk" {counts} time="0.0">\n',
        f'\t<testsuite name="ssrisk" tests="{tests}" errors="{errors}" failures="{failures}" '
        f'skipped="{skipped}" time="0.0">\n',
        "\t\t<properties>\n",
        _element("property", {"name": "kube_version", "value": ", ".join(report.versions())}),
    ]
    for note in report.run_notes:  # facts stated once for the run, not per StatefulSet
        value = f"{note.message} ({note.statefulsets})"
        head.append(_element("property", {"name": f"note {note.rule}", "value": value}))
    head.append("\t\t</properties>\n")
    out.write(safe_lines("".join(head)))
    for key, path in cases:
        ref, _start, scope = key
        attrs = {
            "name": _case_name(ref, scope),
            "classname": printable(path),
            "time": "0.0",
        }
        found = cases.by_case.get(key, [])
        active = [f for f in found if not f.suppressed]
        if active and not any(report.fails(f) for f in active):
            # findings below fail-on: the case passes, and says what it found
            out_text = _element("system-out", {}, _failure_text(active))
            out.write(safe_lines(_element("testcase", attrs, depth=2)[:-3] + ">\n" + out_text))
            out.write("\t\t</testcase>\n")
            continue
        if active:
            worst = max(active, key=lambda f: f.severity)
            more = f" (and {len(active) - 1} more)" if len(active) > 1 else ""
            failure = {
                "message": printable(f"{worst.position}: {worst.rule} {worst.message}{more}"),
                "type": str(worst.severity),
            }
            body = _element("failure", failure, _failure_text(active))
        elif found:
            reasons = "; ".join(f.suppression_reason or "no reason given" for f in found)
            body = _element("skipped", {"message": printable(f"suppressed: {reasons}")})
        else:
            out.write(safe_lines(_element("testcase", attrs, depth=2)))
            continue
        out.write(safe_lines(_element("testcase", attrs, depth=2)[:-3] + ">\n" + body))
        out.write("\t\t</testcase>\n")
    for e in report.errors:
        attrs = {"name": printable(f"read {e.path}"), "classname": printable(e.path), "time": "0.0"}
        error = _element("error", {"message": printable(str(e)), "type": "input-error"})
        out.write(safe_lines(_element("testcase", attrs, depth=2)[:-3] + ">\n" + error))
        out.write("\t\t</testcase>\n")
    out.write("\t</testsuite>\n</testsuites>\n")


def junit_xml(report: Report) -> str:
    """The JUnit XML document of ``report`` as one string (:func:`write_junit`)."""
    buf = io.StringIO()
    write_junit(report, buf)
    return buf.getvalue()


class JunitReporter(Reporter):
    """Writes :func:`write_junit`."""

    def write(self, report: Report, out: TextIO) -> None:
        write_junit(report, out)
