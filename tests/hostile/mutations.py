"""A mutation fuzzer for ``ssrisk check``: manifests from the test data (and ``../shared``
when present) mutated at the byte level and at the level of their YAML structure, each run
through the command line, which must keep its invariants:

* it ends with exit code 0, 1 or 2, and never prints a traceback or an internal error;
* ``--format json`` (and ``sarif``) output is valid JSON (the JSON report validates against
  ``ssrisk/schemas/report.schema.json``), ``junit`` is well-formed XML, ``text`` and
  ``github`` hold no raw control characters;
* the output is deterministic: a second run of the same input prints the same bytes (and a
  run in a fresh process with another hash seed, for a sample of inputs).

Used by ``tests/hostile/test_hostile_fuzz.py`` (a short run) and ``scripts/fuzz_mutations.py``
(the long run). Everything is seeded: ``Fuzzer(seed)`` makes the same cases every time.
"""

from __future__ import annotations

import gc
import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SHARED = ROOT.parent / "shared"
FORMATS = ("json", "json", "json", "sarif", "junit", "text", "github")
#: Seconds one case may take before it counts as a hang.
CASE_TIMEOUT_S = 60

# --- seeds -----------------------------------------------------------------------------------


def seed_texts(limit_bytes: int = 200_000) -> list[str]:
    """Manifests to mutate: the test data's YAML and JSON files (and the real-world corpus of
    ``../shared`` when it is there), each at most ``limit_bytes``, in a stable order."""
    roots = [DATA / "robust", DATA / "hostile" / "kinds", DATA / "rules", ROOT / "examples"]
    roots += [SHARED / "corpus", SHARED / "peers"]
    out = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
                continue
            if path.stat().st_size > limit_bytes:
                continue
            try:
                out.append(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, OSError):
                continue
    return out


# --- values that have broken parsers before --------------------------------------------------

INTERESTING: list[Any] = [
    0,
    1,
    -1,
    3,
    2**31 - 1,
    2**31,
    2**63,
    2**64,
    -(2**63) - 1,
    1e9,
    1.5,
    float("nan"),
    float("inf"),
    True,
    None,
    "",
    "0",
    "1",
    "100%",
    "0%",
    "150%",
    "-1%",
    "50%",
    "9" * 5000 + "%",
    "a" * 5000,
    "\x00",
    "\x1b[31mred",
    "line\n::error::injected",
    "\u202eevil",
    "\ufffd",
    "{{ .Values.x }}",
    "OrderedReady",
    "Parallel",
    "OnDelete",
    "RollingUpdate",
    "ReadWriteOnce",
    "StatefulSet",
    "apps/v1",
    [],
    {},
    [None],
    {"": None},
    {"matchLabels": {"app": "db"}},
    [{"name": "x"}],
]
#: Raw YAML text spliced in at the byte level.
SNIPPETS = [
    "0x" + "f" * 5000,
    "9" * 5000,
    "!!python/object/apply:os.system ['true']",
    "!!str",
    "!vault |\n  x",
    "&a",
    "*a",
    "*undefined",
    "<<: *a",
    "{{ .Values.replicas }}",
    "{{- if .Values.x }}",
    '"\\x53"',
    '"\\u0053tatefulSet"',
    "? complex\n: key",
    "[" * 300,
    "]" * 300,
    "{" * 300,
    "---",
    "...",
    "%YAML 1.1\n---",
    "%TAG ! tag:example.com,2000:\n---",
    "- - - -",
    "\t",
    "\r\n",
    "\ufeff",
    "\x00",
    "#",
    "kind: StatefulSet",
    "kind: List\nitems: 5",
    "apiVersion: apps/v1beta1",
    "replicas: 1e9",
    "replicas: .nan",
]


# --- mutations -------------------------------------------------------------------------------


@dataclass
class Case:
    """One mutated input: its bytes, the file name it is written under, the format asked
    for, and how it was made (for the report)."""

    data: bytes
    name: str
    fmt: str
    how: list[str] = field(default_factory=list)


class Fuzzer:
    """Makes :class:`Case` values from ``seeds`` with ``random.Random(seed)``."""

    def __init__(self, seed: int, seeds: list[str] | None = None) -> None:
        self.rng = random.Random(seed)
        self.seeds = seeds if seeds is not None else seed_texts()
        assert self.seeds, "no seed manifests"
        self.structural: list[Callable[[Any], Any]] = [
            self._replace_value,
            self._delete_key,
            self._change_kind,
            self._wrap_in_list,
            self._nest_deeply,
            self._add_related,
            self._swap_types,
        ]
        self.textual: list[Callable[[str], str]] = [
            self._anchor_and_alias,
            self._duplicate_line,
            self._insert_snippet,
            self._tag_a_value,
            self._reindent_line,
            self._splice_seed,
        ]

    # -- the case generator --

    def cases(self, count: int) -> Iterator[Case]:
        for i in range(count):
            yield self.case(i)

    def case(self, index: int) -> Case:
        rng = self.rng
        text = rng.choice(self.seeds)
        how: list[str] = []
        kind = rng.random()  # 40% structure only, 30% YAML text, 30% bytes (and text)
        if kind < 0.4 or rng.random() < 0.2:
            text = self._structure_aware(text, how)
        if kind >= 0.4:
            for _ in range(rng.randint(1 if kind < 0.7 else 0, 3)):
                mutate = rng.choice(self.textual)
                how.append(mutate.__name__.lstrip("_"))
                text = mutate(text)
        data = self._encode(text, how)
        if kind >= 0.7:
            for _ in range(rng.choice((1, 1, 2, 3, 8))):
                data = self._byte_mutation(data, how)
        suffix = rng.choice((".yaml", ".yaml", ".yml", ".json"))
        return Case(data, f"case{index}{suffix}", rng.choice(FORMATS), how)

    # -- structure-aware --

    def _structure_aware(self, text: str, how: list[str]) -> str:
        try:
            docs = [d for d in yaml.safe_load_all(text) if d is not None]
        except Exception:
            return text
        if not docs or any(_expanded_size(d) > 50_000 for d in docs):
            return text  # empty, or an alias bomb: the text mutations take it
        for _ in range(self.rng.randint(1, 4)):
            mutate = self.rng.choice(self.structural)
            how.append(mutate.__name__.lstrip("_"))
            i = self.rng.randrange(len(docs))
            docs[i] = mutate(docs[i])
        style = self.rng.choice(("block", "flow", "json"))
        how.append(f"dump-{style}")
        try:
            if style == "json":
                return "\n".join(json.dumps(d, default=str) for d in docs[:1]) + "\n"
            return yaml.safe_dump_all(
                docs, default_flow_style=(style == "flow"), sort_keys=False, allow_unicode=True
            )
        except Exception:
            return text

    def _paths(self, node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Paths to the nodes of ``node`` (its size is bounded by :func:`_expanded_size`)."""
        out = [prefix]
        if isinstance(node, dict) and len(prefix) < 12:
            for k, v in node.items():
                out.extend(self._paths(v, (*prefix, k)))
        elif isinstance(node, list) and len(prefix) < 12:
            for i, v in enumerate(node):
                out.extend(self._paths(v, (*prefix, i)))
        return out

    def _set(self, root: Any, path: tuple[Any, ...], value: Any) -> Any:
        if not path:
            return value
        node = root
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return root

    def _replace_value(self, doc: Any) -> Any:
        path = self.rng.choice(self._paths(doc))
        value = self.rng.choice(INTERESTING)
        if isinstance(value, (dict, list)):
            value = json.loads(json.dumps(value))
        return self._set(doc, path, value)

    def _delete_key(self, doc: Any) -> Any:
        paths = [p for p in self._paths(doc) if p]
        if not paths:
            return doc
        path = self.rng.choice(paths)
        node = doc
        for key in path[:-1]:
            node = node[key]
        with suppress(KeyError, IndexError, TypeError):
            del node[path[-1]]
        return doc

    def _change_kind(self, doc: Any) -> Any:
        if isinstance(doc, dict):
            doc["kind"] = self.rng.choice(
                ["StatefulSet", "Service", "PodDisruptionBudget", "StorageClass", "List",
                 "PersistentVolumeClaim", "PersistentVolume", "Namespace", "ConfigMap",
                 "StatefulSetList", "Statefulset"]
            )  # fmt: skip
            doc["apiVersion"] = self.rng.choice(
                ["apps/v1", "v1", "policy/v1", "policy/v1beta1", "storage.k8s.io/v1",
                 "apps/v1beta1", "apps/v2", 1]
            )  # fmt: skip
        return doc

    def _wrap_in_list(self, doc: Any) -> Any:
        items: Any = [doc] if self.rng.random() < 0.8 else self.rng.choice([5, "x", None, {}])
        return {"apiVersion": "v1", "kind": "List", "items": items}

    def _nest_deeply(self, doc: Any) -> Any:
        value: Any = "x"
        for _ in range(self.rng.choice((50, 150, 250, 1100))):
            value = [value] if self.rng.random() < 0.5 else {"k": value}
        path = self.rng.choice(self._paths(doc))
        return self._set(doc, path, value)

    def _add_related(self, doc: Any) -> Any:
        if not isinstance(doc, dict):
            return doc
        labels = self.rng.choice([{"app": "db"}, {}, {"app": None}, None, "app=db"])
        return {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                doc,
                {
                    "apiVersion": self.rng.choice(["policy/v1", "policy/v1beta1"]),
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": "pdb"},
                    "spec": {
                        self.rng.choice(["minAvailable", "maxUnavailable"]): self.rng.choice(
                            INTERESTING[:24]
                        ),
                        "selector": {"matchLabels": labels},
                    },
                },
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": "db"},
                    "spec": {"clusterIP": self.rng.choice(["None", None, 5]), "selector": labels},
                },
            ],
        }

    def _swap_types(self, doc: Any) -> Any:
        path = self.rng.choice(self._paths(doc))
        node = doc
        for key in path:
            node = node[key]
        swapped: Any
        if isinstance(node, dict):
            swapped = list(node.values())
        elif isinstance(node, list):
            swapped = {str(i): v for i, v in enumerate(node)}
        else:
            swapped = [node]
        return self._set(doc, path, swapped)

    # -- text-level YAML --

    def _lines(self, text: str) -> list[str]:
        return text.split("\n")

    def _anchor_and_alias(self, text: str) -> str:
        lines = self._lines(text)
        keyed = [i for i, ln in enumerate(lines) if re.match(r"^\s*[\w.-]+:\s*\S", ln)]
        if len(keyed) < 2:
            return text
        a, b = sorted(self.rng.sample(keyed, 2))
        lines[a] = re.sub(r":\s*", ": &fz ", lines[a], count=1)
        lines[b] = re.sub(r":\s*\S.*$", ": *fz", lines[b], count=1)
        return "\n".join(lines)

    def _duplicate_line(self, text: str) -> str:
        lines = self._lines(text)
        i = self.rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines)

    def _insert_snippet(self, text: str) -> str:
        at = self.rng.randrange(len(text) + 1)
        return text[:at] + self.rng.choice(SNIPPETS) + text[at:]

    def _tag_a_value(self, text: str) -> str:
        lines = self._lines(text)
        keyed = [i for i, ln in enumerate(lines) if re.match(r"^\s*[\w.-]+:\s*\S", ln)]
        if not keyed:
            return text
        i = self.rng.choice(keyed)
        tag = self.rng.choice(["!!str", "!!int", "!!binary", "!custom", "!!python/name:os.system"])
        lines[i] = re.sub(r":\s*", f": {tag} ", lines[i], count=1)
        return "\n".join(lines)

    def _reindent_line(self, text: str) -> str:
        lines = self._lines(text)
        i = self.rng.randrange(len(lines))
        lines[i] = " " * self.rng.choice((0, 1, 3, 8)) + lines[i].lstrip()
        return "\n".join(lines)

    def _splice_seed(self, text: str) -> str:
        other = self.rng.choice(self.seeds)
        a = self.rng.randrange(len(text) + 1)
        b = self.rng.randrange(len(other) + 1)
        return text[:a] + other[b:]

    # -- bytes --

    def _encode(self, text: str, how: list[str]) -> bytes:
        choice = self.rng.random()
        if choice < 0.04:
            how.append("utf-16")
            return text.encode("utf-16")
        if choice < 0.08:
            how.append("crlf")
            return text.replace("\n", "\r\n").encode("utf-8", "surrogatepass")
        if choice < 0.10:
            how.append("bom")
            return b"\xef\xbb\xbf" + text.encode("utf-8", "surrogatepass")
        return text.encode("utf-8", "surrogatepass")

    def _byte_mutation(self, data: bytes, how: list[str]) -> bytes:
        rng = self.rng
        buf = bytearray(data)
        op = rng.randrange(6)
        at = rng.randrange(len(buf) + 1)
        if op == 0 and buf:  # flip a bit
            i = min(at, len(buf) - 1)
            buf[i] ^= 1 << rng.randrange(8)
            how.append("bit-flip")
        elif op == 1:  # an interesting byte
            buf[at:at] = bytes([rng.choice(b"\x00\xff\x80\r\n\t{}[]:-&*!|>\"'\\%#?,")])
            how.append("byte-insert")
        elif op == 2 and buf:  # delete a run
            del buf[at : at + rng.randint(1, 64)]
            how.append("byte-delete")
        elif op == 3 and buf:  # duplicate a run
            end = min(len(buf), at + rng.randint(1, 256))
            buf[at:at] = buf[at:end] * rng.randint(1, 8)
            how.append("byte-repeat")
        elif op == 4:  # truncate
            del buf[at:]
            how.append("truncate")
        else:  # random bytes
            buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            how.append("random-bytes")
        return bytes(buf)


def _expanded_size(node: Any, limit: int = 50_001) -> int:
    """Nodes of ``node`` counted as if aliases were copied, counting stops past ``limit``."""
    count = 0
    stack = [node]
    while stack and count < limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


# --- running a case --------------------------------------------------------------------------


@dataclass
class Outcome:
    code: int
    out: str
    err: str


class Hang(Exception):
    """A case ran past :data:`CASE_TIMEOUT_S`."""


def _alarm(signum: int, frame: object) -> None:
    raise Hang


#: Options of every fuzzed check: one process, and exit 1 on any warning, so that "the
#: mutations reach findings" does not depend on which rules give errors by default.
CHECK_OPTIONS = ("--jobs", "1", "--fail-on", "warning")


def run_in_process(path: Path, fmt: str) -> Outcome:
    """``ssrisk check --format FMT [CHECK_OPTIONS] PATH`` in this process (as the test helper
    does)."""
    from ssrisk.cli import main

    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_TIMEOUT_S)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                code = main(["check", "--format", fmt, *CHECK_OPTIONS, str(path)])
            except SystemExit as exc:
                code = int(exc.code or 0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(int(code), out.getvalue(), err.getvalue())


def run_in_subprocess(path: Path, fmt: str, hash_seed: int) -> Outcome:
    """The same, through the installed console script in a fresh process."""
    exe = Path(sys.executable).with_name("ssrisk")
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    p = subprocess.run(
        [str(exe), "check", "--format", fmt, *CHECK_OPTIONS, str(path)],
        capture_output=True,
        text=True,
        timeout=CASE_TIMEOUT_S,
        env=env,
    )
    return Outcome(p.returncode, p.stdout, p.stderr)


_REPORT_VALIDATOR: Any = None
_RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _report_validator() -> Any:
    global _REPORT_VALIDATOR
    if _REPORT_VALIDATOR is None:
        import jsonschema_rs

        schema = json.loads((ROOT / "ssrisk" / "schemas" / "report.schema.json").read_text())
        _REPORT_VALIDATOR = jsonschema_rs.validator_for(schema)
    return _REPORT_VALIDATOR


def violations(run: Outcome, fmt: str) -> list[str]:
    """What breaks the invariants in one run's outcome (``[]``: nothing)."""
    found = []
    if run.code not in (0, 1, 2):
        found.append(f"exit code {run.code}")
    both = run.out + run.err
    if "Traceback" in both:
        found.append("traceback")
    if "internal error" in both:
        found.append("internal error: " + _first_line_with(both, "internal error"))
    try:
        if fmt in ("json", "sarif"):
            doc = json.loads(run.out)
            if fmt == "json":
                problems = [e.message for e in _report_validator().iter_errors(doc)]
                if problems:
                    found.append(f"report schema: {problems[0]}")
        elif fmt == "junit":
            ET.fromstring(run.out)
    except (ValueError, ET.ParseError) as exc:
        found.append(f"{fmt} output does not parse: {exc}")
    if fmt in ("text", "github") and _RAW_CONTROL.search(run.out):
        found.append("raw control character in the output")
    return found


def _first_line_with(text: str, words: str) -> str:
    for line in text.splitlines():
        if words in line:
            return line[:300]
    return ""


@dataclass
class Tally:
    """Counts of a fuzz run."""

    cases: int = 0
    exit_codes: dict[int, int] = field(default_factory=dict)
    subprocess_checks: int = 0
    failures: list[tuple[Case, list[str]]] = field(default_factory=list)


def check_case(
    case: Case, directory: Path, tally: Tally, fresh_process: bool = False, hash_seed: int = 0
) -> list[str]:
    """Write ``case`` into ``directory``, run it twice in this process (and once in a fresh
    process when ``fresh_process``), and return the invariants it breaks."""
    path = directory / case.name
    path.write_bytes(case.data)
    try:
        first = run_in_process(path, case.fmt)
        second = run_in_process(path, case.fmt)
    except Hang:
        return [f"no answer within {CASE_TIMEOUT_S} s"]
    if tally.cases % 50 == 0:
        # each run freezes what it loaded (engine.load_all: gc.freeze); in one long-lived
        # process the frozen garbage of earlier runs would pile up
        gc.unfreeze()
        gc.collect()
    broken = violations(first, case.fmt)
    if (first.code, first.out) != (second.code, second.out):
        broken.append("a second run printed something else")
    if fresh_process:
        tally.subprocess_checks += 1
        try:
            fresh = run_in_subprocess(path, case.fmt, hash_seed)
        except subprocess.TimeoutExpired:
            broken.append(f"no answer within {CASE_TIMEOUT_S} s in a fresh process")
        else:
            broken.extend(f"fresh process: {v}" for v in violations(fresh, case.fmt))
            if (fresh.code, fresh.out) != (first.code, first.out):
                broken.append("a fresh process (another hash seed) printed something else")
    tally.cases += 1
    tally.exit_codes[first.code] = tally.exit_codes.get(first.code, 0) + 1
    if broken:
        tally.failures.append((case, broken))
    return broken
