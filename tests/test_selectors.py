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


def test_inventory_finds_pdbs_through_its_label_index_in_load_order() -> None:
    from ssrisk.inventory import Inventory
    from ssrisk.loading import load_text

    docs = []
    selectors = {
        "a-two-labels": "{matchLabels: {app: db, tier: data}}",
        "b-other-app": "{matchLabels: {app: web}}",
        "c-expressions": "{matchExpressions: [{key: app, operator: In, values: [db]}]}",
        "d-empty": "{}",
        "e-one-label": "{matchLabels: {tier: data}}",
    }
    for name, sel in selectors.items():
        docs.append(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
            f"metadata: {{name: {name}, namespace: ns}}\n"
            f"spec:\n  maxUnavailable: 1\n  selector: {sel}\n"
        )
    loaded = load_text("---\n".join(docs), "pdbs.yaml")
    assert loaded.errors == []
    inv = Inventory(loaded.objects)
    found = inv.pdbs_selecting("ns", {"app": "db", "tier": "data"})
    assert [p.name for p in found] == ["a-two-labels", "c-expressions", "d-empty", "e-one-label"]
    assert [p.name for p in inv.pdbs_selecting("ns", {"app": "web"})] == ["b-other-app", "d-empty"]
    assert inv.pdbs_selecting("other", {"app": "db"}) == []
