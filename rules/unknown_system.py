"""unknown-system: the ssrisk.io/system annotation names no system of the catalog."""

from __future__ import annotations

from collections.abc import Iterator

from ssrisk.hookspecs import hookimpl
from ssrisk.model import FactValue, Finding, Severity
from ssrisk.rule import CheckContext, Rule

from ._systems import ANNOTATION, NONE, ctx_catalog


class UnknownSystem(Rule):
    id = "unknown-system"
    severity = Severity.WARNING
    summary = (
        f"the {ANNOTATION} annotation names no system of the catalog (nor 'none'): the "
        "checks that read what the system needs are off for the set"
    )
    references = ("web: docs/concepts/overview/working-with-objects/annotations.md",)

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        for path in (("metadata",), ("spec", "template", "metadata")):
            value = ctx.sts.get(*path, "annotations", ANNOTATION)
            if not isinstance(value, str) or not value.strip():
                continue
            named = value.strip().lower()
            cat = ctx_catalog(ctx)
            if named == NONE or cat.get(named) is not None:
                return
            import difflib  # (only for a name the catalog lacks)

            close = difflib.get_close_matches(named, sorted(cat.systems), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            msg = (
                f"{ANNOTATION}: {value.strip()!r} names no catalogued system{hint}: the checks "
                "that read the catalog are off for this set"
            )
            at = ctx.sts.pos(*path, "annotations", ANNOTATION)
            facts: dict[str, FactValue] = {"system": named}
            if close:
                facts["did_you_mean"] = close[0]
            yield self.finding(ctx, at, msg, facts=facts)
            return


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [UnknownSystem()]
