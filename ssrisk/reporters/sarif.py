"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Shape (OASIS SARIF 2.1.0 Errata 01; GitHub's subset is described on docs.github.com,
"SARIF support for code scanning"): one run whose ``tool.driver.rules`` carries each rule's
metadata (``name``, ``shortDescription``, ``fullDescription``, ``help`` in text and Markdown
from the rule's page, ``defaultConfiguration.level``, ``helpUri`` when the installed package
declares where its source lives); ``results`` is always present (possibly empty), each with
the real start line and column of the offending field, relative to the working directory
(``%SRCROOT%``). Suppressed findings carry ``suppressions`` (kind ``inSource``, with the
reason as ``justification``). Input errors and notices become ``toolExecutionNotifications``.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .. import __version__
from ..model import Finding, Severity
from . import Reporter

if TYPE_CHECKING:
    from ..engine import Report
    from ..rule import Rule

SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@cache
def source_url() -> str | None:
    """The ``Source``/``Repository``/``Homepage`` URL the installed package declares, if any."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("ssrisk").get_all("Project-URL") or []
    except PackageNotFoundError:
        return None
    by_label = {}
    for entry in urls:
        label, _, url = entry.partition(",")
        by_label[label.strip().lower()] = url.strip()
    for label in ("source", "repository", "homepage"):
        if by_label.get(label, "").startswith("https://"):
            return by_label[label].rstrip("/")
    return None


def help_uri(rule_id: str) -> str | None:
    """Absolute URL of ``rules/<id>.md`` in the project's repository, when it is declared."""
    base = source_url()
    if base is None:
        return None
    return f"{base}/blob/v{__version__}/rules/{rule_id}.md"


def _name(rule_id: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", rule_id) if part)


def _first_paragraph(markdown: str) -> str:
    """The first prose paragraph of a rule page (skipping headings), on one line."""
    para: list[str] = []
    for line in markdown.splitlines():
        s = line.strip()
        if s.startswith("#") or s.startswith("```"):
            if para:
                break
            continue
        if not s:
            if para:
                break
            continue
        para.append(s)
    return " ".join(para)


def rule_descriptor(rule: Rule, severity: Severity | None = None) -> dict[str, Any]:
    """The SARIF ``reportingDescriptor`` of ``rule`` (its metadata and help page)."""
    doc = rule.doc()
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": _name(rule.id),
        "shortDescription": {"text": rule.summary or rule.id},
        "fullDescription": {"text": _first_paragraph(doc) or rule.summary or rule.id},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": LEVELS[severity or rule.severity]},
        "properties": {"tags": ["kubernetes", "statefulset", "reliability"]},
    }
    uri = help_uri(rule.id)
    if uri is not None:
        descriptor["helpUri"] = uri
    return descriptor


def artifact_location(path: str) -> dict[str, Any]:
    """``artifactLocation`` of an input path: relative to ``%SRCROOT%`` (the working directory)."""
    if os.path.isabs(path):
        return {"uri": Path(path).as_uri()}
    rel = posixpath.normpath(Path(path).as_posix())
    return {"uri": rel, "uriBaseId": SRCROOT}


def fingerprint(finding: Finding) -> str:
    """Stable identity of a finding across runs: path, object and rule (not line), plus the
    kustomization it was built from when there is one (overlays of one base share a path)."""
    loc = artifact_location(finding.position.path)["uri"]
    raw = f"{loc}\0{finding.obj}\0{finding.rule}"
    if finding.position.kustomization:
        raw += "\0" + artifact_location(finding.position.kustomization)["uri"]
    # surrogatepass: undecodable bytes of file names (lone surrogates) hash too
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def sarif_log(report: Report, rules: dict[str, Rule]) -> dict[str, Any]:
    """The SARIF log (a JSON-ready dict) of ``report``; ``rules`` by id give the metadata."""
    descriptors: list[dict[str, Any]] = [rule_descriptor(r) for r in rules.values()]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    for f in report.findings:  # a rule the caller did not pass: minimal metadata
        if f.rule not in index:
            index[f.rule] = len(descriptors)
            descriptors.append({"id": f.rule, "name": _name(f.rule)})
    results = [_result(f, index[f.rule]) for f in report.findings]
    notifications = [
        _notification("error", e.message, e.path, e.line, e.column) for e in report.errors
    ] + [
        _notification(
            "warning" if n.level == "warning" else "note", n.message, n.path, n.line, n.column
        )
        for n in report.notices
    ]
    cwd = Path.cwd().as_uri().rstrip("/") + "/"
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "ssrisk",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": descriptors,
                        **({"informationUri": source_url()} if source_url() else {}),
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not report.errors,
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "originalUriBaseIds": {SRCROOT: {"uri": cwd}},
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": {"kubeVersion": report.kube_version},
            }
        ],
    }


def _result(f: Finding, rule_index: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": _message(f)},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": artifact_location(f.position.path),
                    "region": {"startLine": f.position.line, "startColumn": f.position.column},
                },
                "logicalLocations": [
                    {
                        "name": f.obj.name,
                        "fullyQualifiedName": str(f.obj),
                        "kind": "object",
                    }
                ],
            }
        ],
        "partialFingerprints": {"ssriskObjectRule/v1": fingerprint(f)},
        "properties": {
            "object": f.obj.to_dict(),
            "explanation": f.explanation,
            "references": list(f.references),
            **({"kustomization": f.position.kustomization} if f.position.kustomization else {}),
        },
    }
    if f.suppressed:
        suppression: dict[str, Any] = {"kind": "inSource", "status": "accepted"}
        if f.suppression_reason:
            suppression["justification"] = f.suppression_reason
        suppression["properties"] = {"ssriskSuppressionKind": f.suppression_kind}
        result["suppressions"] = [suppression]
    return result


def _message(f: Finding) -> str:
    """The finding's message, naming the Helm template or kustomization it came from when the
    location does not (as the text format does)."""
    origin = f.position.rendered_from()
    return f"{f.message} (from {origin})" if origin else f.message


def _notification(
    level: str, message: str, path: str, line: int | None, column: int | None
) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": artifact_location(path)}
    if line is not None:
        region: dict[str, Any] = {"startLine": line}
        if column is not None:
            region["startColumn"] = column
        location["region"] = region
    return {
        "level": level,
        "message": {"text": message},
        "locations": [{"physicalLocation": location}],
    }


class SarifReporter(Reporter):
    """Writes :func:`sarif_log` as indented JSON."""

    def write(self, report: Report, out: TextIO) -> None:
        json.dump(sarif_log(report, self.rules), out, indent=2, ensure_ascii=False)
        out.write("\n")
