"""The plugin manager: loads every rule and reporter through pluggy.

Built-in rules are found through the ``ssrisk.rules`` entry point group exactly like
third-party ones; built-in reporters are registered the same way from ``ssrisk.reporters``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pluggy

from . import hookspecs
from .reporters import Reporter
from .rule import Rule

ENTRY_POINT_GROUP = "ssrisk.rules"


class PluginError(Exception):
    """A plugin could not be loaded or declares a rule badly (a usage error, exit 2)."""


def plugin_manager(extra_plugins: Sequence[object] = ()) -> pluggy.PluginManager:
    """A plugin manager with the built-in reporters, every entry-point plugin and ``extra``.

    Raises:
        PluginError: when an entry point fails to import.
    """
    from . import reporters

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.register(reporters)
    try:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    except Exception as exc:  # an outside plugin that fails to import
        raise PluginError(f"cannot load a plugin of group {ENTRY_POINT_GROUP}: {exc}") from exc
    for plugin in extra_plugins:
        pm.register(plugin)
    return pm


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


def collect_reporters(pm: pluggy.PluginManager) -> dict[str, type[Reporter]]:
    out: dict[str, type[Reporter]] = {}
    for batch in pm.hook.ssrisk_reporters():
        out.update(batch or {})
    return out
