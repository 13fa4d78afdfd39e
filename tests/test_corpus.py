"""The real-world corpus (../shared/corpus): ssrisk must get through all of it."""

from __future__ import annotations

from collections import Counter

from conftest import run_process, shared


def test_corpus_runs_without_crash() -> None:
    corpus = shared("corpus")
    run = run_process("check", "--format", "json", str(corpus))
    assert "Traceback" not in run.out + run.err
    assert run.code in (0, 1), run.err[-2000:]
    report = run.json()
    assert report["errors"] == []
    # SOURCES.md: 73 StatefulSet objects, 63 of them apps/v1 and 8 in apps/v1beta1 or v1beta2,
    # which are checked and reported as not served (the other 2 are other API groups)
    assert report["summary"]["statefulsets"] == 71
    served = [f for f in report["findings"] if f["rule"] == "api-version-not-served"]
    assert sum(f["object"]["kind"] == "StatefulSet" for f in served) == 8
    # and the policy/v1beta1 budgets of the apps/v1 sets (not served since 1.25)
    assert {f["object"]["kind"] for f in served} == {"StatefulSet", "PodDisruptionBudget"}
    assert report["summary"]["files"] == 89
    by_rule = Counter(f["rule"] for f in report["findings"])
    assert by_rule["single-replica"] > 0
    for f in report["findings"]:
        assert f["line"] >= 1 and f["column"] >= 1
        assert "internal error" not in f["message"]
