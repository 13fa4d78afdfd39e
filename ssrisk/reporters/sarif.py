"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Shape (OASIS SARIF 2.1.0 Errata 01; GitHub's subset is described on docs.github.com,
"SARIF support for code scanning"): one run whose ``tool.driver.rules`` carries each rule's
metadata (``name``, ``shortDescription``, ``fullDescription``, ``help`` in text and Markdown
from the rule's page, ``defaultConfiguration.level``, ``helpUri`` when the installed package
declares where its source lives); ``results`` is always present (possibly empty), each with
the real start line and column of the offending field, in a file relative to the repository
root (``%SRCROOT%``: ``GITHUB_WORKSPACE``, else the checked tree's root; see
:mod:`ssrisk.reporters.repository`). Suppressed findings carry ``suppressions`` (kind
``inSource``, with the reason as ``justification``). Input errors and notices become
``toolExecutionNotifications``.

Fingerprints (``partialFingerprints``): GitHub code scanning matches results across runs with
``primaryLocationLineHash`` only ("Code scanning only uses the primaryLocationLineHash";
docs.github.com, "SARIF support for code scanning", result object). When it is absent,
the ``upload-sarif`` action computes a hash of the text from the start of the result's line
(about 100 non-blank characters; codeql-action ``src/fingerprints.ts``), so editing that
line or the next opens a new alert; a SARIF file sent to the REST API without it gets
duplicate alerts. ssrisk states it: a hash of rule, file, object kind, namespace and name and
kustomization, numbered in report order (``<hash>:<n>``), so an alert follows the object's
finding through moved and edited lines. The action keeps a value it finds and logs a warning
that it differs from the one it computes (codeql-action issue 4052).
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast
from urllib.parse import quote

from .. import __version__
from ..model import Finding, Severity
from ..references import reference_urls
from ..settings import DEFAULT_KUBE_VERSION
from . import Reporter
from .jsontext import dumps
from .repository import stream_source

if TYPE_CHECKING:
    from ..engine import Report
    from ..rule import Rule

SARIF_SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "%SRCROOT%"
#: ssrisk's own fingerprint (versioned, SARIF 3.27.17); GitHub reads only
#: ``primaryLocationLineHash``.
FINGERPRINT = "ssriskObjectRule/v2"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@cache
def source_url() -> str | None:
    """The ``Source`` or ``Repository`` URL (``https://``) the installed package declares in
    ``[project.urls]``, if any: the only base a rule page's address is derived from (a
    homepage or documentation site need not hold ``blob/<tag>/rules/``)."""
    urls = project_urls()
    if urls is None:
        return None
    by_label = {}
    for entry in urls:
        label, _, url = entry.partition(",")
        by_label[label.strip().lower()] = url.strip()
    for label in ("source", "repository"):
        if by_label.get(label, "").startswith("https://"):
            return by_label[label].rstrip("/")
    return None


def project_urls() -> list[str] | None:
    """The ``Project-URL`` entries (``"label, url"``) of the installed distribution's core
    metadata, ``None`` when it is not installed.

    Read from the one ``ssrisk-*.dist-info`` directory beside the package (a wheel's
    install, :func:`dist_info_urls`), else from the first ``sys.path`` directory that holds
    an ssrisk distribution when that is one ``dist-info`` directory (an editable install's,
    which :mod:`importlib.metadata` finds first too): importing :mod:`importlib.metadata`
    costs about a fifth of a one-file SARIF check. Anywhere else, through
    :mod:`importlib.metadata`."""
    site = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    urls = dist_info_urls(site)
    if urls is not None:
        return urls
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        if any(_distribution(n) for n in names):
            urls = dist_info_urls(entry or ".")
            if urls is not None and not any(_distribution(n) == "egg" for n in names):
                return urls
            break
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        return list(metadata("ssrisk").get_all("Project-URL") or [])
    except PackageNotFoundError:
        return None


def _distribution(name: str) -> str | None:
    """``"dist"`` or ``"egg"`` for a directory entry that is ssrisk's installed metadata."""
    lower = name.lower()
    if lower.startswith("ssrisk-") and lower.endswith(".dist-info"):
        return "dist"
    if lower.endswith(".egg-info") and lower.split("-")[0].split(".")[0] == "ssrisk":
        return "egg"
    return None


def dist_info_urls(site: str) -> list[str] | None:
    """The ``Project-URL`` entries of the ``METADATA`` of the one ``ssrisk-*.dist-info``
    directory in ``site``; ``None`` when there is none, more than one (stale installs) or its
    ``METADATA`` cannot be read."""
    try:
        names = os.listdir(site)
    except OSError:
        return None
    found = [n for n in names if n.startswith("ssrisk-") and n.endswith(".dist-info")]
    if len(found) != 1:
        return None
    try:
        with open(os.path.join(site, found[0], "METADATA"), encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return None
    headers = text.replace("\r\n", "\n").split("\n\n", 1)[0]  # the description follows
    return [
        value.strip()
        for name, _, value in (line.partition(":") for line in headers.splitlines())
        if name.strip().lower() == "project-url"
    ]


def help_uri(rule_id: str) -> str | None:
    """Absolute URL of ``rules/<id>.md`` in the project's repository, when it is declared."""
    base = source_url()
    if base is None:
        return None
    return f"{base}/blob/v{__version__}/rules/{rule_id}.md"


def _name(rule_id: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", rule_id) if part)


#: GitHub code scanning limits ``shortDescription.text`` and ``fullDescription.text`` to 1024
#: characters (docs.github.com, "SARIF support for code scanning", reportingDescriptor object).
MAX_DESCRIPTION_CHARS = 1024


def markdown_blocks(markdown: str) -> list[tuple[str, str]]:
    """``(kind, plain text)`` of each block of a Markdown page, in order: ``heading``,
    ``paragraph``, ``item`` (a list item's paragraph, prefixed ``- ``) or ``code``.

    Inline markup (backticks, emphasis, links) is dropped, keeping the text; parsed with
    markdown-it-py (CommonMark), the parser rich uses for the terminal.
    """
    from markdown_it import MarkdownIt

    blocks: list[tuple[str, str]] = []
    heading = in_item = False
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type == "heading_open":
            heading = True
        elif token.type == "heading_close":
            heading = False
        elif token.type == "list_item_open":
            in_item = True
        elif token.type == "list_item_close":
            in_item = False
        elif token.type in ("fence", "code_block"):
            blocks.append(("code", token.content.rstrip("\n")))
        elif token.type == "inline":
            text = _inline_text(token.children or [])
            if heading:
                blocks.append(("heading", text))
            elif in_item:
                blocks.append(("item", "- " + text))
            else:
                blocks.append(("paragraph", text))
    return blocks


def _inline_text(children: list[Any]) -> str:
    parts = []
    for child in children:
        if child.type in ("text", "code_inline", "html_inline"):
            parts.append(child.content)
        elif child.type == "softbreak":
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts)


def plain_text(markdown: str) -> str:
    """A Markdown page as plain text (SARIF's ``text`` form): blocks separated by a blank line,
    list items on lines of their own, code blocks indented by four spaces."""
    out: list[str] = []
    for kind, text in markdown_blocks(markdown):
        if kind == "code":
            text = "\n".join("    " + line for line in text.splitlines())
        if kind == "item" and out and out[-1].startswith("- "):
            out[-1] += "\n" + text
        else:
            out.append(text)
    return "\n\n".join(out) + "\n"


def description(markdown: str, fallback: str) -> str:
    """The plain-text full description of a rule page: its "What it detects" section (else its
    first paragraph that is not the severity line), at most :data:`MAX_DESCRIPTION_CHARS`."""
    blocks = markdown_blocks(markdown)
    section: list[str] = []
    for i, (kind, text) in enumerate(blocks):
        if kind == "heading" and text.strip().lower() == "what it detects":
            for kind2, text2 in blocks[i + 1 :]:
                if kind2 == "heading":
                    break
                if kind2 != "code":
                    section.append(text2)
            break
    if not section:
        section = [
            t for k, t in blocks if k == "paragraph" and not t.lower().startswith("severity:")
        ][:1]
    return shorten(" ".join(section) or fallback)


def shorten(text: str, limit: int = MAX_DESCRIPTION_CHARS) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 3].rsplit(" ", 1)[0]
    return cut + "..."


#: The plain texts of the built-in rules' pages, made when the package is built
#: (``scripts/rule_help.py``; ``tests/test_sarif.py`` fails while they are not current):
#: ``{key: [full description, help text]}``, the key :func:`help_key` of the page and summary.
HELP_TEXTS = Path(__file__).resolve().parents[1] / "rule_help.json"


def help_key(doc: str, summary: str) -> str:
    """The key of a page and summary in :data:`HELP_TEXTS` (a SHA-256 of both)."""
    return _sha256()(f"{summary}\0{doc}".encode()).hexdigest()


@cache
def _made_texts() -> dict[str, list[str]]:
    try:
        return cast(dict[str, list[str]], json.loads(HELP_TEXTS.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def help_texts(doc: str, summary: str) -> tuple[str, str]:
    """``(full description, help text)`` of a rule page ``doc`` (:func:`description`,
    :func:`plain_text`): as made when the package was built for a built-in page (parsing
    the Markdown of 32 pages cost a run a quarter of a second), else parsed now (a plugin's
    page, another Kubernetes version's links)."""
    made = _made_texts().get(help_key(doc, summary))
    if made is not None:
        return made[0], made[1]
    return description(doc, summary), plain_text(doc)


def rule_page(rule: Rule, kube_version: str = DEFAULT_KUBE_VERSION) -> tuple[str, str]:
    """``(page, summary)`` of ``rule`` as SARIF gives its help: the rule's page, followed by
    its references as links at ``kube_version``."""
    doc = rule.doc()
    links = [
        f"- [{r}]({url})" if url else f"- {r}"
        for r, url in zip(
            rule.references, reference_urls(rule.references, kube_version), strict=True
        )
    ]
    if links:  # the page's sources, as links a reader can follow
        doc = doc.rstrip("\n") + "\n\n## Links\n\n" + "\n".join(links) + "\n"
    return doc, rule.summary or rule.id


def rule_descriptor(
    rule: Rule, severity: Severity | None = None, kube_version: str = DEFAULT_KUBE_VERSION
) -> dict[str, Any]:
    """The SARIF ``reportingDescriptor`` of ``rule`` (its metadata and help page).

    ``severity`` is the configured one (``severity:`` in the configuration); without one the
    level is the most severe a finding of the rule can have (:meth:`Rule.levels`: a rule
    that reports some cases as errors is an error rule), and ``properties.severities`` lists
    them all. Each result states its own level. Descriptions and ``help.text`` are plain
    text; ``help.markdown`` is the page, followed by the rule's references as links at
    ``kube_version`` (:mod:`ssrisk.references`).
    """
    levels = (severity,) if severity is not None else rule.levels()
    doc, summary = rule_page(rule, kube_version)
    full, text = help_texts(doc, summary)
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": _name(rule.id),
        "shortDescription": {"text": shorten(summary)},
        "fullDescription": {"text": full},
        "help": {"text": text, "markdown": doc},
        "defaultConfiguration": {"level": LEVELS[levels[0]]},
        "properties": {
            "tags": ["kubernetes", "statefulset", "reliability"],
            "severities": [str(level) for level in levels],
        },
    }
    uri = help_uri(rule.id)
    if uri is not None:
        descriptor["helpUri"] = uri
    return descriptor


def _unknown_descriptor(rule_id: str) -> dict[str, Any]:
    """Metadata for a rule the caller did not describe (what GitHub requires, from the id)."""
    return {
        "id": rule_id,
        "name": _name(rule_id),
        "shortDescription": {"text": rule_id},
        "fullDescription": {"text": rule_id},
        "help": {"text": rule_id},
    }


class Locations:
    """``artifactLocation`` objects of one SARIF log: paths relative to the repository root
    (:mod:`ssrisk.reporters.repository`: ``GITHUB_WORKSPACE``, else the checked tree's root),
    which is ``%SRCROOT%``; percent-encoded as URI references (RFC 3986; GitHub's upload
    decodes them with ``decodeURIComponent``). The first root met is ``%SRCROOT%``; a file
    under another root or outside any is a ``file:`` URI."""

    def __init__(self) -> None:
        from .repository import RepositoryPaths

        self._paths = RepositoryPaths()
        #: The real path ``%SRCROOT%`` stands for (``None`` until a path is under a root).
        self.root: str | None = None

    def of(self, path: str) -> dict[str, Any]:
        """The ``artifactLocation`` of an input path (as an output names it)."""
        found = self._paths.relative(path)
        if found is not None and self.root in (None, found[0]):
            self.root, rel = found
            return {"uri": _quote(rel), "uriBaseId": SRCROOT}
        if path.startswith("<"):  # standard input: no file
            return {"uri": _quote(path), "uriBaseId": SRCROOT}
        return {"uri": Path(os.path.abspath(path)).as_uri()}

    def base_ids(self) -> dict[str, Any]:
        """``originalUriBaseIds``: where ``%SRCROOT%`` is (the working directory when no path
        was under a root)."""
        root = self.root or os.getcwd()
        return {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}}


def _quote(rel: str) -> str:
    # surrogateescape: undecodable bytes of a file name are percent-encoded as those bytes
    return quote(rel, safe="/", errors="surrogateescape")


class _Lines:
    """The lines of files that findings point into (an unreadable file, or standard input,
    has none), of the last :data:`KEPT_FILES` files read: results are written in path order,
    so each file is read once, and a large run does not hold its whole repository's lines
    (about 8 KB a document as lists of lines)."""

    #: Files whose lines are kept.
    KEPT_FILES = 8

    def __init__(self) -> None:
        self._files: dict[str, list[str]] = {}

    def line(self, path: str, number: int) -> str | None:
        lines = self._files.get(path)
        if lines is None:
            from ..loading import read_text

            text, _err = read_text(path) if os.path.isfile(path) else (None, None)
            lines = text.splitlines() if text is not None else []
            if len(self._files) >= self.KEPT_FILES:
                del self._files[next(iter(self._files))]  # (the first read)
            self._files[path] = lines
        return lines[number - 1] if 1 <= number <= len(lines) else None


def _digest(*parts: str) -> str:
    # surrogatepass: undecodable bytes of file names (lone surrogates) hash too
    return _sha256()("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


@cache
def _sha256() -> Any:
    """SHA-256 from the interpreter's own module (the same digests as hashlib's, whose import
    loads OpenSSL's bindings: about 1.5 ms of a one-file run)."""
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.10, 3.11
        except ImportError:  # pragma: no cover - an interpreter built without them
            from hashlib import sha256
    return sha256


def fingerprint(uri: str, finding: Finding, line_text: str | None, kustomization: str) -> str:
    """``ssriskObjectRule/v2`` without its occurrence: file (``uri``), object and rule (not the
    line number), the kustomization it was built from (overlays of one base share a file) and
    the chart variant (``#variant=prod`` after it), and the text of the line it points at (two
    findings of one rule on one object point at different fields)."""
    parts = [uri, str(finding.obj), finding.rule]
    if kustomization:
        parts.append(kustomization)
    if line_text is not None:
        parts.append(" ".join(line_text.split()))
    return _digest(*parts)


def line_hash(uri: str, finding: Finding, kustomization: str) -> str:
    """``primaryLocationLineHash`` without its occurrence: rule, file (``uri``, relative to the
    repository root), object kind, namespace and name, and the kustomization. Neither the
    line number nor the line's text: moving or editing lines keeps the alert; a finding
    that changes file, object or rule is a new one."""
    obj = finding.obj
    return _digest(finding.rule, uri, obj.kind, obj.namespace or "", obj.name, kustomization)


def _numbered(key: str, seen: dict[str, int]) -> str:
    """``key:N``, N counting the results of one key in report order (as GitHub numbers equal
    line hashes)."""
    seen[key] = seen.get(key, 0) + 1
    return f"{key}:{seen[key]}"


def sarif_log(report: Report, rules: dict[str, Rule]) -> dict[str, Any]:
    """The SARIF log (a JSON-ready dict) of ``report``; ``rules`` by id give the metadata.

    The whole log, every result's explanation included, is held at once: :class:`SarifReporter`
    writes the same log one result at a time instead (:func:`write_sarif`)."""
    log = _Log(report, rules)
    doc = log.envelope()
    doc["runs"][0]["results"] = list(log.results())
    return doc


class _Log:
    """The parts of one SARIF log: the envelope (everything but ``results``) and the results,
    each made when it is asked for."""

    def __init__(self, report: Report, rules: dict[str, Rule]) -> None:
        self.report = report
        self.descriptors: list[dict[str, Any]] = [
            rule_descriptor(r, report.rule_severity.get(r.id), report.kube_version)
            for r in rules.values()
        ]
        self.index = {d["id"]: i for i, d in enumerate(self.descriptors)}
        for f in report.findings:  # a rule the caller did not pass: minimal metadata
            if f.rule not in self.index:
                self.index[f.rule] = len(self.descriptors)
                self.descriptors.append(_unknown_descriptor(f.rule))
        self.where = Locations()
        # %SRCROOT% is the root of the first path under one, results first: found before the
        # envelope (which names it) is written, so each result can be made as it is written.
        for f in report.findings:
            if self.where.root is not None:
                break
            self.where.of(f.position.path)
            if f.position.kustomization:
                self.where.of(f.position.kustomization)

    def envelope(self) -> dict[str, Any]:
        """The log with an empty ``results`` list."""
        report, where = self.report, self.where
        notifications = (
            [
                _notification(where, "error", e.message, e.path, e.line, e.column)
                for e in report.errors
            ]
            + [
                _notification(
                    where,
                    "warning" if n.level == "warning" else "note",
                    n.message,
                    n.path,
                    n.line,
                    n.column,
                )
                for n in report.notices
            ]
            + [
                {
                    "level": "note",
                    "message": {"text": f"{n.message} ({n.statefulsets} StatefulSet(s))"},
                    "associatedRule": {"id": n.rule},
                    "properties": {
                        "explanation": n.explanation,
                        "references": list(n.references),
                    },
                }
                for n in report.run_notes
            ]
        )
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
                            "rules": self.descriptors,
                            **({"informationUri": source_url()} if source_url() else {}),
                        }
                    },
                    "invocations": [
                        {
                            "executionSuccessful": not report.errors,
                            "toolExecutionNotifications": notifications,
                        }
                    ],
                    "originalUriBaseIds": where.base_ids(),
                    "columnKind": "unicodeCodePoints",
                    "results": [],
                    "properties": {
                        "kubeVersion": report.kube_version,
                        "kubeVersions": report.versions(),
                    },
                }
            ],
        }

    def results(self) -> Iterator[dict[str, Any]]:
        """The SARIF ``result`` of each finding, in report order, made when it is reached
        (its explanation is built then)."""
        lines = _Lines()
        where = self.where
        seen: dict[str, int] = {}
        for f in self.report.findings:
            text = lines.line(f.position.path, f.position.line)
            stream = f.position.path.startswith("<")  # standard input: no file of its own
            template = stream_source(f.position.path, f.position.source) if stream else None
            location = where.of(template or f.position.path)
            k = f.position.kustomization
            kustomization = where.of(k)["uri"] if k else ""
            if f.position.variant:  # (each variant of a chart is an environment of its own)
                kustomization += f"#variant={f.position.variant}"
            prints = {
                "primaryLocationLineHash": _numbered(
                    line_hash(location["uri"], f, kustomization), seen
                ),
                FINGERPRINT: _numbered(fingerprint(location["uri"], f, text, kustomization), seen),
            }
            physical = None if stream and template is None else location
            result = _result(
                f, self.index[f.rule], physical, text, prints, self.report.kube_version, where
            )
            if template is not None:  # the stream's lines are not the template's
                del result["locations"][0]["physicalLocation"]["region"]
            yield result


def write_sarif(report: Report, rules: dict[str, Rule], out: TextIO) -> None:
    """Write the SARIF log of ``report`` to ``out`` as JSON, one result at a time: a result
    and its explanation are made when written and dropped after, so memory does not grow
    with the number of findings.

    The envelope (tool, rules, invocation) is indented as ``json.dumps(log, indent=2)``
    writes it; each result is one line (as ``json.dumps`` writes it, by msgspec's encoder:
    :mod:`ssrisk.reporters.jsontext`; indenting tens of thousands of results in Python cost
    about a fifth of a large run). The document is the log :func:`sarif_log` gives.
    """
    log = _Log(report, rules)
    doc = log.envelope()
    if not report.findings:
        out.write(dumps(doc, indent=2) + "\n")
        return
    # The envelope is dumped with a placeholder result (a token no input can predict) where
    # the results go; the text on either side of it is written around them.
    token = "ssrisk-results-" + os.urandom(16).hex()  # (what token_hex does, without imports)
    doc["runs"][0]["results"] = [token]
    head, sep, tail = dumps(doc, indent=2).partition(f'"{token}"')
    if not sep or token in tail:  # (cannot happen: the token is only in the placeholder)
        raise AssertionError("SARIF placeholder result not found once")
    del doc
    indent = head[head.rindex("\n") + 1 :]  # the placeholder's line up to it: its indent
    out.write(head)
    for i, result in enumerate(log.results()):
        text = dumps(result)
        out.write(f",\n{indent}{text}" if i else text)
    out.write(tail + "\n")


def _region(f: Finding, line_text: str | None) -> dict[str, int]:
    """The offending field: from its key to the end of its line (GitHub asks for the end of
    the region as well as its start)."""
    start = f.position.column
    region = {"startLine": f.position.line, "startColumn": start, "endLine": f.position.line}
    if line_text is not None and len(line_text.rstrip()) + 1 > start:
        region["endColumn"] = len(line_text.rstrip()) + 1
    return region


def _result(
    f: Finding,
    rule_index: int,
    location: dict[str, Any] | None,
    line_text: str | None,
    fingerprints: dict[str, str],
    kube_version: str = DEFAULT_KUBE_VERSION,
    where: Locations | None = None,
) -> dict[str, Any]:
    """The SARIF ``result`` of ``f``; without ``location`` (a finding on standard input whose
    template is not found), a location with the object only (no file)."""
    physical = (
        {"physicalLocation": {"artifactLocation": location, "region": _region(f, line_text)}}
        if location is not None
        else {}
    )
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": _message(f)},
        "locations": [
            {
                **physical,
                "logicalLocations": [
                    {
                        "name": f.obj.name,
                        "fullyQualifiedName": str(f.obj),
                        "kind": "object",
                    }
                ],
            }
        ],
        "partialFingerprints": fingerprints,
        "properties": {
            "object": f.obj.to_dict(),
            "facts": f.facts_data(),
            "explanation": f.explanation,
            "references": list(f.references),
            "referenceUrls": reference_urls(f.references, kube_version),
            **({"kustomization": f.position.kustomization} if f.position.kustomization else {}),
            **({"variant": f.position.variant} if f.position.variant else {}),
        },
    }
    if f.fix is not None and where is not None:
        fixes = _fixes(f, where)
        if fixes:
            result["fixes"] = fixes
    if f.suppressed:
        suppression: dict[str, Any] = {"kind": "inSource", "status": "accepted"}
        if f.suppression_reason:
            suppression["justification"] = f.suppression_reason
        suppression["properties"] = {"ssriskSuppressionKind": f.suppression_kind}
        result["suppressions"] = [suppression]
    return result


def _fixes(f: Finding, where: Locations) -> list[dict[str, Any]]:
    """The SARIF ``fixes`` of a finding's verified fix (``--fixes``): each changed file's
    replacements, computed as ``ssrisk fix`` would make them (:mod:`ssrisk.fixer`; a new
    file's content inserted at its line 1); none for a fix ``ssrisk fix`` would not make (a
    chart field its template writes otherwise than from one value)."""
    from ..fixer import plan_fixes, replacements

    if f.fix.remedy.advice:
        return []  # (a decision for the owner: not a change to apply)
    planned = plan_fixes([f])
    if not planned.changed:
        return []
    changes = [
        {"artifactLocation": where.of(path), "replacements": replacements(old, new)}
        for path, (old, new) in planned.changed.items()
    ]
    return [{"description": {"text": f.fix.remedy.summary}, "artifactChanges": changes}]


def _message(f: Finding) -> str:
    """The finding's message, naming the Helm template or kustomization it came from when the
    location does not (as the text format does)."""
    origin = f.position.rendered_from()
    return f"{f.message} (from {origin})" if origin else f.message


def _notification(
    where: Locations, level: str, message: str, path: str, line: int | None, column: int | None
) -> dict[str, Any]:
    if path.startswith("<"):  # standard input: no file; the stream's line in the message
        shown = f"{path}:{line}: {message}" if line is not None else f"{path}: {message}"
        return {"level": level, "message": {"text": shown}}
    location: dict[str, Any] = {"artifactLocation": where.of(path)}
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
    """Writes the SARIF log as JSON, one result at a time (:func:`write_sarif`)."""

    def write(self, report: Report, out: TextIO) -> None:
        write_sarif(report, self.rules, out)
