"""The configuration file: discovery, precedence of flags, validation errors with positions,
and the cluster profile handed to the simulator."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA, ROOT, docs_text, run_cli

from ssrisk.model import Finding, Severity
from ssrisk.rule import CheckContext, Rule

SINGLE = DATA / "ci" / "single.yaml"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A scratch repository with one manifest in deploy/ and no configuration yet."""
    (tmp_path / "deploy").mkdir()
    shutil.copy(SINGLE, tmp_path / "deploy" / "db.yaml")
    return tmp_path


def rules_of(run_out: str) -> set[str]:
    return {line.split()[2] for line in run_out.splitlines() if line.startswith("deploy/")}


def test_ssrisk_yaml_is_found_walking_up_from_the_working_directory(repo: Path) -> None:
    assert "single-replica" in rules_of(run_cli("check", "deploy", cwd=repo).out)
    (repo / ".ssrisk.yaml").write_text("disable: [single-replica]\n", encoding="utf-8")
    run = run_cli("check", ".", cwd=repo / "deploy")
    assert run.code == 0, run.out + run.err
    assert "single-replica" not in run.out and "db.yaml" in run.out


def test_pyproject_tool_table_is_read(repo: Path) -> None:
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.ssrisk]\nselect = ["single-replica"]\n',
        encoding="utf-8",
    )
    run = run_cli("check", "deploy", cwd=repo)
    assert rules_of(run.out) == {"single-replica"}


def test_pyproject_without_the_table_is_not_a_config(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    run = run_cli("check", "deploy", cwd=repo)
    assert run.code == 1 and "single-replica" in rules_of(run.out)


@pytest.mark.parametrize(
    "text",
    [
        '[project]\nname = "x"\n[tool.other\n',
        '[tool."ss\\u0072isk"]\nselect = ["single-replica"]\n',
    ],
    ids=["broken-without-ssrisk", "escaped-key"],
)
def test_pyproject_is_parsed_only_when_it_may_name_ssrisk(repo: Path, text: str) -> None:
    # a file that cannot name the table (not even with an escape) is not parsed: a broken
    # pyproject.toml of the project is no configuration of ssrisk; a key spelt with an
    # escape is still read
    everything = rules_of(run_cli("check", "deploy", cwd=repo).out)  # (no configuration)
    assert len(everything) > 1
    (repo / "pyproject.toml").write_text(text, encoding="utf-8")
    run = run_cli("check", "deploy", cwd=repo)
    assert run.code == 1 and "TOML" not in run.err, run.out + run.err
    assert rules_of(run.out) == ({"single-replica"} if "u0072" in text else everything)


def test_a_utf16_pyproject_naming_ssrisk_is_an_error(repo: Path) -> None:
    # (TOML is UTF-8: the table is not silently skipped for want of the ASCII word)
    text = '[tool.ssrisk]\nselect = ["single-replica"]\n'
    (repo / "pyproject.toml").write_bytes(text.encode("utf-16"))
    run = run_cli("check", "deploy", cwd=repo)
    assert run.code == 2 and "not UTF-8" in run.err, run.out + run.err


def test_ssrisk_yaml_wins_over_pyproject_in_the_same_directory(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.ssrisk]\nselect = ["pdb-missing"]\n')
    (repo / ".ssrisk.yaml").write_text("select: [single-replica]\n")
    assert rules_of(run_cli("check", "deploy", cwd=repo).out) == {"single-replica"}


def test_explicit_config_file(repo: Path, tmp_path: Path) -> None:
    cfg = repo / "ci-ssrisk.yaml"
    cfg.write_text("select: [single-replica]\nseverity:\n  single-replica: warning\n")
    run = run_cli("check", "--config", str(cfg), "--format", "json", "deploy", cwd=repo)
    (finding,) = run.json()["findings"]
    assert finding["rule"] == "single-replica" and finding["severity"] == "warning"
    assert run.code == 0  # a warning is below the default fail-on (error)


def test_fail_on_from_the_file_and_the_flag_overrides_it(repo: Path) -> None:
    (repo / ".ssrisk.yaml").write_text("fail-on: warning\ndisable: [single-replica]\n")
    assert run_cli("check", "deploy", cwd=repo).code == 1  # warnings remain
    assert run_cli("check", "--fail-on", "error", "deploy", cwd=repo).code == 0


def test_kube_version_from_the_file_and_the_flag_overrides_it(repo: Path) -> None:
    (repo / ".ssrisk.yaml").write_text('kube-version: "1.30"\n')
    assert run_cli("check", "--format", "json", "deploy", cwd=repo).json()["kube_version"] == (
        "1.30"
    )
    flagged = run_cli("check", "--kube-version", "1.33", "--format", "json", "deploy", cwd=repo)
    assert flagged.json()["kube_version"] == "1.33"


def test_select_flag_replaces_the_file_and_disable_adds_to_it(repo: Path) -> None:
    (repo / ".ssrisk.yaml").write_text("select: [single-replica]\n")
    run = run_cli("check", "--select", "readiness-probe-missing", "deploy", cwd=repo)
    assert rules_of(run.out) == {"readiness-probe-missing"}
    (repo / ".ssrisk.yaml").write_text("disable: [single-replica]\n")
    run = run_cli("check", "--disable", "readiness-probe-missing", "deploy", cwd=repo)
    assert rules_of(run.out) and not rules_of(run.out) & {
        "single-replica",
        "readiness-probe-missing",
    }


def test_exclude_from_the_file(repo: Path) -> None:
    (repo / "vendor").mkdir()
    shutil.copy(SINGLE, repo / "vendor" / "theirs.yaml")
    (repo / ".ssrisk.yaml").write_text("exclude: [vendor]\n")
    run = run_cli("check", "--format", "json", ".", cwd=repo)
    paths = {f["path"] for f in run.json()["findings"]}
    assert paths and not any("vendor" in p for p in paths)


_OPTION = "rule-options:\n  long-termination-grace:\n    {}\n"


@pytest.mark.parametrize(  # an unknown name at its key, a bad value at the value
    ("text", "line", "col", "words"),
    [
        ("fail-on: error\nrules: []\n", 2, 1, "unknown key 'rules'"),
        ("fail-on: fatal\n", 1, 10, "'fatal' is not one of"),
        ("kube-version: 1.30\n", 1, 15, 'must be a string such as "1.30"'),
        ('kube-version: "1.12"\n', 1, 15, "unsupported Kubernetes version '1.12'"),
        ("select:\n  - single-replica\n  - no-such-rule\n", 3, 5, "unknown rule 'no-such-rule'"),
        ("severity:\n  single-replica: low\n", 2, 19, "'low' is not one of"),
        ("profile:\n  tolerations-s: 30\n", 2, 3, "unknown profile setting 'tolerations-s'"),
        ("profile:\n  attach-s: fast\n", 2, 13, "attach-s must be a number"),
        ("profile:\n  attach-s: -1\n", 2, 13, "must be seconds from 0 to one year"),
        ("select: [single-replica\n", 2, 1, "YAML syntax"),
        ("profile:\n  node-labels: {'bad key!': x}\n", 2, 3, "is not a valid label key"),
        ("profile:\n  node-taints:\n  - {key: a, effect: Never}\n", 3, 22, "is not one of"),
        ("profile:\n  node-allocatable: {cpu: lots}\n", 2, 3, "positive quantities"),
        ("profile:\n  node-allocatable: {gpu: 1}\n", 2, 3, "gpu"),
        # rule options: each rule's declarations, checked generically
        (_OPTION.format("max-grace-s: 600"), 3, 5, "has no option 'max-grace-s' (options: "),
        # a bad value at the value, in one wording, spelt as the file spells it
        (_OPTION.format("max-grace-period-s: 1.5"), 3, 25, "from 0 to 31536000, got 1.5"),
        (_OPTION.format("max-grace-period-s: -1"), 3, 25, "from 0 to 31536000, got -1"),
        (
            _OPTION.format("max-grace-period-s: true"),
            3,
            25,
            "an integer from 0 to 31536000, got true",
        ),
        (_OPTION.format("max-grace-period-s: null"), 3, 25, "got null"),
        (_OPTION.format('max-grace-period-s: "600"'), 3, 25, 'got "600"'),
        ("rule-options:\n  single-replcia: {x: 1}\n", 2, 3, "unknown rule 'single-replcia'"),
        ("rule-options:\n  single-replica: {x: 1}\n", 2, 20, "has no option 'x' (options: none)"),
    ],
)
def test_bad_config_is_exit_2_with_file_and_position(
    repo: Path, text: str, line: int, col: int, words: str
) -> None:
    cfg = repo / ".ssrisk.yaml"
    cfg.write_text(text, encoding="utf-8")
    run = run_cli("check", "deploy", cwd=repo)
    assert run.code == 2
    assert f"{cfg.resolve()}:{line}:{col}: " in run.err, run.err
    assert words in run.err
    assert "Traceback" not in run.err and run.out == ""


def test_bad_pyproject_table_names_the_key(repo: Path) -> None:
    (repo / "pyproject.toml").write_text('[tool.ssrisk]\nfail-on = "warning"\nbogus = 1\n')
    run = run_cli("check", "deploy", cwd=repo)
    assert run.code == 2
    assert "pyproject.toml: [tool.ssrisk]: unknown key 'bogus'" in run.err


def test_broken_toml_is_exit_2(repo: Path) -> None:
    (repo / "pyproject.toml").write_text("[tool.ssrisk\n")
    run = run_cli("check", "deploy", cwd=repo)
    assert run.code == 2 and "TOML syntax" in run.err


def test_missing_explicit_config_is_exit_2(repo: Path) -> None:
    run = run_cli("check", "--config", "nope.yaml", "deploy", cwd=repo)
    assert run.code == 2 and "nope.yaml: cannot read" in run.err


class RecoveryProbe(Rule):
    """Reports the simulated recovery time with the out-of-service taint (test only)."""

    id = "recovery-probe"
    severity = Severity.INFO
    summary = "test rule"

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        result = ctx.try_simulate("node-loss-out-of-service")
        if result is None:
            pytest.skip("the simulator does not model node-loss-out-of-service here")
        yield self.finding(ctx, ctx.sts.start(), f"{result.time_to_recovery_s}")


def test_profile_reaches_the_simulator(tmp_path: Path) -> None:
    from ssrisk.config import build_settings, load_config
    from ssrisk.engine import check

    cfg = tmp_path / "c.yaml"
    cfg.write_text("profile:\n  out-of-service-after-s: 120\n  attach-s: 5\n")
    config = load_config(cfg)
    assert config.profile == {"out_of_service_after_s": 120.0, "attach_s": 5.0}
    settings = build_settings(config)
    assert settings.profile is not None and settings.profile.out_of_service_after_s == 120.0
    default = check([str(SINGLE)], [RecoveryProbe()], build_settings(None))
    custom = check([str(SINGLE)], [RecoveryProbe()], settings)
    t_default = float(default.findings[0].message)
    t_custom = float(custom.findings[0].message)
    # the taint comes 480 s earlier with the profile, so recovery is at least that much sooner
    assert t_default - t_custom >= 480 - 15


def test_the_readme_examples_are_valid_configurations(tmp_path: Path) -> None:
    import re

    from ssrisk.config import load_config

    readme = docs_text()
    yaml_example = re.search(r"```yaml\n(# \.ssrisk\.yaml\n.*?)```", readme, re.S)
    toml_example = re.search(r"```toml\n(# pyproject\.toml\n.*?)```", readme, re.S)
    assert yaml_example and toml_example
    (tmp_path / ".ssrisk.yaml").write_text(yaml_example.group(1), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(toml_example.group(1), encoding="utf-8")
    from_yaml = load_config(tmp_path / ".ssrisk.yaml")
    assert from_yaml.kube_version == "1.33" and from_yaml.profile
    from_toml = load_config(tmp_path / "pyproject.toml")
    assert from_toml.fail_on == Severity.WARNING
    assert from_toml.profile == {"out_of_service_after_s": 120.0}


def test_profile_sets_the_shape_of_the_simulated_cluster(tmp_path: Path) -> None:
    kafka = str(ROOT / "examples" / "kafka.yaml")  # 3 replicas, required hostname anti-affinity
    args = ("simulate", "--format", "json", "--scenario", "zone-loss", kafka)
    small = run_cli(*args, cwd=tmp_path).json()["results"][0]
    (tmp_path / ".ssrisk.yaml").write_text("profile:\n  zones: 3\n  nodes-per-zone: 4\n")
    large = run_cli(*args, cwd=tmp_path).json()["results"][0]
    # two nodes per zone fit two replicas in the lost zone; four nodes fit all three
    assert small["replicas_on_failed_nodes"] == 2
    assert large["replicas_on_failed_nodes"] == 3
    (tmp_path / ".ssrisk.yaml").write_text("profile:\n  nodes-per-zone: 0\n")
    bad = run_cli("check", kafka, cwd=tmp_path)
    assert bad.code == 2 and ".ssrisk.yaml:2:19" in bad.err and "1 to 50" in bad.err


def test_profile_describes_the_node_pool(tmp_path: Path) -> None:
    """node-labels, node-taints and node-allocatable reach the simulated nodes."""
    from ssrisk.embedded_sim.profile import Allocatable, NodeTaint

    from ssrisk.config import build_settings, load_config

    cfg = tmp_path / ".ssrisk.yaml"
    cfg.write_text(
        "profile:\n"
        "  node-labels: {pool: db, ssd: true}\n"
        "  node-taints:\n"
        "  - {key: dedicated, value: db, effect: NoSchedule}\n"
        "  node-allocatable: {cpu: 3500m, memory: 8Gi}\n"
    )
    profile = build_settings(load_config(cfg)).profile
    assert profile is not None
    assert profile.node_labels == (("pool", "db"), ("ssd", "true"))
    assert profile.node_taints == (NodeTaint("dedicated", "NoSchedule", "db"),)
    assert profile.node_allocatable == Allocatable(3500, 8 * 1024**3, 110)
    # examples/kafka.yaml tolerates no taint: with the pool's taint no replica fits
    kafka = str(ROOT / "examples" / "kafka.yaml")
    run = run_cli("simulate", "--format", "json", "--scenario", "node-loss", kafka, cwd=tmp_path)
    (res,) = run.json()["results"]
    assert "no replica fits a node of the simulated cluster" in res["verdict"]
    assert "dedicated=db:NoSchedule" in res["verdict"]


TYPOS = DATA / "gate" / "config-typos"


@pytest.mark.parametrize(
    ("name", "where", "last_known"),
    [
        (
            "profile-typo",
            ":2:3: unknown profile setting 'out-of-service-after': "
            "did you mean 'out-of-service-after-s'? (known: adc-reaction-s, ",
            "zones",
        ),
        (
            "rule-typo",
            ":2:3: unknown rule 'single-replcia': did you mean 'single-replica'? (known: ",
            "zonal-volume-pinning",
        ),
        (
            "objective-typo",
            ":2:15: objectives node-loss: unknown key 'recover-whithin': "
            "did you mean 'recover-within'? (known: ",
            "recover-within",
        ),
        ("internal-field", ":2:3: unknown profile setting 'shape-stated' (known: ", "zones"),
    ],
)
def test_a_misspelt_name_gets_the_closest_and_every_known_one(
    name: str, where: str, last_known: str
) -> None:
    config = TYPOS / f"{name}.ssrisk.yaml"
    run = run_cli("check", "--config", str(config), str(SINGLE))
    assert run.code == 2
    (line,) = run.err.splitlines()
    assert f"{config}{where}" in line, line
    # the list of known names is ssrisk's own text: never cut short
    assert line.endswith(f", {last_known})"), line
    assert "..." not in line
    assert "shape-stated" not in line.split("(known: ")[1]
    assert "placeholder-names" not in line


def test_every_problem_of_a_configuration_file_is_reported_at_once_in_file_order() -> None:
    """A misspelt rule id, a bad value and two bad profile settings: four errors, each at
    its place (a bad value at the value, not its key), in the order of the file."""
    several = DATA / "gate" / "config-errors" / "several"
    run = run_cli("check", str(several))
    assert run.code == 2
    config = several / ".ssrisk.yaml"
    lines = [x.split(" (known: ")[0] for x in run.err.splitlines()]
    assert lines == [
        f"ssrisk: error: {config}:2:11: unknown rule 'single-replcia': did you mean "
        "'single-replica'?",
        f"ssrisk: error: {config}:3:10: fail-on: 'warn' is not one of ['error', 'warning', 'info']",
        f"ssrisk: error: {config}:5:3: unknown profile setting 'out-of-service-after': did you "
        "mean 'out-of-service-after-s'?",
        f"ssrisk: error: {config}:6:10: profile zones must be a whole number from 1 to 26",
    ]


@pytest.mark.parametrize(
    ("configured", "reported"),
    [(None, True), ("600", False), ("399", True), ("400", False), ("1.0e3", False)],
)
def test_a_rule_option_changes_what_the_rule_reports(
    repo: Path, configured: str | None, reported: bool
) -> None:
    manifest = repo / "deploy" / "db.yaml"
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace("    spec:\n", "    spec:\n      terminationGracePeriodSeconds: 400\n", 1),
        encoding="utf-8",
    )
    if configured is not None:
        (repo / ".ssrisk.yaml").write_text(_OPTION.format(f"max-grace-period-s: {configured}"))
    run = run_cli("check", "--format", "json", "deploy", cwd=repo)
    rules = {f["rule"] for f in run.json()["findings"]}
    assert ("long-termination-grace" in rules) == reported


def test_simulate_checks_the_configuration_as_check_does(repo: Path) -> None:
    # one file, one verdict: a rule id or option no rule has stops simulate too
    (repo / ".ssrisk.yaml").write_text(_OPTION.format("max-grace-period-s: -1"))
    for command in ("check", "simulate"):
        run = run_cli(command, "deploy", cwd=repo)
        assert run.code == 2 and "got -1" in run.err, (command, run.err)


@pytest.mark.parametrize(
    "text", ["disable: &a [*a]\n", "profile: &p {x: *p}\n", "rule-options: &r {x: *r}\n"]
)
def test_an_alias_that_contains_itself_is_an_error_of_the_file(tmp_path: Path, text: str) -> None:
    # it was an internal error (RecursionError) in check and simulate alike
    (tmp_path / ".ssrisk.yaml").write_text(text)
    (tmp_path / "a.yaml").write_text((ROOT / "examples" / "postgres.yaml").read_text())
    for command in ("check", "simulate"):
        run = run_cli(command, "a.yaml", cwd=tmp_path)
        assert run.code == 2, run.err
        assert ".ssrisk.yaml:1:" in run.err and "an anchor's value contains itself" in run.err
        assert "internal error" not in run.err


def test_the_readme_configuration_is_valid(tmp_path: Path) -> None:
    import re

    from ssrisk.config import load_config

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = re.findall(
        r"```yaml\n(# \.ssrisk\.yaml at the repository root\n.*?)```", readme, re.S
    )
    # the repository it describes: the chart and its environments' values files
    (tmp_path / "charts" / "db").mkdir(parents=True)
    (tmp_path / "charts" / "db" / "Chart.yaml").write_text("apiVersion: v2\nname: db\nversion: 1\n")
    for env in ("staging", "prod"):
        (tmp_path / "environments" / env).mkdir(parents=True)
        (tmp_path / "environments" / env / "db-values.yaml").write_text("replicas: 3\n")
    (tmp_path / ".ssrisk.yaml").write_text(block, encoding="utf-8")
    config = load_config(tmp_path / ".ssrisk.yaml")
    (variants,) = config.charts.values()
    assert [v.name for v in variants] == ["staging", "prod"]
    assert variants[1].set_values == ("replicas=3",) and variants[1].release == "db"
    assert config.kube_version == "1.33" and config.fail_on == Severity.WARNING
