"""selector-template-mismatch: spec.selector does not select the pod template's labels."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule
from ssrisk.selectors import InvalidSelector, is_empty_selector, selector_matches

from ._podspec import set_spec


class SelectorTemplateMismatch(Rule):
    id = "selector-template-mismatch"
    severity = Severity.ERROR
    summary = (
        "spec.selector is missing, empty or does not match the pod template labels: the API "
        "server rejects the StatefulSet"
    )
    covers_all = True
    references = (
        "k8s: pkg/apis/apps/validation/validation.go#ValidateStatefulSetSpec",
        "web: docs/concepts/workloads/controllers/statefulset.md (Pod Selector)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        if ctx.sts.api_version != "apps/v1" or ctx.is_fragment:
            return  # apps/v1beta1 defaulted the selector from the template labels
        selector = set_spec(ctx.sts).selector
        labels = dict(ctx.pod_labels)
        shown = ", ".join(f"{k}={v}" for k, v in labels.items()) or "none"
        if len(shown) > 50:
            shown = shown[:47] + "..."
        if not isinstance(selector, Mapping):
            problem = "spec.selector is missing (required in apps/v1)"
            at = ctx.sts.pos("spec", "selector")
        elif is_empty_selector(selector):
            problem = "spec.selector is empty"
            at = ctx.sts.pos("spec", "selector")
        else:
            try:
                ok = selector_matches(selector, labels)
                problem = (
                    f"spec.selector does not select the pod template labels ({shown})"
                    if not ok
                    else ""
                )
            except InvalidSelector as exc:
                problem = f"spec.selector is invalid: {exc}"
            at = ctx.sts.pos("spec", "selector")
        if not problem:
            return
        msg = f"{problem}: the API server rejects the StatefulSet"
        yield self.finding(ctx, at, msg)  # (the explanation is the page's)


@hookimpl
def ssrisk_rules() -> list[Rule]:
    return [SelectorTemplateMismatch()]
