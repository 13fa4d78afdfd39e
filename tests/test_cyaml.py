"""The compiled reader (ssrisk/_cyaml.c) against the pure-Python one (ssrisk.yamlpos).

Both must give the same documents: the same types and values, the same key order and the same
packed positions. The compiled reader leaves every rare case (anchors, aliases, tags, merge
keys, duplicate keys, deep nesting, syntax errors) to the Python one by returning ``None``;
these tests check that it does, and that the whole product gives byte-identical output with
either reader.
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, SHARED, containers, ssrisk_executable
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssrisk import yamlpos
from ssrisk.loading import _SyntaxChecker

_C = yamlpos._COMPILED
needs_c = pytest.mark.skipif(_C is None, reason="the compiled reader was not built")


def _python(text: str, strict: bool) -> list[tuple[Any, list[yamlpos.DuplicateKey]]]:
    compiled, yamlpos._COMPILED = yamlpos._COMPILED, None
    try:
        return list(yamlpos.load_documents(text, strict))
    finally:
        yamlpos._COMPILED = compiled


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return (
            list(a) == list(b)
            and a._pos.tolist() == b._pos.tolist()
            and all(_same(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return (
            len(a) == len(b)
            and a._pos.tolist() == b._pos.tolist()
            and all(_same(x, y) for x, y in zip(a, b, strict=True))
        )
    return bool(a == b)


def _agree(text: str, strict: bool) -> str | None:
    """``None`` when the compiled reader gives what the Python one gives (or leaves the text
    to it), else what differs."""
    assert _C is not None
    compiled = _C.load(text, yamlpos._PLAIN[strict])
    if compiled is None:
        return None
    try:
        python = _python(text, strict)
    except Exception as exc:  # any error the compiled reader missed
        return f"the Python reader raised {exc!r}"
    if any(duplicates for _, duplicates in python):
        return "duplicate keys not left to the Python reader"
    if len(compiled) != len(python):
        return f"{len(compiled)} documents, not {len(python)}"
    for i, (mine, (theirs, _)) in enumerate(zip(compiled, python, strict=True)):
        if not _same(mine, theirs):
            return f"document {i}: {mine!r} != {theirs!r}"
    return None


def _yaml_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and p.is_file()
    )


def _disagreements(root: Path) -> tuple[int, list[str]]:
    read, bad = 0, []
    for path in _yaml_files(root):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for strict in (True, False):
            read += 1
            found = _agree(text, strict)
            if found is not None:
                bad.append(f"{path} (strict={strict}): {found}")
    return read, bad


@needs_c
def test_the_readers_agree_on_every_test_input() -> None:
    read, bad = _disagreements(DATA)
    assert read > 100
    assert bad == []


@needs_c
@pytest.mark.parametrize("part", ["corpus", "cases", "peers"])
def test_the_readers_agree_on_the_shared_inputs(part: str) -> None:
    root = SHARED / part
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    read, bad = _disagreements(root)
    assert read > 0
    assert bad == []


#: Texts the compiled reader must leave to the Python one (which reads, refuses or reports).
LEFT_TO_PYTHON = [
    "- &x a\n- *x\n",  # anchor and alias
    "a: !!str 1\n",  # an explicit tag
    "a: ! 1\n",  # the non-specific tag
    "a: 1\na: 2\n",  # a duplicate key (reported as a notice)
    "<<: {a: 1}\nb: 2\n",  # a merge key
    "? [a]\n: 1\n",  # a key that is not a scalar
    "a: [1\n",  # a syntax error
    "a: \x00\n",  # a control character
    "a: '\ud800'\n",  # a lone surrogate: no UTF-8 for the parser
    "[" * 202 + "]" * 202,  # deeper than MAX_DEPTH
    "a: 1\n---\nb: *c\n",  # an error in a later document: no document of the text is kept
]


@needs_c
@pytest.mark.parametrize("text", LEFT_TO_PYTHON)
def test_rare_cases_are_left_to_the_python_reader(text: str) -> None:
    assert _C is not None
    assert _C.load(text, yamlpos._PLAIN[True]) is None


#: Texts the compiled reader reads itself, each with what it must give.
READ_IN_C = [
    ("\ufeffa: 1\n", [{"a": 1}]),  # a byte order mark, skipped without a column
    (
        "a: yes\nb: No\nc: ~\nd: null\ne: y\nf: ON\ng: on\nh: Off\n",
        [
            {"a": True, "b": False, "c": None, "d": None}
            | {"e": True, "f": True, "g": True, "h": False}
        ],
    ),
    (
        "a: 1e9\nb: 0x1F\nc: 017\nd: 1_000\ne: .inf\nf: 2001-12-14\ng: 1:20\n",
        [{"a": 1e9, "b": 31, "c": 15, "d": 1000, "e": math.inf, "f": "2001-12-14", "g": "1:20"}],
    ),
    ("a: 99999999999999999999\nb: '1'\nc: |\n  x\n", [{"a": 1e20, "b": "1", "c": "x\n"}]),
    ("a: =\n=: n\n", [{"a": "=", "=": False}]),  # go-yaml: "=" is text, "n" a boolean
    ("😀: 1\nb: [😀, 'é']\n", [{"😀": 1, "b": ["😀", "é"]}]),
    ("--- \n...\n---\na:\n", [None, {"a": None}]),
    ("", []),
]


@needs_c
@pytest.mark.parametrize(("text", "expected"), READ_IN_C)
def test_common_cases_are_read_in_c(text: str, expected: list[Any]) -> None:
    assert _C is not None
    assert _C.load(text, yamlpos._PLAIN[True]) == expected
    assert _agree(text, True) is None and _agree(text, False) is None


_COMMON = [
    "a", "yes", "No", "on", "off", "OFF", "y", "N", "=", "~", "null", "Null", "", "1", "-1", "+1",
    "0", "01", "0x1f", "0b11", "0o7", "1_0", "1e9", "1.5", "-.5", ".inf", "-.Inf", ".nan", "1:20",
    "2001-12-14", "9" * 25, "'1'", '"x"', "a b", "é", "😀", "true", "False",
]  # fmt: skip
#: Rare scalars (left to the Python reader, or errors), a tenth of the draws.
_RARE = ["<<", "!!str 1", "&a x", "*a", "-", "?", "%"]
_SCALARS = st.sampled_from(_COMMON * 3 + _RARE)
_BLOCKS = st.sampled_from(["|", ">-", "|+"])

_Tree = st.recursive(
    _SCALARS | st.tuples(_BLOCKS, _SCALARS),
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(_SCALARS, inner, min_size=1, max_size=4)
    ),
    max_leaves=12,
)


def _render(tree: Any, indent: str) -> str:
    """Block YAML for a drawn tree, as the value after ``key:`` or ``-`` (with its leading
    space or line break)."""
    if isinstance(tree, str):
        return f" {tree}"
    if isinstance(tree, tuple):
        return f" {tree[0]}\n{indent}  {tree[1] or 'x'}"
    if isinstance(tree, list):
        return "".join(f"\n{indent}-{_render(item, indent + '  ')}" for item in tree)
    return "".join(f"\n{indent}{k}:{_render(v, indent + '  ')}" for k, v in tree.items())


@needs_c
@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(st.lists(_Tree, min_size=1, max_size=3), st.booleans())
def test_the_readers_agree_on_generated_text(documents: list[Any], strict: bool) -> None:
    text = "\n---".join(_render(tree, "") for tree in documents) + "\n"
    assert _agree(text, strict) is None


@needs_c
@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(st.integers(0, 10**6), st.text(min_size=1, max_size=3), st.booleans())
def test_the_readers_agree_on_damaged_manifests(at: int, insert: str, strict: bool) -> None:
    text = (DATA / "perf" / "risky.yaml").read_text(encoding="utf-8")
    at %= len(text)
    assert _agree(text[:at] + insert + text[at + 1 :], strict) is None


@needs_c
@pytest.mark.slow
def test_either_reader_gives_the_same_output() -> None:
    """The whole product over the shared corpus (or the test data), once with each reader:
    byte-identical JSON."""
    corpus = SHARED / "corpus"
    target = corpus if corpus.is_dir() else DATA
    outputs = []
    for pure in (False, True):
        env = {k: v for k, v in os.environ.items() if k != "SSRISK_PURE_PYTHON_YAML"}
        if pure:
            env["SSRISK_PURE_PYTHON_YAML"] = "1"
        done = subprocess.run(
            [ssrisk_executable(), "check", "--format", "json", str(target)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
        assert done.returncode in (0, 1, 2), done.stderr
        outputs.append((done.returncode, done.stdout, done.stderr))
    assert outputs[0] == outputs[1]
    assert outputs[0][1].count('"rule"') > 10


def test_without_the_compiled_reader_the_python_one_reads() -> None:
    """Where the extension was not built (no compiler or libyaml headers at install time),
    ssrisk imports and reads with the Python reader; the environment variable chooses it."""
    import sys

    script = (
        "import sys; sys.modules['ssrisk._cyaml'] = None\n"
        "from ssrisk import yamlpos\n"
        "assert yamlpos._COMPILED is None\n"
        "(data, dups), = yamlpos.load_documents('a: [1, on]\\n')\n"
        "print(data, data['a']._pos.tolist())\n"
    )
    for env in ({}, {"SSRISK_PURE_PYTHON_YAML": "1"}):
        done = subprocess.run(
            [sys.executable, "-c", script.replace("sys.modules['ssrisk._cyaml'] = None", "")
             if env else script],
            capture_output=True, text=True, env={**os.environ, **env}, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == "{'a': [1, True]} [3, 4, 7]\n"


def _python_plain_json(data: Any, max_nodes: int, max_depth: int, before: set[int]) -> bool:
    from ssrisk import validation

    compiled, yamlpos._COMPILED = yamlpos._COMPILED, None
    try:
        repeats = validation.Repeats(10)
        repeats.seen = set(before)
        plain = validation.is_plain_json(data, max_nodes, max_depth, repeats)
        return plain and repeats.seen - before == {id(c) for c in containers(data)}
    finally:
        yamlpos._COMPILED = compiled


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=2) | st.floats(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=2) | st.integers(), inner, max_size=4)
    ),
    max_leaves=25,
)


@needs_c
@settings(max_examples=400, derandomize=True, deadline=None)
@given(_VALUES, st.integers(0, 40), st.integers(0, 6), st.booleans(), st.booleans())
def test_the_plain_json_walks_agree(
    data: Any, max_nodes: int, max_depth: int, share: bool, seen_before: bool
) -> None:
    """``is_plain_json`` in C and in Python: the same answer and the same containers
    recorded, with budgets, depths, floats, non-string keys and containers reached twice."""
    from ssrisk import validation

    found = containers(data)
    if share and found:  # a container reached twice (an alias)
        data = [data, found[-1]]
    before = {id(found[0])} if seen_before and found else set()
    expected = _python_plain_json(data, max_nodes, max_depth, before)
    repeats = validation.Repeats(10)
    repeats.seen = set(before)
    assert validation.is_plain_json(data, max_nodes, max_depth, repeats) is bool(expected or False)
    if expected:
        assert repeats.seen - before == {id(c) for c in containers(data)}


def _pyyaml_parses(text: str) -> bool:
    import yaml
    from yaml._yaml import CParser

    try:
        CParser(text).raw_parse()
    except yaml.YAMLError:
        return False
    return True


@needs_c
def test_the_syntax_check_agrees_with_pyyaml_on_every_test_input() -> None:
    """``parses`` (loading's syntax-only check) and PyYAML's C parser accept the same
    texts: every test input, and the texts left to the Python reader."""
    assert _C is not None
    texts = [t for t in LEFT_TO_PYTHON if "\ud800" not in t]
    for path in _yaml_files(DATA):
        try:
            texts.append(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
    assert len(texts) > 100
    checker = _SyntaxChecker()
    verdicts = [(_C.parses(t), _pyyaml_parses(t), checker.check(t) is None) for t in texts]
    # what it accepts PyYAML accepts; what it refuses is asked of PyYAML (deep nesting too)
    assert [i for i, (mine, theirs, _) in enumerate(verdicts) if mine and not theirs] == []
    assert [i for i, (_, theirs, checked) in enumerate(verdicts) if checked != theirs] == []
    assert {mine for mine, _, _ in verdicts} == {True, False}
    assert _C.parses("a: '\ud800'\n") is None  # not Unicode: PyYAML says what is wrong
    assert _C.parses("[" * 201 + "]" * 201) is False and _C.parses("[" * 200 + "]" * 200)


@needs_c
@settings(
    max_examples=300, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck)
)
@given(st.integers(0, 10**6), st.text(min_size=1, max_size=3))
def test_the_syntax_check_agrees_with_pyyaml_on_damaged_manifests(at: int, insert: str) -> None:
    assert _C is not None
    text = (DATA / "perf" / "risky.yaml").read_text(encoding="utf-8")
    at %= len(text)
    damaged = text[:at] + insert + text[at + 1 :]
    if any("\ud800" <= c <= "\udfff" for c in damaged):
        return
    assert _C.parses(damaged) == _pyyaml_parses(damaged)
    assert (_SyntaxChecker().check(damaged) is None) == _pyyaml_parses(damaged)
