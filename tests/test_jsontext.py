"""The JSON and SARIF reports' JSON text is ``json.dumps``'s, whichever encoder writes it."""

from __future__ import annotations

import enum
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ssrisk.reporters.escape import json_text
from ssrisk.reporters.jsontext import dumps, plain


class _Level(enum.IntEnum):
    HIGH = 2


class _Name(str):
    pass


CASES = [
    {"a": [], "b": {}, "c": [1, {"d": None, "e": True}], "f": "x\u2028y\u00e9\U0001f600"},
    {"text": "".join(chr(i) for i in range(0x800)) + "\ufeff\u2029\uffff\U0010ffff"},
    {"n": 2**70, "m": -1, "big": 2**64 - 1, "small": -(2**63)},
    {"k": {1: "int key", None: "null key", False: "bool key"}},  # (json writes them as text)
    {"k": {1.5: "float key"}},
    {"ratio": 1e300, "tiny": 1e-7, "half": 0.5, "zero": -0.0, "edge": 1e16, "low": 1e-4},
    {"inf": float("inf"), "nan": float("nan")},  # (json writes Infinity and NaN)
    {"path": "caf\udce9.yaml"},  # a lone surrogate (an undecodable file name)
    ("tuple", ["nested", ("deep",)]),
    {"enum": _Level.HIGH, "sub": _Name("x"), "bool": False},
    "",
    [],
    {},
]


@pytest.mark.parametrize("value", CASES)
def test_the_text_is_json_dumps(value: object) -> None:
    assert dumps(value) == json_text(json.dumps(value, ensure_ascii=False))
    assert dumps(value, indent=2) == json_text(json.dumps(value, indent=2, ensure_ascii=False))


def test_floats_with_an_exponent_or_not_finite_are_not_plain() -> None:
    assert plain({"a": [1.5, 0.0001, 9.9e15, -0.0]})
    for f in (1e16, 1e-5, float("inf"), float("nan"), -1e20):
        assert not plain({"a": [f]}), f
    assert not plain({1: "x"})  # (a key json writes as text)
    assert not plain({"a": _Name("x")})  # (a subclass: json's encoder decides)


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_VALUES)
def test_random_values_are_written_as_json_dumps_writes_them(value: object) -> None:
    assert dumps(value) == json_text(json.dumps(value, ensure_ascii=False))
    assert dumps(value, indent=2) == json_text(json.dumps(value, indent=2, ensure_ascii=False))
