"""``ssrisk fix`` for StatefulSets rendered from Helm charts: a values line that alone writes
a field is changed in place (:func:`values_edited`), any other field in the chart's own
template (:func:`plan_templates`); every change is rendered and compared in each render that
reads it before it is written (:func:`verify_render`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from .fixer import (
    _ACTION_LINE,
    FixRun,
    _file_not_writable,
    _indent_of,
    _indentation,
    _insert_block,
    _replaced,
    _scalar_line,
    _Unfixable,
    _Written,
)
from .model import Finding


def plan_templates(run: FixRun, chart: str, findings: Sequence[Finding]) -> None:
    """Add to ``run`` the template changes that make the fixes of ``findings`` (all rendered
    from ``chart``), after rendering a changed copy of the chart for each render that reads
    it (every variant) and finding there exactly the fixes' edits. When they cannot all be
    made together, each is tried in turn: one that cannot be made is said with its own
    reason, and the others are made."""
    try:
        accepted, files = list(findings), _templates_checked(chart, findings)
    except _Unfixable:
        accepted, files = [], {}
        for f in findings:
            try:
                files = _templates_checked(chart, [*accepted, f])
            except _Unfixable as exc:
                run.not_applied.append((f, str(exc)))
                continue
            accepted.append(f)
    for path, (old, new) in files.items():
        run.changed[path] = (old, new)
    for f in accepted:
        assert f.fix is not None
        run.done((next(iter(files), chart), f.rule, f.fix.remedy.summary), set(files))


def _templates_checked(chart: str, findings: Sequence[Finding]) -> dict[str, tuple[str, str]]:
    """The template changes of ``findings`` (:func:`_templates_edited`), rendered and
    compared in every render that reads them (:func:`verify_render`, each verdict kept).

    Raises:
        _Unfixable: a change that cannot be made, or does not render exactly the fixes.
    """
    files = _templates_edited(chart, findings)
    for render in renders_of(findings):  # (every variant of the chart)
        key = (
            render,
            tuple(sorted((p, new) for p, (_old, new) in files.items())),
            tuple(repr(f.fix.remedy.edits) for f in findings if f.fix),
        )
        if key not in _VERIFIED:  # (SARIF plans each finding's fix alone)
            try:
                verify_render(render, {p: new for p, (_old, new) in files.items()}, findings)
                _VERIFIED[key] = None
            except _Unfixable as exc:
                _VERIFIED[key] = str(exc)
        if _VERIFIED[key] is not None:
            raise _Unfixable(str(_VERIFIED[key]))
    return files


def renders_of(findings: Sequence[Finding]) -> list[Any]:
    """The renders the fixes of ``findings`` are read by (:attr:`Fix.renders`), each once,
    the findings' own first."""
    out: dict[Any, None] = {}
    for f in findings:
        if f.fix is not None and f.fix.render is not None:
            out.setdefault(f.fix.render, None)
    for f in findings:
        for render in f.fix.renders if f.fix is not None else ():
            out.setdefault(render, None)
    return list(out)


#: Template changes rendered and compared in this process: (render, changed files, edits)
#: -> the reason they were refused, or ``None``.
_VERIFIED: dict[Any, str | None] = {}


def _templates_edited(chart: str, findings: Sequence[Finding]) -> dict[str, tuple[str, str]]:
    """``{template: (old, new)}``: each edit made on its template line as in a plain file
    (a literal scalar replaced, a line removed, a block inserted under a literal ``key:``
    line), never on a line that holds a template action (``{{``), never in a subchart's
    template; the same edit asked by several findings (variants) made once."""
    wanted: dict[tuple[str, int, int, tuple[Any, ...]], Any] = {}
    spelt: dict[str, str] = {}
    maps: dict[str, str] = {}
    for f in findings:
        assert f.fix is not None and f.fix.template is not None
        spelt.update((text, expr) for text, expr, _keys in f.fix.template.spelt if expr)
        maps.update((text, expr) for text, expr, _keys in f.fix.template.spelt_maps)
        for i, template, line, found in f.fix.template.places:
            e = f.fix.remedy.edits[i]
            key = (template, line, found, e.keys)
            change = ("remove",) if e.remove else ("set", repr(e.value))
            if key in wanted and wanted[key][0] != change:
                raise _Unfixable(f"{template}:{line}: the renders need different changes")
            wanted[key] = (change, e)
    out: dict[str, tuple[str, str]] = {}
    above = os.path.dirname(os.path.realpath(chart))
    if os.path.basename(above) == "charts" and os.path.isfile(
        os.path.join(os.path.dirname(above), "Chart.yaml")
    ):
        raise _Unfixable(f"{chart} is a subchart of the chart above it: not written")
    for template in sorted({k[0] for k in wanted}):
        rel = os.path.relpath(os.path.abspath(template), os.path.abspath(chart))
        if rel.split(os.sep)[0] != "templates" or _file_not_writable(template):
            raise _Unfixable(f"{template}: not a template of the chart itself: not written")
        written = _Written.read(template)
        lines = written.body.splitlines(keepends=True)
        mine = sorted((k for k in wanted if k[0] == template), key=lambda k: -k[1])
        for _t, line, found, keys in mine:
            _change, e = wanted[(_t, line, found, keys)]
            patched = _template_patch(lines, line - 1, found, e, spelt, maps, chart)
            lines = patched.splitlines(keepends=True)
        out[template] = (written.old, written.back("".join(lines)))
    return out


def _template_patch(
    lines: list[str],
    at: int,
    found: int,
    edit: Any,
    spelt: Mapping[str, str],
    maps: Mapping[str, str] | None = None,
    chart: str = "",
) -> str:
    """The template text with ``edit`` made at line ``at`` (0-based), where the deepest of
    its first ``found`` keys is written; a string of its value that the template writes with
    a template action is written as the template writes it (``spelt``: rendered string ->
    the template's text)."""
    keys, name = edit.keys, edit.field
    if at >= len(lines) or "{{" in lines[at]:
        raise _Unfixable(f"{name}: its template line is a template action: not written")
    if found == len(keys):
        if edit.remove:
            if _scalar_line(lines[at], str(keys[-1])) is None:
                raise _Unfixable(f"{name}: not one line of the template")
            del lines[at]
            return "".join(lines)
        if isinstance(edit.value, (dict, list)):
            raise _Unfixable(f"{name}: not a single value of the template")
        raw = spelt.get(edit.value) if isinstance(edit.value, str) else None
        changed = _replaced(lines[at], edit.value, str(keys[-1]), raw)
        if changed is None:
            raise _Unfixable(f"{name}: not one line of the template")
        lines[at] = changed
        return "".join(lines)
    if edit.remove:
        return "".join(lines)
    if any(isinstance(k, int) for k in keys[found - 1 :]):
        raise _Unfixable(f"{name}: a list item of the template")
    if not re.match(rf"\s*(-\s+)?[\"']?{re.escape(str(keys[found - 1]))}[\"']?\s*:\s*$", lines[at]):
        raise _Unfixable(f"{name}: its parent is not a literal block of the template")
    marks: dict[str, str] = {}
    map_marks: dict[str, str] = {}
    maps = maps or {}

    def marked(value: Any) -> Any:  # (a spelt string as a token, written back after)
        if isinstance(value, str) and value in spelt:
            return marks.setdefault(value, f"SSRISKTEMPLATETEXT{len(marks)}X")
        if isinstance(value, dict) and json.dumps(value, sort_keys=True) in maps:
            key = json.dumps(value, sort_keys=True)
            return map_marks.setdefault(key, f"SSRISKTEMPLATEMAP{len(map_marks)}X")
        if isinstance(value, dict):
            return {k: marked(v) for k, v in value.items()}
        if isinstance(value, list):
            return [marked(v) for v in value]
        return value

    written = _written_below(lines, at, str(keys[found]))
    if written is not None:
        raise _Unfixable(
            f"line {written + 1} of the template writes {keys[found]} when a value asks for "
            "it: set it through the chart's values"
        )
    helper = _written_in_helpers(chart, str(keys[found]))
    if helper is not None:
        raise _Unfixable(
            f"{helper} writes {keys[found]} when a value asks for it: set it through the "
            "chart's values"
        )
    subtree: Any = marked(edit.value)
    for key in reversed(keys[found + 1 :]):
        subtree = {key: subtree}
    text = _insert_block(lines, at, {keys[found]: subtree}, template=True)
    for value, token in marks.items():
        text = text.replace(token, spelt[value])
    step, _offset = _indentation(text)
    for key, token in map_marks.items():  # (the action, indented below its key's line)

        def action(m: re.Match[str], key: str = key) -> str:
            column = len(m.group(1)) + step
            first, *more = maps[key].split("\n")  # (the action, then literal lines below it)
            spelt = re.sub(r"nindent\s+\d+", f"nindent {column}", first)
            spelt += "".join("\n" + " " * column + line for line in more)
            return m.group(0).replace(m.group(2), spelt)

        text = re.sub(rf"(?m)^( *(?:- )?)\S+: ({token})$", action, text)
    return text


#: The release name a changed chart is rendered with too: a change that writes what the
#: configured release rendered (``orders-db``) where the template spells it with a template
#: action renders otherwise for this one, and is refused.
OTHER_RELEASE = "ssrisk-check"


def verify_render(
    render: tuple[str, str, Any], files: Mapping[str, str], findings: Sequence[Finding]
) -> None:
    """Render the chart as it is and with the changed ``files`` (its templates, or values
    files of the render), as ``render`` says and again as release :data:`OTHER_RELEASE`:
    the objects the findings' edits change must be exactly as edited (in the other release,
    with each spelt string as that release renders it), every other object as it was. A
    value that writes other fields too (``replicas`` and ``partition`` from one value)
    renders them changed, and is refused.

    Raises:
        _Unfixable: a render fails, or renders anything else.
    """
    import tempfile
    from dataclasses import replace

    from .renderers.chartcopy import copy_chart
    from .renderers.common import RenderError

    chart, namespace, options = render
    top = os.path.realpath(chart)
    with tempfile.TemporaryDirectory(prefix="ssrisk-fix-") as tmp:
        try:
            copy, _skipped = copy_chart(chart, tmp)
        except RenderError as exc:
            raise _Unfixable(str(exc)) from None
        given = {os.path.realpath(v): i for i, v in enumerate(options.values_files)}
        values = list(options.values_files)
        for n, (path, new) in enumerate(files.items()):
            real = os.path.realpath(path)
            if real in given:  # (a values file the render was given: a changed copy)
                target = os.path.join(tmp, f"values-{n}.yaml")
                values[given[real]] = target
            elif real.startswith(top + os.sep):  # (a file of the chart: in its copy)
                target = os.path.join(copy, os.path.relpath(real, top))
            else:
                continue  # (not read by this render)
            with open(target, "w", encoding="utf-8") as fh:
                fh.write(new)
        changed = replace(options, values_files=tuple(values))
        where: dict[Any, int] = {}
        for release in (options.release, OTHER_RELEASE):
            before = _rendered(chart, namespace, replace(options, release=release))
            again = _rendered(chart, namespace, replace(options, release=release))
            after = _rendered(copy, namespace, replace(changed, release=release))
            if not where:
                where = _objects_of(findings, before, render)
            if len(after) != len(before) or len(again) != len(before):
                raise _Unfixable("the changed chart renders other objects: not written")
            expected = [data for _ref, data in before]
            for f in findings:
                own = f.fix is not None and f.fix.render == render
                _expect(f, where, before, expected, own and release == options.release, own)
            # (what two renders of the unchanged chart disagree on, a generated password
            # and its checksum, is not compared)
            volatile = [_volatile(a, b) for (_r, a), (_s, b) in zip(before, again, strict=True)]
            got = [_masked(d, m) for (_r, d), m in zip(after, volatile, strict=True)]
            want = [_masked(d, m) for d, m in zip(expected, volatile, strict=True)]
            if got != want:
                raise _Unfixable(
                    "the changed chart does not render exactly the fix (the value or line "
                    "writes other fields too, or renders otherwise for another release)"
                )


#: A field two renders of the unchanged chart disagree on (:func:`_volatile`).
VOLATILE = "<differs between renders>"


def _volatile(a: Any, b: Any) -> Any:
    """Where two renders ``a`` and ``b`` of one object differ: the same shape with
    :data:`VOLATILE` at each differing value, ``None`` where they agree."""
    if a == b:
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        return {k: _volatile(a.get(k), b.get(k)) for k in {*a, *b} if a.get(k) != b.get(k)}
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [_volatile(x, y) for x, y in zip(a, b, strict=True)]
    return VOLATILE


def _masked(data: Any, mask: Any) -> Any:
    """``data`` with each value :func:`_volatile` found differing replaced by
    :data:`VOLATILE`."""
    if mask is None:
        return data
    if mask == VOLATILE:
        return VOLATILE
    if isinstance(mask, dict) and isinstance(data, dict):
        return {k: _masked(v, mask.get(k)) for k, v in data.items()}
    if isinstance(mask, list) and isinstance(data, list) and len(mask) == len(data):
        return [_masked(v, m) for v, m in zip(data, mask, strict=True)]
    return VOLATILE


def _rendered(directory: str, namespace: str, options: Any) -> list[tuple[Any, Any]]:
    """The objects the chart at ``directory`` renders: ``[((kind, name, namespace, template
    file within the chart), plain data)]``; a document its render warns about (a key twice)
    is refused."""
    from .remedy import plain
    from .renderers.helm import render_chart

    out: list[tuple[Any, Any]] = []
    for lf in render_chart(directory, namespace, options):
        if lf.errors:
            raise _Unfixable(f"the changed chart does not render: {lf.errors[0].message}")
        twice = [n for n in lf.notices if "duplicate key" in n.message]
        if twice:
            raise _Unfixable(f"the changed chart renders {twice[0].message}")
        for o in lf.objects:
            source = str(getattr(o, "source", "") or "").split("/", 1)[-1]
            out.append(((o.kind, o.name, o.namespace, source), plain(o.data)))
    return out


def _objects_of(findings: Sequence[Finding], before: Sequence[Any], render: Any) -> dict[Any, int]:
    """Where each object the findings' edits change is in ``before`` (a render's objects):
    by its identity in its own render; in another render of the chart (a variant), the one
    object of its kind its template renders there, if any (else it is not rendered there)."""
    by_ref = {ref[:3]: i for i, (ref, _data) in enumerate(before)}
    by_source: dict[tuple[str, str], list[int]] = {}
    for i, (ref, _data) in enumerate(before):
        by_source.setdefault((ref[0], ref[3]), []).append(i)
    where: dict[Any, int] = {}
    for f in findings:
        assert f.fix is not None
        for e in f.fix.remedy.edits:
            ref = e.obj or f.obj
            key = (ref.kind, ref.name, ref.namespace)
            if f.fix.render == render:
                if key in by_ref:
                    where[(id(f), key)] = by_ref[key]
                continue
            source = _source_of(f, e)
            found = by_source.get((ref.kind, source), []) if source else []
            if len(found) > 1:
                raise _Unfixable(f"{source} renders several {ref.kind}s: not written")
            if found:
                where[(id(f), key)] = found[0]
    return where


def _source_of(f: Finding, edit: Any) -> str:
    """The template file (within its chart) the object ``edit`` changes is rendered from."""
    if f.fix is not None and f.fix.template is not None:
        i = f.fix.remedy.edits.index(edit)
        for index, template, _line, _found in f.fix.template.places:
            if index == i and f.fix.render is not None:
                rel = os.path.relpath(os.path.abspath(template), os.path.abspath(f.fix.render[0]))
                return rel.replace(os.sep, "/")
    source = f.position.source or ""
    return source.split("/", 1)[-1]


def _expect(
    f: Finding,
    where: Mapping[Any, int],
    before: Sequence[Any],
    expected: list[Any],
    same: bool,
    own: bool = True,
) -> None:
    """Apply the edits of ``f`` to ``expected`` (the objects of a render, in order; ``where``:
    :func:`_objects_of`); not ``same`` render and release as the finding's: each spelt string
    and label mapping as that render has it at the field it was found at. In another render
    than the finding's (not ``own``), an object it does not render is not expected."""
    from .model import dig
    from .remedy import apply_edits

    assert f.fix is not None
    spelt = f.fix.template.spelt if f.fix.template is not None else ()
    maps = f.fix.template.spelt_maps if f.fix.template is not None else ()
    for e in f.fix.remedy.edits:
        ref = e.obj or f.obj
        i = where.get((id(f), (ref.kind, ref.name, ref.namespace)))
        if i is None:
            if not own:
                continue  # (another variant that does not render it: nothing to expect)
            raise _Unfixable(f"{ref} is not rendered again")
        if not same:
            renamed: dict[str, Any] = {}
            for text, _expr, keys in (*spelt, *maps):
                node = dig(before[i][1], *keys)
                if node is None:
                    raise _Unfixable(f"{ref}: cannot render the change again")
                renamed[text] = node
            e = _renamed(e, renamed)
        expected[i] = apply_edits(expected[i], [e])


def _renamed(edit: Any, renamed: Mapping[str, Any]) -> Any:
    """``edit`` with each string of its value, and each mapping (by its JSON), that
    ``renamed`` names replaced."""

    def swap(value: Any) -> Any:
        if isinstance(value, str):
            return renamed.get(value, value)
        if isinstance(value, dict):
            whole = json.dumps(value, sort_keys=True)
            if whole in renamed:
                return renamed[whole]
            return {k: swap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [swap(v) for v in value]
        return value

    return msgspec.structs.replace(edit, value=swap(edit.value))  # (__post_init__: plain)


def values_not_writable(path: str, f: Finding) -> str | None:
    """Why the values file ``path`` of the chart ``f`` was rendered from is not written: not
    inside the tree the chart is checked in (a ``--values`` file from elsewhere), a link, or
    not a regular file."""
    from .confine import is_inside, tree_of

    chart = f.fix.render[0] if f.fix is not None and f.fix.render is not None else f.position.path
    if not is_inside(os.path.realpath(path), tree_of(chart)):
        return f"{path} is outside the checked tree: not written"
    return _file_not_writable(path)


def values_edited(path: str, edits: Sequence[Any]) -> tuple[str, str]:
    """``(old, new)`` text of a values file with the value on each edit's line (its
    ``value_at``) replaced, comment and spacing kept; the file must still read as YAML."""

    from .yamlpos import load_documents

    written = _Written.read(path)
    lines = written.body.splitlines(keepends=True)
    for e in edits:
        at = e.value_at.line - 1
        changed = _replaced(lines[at], e.value)
        if changed is None:
            raise _Unfixable(f"{path}:{at + 1}: the value is not written on one line of its own")
        lines[at] = changed
    new = "".join(lines)
    try:
        list(load_documents(new))
    except Exception:
        raise _Unfixable(f"{path}: the changed values would not read as YAML") from None
    return written.old, written.back(new)


def _written_in_helpers(chart: str, key: str) -> str | None:
    """``file:line`` of a helper of the chart (``templates/_*.tpl``, what ``include``
    renders) that writes ``key``, or ``None``: a key a helper writes under a condition would
    be written twice when the condition holds."""
    directory = os.path.join(chart, "templates")
    pattern = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*:")
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(".tpl"))
    except OSError:
        return None
    for name in names[:200]:
        path = os.path.join(directory, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    if pattern.match(line):
                        return f"{path}:{number}"
        except OSError:
            continue
    return None


def _written_below(lines: Sequence[str], parent: int, key: str) -> int | None:
    """The 0-based line below the template line ``parent`` (within its block, action lines
    and all) that writes ``key`` (under a condition, since the rendered object lacks it), or
    ``None``."""
    indent = _indent_of(lines[parent])
    pattern = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*:")
    for i in range(parent + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#") or _ACTION_LINE.match(lines[i]):
            continue
        if _indent_of(lines[i]) <= indent:
            break
        if pattern.match(lines[i]):
            return i
    return None
