"""What the rules derive from one StatefulSet is derived once, however many rules ask."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from conftest import DATA, run_cli
from ssrisk.rules import _podspec

RISKY = DATA / "perf" / "risky.yaml"


def test_claim_storage_is_resolved_once_per_claim_template(monkeypatch: pytest.MonkeyPatch) -> None:
    """rwo-volume-reattach (check and run note), node-pinned-storage, zonal-volume-pinning and
    others ask how each claim template's volumes behave; it is resolved once per template."""
    calls: list[tuple[str, int]] = []
    real = _podspec._claim_storage

    def counting(ctx: Any, index: int) -> Any:
        calls.append((ctx.sts.name, index))
        return real(ctx, index)

    monkeypatch.setattr(_podspec, "_claim_storage", counting)
    run = run_cli("check", "--jobs", "1", str(RISKY))
    assert run.code == 1, run.err
    assert len(calls) >= 2
    assert sorted(calls) == sorted(set(calls))


def test_the_collector_threshold_is_restored_after_the_rules_ran() -> None:
    before = gc.get_threshold()
    run = run_cli("check", "--jobs", "1", str(RISKY))
    assert run.code == 1
    assert gc.get_threshold() == before
