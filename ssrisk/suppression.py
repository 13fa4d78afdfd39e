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
towards the exit code. A suppression that names an unknown rule, or (for a rule that ran)
suppresses nothing, gets a warning notice at its place.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from .embedded_sim.lazyre import lazy
from .model import Finding, K8sObject, Notice, ObjectRef, Position
from .names import unknown_rule

IGNORE_ANNOTATION = "ssrisk.io/ignore"
REASON_ANNOTATION = "ssrisk.io/ignore-reason"
#: Every annotation ssrisk reads (the catalog's ``ssrisk.io/system`` and ``ssrisk.io/quorum``
#: too): another whose key names ssrisk is a misspelling, said at its key.
KNOWN_ANNOTATIONS = (IGNORE_ANNOTATION, REASON_ANNOTATION, "ssrisk.io/system", "ssrisk.io/quorum")
#: A comment that means to suppress (``# ssrisk:ignore X``, ``# ssrisk ignore[X]``,
#: ``# ssrisk-disable``) without the form ssrisk reads: said, since it suppresses nothing.
_LOOKALIKE = lazy(r"(?:^|\s)#\s*ssrisk\b[\s:_-]*(?:ignore|disable|noqa|skip)", re.I)
USAGE = "# ssrisk: ignore[RULE-ID] reason"
#: ssrisk named in any case (``# SSRISK: IGNORE[x]`` is a misspelling to say, too).
_NAMED = lazy("ssrisk", re.I)

#: The start of ``# ssrisk: ignore[a,b] reason``; ``#`` starts a YAML comment only at the start
#: of a line or after whitespace (YAML 1.2, 6.6 Comments), so ``a#b`` in a scalar is not one.
_OPENING = lazy(r"(?:^|\s)#\s*ssrisk:\s*ignore\[")


class Suppression(msgspec.Struct, frozen=True):
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


def match_comment(line: str) -> tuple[int, str, str] | None:
    """The first ``ssrisk: ignore[...]`` comment of one line (no line break in it): the
    0-based column of its ``#``, the text between the brackets and the text after them; or
    ``None``.

    Linear in the line (an attacker's file may hold one line of a megabyte): only the first
    opening can match, since the closing ``]`` a later opening needs would close the first
    one too, so the line is searched once for an opening and once for a ``]``.
    """
    m = _OPENING.search(line)
    if m is None:
        return None
    close = line.find("]", m.end())
    if close < 0:
        return None
    return line.index("#", m.start()), line[m.end() : close], line[close + 1 :]


def comment_on(line: str) -> tuple[frozenset[str], str | None] | None:
    """The rule ids and reason of an ``ssrisk: ignore[...]`` comment on ``line``, or ``None``."""
    m = match_comment(line)
    if m is None:
        return None
    reason = m[2].strip()
    return parse_ids(m[1]), reason or None


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


class IgnoreComment(msgspec.Struct, frozen=True):
    """An ``# ssrisk: ignore[...]`` comment of a file: where it is (1-based ``line``, the
    ``column`` of its ``#``), what it says, and the line it applies to (``target``: its own
    line, or for a comment on a line of its own the first line below that is not a comment
    line)."""

    line: int
    column: int
    ids: frozenset[str]
    reason: str | None
    target: int
    #: Meant as a suppression but not in the form ssrisk reads (suppresses nothing).
    malformed: bool = False


def scan_comments(text: str) -> list[IgnoreComment]:
    """Every ``ssrisk: ignore`` comment of a file's text (the loader calls this while it has
    the text, so suppression never reads a file again; a file without ``ssrisk:`` costs one
    substring search)."""
    from .loading import NAME_SPELLINGS

    if not any(spelling in text for spelling in NAME_SPELLINGS):
        return []
    lines = text.splitlines()
    out = []
    below: int | None = None  # the first line below the current one that is not a comment line
    found: list[tuple[int, int, tuple[int, str, str]]] = []
    for i in range(len(lines) - 1, -1, -1):  # (one pass up: a run of comment lines costs once)
        line = lines[i]
        comment_line = line.lstrip().startswith("#")
        if "ssrisk" in line or _NAMED.search(line) is not None:
            m = match_comment(line)
            if m is None:
                near = _LOOKALIKE.search(line)
                if near is not None:  # (no ids: it suppresses nothing, and is said)
                    column = line.index("#", near.start())
                    out.append(IgnoreComment(i + 1, column + 1, frozenset(), None, i + 1, True))
            else:
                target = (below if below is not None else len(lines)) if comment_line else i
                found.append((i, target, m))
        if not comment_line:
            below = i
    for i, target, m in reversed(found):
        column, ids, reason = m
        out.append(
            IgnoreComment(i + 1, column + 1, parse_ids(ids), reason.strip() or None, target + 1)
        )
    return out


def _by_target(comments: Sequence[IgnoreComment]) -> dict[tuple[int, str], IgnoreComment]:
    """``(target line, rule id)`` -> the nearest comment of a file suppressing that rule there
    (one look per finding, however many comments aim at its line)."""
    out: dict[tuple[int, str], IgnoreComment] = {}
    for c in sorted(comments, key=lambda c: -c.line):  # nearest first
        for rule_id in c.ids:
            out.setdefault((c.target, rule_id), c)
    return out


def _read_comments(path: str) -> list[IgnoreComment]:
    """The comments of a file no loader recorded (a kustomize patch, say), read once."""
    import os

    from .loading import read_text

    if not os.path.isfile(path):
        return []
    text, _err = read_text(path)
    return scan_comments(text) if text is not None else []


def apply(
    findings: Iterable[Finding],
    statefulsets: Iterable[K8sObject],
    comments: Mapping[str, Sequence[IgnoreComment]],
    known: Iterable[str] = (),
    ran: Iterable[str] = (),
    warn_in: Callable[[str], bool] | None = None,
    unchecked: Mapping[str, Sequence[tuple[int, int]]] | None = None,
) -> list[Notice]:
    """Mark every suppressed finding in place (``suppressed``, ``suppression_*`` fields) and
    return a warning for each suppression that names no installed rule or, for rules that
    ran, suppressed nothing (so a typo such as ``single-replcia`` does not pass silently).

    Args:
        findings: findings of one run, the folded ones included (a suppression that
            matches a finding folded into another is used, not left behind); each is looked
            up on the StatefulSet that was checked (``finding.checked_at``), so copies of one
            object in two environments keep their own annotations.
        statefulsets: the StatefulSets checked, whose annotations may suppress findings.
        comments: the ``ssrisk: ignore`` comments of the checked files, by path as positions
            give it (recorded by the loaders); a finding in any other file has that file's
            comments read then.
        known: ids of every installed rule; ``ran``: ids of the rules that ran.
        warn_in: whether to warn about the suppressions of a file, by path (default: every
            file; the pre-commit hook warns only in the files of the commit).
        unchecked: ``{path: [(first line, last line)]}`` of objects that were not checked
            (the API server would reject them): a comment there is never called unused
            (nothing was checked that it could suppress); an unknown rule id still is.
    """
    known_ids, ran_ids = frozenset(known), frozenset(ran)
    annotated: dict[tuple[ObjectRef, Position], tuple[K8sObject, dict[str, Suppression]]] = {}
    checked = list(statefulsets)
    for sts in checked:
        declared = annotation_suppressions(sts)
        if declared:
            annotated[(sts.ref, sts.start())] = (sts, declared)
    files = dict(comments)
    targets: dict[str, dict[tuple[int, str], IgnoreComment]] = {}  # path -> _by_target
    used: set[tuple[object, str]] = set()
    for finding in findings:
        found: Suppression | None = None
        key = (finding.obj, finding.checked_at or finding.position)
        entry = annotated.get(key) if annotated else None
        if entry is not None and finding.rule in entry[1]:
            found = entry[1][finding.rule]
            used.add((key, finding.rule))
        if found is None:
            path = finding.position.path
            if path not in targets:
                if path not in files:
                    files[path] = _read_comments(path)
                targets[path] = _by_target(files[path])
            nearest = targets[path].get((finding.position.line, finding.rule))
            if nearest is not None:
                found = Suppression("comment", nearest.reason)
                used.add(((path, nearest.line), finding.rule))
        if found is not None:
            finding.suppressed = True
            finding.suppression_kind = found.kind
            finding.suppression_reason = found.reason
    notices = _comment_notices(files, known_ids, ran_ids, used, warn_in, unchecked)
    notices.extend(_misspelt_annotations(checked, warn_in))
    for key, (sts, declared) in annotated.items():
        at = _annotation_position(sts)
        if warn_in is not None and not warn_in(at.path):
            continue
        notices.extend(
            _unhelpful(
                frozenset(declared),
                known_ids,
                ran_ids,
                used,
                key,
                (at.path, at.line, at.column),
                str(sts.ref),
            )
        )
    notices.sort(key=lambda n: (n.path, n.line or 0, n.column or 0))
    return notices


def _unhelpful(
    ids: frozenset[str],
    known: frozenset[str],
    ran: frozenset[str],
    used: set[tuple[object, str]],
    key: object,
    where: tuple[str, int, int],
    subject: str,
) -> list[Notice]:
    """Warnings for the ``ids`` of one suppression that name no rule or suppressed nothing."""
    out = []
    for rule_id in sorted(ids):
        if known and rule_id not in known:
            message = f"suppression names an {unknown_rule(rule_id, known)}"
        elif rule_id in ran and (key, rule_id) not in used:
            message = f"unused suppression: {subject} has no {rule_id} finding to suppress"
        else:
            continue
        out.append(Notice(where[0], message, where[1], where[2], level="warning"))
    return out


def _comment_notices(
    files: Mapping[str, Sequence[IgnoreComment]],
    known_ids: frozenset[str],
    ran_ids: frozenset[str],
    used: set[tuple[object, str]],
    warn_in: Callable[[str], bool] | None,
    unchecked: Mapping[str, Sequence[tuple[int, int]]] | None,
) -> list[Notice]:
    """Warnings for the comments of ``files`` (see :func:`apply`): misspelt ones, and those
    that name an unknown rule or suppressed nothing."""
    notices: list[Notice] = []
    for path, found_comments in files.items():
        if warn_in is not None and not warn_in(path):
            continue
        spans = sorted(unchecked.get(path, ()) if unchecked else ())
        firsts = [first for first, _last in spans]
        for c in found_comments:
            where = (path, c.line, c.column)
            if c.malformed:
                message = f"not a suppression ssrisk reads (it suppresses nothing): write {USAGE!r}"
                notices.append(Notice(path, message, c.line, c.column, level="warning"))
                continue
            # (the span starting last at or before the target is the one that may hold it:
            # spans are where objects are written, so none overlaps the next)
            i = bisect.bisect_right(firsts, c.target) - 1
            judged = not (i >= 0 and spans[i][0] <= c.target <= spans[i][1])
            notices.extend(
                _unhelpful(
                    c.ids,
                    known_ids,
                    ran_ids if judged else frozenset(),
                    used,
                    (path, c.line),
                    where,
                    f"line {c.target}",
                )
            )
    return notices


def _misspelt_annotations(
    statefulsets: Iterable[K8sObject], warn_in: Callable[[str], bool] | None
) -> list[Notice]:
    """A warning at each annotation key of the StatefulSets (and their pod templates) that
    names ssrisk but is none it reads (``ssrisk.io/ignored``, ``ssrisk/ignore``): it does
    nothing, so a user who meant a suppression would not know."""
    from .names import closest

    out = []
    for sts in statefulsets:
        for keys in (("metadata", "annotations"), ("spec", "template", "metadata", "annotations")):
            annotations = sts.get(*keys)
            if not isinstance(annotations, Mapping):
                continue
            for key in annotations:
                if not isinstance(key, str) or "ssrisk" not in key.split("/")[0].lower():
                    continue
                if key in KNOWN_ANNOTATIONS:
                    continue
                at = sts.pos(*keys, key)
                if warn_in is not None and not warn_in(at.path):
                    continue
                near = closest(key, KNOWN_ANNOTATIONS)
                hint = f"did you mean {near!r}?" if near else f"ssrisk reads {IGNORE_ANNOTATION!r}"
                message = f"annotation {key!r} is none ssrisk reads ({hint}); it does nothing"
                out.append(Notice(at.path, message, at.line, at.column, level="warning"))
    return out


def _annotation_position(sts: K8sObject) -> Position:
    """Where the ``ssrisk.io/ignore`` annotation of ``sts`` is written."""
    for keys in (("metadata", "annotations"), ("spec", "template", "metadata", "annotations")):
        annotations = sts.get(*keys)
        if isinstance(annotations, Mapping) and IGNORE_ANNOTATION in annotations:
            return sts.pos(*keys, IGNORE_ANNOTATION)
    return sts.start()
