"""Suppression with a reason: annotations on the StatefulSet or its pod template, and
``# ssrisk: ignore[rule]`` comments on the offending line or the line above it."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk.suppression import comment_on, comment_suppression

SUPPRESS = DATA / "ci" / "suppress"


def single_replica_by_file(*args: str) -> dict[str, dict[str, object]]:
    run = run_cli("check", "--format", "json", "--select", "single-replica", *args)
    return {Path(str(f["path"])).name: f for f in run.json()["findings"]}


def test_each_way_of_suppressing_is_honoured() -> None:
    found = single_replica_by_file(str(SUPPRESS))
    assert found["annotation.yaml"]["suppression"] == {
        "kind": "annotation",
        "reason": "a cache; losing it costs a warm-up",
    }
    assert found["template-annotation.yaml"]["suppression"] == {
        "kind": "annotation",
        "reason": None,
    }
    assert found["comment-same-line.yaml"]["suppression"] == {
        "kind": "comment",
        "reason": "development database, recreated nightly",
    }
    assert found["comment-line-above.yaml"]["suppression"] == {
        "kind": "comment",
        "reason": "one replica is enough for metrics",
    }
    for name in ("annotation.yaml", "template-annotation.yaml", "comment-line-above.yaml"):
        assert found[name]["suppressed"] is True
    # another rule's comment, and "#" inside a quoted value, suppress nothing
    assert "suppressed" not in found["comment-wrong-rule.yaml"]


def test_suppressed_findings_do_not_fail_the_run() -> None:
    suppressed_only = [
        str(SUPPRESS / n)
        for n in ("annotation.yaml", "comment-same-line.yaml", "comment-line-above.yaml")
    ]
    run = run_cli("check", "--select", "single-replica", *suppressed_only)
    assert run.code == 0, run.out
    assert run.out.splitlines()[-1].startswith("0 finding(s)")
    assert "3 suppressed" in run.out.splitlines()[-1]
    failing = run_cli(  # (its one pod has no port and no claim: a note, counted with info)
        "check", "--fail-on", "info", "--select", "single-replica",
        str(SUPPRESS / "comment-wrong-rule.yaml"),
    )  # fmt: skip
    assert failing.code == 1


def test_every_format_counts_the_same_reported_findings() -> None:
    """``summary.findings`` (JSON) is the number text and github state and the exit code
    follows: suppressed findings are counted apart (``suppressed``), as baselined ones."""
    args = ("--select", "single-replica", str(SUPPRESS))
    summary = run_cli("check", "--format", "json", *args).json()["summary"]
    text = run_cli("check", *args).out.splitlines()[-1]
    github = run_cli("check", "--format", "github", *args).out.splitlines()[-1]
    assert summary["suppressed"] == 4 and summary["findings"] > 0
    assert text.startswith(f"{summary['findings']} finding(s) ")
    assert f"; {summary['suppressed']} suppressed," in text
    assert github.startswith(f"ssrisk: {summary['findings']} finding(s), 4 suppressed")


def test_text_hides_suppressed_findings_unless_asked() -> None:
    path = str(SUPPRESS / "annotation.yaml")
    hidden = run_cli("check", "--select", "single-replica", path)
    assert "annotation.yaml:" not in hidden.out
    shown = run_cli("check", "--select", "single-replica", "--show-suppressed", path)
    assert "[suppressed: a cache; losing it costs a warm-up]" in shown.out
    assert shown.code == 0


def test_annotation_lists_several_rules() -> None:
    run = run_cli(
        "check", "--format", "json", "--select", "readiness-probe-missing",
        str(SUPPRESS / "annotation.yaml"), str(SUPPRESS / "template-annotation.yaml"),
    )  # fmt: skip
    by_name = {f["object"]["name"]: f for f in run.json()["findings"]}
    assert by_name["cache"]["suppressed"] is True  # listed after a comma
    assert "suppressed" not in by_name["queue"]  # its annotation names single-replica only


def test_suppression_survives_a_line_move(tmp_path: Path) -> None:
    text = (SUPPRESS / "comment-line-above.yaml").read_text(encoding="utf-8")
    moved = tmp_path / "moved.yaml"
    moved.write_text("# a new header line\n# and another\n" + text, encoding="utf-8")
    (f,) = single_replica_by_file(str(moved)).values()
    assert f["line"] == 13 and f["suppressed"] is True


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "  replicas: 1  # ssrisk: ignore[single-replica] dev only",
            ({"single-replica"}, "dev only"),
        ),
        ("# ssrisk: ignore[a, b]", ({"a", "b"}, None)),
        ("#ssrisk:ignore[a]   why  ", ({"a"}, "why")),
        ("  note: x#ssrisk: ignore[a]", None),
        ("  replicas: 1  # not an ignore", None),
    ],
)
def test_comment_syntax(line: str, expected: tuple[set[str], str | None] | None) -> None:
    parsed = comment_on(line)
    if expected is None:
        assert parsed is None
    else:
        assert parsed is not None
        assert (set(parsed[0]), parsed[1]) == expected


def test_comment_above_must_be_a_comment_line() -> None:
    lines = [
        "spec:",
        "  serviceName: x  # ssrisk: ignore[single-replica] belongs to serviceName",
        "  replicas: 1",
    ]
    assert comment_suppression(lines, 3, "single-replica") is None
    lines[1] = "  # ssrisk: ignore[single-replica] ok"
    found = comment_suppression(lines, 3, "single-replica")
    assert found is not None and found.reason == "ok"


# --- suppressions that do nothing ------------------------------------------------------

GATE_SUPPRESS = DATA / "gate" / "suppress"


def _warnings(*paths: Path) -> list[tuple[str, int, str]]:
    run = run_cli("check", "--format", "json", "--select", "single-replica", *map(str, paths))
    return [
        (Path(n["path"]).name, n["line"], n["message"])
        for n in run.json()["notices"]
        if n["level"] == "warning"
    ]


def test_unknown_rule_ids_in_suppressions_are_warnings() -> None:
    warned = _warnings(GATE_SUPPRESS / "plain" / "typos.yaml")
    assert warned == [
        ("typos.yaml", 7, "suppression names an unknown rule 'single-replcia' "
         "(did you mean 'single-replica'?)"),
        ("typos.yaml", 10, "suppression names an unknown rule 'no-such-rule' (see 'ssrisk rules')"),
    ]  # fmt: skip
    # and they suppress nothing: the run still fails on the single replica (a note here: the
    # cache declares no port and no claim)
    run = run_cli(
        "check", "--fail-on", "info", "--select", "single-replica",
        str(GATE_SUPPRESS / "plain" / "typos.yaml"),
    )  # fmt: skip
    assert run.code == 1


def test_unused_suppressions_are_warnings() -> None:
    warned = _warnings(GATE_SUPPRESS / "plain" / "unused.yaml")
    assert warned == [
        ("unused.yaml", 7, "unused suppression: StatefulSet default/queue has no single-replica "
         "finding to suppress"),
        ("unused.yaml", 10, "unused suppression: line 10 has no single-replica finding "
         "to suppress"),
    ]  # fmt: skip


def test_a_suppression_on_an_object_the_api_server_rejects_is_not_unused() -> None:
    """The rejected object was not checked, so its suppression suppressed nothing, but it is
    not stale either; the next object's stale comment still is."""
    warned = _warnings(GATE_SUPPRESS / "rejected" / "two.yaml")
    assert warned == [
        ("two.yaml", 29, "unused suppression: line 30 has no single-replica finding "
         "to suppress"),
    ]  # fmt: skip


def test_used_suppressions_in_files_charts_and_kustomizations_warn_nothing() -> None:
    from ssrisk.renderers.helm import describe_renderer

    paths = [GATE_SUPPRESS / "plain" / "used.yaml", GATE_SUPPRESS / "kz" / "overlay"]
    if describe_renderer():
        paths.append(GATE_SUPPRESS / "chart")
    run = run_cli("check", "--format", "json", "--select", "single-replica", *map(str, paths))
    report = run.json()
    assert [n for n in report["notices"] if n["level"] == "warning"] == []
    assert len(report["findings"]) == len(paths)
    assert all(f.get("suppressed") for f in report["findings"]), report["findings"]
    assert run.code == 0


def test_suppressions_of_rules_that_did_not_run_are_not_unused() -> None:
    # unused.yaml names single-replica; a run of another rule says nothing about it
    run = run_cli(
        "check", "--format", "json", "--select", "pdb-missing",
        str(GATE_SUPPRESS / "plain" / "unused.yaml"),
    )  # fmt: skip
    assert [n for n in run.json()["notices"] if "suppression" in n["message"]] == []


def test_a_suppression_of_a_folded_finding_is_used() -> None:
    # folded/: one replica with a PDB letting a drain take it; pdb-quorum-loss is folded into
    # single-replica (one cause, one finding), and the PDB's comment suppresses it there
    folded = GATE_SUPPRESS / "folded"
    run = run_cli("check", "--format", "json", str(folded))
    report = run.json()
    assert [n for n in report["notices"] if "suppression" in n["message"]] == []
    quorum = [f for f in report["findings"] if f["rule"] == "pdb-quorum-loss"]
    assert [(f["folded_into"], f["suppressed"]) for f in quorum] == [("single-replica", True)]
    # without single-replica the same finding is reported (not folded), suppressed as well
    alone = run_cli("check", "--format", "json", "--disable", "single-replica", str(folded))
    quorum = [f for f in alone.json()["findings"] if f["rule"] == "pdb-quorum-loss"]
    assert [(f.get("folded_into"), f["suppressed"]) for f in quorum] == [(None, True)]
    assert alone.code == 0


MISSPELT = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  annotations:
    ssrisk.io/ignored: single-replica
    ssrisk/ignore: single-replica
    ssrisk.io/system: postgresql
spec:
  serviceName: db
  # ssrisk:ignore single-replica
  replicas: 1  # SSRISK: IGNORE[single-replica]
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers:
        - name: db
          image: postgres:16  # ssrisk ignore[readiness-probe-missing] no probe yet
"""


def test_misspelt_suppressions_are_said_where_they_are(tmp_path: Path) -> None:
    manifest = tmp_path / "db.yaml"
    manifest.write_text(MISSPELT, encoding="utf-8")
    report = run_cli("check", "--format", "json", str(manifest)).json()
    said = {
        (n["line"], n["column"]): n["message"] for n in report["notices"] if n["level"] == "warning"
    }
    lines = MISSPELT.splitlines()
    # the annotations: at their keys, with the one they resemble (the catalog's is fine)
    assert "did you mean 'ssrisk.io/ignore'?" in said[(6, 5)]
    assert "did you mean 'ssrisk.io/ignore'?" in said[(7, 5)]
    # the comments: at their '#', with the form ssrisk reads
    assert said[(11, 3)].startswith("not a suppression ssrisk reads")
    assert (12, lines[11].index("#") + 1) in said  # in upper case too
    assert (21, lines[20].index("#") + 1) in said
    assert len(said) == 5
    # and they suppress nothing
    assert not any(f.get("suppressed") for f in report["findings"])
