"""The JSON Schema patterns of ssrisk's own files are matched as JSON Schema means them."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk import strictschema


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "shop", True),
        # Python's $ also matches before a final newline; ECMA-262's does not
        ("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "shop\n", False),
        ("^a|b$", "ab", True),  # (a top-level alternation: either branch)
        ("^a|b$", "b\n", False),
        (r"a\$", "a$\n", True),  # an escaped dollar is a character
        (r"a\\$", "a\\", True),  # an escaped backslash, then the anchor
        (r"a\\$", "a\\\n", False),
        ("^[$]+$", "$$", True),  # a dollar in a class is a character
        ("^[]$]x$", "]x", True),
        ("^[^]$]x$", "ax\n", False),
    ],
)
def test_a_pattern_anchors_at_the_end_of_the_text_only(
    pattern: str, text: str, matches: bool
) -> None:
    validator = strictschema.validator({"type": "string", "pattern": pattern})
    assert validator.is_valid(text) is matches


@pytest.mark.parametrize(
    "config",
    ["kube-version: '1.34'\nnamespace: \"shop\\n\"\n", 'disable: ["single-replica\\n"]\n'],
)
def test_a_configuration_value_ending_in_a_newline_is_refused(config: str, tmp_path: Path) -> None:
    (tmp_path / ".ssrisk.yaml").write_text(config)
    (tmp_path / "db.yaml").write_text((DATA / "ci" / "single.yaml").read_text())
    run = run_cli("check", "db.yaml", cwd=tmp_path)
    assert run.code == 2 and "does not match" in run.err, run.out + run.err
