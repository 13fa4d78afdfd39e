"""Pattern matching over attacker-controlled strings costs linear time: one long command line,
probe, script, quantity or ``# Source:`` comment in a manifest (a chart renders a 100,000-word
string from one line: ``{{ repeat 100000 "etcdctl " }}``) must not make ssrisk backtrack.

Each case is a StatefulSet as a user writes it, with one field made long in the shape that
made a pattern quadratic (``\\betcdctl\\b.*\\bmember`` rescanned the rest of the line from
each ``etcdctl``; a lazy ``.*?`` before ``\\s*$`` rescanned a run of spaces from each space;
``\\d+\\.?\\d*`` tried every split of a run of digits). Ten times the string may cost at most
:data:`test_hostile_scaling.RATIO` times the CPU time (quadratic gave about 100); where the
string ends in what the rule looks for, the finding is still made.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hostile_scaling import _scales_linearly

from ssrisk.engine import check
from ssrisk.plugins import collect_rules, plugin_manager
from ssrisk.settings import Settings

SET = """\
apiVersion: v1
kind: Service
metadata:
  name: db
spec:
  clusterIP: None
  selector:
    app: db
  ports:
    - port: 5432
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 3
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
        - name: db
          image: example.com/db:1
          env:
            - name: DB_SEEDS
              value: db-0.db,db-1.db
          volumeMounts:
            - name: data
              mountPath: /data
{container}
  volumeClaimTemplates:
    - metadata:
        name: data
      spec:
        accessModes: [ReadWriteOnce]
        resources:
          requests:
            storage: 1Gi
"""


def _field(yaml: str) -> str:
    return "\n".join("          " + line for line in yaml.splitlines())


def _pre_stop(script: str) -> str:
    return _field(
        f"lifecycle:\n  preStop:\n    exec:\n      command: [sh, -c, {json.dumps(script)}]"
    )


def _readiness(script: str) -> str:
    return _field(f"readinessProbe:\n  exec:\n    command: [sh, -c, {json.dumps(script)}]")


class Case(NamedTuple):
    name: str
    #: the manifest with its long string made of about ``n`` words
    manifest: Callable[[int], str]
    #: the function (``module:name``) that must be handed the string, and a word of it
    matcher: str
    marker: str
    #: a rule whose finding the manifest still gives, if any
    rule: str | None = None
    #: the string makes the object one the API server rejects (an input error, no set checked)
    rejected: bool = False


CASES = [
    Case(
        "preStop: many etcdctl and no member remove on the line",
        lambda n: SET.format(
            container=_pre_stop("etcdctl " * n + "\netcdctl member remove $(hostname)")
        ),
        "ssrisk.rules.prestop_destroys_state:followed_by",
        "etcdctl",
        "prestop-destroys-state",
    ),
    Case(
        "preStop: many consul words",
        lambda n: SET.format(container=_pre_stop("consul " * n + "\nconsul leave")),
        "ssrisk.rules.prestop_destroys_state:followed_by",
        "consul leave",
        "prestop-destroys-state",
    ),
    Case(
        "preStop: one long recursive-looking rm flag",
        lambda n: SET.format(container=_pre_stop("rm -" + "r" * (8 * n) + "; rm -rf /data")),
        "ssrisk.rules.prestop_destroys_state:_removed_paths",
        "rm -rf /data",
        "prestop-destroys-state",
    ),
    Case(
        "preStop: many rm -r in one command",
        lambda n: SET.format(container=_pre_stop("rm -r /x " * n + "; rm -rf /data/db")),
        "ssrisk.rules.prestop_destroys_state:_removed_paths",
        "rm -rf /data/db",
        "prestop-destroys-state",
    ),
    Case(
        "readiness exec: many ping clients in one command",
        lambda n: SET.format(container=_readiness("redis-cli " * n + "| redis-cli ping")),
        "ssrisk.rules._probes:local_exec",
        "redis-cli ping",
    ),
    Case(
        "command: a script of many blank lines before its exec",
        lambda n: SET.format(
            container=_field(
                "command: [sh, -c, "
                + json.dumps("set -e" + "\n" * (8 * n) + "cd /\nexec postgres")
                + "]"
            )
        ),
        "ssrisk.rules._systems:program_line",
        "exec postgres",
    ),
    Case(
        "resources: an unreadable quantity of many digits (an input error)",
        lambda n: SET.format(
            container=_field(f'resources:\n  requests:\n    memory: "{"1" * (8 * n)}!"')
        ),
        "ssrisk.embedded_sim.quantity:_parse_quantity_text",
        "1!",
        rejected=True,
    ),
    Case(
        "a # Source: comment with a long run of spaces",
        lambda n: (
            "# Source: chart/templates/" + " " * (8 * n) + "x.yaml\n" + SET.format(container="")
        ),
        "ssrisk.renderers.common:_source_of",
        "# Source: chart/templates/",
    ),
    Case(
        "a comment line of many unclosed ignore comments",
        lambda n: "# " + " # ssrisk: ignore[" * n + "\n" + SET.format(container=""),
        "ssrisk.suppression:match_comment",
        " # ssrisk: ignore[ # ssrisk: ignore[",
    ),
    Case(
        "many ignore comments on lines of their own, one above the other",
        lambda n: "# ssrisk: ignore[single-replica]\n" * n + SET.format(container=""),
        "ssrisk.suppression:match_comment",
        "# ssrisk: ignore[single-replica]",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_long_strings_cost_linear_time(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = collect_rules(plugin_manager())

    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"{n}.yaml"
        path.write_text(case.manifest(n), encoding="utf-8")
        return lambda: check([str(path)], rules, Settings(jobs=1))

    # the string reaches the matcher (a change of the rule's conditions would make this test
    # time nothing)
    module, name = case.matcher.split(":")
    seen: list[str] = []
    matcher = getattr(importlib.import_module(module), name)

    def spy(*args: Any) -> Any:
        seen.append(repr(args))
        return matcher(*args)

    monkeypatch.setattr(importlib.import_module(module), name, spy)
    report = make(2)()
    monkeypatch.undo()
    if case.rejected:
        assert report.statefulsets == 0 and report.errors
    else:
        assert report.statefulsets == 1 and not report.errors
    assert any(case.marker in args for args in seen), f"{case.matcher} never saw the string"
    if case.rule is not None:
        assert case.rule in {f.rule for f in report.findings}
    _scales_linearly(make, 2000)


# --- the linear matchers answer as the backtracking patterns did ------------------------------
# (each old pattern is the oracle, on short strings made of the words it looks for)


def _texts(words: list[str], separators: str) -> st.SearchStrategy[str]:
    pieces = st.sampled_from([*words, " ", "  ", "x", *separators])
    return st.lists(pieces, max_size=14).map("".join)


_MEMBERSHIP_WORDS = [
    "etcdctl", "member", "remove", "nodetool", "decommission", "rabbitmqctl", "reset",
    "force_reset", "cluster", "forget", "rs.remove(", "reconfig", "-remove", "cockroach",
    "node", "consul", "leave", "-",
]  # fmt: skip


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_texts(_MEMBERSHIP_WORDS, "\n;"))
def test_membership_commands_are_found_as_by_the_old_patterns(text: str) -> None:
    from ssrisk.embedded_sim.podtemplate import parse_template
    from ssrisk.rules.prestop_destroys_state import MEMBERSHIP
    from ssrisk.rules.prestop_destroys_state import destroyed_state as destroyed

    old = next(
        (
            what
            for first, then, what in MEMBERSHIP
            # ``first.*then``, each line on its own (a ``\s+`` of ``then`` no longer spans one)
            if any(
                re.search((first.pattern + ".*" if first else "") + then.pattern, line, then.flags)
                for line in text.split("\n")
            )
        ),
        None,
    )
    hook = {"lifecycle": {"preStop": {"exec": {"command": [text]}}}}
    pod = {"spec": {"template": {"spec": {"containers": [hook]}}}}
    got = destroyed(parse_template(pod).containers[0], set())
    assert got == (f"its cluster membership ({old})" if old else None)


_OLD_LOCAL_EXEC = re.compile(
    r"\bruok\b|zookeeper-ready|\bzkOk\.sh\b|\bpg_isready\b"
    r"|\b(?:mysqladmin|mariadb-admin|redis-cli|valkey-cli|rabbitmq-diagnostics)\b[^|;&]*\bping\b",
    re.I,
)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_texts(["redis-cli", "PING", "ping", "mysqladmin", "pg_isready", "-h", "ruok"], "|;&\n"))
def test_local_checks_are_found_as_by_the_old_pattern(text: str) -> None:
    from ssrisk.rules._probes import local_exec

    assert local_exec(text) == (_OLD_LOCAL_EXEC.search(text) is not None)


_OLD_RM = re.compile(r"\brm\s+(-[a-zA-Z]*[rR][a-zA-Z]*\s+|--recursive\s+)+")


def _old_removed_paths(text: str) -> list[str]:
    out: list[str] = []
    for m in _OLD_RM.finditer(text):
        rest = text[m.end() :].split(";")[0].split("&&")[0].split("||")[0]
        words = rest.split()  # (no quotes in these texts: shlex.split would give the same)
        out.extend(w for w in words if w.startswith("/") or w.startswith("$"))
    return out


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_texts(["rm", "-r", "-rf", "-Rv", "-f", "--recursive", "/data", "/x", "$D"], ";&|\n"))
def test_removed_paths_are_those_the_old_pattern_found(text: str) -> None:
    from ssrisk.rules.prestop_destroys_state import _removed_paths

    # each command's first ``rm -r`` gives the words of any later one: no path is listed twice
    # for two of them, and the paths come in the same order
    new, old = _removed_paths(text), _old_removed_paths(text)
    assert list(dict.fromkeys(new)) == list(dict.fromkeys(old))


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_texts(["exec", "postgres", "-c", "\t"], ";&|\n"))
def test_a_scripts_exec_is_found_as_by_the_old_pattern(text: str) -> None:
    from ssrisk.embedded_sim.podtemplate import parse_template
    from ssrisk.rules._systems import program_line as _program

    script = text.strip()
    old = re.findall(r"(?:^|[;&|\n]\s*)exec\s+([^;&|\n]+)", script)
    pod = {"spec": {"template": {"spec": {"containers": [{"command": [script]}]}}}}
    assert _program(parse_template(pod).containers[0]) == (old[-1].strip() if old else script)


_OLD_QUANTITY = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)\s*$")


@settings(derandomize=True, max_examples=600, deadline=None)
@given(st.text(alphabet="0123456789.eE+-kMGTPimKa \t!", max_size=12))
def test_quantities_are_read_as_by_the_old_pattern(text: str) -> None:
    from ssrisk.embedded_sim.quantity import _SUFFIX, parse_quantity

    m = _OLD_QUANTITY.match(text)
    old = None
    if m is not None and m.group(2) in _SUFFIX:
        try:
            old = float(m.group(1)) * _SUFFIX[m.group(2)]
        except ValueError:
            old = None
    assert parse_quantity(text) == old


@settings(derandomize=True, max_examples=300, deadline=None)
@given(_texts(["# Source: ", "a/templates/x.yaml", "\t", "\r", "---", "#"], "\n"))
def test_source_comments_are_read_as_by_the_old_pattern(text: str) -> None:
    from ssrisk.renderers.common import _source_of

    m = re.search(r"^# Source: (\S.*?)\s*$", text, re.MULTILINE)
    assert _source_of(text) == (m.group(1) if m else None)


_OLD_IGNORE = re.compile(r"(?:^|\s)#\s*ssrisk:\s*ignore\[(?P<ids>[^\]]*)\](?P<reason>.*)$")


@settings(derandomize=True, max_examples=600, deadline=None)
@given(_texts(["#", "# ", "ssrisk:", "ssrisk: ", "ignore[", "]", "a,b", "\t", "\u3000", "x#"], ""))
def test_ignore_comments_are_read_as_by_the_old_pattern(line: str) -> None:
    from ssrisk.suppression import match_comment

    m = _OLD_IGNORE.search(line)
    old = None if m is None else (line.index("#", m.start()), m["ids"], m["reason"])
    assert match_comment(line) == old


@pytest.mark.parametrize(
    "unit",
    [" \t \n", "---#\n", "---\n  \n", "   x\n---"],
    ids=["blank lines", "separators", "separators and blanks", "indented lines"],
)
def test_helm_splitting_of_engine_output_is_linear(unit: str) -> None:
    """Helm's splitting of a template's raw output (a chart can render any text) scans it
    once: runs of blank lines, separators and indentation cost linear time."""
    from ssrisk.renderers.helm import helm_split_text

    def make(n: int) -> Callable[[], object]:
        text = unit * (50 * n) + "   apiVersion: v1\n"
        return lambda: helm_split_text(text)

    _scales_linearly(make, 2000)


def test_the_patterns_of_the_catalog_cost_linear_time_on_long_probes() -> None:
    """A long readiness command of repeated client names (the shape that made a bounded-free
    pattern quadratic) is matched in linear time by every pattern of the catalog."""
    from ssrisk.rules._systems import builtin_entries, entry_patterns

    patterns = [re.compile(p) for raw in builtin_entries().values() for _, p in entry_patterns(raw)]

    def make(n: int) -> Any:
        text = "rabbitmq-diagnostics mysqladmin redis-cli nodetool --config.file=" * n
        return lambda: [p.search(text) for p in patterns]

    _scales_linearly(make, 200)
