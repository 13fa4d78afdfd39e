"""The pure-Python reader behind :func:`ssrisk.yamlpos.load_documents`: positioned data from
the events of PyYAML's parser (the libyaml C parser when available), one pass and no node
tree.

It reads every text the compiled reader (:mod:`ssrisk._cyaml`) leaves to Python (an anchor,
alias, tag, merge key, duplicate key, non-scalar key, deep nesting or syntax error) and every
text where that reader was not built; it also composes node trees for the configuration and
kustomize readers, which need comments' neighbours. Imported only then: PyYAML's import is
about a tenth of a one-file check.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterator
from typing import Any

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

from .yamlpos import (
    _MAP,
    _MERGE,
    _PLAIN_KEY_TAGS,
    _SEQ,
    _STR,
    MAX_DEPTH,
    DuplicateKey,
    PosList,
    PosMap,
    YamlInputError,
    _check_tag,
    _error,
    _resolve,
    _scalar,
    _tagged_scalar,
)

try:
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - wheels ship libyaml
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


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
    alias), with its resolved tags given, marked resolved (implicit ``(True, True)``)."""
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
            # (implicit (True, True): a tag the composer resolved, not one written: see
            # _Builder.document)
            yield ScalarEvent(name, node.tag, (True, True), node.value, mark, None, node.style)
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
        #: merge key values, in order, with how many own keys were written before each
        self.merges: list[tuple[Any, int, int]] | None = None


def _at(mark: Any) -> int:
    return (mark.line << 32) | mark.column  # a column is below 2**32: files are at most 64 MiB


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
        building: set[int] = set()  # ids of the mappings and sequences not ended yet
        while True:
            event = get()
            kind = type(event)
            raw: str | None = None
            tag: str | None = None
            if kind is ScalarEvent:
                at = _at(event.start_mark)
                raw = event.value
                value, tag = self._scalar_of(event, at)
                if event.anchor is not None:
                    self._anchor(anchors, event, (value, at, raw, tag))
            elif kind is MappingStartEvent or kind is SequenceStartEvent:
                at = _at(event.start_mark)
                if len(stack) > MAX_DEPTH and self.strict:
                    raise _error(f"nesting deeper than {MAX_DEPTH} levels", at)
                mapping = kind is MappingStartEvent
                tag = event.tag
                if tag is not None and tag != "!" and self.strict:
                    _check_tag(tag, at, _MAP if mapping else _SEQ)
                obj: PosMap | PosList = PosMap() if mapping else PosList()
                if event.anchor is not None:
                    self._anchor(anchors, event, (obj, at, None, None))
                stack.append(_Frame(obj, at))
                building.add(id(obj))
                continue
            elif kind is MappingEndEvent or kind is SequenceEndEvent:
                frame = stack.pop()
                building.discard(id(frame.obj))
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
                if raw is None and self.strict:
                    if id(value) in building:
                        # go-yaml v2 (decode.go, alias): "anchor 't' value contains itself";
                        # said at the alias, not as a nesting limit at the object's start
                        raise _error(
                            "an anchor's value contains itself (a recursive YAML alias, "
                            "which kubectl refuses)",
                            _at(event.start_mark),
                        )
                    if len(stack) > MAX_DEPTH:
                        raise _error(
                            f"nesting deeper than {MAX_DEPTH} levels", _at(event.start_mark)
                        )
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
                        _check_tag(str(tag), at, None)
                    parent.key = _intern(raw)  # one string per distinct key, not per document
                    parent.key_at = at
            elif parent.key is _SKIP:
                parent.key = _KEY
            elif parent.key is _MERGE_KEY:
                if parent.merges is None:
                    parent.merges = []
                parent.merges.append((value, at, len(parent.obj)))  # (own keys before it)
                parent.key = _KEY
            else:
                self._put(parent, parent.key, parent.key_at, value, True)
                parent.key = _KEY

    def _scalar_of(self, event: Any, at: int) -> tuple[Any, str]:
        """The value and resolved tag of a scalar event at ``at``, as go-yaml v2 reads it."""
        raw, tag = event.value, event.tag
        if tag == "!":  # the non-specific tag: text for go-yaml (! 3 is "3")
            return raw, _STR
        if tag is None:
            tag = _resolve(raw, event.implicit)
            return _scalar(tag, raw, event.style, at, self.strict), tag
        if event.implicit == (True, True):  # resolved by a composer (build())
            return _scalar(tag, raw, event.style, at, self.strict), tag
        # a tag written in the text (!!str 3)
        return _tagged_scalar(tag, raw, event.style, at, self.strict), tag

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
        """Apply the merge keys as go-yaml v2 does (decode.go, ``mapping`` and ``merge``):
        the keys in the order written, a merge setting its keys over those before it and the
        keys after it over its own, the first mapping of a merged list over the later ones.
        (The YAML merge key spec, and PyYAML, put the mapping's own keys over every merge:
        with ``replicas: 3`` before ``<<: {replicas: 1}`` kubectl sends 1.)"""
        mapping = frame.obj
        if frame.merges is not None:
            own = list(zip(list(mapping), frame.positions[1:], mapping.values(), strict=True))
            mapping.clear()
            del frame.positions[1:]
            frame.index = None
            done = 0  # own keys set so far
            for value, at, before in frame.merges:
                for key, key_at, item in own[done:before]:
                    self._put(frame, key, key_at, item, False)
                done = max(done, before)
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
            for key, key_at, item in own[done:]:
                self._put(frame, key, key_at, item, False)
        mapping._pos = array("q", frame.positions)  # no room to grow

    @staticmethod
    def _anchor(
        anchors: dict[str, tuple[Any, int, str | None, str | None]],
        event: Any,
        found: tuple[Any, int, str | None, str | None],
    ) -> None:
        # an anchor defined again names the later value from there on, as for go-yaml v2
        # (parser.anchor); PyYAML's composer refuses it, kubectl does not
        anchors[event.anchor] = found


def read_documents(text: str, strict: bool = True) -> Iterator[tuple[Any, list[DuplicateKey]]]:
    """Each YAML document of ``text`` as plain data with positions, and its duplicate keys:
    :func:`ssrisk.yamlpos.load_documents` in Python (the same arguments and errors)."""
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
