"""Suggesting the name a user probably meant (a rule id, a configuration key)."""

from __future__ import annotations

from collections.abc import Iterable


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to ``name`` (``difflib``'s ratio of at least 0.6), if any."""
    import difflib  # (only for a name that is not known)

    found = difflib.get_close_matches(name, sorted(known), n=1)
    return found[0] if found else None


def unknown_rule(rule_id: str, known: Iterable[str]) -> str:
    """``unknown rule 'x' (did you mean 'y'?)``, else ``(see 'ssrisk rules')``."""
    close = closest(rule_id, known)
    hint = f"did you mean {close!r}?" if close else "see 'ssrisk rules'"
    return f"unknown rule {rule_id!r} ({hint})"
