"""The pipeline: load → inventory → rules (which call the simulator) → report.

One direction, no cycles: loading knows nothing of rules, rules nothing of reporting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .inventory import Inventory
from .loading import LoadedFile, discover, load_path
from .model import Finding, InputError, Notice, Position, Severity
from .rule import CheckContext, Rule
from .settings import Settings


@dataclass
class Report:
    """The outcome of one run, read by every reporter."""

    kube_version: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    files: int = 0
    documents: int = 0
    statefulsets: int = 0
    skipped_documents: int = 0

    def summary(self) -> dict[str, int]:
        return {
            "files": self.files,
            "documents": self.documents,
            "statefulsets": self.statefulsets,
            "findings": len(self.findings),
            "errors": len(self.errors),
        }


def load_all(paths: Sequence[str], settings: Settings) -> tuple[list[LoadedFile], list[InputError]]:
    """Discover and load every input file. Errors come back as values, never raised."""
    files, errors = discover(paths, settings.exclude)
    return [load_path(f, settings.namespace) for f in files], errors


def check(paths: Sequence[str], rules: Sequence[Rule], settings: Settings) -> Report:
    """Run ``rules`` over every StatefulSet found under ``paths``.

    Returns:
        A :class:`Report` with findings sorted by path, line and column; unreadable inputs are
        in ``report.errors`` and every other input is still checked.
    """
    loaded, errors = load_all(paths, settings)
    return check_loaded(loaded, errors, rules, settings)


def check_loaded(
    loaded: Sequence[LoadedFile],
    errors: Sequence[InputError],
    rules: Sequence[Rule],
    settings: Settings,
) -> Report:
    report = Report(kube_version=settings.kube_version, errors=list(errors))
    objects = []
    for lf in loaded:
        report.files += 1
        report.documents += lf.documents
        report.skipped_documents += lf.skipped_kinds
        report.errors.extend(lf.errors)
        report.notices.extend(lf.notices)
        objects.extend(lf.objects)
    inventory = Inventory(objects)
    active = [r for r in rules if settings.rule_enabled(r.id)]
    for sts in inventory.statefulsets:
        report.statefulsets += 1
        ctx = CheckContext(
            sts=sts,
            inventory=inventory,
            kube_version=settings.kube_version,
            profile=settings.profile,
            feature_gates=settings.feature_gates,
        )
        for rule in active:
            try:
                for finding in rule.check(ctx):
                    finding.severity = settings.severity_for(rule.id, finding.severity)
                    report.findings.append(finding)
            except Exception as exc:  # a broken rule must not hide the other findings
                pos: Position = sts.start()
                report.errors.append(
                    InputError(
                        pos.path,
                        f"internal error in rule {rule.id} on {sts.ref}: "
                        f"{type(exc).__name__}: {exc} (please report this)",
                        pos.line,
                        pos.column,
                    )
                )
    report.findings.sort(key=Finding.sort_key)
    report.errors.sort(key=lambda e: (e.path, e.line or 0, e.column or 0))
    return report


def exit_code(report: Report, fail_on: Severity) -> int:
    """0 clean, 1 findings at or above ``fail_on``, 2 when an input could not be read."""
    from .exitcodes import ExitCode

    if report.errors:
        return ExitCode.ERROR
    if any(f.severity >= fail_on for f in report.findings):
        return ExitCode.FINDINGS
    return ExitCode.OK
