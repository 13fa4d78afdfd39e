"""Baselines: record today's findings, then report only new ones.

``ssrisk check --write-baseline FILE`` writes every unsuppressed finding; ``--baseline FILE``
drops the findings recorded there. An entry is keyed by file path, object and rule, never by
line or message, so it survives edits that move lines or change simulated numbers. The path is
stored relative to the baseline file's directory (with ``/``), so a baseline at the root of a
repository matches whether ssrisk runs as ``ssrisk check .`` or ``ssrisk check deploy/``.
When one object has several findings of the same rule the entry counts them, and only the
findings beyond that count are new. A finding on an object built by kustomize also records the
kustomization directory (relative like the path), because several overlays of one base give
findings on the same file and object; an entry without it (written before it was recorded)
matches such findings from any kustomization. A finding of a configured chart variant records
the variant (``"variant": "prod"``) in the same way. An entry also keeps the severity its findings
had: a finding that has become more severe since (a configured severity raised, a rule that
now reports the case as an error) is new; one that became less severe stays baselined. An
entry without a severity (written before it was recorded) matches any severity.

File shape (JSON)::

    {"ssrisk-baseline": 1,
     "findings": [{"path": "deploy/db.yaml", "object": "StatefulSet shop/postgres",
                   "rule": "single-replica", "severity": "error", "count": 1},
                  {"path": "kz/base/sts.yaml", "object": "StatefulSet default/db",
                   "rule": "pdb-missing", "kustomization": "kz/overlays/prod",
                   "severity": "warning", "count": 1}]}
"""

from __future__ import annotations

import itertools
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import strictschema
from .model import Finding, Notice, ObjectRef, Position, Severity

FORMAT_VERSION = 1
#: (path relative to the baseline's directory, object, rule, kustomization directory relative
#: to the baseline's directory or ``""``, chart variant or ``""``)
Key = tuple[str, str, str, str, str]
#: A key and the severity its findings had (the highest severity for entries without one).
Entry = tuple[Key, Severity]

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ssrisk-baseline", "findings"],
    "properties": {
        "ssrisk-baseline": {"const": FORMAT_VERSION},
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["path", "object", "rule"],
                "properties": {
                    "path": {"type": "string"},
                    "object": {"type": "string"},
                    "rule": {"type": "string"},
                    "kustomization": {"type": "string"},
                    "variant": {"type": "string"},
                    "severity": {"enum": [str(s) for s in Severity]},
                    "count": {"type": "integer", "minimum": 1},
                },
            },
        },
    },
}


#: Read at most this much of a baseline (one entry is about 150 bytes).
MAX_BASELINE_BYTES = 64 * 1024 * 1024


def _bounded_int(text: str) -> int:
    """A JSON integer of at most 19 digits (counts are small; longer ones would cost
    Python's quadratic conversion or pass its 4,300-digit limit)."""
    if len(text.lstrip("-")) > 19:
        raise ValueError(f"a number of {len(text)} digits")
    return int(text)


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not JSON")


class BaselineError(Exception):
    """A baseline file that cannot be read or written, or is not a baseline (exit code 2).

    The message is on one line and at most 1,000 characters (it may quote the file)."""

    def __init__(self, message: str) -> None:
        from .reporters.escape import snippet

        super().__init__(snippet(message, 1000))


def _rel(path: str, base_dir: Path) -> str:
    return Path(os.path.relpath(os.path.abspath(path), base_dir)).as_posix()


def key_of(finding: Finding, base_dir: Path) -> Key:
    """The baseline key of ``finding``: (relative path, ``"Kind namespace/name"``, rule,
    relative kustomization directory or ``""``, chart variant or ``""``)."""
    from .reporters.escape import no_surrogates

    k = finding.position.kustomization
    return (
        no_surrogates(_rel(finding.position.path, base_dir)),
        no_surrogates(str(finding.obj)),
        finding.rule,
        no_surrogates(_rel(k, base_dir)) if k else "",
        no_surrogates(finding.position.variant or ""),
    )


def write_baseline(path: str | Path, findings: Iterable[Finding]) -> int:
    """Write the unsuppressed ``findings`` to ``path``; returns how many were recorded.

    Raises:
        BaselineError: when the file cannot be written.
    """
    target = Path(path)
    base_dir = target.resolve().parent
    counts = Counter((key_of(f, base_dir), f.severity) for f in findings if not f.suppressed)
    doc = {
        "ssrisk-baseline": FORMAT_VERSION,
        "findings": [
            {
                "path": p,
                "object": o,
                "rule": r,
                **({"kustomization": k} if k else {}),
                **({"variant": v} if v else {}),
                "severity": str(severity),
                "count": n,
            }
            for ((p, o, r, k, v), severity), n in sorted(counts.items())
        ],
    }
    from .outfile import OutputError, write_file

    try:
        write_file(str(path), lambda fh: fh.write(json.dumps(doc, indent=2) + "\n"))
    except OutputError as exc:
        raise BaselineError(f"cannot write baseline: {exc}") from None
    return sum(counts.values())


def read_baseline(path: str | Path) -> Counter[Entry]:
    """The entries of the baseline at ``path`` ((key, severity) → count).

    Raises:
        BaselineError: unreadable file, bad JSON (with line and column) or the wrong shape.
    """
    import jsonschema

    from .confine import refusal, tree_of
    from .loading import TooLarge, read_bounded

    refused = refusal(str(path), tree_of(str(path)))
    if refused is not None:
        raise BaselineError(f"{path}: {refused}")
    try:
        text = read_bounded(str(path), MAX_BASELINE_BYTES).decode("utf-8")
    except TooLarge as exc:
        raise BaselineError(f"{path}: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise BaselineError(f"{path}: cannot read baseline: {reason or exc}") from None
    try:
        doc = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{path}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise BaselineError(f"{path}: not an ssrisk baseline: {exc}") from None
    from .reporters.escape import snippet

    # the best of the first errors: a baseline of a million wrong entries is not walked whole
    error = jsonschema.exceptions.best_match(
        itertools.islice(strictschema.validator(_SCHEMA).iter_errors(doc), 100)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "top level"
        raise BaselineError(
            f"{path}: not an ssrisk baseline (written by --write-baseline): at {where}: "
            f"{error.message.replace(repr(error.instance), snippet(repr(error.instance), 60))}"
        )
    out: Counter[Entry] = Counter()
    for e in doc["findings"]:
        key = (
            e["path"],
            e["object"],
            e["rule"],
            e.get("kustomization", ""),
            e.get("variant", ""),
        )
        severity = Severity.parse(e["severity"]) if "severity" in e else max(Severity)
        out[(key, severity)] += int(e.get("count", 1))
    return out


def filter_new(
    findings: Sequence[Finding], path: str | Path
) -> tuple[list[Finding], list[Finding]]:
    """Split ``findings`` into (kept, baselined) against the baseline at ``path``.

    Suppressed findings are always kept (they are reported as suppressed). Of several
    findings with one key, the first ``count`` in report order are baselined; a finding is
    only covered by an entry of its severity or a higher one (the lowest such entry first).

    Raises:
        BaselineError: as :func:`read_baseline`.
    """
    kept, baselined, _stale = apply_baseline(findings, path)
    return kept, baselined


def apply_baseline(
    findings: Sequence[Finding],
    path: str | Path,
    checked: Iterable[tuple[ObjectRef, Position]] = (),
    rules_run: Iterable[str] = (),
) -> tuple[list[Finding], list[Finding], list[Notice]]:
    """:func:`filter_new`, and a notice for each stale entry: an entry about a StatefulSet
    that was checked in this run (``checked``, with its kustomization), of a rule that ran
    (``rules_run``), that covered fewer findings than it records (the finding was fixed, or
    became more severe than recorded). Entries about StatefulSets the run did not check (a
    pre-commit run of a few files, ``ssrisk check deploy/`` with a repository's baseline) are
    not judged.

    Raises:
        BaselineError: as :func:`read_baseline`.
    """
    remaining = read_baseline(path)
    recorded = Counter(remaining)
    base_dir = Path(path).resolve().parent
    kept: list[Finding] = []
    baselined: list[Finding] = []
    for finding in findings:
        entry = None if finding.suppressed else _covering(remaining, finding, base_dir)
        if entry is not None:
            remaining[entry] -= 1
            baselined.append(finding)
        else:
            kept.append(finding)
    judged = {
        (str(ref), _rel(at.kustomization, base_dir) if at.kustomization else "", at.variant or "")
        for ref, at in checked
    }
    judged_any = {(obj, v) for obj, _k, v in judged}
    ran = frozenset(rules_run)
    notices = []
    for (key, severity), left in sorted(remaining.items()):
        where, obj, rule, kustomization, variant = key
        seen = (
            (obj, kustomization, variant) in judged
            if kustomization
            else (obj, variant) in judged_any
        )
        if left <= 0 or rule not in ran or not seen:
            continue
        count = recorded[(key, severity)]
        matched = count - left
        tail = (
            "matches no finding"
            if matched == 0
            else f"matches {matched} of the {count} findings it records"
        )
        built = f" (built by {kustomization})" if kustomization else ""
        built += f" (variant {variant})" if variant else ""
        notices.append(
            Notice(
                str(path),
                f"stale baseline entry: {rule} on {obj} in {where}{built} ({severity}) {tail}: "
                "fixed, or now more severe; re-run --write-baseline to drop it",
            )
        )
    return kept, baselined, notices


def _covering(remaining: Counter[Entry], finding: Finding, base_dir: Path) -> Entry | None:
    """The entry with count left that covers ``finding``: same key (else the key without the
    kustomization, for entries that do not name it), a severity at least the finding's."""
    key = key_of(finding, base_dir)
    keys = [key, (*key[:3], "", key[4])] if key[3] else [key]
    for k in keys:
        for severity in Severity:  # ascending: the lowest covering severity first
            if severity >= finding.severity and remaining[(k, severity)] > 0:
                return (k, severity)
    return None
