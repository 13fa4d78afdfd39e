"""Plain scalars read without PyYAML's patterns (``yamlpos._plain_value``) against the full
resolution (PyYAML's YAML 1.1 resolvers with go-yaml's differences): the fast path decides a
text only when it gives the same value."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import DATA, SHARED
from hypothesis import given, settings
from hypothesis import strategies as st

from ssrisk import yamlpos
from ssrisk.yamlpos import YamlInputError, load_documents

_UNDECIDED = yamlpos._UNDECIDED


def _full(raw: str) -> Any:
    return yamlpos._scalar(yamlpos._resolve(raw, (True, False)), raw, None, 0, True)


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _disagreement(raw: str) -> str | None:
    fast = yamlpos._plain_value(raw)
    if fast is _UNDECIDED or _same(fast, _full(raw)):
        return None
    return f"{raw!r}: fast {fast!r}, full {_full(raw)!r}"


#: Texts and what the fast path must give (``_UNDECIDED``: left to the full resolution).
EXAMPLES = [
    ("5432", 5432),
    ("0", 0),
    ("123456789012345678", 123456789012345678),
    ("1234567890123456789", _UNDECIDED),  # 19 digits: the full path checks the 64-bit range
    ("0644", _UNDECIDED),  # octal in YAML 1.1
    ("1.5", 1.5),
    ("0.25", 0.25),
    ("10Gi", "10Gi"),
    ("500m", "500m"),
    ("1.5Gi", "1.5Gi"),
    ("30s", "30s"),
    ("50%", "50%"),
    ("0.0.0.0", "0.0.0.0"),
    ("2.47.2", "2.47.2"),
    ("1f80ab97-8bf6", "1f80ab97-8bf6"),
    ("1e9", _UNDECIDED),  # go-yaml reads a float
    ("1.5e3", _UNDECIDED),
    ("1.e+3", _UNDECIDED),  # a YAML 1.1 float
    ("0x1F", _UNDECIDED),
    ("0b11", _UNDECIDED),
    ("2001-12-14", _UNDECIDED),
    ("1:20", _UNDECIDED),
    ("1_000", _UNDECIDED),
    ("1.", _UNDECIDED),
    ("--config=/etc/x", "--config=/etc/x"),
    ("-c", "-c"),
    ("-", "-"),
    ("-1", _UNDECIDED),
    ("-.5", _UNDECIDED),
    ("~", None),
    ("~x", "~x"),
    ("<<", "<<"),
    ("=", "="),
    ("./run.sh", "./run.sh"),
    (".inf", _UNDECIDED),
    (".5", _UNDECIDED),
    (".", _UNDECIDED),
    ("1٣", "1٣"),  # a digit that is not ASCII: no pattern reads it
]


@pytest.mark.parametrize(("raw", "expected"), EXAMPLES)
def test_the_fast_path_decides_common_forms(raw: str, expected: Any) -> None:
    got = yamlpos._plain_value(raw)
    assert got is expected if expected is _UNDECIDED or expected is None else _same(got, expected)
    assert _disagreement(raw) is None


_FIRST = st.sampled_from(list("-+.0123456789<=~"))
_REST = st.text(alphabet="0123456789.-+_:eExXbBtTZGKMPiImnNfaso/ %٣", max_size=8)


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(_FIRST, _REST)
def test_the_fast_path_agrees_with_the_full_resolution(first: str, rest: str) -> None:
    assert _disagreement(first + rest) is None


def _plain_scalars(root: Path) -> set[str]:
    """The untagged plain scalars of every YAML file under ``root`` that start with a
    character the compiled reader hands to Python."""
    found: set[str] = set()
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        try:
            events = list(yaml.parse(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader))
        except (UnicodeDecodeError, OSError, yaml.YAMLError):
            continue
        for event in events:
            if (
                isinstance(event, yaml.ScalarEvent)
                and not event.style
                and event.tag is None
                and event.value[:1] in "-+.0123456789<=~"
                and event.value
            ):
                found.add(event.value)
    return found


@pytest.mark.parametrize("part", ["data", "corpus", "cases", "peers"])
def test_the_fast_path_agrees_on_real_manifests(part: str) -> None:
    root = DATA if part == "data" else SHARED / part
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    scalars = _plain_scalars(root)
    assert scalars
    assert [d for d in map(_disagreement, sorted(scalars)) if d is not None] == []


@pytest.mark.parametrize(
    ("written", "read"),
    [
        # Go's strconv.ParseInt(s, 0, 64), after go-yaml drops underscores: prefixes YAML 1.1
        # lacks are integers for kubectl (PyYAML reads them as text)
        ("0o10", 8),
        ("0O10", 8),
        ("-0o10", -8),
        ("0o1_0", 8),
        ("0X1F", 31),
        ("0B101", 5),
        ("0o", "0o"),
        ("0o8", "0o8"),
        ("0o__", "0o__"),
        # explicit tags, as go-yaml v2 resolves them (resolve.go): !!str keeps the text,
        # !!int and !!float read the text as if it were plain, quoted or not
        ("!!str 3", "3"),
        ("!!str 1e9", "1e9"),
        ('!!int "3"', 3),
        ("!!float 3", 3.0),
        ('!!null ""', None),
        ("! 3", "3"),  # the non-specific tag: text for go-yaml (resolvableTag)
        # out of Go's float range: ParseFloat fails and go-yaml keeps the text (not inf)
        ("1e400", "1e400"),
        ("-1e400", "-1e400"),
        ("1.0e+400", "1.0e+400"),
        ("1" + "0" * 400 + ".0", "1" + "0" * 400 + ".0"),
    ],
)
def test_numbers_and_tags_are_read_as_kubectl_reads_them(written: str, read: object) -> None:
    ((data, _dups),) = list(load_documents(f"a: {written}\n"))
    assert data["a"] == read and type(data["a"]) is type(read)


@pytest.mark.parametrize(
    "text", ["a: !!int abc\n", 'a: !!int "3\\n"\n', "a: !!int |\n  1\n", 'a: !!bool "true\\n"\n']
)
def test_a_tagged_text_of_another_type_is_kubectls_error(text: str) -> None:
    """(A text that ends in a line break is never a number or a flag for Go: Python's $
    matched before it, and !!bool "true\\n" read as false.)"""
    with pytest.raises(YamlInputError, match=r"cannot decode !!str `.*` as a !!(int|bool)"):
        list(load_documents(text))


def test_an_anchor_defined_again_names_the_later_value() -> None:
    """go-yaml v2 (parser.anchor) takes a redefined anchor, kubectl too; it failed the run
    as PyYAML's composer does."""
    ((data, _dups),) = list(load_documents("a: &x 1\nb: *x\nc: &x 2\nd: *x\n"))
    assert data == {"a": 1, "b": 1, "c": 2, "d": 2}
