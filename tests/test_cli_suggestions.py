"""A mistyped option or scenario names the one the user probably meant (issue 23, defect 6)."""

from __future__ import annotations

from conftest import ROOT, run_cli

EXAMPLES = str(ROOT / "examples")


def test_a_mistyped_option_names_the_closest_option_of_any_command() -> None:
    run = run_cli("check", "--kube-verison", "1.30", "examples")
    assert run.code == 2
    assert "unrecognized arguments: --kube-verison" in run.err
    assert "did you mean --kube-version?" in run.err
    run = run_cli("profile", "nodes.yaml", "--storage-class=sc.yaml")
    assert run.code == 2 and "did you mean --storage-classes?" in run.err
    run = run_cli("check", "--zzzzzz", "examples")  # nothing close: no suggestion
    assert run.code == 2 and "did you mean" not in run.err


def test_a_mistyped_scenario_names_the_closest_scenario() -> None:
    run = run_cli("simulate", "--scenario", "node-los", "examples")
    assert run.code == 2
    assert "unknown scenario 'node-los' (did you mean 'node-loss'?" in run.err


def test_select_and_disable_take_comma_separated_rule_ids() -> None:
    both = run_cli("check", "--format", "json", "--select", "single-replica,pdb-missing", EXAMPLES)
    assert {f["rule"] for f in both.json()["findings"]} == {"single-replica", "pdb-missing"}
    typo = run_cli("check", "--select", "single-replica,pdb-misisng", EXAMPLES)
    assert typo.code == 2 and "unknown rule 'pdb-misisng' (did you mean 'pdb-missing'?)" in typo.err
    rest = run_cli(
        "check", "--format", "json", "--disable", "single-replica, pdb-missing", EXAMPLES
    )
    assert not {"single-replica", "pdb-missing"} & {f["rule"] for f in rest.json()["findings"]}


def test_an_option_of_another_command_says_which() -> None:
    run = run_cli("check", "--scenario", "node-loss", EXAMPLES)
    assert run.code == 2 and "--scenario is an option of 'ssrisk simulate'" in run.err


def test_an_option_of_another_command_is_named_with_its_command() -> None:
    # (the parser built for one command still knows every command's options for the hint)
    run = run_cli("check", "--scenario", "node-loss", "examples")
    assert run.code == 2
    assert "--scenario is an option of 'ssrisk simulate'" in run.err


def test_the_parser_of_one_command_parses_and_helps_as_the_full_parser() -> None:
    import argparse

    from ssrisk.cli import COMMANDS, build_parser

    def command_parser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
        (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        found: argparse.ArgumentParser = sub.choices[name]
        return found

    full = build_parser()
    argv = {
        "check": ["check", "--format", "json", "--kube-version", "1.30", "--", "a.yaml"],
        "simulate": ["simulate", "--scenario", "node-loss", "a.yaml"],
        "fix": ["fix", "--diff", "--select", "pdb-missing", "a.yaml"],
        "rules": ["rules", "--format", "markdown"],
        "explain": ["explain", "single-replica"],
        "systems": ["systems", "--format", "json"],
        "profile": ["profile", "nodes.yaml"],
    }
    assert set(argv) == set(COMMANDS)
    for name in COMMANDS:
        one = build_parser(name)
        assert command_parser(one, name).format_help() == command_parser(full, name).format_help()
        assert vars(one.parse_args(argv[name])) == vars(full.parse_args(argv[name])), name
