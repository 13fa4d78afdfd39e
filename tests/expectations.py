"""Reading the shared ``expect.json`` files (cases and peer fixtures) into one test per expectation.

``../shared/cases/run_cases.py`` is the reference reading of a case; each expectation here is
run through it (on a copy of the case whose ``expect.json`` holds only that expectation), so
this suite and the reference always agree. An expectation that names a rule or a simulation
scenario not built yet is marked expected-to-fail with the issue that builds it.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

from conftest import SHARED

#: Which issue builds a rule that is not registered yet.
RULE_ISSUE = "issue 4 (rule catalog)"
SCENARIO_ISSUE = "issue 3 (simulator scenarios)"


@dataclass(frozen=True)
class Expectation:
    case: Path
    label: str
    expect: dict[str, Any]  # a reduced expect.json with this one expectation

    @property
    def id(self) -> str:
        return f"{self.case.name}:{self.label}"


@lru_cache(maxsize=1)
def registered_rules() -> frozenset[str]:
    from ssrisk.plugins import collect_rules, plugin_manager

    return frozenset(r.id for r in collect_rules(plugin_manager()))


@lru_cache(maxsize=1)
def reference_runner() -> ModuleType | None:
    path = SHARED / "cases" / "run_cases.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("run_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def split_case(case: Path) -> list[Expectation]:
    """One :class:`Expectation` per must / must_not / other check key / simulate entry."""
    exp = json.loads((case / "expect.json").read_text())
    base = {"kube_version": exp.get("kube_version", "1.34")}
    out: list[Expectation] = []
    check = exp.get("check") or {}
    for kind in ("must", "must_not"):
        for i, item in enumerate(check.get(kind, [])):
            label = f"{kind}[{i}]:{item.get('rule')}"
            out.append(Expectation(case, label, {**base, "check": {kind: [item]}}))
    for key in ("exit", "exit_in", "errors_min", "findings_max", "max_severity"):
        if key in check:
            out.append(Expectation(case, key, {**base, "check": {key: check[key]}}))
    for i, sim in enumerate(exp.get("simulate", [])):
        label = f"simulate[{i}]:{sim.get('scenario')}"
        out.append(Expectation(case, label, {**base, "simulate": [sim]}))
    return out


def missing_rule(exp: Expectation) -> str | None:
    """The rule id a ``must`` expectation needs that is not registered, if any.

    (A ``must_not`` on a rule not built yet holds trivially and stays a normal test, so it
    guards the rule from the day it lands.)
    """
    check = exp.expect.get("check") or {}
    for item in check.get("must", []):
        if item.get("rule") not in registered_rules():
            return str(item.get("rule"))
    return None
