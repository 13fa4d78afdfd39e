"""The README and the docs show real output: their samples are compared with what ssrisk
prints, and their commands, snippets and workflows are run or parsed as shown."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from conftest import ROOT, docs_text, run_cli

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
    samples = [line for line in _fenced_lines(docs_text()) if FINDING_LINE.match(line)]
    assert samples, "the README shows no sample finding"
    # the quick start: `ssrisk check examples/` from the repository root, exit 1
    run = run_cli("check", "examples/", cwd=ROOT)
    assert run.code == 1
    printed = set(run.out.splitlines())
    assert [s for s in samples if s not in printed] == []


def test_readme_states_the_default_scenario_of_simulate() -> None:
    text = " ".join(docs_text().split())
    stated = re.search(r"By default only the `([a-z-]+)` scenario is simulated", text)
    assert stated is not None
    run = run_cli("simulate", "--format", "json", "examples/postgres.yaml", cwd=ROOT)
    assert {r["scenario"] for r in run.json()["results"]} == {stated.group(1)}


# --- the CI and pre-commit examples work as shown ------------------------------------------


def _blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, re.M | re.S)


def _workflow() -> dict[str, Any]:
    import yaml

    (body,) = [b for lang, b in _blocks(docs_text()) if "# .github/workflows/ssrisk-cli.yaml" in b]
    doc: dict[str, Any] = yaml.safe_load(body)
    return doc


def _shown_commands() -> list[str]:
    """The ``ssrisk`` commands of the docs' shell blocks and of the workflow, in order."""
    commands = []
    for lang, body in _blocks(docs_text()):
        if lang == "sh":
            commands += [
                line.split("  #")[0].strip()
                for line in body.splitlines()
                if line.startswith("ssrisk ")
            ]
    steps = _workflow()["jobs"]["ssrisk"]["steps"]
    commands += [s["run"].strip() for s in steps if s.get("run", "").startswith("ssrisk ")]
    return commands


def test_readme_ci_commands_run_as_shown(tmp_path: Path) -> None:
    """Each command, as written, in a repository whose deploy/ holds the examples: no usage
    error, the exit code of findings, the files it names written."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", repo / "deploy")
    (repo / ".git").mkdir()
    commands = _shown_commands()
    assert len(commands) >= 4, commands
    for command in commands:
        run = run_cli(*shlex.split(command)[1:], cwd=repo)
        assert run.code in (0, 1), (command, run.err)
        for flag in ("--output", "-o", "--write-baseline"):
            words = shlex.split(command)
            if flag in words:
                assert (repo / words[words.index(flag) + 1]).is_file(), command
    # the workflow uploads the SARIF file its check writes
    steps = _workflow()["jobs"]["ssrisk"]["steps"]
    (upload,) = [s for s in steps if "upload-sarif" in s.get("uses", "")]
    (check,) = [s["run"] for s in steps if s.get("run", "").startswith("ssrisk ")]
    words = shlex.split(check)
    assert words[words.index("sarif") + 1 : words.index("sarif") + 3] == [
        "--output",
        upload["with"]["sarif_file"],
    ]


def test_readme_pre_commit_snippets_name_the_hook_with_valid_arguments() -> None:
    import yaml

    from ssrisk.cli import build_parser

    hooks_of = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    snippets = [
        yaml.safe_load(body)
        for lang, body in _blocks(docs_text())
        if lang == "yaml" and "id: ssrisk" in body
    ]
    hooks: list[dict[str, Any]] = []
    for s in snippets:
        entries = s["repos"][0]["hooks"] if isinstance(s, dict) else s
        hooks += entries
    assert len(hooks) >= 3
    for h in hooks:
        hook = hooks_of[h["id"]]
        # the hook runs `entry ARGS FILES`: the README's args must parse
        argv = [*hook["entry"].split()[1:], *h.get("args", []), "deploy/db.yaml"]
        build_parser().parse_args(argv)


def test_the_documented_action_workflows_use_the_actions_inputs() -> None:
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    inputs = set(action["inputs"])
    workflows = [
        yaml.safe_load(body)
        for lang, body in _blocks(docs_text())
        if lang == "yaml" and "# .github/workflows/" in body
    ]
    uses = [
        step
        for w in workflows
        for job in w["jobs"].values()
        for step in job["steps"]
        if step.get("uses", "").split("@")[0].endswith("/ssrisk")
    ]
    assert len(uses) >= 2  # the README's and the CI page's
    for step in uses:
        assert set(step.get("with", {})) <= inputs, step
    # every input is documented, with its default
    ci = (ROOT / "docs" / "ci.md").read_text("utf-8")
    for name, spec in action["inputs"].items():
        default = spec.get("default", "")
        row = f"| `{name}` | `{default}` |" if default else f"| `{name}` | |"
        assert "\n" + row in ci, name
