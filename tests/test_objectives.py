"""Recovery objectives: the ``objectives`` configuration section, its defaults and errors, and
how rules and the simulation use it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk.config import ConfigError, build_settings, load_config
from ssrisk.objectives import (
    Objectives,
    fmt_objective_duration,
    parse_duration,
    resolve_max_unavailable,
)

OBJ = DATA / "objectives"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15m", 900), ("90s", 90), ("1h30m", 5400), ("2m30s", 150), (45, 45), (1.5, 1.5)],
)
def test_durations_are_kept_in_seconds(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


def test_durations_are_shown_as_written() -> None:
    assert [fmt_objective_duration(s) for s in (900, 5400, 75, 0)] == [
        "15m",
        "1h30m",
        "1m15s",
        "0s",
    ]


def test_defaults_are_what_a_quorum_system_meets() -> None:
    o = Objectives()
    assert o["node-loss"].max_unavailable == "minority"
    assert o["node-loss"].recover_within_s == 900
    assert o["zone-loss"].max_unavailable == "minority"
    assert o["node-drain"].max_unavailable == 1
    assert o["bad-rollout"].revert_without_manual_delete is False


def test_minority_depends_on_whether_the_set_is_a_quorum_system() -> None:
    # fewer than half for a quorum system, at most half for other sets
    assert [resolve_max_unavailable("minority", n, True) for n in (1, 2, 3, 4, 5)] == [
        0,
        0,
        1,
        1,
        2,
    ]
    assert [resolve_max_unavailable("minority", n, False) for n in (1, 2, 3, 4, 5)] == [
        0,
        1,
        1,
        2,
        2,
    ]
    assert resolve_max_unavailable("40%", 5) == 2 and resolve_max_unavailable(0, 5) == 0


def test_the_section_is_read_with_durations_in_seconds() -> None:
    settings = build_settings(load_config(OBJ / "bad" / "durations.yaml"))
    o = settings.objectives
    assert o["node-loss"].recover_within_s == 5400
    assert o["node-loss"].max_unavailable == "minority"
    assert (o["zone-loss"].max_unavailable, o["zone-loss"].recover_within_s) == ("40%", 90.0)
    assert o["node-drain"].complete_within_s == 150 and o["node-drain"].max_unavailable == 1
    assert o["rolling-update"].max_unavailable is None  # null unsets the default


@pytest.mark.parametrize(
    ("name", "where", "words"),
    [
        ("bad-duration.yaml", ":3:21:", "'15 minutes' is not seconds, or a string such as"),
        ("unknown-key.yaml", ":3:5:", "unknown key 'recover-whithin'"),
        ("bad-max.yaml", ":3:22:", "'half' is not a whole number"),
    ],
)
def test_bad_objectives_name_the_file_and_position(name: str, where: str, words: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(OBJ / "bad" / name)
    assert f"{name}{where}" in str(exc.value) and words in str(exc.value)


def test_a_bad_objective_stops_the_run_with_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".ssrisk.yaml").write_text((OBJ / "bad" / "bad-max.yaml").read_text())
    (tmp_path / "sts.yaml").write_text((OBJ / "strict-rollout" / "queue.yaml").read_text())
    run = run_cli("check", str(tmp_path / "sts.yaml"))
    assert run.code == 2 and ".ssrisk.yaml:3:22:" in run.err


def test_an_objective_makes_a_default_behaviour_a_warning(tmp_path: Path) -> None:
    """OrderedReady's manual step after a revert is information by default and a warning
    where the bad-rollout objective asks for revert-without-manual-delete."""
    run = run_cli("check", "--format", "json", str(OBJ / "strict-rollout"))
    (stall,) = [f for f in run.json()["findings"] if f["rule"] == "ordered-ready-stall"]
    assert stall["severity"] == "warning"
    assert "(objective revert-without-manual-delete)" in stall["message"]
    alone = tmp_path / "queue.yaml"  # the same manifest without the configuration
    alone.write_text((OBJ / "strict-rollout" / "queue.yaml").read_text())
    plain = run_cli("check", "--format", "json", str(alone), cwd=tmp_path)
    (info,) = [f for f in plain.json()["findings"] if f["rule"] == "ordered-ready-stall"]
    assert info["severity"] == "info" and "objective" not in info["message"]
