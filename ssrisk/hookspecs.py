"""Every hook a plugin can implement. Built-in rules and reporters use these same hooks.

A plugin is a module (or object) registered through the ``ssrisk.rules`` entry point group::

    [project.entry-points."ssrisk.rules"]
    my-rule = "my_package.my_rule"

and decorated with :data:`hookimpl`::

    from ssrisk.hookspecs import hookimpl

    @hookimpl
    def ssrisk_rules():
        return [MyRule()]
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from collections.abc import Callable

    from .reporters import Reporter
    from .rule import Rule

PROJECT = "ssrisk"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def ssrisk_rules() -> list[Rule]:
    """Return the rules this plugin provides (instances of :class:`ssrisk.rule.Rule`).

    Rule ids must be unique across all plugins; a duplicate id is a usage error.
    """
    raise NotImplementedError


@hookspec
def ssrisk_reporters() -> dict[str, Callable[..., Reporter]]:
    """Return output formats this plugin provides, keyed by the ``--format`` name: each a
    :class:`~ssrisk.reporters.Reporter` class (or a callable that makes one from the same
    keyword arguments)."""
    raise NotImplementedError
