"""The one-line messages of every rule example, kept in a reviewed snapshot file.

Tests assert a finding's numbers through its ``facts``; the wording lives here, in
``tests/snapshots/rule-messages.txt``, one line per reported finding of
``tests/data/rules``. A change of wording shows as a diff of that file in review. After
rewording a message on purpose, rewrite the file with

    SSRISK_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/rules/test_message_snapshots.py

and read the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

from conftest import DATA, ROOT, run_cli

SNAPSHOT = ROOT / "tests" / "snapshots" / "rule-messages.txt"
RULES = DATA / "rules"


def current() -> str:
    """The snapshot's text for the code as it is: ``path:line:column severity rule message``
    per reported finding, sorted as the report sorts them."""
    run = run_cli("check", "--format", "json", "--kube-version", "1.34", str(RULES))
    assert run.code in (0, 1), run.err
    lines = []
    for f in run.json()["findings"]:
        where = Path(f["path"]).relative_to(RULES).as_posix()
        lines.append(
            f"{where}:{f['line']}:{f['column']} {f['severity']} {f['rule']} {f['message']}"
        )
    return "\n".join(lines) + "\n"


def test_the_messages_are_the_reviewed_ones() -> None:
    text = current()
    if os.environ.get("SSRISK_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert SNAPSHOT.exists(), f"no snapshot: run with SSRISK_UPDATE_SNAPSHOTS=1 to write {SNAPSHOT}"
    want = SNAPSHOT.read_text(encoding="utf-8").splitlines()
    got = text.splitlines()
    changed = sorted(set(want) ^ set(got))
    assert want == got, "messages differ from the snapshot (- reviewed, + now):\n" + "\n".join(
        ("- " if line in want else "+ ") + line for line in changed[:40]
    )
