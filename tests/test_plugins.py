"""Rules are plugins: the built-in ones and an outside one load through the same entry point."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA, ssrisk_executable

from ssrisk.plugins import collect_rules, plugin_manager


def test_builtin_rules_are_plugins_found_in_the_package() -> None:
    # each module of ssrisk.rules is registered through the same hook as an outside plugin,
    # and a new one needs no line in pyproject.toml
    from ssrisk.plugins import builtin_rule_modules

    pm = plugin_manager()
    modules = [module for _name, module in builtin_rule_modules()]
    assert modules and all(pm.is_registered(m) for m in modules)
    ids = {r.id for r in collect_rules(pm)}
    assert {"single-replica", "ordered-ready-stall", "long-termination-grace"} <= ids
    assert len(modules) == len(ids)  # one rule a module


def test_builtin_rules_hook_implementations_are_the_ones_pluggy_finds() -> None:
    # the manager reads only the hook names of a built-in module (start-up time): a plain
    # pluggy manager, which reads every name, must find the same implementations
    import pluggy

    from ssrisk import hookspecs
    from ssrisk.plugins import builtin_rule_modules

    plain = pluggy.PluginManager(hookspecs.PROJECT)
    plain.add_hookspecs(hookspecs)
    ours = plugin_manager()
    for name, module in builtin_rule_modules():
        plain.register(module, name=name)
        found = sorted(c.name for c in plain.get_hookcallers(module) or [])
        assert found == sorted(c.name for c in ours.get_hookcallers(module) or []), name
        assert found == ["ssrisk_rules"], name


def test_an_outside_plugin_adds_a_rule() -> None:
    plugin_dir = DATA / "plugin" / "outside_rules"
    env = {**os.environ, "PYTHONPATH": str(plugin_dir)}
    listing = subprocess.run(
        [ssrisk_executable(), "rules"], capture_output=True, text=True, env=env, check=True
    )
    assert "no-latest-tag" in listing.stdout
    run = subprocess.run(
        [ssrisk_executable(), "check", str(DATA / "plugin" / "latest.yaml")],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 1, run.stderr
    line = next(x for x in run.stdout.splitlines() if "no-latest-tag" in x)
    assert line.startswith(f"{DATA / 'plugin' / 'latest.yaml'}:17:9: error no-latest-tag ")
    # without the plugin on the path the rule does not exist
    plain = subprocess.run([ssrisk_executable(), "rules"], capture_output=True, text=True)
    assert "no-latest-tag" not in plain.stdout
    assert sys.executable


def test_rules_load_without_reading_every_distributions_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("importlib.metadata scans every installed distribution")

    monkeypatch.setattr(importlib.metadata, "distributions", refuse)
    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    monkeypatch.syspath_prepend(str(DATA / "plugin" / "outside_rules"))
    ids = {r.id for r in collect_rules(plugin_manager())}
    monkeypatch.undo()
    builtin = {r.id for r in collect_rules(plugin_manager())}
    assert builtin <= ids and "no-latest-tag" in ids
    assert len(ids) == len(builtin) + 1


def test_the_distribution_lists_no_built_in_rule() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    assert project["project"].get("entry-points", {}).get("ssrisk.rules", {}) == {}
