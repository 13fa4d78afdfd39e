"""The simulator's work is bounded by counted steps (embedded_sim/budget.py), not by a clock:
a StatefulSet whose placement would take more steps than its share is reported "not
simulated" at its file and line, and its findings say what the manifest shows; the output is
the same whatever ran before (the result cache and the assumed shape's search are charged as
if they ran).

The run-level test checks 300 varied StatefulSets (``scripts/varied_statefulsets.py``, the
input that took over 15 minutes) with budgets scaled down a hundredfold, so that it stays fast;
timing figures at the real budgets are in ``benchmarks/simulation_budget.py``.
"""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA, run_cli

from ssrisk import embedded_sim, engine

WIDE = DATA / "hostile" / "simulation" / "250-one-per-node.yaml"
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "varied_statefulsets.py"


@pytest.fixture
def simulators(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every Simulator made during the test (to add up the steps they took)."""
    made: list[Any] = []
    real = embedded_sim.Simulator.__init__

    def recording(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        made.append(self)

    monkeypatch.setattr(embedded_sim.Simulator, "__init__", recording)
    return made


def _scaled(monkeypatch: pytest.MonkeyPatch, factor: int) -> None:
    """A ``factor``-th of the budgets, every scenario simulated (no results kept between
    runs: CPU time per step is measured)."""
    monkeypatch.setenv("SSRISK_NO_CACHE", "1")
    for name in ("SIMULATION_STEPS_PER_SET", "SIMULATION_STEPS_PER_RUN", "SIMULATION_STEPS_FLOOR"):
        monkeypatch.setattr(engine, name, getattr(engine, name) // factor)


def test_a_set_past_its_budget_is_reported_not_simulated(
    monkeypatch: pytest.MonkeyPatch, simulators: list[Any]
) -> None:
    _scaled(monkeypatch, 10)  # 200,000 steps: a tenth of the time
    embedded_sim.cache_clear()
    first = run_cli("check", "--format", "json", "--jobs", "1", str(WIDE))
    again = run_cli("check", "--format", "json", "--jobs", "1", str(WIDE))  # from the cache
    assert first.out == again.out
    report = first.json()
    (notice,) = report["notices"]
    assert (notice["path"], notice["line"]) == (str(WIDE), 3)
    assert "more than the 200000 simulation steps" in notice["message"]
    assert "not simulated in full" in notice["message"]
    # what the manifest alone shows is still reported
    assert {"readiness-probe-missing", "headless-service-missing"} <= {
        f["rule"] for f in report["findings"]
    }
    # every scenario asked for stopped: the set's steps are its budget and at most one more
    # filter pass or event (a few hundred steps) for each simulator made
    assert simulators
    for sim in simulators:
        assert sim.budget.steps == 200_000
        assert sim.budget.used <= 200_000 + 1_000


def test_300_varied_sets_stay_within_the_run_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulators: list[Any]
) -> None:
    spec = importlib.util.spec_from_file_location("varied_statefulsets", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    path = tmp_path / "varied.yaml"
    path.write_text("---\n".join(script.statefulset(i, 250) for i in range(300)))
    _scaled(monkeypatch, 100)  # 200,000 steps a run, 500 at the least per set
    embedded_sim.cache_clear()
    run = run_cli("check", "--format", "json", "--jobs", "1", str(path))
    report = json.loads(run.out)
    assert report["summary"]["statefulsets"] == 300
    per_set = engine.simulation_steps(300)
    assert per_set == 666
    used = sum(sim.budget.used for sim in simulators)
    # the run's bound, plus at most one filter pass or event (<= 250 steps) per set past it
    assert used <= 300 * per_set + 300 * 250, used
    stopped = [n for n in report["notices"] if "not simulated in full" in n["message"]]
    assert len(stopped) == sum(1 for sim in simulators if sim.budget.used > per_set)
    assert len(stopped) > 200  # most of these sets need far more than their share


#: 250 replicas kept one per node by one hostname anti-affinity term (a step per filter pass),
#: and sets whose every filter pass over a node does much more work.
ONE_TERM = WIDE.parent / "250-one-term.yaml"
LONG_PASSES = {
    "200 anti-affinity terms": "250-200-anti-affinity-terms.yaml",
    "60 topology spread constraints": "250-60-spread-constraints.yaml",
    "300 node affinity requirements": "250-300-node-affinity-requirements.yaml",
}


def _cpu_per_step(path: Path, simulators: list[Any]) -> float:
    from ssrisk.engine import check
    from ssrisk.plugins import collect_rules, plugin_manager
    from ssrisk.settings import Settings

    rules = collect_rules(plugin_manager())
    embedded_sim.cache_clear()
    simulators.clear()
    started = time.process_time()
    check([str(path)], rules, Settings(jobs=1))
    cpu = time.process_time() - started
    return cpu / sum(sim.budget.used for sim in simulators)


@pytest.mark.parametrize("name", list(LONG_PASSES))
def test_constraints_that_lengthen_each_filter_pass_are_charged_for(
    name: str, monkeypatch: pytest.MonkeyPatch, simulators: list[Any]
) -> None:
    """A step is one filter pass over one node for a pod with few constraints; a pod with many
    makes each pass longer (200 anti-affinity terms: 12 times), and is charged in proportion
    (budget.filter_pass_steps), so the time a step stands for, and the README's bound, hold:
    CPU time per counted step stays within three times that of a single term (was 12 to 25
    times). Both sets run out of a tenth of the real budget; CPU time, not wall-clock time."""
    _scaled(monkeypatch, 10)
    long = WIDE.parent / LONG_PASSES[name]
    base = min(_cpu_per_step(ONE_TERM, simulators) for _ in range(2))
    per_step = min(_cpu_per_step(long, simulators) for _ in range(2))
    assert sum(sim.budget.used for sim in simulators) <= 200_000 + 50_000
    assert per_step <= 3 * base, f"{name}: {per_step / base:.1f} times the CPU time per step"


def _claim_templates(count: int) -> str:
    """Three replicas with ``count`` volumeClaimTemplates, each mounted."""
    mounts = "".join(f"        - {{name: d{i}, mountPath: /d{i}}}\n" for i in range(count))
    templates = "".join(
        f"  - metadata: {{name: d{i}}}\n"
        "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
        for i in range(count)
    )
    return (
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n"
        "  replicas: 3\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n"
        "  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers:\n"
        "      - name: c\n        image: x\n        volumeMounts:\n"
        f"{mounts}  volumeClaimTemplates:\n{templates}"
    )


def test_volumes_a_starting_pod_waits_for_are_charged_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulators: list[Any]
) -> None:
    """The kubelet looks at every volume of a starting pod again after each attach, V*V
    looks for V volumeClaimTemplates (4,000 took a minute, uncounted): each look is a step, so
    CPU time per step stays within three times that of a filter pass, and the set runs out
    of its budget instead of the clock."""
    _scaled(monkeypatch, 10)
    path = tmp_path / "templates.yaml"
    path.write_text(_claim_templates(600))
    base = min(_cpu_per_step(ONE_TERM, simulators) for _ in range(2))
    per_step = min(_cpu_per_step(path, simulators) for _ in range(2))
    assert per_step <= 3 * base, f"{per_step / base:.1f} times the CPU time per step"
    assert any(sim.budget.used > sim.budget.steps for sim in simulators)
