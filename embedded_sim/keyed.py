"""Frozen typed values whose equality reads some of their fields.

A dataclass field declared ``field(compare=False)`` describes its value without telling two
values apart (where a position was rendered from, the handler as written). A
:class:`msgspec.Struct` compares every field, so such values derive from :class:`Keyed` and
name what they are compared by in :meth:`Keyed.key`. A Struct class is made in C; a frozen
dataclass generates its methods from source when its module is imported (about 1 ms each of
every run's start).
"""

from __future__ import annotations

from typing import Any

import msgspec


class Keyed(msgspec.Struct, frozen=True, eq=False):
    """Equal to a value of the same class with an equal :meth:`key`, and hashed by it (as a
    frozen dataclass is, over its compared fields)."""

    def key(self) -> tuple[Any, ...]:
        """The fields two values are compared and hashed by."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.key() == other.key()

    def __ne__(self, other: object) -> bool:  # (a Struct does not derive it from __eq__)
        if type(other) is not type(self):
            return NotImplemented
        return self.key() != other.key()

    def __hash__(self) -> int:
        return hash(self.key())
