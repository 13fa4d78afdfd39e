"""Every rule's page (rules/<id>.md) is complete, and its examples give exactly the findings
they are marked with, so the documentation cannot drift from the behaviour."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from rule_expect import findings, markers

from ssrisk.plugins import collect_rules, plugin_manager
from ssrisk.rule import Rule

BLOCK = re.compile(r"^```yaml (fail|pass)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
#: A page may give the configuration its examples are checked with (``.ssrisk.yaml``).
CONFIG = re.compile(r"^```yaml config[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
SECTIONS = (
    "## What it detects",
    "## Why it matters",
    "## Example timeline",
    "## How to fix",
    "## Examples",
)


def _rules() -> list[Rule]:
    return collect_rules(plugin_manager())


def _blocks() -> list[Any]:
    params = []
    for rule in _rules():
        page = rule.doc_path()
        if not page.exists():
            continue
        text = page.read_text(encoding="utf-8")
        config = CONFIG.search(text)
        for i, m in enumerate(BLOCK.finditer(text)):
            params.append(
                pytest.param(
                    rule.id,
                    m.group(1),
                    m.group(2),
                    config.group(1) if config else None,
                    id=f"{rule.id}:{m.group(1)}{i}",
                )
            )
    return params


@pytest.mark.parametrize("rule", _rules(), ids=lambda r: r.id)
def test_page_is_complete(rule: Rule) -> None:
    page = rule.doc_path()
    assert page.exists(), f"{rule.id} has no page {page.name}"
    text = page.read_text(encoding="utf-8")
    assert text.startswith(f"# {rule.id}\n"), "the page starts with '# <id>'"
    for heading in SECTIONS:
        assert heading in text, f"{page.name} lacks the section {heading!r}"
    kinds = [m.group(1) for m in BLOCK.finditer(text)]
    assert "fail" in kinds and "pass" in kinds, f"{page.name} needs a fail and a pass example"
    assert rule.references, f"{rule.id} cites no source"
    # each declared option is described, with its default and range, under "## Options"
    options = text.split("## Options", 1)[1].split("\n## ", 1)[0] if rule.options else ""
    assert bool(rule.options) == ("## Options" in text), f"{page.name}: Options iff declared"
    for o in rule.options:
        name, rest = o.describe().split(" ", 1)
        said = f"`{name}` {rest.split(':', 1)[0]}"
        assert said in " ".join(options.split()), f"{page.name} does not describe {said}"


@pytest.mark.parametrize(("rule_id", "kind", "text", "config"), _blocks())
def test_page_example(
    rule_id: str, kind: str, text: str, config: str | None, tmp_path: Path
) -> None:
    manifest = tmp_path / f"{rule_id}-{kind}.yaml"
    manifest.write_text(text, encoding="utf-8")
    config_file = None
    if config is not None:
        config_file = tmp_path / ".ssrisk.yaml"
        config_file.write_text(config, encoding="utf-8")
    want = {(r, line) for r, line in markers(text) if r == rule_id}
    got = {(r, line) for r, line, _ in findings(manifest, [rule_id], config=config_file)}
    if kind == "fail":
        assert want, "a failing example marks at least one '# expect:' line"
    else:
        assert not want, "a passing example has no '# expect:' marker"
    assert got == want


def test_a_finding_without_its_own_explanation_quotes_its_page() -> None:
    # prose in one home: update-strategy-ondelete states nothing beyond its message, so its
    # explanation is its page's "Why it matters" and "How to fix", not a second wording
    from conftest import DATA, run_cli

    from ssrisk.plugins import collect_rules, plugin_manager

    (rule,) = [r for r in collect_rules(plugin_manager()) if r.id == "update-strategy-ondelete"]
    run = run_cli("check", "--format", "json", str(DATA / "rules" / rule.id))
    (found,) = [f for f in run.json()["findings"] if f["rule"] == rule.id]
    assert found["explanation"] == rule.page_explanation()
    why = rule.page_section("Why it matters")
    assert why.startswith("With OnDelete the StatefulSet controller stops") and "`" not in why
    assert found["explanation"].endswith(
        "\n\nFix: use RollingUpdate (with partition for staged "
        "rollouts) unless an operator manages the pods."
    )
    assert rule.page_section("No such section") == ""
