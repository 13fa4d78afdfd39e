"""YAML documents as plain Python data that remembers where every node was written.

Built from the events of libyaml's parser (by :mod:`ssrisk._cyaml` where it was built, else
from PyYAML's events in :mod:`ssrisk.yamlevents`), one pass and no node tree
(:func:`load_documents`): a composed node tree costs hundreds of bytes per
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
from functools import cache
from typing import Any

import msgspec

from .embedded_sim.lazyre import lazy

#: Nesting deeper than this is refused (Kubernetes objects are far shallower).
MAX_DEPTH = 200

_T = "tag:yaml.org,2002:"
_STANDARD = {f"{_T}{t}" for t in ("str", "int", "float", "bool", "null", "timestamp", "binary")}
_MERGE = f"{_T}merge"
_STR = f"{_T}str"
_MAP = f"{_T}map"
_SEQ = f"{_T}seq"
_PLAIN_KEY_TAGS = frozenset({_STR, f"{_T}int", f"{_T}bool", f"{_T}null", f"{_T}float"})
_INT = lazy(r"^[-+]?(0|[1-9][0-9_]*)$")
_FLOAT_SPECIAL = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf")}
# go-yaml v2 resolve.go (the reader of sigs.k8s.io/yaml) takes a plain scalar as a float when
# it matches yamlStyleFloat; YAML 1.1 (PyYAML) wants a dot and a signed exponent, so `1e9` is
# text there but 1000000000 for kubectl.
_GO_YAML_FLOAT = lazy(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
# ... and as an integer what Go's strconv.ParseInt(s, 0, 64) takes after go-yaml drops the
# underscores, with prefixes YAML 1.1 lacks: 0o and 0O (octal), 0X and 0B (0x and 0b are
# YAML 1.1's too), so `0o10` is 8 for kubectl and text for PyYAML.
_GO_PREFIXED_INT = lazy(r"^[-+]?0(?:[oO][0-7_]+|X[0-9a-fA-F_]+|B[01_]+)$")
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


@cache
def _implicit() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    """PyYAML's YAML 1.1 implicit resolvers (first character -> ``(tag, pattern)``), imported
    when a plain scalar first needs them (then kept: the pure-Python reader resolves every
    scalar with them); most are read by :func:`_plain_value`'s fast path without importing
    PyYAML."""
    from yaml.resolver import Resolver

    return Resolver.yaml_implicit_resolvers


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
        for tag, regexp in _implicit().get(value[:1], ()):
            if regexp.match(value):
                return _STR if tag == _VALUE else str(tag)
    return _STR


def _error(message: str, at: int) -> YamlInputError:
    return YamlInputError(message, at >> 32, at & 0xFFFFFFFF)


def _check_tag(tag: str, at: int, default: str | None) -> None:
    if tag in _STANDARD or tag == default or tag in (_MAP, _SEQ, "!"):
        return
    raise _error(f"tag {tag} is not allowed (ssrisk constructs nothing from tags)", at)


def _scalar(tag: str, value: str, style: str | None, at: int, strict: bool) -> Any:
    """The value of a scalar of resolved tag ``tag`` (``style``: ``None`` or ``""`` for a
    plain scalar), as go-yaml v2 gives it (resolve.go, ``resolve``).

    Raises:
        YamlInputError: a tag Kubernetes does not accept, under ``strict``.
    """
    if tag == _STR:
        if not style and value[:1] in _NUMBER_START:
            if _GO_YAML_FLOAT.match(value):
                return _finite_or_text(value)  # 1e9, 1.0e9: PyYAML reads text, go-yaml a float
            if _GO_PREFIXED_INT.match(value):
                try:
                    number = int(value.replace("_", ""), 0)  # 0o10: 8
                except ValueError:  # (0o_: no digit)
                    return value
                return number if _INT64_MIN <= number <= _UINT64_MAX else value
        return value
    if tag == _MERGE:
        return value  # a merge key (as a value, go-yaml reads the text)
    if strict:
        _check_tag(tag, at, None)
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
            return _finite_or_text(value, low)
        except ValueError:
            return value
    return value


#: The type each tag go-yaml v2 resolves by content stands for (resolve.go,
#: ``resolvableTag``; ``!!timestamp`` is left to :func:`_scalar`).
_TAG_TYPES: dict[str, str] = {f"{_T}{t}": t for t in ("str", "int", "float", "bool", "null")}


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "float"}.get(type(value), "str")


def _tagged_scalar(tag: str, value: str, style: str | None, at: int, strict: bool) -> Any:
    """The value of a scalar written with the explicit tag ``tag`` (``!!str 3``), as go-yaml
    v2 gives it (resolve.go, ``resolve``): ``!!str`` keeps the text, whatever it looks like
    (``replicas: !!str 3`` is the string "3", which the API server refuses); ``!!int``,
    ``!!float``, ``!!bool`` and ``!!null`` read the text as a plain scalar, quoted or not
    (``!!int "3"`` is 3), a ``!!float`` taking an integer; a text of another type is
    go-yaml's error ("cannot decode !!str `abc` as a !!int"), which kubectl reports.

    Raises:
        YamlInputError: a text of another type than its tag, or a tag Kubernetes does not
            accept, under ``strict``.
    """
    wanted = _TAG_TYPES.get(tag)
    if wanted is None:
        return _scalar(tag, value, style, at, strict)
    if wanted == "str":
        return value
    if "\n" in value or "\r" in value:  # (a block or quoted text: never a number for Go)
        out: Any = value
    else:
        out = _scalar(_resolve(value, (True, False)), value, None, at, strict)
    found = _type_of(out)
    if found == wanted:
        return out
    if wanted == "float" and found == "int":
        return float(out)
    if not strict:
        return out
    from .reporters.escape import snippet

    raise _error(
        f"cannot decode !!{found} `{snippet(value, 40)}` as a !!{wanted} (go-yaml, kubectl's "
        "YAML reader, refuses it)",
        at,
    )


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


#: What :func:`_plain_value` gives for a text its fast path does not decide.
_UNDECIDED: Any = object()
_DIGITS = "0123456789"


def _finite_or_text(raw: str, number: str | None = None) -> Any:
    """``raw`` as a float (read from ``number`` when given, its normalised spelling), or the
    text when it is out of range (``1e400``): Go's ParseFloat refuses it and go-yaml keeps
    the text.

    Raises:
        ValueError: not a float's spelling.
    """
    value = float(raw if number is None else number)
    return raw if math.isinf(value) else value


def _plain_value(raw: str) -> Any:
    """The value of the untagged plain scalar ``raw`` (non-empty, starting with one of
    ``-+.0123456789<=~``) for its common forms, decided without the YAML 1.1 patterns, or
    :data:`_UNDECIDED`: the same value as resolving it in full (``tests/test_plain_scalars.py``
    compares both over the corpus and generated texts).

    - Decimal integers without a leading zero, up to 18 digits: ``int``; a decimal fraction
      (``0.5``): ``float``.
    - Digits followed by a character no YAML 1.1 number or timestamp (PyYAML's resolvers)
      and no go-yaml float can have there: text. After the leading digits only ``_ . : e E
      b B x X o O -`` continue such a pattern (``0x``, ``0b``, ``0o``, ``1_000``, ``1:20``,
      ``1e9``, ``2001-12-14``); after digits, a dot and digits only ``_ e E``. So ``10Gi``,
      ``500m``, ``50%``, ``1.5Gi``, ``0.0.0.0`` and ``2.47.2`` are text.
    - A sign not followed by a digit or a dot (``--flag``, ``-c``): text.
    - ``~``: null; any other text starting ``<`` or ``=``: text (``<<`` as a value and
      ``=`` are text for go-yaml too).
    - A dot not followed by a digit or the start of ``inf``/``nan`` (``./run.sh``): text.
    """
    first = raw[0]
    if first in _DIGITS:
        if raw.isdigit() and raw.isascii():
            if first != "0" and len(raw) <= 18:
                return int(raw)
            return _UNDECIDED if len(raw) > 1 else 0
        rest = raw.lstrip(_DIGITS)  # not empty: raw is not all ASCII digits
        if rest[0] != ".":
            return raw if rest[0] not in "_:eEbBxXoO-" else _UNDECIDED
        fraction = rest[1:]
        after = fraction.lstrip(_DIGITS)
        if not after:
            return _finite_or_text(raw) if fraction else _UNDECIDED
        return raw if after[0] not in "_eE" else _UNDECIDED
    if first in "+-":
        return raw if len(raw) == 1 or raw[1] not in "0123456789." else _UNDECIDED
    if first in "<=":
        return raw
    if first == "~":
        return None if len(raw) == 1 else raw
    if first == ".":
        return raw if len(raw) > 1 and raw[1] not in "0123456789iInN" else _UNDECIDED
    return _UNDECIDED


def _plain_resolver(strict: bool) -> Callable[[str], Any]:
    """The value of an untagged plain scalar, for the C reader (:mod:`ssrisk._cyaml`): the
    same resolution as :func:`_scalar`, or :data:`_BAIL` where this reader would raise (a tag
    Kubernetes does not accept, under ``strict``)."""

    def plain(raw: str) -> Any:
        value = _plain_value(raw)
        if value is not _UNDECIDED:
            return value
        try:
            return _scalar(_resolve(raw, (True, False)), raw, None, 0, strict)
        except YamlInputError:
            return _BAIL

    return plain


def is_yaml_error(exc: BaseException) -> bool:
    """Whether ``exc`` is PyYAML's ``yaml.YAMLError`` (a syntax error, an undefined alias or
    another of PyYAML's errors from :func:`load_documents`), without importing PyYAML: when it was
    never imported, no such error was raised."""
    yaml = sys.modules.get("yaml")
    return yaml is not None and isinstance(exc, yaml.YAMLError)


def _compiled_reader() -> Any:
    """:mod:`ssrisk._cyaml` configured for this module, or ``None`` when it was not built
    (no C compiler or libyaml headers at install time) or ``SSRISK_PURE_PYTHON_YAML`` is on
    (:func:`ssrisk.envflags.env_flag`: to test or compare the pure-Python reader)."""
    from .envflags import env_flag

    if env_flag("SSRISK_PURE_PYTHON_YAML"):
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
    from .yamlevents import read_documents

    yield from read_documents(text, strict)
