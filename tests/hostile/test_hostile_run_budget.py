"""The renderers of one run share a wall-clock budget (``--render-budget``): a repository of
many charts or kustomizations that each run until their timeout ends after the budget, not
after their number times ``--render-timeout``."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from checkout import GOOD
from conftest import DATA, run_cli

from ssrisk.renderers import bounded, runbudget
from ssrisk.renderers.helm import describe_renderer

CHARTS = DATA / "hostile" / "charts"
needs_helm = pytest.mark.skipif(not describe_renderer(), reason="needs helm or helm-python-sdk")

SLEEP = [sys.executable, "-c", "import time; time.sleep(30)"]


@pytest.fixture(autouse=True)
def _fresh_budget() -> Iterator[None]:
    yield
    runbudget.start_run(None)  # the next test gets the default budget again


def test_renderers_share_the_run_budget(tmp_path: Path) -> None:
    """With 1.5 s for the run, the first renderer that would run for 30 s is stopped when
    the budget is spent (its own timeout is 60 s); no renderer starts after that."""
    budget = runbudget.start_run(1.5)
    env = bounded.scrubbed_environment(str(tmp_path))
    started = time.monotonic()
    with pytest.raises(bounded.RenderError, match=r"left of this run's render budget of 1\.5 s"):
        bounded.run_bounded(SLEEP, what="helm", cwd=str(tmp_path), env=env)
    assert time.monotonic() - started < 10
    assert budget.left() == 0 and budget.spent_s >= 1.5
    with pytest.raises(bounded.RenderError, match=r"helm not started: .*render budget of 1\.5 s"):
        bounded.run_bounded(SLEEP, what="helm", cwd=str(tmp_path), env=env)


def test_a_quick_renderer_costs_the_budget_its_time(tmp_path: Path) -> None:
    budget = runbudget.start_run(100.0)
    env = bounded.scrubbed_environment(str(tmp_path))
    out = bounded.run_bounded(
        [sys.executable, "-c", "print('ok')"], what="t", cwd=str(tmp_path), env=env
    )
    assert out.strip() == "ok"
    assert 0 < budget.spent_s < 10 and budget.left() == pytest.approx(100 - budget.spent_s)


def test_the_default_budget() -> None:
    assert runbudget.start_run(None).total_s == runbudget.RENDER_BUDGET_S == 600


@needs_helm
def test_many_endless_charts_end_with_the_run_budget(tmp_path: Path) -> None:
    """Four copies of a chart whose templates never end, with a 60 s timeout each: the run
    ends after its 4 s render budget (not 240 s); the first chart is stopped when the
    budget is spent, the others are errors without a renderer started, and the plain
    manifest beside them is still checked."""
    for i in range(4):
        shutil.copytree(CHARTS / "exponential-include", tmp_path / f"chart{i}")
    shutil.copy(GOOD, tmp_path / "good.yaml")
    started = time.monotonic()
    run = run_cli(
        "check",
        "--format",
        "json",
        "--render-timeout",
        "60",
        "--render-budget",
        "4",
        ".",
        cwd=tmp_path,
    )
    assert time.monotonic() - started < 30
    assert run.code == 2
    report = run.json()
    messages = sorted(str(e["message"]) for e in report["errors"])
    assert len(messages) == 4, messages
    assert sum("left of this run's render budget of 4 s" in m for m in messages) == 1, messages
    assert sum("not started" in m and "render budget of 4 s" in m for m in messages) == 3
    assert report["summary"]["statefulsets"] == 1
