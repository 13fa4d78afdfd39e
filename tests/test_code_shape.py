"""The package stays readable: no function of ``ssrisk/``, ``rules/`` or ``embedded_sim/`` is
longer than 100 lines (a maintainer changes one behaviour in one screenful or two)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 100


def test_no_function_is_longer_than_100_lines() -> None:
    long = []
    for package in ("ssrisk", "rules", "embedded_sim"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    lines = (node.end_lineno or node.lineno) - node.lineno + 1
                    if lines > MAX_LINES:
                        long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} {lines}")
    assert long == []
