"""YAML documents as plain Python data that remembers where every node was written.

Built from the events of PyYAML's parser (the libyaml C parser when available), one pass and
no node tree (:func:`load_documents`): a composed node tree costs hundreds of bytes per
scalar (a node and two marks), so a flow sequence of small numbers took about 170 bytes of
memory per byte of text; the data alone takes about ten. A round-trip loader costs 20–40
times more time. The result is made of :class:`PosMap` and :class:`PosList` (``dict`` and
``list`` subclasses) whose ``lc`` attribute says where each node was written: ``lc.line``,
``lc.col``, ``lc.key(k)`` and ``lc.item(i)`` (all 0-based).

Scalars are resolved as Kubernetes' YAML reader (sigs.k8s.io/yaml, YAML 1.1 rules) does:
null, booleans (true/false/yes/no/on/off/y/n), integers, floats, everything else a string
(timestamps stay strings). Anchors and aliases share one object and are never copied, so an
alias bomb costs nothing here; merge keys (``<<``) are applied as the YAML merge key spec and
go-yaml apply them (the earlier mapping of a merged list wins). No tag ever constructs an
arbitrary object: a non-standard tag is an error.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import msgspec
import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - wheels ship libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

#: Nesting deeper than this is refused (Kubernetes objects are far shallower).
MAX_DEPTH = 200

_T = "tag:yaml.org,2002:"
_STANDARD = {f"{_T}{t}" for t in ("str", "int", "float", "bool", "null", "timestamp", "binary")}
_MERGE = f"{_T}merge"
_STR = f"{_T}str"
_MAP = f"{_T}map"
_SEQ = f"{_T}seq"
_PLAIN_KEY_TAGS = frozenset({_STR, f"{_T}int", f"{_T}bool", f"{_T}null", f"{_T}float"})
_INT = re.compile(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT_SPECIAL = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf")}
# go-yaml v2 resolve.go (the reader of sigs.k8s.io/yaml) takes a plain scalar as a float when
# it matches yamlStyleFloat; YAML 1.1 (PyYAML) wants a dot and a signed exponent, so `1e9` is
# text there but 1000000000 for kubectl.
_GO_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_NUMBER_START = frozenset("+-.0123456789")


class LC:
    """Positions of a mapping or sequence and of its keys or items (0-based): a view of the
    packed positions its :class:`PosMap` or :class:`PosList` keeps.

    Positions are packed as ``line << 32 | column`` integers in one ``array('q')`` per
    mapping or sequence (its own position, then one per key or item, in order), so that the
    composed node tree (two mark objects per node) can be freed as soon as a document is
    built, and so that positions cost 8 bytes each (a dict of Python integers cost about 60).
    """

    __slots__ = ("_node",)

    def __init__(self, node: PosMap | PosList) -> None:
        self._node = node

    @property
    def line(self) -> int:
        return int(self._node._pos[0] >> 32)

    @property
    def col(self) -> int:
        return int(self._node._pos[0] & 0xFFFFFFFF)

    def key(self, key: Any) -> tuple[int, int]:
        """Line and column of mapping key ``key`` (or of the item at index ``key``).

        Raises:
            KeyError: for a key the mapping does not have; IndexError: for an index out of
                range.
        """
        node = self._node
        if isinstance(node, PosList):
            index = range(len(node))[key]  # IndexError, negative indexes as for the list
        else:
            try:  # positions are looked up rarely (findings, schema errors): no index is kept
                index = list(node).index(key)
            except ValueError:
                raise KeyError(key) from None
        at = node._pos[index + 1]
        return at >> 32, at & 0xFFFFFFFF

    def item(self, index: int) -> tuple[int, int]:
        return self.key(index)

    def value(self, key: Any) -> tuple[int, int]:
        return self.key(key)


def locate(data: Any, keys: tuple[str | int, ...]) -> tuple[int, int]:
    """Line and column (0-based) of the field at ``keys`` in loaded ``data``: of the key of
    the deepest field of ``keys`` that exists (of the item, for a list index); the start of
    ``data`` when even the first key is missing; ``(0, 0)`` for data without positions.

    The same answer as following ``lc.key``/``lc.item`` step by step, read from the packed
    positions directly (rules and reporters ask for a position per finding).
    """
    node = data
    packed = getattr(node, "_pos", None)
    at = packed[0] if packed is not None else 0
    for key in keys:
        if isinstance(key, int):
            if not isinstance(node, list) or not 0 <= key < len(node):
                break
            if packed is not None:
                at = packed[key + 1]
            node = node[key]
        else:
            if not isinstance(node, (dict, Mapping)) or key not in node:  # dict first: fast
                break
            if packed is not None:
                at = packed[list(node).index(key) + 1]
            node = node[key]
        packed = getattr(node, "_pos", None)
    return at >> 32, at & 0xFFFFFFFF


class PosMap(dict[str, Any]):
    """A mapping with positions in ``lc``."""

    __slots__ = ("_pos",)
    _pos: array[int]

    @property
    def lc(self) -> LC:
        return LC(self)


class PosList(list[Any]):
    """A sequence with positions in ``lc``."""

    __slots__ = ("_pos",)
    _pos: array[int]

    @property
    def lc(self) -> LC:
        return LC(self)


class YamlInputError(Exception):
    """A document that cannot be read as Kubernetes data; ``line``/``column`` are 0-based."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class DuplicateKey(msgspec.Struct, frozen=True):
    """A mapping key given twice (0-based position of the second one)."""

    key: str
    line: int
    column: int
    first_line: int


_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers


#: go-yaml v2 (resolve.go, ``resolveMapList``; the reader of sigs.k8s.io/yaml) also reads
#: these one-letter words as booleans, which PyYAML's YAML 1.1 resolver leaves as text.
_GO_YAML_BOOLS = frozenset({"y", "Y", "n", "N"})
_BOOL = f"{_T}bool"
_VALUE = f"{_T}value"


def _resolve(value: str, implicit: tuple[bool, bool]) -> str:
    """The tag of an untagged scalar, as go-yaml v2 resolves it (``resolve.go``,
    ``resolve``): PyYAML's YAML 1.1 resolver, with ``y``/``n`` booleans and without YAML 1.1's
    ``=`` value type (go-yaml reads ``=`` as text)."""
    if implicit[0]:
        if value in _GO_YAML_BOOLS:
            return _BOOL
        for tag, regexp in _IMPLICIT.get(value[:1], ()):
            if regexp.match(value):
                return _STR if tag == _VALUE else str(tag)
    return _STR


class _FastLoader(_Loader):
    """The safe loader with a leaner implicit-tag resolver.

    PyYAML's ``Resolver.resolve`` also walks path resolvers, which safe loading never
    registers; resolving by the first character alone gives the same tags at a fraction of
    the cost (the resolver runs once per node, so it dominates composing).
    """

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return _resolve(value, implicit)
        return _SEQ if kind is SequenceNode else _MAP


def compose_documents(text: str) -> Iterator[Node | None]:
    """Compose each YAML document of ``text`` into a node tree (syntax errors raise
    ``yaml.YAMLError`` with ``problem_mark``)."""
    loader = _FastLoader(text)
    try:
        while loader.check_node():
            yield loader.get_node()
    finally:
        loader.dispose()


_intern = sys.intern

#: A mapping frame waits for a key (``_KEY``), for the value of a merge key (``_MERGE_KEY``)
#: or for a value to leave out (``_SKIP``: its key was not a scalar, when not ``strict``).
_KEY: Any = object()
_MERGE_KEY: Any = object()
_SKIP: Any = object()


def _node_events(root: Node) -> Iterator[Any]:
    """A composed node tree as the parser events that make it (a node reached again is an
    alias), with its resolved tags given explicitly."""
    anchors: dict[int, str] = {}
    todo: list[tuple[Node, bool]] = [(root, False)]
    while todo:
        node, end = todo.pop()
        mark = node.start_mark
        if end:
            yield (MappingEndEvent if isinstance(node, MappingNode) else SequenceEndEvent)(mark)
            continue
        name = anchors.get(id(node))
        if name is not None:
            yield AliasEvent(name, mark)
            continue
        name = anchors[id(node)] = f"n{len(anchors)}"
        if isinstance(node, ScalarNode):
            yield ScalarEvent(name, node.tag, (False, False), node.value, mark, None, node.style)
            continue
        mapping = isinstance(node, MappingNode)
        yield (MappingStartEvent if mapping else SequenceStartEvent)(name, node.tag, False, mark)
        todo.append((node, True))
        children = [c for pair in node.value for c in pair] if mapping else list(node.value)
        todo.extend((child, False) for child in reversed(children))
    yield DocumentEndEvent(None)


class _Frame:
    """A mapping or sequence being built."""

    __slots__ = ("firsts", "index", "key", "key_at", "merges", "obj", "positions")

    def __init__(self, obj: PosMap | PosList, at: int) -> None:
        self.obj: Any = obj
        self.positions = array("q", (at,))  # its own position, then one per key or item
        self.key: Any = _KEY
        self.key_at = 0
        self.index: dict[str, int] | None = None  # key -> its slot, made at a first duplicate
        self.firsts: dict[str, int] | None = None  # key -> line of its first occurrence
        self.merges: list[tuple[Any, int]] | None = None  # merge key values, in order


def _at(mark: Any) -> int:
    return (mark.line << 32) | mark.column  # a column is below 2**32: files are at most 64 MiB


def _error(message: str, at: int) -> YamlInputError:
    return YamlInputError(message, at >> 32, at & 0xFFFFFFFF)


class _Builder:
    """Plain data with positions from a document's events: one pass, no node tree, so memory
    is what the data takes (a composed tree costs hundreds of bytes per scalar, more than a
    hundred times the text of a flow sequence of small numbers)."""

    def __init__(self, strict: bool = True) -> None:
        self.strict = strict
        self.duplicates: list[DuplicateKey] = []

    def document(self, get: Callable[[], Any]) -> Any:
        """The data of one document, from the event after its start to its end (``get``
        gives the next event)."""
        # anchor -> (value, position, the scalar's text and tag, or None for a container)
        anchors: dict[str, tuple[Any, int, str | None, str | None]] = {}
        stack: list[_Frame] = []
        root: Any = None
        while True:
            event = get()
            kind = type(event)
            raw: str | None = None
            tag: str | None = None
            if kind is ScalarEvent:
                at = _at(event.start_mark)
                raw, tag = event.value, event.tag
                if tag is None or tag == "!":
                    tag = _resolve(raw, event.implicit)
                value = self.scalar(tag, raw, event.style, at)
                if event.anchor is not None:
                    self._anchor(anchors, event, (value, at, raw, tag))
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                at = _at(event.start_mark)
                if len(stack) > MAX_DEPTH and self.strict:
                    raise _error(f"nesting deeper than {MAX_DEPTH} levels", at)
                mapping = kind is MappingStartEvent
                tag = event.tag
                if tag is not None and tag != "!" and self.strict:
                    self._check_tag(tag, at, _MAP if mapping else _SEQ)
                obj: PosMap | PosList = PosMap() if mapping else PosList()
                if event.anchor is not None:
                    self._anchor(anchors, event, (obj, at, None, None))
                stack.append(_Frame(obj, at))
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                value, at = frame.obj, frame.positions[0]
                if kind is MappingEndEvent:
                    self._finish_mapping(frame, stack)
                else:
                    value._pos = array("q", frame.positions)  # no room to grow
            elif kind is AliasEvent:
                found = anchors.get(event.anchor)
                if found is None:
                    raise yaml.composer.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                    )
                value, at, raw, tag = found
                if raw is None and len(stack) > MAX_DEPTH and self.strict:
                    raise _error(f"nesting deeper than {MAX_DEPTH} levels", _at(event.start_mark))
            elif kind is DocumentEndEvent:
                return root
            else:
                raise YamlInputError(f"unexpected YAML event {kind.__name__}")
            if not stack:
                root = value
                continue
            parent = stack[-1]
            if type(parent.obj) is PosList:
                parent.obj.append(value)
                parent.positions.append(at)
            elif parent.key is _KEY:
                if raw is None:
                    if self.strict:
                        raise _error("mapping keys must be strings", at)
                    parent.key = _SKIP
                elif tag == _MERGE:
                    parent.key = _MERGE_KEY
                else:
                    if tag not in _PLAIN_KEY_TAGS and self.strict:
                        self._check_tag(str(tag), at, None)
                    parent.key = _intern(raw)  # one string per distinct key, not per document
                    parent.key_at = at
            elif parent.key is _SKIP:
                parent.key = _KEY
            elif parent.key is _MERGE_KEY:
                if parent.merges is None:
                    parent.merges = []
                parent.merges.append((value, at))
                parent.key = _KEY
            else:
                self._put(parent, parent.key, parent.key_at, value, True)
                parent.key = _KEY

    def _put(self, frame: _Frame, key: str, at: int, value: Any, own: bool) -> None:
        """Set ``key``: the last one written wins, in the first one's place."""
        mapping, positions = frame.obj, frame.positions
        if key in mapping:
            index = frame.index
            if index is None:
                index = frame.index = {k: i for i, k in enumerate(mapping, 1)}
            if own:  # a key written twice in the mapping itself (kubectl rejects it)
                if frame.firsts is None:
                    frame.firsts = {}
                first = frame.firsts.setdefault(key, positions[index[key]] >> 32)
                self.duplicates.append(DuplicateKey(key, at >> 32, at & 0xFFFFFFFF, first))
            positions[index[key]] = at
        else:
            if frame.index is not None:  # a key after the first duplicate
                frame.index[key] = len(positions)
            positions.append(at)
        mapping[key] = value

    def _finish_mapping(self, frame: _Frame, open_frames: list[_Frame]) -> None:
        """Apply the merge keys (YAML merge key spec, as PyYAML's ``flatten_mapping``): the
        merged keys come first, a later merge over an earlier one, the first mapping of a
        merged list over the later ones, and the mapping's own keys over all of them."""
        mapping = frame.obj
        if frame.merges is not None:
            own = list(zip(list(mapping), frame.positions[1:], mapping.values(), strict=True))
            mapping.clear()
            del frame.positions[1:]
            frame.index = None
            for value, at in frame.merges:
                sources = reversed(value) if type(value) is PosList else (value,)
                for source in sources:
                    if not self.strict and (
                        type(source) is not PosMap or not hasattr(source, "_pos")
                    ):
                        continue
                    if type(source) is not PosMap:
                        raise _error(
                            "bad merge key: expected a mapping or list of mappings for "
                            f"merging, but found {type(source).__name__}",
                            at,
                        )
                    if any(f.obj is source for f in open_frames) or source is mapping:
                        raise _error("bad merge key: a mapping merges a mapping it is in", at)
                    for key, key_at, item in zip(
                        source, source._pos[1:], source.values(), strict=True
                    ):
                        self._put(frame, key, key_at, item, False)
            for key, key_at, item in own:
                self._put(frame, key, key_at, item, False)
        mapping._pos = array("q", frame.positions)  # no room to grow

    @staticmethod
    def _anchor(
        anchors: dict[str, tuple[Any, int, str | None, str | None]],
        event: Any,
        found: tuple[Any, int, str | None, str | None],
    ) -> None:
        first = anchors.get(event.anchor)
        if first is not None:
            raise yaml.composer.ComposerError(
                f"found duplicate anchor {event.anchor!r}; first occurrence",
                yaml.error.Mark("", 0, first[1] >> 32, first[1] & 0xFFFFFFFF, None, 0),
                "second occurrence",
                event.start_mark,
            )
        anchors[event.anchor] = found

    @staticmethod
    def _check_tag(tag: str, at: int, default: str | None) -> None:
        if tag in _STANDARD or tag == default or tag in (_MAP, _SEQ, "!"):
            return
        raise _error(f"tag {tag} is not allowed (ssrisk constructs nothing from tags)", at)

    def scalar(self, tag: str, value: str, style: str | None, at: int) -> Any:
        if tag == _STR:
            if not style and value[:1] in _NUMBER_START and _GO_YAML_FLOAT.match(value):
                return float(value)  # 1e9, 1.0e9: PyYAML reads text, go-yaml a float
            return value
        if tag == _MERGE:
            return value  # a merge key (as a value, go-yaml reads the text)
        if self.strict:
            self._check_tag(tag, at, None)
        if style:  # quoted or block scalars are strings
            return value
        if tag == f"{_T}null":
            return None
        if tag == f"{_T}bool":
            return value.lower() in ("true", "yes", "on", "y")
        if tag == f"{_T}int":
            return _integer(value)
        if tag == f"{_T}float":
            low = value.lower().replace("_", "")
            if low in _FLOAT_SPECIAL:
                return _FLOAT_SPECIAL[low]
            if low == ".nan":
                return float("nan")
            try:
                return float(low)
            except ValueError:
                return value
        return value


#: go-yaml reads an integer only when it fits in 64 bits (int64, else uint64).
_INT64_MIN = -(2**63)
_UINT64_MAX = 2**64 - 1


def _integer(value: str) -> Any:
    """An integer scalar as go-yaml v2 resolves it (resolve.go, ``resolve``): ``int64`` or
    ``uint64`` when it fits (decimal, ``0x``, ``0b`` or ``0``-octal), else a float when it is
    written like one and is finite, else the text. Never converts more digits than 64 bits
    need, so a scalar of thousands of digits costs nothing (and stays text, as for kubectl)."""
    text = value.replace("_", "")
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if _INT.match(value):
        base, digits = 10, body
    elif body.startswith("0x"):
        base, digits = 16, body[2:]
    elif body.startswith("0b"):
        base, digits = 2, body[2:]
    elif body.startswith("0") and len(body) > 1 and ":" not in body:
        base, digits = 8, body
    else:
        return value  # sexagesimal and other rarities stay text
    significant = digits.lstrip("0") or "0"
    if len(significant) <= 64:  # at most 64 digits in any base here: a fast, bounded int()
        try:
            number = sign * int(significant, base)
        except ValueError:
            return value
        if _INT64_MIN <= number <= _UINT64_MAX:
            return number
    if base == 10 and _GO_YAML_FLOAT.match(text):
        as_float = float(text)  # strconv.ParseFloat: out of range is an error, so text
        return as_float if math.isfinite(as_float) else value
    return value


#: What a plain scalar's resolver gives the C reader for a text it must leave to this one.
_BAIL: Any = object()


def _plain_resolver(strict: bool) -> Callable[[str], Any]:
    """The value of an untagged plain scalar, for the C reader (:mod:`ssrisk._cyaml`): the
    same resolution as :meth:`_Builder.scalar`, or :data:`_BAIL` where this reader would
    raise (a tag Kubernetes does not accept, under ``strict``)."""
    builder = _Builder(strict)

    def plain(raw: str) -> Any:
        try:
            return builder.scalar(_resolve(raw, (True, False)), raw, None, 0)
        except YamlInputError:
            return _BAIL

    return plain


def _compiled_reader() -> Any:
    """:mod:`ssrisk._cyaml` configured for this module, or ``None`` when it was not built
    (no C compiler or libyaml headers at install time) or ``SSRISK_PURE_PYTHON_YAML`` is set
    to anything but ``0`` (to test or compare the pure-Python reader)."""
    import os

    if os.environ.get("SSRISK_PURE_PYTHON_YAML", "") not in ("", "0"):
        return None
    try:
        from . import _cyaml
    except ImportError:
        return None
    _cyaml.configure(PosMap, PosList, array, _BAIL)
    return _cyaml


_COMPILED: Any = _compiled_reader()
_PLAIN = {True: _plain_resolver(True), False: _plain_resolver(False)}


def load_documents(text: str, strict: bool = True) -> Iterator[tuple[Any, list[DuplicateKey]]]:
    """Each YAML document of ``text`` as plain data with positions, and the duplicate keys
    found in it, built from the parser's events (no node tree: memory is what the data
    takes).

    Args:
        text: a YAML stream.
        strict: refuse tags Kubernetes does not accept (``False``: keep their text, to find
            what a document is before deciding to read it).

    Raises:
        yaml.YAMLError: a syntax error, an undefined alias or an anchor defined twice (with
            ``problem_mark``).
        YamlInputError: nesting deeper than :data:`MAX_DEPTH`, a mapping key that is not a
            scalar, a tag Kubernetes does not accept, or a bad merge key.

    The C reader (:mod:`ssrisk._cyaml`, when built) reads the common case, about seven times
    faster; any text holding an anchor, alias, tag, merge key, duplicate key, non-scalar key,
    deep nesting or syntax error is read again here, so both give the same result.
    """
    if _COMPILED is not None:
        documents = _COMPILED.load(text, _PLAIN[strict])
        if documents is not None:
            for data in documents:
                yield data, []
            return
    loader = _FastLoader(text)
    try:
        loader.get_event()  # the stream's start
        while not loader.check_event(StreamEndEvent):
            loader.get_event()  # the document's start
            builder = _Builder(strict)
            try:
                data = builder.document(loader.get_event)
            except YamlInputError:
                # a syntax error later in the document is reported first, as when the
                # whole document was parsed before it was built
                while not isinstance(loader.get_event(), DocumentEndEvent):
                    pass
                raise
            yield data, builder.duplicates
    finally:
        loader.dispose()


def build(node: Node | None) -> tuple[Any, list[DuplicateKey]]:
    """Plain data with positions for a composed document, and the duplicate keys found.

    Raises:
        YamlInputError: as :func:`load_documents`.
    """
    if node is None:
        return None, []
    builder = _Builder()
    return builder.document(_node_events(node).__next__), builder.duplicates
