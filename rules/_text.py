"""Laying out explanation text that rules assemble from parts (helpers for rules)."""

from __future__ import annotations

#: Paragraphs laid out before, by their text as written: most are the same for every set of
#: a behaviour (a rule's fixed prose with the version's facts), only some name the set.
_LAID_OUT: dict[str, str] = {}
#: Paragraphs kept at most (then forgotten all at once: a run's distinct ones are a few
#: thousand).
_MAX_LAID_OUT = 4096


def paragraph(text: str) -> str:
    """``text`` with its whitespace collapsed into one line.

    Explanations are data (JSON, SARIF); the text reporter wraps long prose lines for the
    terminal when it prints them, so rules do not pay for wrapping text nobody shows.
    """
    done = _LAID_OUT.get(text)
    if done is None:
        if len(_LAID_OUT) >= _MAX_LAID_OUT:
            _LAID_OUT.clear()
        done = _LAID_OUT[text] = " ".join(text.split())
    return done
