"""Suppressing findings the user accepts, with a reason.

Two ways, both checked after the rules ran (central, like flake8's ``# noqa``, so no rule
handles suppression itself):

* on the object: the annotation ``ssrisk.io/ignore: "rule-id[,rule-id]"`` with an optional
  ``ssrisk.io/ignore-reason``, on the StatefulSet (``metadata.annotations``) or on its pod
  template (``spec.template.metadata.annotations``);
* in the file: a comment ``# ssrisk: ignore[rule-id[,rule-id]] reason`` at the end of the
  offending line, or on a comment line directly above it (for rendered charts, where
  annotations are awkward).

A suppressed finding keeps its place in the report with ``suppressed`` set; it does not count
towards the exit code.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from .model import Finding, K8sObject, ObjectRef

IGNORE_ANNOTATION = "ssrisk.io/ignore"
REASON_ANNOTATION = "ssrisk.io/ignore-reason"

#: ``# ssrisk: ignore[a,b] reason``; ``#`` starts a YAML comment only at the start of a line or
#: after whitespace (YAML 1.2, 6.6 Comments), so ``a#b`` in a scalar is not a comment.
_COMMENT = re.compile(r"(?:^|\s)#\s*ssrisk:\s*ignore\[(?P<ids>[^\]]*)\](?P<reason>.*)$")


@dataclass(frozen=True)
class Suppression:
    """Why a finding is suppressed: ``kind`` is ``"annotation"`` or ``"comment"``."""

    kind: str
    reason: str | None


def parse_ids(value: str) -> frozenset[str]:
    """Rule ids of ``"a, b"`` (comma-separated, blanks ignored)."""
    return frozenset(part.strip() for part in value.split(",") if part.strip())


def annotation_suppressions(obj: K8sObject) -> dict[str, Suppression]:
    """Rule id → suppression declared by annotations of ``obj`` and of its pod template."""
    out: dict[str, Suppression] = {}
    for keys in (("metadata", "annotations"), ("spec", "template", "metadata", "annotations")):
        annotations = obj.get(*keys)
        if not isinstance(annotations, Mapping):
            continue
        ids = annotations.get(IGNORE_ANNOTATION)
        if not isinstance(ids, str):
            continue
        reason = annotations.get(REASON_ANNOTATION)
        text = reason.strip() if isinstance(reason, str) and reason.strip() else None
        for rule_id in parse_ids(ids):
            out.setdefault(rule_id, Suppression("annotation", text))
    return out


def comment_on(line: str) -> tuple[frozenset[str], str | None] | None:
    """The rule ids and reason of an ``ssrisk: ignore[...]`` comment on ``line``, or ``None``."""
    m = _COMMENT.search(line)
    if m is None:
        return None
    reason = m.group("reason").strip()
    return parse_ids(m.group("ids")), reason or None


def comment_suppression(lines: Sequence[str], line: int, rule_id: str) -> Suppression | None:
    """A comment suppression of ``rule_id`` for the 1-based ``line`` of a file.

    Looks at the line itself, then at the comment-only lines directly above it.
    """
    candidates: list[str] = []
    if 1 <= line <= len(lines):
        candidates.append(lines[line - 1])
    i = line - 2
    while 0 <= i < len(lines) and lines[i].lstrip().startswith("#"):
        candidates.append(lines[i])
        i -= 1
    for text in candidates:
        parsed = comment_on(text)
        if parsed is not None and rule_id in parsed[0]:
            return Suppression("comment", parsed[1])
    return None


class FileLines:
    """Reads input files once, as lines, for comment suppressions (unreadable → no lines)."""

    def __init__(self, reader: Callable[[str], str | None] | None = None) -> None:
        self._cache: dict[str, list[str]] = {}
        self._reader = reader or _read

    def __call__(self, path: str) -> list[str]:
        if path not in self._cache:
            text = self._reader(path)
            self._cache[path] = text.splitlines() if text is not None else []
        return self._cache[path]


def _read(path: str) -> str | None:
    from .loading import read_text

    text, _err = read_text(path)
    return text


def apply(
    findings: Iterable[Finding],
    objects: Iterable[K8sObject],
    lines: Callable[[str], Sequence[str]] | None = None,
) -> None:
    """Mark every suppressed finding in place (``suppressed``, ``suppression_*`` fields).

    Args:
        findings: findings of one run.
        objects: the loaded objects; a finding's annotations are looked up on the object it
            is reported on (``finding.obj``).
        lines: returns the lines of an input file by path (default: read it from disk once).
    """
    by_ref: dict[ObjectRef, K8sObject] = {}
    for o in objects:
        by_ref.setdefault(o.ref, o)
    read = lines or FileLines()
    annotations: dict[ObjectRef, dict[str, Suppression]] = {}
    for finding in findings:
        obj = by_ref.get(finding.obj)
        found: Suppression | None = None
        if obj is not None:
            if finding.obj not in annotations:
                annotations[finding.obj] = annotation_suppressions(obj)
            found = annotations[finding.obj].get(finding.rule)
        if found is None:
            found = comment_suppression(
                read(finding.position.path), finding.position.line, finding.rule
            )
        if found is not None:
            finding.suppressed = True
            finding.suppression_kind = found.kind
            finding.suppression_reason = found.reason
