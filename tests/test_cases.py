"""Every expectation of ../shared/cases, run through the reference reader run_cases.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED, ssrisk_executable
from expectations import (
    RULE_ISSUE,
    SCENARIO_ISSUE,
    Expectation,
    missing_rule,
    reference_runner,
    split_case,
)


def _collect() -> list[Any]:
    cases_dir = SHARED / "cases"
    if not cases_dir.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason="../shared/cases is absent"))]
    params = []
    for expect in sorted(cases_dir.glob("*/expect.json")):
        for exp in split_case(expect.parent):
            marks = []
            rule = missing_rule(exp)
            if rule is not None:
                marks.append(
                    pytest.mark.xfail(
                        reason=f"rule {rule} not built yet: {RULE_ISSUE}", strict=True
                    )
                )
            params.append(pytest.param(exp, id=exp.id, marks=marks))
    return params


@pytest.mark.parametrize("exp", _collect())
def test_case_expectation(exp: Expectation | None, tmp_path: Path) -> None:
    assert exp is not None
    runner = reference_runner()
    assert runner is not None
    case = tmp_path / exp.case.name
    shutil.copytree(exp.case, case)
    (case / "expect.json").write_text(json.dumps(exp.expect))
    fails = runner.check_case(ssrisk_executable(), case)
    if fails and "simulate" in exp.expect and any("not modelled yet" in f for f in fails):
        pytest.xfail(f"scenario not modelled yet: {SCENARIO_ISSUE}")
    assert fails == []
