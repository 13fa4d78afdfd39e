"""Unit tests of the Kubernetes arithmetic the rules rely on (tolerations, PDB budgets, sleeps)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from ssrisk.embedded_sim.podtemplate import sleep_seconds
from ssrisk.rules._podspec import UNREACHABLE, budget, eviction_for, scaled

from ssrisk.loading import load_text
from ssrisk.model import K8sObject


def _sts(tolerations: list[dict[str, Any]]) -> K8sObject:
    data = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "s"},
        "spec": {"template": {"spec": {"tolerations": tolerations}}},
    }
    return K8sObject(data=data, path="t.yaml", line_offset=0, namespace="default")


def _pdb(api: str, spec: dict[str, Any]) -> K8sObject:
    data = {
        "apiVersion": api,
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "p"},
        "spec": spec,
    }
    return K8sObject(data=data, path="t.yaml", line_offset=0, namespace="default")


@pytest.mark.parametrize(
    ("tolerations", "after_s", "defaulted"),
    [
        ([], 300, True),  # DefaultTolerationSeconds adds 300 s
        ([{"operator": "Exists"}], None, False),  # catch-all: never
        ([{"key": UNREACHABLE, "operator": "Exists", "effect": "NoSchedule"}], 300, True),
        ([{"key": UNREACHABLE, "operator": "Exists", "tolerationSeconds": 30}], 30, False),
        ([{"key": UNREACHABLE, "operator": "Exists", "tolerationSeconds": 0}], 0, False),
        # GetMatchingTolerations takes the first toleration that tolerates the taint, so a
        # catch-all listed first decides (never), whatever follows it
        (
            [
                {"operator": "Exists"},
                {
                    "key": UNREACHABLE,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 90,
                },
            ],
            None,
            False,
        ),
        (
            [
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600},
                {"key": UNREACHABLE, "effect": "NoExecute", "tolerationSeconds": 30},
            ],
            600,
            False,
        ),
        # suppresses the default (admission ignores operator and value) but does not tolerate
        (
            [{"key": UNREACHABLE, "operator": "Equal", "value": "x", "effect": "NoExecute"}],
            0,
            False,
        ),
    ],
)
def test_eviction_for_unreachable(
    tolerations: list[dict[str, Any]], after_s: int | None, defaulted: bool
) -> None:
    ev = eviction_for(_sts(tolerations), UNREACHABLE)
    assert (ev.after_s, ev.defaulted) == (after_s, defaulted)


@pytest.mark.parametrize(
    ("value", "total", "want"),
    [
        (2, 3, 2),
        ("67%", 3, 3),
        ("50%", 7, 4),
        ("100%", 2, 2),
        ("0%", 5, 0),
        ("10%", 3, 1),
        ("x", 3, None),
    ],
)
def test_scaled_rounds_up(value: Any, total: int, want: int | None) -> None:
    assert scaled(value, total) == want


@pytest.mark.parametrize(
    ("api", "spec", "replicas", "desired"),
    [
        ("policy/v1", {"maxUnavailable": 1}, 3, 2),
        ("policy/v1", {"maxUnavailable": 0}, 3, 3),
        ("policy/v1", {"minAvailable": "67%"}, 3, 3),
        ("policy/v1", {}, 3, 0),
        ("policy/v1beta1", {}, 3, 0),
    ],
)
def test_budget_desired_healthy(
    api: str, spec: dict[str, Any], replicas: int, desired: int
) -> None:
    b = budget(_pdb(api, spec), replicas)
    assert b is not None and b.desired_healthy == desired


@pytest.mark.parametrize("api", ["policy/v1", "policy/v1beta1"])
def test_a_budget_that_sets_neither_field_allows_no_eviction(api: str) -> None:
    # disruption.go#updatePdbStatus: expectedPods is 0, so disruptionsAllowed stays 0
    b = budget(_pdb(api, {}), 3)
    assert b is not None and b.field is None and b.allowed(3) == 0


@pytest.mark.parametrize(
    ("command", "want"),
    [
        (["sleep", "30"], 30),
        (["/bin/sh", "-c", "sleep 5 && nginx -s quit; sleep 10"], 15),
        ("sleep 2m", 120),
        (["sleep", "infinity"], float("inf")),  # never ends: the full grace period, then SIGKILL
        (["/usr/local/bin/sleepy", "40"], None),
        (["/bin/sleep", "12"], 12),
        ("sleep Infinity", float("inf")),  # any case, as GNU sleep reads it
        ("sleep 1d", 86400),
        ("sleep infinity &", None),  # sent to the background: the hook does not wait for it
        ("sleep 40 & nginx -s quit", None),
        ("sleep 40 && nginx -s quit", 40),
    ],
)
def test_sleep_seconds(command: Any, want: float | None) -> None:
    line = command if isinstance(command, str) else " ".join(command)
    assert sleep_seconds(line) == want


@pytest.mark.parametrize(
    ("toleration", "taint", "want"),
    [
        ({"operator": "Exists"}, ("k", "v", "NoExecute"), True),
        ({"key": "k", "operator": "Equal", "value": "v"}, ("k", "v", "NoExecute"), True),
        ({"key": "k", "value": "w"}, ("k", "v", "NoExecute"), False),
        ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, ("k", "", "NoExecute"), False),
        # toleration.go#ToleratesTaint: an empty key matches every key; Equal compares values
        ({"operator": "Equal", "value": ""}, ("k", "", "NoExecute"), True),
        ({"key": "k", "operator": "Lt"}, ("k", "", "NoExecute"), False),
    ],
)
def test_rules_and_simulator_read_a_toleration_alike(
    toleration: dict[str, Any], taint: tuple[str, str, str], want: bool
) -> None:
    from ssrisk.embedded_sim.workload import parse_statefulset
    from ssrisk.rules._podspec import eviction_for, tolerated_for_ever

    key, value, effect = taint
    pod_spec = {"tolerations": [toleration], "containers": [{"name": "c", "image": "i"}]}
    workload = parse_statefulset({"spec": {"template": {"spec": pod_spec}}})
    (model, *_defaults) = workload.tolerations
    assert model.tolerates(key, value, effect) is want
    if effect == "NoExecute" and "tolerationSeconds" not in toleration:  # what the rules ask
        pod = {"spec": {"template": {"spec": {"tolerations": [toleration]}}}}
        doc = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "t"}, **pod}
        (sts,) = load_text(yaml.safe_dump(doc), "t.yaml").objects
        assert tolerated_for_ever(sts, key, value) is want
        if not value:
            assert (eviction_for(sts, key).after_s is None) is want
