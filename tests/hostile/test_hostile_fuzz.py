"""The mutation fuzzer's short run (the long one is ``scripts/fuzz_mutations.py``): mutated
manifests never break the command line's invariants (see ``mutations.py``), and the checks
of those invariants can fail."""

from __future__ import annotations

from pathlib import Path

from mutations import Case, Fuzzer, Outcome, Tally, check_case, violations

CASES = 100


def test_mutated_manifests_keep_the_invariants(tmp_path: Path) -> None:
    tally = Tally()
    for i, case in enumerate(Fuzzer(seed=20_251_201).cases(CASES)):
        check_case(case, tmp_path, tally, fresh_process=(i % 50 == 0), hash_seed=i)
    assert tally.cases == CASES and tally.subprocess_checks == 2
    assert [(c.name, c.how, broken) for c, broken in tally.failures] == []
    assert set(tally.exit_codes) >= {1, 2}  # the mutations reach findings and errors


def test_the_fuzzer_is_deterministic_and_mutates() -> None:
    a = [c.data for c in Fuzzer(seed=7).cases(30)]
    b = [c.data for c in Fuzzer(seed=7).cases(30)]
    assert a == b
    how = {h for c in Fuzzer(seed=7).cases(200) for h in c.how}
    assert {"bit-flip", "truncate", "replace_value", "change_kind", "anchor_and_alias"} <= how


def test_the_invariant_checks_can_fail() -> None:
    assert violations(Outcome(3, "", ""), "text") == ["exit code 3"]
    assert "traceback" in violations(Outcome(2, "", "Traceback (most recent call last):"), "text")
    assert violations(Outcome(0, "{", ""), "json")[0].startswith("json output does not parse")
    assert violations(Outcome(0, "<a>", ""), "junit")[0].startswith("junit output does not")
    assert violations(Outcome(1, "x\x1b[31m", ""), "github") == [
        "raw control character in the output"
    ]
    assert violations(Outcome(1, "{}", ""), "json")[0].startswith("report schema")
    assert Case(b"", "x.yaml", "json").how == []
