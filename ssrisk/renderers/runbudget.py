"""The wall-clock budget that all renderer runs of one ssrisk run share (``--render-budget``).

Kept apart from :mod:`ssrisk.renderers.bounded` so that the command line can start a run's
budget without importing the renderer machinery (start-up time of runs that render nothing).
"""

from __future__ import annotations

#: Default wall-clock seconds that all renderer runs of one ssrisk run may take together
#: (``--render-budget``): a repository of many charts that each loop until their timeout
#: ends after this, not after their number times the timeout.
RENDER_BUDGET_S = 600.0


class RenderBudget:
    """The wall-clock seconds the renderer runs of one ssrisk run may still take together.

    Each run is given at most what is left (and at most its own timeout); its elapsed time
    is charged when it ends, whatever the outcome. Once nothing is left, no renderer is
    started: the chart or kustomization is an error saying so.
    """

    def __init__(self, total_s: float = RENDER_BUDGET_S) -> None:
        self.total_s = total_s
        self.spent_s = 0.0

    def left(self) -> float:
        """Seconds left, never below 0."""
        return max(0.0, self.total_s - self.spent_s)

    def charge(self, seconds: float) -> None:
        """Count ``seconds`` of a renderer run against the budget."""
        self.spent_s += max(0.0, seconds)


_RUN_BUDGET = RenderBudget()


def start_run(render_budget_s: float | None = None) -> RenderBudget:
    """Begin a new ssrisk run's render budget (``--render-budget``; ``None``: the default
    :data:`RENDER_BUDGET_S`) and return it. The command line calls this once per run."""
    global _RUN_BUDGET
    _RUN_BUDGET = RenderBudget(RENDER_BUDGET_S if render_budget_s is None else render_budget_s)
    return _RUN_BUDGET


def run_budget() -> RenderBudget:
    """The render budget of the current run."""
    return _RUN_BUDGET


__all__ = ["RENDER_BUDGET_S", "RenderBudget", "run_budget", "start_run"]
