"""``--format json``: the machine-readable report (a contract: see docs/usage.md, "JSON report")."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from ..model import Finding
from . import Reporter
from .jsontext import dumps

if TYPE_CHECKING:
    from ..engine import Report


class Items:
    """``convert`` of each of ``items``, made when iterated: :func:`write_json` writes one item
    at a time, so the findings of a large report are never all held as dicts at once."""

    def __init__(self, items: Sequence[Any], convert: Callable[[Any], Any]) -> None:
        self._items = items
        self._convert = convert

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        return map(self._convert, self._items)


def report_dict(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (``findings`` converted as they are written; each with
    ``reference_urls``, the link of each reference or ``None``: :mod:`ssrisk.references`)."""
    from ..references import reference_urls

    def finding(f: Finding) -> dict[str, Any]:
        return {**f.to_dict(), "reference_urls": reference_urls(f.references, report.kube_version)}

    return {
        "version": __version__,
        "kube_version": report.kube_version,
        "findings": Items(_with_folded(report), finding),
        "errors": [e.to_dict() for e in report.errors],
        "notices": [n.to_dict() for n in report.notices],
        "run_notes": [
            {**n.to_dict(), "reference_urls": reference_urls(n.references, report.kube_version)}
            for n in report.run_notes
        ],
        "clusters": list(report.clusters),
        "kube_versions": report.versions(),
        "summary": report.summary(),
    }


def _with_folded(report: Report) -> list[Finding]:
    """The reported findings and the folded ones (marked ``folded_into``), in order."""
    if not report.folded:
        return report.findings
    return sorted([*report.findings, *report.folded], key=Finding.sort_key)


def write_json(doc: dict[str, Any], out: TextIO) -> None:
    """``doc`` as JSON: one top-level key per line and one list item per line.

    Each item is written as ``json.dumps(item, ensure_ascii=False)`` writes it, by msgspec's
    encoder (:mod:`ssrisk.reporters.jsontext`): this layout keeps the report readable while
    no item is indented in Python (an 82 MB report took 0.5 s with ``indent=2``).
    """
    out.write("{\n")
    for i, (key, value) in enumerate(doc.items()):
        sep = "," if i < len(doc) - 1 else ""
        head = f"  {json.dumps(key)}: "
        if isinstance(value, list | Items) and value:
            out.write(f"{head}[\n")
            last = len(value) - 1
            for j, item in enumerate(value):
                text = dumps(item)
                out.write(f"    {text}{',' if j < last else ''}\n")
            out.write(f"  ]{sep}\n")
        else:
            value = list(value) if isinstance(value, Items) else value
            out.write(f"{head}{dumps(value)}{sep}\n")
    out.write("}\n")


class JsonReporter(Reporter):
    @property
    def prints_folded_explanations(self) -> bool:
        return True  # (folded findings are kept in the report, marked folded_into)

    def write(self, report: Report, out: TextIO) -> None:
        write_json(report_dict(report), out)
