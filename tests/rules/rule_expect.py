"""``# expect: RULE`` markers, and running ssrisk on rule examples (shared by the rule tests).

A manifest marks each line where a finding is expected with a trailing comment
``# expect: rule-id`` (several ids separated by commas). The check compares the exact set of
``(rule, line)`` pairs for the rules a test is about.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from conftest import run_cli

MARKER = re.compile(r"#\s*expect:\s*([a-z0-9,\s-]+?)\s*$")
KUBE_VERSION = "1.34"


def markers(text: str) -> set[tuple[str, int]]:
    """``(rule, line)`` for every ``# expect:`` marker in ``text`` (lines are 1-based)."""
    out: set[tuple[str, int]] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        m = MARKER.search(line)
        if m:
            out.update((rule.strip(), number) for rule in m.group(1).split(",") if rule.strip())
    return out


def findings(
    path: Path, rules: Iterable[str], kube_version: str = KUBE_VERSION, config: Path | None = None
) -> set[tuple[str, int, str]]:
    """``(rule, line, file name)`` of every reported finding of ``rules`` when checking
    ``path`` (findings folded into the finding of their cause are not reported)."""
    wanted = set(rules)
    extra = ("--config", str(config)) if config is not None else ()
    run = run_cli("check", "--format", "json", "--kube-version", kube_version, *extra, str(path))
    assert run.code in (0, 1), run.out + run.err
    report = run.json()
    assert report["errors"] == [], report["errors"]
    return {
        (f["rule"], f["line"], Path(f["path"]).name)
        for f in report["findings"]
        if f["rule"] in wanted and not f.get("folded_into")
    }
