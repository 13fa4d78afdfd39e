"""Laying out explanation text that rules assemble from parts (helpers for rules)."""

from __future__ import annotations


def paragraph(text: str) -> str:
    """``text`` with its whitespace collapsed into one line.

    Explanations are data (JSON, SARIF); the text reporter wraps long prose lines for the
    terminal when it prints them, so rules do not pay for wrapping text nobody shows.
    """
    return " ".join(text.split())
