"""``--context`` inputs are read only for the kinds StatefulSets relate to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import DATA, run_cli

from ssrisk import yamlpos

CONTEXT = DATA / "perf" / "context"
CHANGED = CONTEXT / "deploy" / "kv.yaml"


@pytest.fixture
def composed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The first line of every YAML document composed into data."""
    seen: list[str] = []
    real = yamlpos.load_documents

    def counting(text: str, strict: bool = True) -> Iterator[Any]:
        seen.append(next((x for x in text.splitlines() if x.startswith("kind:")), "?"))
        return real(text, strict)

    monkeypatch.setattr(yamlpos, "load_documents", counting)
    return seen


def test_context_composes_only_related_objects_and_the_checked_file_once(
    composed: list[str],
) -> None:
    run = run_cli("check", "--format", "json", "--context", str(CONTEXT), str(CHANGED))
    report = run.json()
    # the Service and the PDB of the context were seen ...
    rules = {f["rule"] for f in report["findings"]}
    assert not rules & {"pdb-missing", "headless-service-missing"}, rules
    assert report["summary"]["statefulsets"] == 1
    # ... and nothing else of the context was parsed: not the other StatefulSet (not checked),
    # not the ConfigMap or the Deployment, not the changed file a second time
    assert sorted(composed) == [
        "kind: PodDisruptionBudget",
        "kind: Service",
        "kind: StatefulSet",
    ]


def test_without_context_every_document_of_a_modelled_kind_is_composed(
    composed: list[str],
) -> None:
    run = run_cli("check", "--format", "json", str(CONTEXT))
    assert run.json()["summary"]["statefulsets"] == 2
    assert sorted(composed).count("kind: StatefulSet") == 2
