"""Report writers hold little per finding: a chart of a few hundred bytes can render
thousands of StatefulSets, and a SARIF log built whole in memory took about 23 KB per
finding (each result with its explanation and simulated timelines; 150,000 small sets would
need about 23 GB). Each result is now made when it is written and dropped after.

Measured with tracemalloc while writing to a stream that keeps nothing: the peak grows by at
most :data:`BYTES_PER_FINDING` for each finding more (from 20 to 200 StatefulSets), and the
JSON report stays a small multiple of its input (see ``test_json_report_size``).
"""

from __future__ import annotations

import gc
import io
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from conftest import DATA

from ssrisk.engine import Report, check
from ssrisk.plugins import collect_reporters, collect_rules, plugin_manager
from ssrisk.settings import Settings

GOOD = (DATA / "robust" / "good.yaml").read_text()
#: What the peak may grow by for each finding more: the lines of the file it points into, its
#: fingerprint counters and the encoder's buffers (about 600 bytes measured; 23 KB before).
BYTES_PER_FINDING = 2048


class _Discard(io.TextIOBase):
    """A text stream that keeps nothing of what is written to it."""

    def write(self, text: str) -> int:
        return len(text)


def _report(tmp_path: Path, n: int) -> Report:
    path = tmp_path / f"s{n}.yaml"
    path.write_text("---\n".join(GOOD.replace("name: db\n", f"name: db{i}\n", 1) for i in range(n)))
    report = check([str(path)], collect_rules(plugin_manager()), Settings(jobs=1))
    assert report.statefulsets == n and len(report.findings) >= n
    return report


def _peak_while_writing(fmt: str, report: Report) -> int:
    """Peak bytes allocated (tracemalloc) while ``fmt`` writes ``report``, with the cyclic
    garbage collector paused: garbage cycles made per finding count as held (when the
    collector gets to them depends on everything else the process holds; Python's indenting
    JSON encoder made about 2 KB of them per SARIF result, which a long test run left
    uncollected)."""
    rules = {r.id: r for r in collect_rules(plugin_manager())}
    reporter = collect_reporters(plugin_manager())[fmt](rules=rules)
    reporter.write(report, _Discard())  # imports and caches (rule pages) outside the measure
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        reporter.write(report, _Discard())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gc.enable()


def per_finding(fmt: str, tmp_path: Path) -> float:
    """Bytes the peak grows by for each finding more, from 20 to 200 StatefulSets."""
    small, large = _report(tmp_path, 20), _report(tmp_path, 200)
    grown = _peak_while_writing(fmt, large) - _peak_while_writing(fmt, small)
    return grown / (len(large.findings) - len(small.findings))


@pytest.mark.parametrize("fmt", ["sarif", "json", "junit"])
def test_memory_per_finding_while_writing(fmt: str, tmp_path: Path) -> None:
    # measured in a process of its own, as ssrisk runs: what a long test session holds and
    # has cached changes what one more finding costs (2.2 KB here after the whole suite)
    here = Path(__file__).resolve().parent
    code = (
        "import sys; sys.path[:0] = sys.argv[1:3]; "
        "from pathlib import Path; import test_hostile_report_memory as t; "
        "print(t.per_finding(sys.argv[3], Path(sys.argv[4])))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(here.parent), str(here), fmt, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    grown = float(run.stdout.split()[-1])
    assert grown <= BYTES_PER_FINDING, f"{fmt}: {grown:.0f} bytes per finding"


def _sets_and_pdbs(tmp_path: Path, n: int) -> tuple[Report, int]:
    """N StatefulSets and N PodDisruptionBudgets that all select every set's pods, and the
    size of that input in bytes."""
    docs = []
    for i in range(n):
        docs.append(GOOD.replace("name: db\n", f"name: db{i}\n", 1))
        docs.append(
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
            f"metadata:\n  name: p{i}\nspec:\n  maxUnavailable: 1\n"
            "  selector:\n    matchLabels:\n      app: db\n"
        )
    path = tmp_path / f"nn{n}.yaml"
    path.write_text("---\n".join(docs))
    report = check([str(path)], collect_rules(plugin_manager()), Settings(jobs=1))
    assert report.statefulsets == n
    return report, path.stat().st_size


class _Count(io.TextIOBase):
    def __init__(self) -> None:
        self.chars = 0

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


def test_json_report_size(tmp_path: Path) -> None:
    """The JSON report of N sets x N PDBs grows linearly in N (no finding repeats what every
    PDB says), with the constant of its explanations: about 39 KB per StatefulSet here (8
    findings, 4 KB of explanation each, mostly the set's own simulated timelines), 85 times
    the 460 bytes of input that make one set and its PDB."""
    reporter = collect_reporters(plugin_manager())["json"]()
    per_set = {}
    for n in (30, 100):
        report, size = _sets_and_pdbs(tmp_path, n)
        sink = _Count()
        reporter.write(report, sink)
        per_set[n] = sink.chars / n
        assert sink.chars <= 100 * size, f"{n} sets: {sink.chars / size:.0f}x the input"
    assert per_set[100] <= 1.05 * per_set[30], per_set
