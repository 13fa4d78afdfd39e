"""Resource quantities (``resource.Quantity``) as numbers.

Source: staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go#ParseQuantity: a signed
decimal or exponent number followed by a binary (Ki … Ei), decimal SI (m, k, M … E) or no
suffix.
"""

from __future__ import annotations

import functools
import re
from typing import Any

#: A quantity's number and suffix (matched on the stripped text). No two parts can take the
#: same characters, so a long unreadable value costs linear time (``\d+\.?\d*`` took minutes
#: on 50,000 digits and a ``!``).
_QUANTITY_RE = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)")
_SUFFIX = {
    "": 1.0, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
    "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}  # fmt: skip


def parse_quantity(v: Any) -> float | None:
    """A resource.Quantity ("500m", "1.5", "2Gi", "1e9", 4) as a number; None if unreadable."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if not isinstance(v, str):
        return None
    return _parse_quantity_text(v)


@functools.lru_cache(maxsize=1024)
def _parse_quantity_text(v: str) -> float | None:
    """`parse_quantity` of a string (a few distinct values, read for every StatefulSet)."""
    m = _QUANTITY_RE.fullmatch(v.strip())
    if m is None or m.group(2) not in _SUFFIX:
        return None
    try:
        return float(m.group(1)) * _SUFFIX[m.group(2)]
    except ValueError:
        return None


#: What ParseQuantity accepts (quantity.go#parseQuantityString): a signed decimal number, then
#: either a decimal exponent or one suffix (binary Ki … Ei, decimal SI n … E), nothing else:
#: no spaces, no exponent with a suffix ("1e3Mi").
_STRICT = re.compile(
    r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?"
)


def is_quantity(v: Any) -> bool:
    """Whether the API server can decode ``v`` as a resource.Quantity (a number, or text as
    :data:`_STRICT` says)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    return isinstance(v, str) and len(v) < 1000 and _STRICT.fullmatch(v) is not None
