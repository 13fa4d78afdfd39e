"""The configuration file: ``.ssrisk.yaml`` or ``[tool.ssrisk]`` in ``pyproject.toml``.

Found by walking up from each checked path, else from the working directory (the first
directory that has either wins; in one directory ``.ssrisk.yaml`` beats ``pyproject.toml``),
or named with ``--config FILE``.
Validated against ``schemas/config.schema.json`` with jsonschema; every problem is a
:class:`ConfigError` naming the file and the position (``path:line:column`` for YAML, the
key path for TOML), which the command line turns into exit code 2.

Command-line flags override the file (see :func:`build_settings`).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections.abc import Collection, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

from . import strictschema
from .embedded_sim.lazyre import lazy
from .model import Position, Severity
from .objectives import Objectives
from .paths import ExcludePattern
from .settings import (
    CONFIG_NAMES,
    DEFAULT_KUBE_VERSION,
    DEFAULT_RELEASE_NAME,
    ChartVariant,
    Settings,
)

PYPROJECT = "pyproject.toml"
SCHEMA_PATH = Path(__file__).with_name("schemas") / "config.schema.json"


class ConfigError(Exception):
    """A configuration file that cannot be read or is not valid (exit code 2).

    ``str(error)`` is ``"<file>[:line:col]: <message>"``, on one line (control characters
    escaped), the message at most :data:`MAX_MESSAGE_CHARS` long: the file comes from the
    checked repository and its values are quoted. ``known`` (the names ssrisk knows, when a
    name was not one of them) follows in full, as ``" (known: a, b, ...)"``: it is ssrisk's own
    text, never cut.
    """

    def __init__(self, message: str, known: Sequence[str] = (), label: str = "known") -> None:
        from .reporters.escape import snippet

        listing = f" ({label}: {', '.join(known)})" if known else ""
        super().__init__(snippet(message, MAX_MESSAGE_CHARS) + listing)
        #: every problem of the file, one line each, in file order (see :meth:`several`)
        self.messages = [str(self.args[0])]

    @classmethod
    def several(cls, errors: Sequence[ConfigError]) -> ConfigError:
        """One error for all ``errors`` of a file (a user fixes them in one go): ``str()``
        gives them one per line, :attr:`messages` as a list."""
        if len(errors) == 1:
            return errors[0]
        combined = cls("\n".join(m for e in errors for m in e.messages))
        combined.messages = [m for e in errors for m in e.messages]
        return combined


MAX_MESSAGE_CHARS = 1000


def _message(err: Any) -> str:
    """A jsonschema message with the offending value cut to a short snippet."""
    from .reporters.escape import snippet

    shown = repr(err.instance)
    return str(err.message).replace(shown, snippet(shown, 60))


class Config(msgspec.Struct):
    """A validated configuration file. Keys are the file's, in snake case; ``None`` = unset.

    ``profile`` maps ClusterProfile field names (snake case, durations in seconds) to values;
    ``positions`` maps a key path such as ``("select", 0)`` to where it is written.
    """

    path: str
    #: the table a file without positions is read from (``[tool.ssrisk]`` of pyproject.toml)
    prefix: str = ""
    select: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()
    severity: dict[str, Severity] = msgspec.field(default_factory=dict)
    #: ``rule-options``: rule id → option name → value (checked against the rules' declared
    #: options by :meth:`unknown_rules` when it is given them)
    rule_options: dict[str, dict[str, float]] = msgspec.field(default_factory=dict)
    fail_on: Severity | None = None
    kube_version: str | None = None
    namespace: str | None = None
    exclude: tuple[str, ...] = ()
    #: The ``baseline`` file, resolved against the configuration file's directory (``None``:
    #: none configured).
    baseline: str | None = None
    profile: dict[str, Any] = msgspec.field(default_factory=dict)
    feature_gates: dict[str, bool] = msgspec.field(default_factory=dict)
    #: The ``objectives`` section, checked and converted (durations in seconds), by scenario.
    objectives: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    #: The ``systems`` section: ``(id, fields as JSON, origin)`` for the catalog of stateful
    #: systems (each entry checked, laid over the built-in one, against its schema).
    systems: tuple[tuple[str, str, str], ...] = ()
    #: The ``api-versions`` list (charts' extra ``.Capabilities.APIVersions``).
    api_versions: tuple[str, ...] = ()
    #: The ``charts`` section: the real path of each chart directory → its renders.
    charts: dict[str, tuple[ChartVariant, ...]] = msgspec.field(default_factory=dict)
    positions: dict[tuple[str | int, ...], Position] = msgspec.field(default_factory=dict)
    #: where the value of a key path is written (``fail-on: warn``: at ``warn``)
    value_positions: dict[tuple[str | int, ...], Position] = msgspec.field(default_factory=dict)

    def where(self, *keys: str | int) -> str:
        """``path:line:col`` of the key path ``keys`` (or of its nearest known parent)."""
        for n in range(len(keys), 0, -1):
            pos = self.positions.get(tuple(keys[:n]))
            if pos is not None:
                return str(pos)
        return self.path + (f" [{'.'.join(str(k) for k in keys)}]" if keys else "")

    def check_rules(self, known: Collection[str]) -> None:
        """Raise :class:`ConfigError` for the rule ids that no installed rule has (all of
        them, in file order)."""
        found = self.unknown_rules(known)
        if found:
            raise ConfigError.several([e for _keys, e in found])

    def unknown_rules(
        self, known: Collection[str]
    ) -> list[tuple[tuple[str | int, ...], ConfigError]]:
        """``(key path, error)`` for each rule id of ``select``, ``disable``, ``severity`` and
        ``rule-options`` that no installed rule has; when ``known`` maps each rule id to its
        options (:attr:`ssrisk.rule.Rule.options`), also for each option the rule does not
        declare or whose value it rejects (:func:`ssrisk.ruleoptions.option_problems`)."""
        out: list[tuple[tuple[str | int, ...], ConfigError]] = []
        for key in ("select", "disable"):
            for i, rule_id in enumerate(getattr(self, key)):
                if rule_id not in known:
                    out.append(((key, i), _unknown(self.where(key, i), "rule", rule_id, known)))
        for rule_id in self.severity:
            if rule_id not in known:
                keys = ("severity", rule_id)
                out.append((keys, _unknown(self.where(*keys), "rule", rule_id, known)))
        for rule_id in self.rule_options:
            if rule_id not in known:
                keys = ("rule-options", rule_id)
                out.append((keys, _unknown(self.where(*keys), "rule", rule_id, known)))
        if isinstance(known, Mapping):
            from .ruleoptions import option_problems

            for sub, message, at_value in option_problems(self.rule_options, known):
                at: tuple[str | int, ...] = ("rule-options", *sub)
                place = (_where_value if at_value else _where)(self, at, self.prefix)
                out.append((at, ConfigError(f"{place}: rule-options: {message}")))
        return out


def _unknown(where: str, what: str, name: str, known: Collection[str]) -> ConfigError:
    """``<where>: unknown <what> 'name': did you mean 'x'? (known: ...)``."""
    from .names import closest

    close = closest(name, known)
    hint = f": did you mean {close!r}?" if close else ""
    return ConfigError(f"{where}: unknown {what} {name!r}{hint}", sorted(known))


def find_config(start: Path | None = None) -> Path | None:
    """The configuration file for a run started in ``start`` (default: the working directory).

    Walks up from ``start`` to the filesystem root; returns the first ``.ssrisk.yaml``
    (or ``.ssrisk.yml``), or ``pyproject.toml`` that has a ``[tool.ssrisk]`` table.
    """
    return _ConfigFinder()(start)


class _ConfigFinder:
    """:func:`find_config` for many starts, each directory looked at once (real paths resolved
    once per directory, :class:`ssrisk.confine.RealPaths`): the files of a tree nested D
    levels deep cost D looks, not D*D (800 levels took 15 s)."""

    def __init__(self) -> None:
        from .confine import RealPaths

        self.realpath = RealPaths()
        #: directory (a real path) -> the configuration at or above it
        self.nearest: dict[Path, Path | None] = {}

    def __call__(self, start: Path | None) -> Path | None:
        directory = Path(self.realpath(str(start or Path.cwd())))
        chain: list[Path] = []
        while directory not in self.nearest:
            chain.append(directory)
            found = _config_in(directory)
            if found is not None:
                break
            if directory.parent == directory:
                break
            directory = directory.parent
        else:
            found = self.nearest[directory]
        for below in chain:
            self.nearest[below] = found
        return found


def configs_for(paths: Sequence[str]) -> dict[Path | None, list[str]]:
    """The checked ``paths`` grouped by the configuration file that applies to each, in the
    order first met.

    A path's configuration is found walking up from it (from its directory for a file), as
    ruff and kube-linter do, else from the working directory; ``-`` (standard input) uses the
    working directory's. Each directory is looked at once (the pre-commit hook passes many
    files of few directories).
    """
    finder = _ConfigFinder()
    groups: dict[Path | None, list[str]] = {}
    for path in paths:
        found = None
        if path != "-":
            start = Path(path) if os.path.isdir(path) else Path(path).parent
            found = finder(start)
        if found is None:
            found = finder(None)
        groups.setdefault(found, []).append(path)
    return groups


def _config_in(directory: Path) -> Path | None:
    """The configuration file of ``directory`` itself, if it has one."""
    for name in CONFIG_NAMES:
        candidate = directory / name
        if _present(candidate):
            return candidate
    pyproject = directory / PYPROJECT
    if _present(pyproject) and _has_tool_table(pyproject):
        return pyproject
    return None


def _present(path: Path) -> bool:
    """Whether a configuration file is there: anything but a directory, and a symbolic link
    whatever it leads to. Reading then refuses a link out of the tree and what is not a
    regular file, so what lies outside the tree (a file, a directory, nothing) and a pipe
    planted in it never make a silent difference."""
    try:
        mode = os.lstat(path).st_mode  # (one look per directory walked up)
    except (OSError, ValueError):
        return False
    return not stat.S_ISDIR(mode)


def _has_tool_table(path: Path) -> bool:
    try:
        raw = _read_config_bytes(path, str(path))
    except ConfigError:
        return True  # report the broken file rather than silently skipping it
    if not any(sign in raw for sign in (b"ssrisk", b"\\u", b"\\U", b"\x00")):
        # a [tool.ssrisk] table names ssrisk in the text (or spells it with an escape in a
        # quoted key; a UTF-16 or UTF-32 file, which TOML refuses, has NUL bytes): most
        # pyproject.toml files are not parsed (4 ms of a pre-commit run)
        return False
    try:
        data = _toml_load(path)
    except ConfigError:
        return True
    tool = data.get("tool")
    return isinstance(tool, Mapping) and "ssrisk" in tool


def _toml_load(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    raw = _read_config_bytes(path, str(path))
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: TOML syntax: {exc}") from None
    except ValueError:  # an integer past Python's 4,300-digit limit
        raise ConfigError(f"{path}: a number with too many digits to read") from None
    except RecursionError:
        raise ConfigError(f"{path}: nesting too deep to read") from None


def load_config(path: str | Path, known_rules: Collection[str] | None = None) -> Config:
    """Read and validate a configuration file (YAML, or TOML when named ``*.toml``); with
    ``known_rules`` (the installed rule ids), rule ids are checked too.

    Raises:
        ConfigError: unreadable file, bad syntax, or every unknown key, bad value and
            unknown rule id of the file at once, in file order (``messages``), each with the
            position of the offending key or value.
    """
    p = Path(path)
    shown = str(path)
    if p.suffix == ".toml":
        data = _toml_load(p)
        tool = data.get("tool")
        section = tool.get("ssrisk") if isinstance(tool, Mapping) else None
        if section is None:
            raise ConfigError(f"{shown}: no [tool.ssrisk] table")
        positions: dict[tuple[str | int, ...], Position] = {}
        section = _plain(section, [MAX_CONFIG_VALUES], shown)
        return _validate(section, shown, positions, "[tool.ssrisk]", {}, known_rules)
    doc, positions, values = _yaml_load(p, shown)
    if doc is None:
        return Config(path=shown)  # an empty file: every default
    return _validate(doc, shown, positions, "", values, known_rules)


#: A configuration file is a few hundred bytes, or a profile of a few thousand nodes (ssrisk
#: profile: a node name is one value, the labels a pool has besides those all nodes share a
#: few more); anything past these limits is not one.
MAX_CONFIG_BYTES = 1024 * 1024
MAX_CONFIG_VALUES = 50_000


def _read_config_bytes(p: Path, shown: str) -> bytes:
    """The bytes of a configuration file, refused when it is a symbolic link that leaves its
    repository (or enters ``.git``), not a regular file, or larger than
    :data:`MAX_CONFIG_BYTES` (:mod:`ssrisk.confine`)."""
    from .confine import refusal, tree_of
    from .loading import TooLarge, read_bounded

    refused = refusal(str(p), tree_of(str(p)))
    if refused is not None:
        raise ConfigError(f"{shown}: {refused}")
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):  # (a pipe would block the run)
            raise ConfigError(f"{shown}: not a regular file; not read")
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    try:
        return read_bounded(str(p), MAX_CONFIG_BYTES)
    except TooLarge as exc:
        raise ConfigError(f"{shown}: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None


def _yaml_load(
    p: Path, shown: str
) -> tuple[Any, dict[tuple[str | int, ...], Position], dict[tuple[str | int, ...], Position]]:
    """Read a YAML configuration with the manifest reader (:mod:`ssrisk.yamlpos`): no tag
    constructs anything, aliases are shared while reading, nesting is limited, and the
    expanded document is limited to :data:`MAX_CONFIG_VALUES` values (an alias bomb)."""
    import yaml

    from .yamlevents import build, compose_documents
    from .yamlpos import YamlInputError

    raw = _read_config_bytes(p, shown)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        nodes = list(compose_documents(text))
        if len(nodes) > 1:
            mark = nodes[1].start_mark if nodes[1] is not None else None
            where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark else shown
            raise ConfigError(f"{where}: more than one YAML document")
        doc, duplicates = build(nodes[0] if nodes else None)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark else shown
        raise ConfigError(f"{where}: YAML syntax: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{shown}: YAML syntax: {exc}") from None
    except YamlInputError as exc:
        where = shown if exc.line is None else f"{shown}:{exc.line + 1}:{(exc.column or 0) + 1}"
        raise ConfigError(f"{where}: {exc.message}") from None
    if duplicates:
        dup = duplicates[0]
        raise ConfigError(
            f"{shown}:{dup.line + 1}:{dup.column + 1}: duplicate key {dup.key!r} "
            f"(first at line {dup.first_line + 1})"
        )
    budget = [MAX_CONFIG_VALUES]
    positions: dict[tuple[str | int, ...], Position] = {}
    plain = _plain(doc, budget, shown)
    _collect_positions(doc, (), shown, positions)
    values: dict[tuple[str | int, ...], Position] = {}
    _value_positions(nodes[0] if nodes else None, (), shown, values)
    return plain, positions, values


def _value_positions(
    node: Any, keys: tuple[str | int, ...], path: str, out: dict[tuple[str | int, ...], Position]
) -> None:
    """Where each scalar value of the composed ``node`` is written, by key path (for
    messages about a value: ``fail-on: warn`` at ``warn``, not at ``fail-on``)."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    stack = [(node, keys)]
    seen: set[int] = set()
    while stack:
        here, at = stack.pop()
        if id(here) in seen or len(out) > MAX_CONFIG_VALUES:
            continue
        seen.add(id(here))
        if isinstance(here, MappingNode):
            for k, v in here.value:
                if isinstance(k, ScalarNode):
                    stack.append((v, (*at, str(k.value))))
        elif isinstance(here, SequenceNode):
            stack.extend((v, (*at, i)) for i, v in enumerate(here.value))
        elif isinstance(here, ScalarNode) and at:
            mark = here.start_mark
            out[at] = Position(path, mark.line + 1, mark.column + 1)


def _collect_positions(
    node: Any,
    keys: tuple[str | int, ...],
    path: str,
    out: dict[tuple[str | int, ...], Position],
) -> None:
    lc = getattr(node, "lc", None)
    if isinstance(node, Mapping):
        for k, v in node.items():
            child: tuple[str | int, ...] = (*keys, str(k))
            if lc is not None:
                line, col = lc.key(k)
                out[child] = Position(path, line + 1, col + 1)
            _collect_positions(v, child, path, out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            item: tuple[str | int, ...] = (*keys, i)
            if lc is not None:
                line, col = lc.item(i)
                out[item] = Position(path, line + 1, col + 1)
            _collect_positions(v, item, path, out)


def _plain(node: Any, budget: list[int], shown: str, depth: int = 0) -> Any:
    """The loaded document as plain JSON-like values (so jsonschema sees JSON types), with
    at most ``budget[0]`` values once aliases are expanded and at most :data:`MAX_DEPTH`
    levels (an alias that contains itself, ``&a [*a]``, is infinitely deep).

    Raises:
        ConfigError: too many values or levels, or a number beyond 64 bits.
    """
    budget[0] -= 1
    if budget[0] < 0:
        raise ConfigError(
            f"{shown}: more than {MAX_CONFIG_VALUES} values once YAML aliases are expanded; "
            "not a configuration file"
        )
    from .yamlpos import MAX_DEPTH

    if depth > MAX_DEPTH and isinstance(node, (Mapping, list)):
        raise ConfigError(
            f"{shown}: nesting deeper than {MAX_DEPTH} levels once YAML aliases are expanded "
            "(an alias that contains itself?); not a configuration file"
        )
    if isinstance(node, Mapping):
        return {str(k): _plain(v, budget, shown, depth + 1) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v, budget, shown, depth + 1) for v in node]
    if isinstance(node, int) and not isinstance(node, bool) and not -(2**63) <= node < 2**64:
        raise ConfigError(f"{shown}: a number larger than 64 bits; not a configuration value")
    return node


@cache
def config_schema() -> dict[str, Any]:
    """The JSON Schema of the configuration (``ssrisk/schemas/config.schema.json``)."""
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


#: ``(key path, error)``: one problem of a configuration file, placed by its key path
_Problem = tuple[tuple[str | int, ...], ConfigError]


def _validate(
    doc: Any,
    shown: str,
    positions: dict[tuple[str | int, ...], Position],
    prefix: str,
    value_positions: dict[tuple[str | int, ...], Position],
    known_rules: Collection[str] | None,
) -> Config:
    """The :class:`Config` of a loaded document; every problem found (schema, values, rule
    ids when ``known_rules`` is given) is raised at once, in file order."""
    import jsonschema

    cfg = Config(path=shown, prefix=prefix, positions=positions, value_positions=value_positions)
    _check_finite(cfg, doc, (), prefix)
    validator = strictschema.validator(config_schema())
    errors = sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    by_key: dict[str, list[Any]] = {}
    for err in errors:  # one message per top-level key: the best match among its errors
        top = err.absolute_path[0] if err.absolute_path else ""
        by_key.setdefault(str(top), []).append(err)
    problems: list[_Problem] = [
        _schema_problem(cfg, jsonschema.exceptions.best_match(group), prefix)
        for group in by_key.values()
    ]
    if "" in by_key:  # an unknown top-level key: the values are not read further
        _raise_in_order(cfg, problems)
    ok = {k: v for k, v in doc.items() if k not in by_key}
    cfg.select = tuple(ok.get("select") or ())
    cfg.disable = tuple(ok.get("disable") or ())
    cfg.severity = {k: Severity.parse(v) for k, v in (ok.get("severity") or {}).items()}
    cfg.rule_options = {k: dict(v) for k, v in (ok.get("rule-options") or {}).items()}
    if "fail-on" in ok:
        cfg.fail_on = Severity.parse(ok["fail-on"])
    if "kube-version" in ok:
        from .settings import normal_kube_version

        try:
            cfg.kube_version = normal_kube_version(ok["kube-version"])
        except ValueError as exc:
            where = _where_value(cfg, ("kube-version",), prefix)
            problems.append((("kube-version",), ConfigError(f"{where}: {exc}")))
    cfg.namespace = ok.get("namespace")
    cfg.exclude = tuple(ok.get("exclude") or ())
    if "baseline" in ok:
        try:
            cfg.baseline = _baseline_path(cfg, ok["baseline"], prefix)
        except ConfigError as exc:
            problems.append((("baseline",), exc))
    cfg.profile = _profile(cfg, ok.get("profile") or {}, prefix, problems)
    cfg.feature_gates = _feature_gates(cfg, ok.get("feature-gates") or {}, prefix, problems)
    try:
        cfg.objectives = _objectives(cfg, ok.get("objectives") or {}, prefix)
    except ConfigError as exc:
        problems.append((("objectives",), exc))
    cfg.systems = _systems(cfg, ok.get("systems") or {}, prefix, problems)
    cfg.api_versions = tuple(ok.get("api-versions") or ())
    cfg.charts = _charts(cfg, ok.get("charts") or {}, prefix, problems)
    if known_rules is not None:
        problems += cfg.unknown_rules(known_rules)
    _raise_in_order(cfg, problems)
    return cfg


#: Catalog patterns searched in a container's command line (:func:`ssrisk.rules._systems.
#: program_line`), which is empty when the container runs its image's entrypoint: a pattern
#: that matches the empty line would match every container, and none is searched in one.
_PROGRAM_PATTERNS = (("recognise", "args"), ("recognise", "clients"))


def _systems(
    cfg: Config, raw: Mapping[str, Any], prefix: str, problems: list[_Problem]
) -> tuple[tuple[str, str, str], ...]:
    """The ``systems`` section as ``(id, fields as JSON, origin)``: each entry laid over the
    built-in entry of its id (a section replaces the built-in one whole) must follow
    ``ssrisk/schemas/system.schema.json``; a problem names the key where it is written."""
    import json

    import jsonschema

    from .rules._systems import (
        builtin_entries,
        entry_patterns,
        merge_entry,
        pattern_problem,
        system_schema,
    )

    validator = strictschema.validator(system_schema(), format_checker=jsonschema.FormatChecker())
    builtin = builtin_entries()
    known = set(builtin) | set(raw)
    out: list[tuple[str, str, str]] = []
    for system_id, entry in raw.items():
        found: list[tuple[tuple[str | int, ...], str]] = []
        if "id" in entry and entry["id"] != system_id:
            found.append((("id",), f"{entry['id']!r} is not the entry's key {system_id!r}"))
        merged = merge_entry(builtin.get(system_id), {**entry, "id": system_id})
        for err in sorted(validator.iter_errors(merged), key=lambda e: list(map(str, e.path))):
            found.append((tuple(err.absolute_path), _message(err)))
        if not found:  # the patterns and ids of an entry of the right shape
            for path, pattern in entry_patterns(entry):
                problem = pattern_problem(pattern)
                if problem is None and path[:2] in _PROGRAM_PATTERNS and re.search(pattern, ""):
                    problem = "it matches an empty command line (every container's)"
                if problem:
                    found.append((path, f"pattern {pattern!r} is refused: {problem}"))
            promoters = (entry.get("replication") or {}).get("promoted_by") or ()
            for i, other in enumerate(promoters):
                if other not in known or other == system_id:
                    why = "is the system itself" if other == system_id else "names no system"
                    found.append((("replication", "promoted_by", i), f"{other!r} {why}"))
            shutdown = merged.get("shutdown") or {}
            low, high = shutdown.get("minimum_s"), shutdown.get("grace_s")
            if low is not None and high is not None and low > high:
                text = f"minimum_s {low} is more than grace_s {high} (what a shutdown may take)"
                found.append((("shutdown", "minimum_s"), text))
        for at, text in found:
            keys: tuple[str | int, ...] = ("systems", system_id, *at)
            shown = "/".join(str(k) for k in at) or system_id
            where = _where(cfg, keys, prefix)
            problems.append((keys, ConfigError(f"{where}: systems: {system_id}: {shown}: {text}")))
        if not found:
            where_s = cfg.where("systems", system_id)
            out.append((system_id, json.dumps(entry, sort_keys=True), where_s))
    return tuple(out)


def _raise_in_order(cfg: Config, problems: list[_Problem]) -> None:
    """Raise every problem as one :class:`ConfigError`, in the order the file has them."""
    if not problems:
        return

    def place(keys: tuple[str | int, ...]) -> tuple[int, int]:
        for n in range(len(keys), 0, -1):
            pos = cfg.positions.get(tuple(keys[:n]))
            if pos is not None:
                return pos.line, pos.column
        return 0, 0

    ordered = sorted(enumerate(problems), key=lambda p: (place(p[1][0]), p[0]))
    raise ConfigError.several([e for _i, (_keys, e) in ordered])


def _schema_problem(cfg: Config, err: Any, prefix: str) -> _Problem:
    """The problem a jsonschema error states, at the key (a bad or unknown name) or the
    value (a bad value) it concerns."""
    keys = tuple(err.absolute_path)
    if "propertyNames" in err.absolute_schema_path and isinstance(err.instance, str):
        where = _where(cfg, (*keys, err.instance), prefix)
        message = f"{where}: {keys[0] if keys else 'key'}: bad name {_message(err)}"
        return (*keys, err.instance), ConfigError(message)
    if err.validator == "additionalProperties" and isinstance(err.instance, Mapping):
        names = err.schema.get("properties", {})
        extra = sorted(set(err.instance) - set(names))
        if extra and (not keys or keys[0] in ("objectives", "charts")):  # at the unknown key
            where = _where(cfg, (*keys, extra[0]), prefix)
            if keys:  # "objectives node-loss: unknown key ..."
                where += ": " + " ".join(str(k) for k in keys)
            return (*keys, extra[0]), _unknown(where, "key", extra[0], names)
    return keys, ConfigError(f"{_where_value(cfg, keys, prefix)}: {_describe(err, keys)}")


def _check_finite(cfg: Config, value: Any, keys: tuple[str | int, ...], prefix: str) -> None:
    """An infinite or NaN number anywhere in the configuration (``1e309``, ``.inf``, TOML's
    ``nan``) is an error at its key: no setting takes one."""
    if isinstance(value, float) and not math.isfinite(value):
        shown = " ".join(str(k) for k in keys) or "value"
        raise ConfigError(
            f"{_where_value(cfg, keys, prefix)}: {shown} must be a finite number, not {value}"
        )
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_finite(cfg, v, (*keys, str(k)), prefix)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(cfg, v, (*keys, i), prefix)


def _baseline_path(cfg: Config, value: str, prefix: str) -> str:
    """``baseline:`` resolved against the configuration file's directory, spelt relative to
    the working directory when it is below it.

    Raises:
        ConfigError: the file is (or its links lead) outside the configuration file's
            repository or into ``.git`` (:mod:`ssrisk.confine`), as for every file ssrisk reads.
    """
    from .confine import refusal, tree_of

    target = _config_relative(cfg, value)
    refused = refusal(target, tree_of(cfg.path))
    if refused is not None:
        raise ConfigError(f"{_where(cfg, ('baseline',), prefix)}: baseline {value!r}: {refused}")
    return target


def _config_relative(cfg: Config, value: str) -> str:
    """A path of the configuration (relative to its file's directory), spelt relative to the
    working directory when it is below it."""
    from .paths import tidy

    target = os.path.join(os.path.dirname(os.path.abspath(cfg.path)), value)
    cwd = os.getcwd()
    if target.startswith(cwd + os.sep):
        target = target[len(cwd) + 1 :]
    return tidy(target)


def _charts(
    cfg: Config, raw: Mapping[str, Any], prefix: str, problems: list[_Problem]
) -> dict[str, tuple[ChartVariant, ...]]:
    """The ``charts`` section (the schema checked its shape): each chart directory, inside
    the configuration's repository and holding a ``Chart.yaml``, by real path, with one
    :class:`~ssrisk.settings.ChartVariant` per variant (one unnamed render without variants).
    Values files must lie inside the repository too (they are read from the checked tree, as
    every input); a problem names the key where it is written."""
    from .confine import refusal, tree_of
    from .renderers.common import is_chart

    tree = tree_of(cfg.path)
    out: dict[str, tuple[ChartVariant, ...]] = {}

    def problem(keys: tuple[str | int, ...], message: str) -> None:
        problems.append((keys, ConfigError(f"{_where(cfg, keys, prefix)}: {message}")))

    def values_files(keys: tuple[str | int, ...], files: Sequence[str]) -> tuple[str, ...]:
        kept = []
        for i, name in enumerate(files):
            path = _config_relative(cfg, name)
            refused = refusal(path, tree)
            if refused is None and not os.path.isfile(path):
                refused = "no such file" if not os.path.lexists(path) else "not a file"
            if refused is not None:
                problem((*keys, "values", i), f"values file {name!r}: {refused}")
            else:
                kept.append(path)
        return tuple(kept)

    seen: dict[str, str] = {}
    for chart, entry in raw.items():
        keys: tuple[str | int, ...] = ("charts", chart)
        directory = _config_relative(cfg, chart)
        real = os.path.realpath(directory)
        if real in seen:
            problem(keys, f"chart {chart!r} is the directory {seen[real]!r} names too")
            continue
        seen[real] = chart
        refused = refusal(directory, tree)
        if refused is not None:
            problem(keys, f"chart {chart!r}: {refused}")
            continue
        if not is_chart(directory):
            problem(keys, f"chart {chart!r}: not a Helm chart directory (no Chart.yaml there)")
            continue
        holder = os.path.dirname(os.path.abspath(directory))  # (charts/ of a parent chart?)
        parent = os.path.dirname(holder)
        if os.path.basename(holder) == "charts" and is_chart(parent):
            # a subchart renders with its parent, and takes its values from it
            problem(
                keys,
                f"chart {chart!r} is a subchart of {os.path.relpath(parent)!r}, which renders "
                "it: configure the parent, and the subchart's values under its name there",
            )
            continue

        def set_at(at: tuple[str | int, ...], values: Mapping[str, Any]) -> tuple[Any, ...]:
            """Each ``set`` key's value position, shown as the run's other paths are."""
            found = ((k, cfg.value_positions.get((*at, "set", k))) for k in values)
            return tuple(
                (
                    k,
                    msgspec.structs.replace(
                        pos, path=_config_relative(cfg, os.path.basename(cfg.path))
                    ),
                )
                for k, pos in found
                if pos is not None
            )

        base = ChartVariant(
            values=values_files(keys, entry.get("values") or ()),
            set_values=_set_expressions(entry.get("set") or {}),
            release=entry.get("release") or DEFAULT_RELEASE_NAME,
            namespace=entry.get("namespace"),
            set_positions=set_at(keys, entry.get("set") or {}),
        )
        variants = entry.get("variants") or {"": {}}
        out[os.path.realpath(directory)] = tuple(
            ChartVariant(
                name=name,
                values=(
                    *base.values,
                    *values_files((*keys, "variants", name), v.get("values") or ()),
                ),
                set_values=(*base.set_values, *_set_expressions(v.get("set") or {})),
                release=v.get("release") or base.release,
                namespace=v.get("namespace") or base.namespace,
                set_positions=(
                    *base.set_positions,
                    *set_at((*keys, "variants", name), v.get("set") or {}),
                ),
            )
            for name, v in variants.items()
        )
    return out


def _set_expressions(values: Mapping[str, Any]) -> tuple[str, ...]:
    """``set:`` as ``helm --set`` expressions: ``key=value``, a boolean as ``true``/``false``,
    commas and backslashes in a value escaped (helm pkg/strvals: ``\\,`` is a literal comma,
    not the start of another assignment)."""
    out = []
    for key, value in values.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        else:
            text = str(value).replace("\\", "\\\\").replace(",", "\\,")
        out.append(f"{key}={text}")
    return tuple(out)


def _objectives(cfg: Config, raw: Mapping[str, Any], prefix: str) -> dict[str, dict[str, Any]]:
    """Check the ``objectives`` values (the schema checked the names and types)."""
    from .objectives import check_section

    try:
        return check_section(raw)
    except ValueError as exc:
        scenario, key = exc.args[1]
        where = _where(cfg, ("objectives", scenario, key), prefix)
        raise ConfigError(f"{where}: objectives {scenario} {key}: {exc.args[0]}") from None


def _where_value(cfg: Config, keys: tuple[str | int, ...], prefix: str) -> str:
    """Where the value at ``keys`` is written when it is a scalar, else as :func:`_where`."""
    pos = cfg.value_positions.get(keys) if keys else None
    return str(pos) if pos is not None else _where(cfg, keys, prefix)


def _where(cfg: Config, keys: tuple[str | int, ...], prefix: str) -> str:
    """Where ``keys`` is written: ``file:line:col``, or for a file read without positions
    (TOML) the file and its table (every message names the key itself)."""
    if cfg.positions:
        return cfg.where(*keys)
    return f"{cfg.path}: {prefix}".rstrip()


def _describe(err: Any, keys: tuple[str | int, ...]) -> str:
    """A one-line message for a jsonschema error, in the config's own words."""
    validator = err.validator
    name = str(keys[0]) if keys else "configuration"
    if name == "kube-version" and isinstance(err.instance, (int, float)):
        return (
            f'kube-version must be a string such as "1.30" (unquoted, {err.instance!r} is '
            "a number and 1.30 would read as 1.3)"
        )
    if name == "kube-version" and validator == "pattern":
        return f"unsupported Kubernetes version {err.instance!r}: use 1.25 to 1.37"
    last = str(keys[-1]) if keys else ""
    if name == "objectives" and last in ("max-unavailable", "recover-within", "complete-within"):
        what = "max-unavailable" if last == "max-unavailable" else "duration"
        usage = (
            "a whole number ≥ 0, a percentage such as 33%, or minority"
            if what == "max-unavailable"
            else "seconds, or a string such as 90s, 15m or 1h30m"
        )
        return f"{' '.join(str(k) for k in keys)}: {err.instance!r} is not {usage}"
    if name == "charts" and len(keys) > 1:  # chart directories and variants: name the key
        return f"{' '.join(str(k) for k in keys)}: {_message(err)}"
    if validator == "maxItems":
        return f"{name}: {len(err.instance)} entries (at most {err.validator_value})"
    if validator == "maxLength":
        where = " ".join(str(k) for k in keys)
        return f"{where}: {len(err.instance)} characters (at most {err.validator_value})"
    return f"{name}: {_message(err)}"


def _kebab_to_snake(key: str) -> str:
    return key.replace("-", "_")


def _profile(
    cfg: Config, raw: Mapping[str, Any], prefix: str, problems: list[_Problem]
) -> dict[str, Any]:
    """Check ``profile`` keys and value types against the simulator's ClusterProfile; each
    bad one is added to ``problems``."""
    try:
        from .embedded_sim.profile import ClusterProfile
    except ImportError:  # the simulator is not installed: pass the values through unchecked
        return {_kebab_to_snake(k): v for k, v in raw.items()}
    written = ClusterProfile.__annotations__  # (the annotations as written: strings)
    types = {n: str(written[n]) for n in ClusterProfile.__struct_fields__ if n != "nodes"}
    out: dict[str, Any] = {}
    shape = {"zones": 3, "nodes_per_zone": 2}  # the simulated cluster (default_nodes)
    limits = {"zones": 26, "nodes_per_zone": 50}
    for key, value in raw.items():
        try:
            _profile_setting(cfg, key, value, prefix, types, shape, limits, out)
        except ConfigError as exc:
            problems.append((("profile", key), exc))
    return out


def _profile_setting(
    cfg: Config,
    key: str,
    value: Any,
    prefix: str,
    types: Mapping[str, str],
    shape: dict[str, int],
    limits: Mapping[str, int],
    out: dict[str, Any],
) -> None:
    """Check one ``profile`` setting and put it in ``out``.

    Raises:
        ConfigError: an unknown setting (at its key) or a bad value (at the value).
    """
    from .embedded_sim.profile import default_nodes

    name = _kebab_to_snake(key)
    if (
        name not in shape
        and name not in NODE_SETTINGS
        and name != "nodes"
        and (name not in types or name in INTERNAL_PROFILE_FIELDS)
    ):
        known = [
            n.replace("_", "-")
            for n in [*types, *shape, "nodes"]
            if n not in INTERNAL_PROFILE_FIELDS
        ]
        raise _unknown(_where(cfg, ("profile", key), prefix), "profile setting", key, known)
    where = _where_value(cfg, ("profile", key), prefix)
    if name in shape:
        if out.get("placeholder_names") is False:
            raise ConfigError(f"{where}: profile {key} cannot be given with profile nodes")
        ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok or not 1 <= value <= limits[name]:
            raise ConfigError(
                f"{where}: profile {key} must be a whole number from 1 to {limits[name]}"
            )
        shape[name] = value
        out["nodes"] = default_nodes(shape["zones"], shape["nodes_per_zone"])
        out["shape_stated"] = True
        return
    if name in NODE_SETTINGS:
        out[name] = _node_setting(key, name, value, where)
        return
    if name == "nodes":
        if "nodes" in out:
            raise ConfigError(
                f"{where}: profile nodes cannot be given with zones or nodes-per-zone"
            )
        out["nodes"] = _node_pools(key, value, where)
        out["shape_stated"] = True
        out["placeholder_names"] = False
        return
    expected = types[name]
    if not _type_ok(value, expected):
        raise ConfigError(f"{where}: profile {key} must be {_type_words(expected)}")
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number:
        _check_range(where, key, name, value)
    choices = PROFILE_CHOICES.get(name)
    if choices is not None and value not in choices:
        raise ConfigError(f"{where}: profile {key} must be one of {', '.join(choices)}")
    out[name] = float(value) if "float" in expected and isinstance(value, int) else value


#: ClusterProfile fields the configuration derives itself (from ``zones`` / ``nodes-per-zone``
#: and the node names), not settings.
INTERNAL_PROFILE_FIELDS = frozenset({"shape_stated", "placeholder_names"})
#: Profile settings that describe the simulated nodes (embedded_sim/nodes.py): the labels and
#: taints of every node and their allocatable resources.
NODE_SETTINGS = ("node_labels", "node_taints", "node_allocatable")


def _label_text(value: Any) -> str:
    """A YAML scalar as the label string kubectl would send (true -> "true")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _node_setting(key: str, name: str, value: Any, where: str) -> Any:
    """node-labels {key: value}, node-taints [{key, value, effect}], node-allocatable
    {cpu, memory, pods}, checked and turned into the ClusterProfile's values."""
    from .embedded_sim.podtemplate import TAINT_EFFECTS
    from .embedded_sim.profile import Allocatable, NodeTaint
    from .embedded_sim.quantity import parse_quantity
    from .embedded_sim.selectors import is_label_value, is_qualified_name

    def label(k: Any, v: Any) -> tuple[str, str]:
        text = _label_text(v)
        if not is_qualified_name(str(k)):
            raise ConfigError(f"{where}: profile {key}: {k!r} is not a valid label key")
        if not is_label_value(text):
            raise ConfigError(f"{where}: profile {key}: {text!r} is not a valid label value")
        return str(k), text

    if name == "node_labels":
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: profile {key} must be a mapping of label keys to values")
        return tuple(sorted(label(k, v) for k, v in value.items()))
    if name == "node_taints":
        if not isinstance(value, list):
            raise ConfigError(f"{where}: profile {key} must be a list of {{key, value, effect}}")
        taints = []
        for t in value:
            ok = isinstance(t, Mapping) and t.get("effect") in TAINT_EFFECTS and t.get("key")
            if not ok:
                raise ConfigError(
                    f"{where}: profile {key}: each taint needs a key and an effect "
                    f"({', '.join(TAINT_EFFECTS)})"
                )
            k, v = label(t["key"], t.get("value", ""))
            taints.append(NodeTaint(k, str(t["effect"]), v))
        return tuple(taints)
    if not isinstance(value, Mapping) or set(value) - {"cpu", "memory", "pods"}:
        raise ConfigError(f"{where}: profile {key} takes cpu, memory and pods")
    base = Allocatable()
    cpu = parse_quantity(value.get("cpu", base.cpu_m / 1000))
    memory = parse_quantity(value.get("memory", base.memory_b))
    pods = value.get("pods", base.pods)
    finite = cpu is not None and memory is not None and math.isfinite(cpu + memory)
    if not finite or cpu is None or cpu <= 0 or memory is None or memory <= 0:
        raise ConfigError(
            f"{where}: profile {key}: cpu and memory must be positive quantities such as "
            '"4", "3500m", "16Gi"'
        )
    if isinstance(pods, bool) or not isinstance(pods, int) or not 1 <= pods <= 10000:
        raise ConfigError(f"{where}: profile {key}: pods must be a whole number from 1 to 10000")
    return Allocatable(round(cpu * 1000), round(memory), pods)


#: Most nodes a profile may list (a pool's count included): more than any scheduler benchmark
#: of a single cluster the simulator is meant for, and a bound on what a hostile file costs.
MAX_PROFILE_NODES = 5000
#: A Node's name: a DNS subdomain (RFC 1123; the API server's ValidateNodeName).
NODE_NAME_RE = lazy(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
#: The keys of one entry of ``profile: nodes:`` (a pool of identical nodes).
POOL_KEYS = ("pool", "zone", "count", "names", "labels", "taints", "allocatable")


def _node_pools(key: str, value: Any, where: str) -> tuple[Any, ...]:
    """``profile: nodes:``, the cluster's node pools (what ``ssrisk profile`` writes), as the
    simulator's NodeSpecs: each pool ``{pool, zone, count, names, labels, taints,
    allocatable}`` gives ``count`` nodes (named ``names``, else ``<pool>-<i>``) in ``zone``
    with those labels, taints and allocatable resources.

    Raises:
        ConfigError: a pool that is not a mapping of those keys, a count that does not match
            its names, more than :data:`MAX_PROFILE_NODES` nodes or a repeated node name.
    """
    from .embedded_sim.profile import NodeSpec
    from .embedded_sim.selectors import is_label_value

    if not isinstance(value, list) or not value:
        raise ConfigError(f"{where}: profile {key} must be a list of node pools")
    out: list[NodeSpec] = []
    seen: set[str] = set()
    for i, pool in enumerate(value):
        at = f"{where}: profile {key}[{i}]"
        if not isinstance(pool, Mapping) or set(pool) - set(POOL_KEYS):
            raise ConfigError(f"{at} must be a mapping of {', '.join(POOL_KEYS)}")
        name = _label_text(pool.get("pool", f"pool{i + 1}"))
        zone = _label_text(pool.get("zone", ""))
        if zone and not is_label_value(zone):
            raise ConfigError(f"{at}: zone {zone!r} is not a valid label value")
        names = pool.get("names")
        count = pool.get("count", len(names) if isinstance(names, list) else None)
        ok = isinstance(count, int) and not isinstance(count, bool) and count >= 1
        if not ok or len(out) + count > MAX_PROFILE_NODES:
            raise ConfigError(
                f"{at}: count must be a whole number from 1, with at most "
                f"{MAX_PROFILE_NODES} nodes in all"
            )
        if names is None:
            names = [f"{name}-{n}" for n in range(1, count + 1)]
        if not isinstance(names, list) or len(names) != count:
            raise ConfigError(f"{at}: names must list count ({count}) node names")
        labels = _node_setting(f"{key}[{i}] labels", "node_labels", pool.get("labels") or {}, where)
        taints = _node_setting(f"{key}[{i}] taints", "node_taints", pool.get("taints") or [], where)
        alloc = pool.get("allocatable")
        allocatable = (
            None
            if alloc is None
            else _node_setting(f"{key}[{i}] allocatable", "node_allocatable", alloc, where)
        )
        for n in names:
            text = _label_text(n)
            if len(text) > 253 or not NODE_NAME_RE.fullmatch(text) or text in seen:
                raise ConfigError(f"{at}: node name {text!r} is not a valid or unique name")
            seen.add(text)
            out.append(NodeSpec(text, zone, labels, taints, allocatable))
    return tuple(out)


#: Longest duration a profile value may give: one year (the simulated horizon is a day, so
#: anything longer already means "never"; a larger value is a typo).
MAX_PROFILE_S = 365 * 86400.0
#: Profile values the simulator steps or divides by: a period of 0 would never advance
#: (``podgc-period-s: 0`` divided by zero), so they must be at least a millisecond.
PROFILE_PERIODS = frozenset(
    {
        "lease_renew_interval_s",
        "node_monitor_period_s",
        "node_monitor_grace_period_s",
        "podgc_period_s",
        "drain_evict_retry_s",
        "drain_poll_s",
        "taint_queue_period_s",
    }
)
#: Other ranges, inclusive: (least, greatest, what the value is).
PROFILE_RANGES: dict[str, tuple[float, float, str]] = {
    # kube-controller-manager --unhealthy-zone-threshold: a fraction of a zone's nodes
    "unhealthy_zone_threshold": (0.0, 1.0, "a fraction from 0 to 1"),
    # --node-eviction-rate / --secondary-node-eviction-rate: nodes per second (0 = none)
    "node_eviction_rate": (0.0, 1000.0, "nodes per second from 0 to 1000"),
    "secondary_node_eviction_rate": (0.0, 1000.0, "nodes per second from 0 to 1000"),
    "large_cluster_size_threshold": (0, 100000, "a number of nodes from 0 to 100000"),
    # when the node lifecycle controller notices the lost node, relative to the grace period
    "nlc_detection_offset_s": (-600.0, 600.0, "seconds from -600 to 600"),
}


#: Profile strings and the values the simulator knows (embedded_sim/cluster.py, Volume).
PROFILE_CHOICES: dict[str, tuple[str, ...]] = {
    "assume_default_storage": ("zonal", "regional", "network", "local"),
    "assume_default_binding": ("WaitForFirstConsumer", "Immediate"),
    # how the platform replaces a dead node (profile.py, node_remediation; rules/_objectives.py)
    "node_remediation": ("none", "out-of-service", "node-deletion"),
}


def _check_range(where: str, key: str, name: str, value: float) -> None:
    """Raise :class:`ConfigError` for a profile number outside what the simulator models."""
    if not math.isfinite(value):
        raise ConfigError(f"{where}: profile {key} must be a finite number, not {value}")
    if name in PROFILE_PERIODS:
        low, high, what = 0.001, MAX_PROFILE_S, "seconds from 0.001 to one year (31536000)"
    else:
        low, high, what = PROFILE_RANGES.get(
            name, (0.0, MAX_PROFILE_S, "seconds from 0 to one year (31536000)")
        )
    if not low <= value <= high:
        raise ConfigError(f"{where}: profile {key} must be {what}, not {value:g}")


def _type_ok(value: Any, expected: str) -> bool:
    if value is None:
        return "None" in expected
    if isinstance(value, bool):
        return "bool" in expected
    if isinstance(value, (int, float)):
        return "float" in expected or ("int" in expected and isinstance(value, int))
    if isinstance(value, str):
        return "str" in expected
    return False


def _type_words(expected: str) -> str:
    words = []
    if "float" in expected:
        words.append("a number")
    elif "int" in expected:
        words.append("a whole number")
    if "bool" in expected:
        words.append("true or false")
    if "str" in expected:
        words.append("a string")
    if "None" in expected:
        words.append("null")
    return " or ".join(words) or expected


def _feature_gates(
    cfg: Config, raw: Mapping[str, Any], prefix: str, problems: list[_Problem]
) -> dict[str, bool]:
    try:
        from .embedded_sim.versions import KNOWN_GATES
    except ImportError:
        return dict(raw)
    for key in raw:
        if key not in KNOWN_GATES:
            message = (
                f"{_where(cfg, ('feature-gates', key), prefix)}: feature gate {key!r} is not "
                "modelled by the simulator"
            )
            problems.append((("feature-gates", key), ConfigError(message, KNOWN_GATES)))
    return {k: v for k, v in raw.items() if k in KNOWN_GATES}


def _anchored(patterns: Sequence[str], config_path: str) -> tuple[ExcludePattern, ...]:
    """The ``exclude:`` patterns of the configuration file at ``config_path``, anchored at
    its directory."""
    from .paths import Exclude

    if not config_path:
        return tuple(patterns)
    base = os.path.dirname(os.path.abspath(config_path))
    return tuple(Exclude(p, base) for p in patterns)


def build_settings(
    cfg: Config | None,
    *,
    kube_version: str | None = None,
    fail_on: Severity | None = None,
    namespace: str | None = None,
    exclude: Sequence[str] = (),
    select: Sequence[str] = (),
    disable: Sequence[str] = (),
    **other: Any,
) -> Settings:
    """Merge the configuration file and the command line into :class:`Settings`.

    A flag given on the command line (not ``None``) overrides the file; ``--select`` replaces
    the file's ``select``; ``--disable`` and ``--exclude`` add to the file's lists; ``other``
    settings (command line only, such as ``helm_values``) are passed through.
    """
    c = cfg or Config(path="")
    # the command line's --api-versions add to the file's
    other["helm_api_versions"] = (*c.api_versions, *other.get("helm_api_versions", ()))
    profile = None
    if c.profile:
        from .embedded_sim.profile import ClusterProfile

        profile = ClusterProfile().with_overrides(**c.profile)
    return Settings(
        kube_version=kube_version or c.kube_version or DEFAULT_KUBE_VERSION,
        fail_on=next(s for s in (fail_on, c.fail_on, Severity.ERROR) if s is not None),
        namespace=namespace or c.namespace or "default",
        # the file's patterns are relative to its directory, the command line's to the
        # working directory (ssrisk.paths.Excludes)
        exclude=(*_anchored(c.exclude, c.path), *exclude),
        enable=frozenset(select or c.select),
        disable=frozenset((*c.disable, *disable)),
        severity=dict(c.severity),
        rule_options={k: dict(v) for k, v in c.rule_options.items()},
        profile=profile,
        feature_gates=dict(c.feature_gates) or None,
        baseline=c.baseline,
        objectives=Objectives().with_overrides(c.objectives),
        systems=c.systems,
        charts=dict(c.charts),
        config_file=c.path or None,
        **other,
    )
