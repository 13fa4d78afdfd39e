"""Write the rule table of docs/rules/index.md from the rules' metadata (``ssrisk rules
--format markdown``).

Run after adding a rule or changing a rule's summary or severities:

    .venv/bin/python scripts/rule_table.py

``tests/rules/test_rule_table.py`` fails while the table is not the generated one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "rules" / "index.md"
START = "<!-- rule table: written by scripts/rule_table.py from the rules' metadata -->"
END = "<!-- end of rule table -->"
BLOCK = re.compile(re.escape(START) + r"\n.*?" + re.escape(END), re.S)


def generated() -> str:
    """The rule block as the built-in rules' metadata gives it."""
    from ssrisk.cli import rule_table
    from ssrisk.plugins import collect_rules, plugin_manager

    return f"{START}\n{rule_table(collect_rules(plugin_manager()))}{END}"


def main() -> int:
    text = PAGE.read_text(encoding="utf-8")
    if not BLOCK.search(text):
        print(f"{PAGE}: no {START!r} ... {END!r} block", file=sys.stderr)
        return 1
    PAGE.write_text(BLOCK.sub(lambda _m: generated(), text), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
