"""``--format markdown`` (the job summary) and the simulated timeline drawn as a Mermaid gantt
(:mod:`ssrisk.gantt`), also in ``ssrisk simulate --format markdown``."""

from __future__ import annotations

import re

from conftest import ROOT, run_cli

from ssrisk.reporters.markdown import md

POSTGRES = str(ROOT / "examples" / "postgres.yaml")
KAFKA = str(ROOT / "examples" / "kafka.yaml")
BAR = re.compile(r"^    (.+?) :(done|active|crit), (\d+), (\d+)$")
#: Bars are in milliseconds after the fault (dateFormat x).
MS = 1000


def _bars(text: str) -> dict[str, list[tuple[str, str, int, int]]]:
    """Each section's bars ``(state, tag, start, end)`` of the first gantt in ``text``."""
    block = text.split("```mermaid\n", 1)[1].split("```", 1)[0]
    out: dict[str, list[tuple[str, str, int, int]]] = {}
    section = ""
    for line in block.splitlines():
        if line.startswith("    section "):
            section = line[len("    section ") :]
            out[section] = []
        m = BAR.match(line)
        if m:
            out[section].append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4))))
    return out


def _event_time(timeline: list[dict[str, object]], pod: str, kind: str) -> float:
    return next(float(str(e["t_s"])) for e in timeline if e["pod"] == pod and e["kind"] == kind)


def test_the_gantt_draws_the_simulated_states_of_each_ordinal() -> None:
    result = run_cli("simulate", "--format", "json", POSTGRES).json()["results"][0]
    timeline = result["timeline"]
    drawn = run_cli("simulate", "--format", "markdown", POSTGRES)
    assert drawn.code == 0
    bars = _bars(drawn.out)
    assert list(bars) == ["postgres-0"]
    (available, not_ready, stuck) = bars["postgres-0"]
    # available until the node lifecycle controller marks the pod not Ready, ...
    t_not_ready = round(_event_time(timeline, "postgres-0", "pod-not-ready") * MS)
    assert available == ("available", "done", 0, t_not_ready)
    # ... which lasts until the taint manager's eviction leaves it Terminating for good
    t_stuck = round(_event_time(timeline, "postgres-0", "pod-terminating-stuck") * MS)
    assert not_ready == ("not Ready", "active", t_not_ready, t_stuck)
    assert result["recovered"] is False
    assert stuck[:3] == ("stuck Terminating (not resolved)", "crit", t_stuck)
    assert stuck[3] > t_stuck  # drawn past the end: it does not end


def test_pods_that_stay_available_are_drawn_too() -> None:
    drawn = run_cli("simulate", "--format", "markdown", "--scenario", "node-drain", KAFKA)
    bars = _bars(drawn.out)
    assert list(bars) == ["kafka-0", "kafka-1", "kafka-2"]
    assert [b[0] for b in bars["kafka-1"]] == ["available"]
    assert bars["kafka-0"][-1][0] == "starting"  # back: its last state ends at Ready


def test_the_job_summary_lists_the_findings_and_draws_the_worst() -> None:
    report = run_cli("check", "--format", "json", "examples/", cwd=ROOT).json()
    run = run_cli("check", "--format", "markdown", "examples/", cwd=ROOT)
    assert run.code == 1
    summary = report["summary"]
    assert run.out.startswith(
        f"## ssrisk: {summary['findings']} finding(s) in {summary['statefulsets']} StatefulSet(s)"
    )
    rows = [ln for ln in run.out.splitlines() if re.match(r"^\| (error|warning|info) \|", ln)]
    assert len(rows) == summary["findings"]
    errors = [
        f for f in report["findings"] if f["severity"] == "error" and not f.get("folded_into")
    ]
    (worst,) = errors
    assert f"### Worst failover: `{worst['rule']}` on StatefulSet shop/postgres" in run.out
    assert list(_bars(run.out)) == ["postgres-0"]


def test_repository_text_cannot_become_markdown() -> None:
    hostile = "<img src=x onerror=alert(1)> @octocat #1 [x](http://evil) **b** `c` | d"
    shown = re.sub(r"&#\d+;", "", md(hostile))  # (what is left once references are read)
    for raw in ("<", ">", "@", "#1", "[", "](", "http://", "**", "`", "|"):
        assert raw not in shown, raw
    assert "\n" not in md("a\nb\r\nc") and "\r" not in md("a\nb\r\nc")
