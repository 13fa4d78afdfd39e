"""The renderers of one run share a wall-clock budget (``--render-budget``): a repository of
many charts or kustomizations that each run until their timeout ends after the budget, not
after their number times ``--render-timeout``."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ssrisk.renderers import bounded

SLEEP = [sys.executable, "-c", "import time; time.sleep(30)"]


@pytest.fixture(autouse=True)
def _fresh_budget() -> Iterator[None]:
    yield
    bounded.start_run(None)  # the next test gets the default budget again


def test_renderers_share_the_run_budget(tmp_path: Path) -> None:
    """With 1.5 s for the run, the first renderer that would run for 30 s is stopped when
    the budget is spent (its own timeout is 60 s); no renderer starts after that."""
    budget = bounded.start_run(1.5)
    env = bounded.scrubbed_environment(str(tmp_path))
    started = time.monotonic()
    with pytest.raises(bounded.RenderError, match=r"left of this run's render budget of 1\.5 s"):
        bounded.run_bounded(SLEEP, what="helm", cwd=str(tmp_path), env=env)
    assert time.monotonic() - started < 10
    assert budget.left() == 0 and budget.spent_s >= 1.5
    with pytest.raises(bounded.RenderError, match=r"helm not started: .*render budget of 1\.5 s"):
        bounded.run_bounded(SLEEP, what="helm", cwd=str(tmp_path), env=env)


def test_a_quick_renderer_costs_the_budget_its_time(tmp_path: Path) -> None:
    budget = bounded.start_run(100.0)
    env = bounded.scrubbed_environment(str(tmp_path))
    out = bounded.run_bounded(
        [sys.executable, "-c", "print('ok')"], what="t", cwd=str(tmp_path), env=env
    )
    assert out.strip() == "ok"
    assert 0 < budget.spent_s < 10 and budget.left() == pytest.approx(100 - budget.spent_s)


def test_the_default_budget() -> None:
    assert bounded.start_run(None).total_s == bounded.RENDER_BUDGET_S == 600
