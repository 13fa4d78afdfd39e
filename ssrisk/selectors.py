"""Kubernetes label selectors: the model's (:mod:`ssrisk.embedded_sim.selectors`), which the
simulator's scheduler and controllers use too, so a selector selects the same pods in every
rule and simulation."""

from __future__ import annotations

from .embedded_sim.selectors import (
    InvalidSelector,
    is_empty_selector,
    map_selector_matches,
    selector_matches,
)

__all__ = ["InvalidSelector", "is_empty_selector", "map_selector_matches", "selector_matches"]
