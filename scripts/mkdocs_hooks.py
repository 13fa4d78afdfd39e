"""MkDocs hooks: the rules' pages in the site, generated from the rules themselves.

Each built-in rule's page (``rules/<id>.md``, the text ``ssrisk explain <id>`` prints) is
added as ``docs/rules/<id>.md``, and the rule ids of the table in
``docs/rules/index.md`` (written by ``scripts/rule_table.py``) link to them: one home for
each rule's text, read by the command line, SARIF and the site alike.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

RULES = Path(__file__).resolve().parents[1] / "rules"
#: A rule id in the first column of the rule table.
TABLE_ID = re.compile(r"^\| `([a-z0-9-]+)` \|", re.M)


def _rule_ids() -> list[str]:
    return sorted(p.stem for p in RULES.glob("*.md") if not p.name.startswith("_"))


def on_files(files: Files, config: Any) -> Files:
    """Add each rule's page to the site."""
    for rule_id in _rule_ids():
        text = (RULES / f"{rule_id}.md").read_text(encoding="utf-8")
        files.append(File.generated(config, f"rules/{rule_id}.md", content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    """Link the rule ids of the rule table to their pages."""
    if page.file.src_uri != "rules/index.md":
        return markdown
    known = set(_rule_ids())
    return TABLE_ID.sub(
        lambda m: f"| [`{m.group(1)}`]({m.group(1)}.md) |" if m.group(1) in known else m.group(0),
        markdown,
    )
