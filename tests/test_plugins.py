"""Rules are plugins: the built-in ones and an outside one load through the same entry point."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

import pytest
from conftest import DATA, ssrisk_executable

from ssrisk.plugins import collect_rules, plugin_manager


def test_builtin_rules_come_through_the_entry_point_group() -> None:
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="ssrisk.rules")}
    ids = {r.id for r in collect_rules(plugin_manager())}
    assert {"single-replica", "ordered-ready-stall", "long-termination-grace"} <= names
    assert names <= ids


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
    import importlib.metadata

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("importlib.metadata scans every installed distribution")

    monkeypatch.setattr(importlib.metadata, "distributions", refuse)
    monkeypatch.setattr(importlib.metadata, "entry_points", refuse)
    monkeypatch.syspath_prepend(str(DATA / "plugin" / "outside_rules"))
    ids = {r.id for r in collect_rules(plugin_manager())}
    builtin = {ep.name for ep in _builtin_entry_points()}
    assert builtin <= ids and "no-latest-tag" in ids
    assert len(ids) == len(builtin) + 1


def _builtin_entry_points() -> list[importlib.metadata.EntryPoint]:
    return list(importlib.metadata.distribution("ssrisk").entry_points.select(group="ssrisk.rules"))


def test_each_built_in_rule_module_is_an_entry_point_of_the_group() -> None:
    from ssrisk.plugins import builtin_rule_modules

    modules = {module.__name__ for _name, module in builtin_rule_modules()}
    assert modules == {ep.value for ep in _builtin_entry_points()}
