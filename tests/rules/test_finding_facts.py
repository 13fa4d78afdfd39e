"""Every number a finding's message states is one of its ``facts``.

A finding carries the numbers it claims as data (``Finding.facts``, ``"facts"`` in the JSON
report), so tests and tools read them instead of parsing English. This test checks the
claim over every rule example and the examples: each count, percentage, version and
duration of a message is a fact of the finding (a duration as its seconds, spelt as the
message spells durations).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from conftest import DATA, ROOT, run_cli

from ssrisk.objectives import fmt_objective_duration
from ssrisk.timeline import fmt_duration

#: A duration as messages spell it (``10m0s``, ``2h00m0s``, ``8.5s``, an objective's ``15m``).
DURATION = r"\d+h\d+m(?:\d+(?:\.\d+)?s)?|\d+m(?:\d+(?:\.\d+)?s)?|\d+(?:\.\d+)?s"
#: A number that stands alone: not part of a name (``db-0``, ``v1beta1``, ``app=x1``).
TOKEN = re.compile(rf"(?<![\w./=-])(?:({DURATION})|(\d+(?:\.\d+)?%?))(?![\w./=-])")
#: Quoted names (``'zk-0'``, ``'data'``): their digits are not claims.
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
#: What a message names in parentheses after a pod list or an object: not claims.
NAMES = re.compile(r"\([a-z0-9.,\s-]*\.\.\.\)")


def claimed(message: str) -> Iterator[tuple[str, bool]]:
    """``(token, is_duration)`` for every number ``message`` states."""
    text = NAMES.sub("", QUOTED.sub("", message))
    for m in TOKEN.finditer(text):
        yield (m.group(1), True) if m.group(1) else (m.group(2), False)


def spellings(facts: Mapping[str, Any]) -> set[str]:
    """Every way a message may spell one of ``facts``."""
    out: set[str] = set()
    for key, value in facts.items():
        if isinstance(value, list):
            out.update(str(v) for v in value)
            continue
        if isinstance(value, bool) or value is None:
            continue
        out.add(str(value))
        if isinstance(value, (int, float)):
            if float(value).is_integer():
                out.add(str(int(value)))
            if key.endswith("_s"):
                out.add(fmt_duration(value))
                out.add(fmt_objective_duration(value))
                out.add(f"{value:g}s")
    return out


def test_the_claims_are_read_from_a_message() -> None:
    said = "maxUnavailable 60% (= 3): 3 of 5 down, back at 10m0s (objective 15m); 'zk-0' db-1 v1"
    assert list(claimed(said)) == [
        ("60%", False),
        ("3", False),
        ("3", False),
        ("5", False),
        ("10m0s", True),
        ("15m", True),
    ]


def _reports() -> Iterator[Any]:
    for path in (DATA / "rules", ROOT / "examples"):
        run = run_cli("check", "--format", "json", "--kube-version", "1.34", str(path))
        assert run.code in (0, 1), run.err
        yield run.json()


@pytest.fixture(scope="module")
def findings() -> list[dict[str, Any]]:
    return [f for report in _reports() for f in report["findings"]]


def test_every_number_of_a_message_is_a_fact(findings: list[dict[str, Any]]) -> None:
    assert len(findings) > 100
    missing = []
    for f in findings:
        known = spellings(f["facts"])
        for token, _duration in claimed(f["message"]):
            if token not in known:
                missing.append(f"{f['rule']}: {token!r} of {f['message']!r} not in {f['facts']}")
    assert missing == [], "\n".join(sorted(set(missing))[:40])


def test_facts_are_data_with_units_in_their_names(findings: list[dict[str, Any]]) -> None:
    for f in findings:
        for key, value in f["facts"].items():
            assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", key), key
            if key.endswith("_s"):
                assert value is None or isinstance(value, (int, float)), (key, value)
            if isinstance(value, list):
                assert all(isinstance(v, (int, str)) for v in value), (key, value)


def test_facts_cross_a_process_boundary() -> None:
    # (findings come back from worker processes pickled; a read-only mapping does not pickle)
    import pickle

    from ssrisk.model import Finding, ObjectRef, Position, Severity

    ref = ObjectRef("apps/v1", "StatefulSet", None, "db")
    at = Position("a.yaml", 3, 1)
    facts = {"replicas": 1, "claims": ("data", "wal")}
    found = Finding("single-replica", Severity.ERROR, at, ref, "replicas: 1", "why", facts=facts)
    back = pickle.loads(pickle.dumps(found))
    assert back.facts == {"replicas": 1, "claims": ("data", "wal")}
    assert back.facts_data() == {"replicas": 1, "claims": ["data", "wal"]}
