"""Value objects shared by every stage: positions, loaded objects, findings, input errors.

The pipeline runs in one direction (see ``engine``): loading produces :class:`K8sObject` and
:class:`InputError` values, rules produce :class:`Finding` values, reporters only read them.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from .embedded_sim.keyed import Keyed
from .yamlpos import PosMap, locate

if TYPE_CHECKING:
    from .embedded_sim.podtemplate import PodTemplate, SetSpec

T = TypeVar("T")


class Severity(enum.IntEnum):
    """Finding severity, ordered so that ``Severity.ERROR > Severity.WARNING``."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str) -> Severity:
        """Return the severity named ``value`` (``"error"``, ``"warning"``, ``"info"``).

        Raises:
            ValueError: for any other name.
        """
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise ValueError(
                f"unknown severity {value!r} (expected error, warning or info)"
            ) from None


# (mypy over the source tree cannot map ssrisk.embedded_sim, so Keyed is Any there; see
# scripts/typecheck.py for the installed layout, where this type-checks)
class Position(Keyed, frozen=True):  # type: ignore[call-arg,unused-ignore]
    """A place in an input file. ``line`` and ``column`` are 1-based. Positions are equal,
    hashed and ordered by ``(path, line, column)``; the fields after them describe where the
    text came from."""

    path: str
    line: int = 1
    column: int = 1
    #: The Helm template the object was rendered from (``chart/templates/x.yaml``), when
    #: known: from a ``# Source:`` comment or from rendering a chart.
    source: str | None = None
    #: The kustomization directory the object was built from (``kz/overlays/prod``, shown
    #: like the path), when it came out of ``kustomize build``: one base file can be part of
    #: several overlays, and this tells their findings apart.
    kustomization: str | None = None
    #: The variant of a configured chart the object was rendered for (``prod``: the
    #: configuration's ``charts: <dir>: variants:``), when it has variants: each variant is
    #: rendered and checked on its own, and every output names it.
    variant: str | None = None

    def key(self) -> tuple[str, int, int]:
        return (self.path, self.line, self.column)

    def __lt__(self, other: object) -> bool:
        if type(other) is not Position:
            return NotImplemented
        return self.key() < other.key()

    def __le__(self, other: object) -> bool:
        if type(other) is not Position:
            return NotImplemented
        return self.key() <= other.key()

    def __gt__(self, other: object) -> bool:
        if type(other) is not Position:
            return NotImplemented
        return self.key() > other.key()

    def __ge__(self, other: object) -> bool:
        if type(other) is not Position:
            return NotImplemented
        return self.key() >= other.key()

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"

    def scope(self) -> str:
        """What tells apart findings at one position built by several units: the
        kustomization, then the chart variant (``"kz/overlays/prod"``, ``"variant prod"``,
        ``""``)."""
        if not self.kustomization and not self.variant:
            return ""  # (plain files: the sort key of every finding asks)
        parts = [p for p in (self.kustomization, self.variant and f"variant {self.variant}") if p]
        return ", ".join(parts)

    def rendered_from(self) -> str | None:
        """The Helm template or kustomization to name after the position, or ``None``.

        ``None`` also when the path already says it: the position is in that template, or
        in a file inside that kustomization directory.
        """
        # a chart's templates are named <chart name>/templates/...; its directory may be
        # called otherwise
        inside_chart = self.source.split("/", 1)[-1] if self.source else ""
        origin: str | None = None
        if self.source and not self.path.replace(os.sep, "/").endswith(inside_chart):
            origin = self.source
        elif self.kustomization and not path_below(self.path, self.kustomization):
            origin = self.kustomization
        if self.variant:
            origin = f"{origin}, variant {self.variant}" if origin else f"variant {self.variant}"
        return origin


def path_below(path: str, directory: str) -> bool:
    """Whether ``path`` names a file below ``directory`` (compared as written, both relative
    to the working directory or both absolute)."""
    try:
        rel = os.path.relpath(path, directory)
    except ValueError:  # another drive (Windows)
        return False
    return rel != os.pardir and not rel.startswith(os.pardir + os.sep)


class ObjectRef(msgspec.Struct, frozen=True):
    """Identity of a Kubernetes object as the API server would key it."""

    api_version: str
    kind: str
    namespace: str | None
    name: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {ns}{self.name}"


class _Forgotten:
    def __reduce__(self) -> str:
        return "FORGOTTEN"  # (unpickled as this module's one instance)


#: What :meth:`K8sObject.forget_model` leaves in place of a freed model: read it again, but do
#: not keep it on the object.
FORGOTTEN: Any = _Forgotten()


@dataclass
class K8sObject:
    """One Kubernetes object read from an input, with the positions of its fields.

    ``data`` is the object as plain data whose mappings and sequences carry positions in an
    ``lc`` attribute (see :mod:`ssrisk.yamlpos`), so field positions can be looked up with
    :meth:`pos`.
    ``line_offset`` is the number of lines before the YAML text the object was parsed from
    (documents are parsed one at a time).
    """

    data: Mapping[str, Any]
    path: str
    line_offset: int
    namespace: str | None
    doc_index: int = 0
    #: Read from a ``--context`` input: a fact of the cluster, so a default StorageClass among
    #: such objects is the default for every unit's claims (not only those below its file).
    cluster_wide: bool = False

    # Identity fields are read on every cross-object lookup: computed once (objects are not
    # renamed after loading).
    @cached_property
    def kind(self) -> str:
        kind = self.data.get("kind")
        return kind if isinstance(kind, str) else ""

    @cached_property
    def api_version(self) -> str:
        value = self.data.get("apiVersion")
        return value if isinstance(value, str) else ""

    @property
    def metadata(self) -> Mapping[str, Any]:
        meta = self.data.get("metadata")
        return meta if isinstance(meta, Mapping) else {}

    @cached_property
    def name(self) -> str:
        name = self.metadata.get("name")
        return str(name) if isinstance(name, (str, int)) else ""

    @cached_property
    def ref(self) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, self.namespace, self.name)

    @property
    def unit(self) -> str:
        """The rendered unit the object belongs to, within which its relations (PDBs,
        Services, StorageClasses) are resolved first: the directory of a plain file (``<stdin>``
        for standard input); a chart or kustomization for rendered objects."""
        return _directory_unit(self.path)

    def get(self, *keys: str | int) -> Any:
        """Return the value at ``keys`` (mapping keys or list indexes), or ``None``."""
        node: Any = self.data
        for i, key in enumerate(keys):  # dig()'s common case inlined: rules read many fields
            if type(node) is not PosMap or type(key) is not str:
                return dig(node, *keys[i:])
            node = node.get(key)
            if node is None:
                return None
        return node

    def pod_template(self) -> PodTemplate:
        """The typed pod and claim templates of this StatefulSet
        (:func:`ssrisk.embedded_sim.podtemplate.parse_template`), parsed once and kept until
        :meth:`forget_model`."""
        found = self.__dict__.get("_template")  # (the common case first: rules ask often)
        if found is not None and found is not FORGOTTEN:
            return cast("PodTemplate", found)
        from .embedded_sim.podtemplate import parse_template

        return cast("PodTemplate", self._model("_template", parse_template))

    def set_spec(self) -> SetSpec:
        """The StatefulSet's own spec fields as written
        (:func:`ssrisk.embedded_sim.podtemplate.parse_spec`), kept as :meth:`pod_template`."""
        found = self.__dict__.get("_set_spec")
        if found is not None and found is not FORGOTTEN:
            return cast("SetSpec", found)
        from .embedded_sim.podtemplate import parse_spec

        return cast("SetSpec", self._model("_set_spec", parse_spec))

    def _model(self, slot: str, parse: Callable[[Any], Any]) -> Any:
        found = self.__dict__.get(slot)
        if found is None:
            found = self.__dict__[slot] = parse(self.data)
        elif found is FORGOTTEN:
            return parse(self.data)
        return found

    def forget_model(self) -> None:
        """Free the typed model the rules parsed from this object (``rules/_podspec.template``
        and ``set_spec``) once its StatefulSet is checked: a large run holds thousands of
        objects until it reports. Whoever reads the model afterwards (a lazy explanation, as
        it is written) parses it again and does not keep it here (:data:`FORGOTTEN`)."""
        self.__dict__["_template"] = FORGOTTEN
        self.__dict__["_set_spec"] = FORGOTTEN

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """``build()``, computed once per object for ``key``: for what rules derive from the
        object's own data alone (loaded data is not changed after loading), read by several
        rules. ``key`` names the helper and its arguments."""
        memo = self.__dict__.get("_memo")
        if memo is None:
            memo = self.__dict__["_memo"] = {}
        try:
            return cast(T, memo[key])
        except KeyError:
            value = memo[key] = build()
            return value

    def pos(self, *keys: str | int) -> Position:
        """Position of the field at ``keys``.

        Points at the key of the deepest field of ``keys`` that exists (the value's
        position for a list item); with no keys, or when even the first key is missing, at
        the start of the object.
        """
        line, col = locate(self.data, keys)
        return Position(self.path, line + 1 + self.line_offset, col + 1)

    def start(self) -> Position:
        line, col = locate(self.data, ())
        return Position(self.path, line + 1 + self.line_offset, col + 1)


@lru_cache(maxsize=4096)
def _directory_unit(path: str) -> str:
    """The unit of a plain file: its directory (a file of several objects is looked up once)."""
    if path.startswith("<"):
        return path
    return os.path.dirname(os.path.normpath(path)) or os.curdir


#: Where each kind that runs pods writes its pods' labels (a PodDisruptionBudget selects
#: pods by them: a new budget must not select another workload's pods too).
POD_LABELS: Mapping[str, tuple[str, ...]] = {
    "StatefulSet": ("spec", "template", "metadata", "labels"),
    "Deployment": ("spec", "template", "metadata", "labels"),
    "ReplicaSet": ("spec", "template", "metadata", "labels"),
    "DaemonSet": ("spec", "template", "metadata", "labels"),
    "Job": ("spec", "template", "metadata", "labels"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "metadata", "labels"),
    "Pod": ("metadata", "labels"),
}


def dig(data: Any, *keys: str | int) -> Any:
    """Follow ``keys`` through nested mappings and lists; ``None`` when any step is missing."""
    node = data
    for key in keys:
        if isinstance(key, int):
            if not isinstance(node, list) or not -len(node) <= key < len(node):
                return None
            node = node[key]
        else:
            if not isinstance(node, (dict, Mapping)):  # dict first: the ABC check is slow
                return None
            node = node.get(key)
            if node is None:
                return None
    return node


class InputError(msgspec.Struct, frozen=True):
    """An input that could not be read or parsed; it makes the run exit with code 2."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "line": self.line, "message": self.message}
        if self.column is not None:
            out["column"] = self.column
        return out

    def __str__(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: error: {self.message}"


class Notice(Keyed, frozen=True):  # type: ignore[call-arg,unused-ignore]
    """Something the user should know that is neither a finding nor an error (notices are
    equal when all but ``empty`` are)."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None
    #: ``"notice"`` (informational) or ``"warning"`` (the input is dubious but was read).
    level: str = "notice"
    #: An input with no YAML document (empty, comments only): ``--fail-if-empty`` makes it an
    #: error.
    empty: bool = False

    def key(self) -> tuple[str, str, int | None, int | None, str]:
        return (self.path, self.message, self.line, self.column, self.level)

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}:{self.column or 1}"
        return f"{where}: {self.level}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "level": self.level,
            "message": self.message,
        }


class _ExplanationField:
    """The ``explanation`` field of :class:`Finding`: set to a string or to a zero-argument
    callable, read as a string.

    A callable is called on every read and its text is not kept: explanations carry simulated
    timelines (kilobytes each), and a run whose output never prints them (text without
    ``--explain``) then never builds them, while one that does (JSON, SARIF) holds each only
    while it is written.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: object | None, owner: type | None = None) -> str:
        if obj is None:
            return ""  # the dataclass default
        value = obj.__dict__[self.slot]
        return value if isinstance(value, str) else value()

    def __set__(self, obj: object, value: str | Callable[[], str]) -> None:
        obj.__dict__[self.slot] = value


#: The marks that stand for names in a :class:`NamedText`'s template (explanations are ASCII
#: text without control characters other than the newline: a text that holds one is kept
#: whole).
_NAME_MARKS = ("\x00", "\x01")

#: Templates of the explanations of this run (:func:`named_text`), each kept once.
_TEMPLATES: dict[str, str] = {}


class NamedText:
    """An explanation kept as a template shared by the findings whose texts differ only by
    the names of the StatefulSet they are about, and those names: reads as the text. (Names
    of one length share templates: a simulated timeline pads pod names to a column.)

    StatefulSets that behave alike get the same simulated timelines: the 25,554 findings of
    a 10,000-document repository have 807 distinct explanations once their names are taken
    out (2.2 MB, where the texts are 114 MB). An output that prints explanations (JSON,
    SARIF) keeps the templates and two names a finding rather than every text, or the
    builders and the check contexts they hold.
    """

    __slots__ = ("names", "template")

    def __init__(self, template: str, names: tuple[str, ...]) -> None:
        self.template = template
        self.names = names

    def __call__(self) -> str:
        text = self.template
        marks = _NAME_MARKS[: len(self.names)]
        for mark, name in reversed(list(zip(marks, self.names, strict=True))):
            if name:
                text = text.replace(mark, name)
        return text

    def __reduce__(self) -> tuple[Any, ...]:  # (from a worker: its templates kept once here)
        return (_named_text, (self.template, self.names))


def _named_text(template: str, names: tuple[str, ...]) -> NamedText:
    return NamedText(_TEMPLATES.setdefault(template, template), names)


def named_text(text: str, names: Sequence[str]) -> NamedText | str:
    """``text`` with each of ``names`` (at most two, longest meaning first: the set's name,
    then its namespace) taken out into a template kept once per run; reading the result gives
    ``text`` back exactly. A text or name that holds a mark is kept whole."""
    if len(names) > len(_NAME_MARKS):
        raise ValueError(f"at most {len(_NAME_MARKS)} names")
    if any(m in text for m in _NAME_MARKS) or any(m in n for n in names for m in _NAME_MARKS):
        return text
    used: list[str] = []
    for mark, name in zip(_NAME_MARKS[: len(names)], names, strict=True):
        replaced = text.replace(name, mark) if name else text
        used.append(name if replaced is not text else "")  # (unchanged: the same object)
        text = replaced
    return _named_text(text, tuple(used))


def forget_templates() -> None:
    """Let the templates of earlier runs go (the findings that use one keep it)."""
    _TEMPLATES.clear()


@dataclass
class RunNote:
    """A fact that holds for many StatefulSets of a run, stated once instead of per set.

    Rules return one from :meth:`ssrisk.rule.Rule.note` for each StatefulSet it applies to;
    the engine merges equal notes and counts the sets (``statefulsets``).
    """

    rule: str
    message: str
    #: The text, or a zero-argument callable that builds it (read as text, like a finding's).
    explanation: _ExplanationField = _ExplanationField()
    references: tuple[str, ...] = ()
    statefulsets: int = 0

    def __getstate__(self) -> dict[str, Any]:
        # A callable explanation cannot cross a process boundary: send its text.
        state = dict(self.__dict__)
        state["_explanation"] = self.explanation
        return state

    def raw_explanation(self) -> str | Callable[[], str]:
        """The explanation as given (text or builder), without building it."""
        value: str | Callable[[], str] = self.__dict__.get("_explanation", "")
        return value

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "message": self.message,
            "explanation": self.explanation,
            "references": list(self.references),
            "statefulsets": self.statefulsets,
        }

    def __str__(self) -> str:
        return f"note {self.rule}: {self.message} ({self.statefulsets} StatefulSet(s))"


#: One fact a finding claims: a count, a duration in seconds (the key ends in ``_s``; ``None``
#: where the message says "not back" or "for ever"), a name, a flag, or a list of ordinals or
#: names.
FactValue = int | float | str | bool | None | tuple[int | str, ...]

#: The facts of a finding that claims no number (shared, read-only).
NO_FACTS: Mapping[str, FactValue] = MappingProxyType({})


@dataclass
class Finding:
    """One risk found by a rule.

    ``position`` is where the user fixes it (the offending field), ``obj`` the object it is
    reported on (normally the StatefulSet; a PDB or StorageClass for rules about those).
    ``explanation`` may be given as text or as a zero-argument callable returning it (built
    only when read; see :meth:`ssrisk.rule.Rule.finding`); it always reads as text, and a
    pickled finding (from a worker process) carries the text. ``facts`` are the numbers and
    names the message claims, as data (snake-case keys, durations in seconds with keys ending
    in ``_s``): what tests and tools read instead of parsing the message.
    """

    rule: str
    severity: Severity
    position: Position
    obj: ObjectRef
    message: str
    explanation: _ExplanationField = _ExplanationField()
    #: Read-only (findings of one rule share their rule's sequence).
    references: Sequence[str] = ()
    facts: Mapping[str, FactValue] = field(default_factory=lambda: NO_FACTS)
    #: Set by :mod:`ssrisk.suppression`: the user accepted this finding (it does not fail the
    #: run). ``suppression_kind`` is ``"annotation"`` or ``"comment"``.
    suppressed: bool = False
    suppression_kind: str | None = None
    suppression_reason: str | None = None
    #: Where the StatefulSet that was being checked starts (set by the engine); tells apart
    #: findings at one place (a shared PDB, say) about different StatefulSets.
    checked_at: Position | None = None
    #: Set by the engine when fixes are asked for (``--fixes``, ``ssrisk fix``): the
    #: smallest change verified to remove this finding (:class:`ssrisk.remedy.Fix`), or
    #: ``None``.
    fix: Any = None
    #: Set by the engine when an output draws timelines (``--format markdown``): the
    #: simulated scenario the finding quotes, as each pod's states (:class:`ssrisk.gantt.
    #: Drawing`), else ``None``.
    drawing: Any = None
    #: Set by the rule: ids of rules whose finding on the same StatefulSet states this one's
    #: cause, most specific first. When one of them reports the set, this finding is folded
    #: into it (one cause, one finding).
    echo_of: tuple[str, ...] = ()
    #: Set by the rule (``Rule.never_folded``): the finding states that data is destroyed, so
    #: it is never folded into another finding, whatever that finding's cause.
    never_folded: bool = False
    #: Set by the engine: the rule this finding was folded into. A folded finding does not
    #: count, is not shown by the text, SARIF, JUnit and GitHub formats, and is kept in the JSON
    #: report marked ``folded_into`` (and in the explanation of the finding it is folded into).
    folded_into: str | None = None

    def __getstate__(self) -> dict[str, Any]:
        # A callable explanation cannot cross a process boundary: send its text (a NamedText
        # goes as it is, its template once per batch of findings pickled together).
        state = dict(self.__dict__)
        if not isinstance(state.get("_explanation"), NamedText):
            state["_explanation"] = self.explanation
        state["facts"] = dict(self.facts)  # (a read-only mapping does not pickle)
        return state

    def sort_key(self) -> tuple[str, int, int, str, str, str]:
        p = self.position
        return (p.path, p.line, p.column, self.rule, self.obj.name, p.scope())

    def facts_data(self) -> dict[str, Any]:
        """``facts`` as JSON data (a list of ordinals or names as a list)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.facts.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": str(self.severity),
            "path": self.position.path,
            "line": self.position.line,
            "column": self.position.column,
            "object": self.obj.to_dict(),
            "message": self.message,
            "facts": self.facts_data(),
            "explanation": self.explanation,
            "references": list(self.references),
            **({"source_template": self.position.source} if self.position.source else {}),
            **(
                {"kustomization": self.position.kustomization}
                if self.position.kustomization
                else {}
            ),
            **({"variant": self.position.variant} if self.position.variant else {}),
            **({"fix": self.fix.to_dict()} if self.fix is not None else {}),
            **({"folded_into": self.folded_into} if self.folded_into else {}),
            **(
                {
                    "suppressed": True,
                    "suppression": {
                        "kind": self.suppression_kind,
                        "reason": self.suppression_reason,
                    },
                }
                if self.suppressed
                else {}
            ),
        }
