"""The example manifests of tests/data/rules/<rule-id>/: exact findings, by line.

Each entry (a file, or a folder checked as a whole) marks the lines where findings are expected
with ``# expect: <rule-id>``. A folder entry with a ``.ssrisk.yaml`` is checked with that
configuration (objectives, cluster profile). For the folder's rule and every rule named by a
marker in the entry, the set of (rule, line, file) findings must equal the marked set. Files
named ``pass*`` must carry no marker for the folder's rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from rule_expect import findings, markers

ROOT = DATA / "rules"


def _entries() -> list[Any]:
    params = []
    for rule_dir in sorted(p for p in ROOT.iterdir() if p.is_dir()):
        for entry in sorted(rule_dir.iterdir()):
            if entry.suffix in (".yaml", ".yml") or entry.is_dir():
                params.append(
                    pytest.param(rule_dir.name, entry, id=f"{rule_dir.name}/{entry.name}")
                )
    return params


def _files(entry: Path) -> list[Path]:
    return sorted(entry.rglob("*.yaml")) if entry.is_dir() else [entry]


@pytest.mark.parametrize(("rule_id", "entry"), _entries())
def test_rule_example(rule_id: str, entry: Path) -> None:
    want: set[tuple[str, int, str]] = set()
    for f in _files(entry):
        want |= {(r, line, f.name) for r, line in markers(f.read_text(encoding="utf-8"))}
    rules = {rule_id} | {r for r, _, _ in want}
    if entry.name.startswith("pass"):
        assert not [w for w in want if w[0] == rule_id], "a pass example has no marker of its rule"
    else:
        assert [w for w in want if w[0] == rule_id], "a fail example marks its rule"
    config = entry / ".ssrisk.yaml" if entry.is_dir() else None
    config = config if config is not None and config.is_file() else None
    assert findings(entry, rules, config=config) == want
