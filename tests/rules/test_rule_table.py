"""The rule table of docs/rules/index.md and each page's severity paragraph agree with the rules'
metadata: the table is the one ``scripts/rule_table.py`` writes from it (every rule once,
with the severities it can report, most severe first, and its summary), and each page opens
by naming each of those severities."""

from __future__ import annotations

import re
from pathlib import Path

from ssrisk.model import Severity
from ssrisk.plugins import collect_rules, plugin_manager

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "rules" / "index.md"
ROW = re.compile(
    r"^\| `([a-z0-9-]+)` \| ((?:error|warning|info)(?: / (?:error|warning|info))*) \|", re.M
)
ORDER = [Severity.ERROR, Severity.WARNING, Severity.INFO]


def test_the_readme_table_is_the_generated_one() -> None:
    import importlib.util

    script = ROOT / "scripts" / "rule_table.py"
    spec = importlib.util.spec_from_file_location("rule_table", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (block,) = module.BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert block == module.generated(), "run: .venv/bin/python scripts/rule_table.py"


def test_the_readme_lists_every_rule_with_its_severities() -> None:
    rows = ROW.findall(PAGE.read_text(encoding="utf-8"))
    listed = dict(rows)
    assert len(listed) == len(rows), "a rule is listed twice"
    rules = collect_rules(plugin_manager())
    assert set(listed) == {r.id for r in rules}
    for rule in rules:
        can = {rule.severity, *rule.other_severities}
        want = " / ".join(str(s) for s in ORDER if s in can)
        assert listed[rule.id] == want, rule.id


def test_each_page_opens_with_the_severities_of_its_rule() -> None:
    for rule in collect_rules(plugin_manager()):
        text = rule.doc_path().read_text(encoding="utf-8")
        opening = text.split("\n\n")[1]  # (after the title)
        assert opening.startswith("Severity: "), rule.id
        named = {s for s in ORDER if f"**{s}**" in opening}
        assert named == {rule.severity, *rule.other_severities}, (rule.id, opening)
