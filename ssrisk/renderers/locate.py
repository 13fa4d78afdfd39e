"""Pointing a field of a rendered object back at the line a user edits.

Two cases:

* Helm templates are not YAML until rendered, so :class:`TemplateLocator` walks the
  template's lines by indentation (``spec:`` then, deeper, ``replicas:``), skipping lines that
  are only template directives. When a key is produced by a directive (``toYaml``), the
  deepest key found is used.
* kustomize resources and patches are YAML, so :class:`ObjectLocator` looks the field up in
  the patches that set it (strategic-merge patches by key, JSON 6902 patches by ``path``) and
  otherwise in the resource file the object came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..model import K8sObject, Position, dig

_KEY = re.compile(r"^(?P<indent>\s*)(?P<dash>-\s+)?(?P<key>[\"']?[A-Za-z0-9_./-]+[\"']?)\s*:(\s|$)")
_ITEM = re.compile(r"^(?P<indent>\s*)-(\s|$)")
_DOC_START = re.compile(r"^---")
#: A template line whose value is one value of ``.Values`` alone (``replicas: {{
#: .Values.replicaCount }}``, trim markers allowed): the user sets the field in a values file.
_VALUE_ONLY = re.compile(r":\s*\{\{-?\s*\.Values\.([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)\s*-?\}\}\s*$")
#: A line that opens a template comment: ``{{/*`` or ``{{- /*`` (text/template: a comment is
#: ``{{/* ... */}}``, trim markers allowed, and may span lines).
_COMMENT_START = re.compile(r"^\s*\{\{-?\s*/\*")
_COMMENT_END = re.compile(r"\*/\s*-?\}\}")


@dataclass
class _Line:
    number: int  # 0-based line in the template file
    indent: int
    text: str


def _content_lines(text: str) -> list[list[_Line]]:
    """The template's documents as lists of lines that carry YAML (directive-only lines,
    YAML comments and template comments ``{{/* ... */}}`` spanning lines, such as a licence
    header, dropped)."""
    docs: list[list[_Line]] = [[]]
    in_comment = False
    for number, raw in enumerate(text.splitlines()):
        if in_comment:
            in_comment = _COMMENT_END.search(raw) is None
            continue
        if _DOC_START.match(raw):
            docs.append([])
            continue
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or _directive_only(stripped):
            continue
        opened = _COMMENT_START.match(raw)
        if opened is not None:  # a template comment that does not end on its first line
            in_comment = _COMMENT_END.search(raw, opened.end()) is None
            continue
        docs[-1].append(_Line(number, len(raw) - len(raw.lstrip()), raw))
    return [d for d in docs if d]


def _directive_only(stripped: str) -> bool:
    r"""A line (stripped) that holds only template directives: it starts with ``{{`` and
    ends with ``}}``. Tested without a regular expression: ``^(\{\{.*?\}\}\s*)+$`` says
    the same but backtracks exponentially on a line of many directives."""
    return len(stripped) >= 4 and stripped.startswith("{{") and stripped.endswith("}}")


def _key_of(line: _Line) -> tuple[str, int] | None:
    m = _KEY.match(line.text)
    if m is None:
        return None
    key = m.group("key").strip("\"'")
    return key, m.start("key")


class TemplateLocator:
    """Positions in a Helm template file for fields of an object rendered from it.

    ``text`` is the template source; ``path`` the file shown to the user; ``ordinal`` which of
    the template's documents of the same ``kind`` produced the object (0 for the first).
    ``values``: the user's values files of the render (``[(file as shown, loaded data with
    positions)]``, in merge order): a field whose template line is one value alone
    (``replicas: {{ .Values.db.replicas }}``) is placed at that value's line in the last of
    them that sets it, where the user changes it (else at the template's line); ``set_keys``
    are the key paths ``--set`` and the configuration's ``set`` give (``a.b``): a value they
    set, or set a parent of, is not the values files'. ``set_at`` places the values the
    configuration's ``set`` gives at their lines there; those of ``--set`` stay at the
    template's line.
    """

    def __init__(
        self,
        text: str,
        path: str,
        kind: str,
        ordinal: int = 0,
        values: Sequence[tuple[str, Any]] = (),
        set_keys: frozenset[str] = frozenset(),
        set_at: Mapping[str, Position] | None = None,
    ) -> None:
        self.path = path
        pick = _documents_of_kind(text, kind)
        self.lines: list[_Line] = pick[min(ordinal, len(pick) - 1)] if pick else []
        self.values = values
        self.set_keys = set_keys
        self.set_at = set_at or {}

    def files(self) -> frozenset[str] | None:
        """The files the object's fields are written in: the template (as shown)."""
        return frozenset({self.path})

    def locate(self, obj: K8sObject, keys: tuple[str | int, ...]) -> Position | None:
        """The line of the deepest of ``keys`` found in the template (1-based), else the
        object itself (its ``kind:`` line, else ``metadata:``, else the document's first
        line); ``None`` when the template has no such document."""
        if not self.lines:
            return None
        block = _Block(self.lines, parent_indent=-1, own_line=False)
        first = next(
            (
                line
                for key in ("kind", "metadata")
                for line in self.lines
                if line.indent == 0 and (_key_of(line) or ("",))[0] == key
            ),
            self.lines[0],
        )
        best = Position(self.path, first.number + 1, first.indent + 1)
        for key in keys:
            found = block.child(key)
            if found is None:
                break
            line, col, block = found
            best = Position(self.path, line.number + 1, col + 1)
        else:
            if keys and (self.values or self.set_at):
                return self._in_values(line.text) or best
        return best

    def _in_values(self, text: str) -> Position | None:
        """The position of the value a template line sets alone, in the user's values files."""
        from ..yamlpos import locate as locate_value

        m = _VALUE_ONLY.search(text)
        if m is None:
            return None
        keys = tuple(m.group(1).split("."))
        dotted = ".".join(keys)
        if dotted in self.set_at:  # the configuration's set: writes it
            return self.set_at[dotted]
        if any(".".join(keys[:n]) in self.set_keys for n in range(1, len(keys) + 1)):
            return None
        for shown, data in reversed(self.values):
            node = data
            for key in keys:
                if not isinstance(node, Mapping) or key not in node:
                    break
                node = node[key]
            else:
                line, col = locate_value(data, keys)
                return Position(shown, line + 1, col + 1)
        return None


@lru_cache(maxsize=16)
def _documents_of_kind(text: str, kind: str) -> list[list[_Line]]:
    """The template's documents that declare ``kind`` (all of them when none does). Cached:
    one template can render thousands of objects (``range``), each with a locator."""
    docs = _content_lines(text)
    return [d for d in docs if any(_is_kind_line(ln, kind) for ln in d)] or docs


def _is_kind_line(line: _Line, kind: str) -> bool:
    pattern = rf"^kind:\s*[\"']?{re.escape(kind)}[\"']?\s*$"
    return line.indent == 0 and re.match(pattern, line.text) is not None


@dataclass
class _Block:
    """The lines of one mapping value or list item.

    ``own_line``: the first line is a list item (``- name: x``) whose key belongs to the block;
    otherwise the first line is the parent key itself (or, at the top, there is no parent).
    """

    lines: list[_Line]
    parent_indent: int
    own_line: bool

    def child(self, key: str | int) -> tuple[_Line, int, _Block] | None:
        """The line, 0-based column and block of ``key`` (a mapping key or list index)."""
        lines = self.lines
        if isinstance(key, int):
            items = [
                (i, ln.indent)
                for i, ln in enumerate(lines)
                if ln.indent > self.parent_indent and _ITEM.match(ln.text)
            ]
            if not items:
                return None
            level = min(col for _, col in items)
            items = [(i, col) for i, col in items if col == level]
            if key >= len(items):
                return None
            index, dash = items[key]
            m = _KEY.match(lines[index].text)
            col = m.start("key") if m is not None and m.group("dash") else dash
            end = _end(lines, index, lambda ln: ln.indent <= dash)
            return lines[index], col, _Block(lines[index:end], dash, own_line=True)
        candidates: list[tuple[int, int]] = []  # (column, index)
        for i, ln in enumerate(lines):
            if i == 0 and self.own_line:
                pass  # the item's first key sits on its dash line
            elif ln.indent <= self.parent_indent:
                continue
            k = _key_of(ln)
            if k is not None and k[0] == key:
                candidates.append((k[1], i))
        if not candidates:
            return None
        col, index = min(candidates)
        end = _end(
            lines,
            index,
            lambda ln: (
                ln.indent < col or (ln.indent == col and not ln.text.lstrip().startswith("-"))
            ),
        )
        return lines[index], col, _Block(lines[index:end], col, own_line=False)


def _end(lines: list[_Line], index: int, stops: Callable[[_Line], bool]) -> int:
    for j in range(index + 1, len(lines)):
        if stops(lines[j]):
            return j
    return len(lines)


# -- kustomize -----------------------------------------------------------------------------


@dataclass(frozen=True)
class InlineText:
    """Where patch text sits in the file shown to the user.

    For a patch file nothing is shifted. For text written inline in a kustomization file,
    ``line_offset`` is the number of file lines before the text's first line and
    ``column_offset`` the indentation a literal block scalar (``patch: |-``) strips from every
    line. ``at`` is set instead when the text's lines do not map to the file's (a folded or
    quoted scalar): every field is then placed at the scalar.
    """

    line_offset: int = 0
    column_offset: int = 0
    at: Position | None = None

    def place(self, path: str, line: int, col: int) -> Position:
        """The 1-based file position of 0-based ``line``/``col`` in the text."""
        if self.at is not None:
            return self.at
        return Position(path, line + 1 + self.line_offset, col + 1 + self.column_offset)


@dataclass
class JsonPatch:
    """A JSON 6902 patch (a file, or text inline in a kustomization): its operations, loaded
    with positions (:mod:`ssrisk.yamlpos`)."""

    path: str
    ops: Sequence[Any]
    text: InlineText = field(default_factory=InlineText)

    def locate(self, keys: Sequence[str | int]) -> Position | None:
        """Where the operation that sets the field at ``keys`` writes it, or ``None``.

        The last operation wins (RFC 6902 applies them in order). An ``add``/``replace``
        whose ``path`` is the field points at its ``value``; one whose ``path`` is a parent
        of the field points at the field inside its ``value``; ``copy``/``move`` at ``from``;
        a ``remove`` of the field, of a parent of it, or of something inside it (at least two
        levels down: ``/spec/template/spec/affinity`` for ``spec.template.spec``) at its
        ``path``.
        """
        wanted = [str(k) for k in keys]
        for op in reversed(self.ops):
            if not isinstance(op, Mapping) or op.get("op") == "test":
                continue
            target = op.get("path")
            if not isinstance(target, str) or not target.startswith("/"):
                continue
            tokens = [t.replace("~1", "/").replace("~0", "~") for t in target[1:].split("/")]
            if op.get("op") == "remove":
                # the field is gone because of this operation (it removed the field or a
                # parent of it), or the field lacks what it removed (a finding about what
                # the pod spec no longer has): the user changes it here, not in the base
                removed = tokens == wanted[: len(tokens)]
                inside = len(wanted) >= 2 and wanted == tokens[: len(wanted)]
                lc = getattr(op, "lc", None)
                if (removed or inside) and lc is not None and "path" in op:
                    line, col = lc.value("path")
                    return self.text.place(self.path, int(line), int(col))
                continue
            if tokens != wanted[: len(tokens)]:
                continue
            rest = tuple(keys[len(tokens) :])
            lc = getattr(op, "lc", None)
            if not rest:
                if lc is None:
                    return self.text.place(self.path, 0, 0)
                key = "value" if "value" in op else "from" if "from" in op else None
                line, col = lc.key(key) if key is not None else (lc.line, lc.col)
                return self.text.place(self.path, int(line), int(col))
            value: Any = op.get("value")
            if dig(value, *rest) is not None:
                inner = K8sObject(data=value, path=self.path, line_offset=0, namespace=None)
                found = inner.pos(*rest)
                return self.text.place(self.path, found.line - 1, found.column - 1)
        return None


@dataclass
class PatchDocument(K8sObject):
    """A strategic-merge patch document, from a file or inline in a kustomization."""

    text: InlineText = field(default_factory=InlineText)

    def pos(self, *keys: str | int) -> Position:
        found = super().pos(*keys)
        return self.text.place(found.path, found.line - 1, found.column - 1)


@dataclass
class FieldValue:
    """A field a kustomization sets directly (``replicas: [{name, count}]``), at a position."""

    keys: tuple[str, ...]
    at: Position

    def locate(self, keys: Sequence[str | int]) -> Position | None:
        return self.at if tuple(keys) == self.keys else None


@dataclass
class ObjectLocator:
    """Fields of a kustomize-built object, found in the files that define them.

    ``patches`` are strategic-merge patch documents, JSON 6902 patches and fields the
    kustomization sets that apply to the object, the one kustomize applies last first (it
    wins); ``base`` is the object's document in its resource file (kustomize's
    ``config.kubernetes.io/origin``); ``fallback`` is used when neither is known (for example
    the kustomization file itself).
    """

    base: K8sObject | None
    patches: list[K8sObject | JsonPatch | FieldValue] = field(default_factory=list)
    fallback: Position | None = None

    def files(self) -> frozenset[str] | None:
        """The files the object's fields are written in (as shown): its resource file and
        every patch that applies to it; ``None`` when its resource file is not known."""
        if self.base is None:
            return None
        found = {self.base.path}
        for patch in self.patches:
            found.add(patch.at.path if isinstance(patch, FieldValue) else patch.path)
        return frozenset(found)

    def locate(self, obj: K8sObject, keys: tuple[str | int, ...]) -> Position | None:
        if keys:
            for patch in self.patches:
                if isinstance(patch, (JsonPatch, FieldValue)):
                    found = patch.locate(keys)
                    if found is not None:
                        return found
                    continue
                translated = translate_keys(obj.data, patch.data, keys)
                if len(translated) == len(keys) and dig(patch.data, *translated) is not None:
                    return patch.pos(*translated)
        if self.base is not None:
            return self.base.pos(*translate_keys(obj.data, self.base.data, keys))
        return self.fallback


def translate_keys(rendered: Any, source: Any, keys: Sequence[str | int]) -> tuple[str | int, ...]:
    """The path in ``source`` of the field at ``keys`` in ``rendered``.

    List items are matched by their ``name`` (the merge key of containers, volumes, ports,
    env and volumeClaimTemplates' metadata), else by index. The result stops before the
    first key that ``source`` does not have.
    """
    out: list[str | int] = []
    r, s = rendered, source
    for key in keys:
        if isinstance(key, int):
            if not isinstance(r, list) or not isinstance(s, list) or not 0 <= key < len(r):
                break
            item = r[key]
            name = item.get("name") if isinstance(item, Mapping) else None
            index: int | None = None
            if name is not None:
                for j, cand in enumerate(s):
                    if isinstance(cand, Mapping) and cand.get("name") == name:
                        index = j
                        break
            elif key < len(s):
                index = key
            if index is None:
                break
            out.append(index)
            r, s = item, s[index]
        else:
            if not isinstance(s, Mapping) or key not in s:
                break
            out.append(key)
            r = r.get(key) if isinstance(r, Mapping) else None
            s = s[key]
    return tuple(out)
