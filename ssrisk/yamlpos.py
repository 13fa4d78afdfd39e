"""YAML documents as plain Python data that remembers where every node was written.

Built on PyYAML's composer (the libyaml C parser when available): composing is the practical
floor for reading YAML in Python, while a round-trip loader costs 20–40 times more. The
result is made of :class:`PosMap` and :class:`PosList` (``dict`` and ``list`` subclasses)
whose ``lc`` attribute says where each node was written: ``lc.line``, ``lc.col``,
``lc.key(k)`` and ``lc.item(i)`` (all 0-based).

Scalars are resolved as Kubernetes' YAML reader (sigs.k8s.io/yaml, YAML 1.1 rules) does:
null, booleans (true/false/yes/no/on/off), integers, floats, everything else a string
(timestamps stay strings). Anchors and aliases share one object and are never copied, so an
alias bomb costs nothing here; merge keys (``<<``) are applied. No tag ever constructs an
arbitrary object: a non-standard tag is an error.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml
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


def _pack(node: Node) -> int:
    m = node.start_mark
    return (m.line << 32) | m.column  # a column is below 2**32: files are at most 64 MiB


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


@dataclass(frozen=True)
class DuplicateKey:
    """A mapping key given twice (0-based position of the second one)."""

    key: str
    line: int
    column: int
    first_line: int


class _FastLoader(_Loader):
    """The safe loader with a leaner implicit-tag resolver.

    PyYAML's ``Resolver.resolve`` also walks path resolvers, which safe loading never
    registers; resolving by the first character alone gives the same tags at a fraction of
    the cost (the resolver runs once per node, so it dominates composing).
    """

    _implicit = yaml.resolver.Resolver.yaml_implicit_resolvers

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                for tag, regexp in self._implicit.get(value[:1], ()):
                    if regexp.match(value):
                        return str(tag)
            return _STR
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


class _Builder:
    def __init__(self) -> None:
        self.memo: dict[int, Any] = {}
        self.duplicates: list[DuplicateKey] = []
        self._merger = yaml.constructor.SafeConstructor()

    def build(self, node: Node, depth: int = 0) -> Any:
        if type(node) is ScalarNode:
            if node.tag == _STR:
                value = node.value
                if not node.style and value[:1] in _NUMBER_START and _GO_YAML_FLOAT.match(value):
                    return float(value)  # 1e9, 1.0e9: PyYAML reads text, go-yaml a float
                return value
            return self.scalar(node)
        if depth > MAX_DEPTH:
            m = node.start_mark
            raise YamlInputError(f"nesting deeper than {MAX_DEPTH} levels", m.line, m.column)
        done = self.memo.get(id(node))
        if done is not None:
            return done
        if isinstance(node, SequenceNode):
            if node.tag != _SEQ:
                self._check_tag(node, _SEQ)
            seq = PosList()
            seq._pos = array("q", [_pack(node), *[_pack(child) for child in node.value]])
            self.memo[id(node)] = seq
            seq.extend([self.build(child, depth + 1) for child in node.value])
            return seq
        if isinstance(node, MappingNode):
            if node.tag != _MAP:
                self._check_tag(node, _MAP)
            mapping = PosMap()
            positions = [_pack(node)]  # then one per key, in the mapping's key order
            index: dict[Any, int] | None = None  # key -> its slot, made at a first duplicate
            self.memo[id(node)] = mapping
            pairs = node.value
            own: set[int] | None = None
            if any(k.tag == _MERGE for k, _ in pairs):
                # a key written here overrides a merged one (YAML merge key spec): not a duplicate
                own = {id(k) for k, _ in pairs if k.tag != _MERGE}
                try:
                    self._merger.flatten_mapping(node)
                except yaml.YAMLError as exc:
                    pm = getattr(exc, "problem_mark", None) or node.start_mark
                    raise YamlInputError(f"bad merge key: {exc}", pm.line, pm.column) from None
                pairs = node.value
            firsts: dict[str, Node] | None = None  # built at the first duplicate
            for key_node, value_node in pairs:
                if type(key_node) is not ScalarNode:
                    km = key_node.start_mark
                    raise YamlInputError("mapping keys must be strings", km.line, km.column)
                if key_node.tag not in _PLAIN_KEY_TAGS:
                    self._check_tag(key_node, None)
                key = _intern(key_node.value)  # one string per distinct key, not per document
                m = key_node.start_mark  # _pack, inlined: this runs for every key
                if key in mapping:  # the last one written wins, in the first one's place
                    if own is None or id(key_node) in own:
                        if firsts is None:
                            firsts = self._first_keys(pairs, own)
                        self._duplicate(firsts, key_node)
                    if index is None:
                        index = {k: i for i, k in enumerate(mapping, 1)}
                    positions[index[key]] = (m.line << 32) | m.column
                else:
                    if index is not None:  # a key after the first duplicate
                        index[key] = len(positions)
                    positions.append((m.line << 32) | m.column)
                mapping[key] = self.build(value_node, depth + 1)
            mapping._pos = array("q", positions)
            return mapping
        m = node.start_mark
        raise YamlInputError(f"unexpected YAML node {type(node).__name__}", m.line, m.column)

    @staticmethod
    def _first_keys(pairs: list[tuple[Node, Node]], own: set[int] | None) -> dict[str, Node]:
        """The first key node of each key written in the mapping itself (a merged key that
        a written one overrides is not a duplicate: YAML merge key spec)."""
        firsts: dict[str, Node] = {}
        for k, _ in pairs:
            if own is None or id(k) in own:
                firsts.setdefault(k.value, k)
        return firsts

    def _duplicate(self, firsts: dict[str, Node], key_node: Node) -> None:
        first = firsts.get(key_node.value)
        if first is None or first is key_node:
            return  # only a merged key was overridden
        m = key_node.start_mark
        self.duplicates.append(
            DuplicateKey(key_node.value, m.line, m.column, first.start_mark.line)
        )

    def _check_tag(self, node: Node, default: str | None) -> None:
        tag = node.tag
        if tag in _STANDARD or tag == default or tag in (f"{_T}map", f"{_T}seq", "!"):
            return
        m = node.start_mark
        raise YamlInputError(
            f"tag {tag} is not allowed (ssrisk constructs nothing from tags)",
            m.line,
            m.column,
        )

    def scalar(self, node: ScalarNode) -> Any:
        self._check_tag(node, None)
        tag, value = node.tag, node.value
        if node.style:  # quoted or block scalars are strings
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


def build(node: Node | None) -> tuple[Any, list[DuplicateKey]]:
    """Plain data with positions for a composed document, and the duplicate keys found.

    Raises:
        YamlInputError: for nesting deeper than :data:`MAX_DEPTH`, non-scalar mapping keys, or
            a tag Kubernetes does not accept.
    """
    if node is None:
        return None, []
    b = _Builder()
    try:
        return b.build(node), b.duplicates
    except RecursionError:
        m = node.start_mark
        raise YamlInputError("nesting too deep to read", m.line, m.column) from None
