"""Pattern matching over command lines and scripts in linear time (helpers for rules).

A command line in a manifest is attacker-controlled and unbounded (a chart renders a
100,000-word string from one line), so no rule pattern may backtrack over it: ``A.*B`` costs
time quadratic in the length of a line holding many ``A`` and no ``B`` (Python's ``re`` scans
the rest of the line from each ``A``). :func:`followed_by` gives the same answer from one
scan of each part of the text.
"""

from __future__ import annotations

import re
from functools import cache


@cache
def _splitter(separators: str) -> re.Pattern[str]:
    return re.compile("[" + re.escape(separators) + "]")


def followed_by(first: re.Pattern[str], then: re.Pattern[str], text: str, separators: str) -> bool:
    """Whether one part of ``text`` (between any two of the characters ``separators``) holds a
    match of ``first`` and, at or after its end, a match of ``then``: what
    ``re.search(first + "[^" + separators + "]*" + then, text)`` answers, in time linear in
    ``text``, except that each is matched within its part (a ``\\s+`` of ``then`` does not
    reach across a separator). The first match of ``first`` in a part is the one to look
    after: any later one ends later."""
    for part in _splitter(separators).split(text):
        found = first.search(part)
        if found is not None and then.search(part, found.end()) is not None:
            return True
    return False
