"""JSON text as Python's ``json.dumps(..., ensure_ascii=False)`` writes it, made by msgspec's
encoder when the two texts are the same.

The JSON and SARIF reports write one finding a line, each carrying its explanation (about
4 KB of text with a simulated timeline): at 10,000 documents that is 25,554 lines and 150 MB.
Python's C encoder took about 1.3 s for them, msgspec's encoder and formatter about 0.4 s.

The texts are the same for every value made of dicts with ``str`` keys, lists, tuples,
``str``, ``int``, ``bool``, ``None`` and floats that Python writes without an exponent (its
``repr`` of a finite float from 1e-4 to 1e16, or zero): msgspec writes ``1e16`` where json
writes ``1e+16``, ``null`` for ``inf`` and ``nan`` where json writes ``Infinity`` and
``NaN``, and refuses a lone surrogate (an undecodable file name), which :func:`json_text`
writes as text. Any other value (a subclass included) is written by ``json`` as before.
``tests/test_jsontext.py`` compares the two on such values and on random ones.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .escape import json_text

_ENCODE = msgspec.json.Encoder().encode
_FORMAT = msgspec.json.format
#: ``json.dumps(..., ensure_ascii=False)``, made once.
_DUMPS = json.JSONEncoder(ensure_ascii=False).encode
#: ``json.dumps(..., indent=2, ensure_ascii=False)``, made once.
_INDENTED = json.JSONEncoder(ensure_ascii=False, indent=2).encode
#: Errors msgspec raises for what it cannot write (a lone surrogate: UnicodeEncodeError).
_REFUSED = (TypeError, ValueError, OverflowError, UnicodeError)


def plain(value: Any) -> bool:
    """Whether msgspec writes ``value`` as ``json`` does (see the module docstring)."""
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return True
    if t is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            ti = type(item)
            if ti is not str and ti is not int and not plain(item):
                return False
        return True
    if t is list or t is tuple:
        for item in value:  # noqa: SIM110 (a loop: all() with a generator took 2.5x as long)
            if type(item) is not str and not plain(item):
                return False
        return True
    if t is float:
        return value == 0.0 or 1e-4 <= abs(value) < 1e16
    return False


def dumps(value: Any, indent: int = 0) -> str:
    """``json_text(json.dumps(value, ensure_ascii=False))``: one line, with ``", "`` and
    ``": "`` between items; with ``indent`` 2, as ``json.dumps(..., indent=2)`` lays it out.
    Raises as ``json.dumps`` does for what JSON cannot hold."""
    if plain(value):
        try:
            return _FORMAT(_ENCODE(value), indent=indent).decode()
        except _REFUSED:
            pass
    return json_text((_INDENTED if indent else _DUMPS)(value))
