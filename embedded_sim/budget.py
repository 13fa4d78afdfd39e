"""A deterministic work budget for simulations: counted steps, not wall-clock time, so that
a result never depends on the machine's speed or load.

One step is one scheduling filter pass over one node for one pod (scheduler.py: initial
placement, the assumed shape's search, each scheduling attempt and each Pending reason) of a
pod with few scheduling constraints, and an event of the event loop costs one step per replica
(the controllers and the availability tracking look at every pod of the set after each event),
and a pod the kubelet tries to start costs one step per volume it checks (kubelet.py):
steps track CPU time to within a factor of about two, about 2 µs each. A pod with many
constraints makes each filter pass longer, and pays for it (:func:`filter_pass_steps`). A
:class:`Budget` is given to a :class:`~embedded_sim.Simulator` (all scenarios of one
StatefulSet share it); when a run would take more steps than the budget has left, the
simulation stops and its result says so (``ScenarioResult.budget_exhausted``). Work that caches
share (a result of the same behaviour, the assumed shape's search) is charged as if it ran, so
a result never depends on what ran before it.
"""

from __future__ import annotations

#: What one more constraint adds to a filter pass over one node, in sixteenths of a step,
#: measured on 250 replicas kept one per node (``benchmarks/simulation_budget.py``): a
#: required pod (anti-)affinity term or a node selection requirement is looked at
#: once per node (about 0.15 µs: one sixteenth); a topologySpreadConstraint also recounts the
#: set's pods per domain at each attempt (about 0.8 µs: five sixteenths).
#: What one step is, in the words every notice of an exhausted budget uses.
STEP_MEANING = (
    "a step is one scheduling filter pass over one node, one pod looked at after an event, "
    "or one volume a starting pod waits for"
)

TERM_SIXTEENTHS = 1
SPREAD_SIXTEENTHS = 5


def filter_pass_steps(terms: int, spreads: int) -> int:
    """Steps one filter pass over one node costs for a pod with ``terms`` per-node checks
    (required pod affinity and anti-affinity terms, nodeSelector pairs, node affinity
    requirements) and ``spreads`` topology spread constraints: 1 while they add up to
    less than a step (fifteen sixteenths: every ordinary pod), then one more for each step's
    worth (200 anti-affinity terms made a step 12 times as long; they now cost 13)."""
    return 1 + (TERM_SIXTEENTHS * terms + SPREAD_SIXTEENTHS * spreads) // 16


class BudgetExhausted(Exception):
    """The simulation needed more steps than its budget had left."""

    def __init__(self, budget: Budget) -> None:
        super().__init__(f"more than {budget.steps} simulation steps")
        self.budget = budget


class Budget:
    """At most ``steps`` simulation steps; ``used`` counts them (see the module docstring)."""

    __slots__ = ("charged", "steps", "used")

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.used = 0
        #: Work done once per budget whoever did it first (the assumed shape's search for a
        #: placement key): charged to this budget once, cached or not.
        self.charged: set[object] = set()

    def charge_once(self, key: object, steps: int) -> None:
        """Count ``steps`` for ``key`` unless this budget already counted ``key``."""
        if key not in self.charged:
            self.charged.add(key)
            self.spend(steps)

    def spend(self, steps: int = 1) -> None:
        """Count ``steps``.

        Raises:
            BudgetExhausted: when more than :attr:`steps` have been counted in all.
        """
        self.used += steps
        if self.used > self.steps:
            raise BudgetExhausted(self)

    @property
    def left(self) -> int:
        return max(0, self.steps - self.used)
