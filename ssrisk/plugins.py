"""The plugin manager: loads every rule and reporter through pluggy.

Built-in rules are the modules of ``ssrisk.rules``, each registered as a plugin exactly like a
third-party one (the same ``ssrisk_rules`` hook; a new module is found without a line in
``pyproject.toml``); outside plugins come through the ``ssrisk.rules`` entry point group.
Built-in reporters are registered from ``ssrisk.reporters``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import pluggy

from . import hookspecs
from .reporters import Reporter
from .rule import Rule

ENTRY_POINT_GROUP = "ssrisk.rules"


class PluginError(Exception):
    """A plugin could not be loaded or declares a rule badly (a usage error, exit 2)."""


#: The prefix of every hook's name (:mod:`ssrisk.hookspecs`).
HOOK_PREFIX = f"{hookspecs.PROJECT}_"


class _Manager(pluggy.PluginManager):
    """pluggy's manager, which looks at the built-in rule modules' hook names only.

    pluggy reads every attribute of a registered module statically to find its hook
    implementations (``PluginManager.parse_hookimpl_opts``, the documented override point):
    about a thousand names over the built-in rules, 11 ms of each start. A built-in rule
    implements hooks under their own names (``ssrisk_rules``), so its other names are not
    read; outside plugins are read in full, as pluggy reads them (a ``specname`` may name a
    hook differently).
    """

    def __init__(self, builtin: Sequence[object]) -> None:
        super().__init__(hookspecs.PROJECT)
        self._builtin = {id(m) for m in builtin}

    def parse_hookimpl_opts(self, plugin: object, name: str) -> Any:
        if id(plugin) in self._builtin and not name.startswith(HOOK_PREFIX):
            return None
        return super().parse_hookimpl_opts(plugin, name)


def plugin_manager(extra_plugins: Sequence[object] = ()) -> pluggy.PluginManager:
    """A plugin manager with the built-in reporters and rules, every ``ssrisk.rules`` entry-point
    plugin and ``extra``.

    The built-in rules (the modules of ``ssrisk.rules``) are registered directly, and outside
    plugins are found by reading only the ``entry_points.txt`` files that name the group
    (:func:`entry_point_plugins`): ``importlib.metadata`` parses every installed
    distribution's metadata, which took about 40 ms of each start (most of a pre-commit run).
    A built-in module that the entry points name too (ssrisk's own distribution) is not
    registered twice.

    Raises:
        PluginError: when an entry point fails to import.
    """
    from . import reporters

    builtin = builtin_rule_modules()
    pm = _Manager([module for _, module in builtin])
    pm.add_hookspecs(hookspecs)
    pm.register(reporters)
    for name, module in builtin:
        pm.register(module, name=name)
    try:
        for name, plugin in entry_point_plugins(ENTRY_POINT_GROUP):
            if pm.get_plugin(name) is None and not pm.is_registered(plugin):
                pm.register(plugin, name=name)
    except Exception as exc:  # an outside plugin that fails to import
        raise PluginError(f"cannot load a plugin of group {ENTRY_POINT_GROUP}: {exc}") from exc
    for plugin in extra_plugins:
        pm.register(plugin)
    return pm


def builtin_rule_modules() -> list[tuple[str, object]]:
    """``(name, module)`` of every built-in rule: each public module of ``ssrisk.rules``."""
    import importlib
    import pkgutil

    rules = importlib.import_module(f"{__package__}.rules")
    return [
        (info.name, importlib.import_module(f"{rules.__name__}.{info.name}"))
        for info in sorted(pkgutil.iter_modules(rules.__path__), key=lambda i: i.name)
        if not info.name.startswith("_")
    ]


def entry_point_plugins(group: str) -> list[tuple[str, object]]:
    """``(entry point name, loaded object)`` of every entry point of ``group`` installed on
    ``sys.path``, like ``importlib.metadata.entry_points(group=group)``.

    Reads ``*.dist-info/entry_points.txt`` (and ``*.egg-info``) of each directory on
    ``sys.path``, loading only those that name ``[group]``; a distribution found earlier on the
    path hides one of the same name later, as in ``importlib.metadata``. Path entries that are
    not directories (zip files) are read with ``importlib.metadata``.

    Raises:
        Exception: whatever importing a plugin raises.
    """
    import importlib
    import sys

    found: list[tuple[str, str]] = []  # (name, "module:attr")
    seen_dists: set[str] = set()
    for entry in sys.path:
        directory = entry or "."
        try:
            names = sorted(os.listdir(directory))
        except NotADirectoryError:
            found.extend(_zip_entry_points(entry, group, seen_dists))
            continue
        except OSError:
            continue
        for meta in names:
            if not meta.endswith((".dist-info", ".egg-info")):
                continue
            dist = _normalise(meta.rsplit(".", 1)[0].split("-", 1)[0])
            if dist in seen_dists:
                continue
            seen_dists.add(dist)
            try:
                with open(
                    os.path.join(directory, meta, "entry_points.txt"), encoding="utf-8"
                ) as fh:
                    text = fh.read()
            except OSError:
                continue
            if f"[{group}]" in text:
                found.extend(_entries(text, group))
    out: list[tuple[str, object]] = []
    for name, value in found:
        module, _, attr = value.partition(":")
        obj: object = importlib.import_module(module.strip())
        for part in filter(None, attr.split("[", 1)[0].strip().split(".")):
            obj = getattr(obj, part)
        out.append((name, obj))
    return out


def _normalise(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def _entries(text: str, group: str) -> list[tuple[str, str]]:
    """The ``name = value`` lines of section ``[group]`` of an ``entry_points.txt``."""
    out: list[tuple[str, str]] = []
    inside = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            inside = line == f"[{group}]"
        elif inside and "=" in line:
            name, value = line.split("=", 1)
            out.append((name.strip(), value.strip()))
    return out


def _zip_entry_points(entry: str, group: str, seen_dists: set[str]) -> list[tuple[str, str]]:
    from importlib.metadata import distributions

    out: list[tuple[str, str]] = []
    for dist in distributions(path=[entry]):
        name = _normalise(dist.metadata["Name"] or "")
        if name in seen_dists:
            continue
        seen_dists.add(name)
        out.extend((ep.name, ep.value) for ep in dist.entry_points if ep.group == group)
    return out


def collect_rules(pm: pluggy.PluginManager) -> list[Rule]:
    """All rules from all plugins, sorted by id.

    Raises:
        PluginError: for a rule without an id, or two rules with the same id.
    """
    rules: dict[str, Rule] = {}
    for batch in pm.hook.ssrisk_rules():
        for rule in batch or ():
            if not isinstance(rule, Rule) or not rule.id:
                raise PluginError(f"plugin returned something that is not a rule: {rule!r}")
            if rule.id in rules:
                raise PluginError(f"two plugins define the rule id {rule.id!r}")
            rules[rule.id] = rule
    return [rules[k] for k in sorted(rules)]


def collect_reporters(pm: pluggy.PluginManager) -> dict[str, Callable[..., Reporter]]:
    """Every output format, keyed by its ``--format`` name (a reporter class or factory)."""
    out: dict[str, Callable[..., Reporter]] = {}
    for batch in pm.hook.ssrisk_reporters():
        out.update(batch or {})
    return out
