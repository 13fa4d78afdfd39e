"""Objects that already are plain JSON values are validated as loaded, without a copy."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import DATA

from ssrisk import validation
from ssrisk.engine import load_all
from ssrisk.settings import Settings


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    real = validation.to_json_value

    def counting(data: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(str(data.get("kind")))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(validation, "to_json_value", counting)
    return made


def test_plain_objects_are_not_copied(copies: list[str]) -> None:
    loaded, errors = load_all([str(DATA / "perf" / "risky.yaml")], Settings())
    assert not errors and len(loaded[0].objects) == 6 and not loaded[0].errors
    assert copies == []


def test_an_object_with_a_float_is_converted_as_before(copies: list[str]) -> None:
    loaded, _ = load_all([str(DATA / "perf" / "float-replicas.yaml")], Settings())
    (sts,) = loaded[0].objects
    assert copies == ["StatefulSet"]
    value = sts.data["spec"]["replicas"]
    assert value == 3 and type(value) is int  # what the API server stores


def test_aliases_and_budgets_take_the_careful_path() -> None:
    shared = {"a": "b"}
    assert validation.is_plain_json({"x": [1, True, None, "s"], "y": {"z": "w"}})
    assert not validation.is_plain_json({"x": shared, "y": shared})
    assert not validation.is_plain_json({"x": 1.5})
    assert not validation.is_plain_json({1: "a"})
    assert not validation.is_plain_json({"x": list(range(10))}, max_nodes=5)
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5):
        node["n"] = node = {}
    assert not validation.is_plain_json(deep, max_depth=3)
