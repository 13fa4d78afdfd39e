"""Exclude patterns cost linear time in the depth of a tree: a repository's ``.ssrisk.yaml``
may list many patterns shaped to make a glob scan the path again and again
(``*a*a*a*a*b*b*b*zz0``), and its tree may nest a thousand directories. Each directory of a
walk is matched against every pattern; matching each one's whole path again cost the
patterns times the square of the depth (3,000 patterns, 1,000 levels: 164 s). A long path's
match state is carried over from its directory's (``ssrisk.paths._Glob``), so ten times the
depth costs about ten times as much, and it answers as the patterns' regular expressions do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from fnmatch import translate
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_hostile_scaling import _scales_linearly

from ssrisk.paths import LONG_PATH, Exclude, Excludes, _normal_pattern

BASE = os.path.abspath(os.sep + "repo")
PATTERNS = [f"*a*a*a*a*b*b*b*b*zz{i}" for i in range(40)]


def _deep(levels: int, name: str = "dddddddd") -> list[str]:
    """The directories of a walk down ``levels`` levels below :data:`BASE`, top first."""
    out, here = [], BASE
    for _ in range(levels):
        here = os.path.join(here, name)
        out.append(here)
    return out


def test_a_walk_down_a_deep_tree_costs_linear_time_in_its_depth() -> None:
    def make(levels: int) -> Callable[[], object]:
        directories = _deep(levels)

        def walk() -> object:
            excludes = Excludes([Exclude(p, BASE) for p in PATTERNS])
            return [excludes(d) for d in directories]

        return walk

    assert not any(make(100)())  # nothing matches: every pattern is read to its end
    assert len(_deep(100)[-1]) > 3 * LONG_PATH  # (most of the paths are long ones)
    _scales_linearly(make, 100)


def test_a_changed_file_deep_in_a_tree_asks_each_directory_once() -> None:
    def make(levels: int) -> Callable[[], object]:
        directories = _deep(levels)
        files = [os.path.join(d, "x.yaml") for d in directories]

        def changed() -> object:
            excludes = Excludes([Exclude(p, BASE) for p in PATTERNS])
            return [excludes.under(f, BASE, realpath=lambda p: p) for f in files]

        return changed

    # (10 times as deep is 10 times the directories, each path up to 10 times as long: the
    # string work grows with the paths' length too, about 13x, and a busy machine has given
    # 16-19x; asking every directory again, the quadratic cost this guards against, is ~100x)
    _scales_linearly(make, 60, ratio=30)


def test_a_match_deep_in_a_tree_is_found() -> None:
    directories = _deep(120)
    excludes = Excludes([Exclude("*/dddddddd/x*", BASE), Exclude("dddd*dddd/y", BASE)])
    assert excludes(os.path.join(directories[-1], "x.yaml"))
    assert excludes(os.path.join(directories[-1], "y"))
    assert not excludes(os.path.join(directories[-1], "z.yaml"))
    assert excludes.under(os.path.join(directories[-1], "y", "a", "b.yaml"), BASE)


# --- long paths are matched as the patterns' regular expressions match them -----------------


def _old(patterns: list[str], path: str) -> bool:
    """What :class:`Excludes` answered before: each regex against the name, the path relative
    to the base, and that path with ``./``."""
    rel = os.path.relpath(path, BASE)
    for pattern in filter(None, map(_normal_pattern, patterns)):
        texts = (path,) if os.path.isabs(pattern) else (rel, "./" + rel)
        for text in (os.path.basename(path), *texts):
            if re.match(translate(pattern), text) is not None:
                return True
    return False


_PIECES = st.sampled_from(["a", "b", "/", "*", "?", "[ab]", "[!a]", "[", "]", "!", "-", "."])


@settings(derandomize=True, max_examples=500, deadline=None)
@given(
    st.lists(st.lists(_PIECES, min_size=1, max_size=7).map("".join), min_size=1, max_size=3),
    st.lists(
        st.sampled_from(["a", "b", "ab", "ba", "a.b", "-", "!", "a" * 40, "b" * 39 + "a"]),
        min_size=1,
        max_size=6,
    ),
    st.integers(min_value=0, max_value=3),
)
def test_long_paths_match_as_the_patterns_regular_expressions_do(
    patterns: list[str], names: list[str], prefix_levels: int
) -> None:
    # (from just below LONG_PATH: a walk that crosses it reads short paths first)
    top = os.path.join(BASE, *(["a" * 60 + "b"] * (prefix_levels + 3)))
    excludes = Excludes([Exclude(p, BASE) for p in patterns])
    path = top
    for name in [*names, "a" * 70]:  # a walk: each directory asked before the one below it
        path = os.path.join(path, name)
        assert excludes(path) == _old(patterns, path), path
    assert len(path) > LONG_PATH


def test_a_configuration_with_too_many_patterns_is_refused(tmp_path: Path) -> None:
    from conftest import run_cli

    (tmp_path / ".ssrisk.yaml").write_text(
        "exclude:\n" + "".join(f"  - 'x{i}'\n" for i in range(300)), encoding="utf-8"
    )
    run = run_cli("check", str(tmp_path))
    assert run.code == 2
    assert ".ssrisk.yaml:1:1: exclude: 300 entries (at most 128)" in run.err
