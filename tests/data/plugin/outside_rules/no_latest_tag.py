"""A rule from outside the project, registered only through its entry point."""

from ssrisk.hookspecs import hookimpl
from ssrisk.model import Severity
from ssrisk.rule import Rule


class NoLatestTag(Rule):
    id = "no-latest-tag"
    severity = Severity.ERROR
    summary = "container image uses the latest tag"

    def check(self, ctx):
        containers = ctx.sts.get("spec", "template", "spec", "containers") or []
        for i, c in enumerate(containers):
            if str(c.get("image", "")).endswith(":latest"):
                at = ctx.sts.pos("spec", "template", "spec", "containers", i, "image")
                yield self.finding(ctx, at, "image uses the latest tag")


@hookimpl
def ssrisk_rules():
    return [NoLatestTag()]
