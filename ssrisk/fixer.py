"""``ssrisk fix``: apply the verified fixes of a run's findings to the manifests they are
about, keeping comments, key order, quoting and style (ruamel.yaml round-trip).

Only plain YAML files are written: the StatefulSet's own file, when it is a regular file
inside the checked tree, not a link and not standard input, read as one of that file's
documents. A StatefulSet rendered from a Helm chart or built by kustomize is not written
(the field may come from a template, a values file or a patch): its fix is said instead, with
the change to make. A file is written once, with every fix of it, through
:func:`ssrisk.outfile.write_file` (never through a link); ``diff`` writes nothing and gives a
unified diff instead. A second run finds nothing left to fix: each fix was verified to remove
its finding (:mod:`ssrisk.remedy`).
"""

from __future__ import annotations

import difflib
import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from .model import Finding


@dataclass
class FixRun:
    """What ``ssrisk fix`` did: the files changed (``{path: (old text, new text)}``), the fixes
    applied (``(path, rule, summary)``) and those only said (``(finding, why)``)."""

    changed: dict[str, tuple[str, str]] = field(default_factory=dict)
    applied: list[tuple[str, str, str]] = field(default_factory=list)
    not_applied: list[tuple[Finding, str]] = field(default_factory=list)


def plan_fixes(findings: Sequence[Finding]) -> FixRun:
    """The new text of each plain file the fixes of ``findings`` concern (nothing written).

    A finding without a fix is left out; one whose StatefulSet is rendered, or whose file
    cannot be read or parsed as it was checked, is in ``not_applied`` with the reason."""
    run = FixRun()
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        if f.fix is None or f.suppressed:
            continue
        why = _not_writable(f)
        if why is not None:
            run.not_applied.append((f, why))
            continue
        assert f.checked_at is not None
        by_file.setdefault(f.checked_at.path, []).append(f)
    for path, fixes in by_file.items():
        try:
            old, new = _edited(path, fixes)
        except _Unfixable as exc:
            run.not_applied.extend((f, str(exc)) for f in fixes)
            continue
        if new != old:
            run.changed[path] = (old, new)
            run.applied += [(path, f.rule, f.fix.remedy.summary) for f in fixes]
    return run


def write_fixes(run: FixRun) -> None:
    """Write each changed file of ``run`` (never through a link).

    Raises:
        ssrisk.outfile.OutputError: a file that may not or cannot be written.
    """
    from .outfile import write_file

    for path, (_old, new) in run.changed.items():

        def write(fh: TextIO, text: str = new) -> None:
            fh.write(text)

        write_file(path, write)


def unified_diff(run: FixRun) -> str:
    """The changes of ``run`` as one unified diff (``a/PATH``, ``b/PATH``)."""
    parts: list[str] = []
    for path, (old, new) in run.changed.items():
        parts += difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    return "".join(parts)


class _Unfixable(Exception):
    """A file whose fixes cannot be applied (the reason)."""


def _not_writable(f: Finding) -> str | None:
    """Why the file of ``f``'s StatefulSet is not written, or ``None``."""
    at = f.checked_at
    if at is None or at.path.startswith("<"):
        return "read from standard input: no file to change"
    if at.source or at.kustomization or at.variant:
        built = "rendered from a Helm chart" if at.source or at.variant else "built by kustomize"
        return f"{built}: make the change where the field is written"
    if os.path.islink(at.path) or not os.path.isfile(at.path):
        return "not a regular file (a link, or gone): not written"
    return None


def _edited(path: str, fixes: Sequence[Finding]) -> tuple[str, str]:
    """``(old text, new text)`` of ``path`` with the edits of ``fixes`` made in the
    StatefulSets they are about (ruamel.yaml round-trip: comments and style kept)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from .loading import read_text

    old, err = read_text(path)
    if old is None or err is not None:
        raise _Unfixable(err.message if err is not None else "cannot read")
    yaml = YAML()  # round-trip
    yaml.preserve_quotes = True
    yaml.width = 4096  # (never re-wrap a line the user wrote)
    mapping, offset = _indentation(old)
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    try:
        docs = list(yaml.load_all(old))
    except YAMLError as exc:
        raise _Unfixable(f"not read back for editing: {exc}") from None
    for f in fixes:
        doc = _document_of(docs, f)
        if doc is None:
            raise _Unfixable(f"{f.obj} not found again in the file")
        for edit in f.fix.remedy.edits:
            _set(doc, edit.keys, edit.value)
    out = io.StringIO()
    yaml.explicit_start = old.lstrip().startswith("---")
    yaml.dump_all(docs, out)
    return old, out.getvalue()


def _indentation(text: str) -> tuple[int, int]:
    """``(mapping indent, sequence dash offset)`` the file is written with (``containers:``
    then ``  - name:`` is an offset of 2; ``- name:`` under it, 0), read from its first nested
    mapping and its first block sequence; ``(2, 0)`` when it shows none."""
    import re

    mapping = offset = None
    previous: tuple[int, bool] | None = None  # (indent, ends with ':') of the line before
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if previous is not None and previous[1]:
            if stripped.startswith("- ") and offset is None:
                offset = indent - previous[0]
            elif not stripped.startswith("- ") and mapping is None and indent > previous[0]:
                mapping = indent - previous[0]
        if mapping is not None and offset is not None:
            break
        previous = (indent, re.search(r":\s*(#.*)?$", stripped) is not None)
    return (mapping or 2, max(0, offset or 0))


def _document_of(docs: Sequence[Any], f: Finding) -> Any:
    """The StatefulSet document of ``docs`` that ``f`` is about (kind, name and namespace)."""
    for doc in docs:
        if not isinstance(doc, dict) or doc.get("kind") != f.obj.kind:
            continue
        meta = doc.get("metadata") or {}
        if meta.get("name") != f.obj.name:
            continue
        namespace = meta.get("namespace")
        if namespace is None or namespace == f.obj.namespace:
            return doc
    return None


def _set(doc: Any, keys: Sequence[str], value: Any) -> None:
    """Set the field at ``keys`` of a round-trip document, creating the mappings missing on
    the way (appended after the existing keys)."""
    from ruamel.yaml.comments import CommentedMap

    from .remedy import plain

    node = doc
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = CommentedMap()
            node[key] = child
        node = child
    have = node.get(keys[-1])
    if isinstance(have, list) and isinstance(value, list) and plain(have) == value[: len(have)]:
        have.extend(value[len(have) :])  # (items added after the user's, which keep comments)
        return
    node[keys[-1]] = value


def replacements(old: str, new: str) -> list[dict[str, Any]]:
    """SARIF ``replacement`` objects that turn ``old`` into ``new``, whole lines at a time:
    each changed run of lines is a ``deletedRegion`` (1-based lines; an empty region before a
    line for an insertion) and the ``insertedContent`` that replaces it."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[dict[str, Any]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # an insertion before line i1 + 1
            region = {"startLine": i1 + 1, "startColumn": 1, "endLine": i1 + 1, "endColumn": 1}
        else:  # lines i1 + 1 .. i2, whole, their line breaks included
            region = {"startLine": i1 + 1, "startColumn": 1, "endLine": i2 + 1, "endColumn": 1}
        out.append({"deletedRegion": region, "insertedContent": {"text": "".join(b[j1:j2])}})
    return out
