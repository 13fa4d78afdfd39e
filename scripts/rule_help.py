"""Write ``ssrisk/rule_help.json``: the plain texts of the built-in rules' pages, as SARIF's
``fullDescription`` and ``help.text`` give them (``ssrisk.reporters.sarif.help_texts``), so
that a run does not parse 32 Markdown pages to write one SARIF log.

Run after changing a rule's page, summary or references:

    .venv/bin/python scripts/rule_help.py

``tests/test_sarif.py`` fails while the file is not the generated one.
"""

from __future__ import annotations

import json
import sys

from ssrisk.reporters.sarif import HELP_TEXTS


def generated() -> str:
    """The file's text as the built-in rules give it, at the default Kubernetes version."""
    from ssrisk.plugins import collect_rules, plugin_manager
    from ssrisk.reporters.sarif import description, help_key, plain_text, rule_page

    texts = {}
    for rule in collect_rules(plugin_manager()):
        doc, summary = rule_page(rule)
        texts[help_key(doc, summary)] = [description(doc, summary), plain_text(doc)]
    return json.dumps(dict(sorted(texts.items())), indent=1, ensure_ascii=True) + "\n"


def main() -> int:
    HELP_TEXTS.write_text(generated(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
