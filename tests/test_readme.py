"""The README shows real output: its samples are compared with what ssrisk prints."""

from __future__ import annotations

import re

from conftest import ROOT, run_cli

README = ROOT / "README.md"
#: A finding line as text output prints it: ``path:line:col: severity rule-id message``.
FINDING_LINE = re.compile(r"^examples/\S+:\d+:\d+: (?:error|warning|info) [a-z0-9-]+ .+$")


def _fenced_lines(text: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            inside = not inside
            continue
        if inside:
            lines.append(line)
    return lines


def test_readme_sample_lines_are_real_output_of_the_examples() -> None:
    samples = [
        line for line in _fenced_lines(README.read_text("utf-8")) if FINDING_LINE.match(line)
    ]
    assert samples, "the README shows no sample finding"
    # the quick start: `ssrisk check examples/` from the repository root, exit 1
    run = run_cli("check", "examples/", cwd=ROOT)
    assert run.code == 1
    printed = set(run.out.splitlines())
    assert [s for s in samples if s not in printed] == []


def test_readme_states_the_default_scenario_of_simulate() -> None:
    text = " ".join(README.read_text("utf-8").split())
    stated = re.search(r"By default only the `([a-z-]+)` scenario is simulated", text)
    assert stated is not None
    run = run_cli("simulate", "--format", "json", "examples/postgres.yaml", cwd=ROOT)
    assert {r["scenario"] for r in run.json()["results"]} == {stated.group(1)}
