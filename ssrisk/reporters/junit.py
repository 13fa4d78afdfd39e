"""``--format junit``: JUnit XML for GitLab, Jenkins and other CI that read test reports.

One ``<testsuite name="ssrisk">``; one ``<testcase>`` per checked StatefulSet and rule that
ran, named ``"<rule-id>: StatefulSet <namespace>/<name>"`` with the file as ``classname``
(plus `` (from <kustomization directory>)`` for an object built by kustomize, since overlays
of one base give objects of the same name).
A case with findings has one ``<failure>`` (``type`` is the highest severity; the text lists
every finding with its position and explanation); a case whose findings are all suppressed
is ``<skipped>`` with the reason; an unreadable input is a case ``read <path>`` with an
``<error>``. Findings on another object (a PodDisruptionBudget, say) get a case of their own.
Written with junitparser.
"""

from __future__ import annotations

import io
from collections import defaultdict
from typing import TYPE_CHECKING, TextIO, TypeAlias

from . import Reporter
from .escape import printable, printable_block, safe_lines

if TYPE_CHECKING:
    from ..engine import Report
    from ..model import Finding, ObjectRef, Position


#: A test case: rule, object, where the checked StatefulSet starts, its kustomization.
_Key: TypeAlias = "tuple[str, ObjectRef, Position | None, str | None]"


def _case_name(rule_id: str, obj: ObjectRef, kustomization: str | None = None) -> str:
    return printable(f"{rule_id}: {obj}" + (f" (from {kustomization})" if kustomization else ""))


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


def junit_xml(report: Report) -> str:
    """The JUnit XML document of ``report`` (UTF-8 text with an XML declaration)."""
    from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

    suite = TestSuite("ssrisk")
    suite.add_property("kube_version", report.kube_version)
    for note in report.run_notes:  # facts stated once for the run, not per StatefulSet
        suite.add_property(f"note {note.rule}", f"{note.message} ({note.statefulsets})")
    # Keyed by where the checked StatefulSet starts: two files (or two overlays of one base)
    # can define objects with the same namespace and name.
    # (Position equality ignores the kustomization, so the key names it separately.)
    by_case: dict[_Key, list[Finding]] = defaultdict(list)
    for f in report.findings:
        at = f.checked_at
        by_case[(f.rule, f.obj, at, at.kustomization if at else None)].append(f)
    cases: list[tuple[_Key, str]] = []  # (case key, file)
    seen: set[_Key] = set()
    for ref, pos in report.checked:
        for rule_id in report.rules_run:
            checked: _Key = (rule_id, ref, pos, pos.kustomization)
            cases.append((checked, pos.path))
            seen.add(checked)
    for key, found in by_case.items():
        if key not in seen:
            cases.append((key, found[0].position.path))
    # Cases are added in one call: junitparser's add_testcase recounts every case of the
    # suite each time (quadratic: 1,000 StatefulSets x 26 rules did not finish in 600 s).
    testcases: list[TestCase] = []
    for key, path in cases:
        rule_id, ref, _start, kustomization = key
        case = TestCase(
            _case_name(rule_id, ref, kustomization),
            classname=printable(path),
            time=0.0,
        )
        found = by_case.get(key, [])
        active = [f for f in found if not f.suppressed]
        if active:
            worst = max(active, key=lambda f: f.severity)
            failure = Failure(printable(f"{worst.position}: {worst.message}"), str(worst.severity))
            failure.text = _failure_text(active)
            case.result = [failure]
        elif found:
            reasons = "; ".join(f.suppression_reason or "no reason given" for f in found)
            case.result = [Skipped(printable(f"suppressed: {reasons}"))]
        testcases.append(case)
    for e in report.errors:
        case = TestCase(printable(f"read {e.path}"), classname=printable(e.path), time=0.0)
        case.result = [Error(printable(str(e)), "input-error")]
        testcases.append(case)
    suite.add_testcases(testcases)  # counts them once
    xml = JUnitXml("ssrisk")
    xml.add_testsuite(suite)
    xml.update_statistics()
    buf = io.BytesIO()
    xml.write(buf, pretty=True)
    return buf.getvalue().decode("utf-8")


class JunitReporter(Reporter):
    """Writes :func:`junit_xml`."""

    def write(self, report: Report, out: TextIO) -> None:
        text = safe_lines(junit_xml(report))
        out.write(text if text.endswith("\n") else text + "\n")
