"""Output formats of ``ssrisk check``: json (against its schema), sarif (against the official
SARIF 2.1.0 schema), junit, github annotations, several outputs in one run, exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import DATA, ROOT, run_cli, shared

CI = DATA / "ci"
SINGLE = CI / "single.yaml"
GOOD = CI / "good.yaml"
SUPPRESS = CI / "suppress"


def line_col_of(path: Path, needle: str) -> tuple[int, int]:
    """1-based line and column where ``needle`` starts in ``path`` (the first occurrence)."""
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        col = line.find(needle)
        if col >= 0:
            return i, col + 1
    raise AssertionError(f"{needle!r} not in {path}")


def sarif_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(shared("schemas", "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)  # type: ignore[no-any-return]


def run_sarif(*args: str) -> dict[str, Any]:
    run = run_cli("check", "--format", "sarif", *args)
    assert run.code in (0, 1, 2) and not run.err, run.err
    doc: dict[str, Any] = json.loads(run.out)
    return doc


# --- json -------------------------------------------------------------------------------


def test_json_report_validates_against_its_schema() -> None:
    schema = json.loads((ROOT / "ssrisk" / "schemas" / "report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    # findings, suppressed findings, input errors and notices all in one report
    run = run_cli(
        "check", "--format", "json", str(ROOT / "examples"), str(SUPPRESS), str(DATA / "bad")
    )
    report = run.json()
    assert report["findings"] and report["errors"]
    assert any(f.get("suppressed") for f in report["findings"])
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(report))
    assert errors == [], [e.message for e in errors]


def test_json_schema_rejects_a_report_missing_a_field() -> None:
    schema = json.loads((ROOT / "ssrisk" / "schemas" / "report.schema.json").read_text())
    report = run_cli("check", "--format", "json", str(SINGLE)).json()
    del report["findings"][0]["line"]
    assert not jsonschema.Draft202012Validator(schema).is_valid(report)


# --- sarif ------------------------------------------------------------------------------


def test_sarif_validates_against_the_official_schema() -> None:
    validator = sarif_validator()
    doc = run_sarif(str(ROOT / "examples"), str(SUPPRESS), str(DATA / "bad"))
    errors = list(validator.iter_errors(doc))
    assert errors == [], [e.message for e in errors[:5]]
    assert doc["version"] == "2.1.0"
    # a broken SARIF log is rejected, so the validation above means something
    doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"] = {"startColumn": 3}
    assert not validator.is_valid(doc)


def test_sarif_result_has_the_real_line_and_column() -> None:
    doc = run_sarif(str(SINGLE))
    (result,) = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "single-replica"]
    loc = result["locations"][0]["physicalLocation"]
    line, col = line_col_of(SINGLE, "replicas: 1")
    # the region runs from the field's key to the end of its line
    assert loc["region"] == {
        "startLine": line,
        "startColumn": col,
        "endLine": line,
        "endColumn": col + len("replicas: 1"),
    }
    assert loc["artifactLocation"]["uri"].endswith("tests/data/ci/single.yaml")
    assert result["level"] == "error"
    assert result["partialFingerprints"]
    assert "suppressions" not in result


def test_sarif_rule_metadata_comes_from_the_rules() -> None:
    from ssrisk.plugins import collect_rules, plugin_manager

    rules = {r.id: r for r in collect_rules(plugin_manager())}
    doc = run_sarif(str(SINGLE))
    driver = doc["runs"][0]["tool"]["driver"]
    assert driver["name"] == "ssrisk"
    descriptors = {d["id"]: d for d in driver["rules"]}
    assert set(descriptors) == set(rules)
    d = descriptors["single-replica"]
    assert d["name"] == "SingleReplica"
    assert d["shortDescription"]["text"] == rules["single-replica"].summary
    assert d["fullDescription"]["text"]
    # the rule's page, then its references as links
    page, links = d["help"]["markdown"].split("\n\n## Links\n\n")
    assert page == rules["single-replica"].doc().rstrip("\n")
    assert len(links.splitlines()) == len(rules["single-replica"].references)
    assert d["defaultConfiguration"]["level"] == "error"
    # a rule with error and milder cases is an error rule, its severities listed
    quorum = descriptors["quorum-replicas"]
    assert quorum["defaultConfiguration"]["level"] == "error"
    assert quorum["properties"]["severities"] == ["error", "warning"]
    assert descriptors["ordered-ready-stall"]["defaultConfiguration"]["level"] == "warning"
    for result in doc["runs"][0]["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_results_present_when_there_are_none() -> None:
    doc = run_sarif("--select", "single-replica", str(GOOD))
    assert doc["runs"][0]["results"] == []
    assert sarif_validator().is_valid(doc)


def test_sarif_carries_suppressions_with_their_reason() -> None:
    doc = run_sarif("--select", "single-replica", str(SUPPRESS))
    by_file = {
        Path(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]).name: r
        for r in doc["runs"][0]["results"]
    }
    assert by_file["annotation.yaml"]["suppressions"] == [
        {
            "kind": "inSource",
            "status": "accepted",
            "justification": "a cache; losing it costs a warm-up",
            "properties": {"ssriskSuppressionKind": "annotation"},
        }
    ]
    assert by_file["comment-same-line.yaml"]["suppressions"][0]["justification"] == (
        "development database, recreated nightly"
    )
    assert "suppressions" not in by_file["comment-wrong-rule.yaml"]


def test_sarif_input_errors_are_tool_notifications() -> None:
    doc = run_cli("check", "--format", "sarif", str(DATA / "bad" / "malformed.yaml")).json()
    invocation = doc["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


# --- junit ------------------------------------------------------------------------------


def test_junit_has_one_case_per_statefulset() -> None:
    run = run_cli("check", "--format", "junit", str(SINGLE), str(GOOD), str(SUPPRESS))
    root = ET.fromstring(run.out)
    cases = root.findall("./testsuite/testcase")
    report = run_cli("check", "--format", "json", str(SINGLE), str(GOOD), str(SUPPRESS)).json()
    # a test report counts StatefulSets, not StatefulSets x rules
    assert len(cases) == report["summary"]["statefulsets"]
    by_name = {c.get("name"): c for c in cases}
    (failure,) = by_name["StatefulSet shop/db"].findall("failure")
    assert failure.get("type") == "error"
    line, col = line_col_of(SINGLE, "replicas: 1")
    assert (failure.get("message") or "").startswith(f"{SINGLE}:{line}:{col}: single-replica ")
    shown = [
        f for f in report["findings"] if f["object"]["name"] == "db" and not f.get("folded_into")
    ]
    assert f"and {len(shown) - 1} more" in (failure.get("message") or "") or len(shown) == 1
    for f in shown:
        assert f"{f['path']}:{f['line']}:{f['column']}: {f['severity']} {f['rule']}" in (
            failure.text or ""
        )
    # a suppressed finding is not listed; findings below fail-on (error) do not fail the case
    cache = by_name["StatefulSet shop/cache"]
    assert cache.find("failure") is None
    listed = cache.find("system-out")
    assert listed is not None and "single-replica" not in (listed.text or "")
    assert "warning" in (listed.text or "")
    suite = root.find("testsuite")
    assert suite is not None
    n_failures = sum(1 for c in cases if c.find("failure") is not None)
    assert int(suite.get("failures") or -1) == n_failures
    assert int(suite.get("tests") or -1) == len(cases)


def test_junit_case_whose_findings_are_all_suppressed_is_skipped(tmp_path: Path) -> None:
    manifest = tmp_path / "cache.yaml"
    text = (SUPPRESS / "annotation.yaml").read_text(encoding="utf-8")
    manifest.write_text(text, encoding="utf-8")
    shown = run_cli("check", "--format", "json", str(manifest)).json()["findings"]
    rules = sorted({f["rule"] for f in shown if not f.get("suppressed")})
    # suppress the rest too: the case is then skipped, with the reasons
    config = tmp_path / ".ssrisk.yaml"
    config.write_text(f"disable: [{', '.join(rules)}]\n", encoding="utf-8")
    run = run_cli("check", "--format", "junit", str(manifest))
    (case,) = ET.fromstring(run.out).findall("./testsuite/testcase")
    skipped = case.find("skipped")
    assert skipped is not None and case.find("failure") is None
    assert "a cache; losing it costs a warm-up" in (skipped.get("message") or "")


def test_junit_reports_unreadable_inputs_as_errors() -> None:
    run = run_cli("check", "--format", "junit", str(DATA / "bad" / "malformed.yaml"))
    assert run.code == 2
    root = ET.fromstring(run.out)
    (case,) = root.findall("./testsuite/testcase")
    assert case.find("error") is not None


# --- github -----------------------------------------------------------------------------


def test_github_annotations_point_at_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    run = run_cli("check", "--format", "github", "--select", "single-replica", str(SINGLE))
    assert run.code == 1
    line, col = line_col_of(SINGLE, "replicas: 1")
    (annotation,) = [x for x in run.out.splitlines() if x.startswith("::")]
    # an absolute PATH: the file relative to the repository root, which GitHub maps
    rel = SINGLE.relative_to(ROOT).as_posix()
    assert annotation.startswith(
        f"::error file={rel},line={line},col={col},title=ssrisk single-replica::"
    )


def test_github_format_is_the_default_on_github_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    run = run_cli("check", "--select", "single-replica", str(SINGLE))
    assert run.out.startswith("::error file=")
    explicit = run_cli("check", "--format", "text", "--select", "single-replica", str(SINGLE))
    assert not explicit.out.startswith("::")


def test_github_escaping_follows_the_actions_toolkit() -> None:
    from ssrisk.reporters.github import command

    line = command("warning", "50% of\nreplicas", file="a:b,c.yaml", line=3, col=5, title="t,1")
    assert line == "::warning file=a%3Ab%2Cc.yaml,line=3,col=5,title=t%2C1::50%25 of%0Areplicas"


def test_github_leaves_out_suppressed_findings() -> None:
    run = run_cli("check", "--format", "github", "--select", "single-replica", str(SUPPRESS))
    annotations = [x for x in run.out.splitlines() if x.startswith("::")]
    assert len(annotations) == 1 and "comment-wrong-rule.yaml" in annotations[0]


# --- several outputs, text, exit codes --------------------------------------------------


def test_each_format_to_its_own_file(tmp_path: Path) -> None:
    sarif, junit = tmp_path / "out.sarif", tmp_path / "out.xml"
    run = run_cli(
        "check",
        "--format", "sarif", "--output", str(sarif),
        "--format", "text",
        "--format", "junit", "-o", str(junit),
        str(SINGLE),
    )  # fmt: skip
    assert run.code == 1
    assert "error single-replica" in run.out  # text went to stdout
    assert json.loads(sarif.read_text())["runs"][0]["results"]
    assert ET.parse(junit).getroot().tag == "testsuites"


def test_two_formats_on_stdout_is_a_usage_error() -> None:
    run = run_cli("check", "--format", "json", "--format", "sarif", str(SINGLE))
    assert run.code == 2
    assert "standard output" in run.err


def test_unknown_format_is_a_usage_error() -> None:
    run = run_cli("check", "--format", "xml", str(SINGLE))
    assert run.code == 2 and "unknown format 'xml'" in run.err


def test_text_summary_counts_per_severity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    report = run_cli("check", "--format", "json", str(SINGLE)).json()
    run = run_cli("check", str(SINGLE))
    reported = [f for f in report["findings"] if not f.get("folded_into")]
    counts = {s: sum(1 for f in reported if f["severity"] == s) for s in
              ("error", "warning", "info")}  # fmt: skip
    assert run.out.splitlines()[-1].startswith(
        f"{len(reported)} finding(s) ({counts['error']} error, "
        f"{counts['warning']} warning, {counts['info']} info)"
    )
    assert "\x1b[" not in run.out


def test_exit_zero_turns_findings_into_success() -> None:
    assert run_cli("check", str(SINGLE)).code == 1
    assert run_cli("check", "--exit-zero", str(SINGLE)).code == 0


def test_no_kubernetes_objects_is_a_warning_or_with_fail_if_empty_an_error(
    tmp_path: Path,
) -> None:
    other = tmp_path / "workflow.yaml"
    other.write_text("name: ci\non: [push]\njobs: {}\n", encoding="utf-8")
    warned = run_cli("check", "--format", "json", str(other))
    assert warned.code == 0
    (notice,) = warned.json()["notices"]
    assert notice["level"] == "warning" and "no Kubernetes objects" in notice["message"]
    failed = run_cli("check", "--fail-if-empty", str(other))
    assert failed.code == 2
    assert "no Kubernetes objects" in failed.out
    assert run_cli("check", "--fail-if-empty", "--exit-zero", str(other)).code == 2


def test_no_kubernetes_objects_names_every_kind_read_and_is_a_notice_in_a_commit() -> None:
    configmap = str(DATA / "gate" / "unrelated" / "configmap.yaml")
    kinds = (
        "StatefulSet, Service, PodDisruptionBudget, StorageClass, PersistentVolume, "
        "PersistentVolumeClaim, Namespace, HorizontalPodAutoscaler"
    )
    warned = run_cli("check", "--format", "json", configmap)
    (notice,) = warned.json()["notices"]
    assert notice["level"] == "warning" and f"({kinds})" in notice["message"]
    # a commit of a ConfigMap only (the pre-commit hook) has nothing to check: a notice
    for extra in ([], ["--fail-if-empty"]):
        commit = run_cli("check", "--changed", "--format", "json", *extra, configmap)
        assert commit.code == 0, commit.out
        (notice,) = commit.json()["notices"]
        assert notice["level"] == "notice", notice
        assert notice["message"].startswith("nothing to check: no Kubernetes objects")
        assert commit.json()["errors"] == []


def test_sarif_help_uri_points_at_the_rule_page_when_the_source_is_declared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ssrisk import __version__
    from ssrisk.reporters import sarif

    monkeypatch.setattr(sarif, "source_url", lambda: "https://git.example.org/ssrisk")
    doc = run_sarif("--select", "single-replica", str(SINGLE))
    (d,) = [d for d in doc["runs"][0]["tool"]["driver"]["rules"] if d["id"] == "single-replica"]
    assert d["helpUri"] == (
        f"https://git.example.org/ssrisk/blob/v{__version__}/rules/single-replica.md"
    )
    assert sarif_validator().is_valid(doc)


def test_text_names_the_statefulset_of_a_finding_on_a_related_object() -> None:
    """A finding written in another file than its StatefulSet (here a PodDisruptionBudget of
    its own file) says which StatefulSet it is about, as github's ``(StatefulSet ...)``
    does; findings in the StatefulSet's own file stay short."""
    related = DATA / "gate" / "related"
    lines = [
        x for x in run_cli("check", str(related)).out.splitlines() if " pdb-" in x or ".yaml:" in x
    ]
    (pdb,) = [x for x in lines if x.startswith(str(related / "pdb.yaml"))]
    assert " pdb-blocks-drain " in pdb and pdb.endswith(" [StatefulSet default/db]")
    own = [x for x in lines if x.startswith(str(related / "statefulset.yaml"))]
    assert own and not any("[StatefulSet" in x for x in own)


def test_explanations_count_one_replica_in_the_singular() -> None:
    single = DATA / "ci" / "single.yaml"  # replicas: 1
    text = run_cli("check", "--explain", "--select", "ordered-ready-stall", str(single)).out
    assert "(1\n    replica here)" in text or "(1 replica here)" in text
    assert "1 replicas" not in text.replace("\n    ", " ")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", ""], "unknown format ''"),
        (["--format", "", "-o", "report.json"], "unknown format ''"),
        (["--select", ""], "argument --select: expected a rule id, got ''"),
        (["--disable", " , "], "argument --disable: expected a rule id, got ' , '"),
        (["--namespace", ""], "argument --namespace: expected a namespace"),
        (["--namespace", "Shop"], "got 'Shop'"),
        (["--namespace", "shop\n"], "got 'shop\\n'"),
        (["--namespace", "a" * 64], "at most 63 characters"),
        (["--exclude", ""], "argument --exclude: expected a glob, got ''"),
        (["--set", ""], "argument --set: expected KEY=VALUE (as helm --set takes it), got ''"),
        (["--set", "a"], "argument --set: expected KEY=VALUE (as helm --set takes it), got 'a'"),
        (["--set", "=1"], "got '=1'"),
        (["--api-versions", ""], "argument --api-versions: expected GROUP/VERSION"),
        (["--api-versions", "a b"], "got 'a b'"),
        (["--api-versions", "/"], "got '/'"),
        (["", "--"], "argument PATH: expected a file or directory"),
        (["--context", ""], "argument --context: expected a file or directory, got ''"),
        (["--baseline", "-"], "ssrisk check: error: argument --baseline: expected a file name"),
    ],
)
def test_an_empty_or_invalid_option_value_is_a_usage_error(
    args: list[str], message: str, tmp_path: Path
) -> None:
    """Each was taken as the option not given (``--format ''`` as text, ``--select ''`` as
    every rule, ``--namespace ''`` as the default namespace), or matched nothing, without a
    word: an empty ``$RULES`` in a CI script then checked something else than asked.
    ``--namespace`` takes what the configuration's ``namespace`` takes."""
    run = run_cli("check", *args, str(SINGLE), cwd=tmp_path)
    assert run.code == 2, run.out
    assert "error: " in run.err and message in run.err, run.err
    assert not list(tmp_path.iterdir())  # (nothing written)


@pytest.mark.parametrize(
    ("namespace", "taken"),
    [
        ("shop", True),
        ("a" * 63, True),
        ("a" * 64, False),
        ("Shop", False),
        ("-shop", False),
        ("shop-", False),
        ("shop\n", False),  # (the configuration took it: Python's $ matches before a newline)
        ("", False),
    ],
)
def test_the_namespace_option_takes_what_the_configuration_takes(
    namespace: str, taken: bool, tmp_path: Path
) -> None:
    manifest = tmp_path / "sts.yaml"
    manifest.write_text(SINGLE.read_text())
    by_option = run_cli("check", f"--namespace={namespace}", "sts.yaml", cwd=tmp_path)
    (tmp_path / ".ssrisk.yaml").write_text(f"namespace: {json.dumps(namespace)}\n")
    by_config = run_cli("check", "sts.yaml", cwd=tmp_path)
    assert (by_option.code != 2, by_config.code != 2) == (taken, taken), (
        by_option.err + by_config.err
    )
    if not taken and namespace:
        assert "starting and ending with a letter or digit" in by_option.err


@pytest.mark.parametrize("command", ["simulate", "fix"])
def test_an_empty_path_is_a_usage_error_of_every_command(command: str) -> None:
    run = run_cli(command, "")
    assert run.code == 2
    assert f"ssrisk {command}: error: argument PATH: expected a file or directory" in run.err


def test_an_empty_scenario_is_a_usage_error() -> None:
    run = run_cli("simulate", "--scenario", "", str(SINGLE))
    assert run.code == 2
    assert "ssrisk simulate: error: argument --scenario: expected a scenario name" in run.err
