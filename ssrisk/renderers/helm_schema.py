"""Chart schemas (``values.schema.json``) that refer only to themselves.

Helm validates values against each chart's ``values.schema.json`` with a JSON Schema
compiler given loaders for ``file://``, ``http(s)://`` and ``urn:`` URLs, and the schema is
added at ``file:///values.schema.json`` (helm pkg/chart/common/util/jsonschema.go,
ValidateAgainstSingleSchema; santhosh-tekuri/jsonschema). Any reference that is not a
fragment of the document therefore resolves to a file or URL: ``{"$ref":
"file:///etc/passwd"}``, ``"../../home/u/.aws/credentials.json"``, ``"other.json"`` (to
``/other.json``), a ``$schema`` that is not a published meta-schema (it is loaded as a
custom meta-schema) and every reference below a ``$id`` (or draft-04 ``id``) that moves the
base URI. The loader opens the file wherever it is (a FIFO blocks it) and Helm's error then
tells whether the file exists, its first byte, and for a JSON file which keys hold which
kinds of value.

So before either renderer runs, every ``values.schema.json`` of the chart's private copy is
read here, the chart's own and its subcharts' (directories under ``charts/`` and packed
``.tgz`` subcharts, nested ones included, read from the archive as Helm reads it), and a
chart is refused at the first schema that holds

* a ``$ref``, ``$dynamicRef`` or ``$recursiveRef`` that is not a fragment (``#...``);
* a ``$id`` or ``id`` that is not a fragment (it changes the base URI);
* a ``$schema`` other than the published meta-schemas, which the compiler has built in
  (``http(s)://json-schema.org/`` ``schema``, ``draft/2020-12/schema``,
  ``draft/2019-09/schema``, ``draft-07/schema``, ``draft-06/schema``,
  ``draft-04/schema``, each with or without an empty fragment).

Every object of the schema is a schema here except instance data: the values of
``default``, ``examples``, ``const`` and ``enum`` in a schema position (not a property
named so). Instance data is checked too where a fragment (``#/default/...``) points into
it, as the compiler compiles whatever a JSON pointer reaches. A schema this module cannot
read the way Helm's JSON decoder does (not JSON, nested deeper than Python's parser goes, an
archive it cannot read or that inflates past :data:`MAX_ARCHIVE_BYTES`) is refused as well:
it could hold what it cannot see. Schemas that only refer inside themselves (``#/$defs/x``,
``#/definitions/x``, anchors) are left to Helm, which validates values as before.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import posixpath
import re
import tarfile
import zlib
from collections.abc import Iterator
from typing import IO, Any
from urllib.parse import unquote

from .common import RenderError, display_path

SCHEMA_FILE = "values.schema.json"
#: Bytes a packed subchart may inflate to (Helm's own limit, helm pkg/chart/loader/archive,
#: MaxDecompressedChartSize), and all packed subcharts of one chart together.
MAX_ARCHIVE_BYTES = 100 * 1024 * 1024
#: Packed subcharts inside packed subcharts, at most.
MAX_ARCHIVE_DEPTH = 8
#: Characters of a refused value quoted in the message.
QUOTE_CHARS = 80

#: Keywords whose value is a reference the compiler resolves (and may load).
REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
#: Keywords whose value sets the base URI of the schema they are in.
ID_KEYWORDS = ("$id", "id")
#: Keywords whose value is instance data, not a schema.
INSTANCE_KEYWORDS = frozenset({"default", "examples", "const", "enum"})
#: Keywords whose value maps names (not keywords) to schemas.
NAME_MAP_KEYWORDS = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)
#: The meta-schemas the compiler knows without loading them (santhosh-tekuri/jsonschema,
#: draft.go, draftFromURL: ``http://`` or ``https://``, no fragment but an empty one).
_META_SCHEMA = re.compile(
    r"https?://json-schema\.org/(?:schema|draft/2020-12/schema|draft/2019-09/schema"
    r"|draft-07/schema|draft-06/schema|draft-04/schema)#?"
)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_BOM = b"\xef\xbb\xbf"


class _Object(dict[str, Any]):
    """A JSON object (the last of equal keys wins, as in Go); ``shadowed`` keeps the values
    of the earlier ones, which are checked too."""

    shadowed: list[tuple[str, Any]]


class _Number:
    """A JSON number, kept as text (never a reference, never converted)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _go_string(text: str) -> str:
    # Go's decoder writes a lone surrogate escape (\ud800) as U+FFFD; Python keeps it.
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object()
    obj.shadowed = []
    for key, value in pairs:
        key = _go_string(key)
        if isinstance(value, str):
            value = _go_string(value)
        if key in obj:
            obj.shadowed.append((key, obj[key]))
        obj[key] = value
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_schema(data: str | bytes, name: str) -> Any:
    """The JSON document ``data`` (bytes as UTF-8, a leading byte order mark dropped as Helm
    drops it), objects as :class:`_Object`, numbers as :class:`_Number`. ``name`` starts
    each message (``""``: none, the error is reported at the schema's file).

    Raises:
        RenderError: not JSON (at the position Python's parser names), or nested too deeply.
    """
    if isinstance(data, bytes):
        data = data.removeprefix(_BOM).decode("utf-8", "replace")
    else:
        data = data.removeprefix("\ufeff")
    try:
        return json.loads(
            data,
            object_pairs_hook=_object,
            parse_int=_Number,
            parse_float=_Number,
            parse_constant=_no_constant,
        )
    except RecursionError:
        raise RenderError(
            f"{_named(name)}the schema is nested too deeply to be checked; not rendered"
        ) from None
    except ValueError as exc:
        raise RenderError(f"{_named(name)}not valid JSON ({exc}); not rendered") from None


def _named(name: str) -> str:
    return f"{name}: " if name else ""


def _pointer(tokens: tuple[str, ...]) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens) or "(the root)"


def _refusal(name: str, keyword: str, tokens: tuple[str, ...], value: str, why: str) -> RenderError:
    from ..reporters.escape import snippet

    return RenderError(
        f"{_named(name)}{keyword} at {_pointer(tokens)} {why}: "
        f"{snippet(json.dumps(value), QUOTE_CHARS)}"
        "; Helm would open it (a file or URL outside the chart), so the chart is not "
        "rendered; a schema may refer only to itself ('#...')"
    )


def _check_keywords(obj: _Object, tokens: tuple[str, ...], name: str) -> None:
    for keyword in REFERENCE_KEYWORDS:
        value = obj.get(keyword)
        if isinstance(value, str) and not value.startswith("#"):
            raise _refusal(name, keyword, (*tokens, keyword), value, "is not a fragment")
    for keyword in ID_KEYWORDS:
        value = obj.get(keyword)
        if isinstance(value, str) and not value.startswith("#"):
            raise _refusal(name, keyword, (*tokens, keyword), value, "moves the base URI")
    value = obj.get("$schema")
    if isinstance(value, str) and not _META_SCHEMA.fullmatch(value):
        raise _refusal(
            name, "$schema", (*tokens, "$schema"), value, "is not a published meta-schema"
        )


def _resolve(doc: Any, fragment: str) -> Iterator[tuple[Any, tuple[str, ...]]]:
    """What the JSON pointer ``fragment`` (without ``#``) reaches in ``doc``, read both
    percent-decoded and as written (so whichever the compiler does is covered)."""
    seen: set[str] = set()
    for text in (unquote(fragment), fragment):
        if text in seen or not text.startswith("/"):
            continue
        seen.add(text)
        node: Any = doc
        tokens: tuple[str, ...] = ()
        for raw in text[1:].split("/"):
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict):
                if token not in node:
                    break
                node = node[token]
            elif isinstance(node, list):
                try:
                    index = int(token)
                except ValueError:
                    break
                if not 0 <= index < len(node):
                    break
                node = node[index]
            else:
                break
            tokens = (*tokens, token)
        else:
            yield node, tokens


def check_schema(doc: Any, name: str) -> None:
    """Refuse ``doc`` (a parsed schema, :func:`parse_schema`) if it refers outside itself
    (see the module); ``name`` starts the message as for :func:`parse_schema`.

    Raises:
        RenderError: naming the keyword, its JSON pointer and (shortened, escaped) its value.
    """
    walked: set[int] = set()
    pending: list[tuple[Any, tuple[str, ...]]] = [(doc, ())]
    fragments: list[str] = []
    while pending or fragments:
        if not pending:  # what the fragments reach that the walk left out (instance data)
            pending.extend(_resolve(doc, fragments.pop()))
            continue
        node, tokens = pending.pop()
        if not isinstance(node, (dict, list)) or id(node) in walked:
            continue
        walked.add(id(node))
        if isinstance(node, list):
            pending.extend((item, (*tokens, str(i))) for i, item in enumerate(node))
            continue
        assert isinstance(node, _Object)
        _check_keywords(node, tokens, name)
        for keyword in REFERENCE_KEYWORDS:
            value = node.get(keyword)
            if isinstance(value, str) and value.startswith("#"):
                fragments.append(value[1:])
        for key, value in [*node.items(), *node.shadowed]:
            if key in INSTANCE_KEYWORDS:
                continue  # instance data; checked above where a fragment points into it
            pending.append((value, (*tokens, key)))
            if key in NAME_MAP_KEYWORDS and isinstance(value, _Object):
                # names, not keywords: a property called "default" is a schema too
                named = [*value.items(), *value.shadowed]
                pending.extend((v, (*tokens, key, k)) for k, v in named)


def check_schema_text(data: str | bytes, name: str) -> None:
    """Parse and check one schema file's text (:func:`parse_schema`, :func:`check_schema`).

    Raises:
        RenderError: it cannot be read as JSON or it refers outside itself.
    """
    check_schema(parse_schema(data, name), name)


class _Budget:
    """Bytes all packed subcharts of one chart may still inflate to."""

    def __init__(self, left: int) -> None:
        self.left = left


class _Inflated(io.RawIOBase):
    """A gzip stream's inflated bytes, at most the budget's (then :class:`_TooLarge`)."""

    def __init__(self, raw: IO[bytes], budget: _Budget) -> None:
        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self._budget = budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = min(len(buffer), self._budget.left + 1)
        chunk = self._gz.read(want)
        self._budget.left -= len(chunk)
        if self._budget.left < 0:
            raise _TooLarge
        buffer[: len(chunk)] = chunk
        return len(chunk)


class _TooLarge(Exception):
    pass


def _helm_name(name: str) -> str:
    """An archive member's path inside its chart, as Helm's loader makes it: the first
    component dropped (``\\`` the separator when the name holds one), then cleaned."""
    delimiter = "\\" if "\\" in name else "/"
    rest = "/".join(name.split(delimiter)[1:])
    return posixpath.normpath(rest) if rest else "."


def _archive_schemas(
    data: IO[bytes], where: str, budget: _Budget, depth: int
) -> Iterator[tuple[str, bytes]]:
    """``(member path, text)`` of every ``values.schema.json`` in the gzipped chart archive
    ``data`` and in the packed subcharts it holds (their paths joined with ``!``)."""
    raw = io.BufferedReader(_Inflated(data, budget)).read()
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tf:
        yield from _members_schemas(tf, where, budget, depth)
        # Python's reader stops at the first header it cannot read (a checksum field that
        # starts with NUL) as if the archive ended there; Go's, Helm's, reads on: whatever
        # follows would be loaded unchecked, so nothing but the end blocks' zeros may
        if raw[tf.offset :].strip(b"\0"):
            raise RenderError(
                f"{where or 'the archive'}: holds data past byte {tf.offset} that cannot be "
                "read as a tar header; its schemas cannot be checked; not rendered"
            )


def _members_schemas(
    tf: tarfile.TarFile, where: str, budget: _Budget, depth: int
) -> Iterator[tuple[str, bytes]]:
    """:func:`_archive_schemas` of the members of an open archive."""
    for member in tf:
        if not (member.isreg() or member.type not in tarfile.SUPPORTED_TYPES):
            continue  # Helm reads no data for links, devices and directories
        names = {_helm_name(member.name), member.name.replace("\\", "/")}
        bases = {posixpath.basename(n) for n in names}
        packed = any(
            n.lower().endswith(".tgz") and posixpath.basename(posixpath.dirname(n)) == "charts"
            for n in names
        )
        if SCHEMA_FILE not in bases and not packed:
            continue
        fh = tf.extractfile(member)
        body = fh.read() if fh is not None else b""
        inner = f"{where}{member.name}"
        if SCHEMA_FILE in bases:
            yield inner, body
        if packed:
            if depth >= MAX_ARCHIVE_DEPTH:
                raise RenderError(
                    f"{inner}: packed subcharts nested more than {MAX_ARCHIVE_DEPTH} "
                    "deep; not rendered"
                )
            yield from _archive_schemas(io.BytesIO(body), inner + "!", budget, depth + 1)


def _packed_subchart(rel: str) -> bool:
    parts = rel.split(os.sep)
    return rel.lower().endswith(".tgz") and len(parts) >= 2 and parts[-2] == "charts"


def check_chart_schemas(copy: str, chart_dir: str) -> None:
    """Check every schema of the chart copied to ``copy`` (see the module) before it is
    rendered; files are shown as the same paths under ``chart_dir``.

    Raises:
        RenderError: ``at`` the schema file (a packed subchart's archive) that refers
            outside itself or cannot be read; the message names the keyword, its JSON
            pointer and, for an archive, the member.
    """
    budget = _Budget(MAX_ARCHIVE_BYTES)
    for here, dirs, names in os.walk(copy):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(here, name)
            rel = os.path.relpath(path, copy)
            shown = display_path(os.path.join(os.path.abspath(chart_dir), rel), chart_dir)
            try:
                if name == SCHEMA_FILE:
                    with open(path, "rb") as fh:
                        check_schema_text(fh.read(), "")  # the error is at the file
                elif _packed_subchart(rel):
                    with open(path, "rb") as fh:
                        for inner, text in _archive_schemas(fh, "", budget, 1):
                            check_schema_text(text, f"{inner} in this packed subchart")
            except RenderError as exc:
                raise RenderError(str(exc), (shown, None, None)) from None
            except _TooLarge:
                raise RenderError(
                    f"packed subcharts inflate to more than {MAX_ARCHIVE_BYTES} "
                    "bytes; their schemas cannot be checked; not rendered",
                    (shown, None, None),
                ) from None
            except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:
                raise RenderError(
                    f"cannot be read as a packed chart ({exc}); its schemas cannot "
                    "be checked; not rendered",
                    (shown, None, None),
                ) from None
