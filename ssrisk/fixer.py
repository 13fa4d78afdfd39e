"""``ssrisk fix``: apply the verified fixes of a run's findings to the manifests they are
about, keeping comments, key order, quoting and style (text patches, blocks rendered by
ruamel.yaml in the file's indentation).

A plain StatefulSet is changed in its own file, when it is a regular file inside the checked
tree, not a link and not standard input; a new object is written as a document after it. A
StatefulSet built by kustomize is changed by patch files in the kustomization that builds it
(:mod:`ssrisk.fixer_kustomize`), never in its base. One rendered from a chart is changed on the
line of the user's values file that writes the field, when one value alone writes it, else
in the chart's own template, after a changed copy of the chart renders exactly the fix
(:mod:`ssrisk.fixer_helm`); what cannot be written so is said, with the reason. A file is
written once, with every fix of it, through :func:`ssrisk.outfile.write_file` (never through a
link); ``diff`` writes nothing and gives a unified diff instead. A second run finds nothing
left to fix: each fix was verified to remove its finding (:mod:`ssrisk.remedy`).
"""

from __future__ import annotations

import difflib
import io
import json
import os
import re
from collections.abc import Mapping, Sequence
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
    #: the files of ``changed`` that are new (a kustomization's patch)
    created: set[str] = field(default_factory=set)
    #: verified changes that need the owner's decision (:attr:`Remedy.advice`): never written
    advice: list[Finding] = field(default_factory=list)
    #: the files each entry of ``applied`` changes
    files_of: dict[tuple[str, str, str], set[str]] = field(default_factory=dict)

    def done(self, entry: tuple[str, str, str], paths: set[str]) -> None:
        """Record ``entry`` (``(path, rule, summary)``) as applied, changing ``paths``."""
        if entry not in self.applied:
            self.applied.append(entry)
        self.files_of.setdefault(entry, set()).update(paths)


def plan_fixes(findings: Sequence[Finding]) -> FixRun:
    """The new text of each plain file the fixes of ``findings`` concern (nothing written).

    A finding without a fix is left out; one whose fix changes an object that is rendered,
    or whose file cannot be read or edited as it was checked, is in ``not_applied`` with the
    reason (none of its edits is made)."""
    from .fixer_helm import (
        plan_templates,
        renders_of,
        values_edited,
        values_not_writable,
        verify_render,
    )
    from .fixer_kustomize import plan_overlay

    run = FixRun()
    by_file: dict[str, list[tuple[Finding, Any, list[Any]]]] = {}
    values: dict[str, list[tuple[Finding, Any]]] = {}  # values file -> (finding, edit)
    overlays: dict[str, list[Finding]] = {}  # kustomization directory -> its findings
    templated: list[Finding] = []  # fixes made in a chart's templates
    for f in findings:
        if f.fix is None or f.suppressed:
            continue
        if f.fix.remedy.advice:
            run.advice.append(f)
            continue
        if f.fix.overlay is not None:
            overlays.setdefault(f.fix.overlay.directory, []).append(f)
            continue
        if f.fix.template is not None:
            templated.append(f)
            continue
        edits = f.fix.remedy.edits
        if edits and all(e.value_at is not None for e in edits):
            # a chart's field written from one value: the values line changes
            why = next((w for e in edits if (w := values_not_writable(e.value_at.path, f))), None)
            if why is not None:
                run.not_applied.append((f, why))
                continue
            for e in edits:
                values.setdefault(e.value_at.path, []).append((f, e))
            continue
        targets: dict[tuple[str, Any], list[Any]] = {}
        why = None
        for edit in f.fix.remedy.edits:
            at = edit.at if edit.at is not None else f.checked_at
            why = why or _not_writable(at)
            if at is not None:
                targets.setdefault((at.path, edit.obj or f.obj), []).append(edit)
        if why is not None:
            run.not_applied.append((f, why))
            continue
        for (path, ref), edits in targets.items():
            by_file.setdefault(path, []).append((f, ref, edits))
    for directory, fs in overlays.items():
        plan_overlay(run, directory, fs)
    by_chart: dict[str, list[Finding]] = {}
    for f in templated:
        assert f.fix is not None and f.fix.template is not None
        by_chart.setdefault(f.fix.template.render[0], []).append(f)
    for chart, fs in by_chart.items():
        plan_templates(run, chart, fs)
    failed: dict[int, str] = {}
    for path, placed in values.items():
        try:
            old, new = values_edited(path, [e for _f, e in placed])
            mine = list({id(f): f for f, _e in placed}.values())
            renders = renders_of(mine)
            if not renders:
                raise _Unfixable("the chart cannot be rendered again to check the change")
            for render in renders:  # (every chart and variant given this values file)
                verify_render(render, {path: new}, mine)
            run.changed[path] = (old, new)
        except _Unfixable as exc:
            failed.update((id(f), str(exc)) for f, _e in placed)
        for f, _e in placed:
            if id(f) in failed:
                run.not_applied.append((f, failed[id(f)]))
            else:
                run.done((path, f.rule, f.fix.remedy.summary), {path})
    _plan_files(run, by_file)
    return run


def _plan_files(run: FixRun, by_file: Mapping[str, list[tuple[Finding, Any, list[Any]]]]) -> None:
    """Add to ``run`` the plain files' changes: each finding's fix is made whole or not at
    all (one that cannot be made in one of its files is left out of the others too), and one
    that cannot be made leaves the others of its file made."""
    failed: dict[int, str] = {}
    results: dict[str, tuple[str, str]] = {}
    for _pass in range(4):
        new_failure = False
        results = {}
        for path, items in by_file.items():
            live = [item for item in items if id(item[0]) not in failed]
            if not live:
                continue
            try:
                old, new, fails = _edited(path, live)
            except _Unfixable as exc:
                fails = {id(f): str(exc) for f, _ref, _edits in live}
                old = new = ""
            for key, why in fails.items():
                if key not in failed:
                    failed[key] = why
                    new_failure = True
            results[path] = (old, new)
        if not new_failure:
            break
    for path, (old, new) in results.items():
        if new != old:
            run.changed[path] = (old, new)
    paths_of: dict[int, set[str]] = {}
    for path, items in by_file.items():
        for f, _ref, _edits in items:
            if path in run.changed:
                paths_of.setdefault(id(f), set()).add(path)
    seen: set[int] = set()
    for path, items in by_file.items():
        for f, _ref, _edits in items:
            if id(f) in seen:
                continue
            seen.add(id(f))
            assert f.fix is not None
            if id(f) in failed:
                run.not_applied.append((f, failed[id(f)]))
            elif path in run.changed:
                run.done((path, f.rule, f.fix.remedy.summary), paths_of.get(id(f), {path}))


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
        # (git apply and patch: a/ b/ for a relative path, the path itself for an absolute
        # one; a last line without a line break is marked as diff marks it)
        a, b = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
        if path in run.created:
            a = "/dev/null"
        for line in difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), fromfile=a, tofile=b
        ):
            parts.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(parts)


class _Unfixable(Exception):
    """A file whose fixes cannot be applied (the reason)."""


def _file_not_writable(path: str) -> str | None:
    """Why the file ``path`` is not written (a link, not a regular file), or ``None``."""
    if os.path.islink(path) or not os.path.isfile(path):
        return "not a regular file (a link, or gone): not written"
    return None


def _not_writable(at: Any) -> str | None:
    """Why the file of an object that starts at ``at`` (a position) is not written, or
    ``None``."""
    if at is None or at.path.startswith("<"):
        return "read from standard input: no file to change"
    if at.kustomization:
        return "built by kustomize: make the change in the overlay"
    if at.variant or _in_chart(at.path):
        return "rendered from a Helm chart: make the change where the field is written"
    if at.source:
        return (
            "a saved Helm render (its '# Source:' comments name the chart's templates): change "
            "the chart or its values and render it again"
        )
    return _file_not_writable(at.path)


def _in_chart(path: str) -> bool:
    """Whether ``path`` lies in a Helm chart (a template: not YAML until rendered), even
    when it was checked as a plain file (its directory named as the PATH)."""
    from .confine import tree_of
    from .renderers.inputs import ChartsOf

    return ChartsOf()(path, tree_of(path)) is not None


def _edited(
    path: str, items: Sequence[tuple[Finding, Any, Sequence[Any]]]
) -> tuple[str, str, dict[int, str]]:
    """``(old text, new text, {id(finding): why not})`` of ``path`` with the edits of
    ``items`` (``(finding, object ref, edits)``) made as text patches: a scalar replaced on
    its line, a field removed with its line, missing fields and added list items inserted as
    lines (rendered by ruamel.yaml in the file's indentation, with its line breaks). Every
    other byte is kept (a byte order mark too), and each finding's change is read back: its
    objects must then hold exactly its edits, else it is left out with the reason."""
    from .remedy import apply_edits, plain

    written = _Written.read(path)
    old = written.old
    if path.lower().endswith(".json") or old.lstrip("\ufeff \t\r\n").startswith(("{", "[")):
        raise _Unfixable("a JSON file: ssrisk fix edits YAML only; make the change by hand")
    text = written.body
    wanted: dict[Any, Any] = {}  # object ref -> its data after every edit made
    fails: dict[int, str] = {}
    order: list[int] = []
    by_finding: dict[int, list[tuple[Finding, Any, Sequence[Any]]]] = {}
    for item in items:
        if id(item[0]) not in by_finding:
            order.append(id(item[0]))
        by_finding.setdefault(id(item[0]), []).append(item)
    for key in order:
        trial, mine = text, dict(wanted)
        try:
            for f, ref, edits in by_finding[key]:
                if any(e.create for e in edits):  # a new object, after the finding's own
                    for e in edits:
                        found = _object_in(trial, path, f.obj)
                        clash = _budget_clash(path, e.value, found)
                        if clash is not None:
                            raise _Unfixable(clash)
                        trial = _add_document(trial, path, found, e.value)
                        mine[ref] = plain(e.value)
                    continue
                base = mine[ref] if ref in mine else plain(_object_in(trial, path, ref).data)
                mine[ref] = apply_edits(base, edits)
                for edit in edits:
                    obj = _object_in(trial, path, ref)
                    trial = _patch(trial, obj, edit.keys, edit.value, edit.remove)
            for ref, data in mine.items():
                if plain(_object_in(trial, path, ref).data) != data:
                    raise _Unfixable("the change could not be made without rewriting other lines")
        except _Unfixable as exc:
            fails[key] = str(exc)
            continue
        text, wanted = trial, mine
    return old, written.back(text), fails


#: The largest neighbouring file read for :func:`_budget_clash`.
MAX_NEIGHBOUR_BYTES = 2_000_000


def _budget_clash(path: str, pdb: Mapping[str, Any], sts: Any) -> str | None:
    """Why the new budget ``pdb`` of ``sts`` (written in ``path``) is not added: a YAML file
    of its directory (the run may not have read it: one file named alone; nor the kinds it
    does not model) holds a budget that already selects the set's pods, or a workload other
    than the set whose pods the new budget would select too; else ``None``."""
    from .embedded_sim.selectors import InvalidSelector, selector_matches
    from .model import POD_LABELS, dig
    from .yamlpos import load_documents

    directory = os.path.dirname(os.path.abspath(path))
    mine = dig(sts.data, "spec", "template", "metadata", "labels") or {}
    selector = dig(pdb, "spec", "selector") or {}
    ns = dig(sts.data, "metadata", "namespace")
    try:
        names = sorted(os.listdir(directory))[:1000]
    except OSError:
        return None
    for name in names:
        neighbour = os.path.join(directory, name)
        if not name.lower().endswith((".yaml", ".yml")) or os.path.islink(neighbour):
            continue
        try:
            if not os.path.isfile(neighbour) or os.path.getsize(neighbour) > MAX_NEIGHBOUR_BYTES:
                continue
            with open(neighbour, encoding="utf-8", errors="replace") as fh:
                docs = [d for d, _dups in load_documents(fh.read(), strict=False)]
        except Exception:  # (a file the check reports itself)
            continue
        items: list[Any] = []
        for doc in docs:  # (a List's items as documents of their own)
            listed = doc.get("items") if isinstance(doc, Mapping) else None
            if isinstance(doc, Mapping) and doc.get("kind") == "List":
                items.extend(listed if isinstance(listed, list) else [])
            else:
                items.append(doc)
        for doc in items:
            if not isinstance(doc, Mapping) or dig(doc, "metadata", "namespace") != ns:
                continue
            kind, other = doc.get("kind"), dig(doc, "metadata", "name")
            try:
                if kind == "PodDisruptionBudget" and isinstance(mine, Mapping):
                    theirs = dig(doc, "spec", "selector")
                    if isinstance(theirs, Mapping) and selector_matches(theirs, mine):
                        return f"{name} has PodDisruptionBudget {other} for these pods already"
                labels = (
                    dig(doc, *POD_LABELS[kind])
                    if isinstance(kind, str) and kind in POD_LABELS
                    else None
                )
                same = kind == "StatefulSet" and other == sts.name
                if isinstance(labels, Mapping) and not same and selector_matches(selector, labels):
                    return (
                        f"the budget would select the pods of {kind} {other} ({name}) too: a "
                        "pod with two budgets cannot be evicted"
                    )
            except (InvalidSelector, TypeError):
                continue
    return None


@dataclass(frozen=True)
class _Written:
    """A file's text as read (``old``: with its byte order mark), and the text edits are made
    on (``body``: no mark, ``\\n`` line breaks); :meth:`back` writes an edited body as the
    file is written (its mark, its CRLF line breaks)."""

    old: str
    body: str
    bom: str
    crlf: bool

    @classmethod
    def read(cls, path: str) -> _Written:
        from .loading import read_text

        old, err = read_text(path)
        if old is None or err is not None:
            raise _Unfixable(f"{path}: {err.message if err is not None else 'cannot read'}")
        if not old.startswith("\ufeff") and _has_bom(path):
            old = "\ufeff" + old  # (the file as it is: its mark is kept)
        bom = "\ufeff" if old.startswith("\ufeff") else ""
        start = old[len(bom) :]
        crlf = start.count("\r\n") > start.count("\n") // 2
        return cls(old, start.replace("\r\n", "\n") if crlf else start, bom, crlf)

    def back(self, body: str) -> str:
        if body == self.body:
            return self.old
        return self.bom + (body.replace("\n", "\r\n") if self.crlf else body)


def _has_bom(path: str) -> bool:
    """Whether the file ``path`` starts with a UTF-8 byte order mark (which reading drops)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(3) == b"\xef\xbb\xbf"
    except OSError:
        return False


def _object_in(text: str, path: str, ref: Any) -> Any:
    """The object ``ref`` (an :class:`~ssrisk.model.ObjectRef`), read from ``text`` with
    positions."""
    from .loading import load_text

    loaded = load_text(text, path, None)
    if loaded.errors:
        raise _Unfixable(f"not read back for editing: {loaded.errors[0].message}")
    for obj in loaded.objects:
        if obj.kind == ref.kind and obj.name == ref.name:
            namespace = (obj.data.get("metadata") or {}).get("namespace")
            if namespace is None or namespace == ref.namespace:
                return obj
    raise _Unfixable(f"{ref} not found again in the file")


#: ``key: value  # comment`` on one line (block style): the value's text to replace.
_SCALAR_LINE = (
    r"^(?P<pre>\s*(?:-\s+)?[\"']?{key}[\"']?\s*:[ \t]+)"
    r"(?P<val>[^#\s{{\[][^#]*?)(?P<post>[ \t]+#.*)?$"
)
#: Any key, for a values line found by its position (its key is the values file's own).
_ANY_KEY = r"[^:#\s\"'][^:#]*?"


def _scalar_line(line: str, key: str | None = None) -> re.Match[str] | None:
    """The parts of ``line`` when it is ``key: value  # comment`` (block style, one line),
    ``key`` ``None`` for any key."""
    name = re.escape(key) if key is not None else _ANY_KEY
    return re.match(_SCALAR_LINE.format(key=name), line.rstrip("\r\n"))


def _replaced(line: str, value: Any, key: str | None = None, raw: str | None = None) -> str | None:
    """``line`` with its value replaced by ``value`` (or by the text ``raw``; comment, spacing
    and line break kept), or ``None`` when it is not one key and one value
    (:func:`_scalar_line`)."""
    m = _scalar_line(line, key)
    if m is None:
        return None
    ending = line[len(line.rstrip("\r\n")) :]
    text = raw if raw is not None else _scalar(value)
    quote = m["val"][:1]
    if raw is None and isinstance(value, str) and quote in ("'", '"'):  # (its quoting kept)
        text = "'" + value.replace("'", "''") + "'" if quote == "'" else json.dumps(value)
    return m["pre"] + text + (m["post"] or "") + ending


def _patch(text: str, obj: Any, keys: Sequence[str], value: Any, remove: bool = False) -> str:
    """``text`` with the field at ``keys`` of ``obj`` set to ``value`` (see :func:`_edited`).

    Raises:
        _Unfixable: a form this patcher does not change in place (flow style, a value on the
            next line, a missing top-level field).
    """
    from .model import dig

    lines = text.splitlines(keepends=True)
    found = 0  # how many of keys exist, as mappings (or list items) on the way
    node: Any = obj.data
    for key in keys:
        if isinstance(key, int):
            if not isinstance(node, list) or not 0 <= key < len(node):
                break
        elif not isinstance(node, dict) or key not in node:
            break
        node = node[key]
        found += 1
    name = ".".join(str(k) for k in keys)
    last = keys[-1]
    if isinstance(last, int):
        raise _Unfixable(f"{name}: a list item is not replaced whole")
    if remove:
        if found != len(keys):
            return text  # (not there: nothing to remove)
        at = obj.pos(*keys).line - 1
        if isinstance(node, (dict, list)) or _scalar_line(lines[at], keys[-1]) is None:
            raise _Unfixable(f"{name} is not written on one line of its own")
        del lines[at]
        return "".join(lines)
    if found == len(keys):
        at = obj.pos(*keys).line - 1
        if isinstance(node, list) and isinstance(value, list) and value[: len(node)] == node:
            return _append_items(lines, at, value[len(node) :])
        if isinstance(node, (dict, list)) or isinstance(value, (dict, list)):
            raise _Unfixable(f"{name} is not a single value to replace")
        changed = _replaced(lines[at], value, last)
        if changed is None:
            raise _Unfixable(f"{name} is not written on one line of its own")
        lines[at] = changed
        return "".join(lines)
    if found == 0:
        raise _Unfixable(f"{keys[0]} is missing from the object")
    if any(isinstance(k, int) for k in keys[found:]):
        raise _Unfixable(f"{name}: the list item is missing")
    subtree: Any = value
    for key in reversed(keys[found + 1 :]):
        subtree = {key: subtree}
    fragment = {keys[found]: subtree}
    where = obj.pos(*keys[:found])
    parent = where.line - 1
    if isinstance(keys[found - 1], int):  # a field of a list item: ``- key: value`` lines
        if not isinstance(dig(obj.data, *keys[:found]), dict):
            raise _Unfixable(f"{name}: the list item is not a mapping")
        return _insert_in_item(lines, parent, where.column - 1, fragment)
    if dig(obj.data, *keys[:found]) is None or not lines[parent].rstrip().endswith(":"):
        raise _Unfixable(f"{'.'.join(str(k) for k in keys[:found])} is not a block mapping")
    return _insert_block(lines, parent, fragment)


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_end(lines: Sequence[str], start: int) -> int:
    """The index after the last content line of the block that the line ``start`` opens (its
    deeper-indented lines; blank and comment lines after the block's end are not its)."""
    indent = _indent_of(lines[start])
    end = start + 1
    for i in range(start + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        # (a sequence at the key's own indentation still belongs to it)
        at_key = stripped.startswith("- ") and _indent_of(lines[i]) == indent
        if (stripped.startswith("---") or _indent_of(lines[i]) <= indent) and not at_key:
            break
        end = i + 1
    return end


def _insert_block(
    lines: list[str], parent: int, fragment: dict[str, Any], template: bool = False
) -> str:
    """Insert ``fragment`` (a mapping) as the last keys of the block mapping opened at line
    ``parent``, indented as its other keys (else one step deeper). In a Helm ``template``, as
    its first keys, right below ``parent``: the end of a block may lie inside an action block
    (``{{ if }}``) that also writes the next list or mapping, where a line would render only
    when it holds, or join that list."""
    end = parent + 1 if template else _block_end(lines, parent)
    scope = lines[parent + 1 : _block_end(lines, parent)] if template else lines[parent + 1 : end]
    children = [
        ln
        for ln in scope
        if ln.strip() and not ln.strip().startswith("#") and not _ACTION_LINE.match(ln)
    ]
    step, offset = _indentation("".join(lines))
    indent = _indent_of(children[0]) if children else _indent_of(lines[parent]) + step
    rendered = _render(fragment, step, offset)
    block = "".join(" " * indent + ln if ln.strip() else ln for ln in rendered.splitlines(True))
    if end > 0 and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines[end:end] = [block]
    return "".join(lines)


#: A line of a Helm template that is one action and nothing else.
_ACTION_LINE = re.compile(r"^\s*\{\{.*\}\}\s*$")


def _insert_in_item(lines: list[str], first: int, column: int, fragment: dict[str, Any]) -> str:
    """Insert ``fragment`` as the last keys of the block mapping that is a list item, its
    first key on line ``first`` at ``column`` (0-based, after the dash)."""
    if lines[first][column : column + 1] in ("{", "[", ""):
        raise _Unfixable("the list item is not written in block style")
    end = first + 1
    for i in range(first + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _indent_of(lines[i]) < column or stripped.startswith("---"):
            break
        end = i + 1
    step, offset = _indentation("".join(lines))
    rendered = _render(fragment, step, offset)
    block = "".join(" " * column + ln if ln.strip() else ln for ln in rendered.splitlines(True))
    if not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines[end:end] = [block]
    return "".join(lines)


def _add_document(text: str, path: str, after: Any, data: Mapping[str, Any]) -> str:
    """``text`` with ``data`` (a new object) written as a document of its own right after
    the document of ``after`` (an object of the file), in the file's indentation.

    Raises:
        _Unfixable: a JSON file (one object a file).
    """
    if path.lower().endswith(".json") or text.lstrip().startswith(("{", "[")):
        raise _Unfixable("a JSON file holds one object: add the new object in a file of its own")
    lines = text.splitlines(keepends=True)
    start = after.start().line - 1
    end = next(
        (i for i in range(start + 1, len(lines)) if re.match(r"(---|\.\.\.)(\s|$)", lines[i])),
        len(lines),
    )
    while end - 1 > start and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1  # (a comment before the next document's marker stays with it)
    step, offset = _indentation(text)
    block = "---\n" + _render(dict(data), step, offset)
    if end > 0 and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines[end:end] = [block]
    return "".join(lines)


def _append_items(lines: list[str], at: int, items: Sequence[Any]) -> str:
    """Append ``items`` to the block sequence whose key is on line ``at``, at its dashes'
    indentation."""
    end = _block_end(lines, at)
    dashes = [ln for ln in lines[at + 1 : end] if ln.lstrip().startswith("- ")]
    if not dashes:
        raise _Unfixable("the list is not written in block style")
    step, _offset = _indentation("".join(lines))
    indent = _indent_of(dashes[0])
    rendered = _render(list(items), step, 0)
    block = "".join(" " * indent + ln if ln.strip() else ln for ln in rendered.splitlines(True))
    if end > 0 and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines[end:end] = [block]
    return "".join(lines)


def _indentation(text: str) -> tuple[int, int]:
    """``(mapping indent, sequence dash offset)`` the file is written with (``containers:``
    then ``  - name:`` is an offset of 2; ``- name:`` under it, 0), read from its first nested
    mapping and its first block sequence; ``(2, 0)`` when it shows none."""
    mapping = offset = None
    previous: tuple[int, bool] | None = None  # (indent, ends with ':') of the line before
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = _indent_of(line)
        if previous is not None and previous[1]:
            if stripped.startswith("- ") and offset is None:
                offset = indent - previous[0]
            elif not stripped.startswith("- ") and mapping is None and indent > previous[0]:
                mapping = indent - previous[0]
        if mapping is not None and offset is not None:
            break
        previous = (indent, re.search(r":\s*(#.*)?$", stripped) is not None)
    return (mapping or 2, max(0, offset or 0))


def _render(data: Any, mapping: int, offset: int) -> str:
    """``data`` as block YAML at indentation 0 (ruamel.yaml, the file's indentation)."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    yaml.width = 4096
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def _scalar(value: Any) -> str:
    """A scalar as YAML text on one line (a string quoted when plain YAML would read it as
    something else)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    special = re.fullmatch(r"(?i)(true|false|yes|no|on|off|null|~|[-+.\d].*|)", text)
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9_./-]*", text) and special is None:
        return text
    return json.dumps(text)


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
