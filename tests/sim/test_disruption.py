"""The one PodDisruptionBudget and int-or-percent arithmetic (``embedded_sim.disruption``),
against the upstream formulas: ``intstr.GetScaledValueFromIntOrPercent`` (``math.Ceil`` or
``math.Floor`` of ``value * total / 100``), ``getExpectedPodCount`` and ``updatePdbStatus``."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ssrisk.embedded_sim.disruption import (
    DisruptionBudget,
    parse_int_or_percent,
    rolling_max_unavailable,
)


@given(st.integers(0, 100), st.integers(0, 1000))
def test_percentages_scale_as_upstream(percent: int, total: int) -> None:
    amount = parse_int_or_percent(f"{percent}%")
    assert amount is not None and amount.percent
    assert amount.scaled(total, round_up=True) == math.ceil(percent * total / 100)
    assert amount.scaled(total, round_up=False) == math.floor(percent * total / 100)


@pytest.mark.parametrize("raw", [True, 1.5, "5", " 5%", "5 %", "-5%", "x", None, [1]])
def test_what_is_not_an_int_or_percent(raw: Any) -> None:
    assert parse_int_or_percent(raw) is None


def _pdb(**spec: Any) -> DisruptionBudget:
    return DisruptionBudget.from_object({"metadata": {"name": "p"}, "spec": spec})


@pytest.mark.parametrize(
    ("spec", "replicas", "healthy", "expected", "desired", "allowed"),
    [
        ({"maxUnavailable": 1}, 3, 3, 3, 2, 1),
        ({"maxUnavailable": "34%"}, 3, 3, 3, 1, 2),  # 34% of 3 rounds up to 2
        ({"maxUnavailable": 0}, 3, 3, 3, 3, 0),
        ({"minAvailable": 2}, 3, 3, 3, 2, 1),
        ({"minAvailable": "50%"}, 3, 3, 3, 2, 1),  # rounds up
        ({"minAvailable": 1}, 1, 1, 1, 1, 0),
        ({"minAvailable": 0}, 3, 2, 3, 0, 2),
        ({}, 3, 3, 0, 0, 0),  # neither field: expectedPods 0, nothing allowed
        ({"maxUnavailable": 5}, 3, 3, 3, 0, 3),
    ],
)
def test_budgets(
    spec: dict[str, Any], replicas: int, healthy: int, expected: int, desired: int, allowed: int
) -> None:
    b = _pdb(**spec)
    assert b.readable
    assert b.expected_and_desired(replicas) == (expected, desired)
    assert b.allowed(healthy, replicas) == allowed


def test_an_unreadable_budget_is_flagged() -> None:
    assert not _pdb(minAvailable="150%").readable
    assert not _pdb(maxUnavailable=-1).readable
    assert not _pdb(minAvailable="two").readable


def test_unready_pods_are_evicted_without_the_budget_only_as_the_api_server_does() -> None:
    # eviction.go#Create: AlwaysAllow (with the gate), or currentHealthy >= desiredHealthy > 0
    assert _pdb(minAvailable=1).evicts_unready(healthy=1, scale=3, policy_gate=False)
    assert not _pdb().evicts_unready(healthy=3, scale=3, policy_gate=False)
    always = _pdb(unhealthyPodEvictionPolicy="AlwaysAllow")
    assert always.evicts_unready(healthy=0, scale=3, policy_gate=True)
    assert not always.evicts_unready(healthy=0, scale=3, policy_gate=False)


@pytest.mark.parametrize(
    ("raw", "replicas", "want"),
    [(None, 5, 1), (2, 5, 2), ("50%", 5, 2), ("10%", 5, 1), ("100%", 4, 4), ("x", 3, 1)],
)
def test_a_statefulsets_rolling_max_unavailable(raw: Any, replicas: int, want: int) -> None:
    # stateful_set_utils.go#getStatefulSetMaxUnavailable: round down, at least 1
    assert rolling_max_unavailable(raw, replicas) == want
