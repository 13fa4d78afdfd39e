"""Schema validation of loaded objects, the way the API server would reject them.

Every object of a modelled kind (StatefulSet, Service, PodDisruptionBudget, StorageClass,
PersistentVolume(Claim), Namespace) is checked once, before any rule sees it:

1. It is converted to the JSON value the API server would receive (:func:`to_json_value`):
   ``kubectl`` turns YAML into JSON with ``sigs.k8s.io/yaml`` (``YAMLToJSON``), so mapping keys
   become strings, dates become RFC 3339 strings and a float with no fractional part is
   written as an integer (Go's ``encoding/json`` prints ``1e9`` as ``1000000000``). The walk is
   bounded: YAML aliases are not copied by the loader, so a "billion laughs" document is
   small in memory but enormous when expanded, and the walk stops at :data:`MAX_NODES` values
   or :data:`MAX_DEPTH` levels.
2. The value is validated with ``jsonschema-rs`` (chosen by measurement: about 0.0015 ms per
   StatefulSet against about 0.34 ms with the pure-Python ``jsonschema`` on the same
   compiled schema, see docs/security.md "Limits and hostile input") against the strict JSON schemas
   of the selected Kubernetes minor version shipped by the ``kubernetes-validate`` package
   (generated from the API server's OpenAPI document, with ``additionalProperties: false``).
   Wrong types, missing required fields and unknown fields are reported; unknown fields
   because ``kubectl`` asks for strict server-side field validation by default
   (KEP-2885, GA in 1.27).
3. The range and enum checks the API server makes in Go rather than in the schema are
   applied to StatefulSets (k8s: pkg/apis/apps/validation/validation.go,
   ``ValidateStatefulSetSpec`` and ``validateRollingUpdateStatefulSet``).

An object with a problem is reported as an :class:`~ssrisk.model.InputError` at the position
of the offending field and is not checked further: the API server would not accept it.
"""

from __future__ import annotations

import datetime
import functools
import importlib.util
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from . import schemacache
from .embedded_sim.lazyre import lazy
from .model import InputError, K8sObject, Notice

#: Most values (mappings, lists and scalars) one object may expand to through YAML aliases.
MAX_NODES = 200_000
#: Deepest nesting of mappings and lists in one object (the StatefulSet schema itself is about
#: 20 levels deep; Go's encoding/json, which the API server decodes with, stops at 10000).
MAX_DEPTH = 100
#: At most this many schema problems are listed per object.
MAX_PROBLEMS_PER_OBJECT = 10

_SCHEMA_PACKAGE = "kubernetes_validate"
_SCHEMA_ID = "https://kubernetes.io/api/_definitions.json"
# Go's strconv.FormatFloat(f, 'f'/'e') switch in encoding/json: below 1e21 a whole float is
# printed without an exponent, so it decodes into an integer field.
_GO_JSON_PLAIN_FLOAT_LIMIT = 1e21
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


#: Most values YAML aliases and merge keys may add, over all the objects of one file: a value
#: reached a second time (through ``*alias`` or ``<<: *alias``, in one object or in several
#: objects of one document) counts once per time it is reached again. go-yaml, the reader of
#: kubectl (gopkg.in/yaml.v2 decode.go, ``allowedAliasRatio``), rejects a document with
#: "excessive aliasing" past about 400,000 decoded values that are mostly alias expansions;
#: ssrisk counts per file, so that a file of many such documents is bounded as well.
MAX_ALIAS_VALUES = 400_000


class ObjectTooComplex(ValueError):
    """An object that expands past :data:`MAX_NODES` values or :data:`MAX_DEPTH` levels, or
    past what is left of its file's :data:`MAX_ALIAS_VALUES`."""


class Repeats:
    """What YAML aliases may still add in one file: the containers (mappings and lists)
    already reached in the current document, and the values left of the file's budget.

    Validation walks every object of a document, and the objects of a ``kind: List`` may
    share one aliased spec (``<<: *base``): without this, each of them would expand it again,
    so that a small file costs its item count times the alias limit."""

    __slots__ = ("document", "left", "limit", "seen")

    def __init__(self, limit: int = MAX_ALIAS_VALUES) -> None:
        self.limit = self.left = limit
        self.seen: set[int] = set()
        self.document: object = None

    def enter(self, document: object) -> None:
        """Start counting the containers of ``document`` (aliases never cross documents)."""
        if document != self.document:
            self.document = document
            self.seen = set()


class NotRepresentable(ValueError):
    """A value with no JSON form (``.nan``, ``.inf``), which the API server cannot receive."""

    def __init__(self, path: Sequence[str | int], message: str) -> None:
        super().__init__(message)
        self.path = tuple(path)


# --- YAML value → the JSON the API server receives ----------------------------------------


def to_json_value(
    data: Any,
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
    fixups: list[tuple[Any, Any, Any]] | None = None,
    repeats: Repeats | None = None,
) -> Any:
    """Convert a loaded YAML value into the JSON value ``kubectl`` would send.

    Iterative (no recursion, so no ``RecursionError``), and shared sub-trees (YAML aliases)
    are expanded the way a JSON encoder would expand them, within the budget.

    Args:
        data: the loaded value (:mod:`ssrisk.yamlpos` data or plain Python).
        max_nodes: most values to produce.
        max_depth: deepest nesting allowed.
        fixups: when given, receives ``(container, key, value)`` for every scalar of ``data``
            whose JSON form is a different Python value (a whole float becomes an ``int``,
            an anchored boolean a ``bool``), so the caller can store the form the API
            server would.
        repeats: when given, every value reached through a container that this document
            already reached (here or in an earlier object) is counted against
            ``repeats.left``, shared by the objects of one file (:class:`Repeats`).

    Raises:
        ObjectTooComplex: more than ``max_nodes`` values or ``max_depth`` levels (an alias
            bomb, a recursive alias, or absurd nesting), or no ``repeats.left`` for a value
            reached again.
        NotRepresentable: a NaN or infinite float (``encoding/json`` refuses them).
    """
    budget = max_nodes
    root: list[Any] = [None]
    seen = repeats.seen if repeats is not None else None
    # work items: (container to fill, its key, source container, its key, value, depth, path,
    # reached through a container reached before)
    stack: list[tuple[Any, Any, Any, Any, Any, int, tuple[str | int, ...], bool]] = [
        (root, 0, None, None, data, 0, (), False)
    ]
    while stack:
        parent, key, src, src_key, value, depth, path, again = stack.pop()
        budget -= 1
        if budget < 0:
            raise ObjectTooComplex(
                f"expands to more than {max_nodes} values (YAML aliases or a huge document)"
            )
        if depth > max_depth:
            raise ObjectTooComplex(
                f"nested more than {max_depth} levels deep (or a recursive YAML alias)"
            )
        if seen is not None and repeats is not None:
            if not again and isinstance(value, Mapping | list | tuple):
                again = id(value) in seen
                if not again:
                    seen.add(id(value))
            if again:
                repeats.left -= 1
                if repeats.left < 0:
                    raise ObjectTooComplex(
                        f"YAML aliases and merge keys in this file expand to more than "
                        f"{repeats.limit} values in all (kubectl's YAML reader rejects "
                        "a document with that much aliasing)"
                    )
        if isinstance(value, Mapping | list | tuple) and len(value) > budget:
            # each item costs one value: refused before a work item is made for any of them
            raise ObjectTooComplex(
                f"expands to more than {max_nodes} values (YAML aliases or a huge document)"
            )
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            parent[key] = out
            for k, v in value.items():
                name = _json_key(k)
                out[name] = None
                stack.append((out, name, value, k, v, depth + 1, (*path, name), again))
        elif isinstance(value, list | tuple):
            seq: list[Any] = [None] * len(value)
            parent[key] = seq
            for i, v in enumerate(value):
                stack.append((seq, i, value, i, v, depth + 1, (*path, i), again))
        else:
            converted = _json_scalar(value, path)
            parent[key] = converted
            if (
                fixups is not None
                and src is not None
                and isinstance(converted, bool | int)
                and type(value) is not type(converted)
                and (isinstance(value, float) or type(value).__name__ == "ScalarBoolean")
            ):
                fixups.append((src, src_key, converted))
    return root[0]


def is_plain_json(
    data: Any,
    max_nodes: int = MAX_NODES,
    max_depth: int = MAX_DEPTH,
    repeats: Repeats | None = None,
) -> bool:
    """Whether ``data`` already is the JSON value :func:`to_json_value` would make: only
    mappings with string keys, lists, strings, integers, booleans and nulls, no floats (they
    may need converting), no mapping or list reached twice (a YAML alias), within the budget.
    With ``repeats``, a container an earlier object of the document reached counts as reached
    twice too; when the answer is yes, this object's containers are added to ``repeats.seen``.

    About twice as fast as copying, and true of nearly every manifest, so validation then
    reads the loaded data itself. The compiled helper (``ssrisk._cyaml.plain_json``, when
    built) walks the same way, about ten times faster.
    """
    from .yamlpos import _COMPILED

    if _COMPILED is not None:
        found = _COMPILED.plain_json(
            data, max_nodes, max_depth, repeats.seen if repeats is not None else None
        )
        if found is None:
            return False
        if repeats is not None:
            repeats.seen |= found
        return True
    stack: list[tuple[Any, int]] = [(data, 0)]
    seen: set[int] = set()
    before = repeats.seen if repeats is not None else seen
    budget = max_nodes
    while stack:
        value, depth = stack.pop()
        budget -= 1
        kind = type(value)
        if kind is str or kind is int or kind is bool or value is None:
            continue
        if budget < 0 or depth >= max_depth or id(value) in seen or id(value) in before:
            return False
        if isinstance(value, dict | list) and len(value) > budget:
            return False  # more items than values left: no work item is made for them
        seen.add(id(value))
        if isinstance(value, dict):
            for key, item in value.items():
                if type(key) is not str:
                    return False
                stack.append((item, depth + 1))
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        else:
            return False
    if budget < 0:
        return False
    if repeats is not None:
        repeats.seen |= seen
    return True


def _json_key(key: Any) -> str:
    # sigs.k8s.io/yaml convertToJSONableObject: non-string keys are formatted as strings.
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool) or type(key).__name__ == "ScalarBoolean":
        return "true" if key else "false"
    return str(key)


def _json_scalar(value: Any, path: Sequence[str | int]) -> Any:
    if value is None or isinstance(value, str):
        return str(value) if value is not None else None
    if isinstance(value, bool) or type(value).__name__ == "ScalarBoolean":
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise NotRepresentable(path, f"{value!r} has no JSON form")
        if value.is_integer() and abs(value) < _GO_JSON_PLAIN_FLOAT_LIMIT:
            return int(value)
        return float(value)
    if isinstance(value, datetime.datetime | datetime.date):
        # go-yaml resolves timestamps; encoding/json writes time.Time as RFC 3339.
        return value.isoformat()
    return str(value)


# --- the schemas ----------------------------------------------------------------------------


@functools.cache
def schema_root() -> Path:
    """The folder of JSON schemas shipped by ``kubernetes-validate`` (not imported, only found).

    Raises:
        RuntimeError: when the package is not installed (it is a dependency of ssrisk).
    """
    spec = importlib.util.find_spec(_SCHEMA_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the kubernetes-validate package (Kubernetes JSON schemas) is not installed"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "kubernetes-json-schema"


@functools.cache
def schema_minor(kube_version: str) -> int:
    """The minor version whose schemas are used for ``kube_version`` (``"1.NN[.P]"``).

    The newest shipped minor that is not newer than the requested one.

    Raises:
        ValueError: when no shipped schema is that old.
    """
    wanted = int(kube_version.split(".")[1])
    shipped = sorted(
        int(m.group(1))
        for p in schema_root().iterdir()
        if (m := re.fullmatch(r"v1\.(\d+)\.0-local-strict", p.name))
    )
    usable = [m for m in shipped if m <= wanted]
    if not usable:
        raise ValueError(f"no Kubernetes schema for {kube_version} (oldest: 1.{shipped[0]})")
    return usable[-1]


def _schema_hook(node: dict[str, Any]) -> dict[str, Any]:
    fmt = node.get("format")
    if type(fmt) is str and fmt in _INT_RANGES and "minimum" not in node:
        # the Go field type bounds the value: a larger number fails to decode
        node["minimum"], node["maximum"] = _INT_RANGES[fmt]
    one_of = node.get("oneOf")
    if one_of == [{"type": ["string", "null"]}, {"type": ["integer", "null"]}]:
        # IntOrString: null matches both branches, which fails oneOf; for Kubernetes null
        # is simply "unset" (k8s.io/apimachinery/pkg/util/intstr IntOrString.UnmarshalJSON).
        del node["oneOf"]
        node["type"] = ["string", "integer", "null"]
        # its integer is an int32 (IntOrString.IntVal): a larger one fails to decode, and a
        # whole number of 1e21 or more (which encoding/json writes with an exponent) too
        node["minimum"], node["maximum"] = _INT_RANGES["int32"]
    return node


class _Schemas:
    """Compiled validators of one Kubernetes minor version, built on first use, and the
    verdicts of their earlier runs (:class:`ssrisk.schemacache.Verdicts`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._registry: Any = None
        self._definitions: dict[str, Any] = {}
        self._validators: dict[tuple[str, str], Any] = {}
        self._verdicts: dict[tuple[str, str, tuple[tuple[str, bool], ...]], Any] = {}

    def _path(self, api_version: str, kind: str) -> Path:
        # kubernetes-validate's file naming: <kind>-<group's first label>-<version>.json
        group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
        return self.folder / f"{kind.lower()}-{group_version}.json"

    def validator(self, api_version: str, kind: str) -> Any:
        """The validator for ``kind`` in ``api_version``, or ``None`` when it has no schema."""
        key = (api_version, kind)
        if key not in self._validators:
            self._validators[key] = self._build(api_version, kind)
        return self._validators[key]

    def verdicts(
        self, api_version: str, kind: str, gate_key: tuple[tuple[str, bool], ...]
    ) -> schemacache.Verdicts | None:
        """The values of ``kind`` in ``api_version`` that had no problem before, under the
        feature gates ``gate_key`` (:func:`_gate_key`; its schema's problems and those
        :func:`validate_object` checks itself), or ``None`` when that kind has no schema
        (then nothing is validated against one)."""
        key = (api_version, kind, gate_key)
        if key not in self._verdicts:
            path = self._path(api_version, kind)
            if not path.is_file():
                self._verdicts[key] = None
            else:
                cache = schemacache.directory()
                source = ""
                if cache is not None:
                    source = schemacache.source_key(path, self.folder / "_definitions.json")
                    source += "\n" + _validator_identity() + "\n" + _checks_identity()
                    source += "\n" + repr(gate_key)
                # (a file per key: runs of two configurations or installs do not take turns)
                name = f"{self.folder.name}-{path.stem}-{schemacache.short_digest(source)}"
                name += ".verdicts"
                self._verdicts[key] = schemacache.Verdicts(cache, name, source)
        return self._verdicts[key]

    def save(self) -> None:
        """Keep the verdicts of this run (:meth:`ssrisk.schemacache.Verdicts.save`)."""
        for verdicts in self._verdicts.values():
            if verdicts is not None:
                verdicts.save()

    def _build(self, api_version: str, kind: str) -> Any:
        import jsonschema_rs

        path = self._path(api_version, kind)
        if not path.is_file():
            return None  # e.g. policy/v1beta1, no longer served by the selected version
        cache = schemacache.directory()
        definitions = self.folder / "_definitions.json"
        key = schemacache.source_key(path, definitions) if cache is not None else ""
        # named after its key too: two installs (a pre-commit environment and a pipx one)
        # that share the cache each keep their own, where they rewrote one file in turn and
        # each rebuilt its validators from the full definitions on every other run
        name = f"{self.folder.name}-{path.stem}-{schemacache.short_digest(key)}.json"
        cached = schemacache.read(cache, name, key) if cache is not None else None
        if isinstance(cached, dict) and isinstance(cached.get("schema"), dict):
            try:  # the kind's schema and only the definitions it reaches (schemacache.py)
                registry = jsonschema_rs.Registry([(_SCHEMA_ID, cached["definitions"])])
                return jsonschema_rs.validator_for(cached["schema"], registry=registry)
            except Exception:  # a broken cache file: build from the sources
                pass
        if self._registry is None:
            self._definitions = json.loads(definitions.read_bytes(), object_hook=_schema_hook)
            self._registry = jsonschema_rs.Registry([(_SCHEMA_ID, self._definitions)])
        schema = json.loads(path.read_bytes(), object_hook=_schema_hook)
        validator = jsonschema_rs.validator_for(schema, registry=self._registry)
        if cache is not None:
            reached = _reached_definitions(schema, self._definitions)
            if reached is not None:
                schemacache.write(cache, name, key, {"schema": schema, "definitions": reached})
        return validator


@functools.cache
def _validator_identity() -> str:
    """What identifies the installed jsonschema-rs without importing it: its package's files
    (name, size, modification time), found on ``sys.path`` as the import system would find
    them (``""`` when it is not found: then it is imported, and fails, when validating)."""
    import sys

    for entry in sys.path:
        folder = os.path.join(entry or ".", "jsonschema_rs")
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        if "__init__.py" not in names:  # (not the package: a namespace folder)
            continue
        files = [Path(folder, n) for n in names if n.endswith((".py", ".so", ".pyd"))]
        return schemacache.source_key(*(f for f in files if f.is_file()))
    return ""


@functools.cache
def _checks_identity() -> str:
    """What identifies the checks :func:`validate_object` makes beyond the schema: the
    files of this module and of the simulator's modules they read (name, size, modification
    time), so that a changed check does not reuse an earlier run's verdicts."""
    import sys

    from .embedded_sim import disruption, podtemplate, quantity, selectors, versions

    modules = (sys.modules[__name__], disruption, podtemplate, quantity, selectors, versions)
    return schemacache.source_key(*(Path(m.__file__ or "") for m in modules))


def save_verdicts() -> None:
    """Keep the schema verdicts of this run in the cache (see :class:`_Schemas`)."""
    for schemas in _SCHEMAS.values():
        schemas.save()


#: How the kind schemas and definitions refer to a definition.
_DEFINITION_REF = lazy(r"(?:/api/_definitions\.json|" + re.escape(_SCHEMA_ID) + r")?#/\$defs/(.+)")


def _reached_definitions(schema: Any, definitions: Mapping[str, Any]) -> dict[str, Any] | None:
    """``definitions`` with only the ``$defs`` that ``schema`` reaches through ``$ref``s
    (the same document otherwise, so references resolve the same way); ``None`` when a
    reference is of another form (then nothing is cached)."""
    defs = definitions.get("$defs")
    if not isinstance(defs, Mapping):
        return None
    reached: set[str] = set()
    todo: list[Any] = [schema]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                m = _DEFINITION_REF.fullmatch(ref)
                if m is None or m.group(1) not in defs:
                    return None
                if m.group(1) not in reached:
                    reached.add(m.group(1))
                    todo.append(defs[m.group(1)])
            todo.extend(v for k, v in node.items() if k != "$ref")
        elif isinstance(node, list):
            todo.extend(node)
    return {**definitions, "$defs": {k: defs[k] for k in sorted(reached)}}


_SCHEMAS: dict[int, _Schemas] = {}


def _schemas(kube_version: str) -> _Schemas:
    minor = schema_minor(kube_version)
    if minor not in _SCHEMAS:
        _SCHEMAS[minor] = _Schemas(schema_root() / f"v1.{minor}.0-local-strict")
    return _SCHEMAS[minor]


# --- validation -----------------------------------------------------------------------------


def field_path(path: Sequence[str | int]) -> str:
    """``("spec", "containers", 0, "image")`` → ``spec.containers[0].image``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(object)"


class Validation(msgspec.Struct):
    """What :func:`validate_object` found.

    ``errors`` make the API server reject the object in a way that leaves its meaning unclear
    (a wrong type, a value out of range or not allowed, a value with no JSON form, an object
    too large to expand): the object is not checked. ``warnings`` leave the object readable:
    an unknown field (kubectl's strict field validation rejects it; ssrisk ignores it, as
    ``kubectl --validate=warn`` would) or a field the schema marks required (an incomplete
    object such as a patch; it is checked as written, with the API defaults).
    """

    errors: list[InputError] = msgspec.field(default_factory=list)
    warnings: list[Notice] = msgspec.field(default_factory=list)


def validate_object(
    obj: K8sObject,
    kube_version: str,
    repeats: Repeats | None = None,
    gates: Mapping[str, bool] | None = None,
) -> Validation:
    """Problems that make the API server of ``kube_version`` reject ``obj``.

    Args:
        obj: a loaded object of a modelled kind.
        kube_version: ``"1.NN"`` or ``"1.NN.P"``.
        repeats: the alias budget of the object's file (:class:`Repeats`), when it is checked
            with the other objects of its file (:func:`validate_objects`).
        gates: the feature gates in effect (default: those of ``kube_version``,
            :func:`ssrisk.embedded_sim.versions.version_defaults`).

    Returns:
        A :class:`Validation`; each problem is at the position of the offending field, at most
        :data:`MAX_PROBLEMS_PER_OBJECT` of them (then one that counts the rest). Empty when the
        object is valid or its apiVersion is not served by that version (no schema).

    Raises:
        RuntimeError: the ``kubernetes-validate`` schemas are not installed.
    """
    if gates is None:
        gates = _gates(kube_version, None)
    return _validate(obj, kube_version, repeats, gates, _gate_key(gates))


def _gate_key(gates: Mapping[str, bool]) -> tuple[tuple[str, bool], ...]:
    """The feature gates as a sorted tuple (a key of the verdicts they hold for)."""
    return tuple(sorted(gates.items()))


def _validate(
    obj: K8sObject,
    kube_version: str,
    repeats: Repeats | None,
    gates: Mapping[str, bool],
    gate_key: tuple[tuple[str, bool], ...],
) -> Validation:
    where = f"{obj.kind} {obj.name or '(unnamed)'}"
    result = Validation()
    fixups: list[tuple[Any, Any, Any]] = []
    try:
        if repeats is not None:
            repeats.enter((obj.path, obj.line_offset, obj.doc_index))
        if is_plain_json(obj.data, repeats=repeats):
            value = obj.data
        else:
            value = to_json_value(obj.data, fixups=fixups, repeats=repeats)
    except NotRepresentable as exc:
        pos = obj.pos(*exc.path)
        message = f"{where}: {field_path(exc.path)}: {exc}"
        result.errors.append(InputError(obj.path, message, pos.line, pos.column))
        return result
    except ObjectTooComplex as exc:
        pos = obj.start()
        result.errors.append(InputError(obj.path, f"{where}: {exc}", pos.line, pos.column))
        return result
    problems, unknown = _problems(obj, value, kube_version, gates, gate_key)
    # (at the file the position names: a rendered object's field is written in a template,
    # a patch or a values file, not in the object's own path, which may be a directory)
    for problem in problems[:MAX_PROBLEMS_PER_OBJECT]:
        pos = obj.pos(*problem.path)
        message = f"{where}: {problem.message}"
        if problem.error:
            result.errors.append(InputError(pos.path, message, pos.line, pos.column))
        else:
            result.warnings.append(Notice(pos.path, message, pos.line, pos.column, "warning"))
    if len(problems) > MAX_PROBLEMS_PER_OBJECT:
        pos = obj.start()
        rest = problems[MAX_PROBLEMS_PER_OBJECT:]
        message = f"{where}: {len(rest)} more schema problem(s)"
        if any(p.error for p in rest):
            result.errors.append(InputError(pos.path, message, pos.line, pos.column))
        else:
            result.warnings.append(Notice(pos.path, message, pos.line, pos.column, "warning"))
    if not result.errors:
        # Rules and the simulator read what the API server stores: `replicas: 1e9` is the
        # integer 1000000000 there, an anchored `&x true` a boolean.
        for container, key, converted in fixups:
            if not isinstance(container, tuple):
                container[key] = converted
        # ... and not a field the version does not have (the warning says it is ignored:
        # `preStop.sleep` checked for 1.25 is not read as a sleep)
        for path, keys in unknown:
            _drop(obj.data, path, keys)
    return result


def _problems(
    obj: K8sObject,
    value: Any,
    kube_version: str,
    gates: Mapping[str, bool],
    gate_key: tuple[tuple[str, bool], ...],
) -> tuple[list[_Problem], list[tuple[tuple[Any, ...], list[Any]]]]:
    """The problems of ``value`` (``obj``'s JSON form): those the schema of its kind finds,
    then those of the API server's own validation that ssrisk checks (StatefulSet and PDB
    specs, under ``gates``); and the ``(path, keys)`` of fields the schema does not have.
    Nothing for a value that had none in an earlier run with the same schema, gates and
    checks (:class:`ssrisk.schemacache.Verdicts`)."""
    schemas = _schemas(kube_version)
    verdicts = schemas.verdicts(obj.api_version, obj.kind, gate_key)
    digest = verdicts.digest(value) if verdicts is not None else None
    if verdicts is not None and digest is not None and verdicts.accepted(digest):
        return [], []
    problems: list[_Problem] = []
    unknown: list[tuple[tuple[Any, ...], list[Any]]] = []
    if verdicts is not None:  # (None: no schema, an apiVersion the version does not serve)
        minor = schema_minor(kube_version)
        for err in schemas.validator(obj.api_version, obj.kind).iter_errors(value):
            if _range_of_a_fraction(err):
                continue  # (its type error says it: one problem per field)
            if type(err.kind).__name__ == "AdditionalProperties":
                extra = list(getattr(err.kind, "unexpected", []) or [])
                unknown.append((tuple(err.instance_path), extra))
                problems.extend(_unknown_field(tuple(err.instance_path), k, minor) for k in extra)
            else:
                problems.append(_describe(err, minor))
    problems.extend(_name_problems(value))
    spec = value.get("spec")
    if not any(p.error for p in problems) and isinstance(spec, dict):
        if obj.kind == "StatefulSet":
            problems.extend(_statefulset_spec_problems(spec, gates))
        elif obj.kind == "PodDisruptionBudget":
            problems.extend(_pdb_spec_problems(spec))
    if verdicts is not None and digest is not None and not problems:
        verdicts.add(digest)
    return problems, unknown


def _drop(data: Any, path: tuple[Any, ...], keys: list[Any]) -> None:
    """Remove ``keys`` from the mapping at ``path`` of ``data`` (if it is still there)."""
    node = data
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        for key in keys:
            if key not in node:
                continue
            packed = getattr(node, "_pos", None)
            if packed is not None:  # positions are kept by key order (yamlpos.LC.key)
                del packed[list(node).index(key) + 1]
            del node[key]


def validate_objects(
    objects: Iterable[K8sObject],
    kube_version: str,
    max_alias_values: int = MAX_ALIAS_VALUES,
    feature_gates: Mapping[str, bool] | None = None,
) -> tuple[list[K8sObject], list[InputError], list[Notice]]:
    """Validate each object once (:func:`validate_object`), the objects of one file with one
    alias budget (``max_alias_values``): however many objects share an aliased value, the
    values they reach again cost at most that much in all.

    Returns:
        ``(objects to check, errors, warnings)``: objects with errors are left out.
    """
    gates = _gates(kube_version, feature_gates)
    gate_key = _gate_key(gates)
    keep: list[K8sObject] = []
    errors: list[InputError] = []
    warnings: list[Notice] = []
    repeats = Repeats(max_alias_values)
    for obj in objects:
        found = _validate(obj, kube_version, repeats, gates, gate_key)
        errors.extend(found.errors)
        warnings.extend(found.warnings)
        if not found.errors:
            keep.append(obj)
    return keep, errors, warnings


class _Problem(msgspec.Struct, frozen=True):
    path: tuple[str | int, ...]
    message: str
    error: bool = True


_JSON_TYPES = {
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    dict: "object",
}


def _json_type(value: Any) -> str:
    return "null" if value is None else _JSON_TYPES.get(type(value), type(value).__name__)


def _unknown_field(path: tuple[Any, ...], key: Any, minor: int) -> _Problem:
    """The warning for a field the schema of ``1.minor`` does not have (it is ignored)."""
    return _Problem(
        (*path, key),
        f"{field_path((*path, key))}: unknown field, not in the Kubernetes 1.{minor} API "
        "(kubectl's default strict field validation rejects it, KEP-2885); ignored",
        error=False,
    )


def _name_problems(value: Mapping[str, Any]) -> list[_Problem]:
    """A warning for an object without ``metadata.name`` (nor ``generateName``): the API
    server refuses it (staging/src/k8s.io/apimachinery/pkg/api/validation/objectmeta.go,
    ValidateObjectMetaAccessor: "name or generateName is required"); it is checked as
    written, a patch maybe, and its pods' names in messages lack the set's."""
    meta = value.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    if meta.get("name") or meta.get("generateName"):
        return []
    what = "is empty" if "name" in meta else "required field is missing"
    return [
        _Problem(
            ("metadata", "name"),
            f"metadata.name: {what} (the API server refuses an object without a name or "
            "generateName); checked as written (a patch?)",
            error=False,
        )
    ]


def _range_of_a_fraction(err: Any) -> bool:
    """Whether ``err`` is the range error of a number that is not whole, at a field that
    takes integers: the validator also reports the type, which is the problem to fix."""
    if type(err.kind).__name__ not in ("Maximum", "Minimum"):
        return False
    value = err.instance
    return isinstance(value, float) and not value.is_integer()


def _describe(err: Any, minor: int) -> _Problem:
    """Turn a jsonschema-rs error into the field to fix and a message."""
    path = tuple(err.instance_path)
    kind = err.kind
    name = type(kind).__name__
    where = field_path(path)
    if name == "AdditionalProperties":
        extra = list(getattr(kind, "unexpected", []) or [])
        return _unknown_field(path, extra[0] if extra else "?", minor)
    if name == "Required":
        prop = getattr(kind, "property", "?")
        return _Problem(
            path,
            f"{field_path((*path, prop))}: required field is missing (Kubernetes 1.{minor} API "
            "schema); checked as written, with the API defaults (a patch?)",
            error=False,
        )
    if name == "Type":
        types = [t for t in getattr(kind, "types", []) if t != "null"]
        expected = " or ".join(types) or "null"
        shown = _snippet(json.dumps(err.instance))
        return _Problem(
            path, f"{where}: expected {expected}, got {_json_type(err.instance)} {shown}"
        )
    if name in ("Maximum", "Minimum"):
        limit = getattr(kind, "limit", None)
        if isinstance(err.instance, float) and isinstance(limit, int | float):
            # (1e21 as JSON writes it, not the validator's 1000000000000000000000.0)
            side = "greater than the maximum" if name == "Maximum" else "less than the minimum"
            message = f"{_snippet(json.dumps(err.instance))} is {side} of {limit}"
        else:
            message = err.message
        return _Problem(path, f"{where}: {message} (out of range of the API field type)")
    return _Problem(path, f"{where}: {_snippet(err.message, 200)}")


def _snippet(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (values quoted in messages come from the input)."""
    from .reporters.escape import snippet

    return snippet(text, limit)


# --- checks the API server makes in Go code -------------------------------------------------

_SRC = "(k8s: pkg/apis/apps/validation/validation.go, ValidateStatefulSetSpec)"


def _gates(kube_version: str, overrides: Mapping[str, bool] | None) -> Mapping[str, bool]:
    """The feature gates of ``kube_version`` with the run's ``overrides``."""
    from .embedded_sim.versions import version_defaults

    return version_defaults(kube_version, overrides).gates


def _update_strategy_types(gates: Mapping[str, bool]) -> tuple[str, ...]:
    """The updateStrategy types the API server accepts: Recreate too with its feature gate on
    (KEP-3541; the simulator's statefulset_controller reads the same gate table)."""
    from .embedded_sim.versions import STATEFULSET_RECREATE_STRATEGY

    types: tuple[str, ...] = ("RollingUpdate", "OnDelete")
    return (*types, "Recreate") if gates.get(STATEFULSET_RECREATE_STRATEGY) else types


def _statefulset_spec_problems(
    spec: Mapping[str, Any], gates: Mapping[str, bool]
) -> list[_Problem]:
    """Range and enum checks of ``ValidateStatefulSetSpec`` that the schema does not carry.

    Only values the user set are checked: absent fields and empty strings are defaulted
    before validation (k8s: pkg/apis/apps/v1/defaults.go, ``SetDefaults_StatefulSet``), and
    ``spec`` has passed schema validation, so the types are right.
    """
    out: list[_Problem] = []

    def nonnegative(path: tuple[str | int, ...], value: Any) -> None:
        # apivalidation.ValidateNonnegativeField
        if isinstance(value, int) and value < 0:
            out.append(_Problem(path, f"{field_path(path)}: {value} must be >= 0 {_SRC}"))

    def one_of(path: tuple[str | int, ...], value: Any, allowed: tuple[str, ...]) -> None:
        if isinstance(value, str) and value and value not in allowed:
            out.append(
                _Problem(
                    path,
                    f"{field_path(path)}: {_snippet(repr(value))} is not {' or '.join(allowed)} "
                    f"{_SRC}",
                )
            )

    nonnegative(("spec", "replicas"), spec.get("replicas"))
    nonnegative(("spec", "minReadySeconds"), spec.get("minReadySeconds"))
    ordinals = spec.get("ordinals")
    if isinstance(ordinals, dict):
        nonnegative(("spec", "ordinals", "start"), ordinals.get("start"))
    policy = spec.get("podManagementPolicy")
    one_of(("spec", "podManagementPolicy"), policy, ("OrderedReady", "Parallel"))
    strategy = spec.get("updateStrategy")
    if isinstance(strategy, dict):
        base = ("spec", "updateStrategy")
        one_of((*base, "type"), strategy.get("type"), _update_strategy_types(gates))
        rolling = strategy.get("rollingUpdate")
        if isinstance(rolling, dict):
            if strategy.get("type") == "OnDelete":
                out.append(
                    _Problem(
                        (*base, "rollingUpdate"),
                        f"spec.updateStrategy.rollingUpdate: only allowed for updateStrategy "
                        f"'RollingUpdate' {_SRC}",
                    )
                )
            path = (*base, "rollingUpdate")
            nonnegative((*path, "partition"), rolling.get("partition"))
            out.extend(_max_unavailable((*path, "maxUnavailable"), rolling.get("maxUnavailable")))
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if isinstance(retention, dict):
        for key in ("whenDeleted", "whenScaled"):
            # ValidatePersistentVolumeClaimRetentionPolicyType (empty defaults to Retain)
            path = ("spec", "persistentVolumeClaimRetentionPolicy", key)
            one_of(path, retention.get(key), ("Retain", "Delete"))
    selector = spec.get("selector")
    if isinstance(selector, dict) and not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        out.append(
            _Problem(("spec", "selector"), f"spec.selector: empty selector is invalid {_SRC}")
        )
    template = spec.get("template")
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    if isinstance(pod_spec, dict):
        path = ("spec", "template", "spec")
        tolerations = pod_spec.get("tolerations")
        out.extend(_toleration_problems((*path, "tolerations"), tolerations, gates))
        out.extend(_sleep_action_problems(path, pod_spec, gates))
        out.extend(_container_problems(path, pod_spec, gates))
        from .embedded_sim.quantity import parse_quantity

        overhead = pod_spec.get("overhead")
        for name, raw in overhead.items() if isinstance(overhead, dict) else ():
            at: tuple[str | int, ...] = (*path, "overhead", name)
            bad = _unreadable_quantity(at, raw)
            if not bad and (parse_quantity(raw) or 0) < 0:  # validateOverhead: nonnegative
                message = f"{field_path(at)}: {_snippet(repr(raw))} must be >= 0 {_RESOURCES_SRC}"
                bad = [_Problem(at, message)]
            out.extend(bad)
        out.extend(_pod_spec_warnings(path, pod_spec))
        one_of((*path, "restartPolicy"), pod_spec.get("restartPolicy"), ("Always",))
        if pod_spec.get("activeDeadlineSeconds") is not None:
            out.append(
                _Problem(
                    (*path, "activeDeadlineSeconds"),
                    f"{field_path((*path, 'activeDeadlineSeconds'))}: not supported in a "
                    f"StatefulSet {_SRC}",
                )
            )
    for i, claim in enumerate(_items(spec.get("volumeClaimTemplates"))):
        claim_spec = claim.get("spec") if isinstance(claim, dict) else None
        resources = claim_spec.get("resources") if isinstance(claim_spec, dict) else None
        for part in ("requests", "limits"):
            entries = resources.get(part) if isinstance(resources, dict) else None
            for name, raw in entries.items() if isinstance(entries, dict) else ():
                at = ("spec", "volumeClaimTemplates", i, "spec", "resources", part, name)
                out.extend(_unreadable_quantity(at, raw))
    return out


_WARNINGS_SRC = (
    "(a warning of the API server: k8s: pkg/api/pod/warnings.go, warningsForPodSpecAndMeta)"
)


def _pod_spec_warnings(path: tuple[str | int, ...], pod_spec: Mapping[str, Any]) -> list[_Problem]:
    """The API server's warnings (not errors) about a pod template that the model reads as
    Kubernetes does: a negative ``terminationGracePeriodSeconds`` (treated as 1 s), and a null
    ``labelSelector`` of a topology spread constraint or pod (anti-)affinity term (it matches
    no pod)."""
    out: list[_Problem] = []
    grace = pod_spec.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and not isinstance(grace, bool) and grace < 0:
        at = (*path, "terminationGracePeriodSeconds")
        message = "must be >= 0; negative values are invalid and will be treated as 1"
        out.append(_Problem(at, f"{field_path(at)}: {message} {_WARNINGS_SRC}", error=False))
    terms: list[tuple[tuple[str | int, ...], Any]] = []
    for i, c in enumerate(_items(pod_spec.get("topologySpreadConstraints"))):
        terms.append(((*path, "topologySpreadConstraints", i), c))
    affinity = pod_spec.get("affinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        block = affinity.get(kind) if isinstance(affinity, dict) else None
        if not isinstance(block, dict):
            continue
        base = (*path, "affinity", kind)
        required = "requiredDuringSchedulingIgnoredDuringExecution"
        for i, t in enumerate(_items(block.get(required))):
            terms.append(((*base, required, i), t))
        preferred = "preferredDuringSchedulingIgnoredDuringExecution"
        for i, w in enumerate(_items(block.get(preferred))):
            term = w.get("podAffinityTerm") if isinstance(w, dict) else None
            terms.append(((*base, preferred, i, "podAffinityTerm"), term))
    for at, term in terms:
        if isinstance(term, dict) and term.get("labelSelector") is None:
            where = field_path((*at, "labelSelector"))
            message = f"{where}: a null labelSelector results in matching no pod {_WARNINGS_SRC}"
            out.append(_Problem(at, message, error=False))
    return out


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_SLEEP_SRC = "(k8s: pkg/apis/core/validation/validation.go, validateSleepAction)"


def _sleep_action_problems(
    path: tuple[str | int, ...], pod_spec: Mapping[str, Any], gates: Mapping[str, bool]
) -> list[_Problem]:
    """What ``validateSleepAction`` rejects of the containers' preStop and postStart sleep
    actions (gate PodLifecycleSleepAction): more seconds than the pod's
    terminationGracePeriodSeconds (30 when unset, the default applied before validation), a
    negative value, and zero unless PodLifecycleSleepActionAllowZero is on (from 1.33)."""
    from .embedded_sim.versions import (
        POD_LIFECYCLE_SLEEP_ACTION,
        POD_LIFECYCLE_SLEEP_ACTION_ALLOW_ZERO,
    )

    if not gates.get(POD_LIFECYCLE_SLEEP_ACTION):
        return []  # (unknown before 1.29: the schema's warning says so; off in 1.29)
    grace = pod_spec.get("terminationGracePeriodSeconds")
    if not isinstance(grace, int) or isinstance(grace, bool):
        grace = 30
    lowest = 0 if gates.get(POD_LIFECYCLE_SLEEP_ACTION_ALLOW_ZERO) else 1
    out: list[_Problem] = []
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(_items(pod_spec.get(kind))):
            lifecycle = c.get("lifecycle") if isinstance(c, dict) else None
            for hook in ("preStop", "postStart"):
                handler = lifecycle.get(hook) if isinstance(lifecycle, dict) else None
                sleep = handler.get("sleep") if isinstance(handler, dict) else None
                seconds = sleep.get("seconds") if isinstance(sleep, dict) else None
                if not isinstance(seconds, int) or isinstance(seconds, bool):
                    continue
                if lowest <= seconds <= grace:
                    continue
                at = (*path, kind, i, "lifecycle", hook, "sleep", "seconds")
                bound = "at least 0" if lowest == 0 else "greater than 0"
                out.append(
                    _Problem(
                        at,
                        f"{field_path(at)}: {seconds} must be {bound} and at most "
                        f"terminationGracePeriodSeconds ({grace}) {_SLEEP_SRC}",
                    )
                )
    return out


_QUANTITY_SRC = "(k8s: staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go, ParseQuantity)"
_RESOURCES_SRC = "(k8s: pkg/apis/core/validation/validation.go, ValidateResourceRequirements)"


def _unreadable_quantity(at: tuple[str | int, ...], raw: Any) -> list[_Problem]:
    """The decode error of a value that is no quantity (the API server cannot read the object
    at all), as a list of at most one problem."""
    from .embedded_sim.quantity import is_quantity

    if is_quantity(raw):
        return []
    return [
        _Problem(
            at,
            f"{field_path(at)}: {_snippet(repr(raw))} is not a quantity (such as 500m, 2Gi "
            f"or 1e3) {_QUANTITY_SRC}",
        )
    ]


def _container_problems(
    path: tuple[str | int, ...], pod_spec: Mapping[str, Any], gates: Mapping[str, bool]
) -> list[_Problem]:
    """What the API server rejects of the containers' resources and restart policies: a
    request or limit that is no quantity or is negative, a request above its limit, a main
    container's restartPolicy, and an init container restartPolicy other than Always (a
    sidecar, KEP-753, gate SidecarContainers)."""
    from .embedded_sim.quantity import parse_quantity
    from .embedded_sim.versions import SIDECAR_CONTAINERS

    sidecars = bool(gates.get(SIDECAR_CONTAINERS))

    out: list[_Problem] = []
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(_items(pod_spec.get(kind))):
            if not isinstance(c, dict):
                continue
            at = (*path, kind, i)
            policy = c.get("restartPolicy")
            if kind == "containers" and policy is not None:
                where = field_path((*at, "restartPolicy"))
                out.append(
                    _Problem(
                        (*at, "restartPolicy"),
                        f"{where}: may not be set for non-init containers (the alpha "
                        "ContainerRestartRules gate aside) (k8s: "
                        "pkg/apis/core/validation/validation.go, validateContainers)",
                    )
                )
            if kind == "initContainers" and sidecars and policy not in (None, "Always"):
                where = field_path((*at, "restartPolicy"))
                out.append(
                    _Problem(
                        (*at, "restartPolicy"),
                        f"{where}: {_snippet(repr(policy))} is not supported: an init "
                        "container's restartPolicy is Always or unset (KEP-753) (k8s: "
                        "pkg/apis/core/validation/validation.go, validateInitContainers)",
                    )
                )
            resources = c.get("resources")
            if not isinstance(resources, dict):
                continue
            amounts: dict[str, dict[str, float]] = {}
            for part in ("limits", "requests"):
                entries = resources.get(part)
                for name, raw in entries.items() if isinstance(entries, dict) else ():
                    where_at = (*at, "resources", part, name)
                    unreadable = _unreadable_quantity(where_at, raw)
                    value = parse_quantity(raw)
                    if unreadable or value is None:
                        out.extend(unreadable)
                    elif value < 0:
                        out.append(
                            _Problem(
                                where_at,
                                f"{field_path(where_at)}: {_snippet(repr(raw))} must be "
                                f"greater than or equal to 0 {_RESOURCES_SRC}",
                            )
                        )
                    else:
                        amounts.setdefault(part, {})[str(name)] = value
            limits, requests = amounts.get("limits", {}), amounts.get("requests", {})
            for name, value in requests.items():
                if name in limits and value > limits[name]:
                    where_at = (*at, "resources", "requests", name)
                    out.append(
                        _Problem(
                            where_at,
                            f"{field_path(where_at)}: must be less than or equal to the {name} "
                            f"limit {_RESOURCES_SRC}",
                        )
                    )
    return out


_TOLERATION_SRC = "(k8s: pkg/apis/core/validation/validation.go, ValidateTolerations)"
#: A Lt / Gt toleration's value: a decimal integer without a plus sign or leading zeros
#: (KEP-5471, apimachinery validate/content#IsDecimalInteger).
_DECIMAL = lazy(r"-?(0|[1-9][0-9]{0,18})")


def _toleration_problems(
    path: tuple[str | int, ...], tolerations: Any, gates: Mapping[str, bool]
) -> list[_Problem]:
    """What ``ValidateTolerations`` rejects of a pod's tolerations: a key that is no label key
    (IsQualifiedName), an empty key without the Exists operator (a null or empty entry has
    neither, so it is rejected), an operator other than Equal and Exists (Lt and Gt from 1.35,
    behind the TaintTolerationComparisonOperators gate, KEP-5471), an Equal value that is no
    label value, tolerationSeconds without the NoExecute effect, Exists with a value, and an
    effect that is no taint effect. ``gates`` are the feature gates in effect."""
    from .embedded_sim.podtemplate import (
        NUMERIC_TOLERATION_OPERATORS,
        TAINT_EFFECTS,
        TOLERATION_OPERATORS,
    )
    from .embedded_sim.selectors import is_label_value, is_qualified_name
    from .embedded_sim.versions import TAINT_TOLERATION_COMPARISON_OPERATORS

    operators: tuple[str, ...] = TOLERATION_OPERATORS
    if gates.get(TAINT_TOLERATION_COMPARISON_OPERATORS):
        operators = (*operators, *NUMERIC_TOLERATION_OPERATORS)
    out: list[_Problem] = []
    for i, entry in enumerate(tolerations if isinstance(tolerations, list) else ()):
        at = (*path, i)
        tol = entry if isinstance(entry, dict) else {}
        key, op, effect = tol.get("key") or "", tol.get("operator") or "", tol.get("effect") or ""
        where = field_path(at)
        if key and not is_qualified_name(key):
            out.append(
                _Problem(
                    (*at, "key"),
                    f"{where}: key {_snippet(repr(key))} is not a valid label key (a name of at "
                    f"most 63 characters with an optional DNS prefix) {_TOLERATION_SRC}",
                )
            )
        if op and op not in operators:
            numeric = op in NUMERIC_TOLERATION_OPERATORS
            need = "(Lt and Gt need the TaintTolerationComparisonOperators gate, from 1.35) "
            out.append(
                _Problem(
                    (*at, "operator"),
                    f"{where}: operator {_snippet(repr(op))} is not "
                    f"{', '.join(operators[:-1])} or {operators[-1]} "
                    f"{need if numeric else ''}{_TOLERATION_SRC}",
                )
            )
        value = tol.get("value") or ""
        if op in NUMERIC_TOLERATION_OPERATORS and op in operators and not _DECIMAL.fullmatch(value):
            out.append(
                _Problem(
                    (*at, "value") if "value" in tol else at,
                    f"{where}: value {_snippet(repr(value))} is not a decimal integer, which "
                    f"operator {op} compares {_TOLERATION_SRC}",
                )
            )
        if op in ("", "Equal") and isinstance(value, str) and not is_label_value(value):
            out.append(
                _Problem(
                    (*at, "value"),
                    f"{where}: value {_snippet(repr(value))} is not a valid label value (at "
                    f"most 63 characters: letters, digits, '-', '_', '.') {_TOLERATION_SRC}",
                )
            )
        if key == "" and op != "Exists":
            out.append(
                _Problem(
                    (*at, "operator") if "operator" in tol else at,
                    f"{where}: operator must be Exists when key is empty (Exists with no key "
                    f"tolerates every taint) {_TOLERATION_SRC}",
                )
            )
        if tol.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(
                _Problem(
                    (*at, "effect") if "effect" in tol else at,
                    f"{where}: effect must be NoExecute when tolerationSeconds is set "
                    f"{_TOLERATION_SRC}",
                )
            )
        if op == "Exists" and tol.get("value"):
            out.append(
                _Problem(
                    (*at, "value"),
                    f"{where}: value must be empty when operator is Exists {_TOLERATION_SRC}",
                )
            )
        if effect and effect not in TAINT_EFFECTS:
            out.append(
                _Problem(
                    (*at, "effect"),
                    f"{where}: effect {_snippet(repr(effect))} is not "
                    f"{', '.join(TAINT_EFFECTS)} or empty {_TOLERATION_SRC}",
                )
            )
    return out


_PERCENT = lazy(r"^(-?\d+)%$")
_INT64_MAX = 2**63 - 1


def _atoi(digits: str) -> int:
    """Go's ``strconv.Atoi`` of ``-?[0-9]+``, which gives the largest (or smallest) int64 on
    overflow; bounded in cost for any number of digits."""
    negative = digits.startswith("-")
    significant = digits.lstrip("-").lstrip("0") or "0"
    if len(significant) > 19:
        return -_INT64_MAX - 1 if negative else _INT64_MAX
    number = -int(significant) if negative else int(significant)
    return max(-_INT64_MAX - 1, min(_INT64_MAX, number))


_PDB_SRC = "(k8s: pkg/apis/policy/validation/validation.go, ValidatePodDisruptionBudgetSpec)"


#: A number with a fraction where an int-or-string's integer is read (a decoding error).
_NOT_AN_INT32 = "is not an integer: an int-or-string's number is an int32"


def _pdb_spec_problems(spec: Mapping[str, Any]) -> list[_Problem]:
    """``minAvailable`` and ``maxUnavailable`` of a PodDisruptionBudget: a non-negative integer
    or a percentage ``[0-9]+%`` of at most 100% (the one reading of a budget,
    :func:`ssrisk.embedded_sim.disruption.int_or_percent_problem`; other types are the
    schema's to report)."""
    from .embedded_sim.disruption import OUT_OF_INT32, int_or_percent_problem

    out = []
    for key in ("minAvailable", "maxUnavailable"):
        value = spec.get(key)
        if isinstance(value, float):
            # (without a schema: policy/v1beta1 on a version that no longer serves it) a
            # whole number here is 1e21 or more (a smaller one is read as an integer,
            # _json_scalar), which encoding/json writes with an exponent and no integer
            # decodes; any other is not an integer (the budget was dropped without a word)
            problem: str | None = OUT_OF_INT32 if value.is_integer() else _NOT_AN_INT32
        elif isinstance(value, bool) or not isinstance(value, (int, str)):
            continue
        else:
            problem = int_or_percent_problem(value)
        if problem is None:
            continue
        path: tuple[str | int, ...] = ("spec", key)
        shown = _snippet(repr(value)) if problem == "not a valid percent" else _snippet(str(value))
        src = "" if problem in (OUT_OF_INT32, _NOT_AN_INT32) else f" {_PDB_SRC}"  # (decoding)
        out.append(_Problem(path, f"{field_path(path)}: {shown} {problem}{src}"))
    return out


def _max_unavailable(path: tuple[str | int, ...], value: Any) -> list[_Problem]:
    """validateRollingUpdateStatefulSet: a positive int or percentage, not 0, at most 100%."""
    if value is None:
        return []
    where = field_path(path)
    src = "(k8s: pkg/apis/apps/validation/validation.go, validateRollingUpdateStatefulSet)"
    if isinstance(value, str):
        m = _PERCENT.match(value)
        if m is None:
            shown = _snippet(repr(value))
            return [_Problem(path, f"{where}: {shown} is not an integer or a percentage {src}")]
        number = _atoi(m.group(1))
        if number > 100:
            return [_Problem(path, f"{where}: {_snippet(value)} is more than 100% {src}")]
    else:
        from .embedded_sim.disruption import INT32_MAX, INT32_MIN, OUT_OF_INT32

        number = int(value)
        if not INT32_MIN <= number <= INT32_MAX:
            return [_Problem(path, f"{where}: {_snippet(str(value))} {OUT_OF_INT32}")]
    if number < 0:
        return [_Problem(path, f"{where}: {value} must be >= 0 {src}")]
    if number == 0:
        return [_Problem(path, f"{where}: cannot be 0 {src}")]
    return []
