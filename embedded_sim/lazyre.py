"""Regular expressions compiled when first used.

A one-file check imports about 50 patterns of modules it needs that its input never reaches
(preStop commands, probe commands, configuration forms): compiling them at import was about
4 ms of every run's start. :func:`lazy` stands for the compiled pattern and compiles it on its
first use; every attribute (``search``, ``match``, ``sub``, ``pattern``...) is the compiled
pattern's.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _Lazy:
    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # (called for what the slots do not hold)
        if name in _Lazy.__slots__:  # an unset slot (a copy being made): not the pattern's
            raise AttributeError(name)
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._pattern, self._flags)
        return getattr(compiled, name)

    def __reduce__(self) -> tuple[Any, ...]:  # (copied or pickled as the same lazy pattern)
        return (_Lazy, (self._pattern, self._flags))

    def __repr__(self) -> str:
        return f"lazy({self._pattern!r})"


def lazy(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled on first use (a bad pattern raises
    ``re.error`` then: the patterns are the code's own)."""
    return cast("re.Pattern[str]", _Lazy(pattern, int(flags)))
