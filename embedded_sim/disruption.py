"""The PodDisruptionBudget arithmetic, in one place: int-or-percent values and what a budget
allows. Validation, the rules and the simulated eviction API all read budgets through this
module, so a budget means the same thing in every message.

Sources:

* ``staging/src/k8s.io/apimachinery/pkg/util/intstr/intstr.go#GetScaledValueFromIntOrPercent``:
  an integer is itself; a string must be a percentage, scaled to the total and rounded up
  (``math.Ceil``) or down (``math.Floor``) as the caller asks;
* ``pkg/apis/policy/validation/validation.go#ValidatePodDisruptionBudgetSpec`` (with
  ``ValidatePositiveIntOrPercent`` and ``IsNotMoreThan100Percent``): a non-negative integer or
  ``[0-9]+%`` of at most 100%, not both fields; neither is allowed, and no API version
  defaults either (``pkg/apis/policy/v1/defaults.go`` and ``v1beta1/defaults.go`` set no
  budget);
* ``pkg/controller/disruption/disruption.go#getExpectedPodCount``: ``maxUnavailable`` gives
  ``desiredHealthy = expectedCount - maxUnavailable`` (rounded up, at least 0) with
  ``expectedCount`` the controllers' scale; an integer ``minAvailable`` is ``desiredHealthy``
  with ``expectedCount`` the pods selected; a percentage is of the scale, rounded up; with
  neither, both stay 0;
* ``disruption.go#updatePdbStatus``: ``disruptionsAllowed = currentHealthy -
  desiredHealthy``, and 0 when that is negative *or when expectedCount is 0* (so a budget
  that sets neither field allows no eviction at all);
* ``pkg/registry/core/pod/storage/eviction.go#Create``: a pod that is not Ready is evicted
  without spending the budget when ``unhealthyPodEvictionPolicy: AlwaysAllow``, or (the
  default ``IfHealthyBudget``) when ``currentHealthy >= desiredHealthy > 0``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .lazyre import lazy

#: What validation accepts as a percentage (``IsValidPercent``: ``^[0-9]+%$``).
_PERCENT = lazy(r"[0-9]+%")

#: An IntOrString integer is an int32 (``intstr.IntOrString.IntVal``): the API server cannot
#: decode a larger one ("cannot unmarshal number ... of type int32").
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
OUT_OF_INT32 = "is out of range: an int-or-string integer is an int32"

SOURCE_EXPECTED = "pkg/controller/disruption/disruption.go#getExpectedPodCount"
SOURCE_ALLOWED = "pkg/controller/disruption/disruption.go#updatePdbStatus"


class IntOrPercent(msgspec.Struct, frozen=True):
    """A Kubernetes ``IntOrString`` value: ``value`` itself, or ``value`` percent."""

    value: int
    percent: bool

    def scaled(self, total: int, round_up: bool) -> int:
        """The value for ``total`` (``intstr.GetScaledValueFromIntOrPercent``)."""
        if not self.percent:
            return self.value
        exact = self.value * total
        return -(-exact // 100) if round_up else exact // 100

    def __str__(self) -> str:
        return f"{self.value}%" if self.percent else str(self.value)


def parse_int_or_percent(raw: Any) -> IntOrPercent | None:
    """``raw`` as an int-or-percent: a YAML integer (not a bool), or a string ``[0-9]+%``
    (leading zeros allowed; digits beyond 19 read as the largest int64, as Go's ``Atoi``
    saturates). ``None`` for anything else, including a string of digits without ``%``
    (``GetScaledValueFromIntOrPercent``: "invalid value for IntOrString")."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return IntOrPercent(raw, False)
    if isinstance(raw, str) and _PERCENT.fullmatch(raw) is not None:
        digits = raw[:-1].lstrip("0") or "0"
        value = int(digits) if len(digits) <= 19 else 2**63 - 1
        return IntOrPercent(min(value, 2**63 - 1), True)
    return None


def int_or_percent_problem(raw: Any, at_most_100: bool = True) -> str | None:
    """Why validation rejects ``raw`` as a budget field, or ``None``: not an integer or a
    percentage, a negative integer, or a percentage over 100%."""
    amount = parse_int_or_percent(raw)
    if amount is None:
        return "not a valid percent" if isinstance(raw, str) else "not an integer or a percent"
    if not amount.percent and not INT32_MIN <= amount.value <= INT32_MAX:
        return OUT_OF_INT32
    if not amount.percent and amount.value < 0:
        return "must be >= 0"
    if amount.percent and at_most_100 and amount.value > 100:
        return "must not be more than 100%"
    return None


class DisruptionBudget(msgspec.Struct, frozen=True):
    """The budget of one PodDisruptionBudget ``spec``.

    ``field`` is ``"maxUnavailable"``, ``"minAvailable"`` or ``None`` (neither set: no
    eviction is ever allowed); ``raw`` is the value as written; ``amount`` the parsed one.
    """

    name: str
    field: str | None
    raw: Any
    amount: IntOrPercent | None
    unhealthy_policy: str = "IfHealthyBudget"
    #: whether ``unhealthyPodEvictionPolicy`` is written (else the default applies)
    unhealthy_policy_set: bool = False

    @staticmethod
    def from_object(obj: Mapping[str, Any]) -> DisruptionBudget:
        """The budget of a PodDisruptionBudget object (a mapping as written). A budget field
        holding what validation rejects gives a budget that is not :attr:`readable` (the API
        server would not have stored the object)."""
        meta = obj.get("metadata")
        spec = obj.get("spec")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        name = name if isinstance(name, str) and name else "pdb"
        spec = spec if isinstance(spec, Mapping) else {}
        written = spec.get("unhealthyPodEvictionPolicy")
        policy = written if isinstance(written, str) else "IfHealthyBudget"
        given = isinstance(written, str)
        for field in ("maxUnavailable", "minAvailable"):  # (maxUnavailable is read first)
            raw = spec.get(field)
            if raw is None:
                continue
            amount = None if int_or_percent_problem(raw) else parse_int_or_percent(raw)
            return DisruptionBudget(name, field, raw, amount, policy, given)
        return DisruptionBudget(name, None, None, None, policy, given)

    @property
    def readable(self) -> bool:
        """Whether the budget fields are valid (or absent)."""
        return self.field is None or self.amount is not None

    @property
    def key(self) -> tuple[object, ...]:
        """What the budget's behaviour depends on (its name aside)."""
        return (self.field, str(self.amount), self.unhealthy_policy)

    def expected_and_desired(self, scale: int, selected: int | None = None) -> tuple[int, int]:
        """``(expectedCount, desiredHealthy)`` for pods of controllers of ``scale`` replicas of
        which ``selected`` pods exist (default: ``scale``), as ``getExpectedPodCount``."""
        selected = scale if selected is None else selected
        if self.amount is None:
            return 0, 0
        if self.field == "maxUnavailable":
            return scale, max(0, scale - self.amount.scaled(scale, round_up=True))
        if self.amount.percent:
            return scale, self.amount.scaled(scale, round_up=True)
        return selected, self.amount.value

    def desired_healthy(self, scale: int) -> int:
        """``desiredHealthy`` for a set of ``scale`` replicas."""
        return self.expected_and_desired(scale)[1]

    def allowed(self, healthy: int, scale: int, selected: int | None = None) -> int:
        """``disruptionsAllowed`` with ``healthy`` pods Ready (``updatePdbStatus``)."""
        expected, desired = self.expected_and_desired(scale, selected)
        if expected <= 0:
            return 0
        return max(0, healthy - desired)

    def evicts_unready(self, healthy: int, scale: int, policy_gate: bool) -> bool:
        """Whether the eviction API deletes a pod that is not Ready without the budget
        (``eviction.go#Create``; ``policy_gate``: the PDBUnhealthyPodEvictionPolicy gate)."""
        if policy_gate and self.unhealthy_policy == "AlwaysAllow":
            return True
        desired = self.desired_healthy(scale)
        return healthy >= desired and desired > 0


def rolling_max_unavailable(raw: Any, replicas: int) -> int:
    """A StatefulSet's ``rollingUpdate.maxUnavailable`` for ``replicas``: percentages round
    down, and at least 1 (``pkg/controller/statefulset/stateful_set_utils.go#
    getStatefulSetMaxUnavailable``); 1 when unset or unreadable."""
    amount = parse_int_or_percent(raw)
    if amount is None:
        return 1
    return max(1, amount.scaled(replicas, round_up=False))
