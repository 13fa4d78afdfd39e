"""Rules are plugins: the built-in ones and an outside one load through the same entry point."""

from __future__ import annotations

import os
import subprocess
import sys

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
