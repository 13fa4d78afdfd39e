"""``--format json``: the machine-readable report (a contract: see README, "JSON report")."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from . import Reporter

if TYPE_CHECKING:
    from ..engine import Report


def report_dict(report: Report) -> dict[str, Any]:
    return {
        "version": __version__,
        "kube_version": report.kube_version,
        "findings": [f.to_dict() for f in report.findings],
        "errors": [e.to_dict() for e in report.errors],
        "notices": [n.to_dict() for n in report.notices],
        "summary": report.summary(),
    }


class JsonReporter(Reporter):
    def write(self, report: Report, out: TextIO) -> None:
        json.dump(report_dict(report), out, indent=2, ensure_ascii=False)
        out.write("\n")
