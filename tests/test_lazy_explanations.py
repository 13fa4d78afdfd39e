"""Explanations are built only when an output prints them, and cross process boundaries as text."""

from __future__ import annotations

import pickle
from collections.abc import Callable

import pytest
from conftest import DATA, run_cli

from ssrisk import rule as rule_module
from ssrisk.engine import check
from ssrisk.plugins import collect_rules, plugin_manager
from ssrisk.settings import Settings

RISKY = DATA / "perf" / "risky.yaml"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The rule ids whose lazy explanations were built, one entry per build."""
    built: list[str] = []
    real = rule_module._clean_text

    def counting(build: Callable[[], str]) -> str:
        text = real(build)
        built.append(text[:40])
        return text

    monkeypatch.setattr(rule_module, "_clean_text", counting)
    return built


def test_text_output_never_builds_an_explanation(builds: list[str]) -> None:
    run = run_cli("check", str(RISKY))
    assert run.code == 1 and "single-replica" in run.out and "Simulated" not in run.out
    assert builds == []


@pytest.mark.parametrize("how", [["--format", "json"], ["--explain"], ["--format", "sarif"]])
def test_formats_that_print_explanations_build_each_once(builds: list[str], how: list[str]) -> None:
    run = run_cli("check", *how, str(RISKY))
    assert run.code == 1
    assert "Simulated timeline (scenario node-loss" in run.out
    # (findings folded into the finding of their cause are printed in JSON only)
    assert run.out.count("Simulated timeline (scenario") >= 8
    # each lazily given explanation is built at most once, by the output that prints it
    # (JSON prints every finding, folded ones too; the others only the reported findings)
    lazy = len(builds)
    builds.clear()
    findings = run_cli("check", "--format", "json", str(RISKY)).json()["findings"]
    assert len(builds) >= len([f for f in findings if "Simulated" in f["explanation"]])
    if how == ["--format", "json"]:
        assert lazy == len(builds)
    else:
        assert 8 <= lazy <= len(builds)


def test_explanations_quoting_a_simulation_are_given_lazily() -> None:
    from ssrisk.engine import load_all
    from ssrisk.inventory import Inventory
    from ssrisk.rule import CheckContext

    settings = Settings()
    inventory = Inventory(o for lf in load_all([str(RISKY)], settings)[0] for o in lf.objects)
    quoting = []
    for sts in inventory.statefulsets:
        ctx = CheckContext.of(sts, inventory, settings)
        for rule in collect_rules(plugin_manager()):
            for f in rule.check(ctx):
                if "Simulated timeline" in f.explanation:
                    quoting.append(f)
    assert len({f.rule for f in quoting}) >= 8
    for f in quoting:
        assert callable(f.__dict__["_explanation"]), f.rule


def test_in_one_process_explanations_wait_for_the_output_that_prints_them() -> None:
    # the text (kilobytes per finding) is larger than what a builder keeps: cached simulation
    # results are shared and renamed lazily; each output builds one explanation at a time
    report = check([str(RISKY)], collect_rules(plugin_manager()), Settings())
    lazy = [f for f in report.findings if callable(f.__dict__["_explanation"])]
    assert len({f.rule for f in lazy}) >= 8
    assert all("Simulated timeline" in f.explanation for f in lazy if f.rule == "single-replica")


def test_a_worker_builds_the_explanations_of_each_statefulset_once_it_is_checked() -> None:
    # a worker's findings go back pickled: built there, before the next set is checked
    from ssrisk.engine import _evaluate_range, load_all
    from ssrisk.inventory import Inventory

    settings = Settings()
    inventory = Inventory(o for lf in load_all([str(RISKY)], settings)[0] for o in lf.objects)
    rules = collect_rules(plugin_manager())
    findings = _evaluate_range(inventory, rules, settings, inventory.statefulsets, texts=True)[0]
    assert findings and all(isinstance(f.__dict__["_explanation"], str) for f in findings)
    lazy = _evaluate_range(inventory, rules, settings, inventory.statefulsets)[0]
    assert [f.explanation for f in lazy] == [f.explanation for f in findings]


def test_a_finding_sent_to_another_process_carries_its_explanation_as_text() -> None:
    rules = collect_rules(plugin_manager())
    findings = check([str(RISKY)], rules, Settings()).findings
    for f in findings:
        copy = pickle.loads(pickle.dumps(f))
        assert isinstance(copy.__dict__["_explanation"], str)
        assert copy.explanation == f.explanation and copy.explanation
        assert copy.message == f.message and copy.position == f.position


def test_without_an_output_that_prints_them_explanations_are_dropped(builds: list[str]) -> None:
    rules = collect_rules(plugin_manager())
    report = check([str(RISKY)], rules, Settings(explanations=False))
    assert report.findings and all(f.explanation == "" for f in report.findings)
    assert builds == []


def test_writing_the_explanations_keeps_neither_models_nor_result_dicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # JSON builds every explanation after its set was checked: the model it reads again is
    # parsed again but not kept on the object (10,000 documents: 14 MB more peak RSS), and the
    # timeline is read from the result's events, not from its JSON dict (kept on the result)
    from ssrisk.embedded_sim.result import ScenarioResult

    from ssrisk.engine import _evaluate_range, load_all
    from ssrisk.inventory import Inventory
    from ssrisk.model import FORGOTTEN

    as_dict: list[str] = []
    real = ScenarioResult.to_dict

    def counting(self: ScenarioResult) -> dict[str, object]:
        as_dict.append(self.scenario)
        return real(self)

    monkeypatch.setattr(ScenarioResult, "to_dict", counting)
    settings = Settings()
    inventory = Inventory(o for lf in load_all([str(RISKY)], settings)[0] for o in lf.objects)
    rules = collect_rules(plugin_manager())
    findings = _evaluate_range(inventory, rules, settings, inventory.statefulsets)[0]
    texts = [f.explanation for f in findings]
    assert sum("Simulated timeline" in t for t in texts) >= 8
    assert as_dict == []
    assert all(sts.__dict__.get("_template") is FORGOTTEN for sts in inventory.statefulsets)
