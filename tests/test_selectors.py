from __future__ import annotations

import pytest

from ssrisk.selectors import InvalidSelector, map_selector_matches, selector_matches

LABELS = {"app": "db", "tier": "data"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({}, True),
        ({"matchLabels": {"app": "db"}}, True),
        ({"matchLabels": {"app": "web"}}, False),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "x"]}]}, True),
        ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}, False),
        ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
        ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
        (
            {
                "matchLabels": {"app": "db"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["web"]}],
            },
            False,
        ),
    ],
)
def test_label_selector(selector: dict, expected: bool) -> None:
    assert selector_matches(selector, LABELS) is expected


def test_null_selector_selects_nothing_and_bad_operator_raises() -> None:
    assert selector_matches(None, LABELS) is False
    with pytest.raises(InvalidSelector):
        selector_matches({"matchExpressions": [{"key": "a", "operator": "Like"}]}, LABELS)


def test_service_map_selector() -> None:
    assert map_selector_matches({"app": "db"}, LABELS)
    assert not map_selector_matches({"app": "db", "x": "y"}, LABELS)
    assert not map_selector_matches({}, LABELS)
