"""Report writers hold little per finding: a chart of a few hundred bytes can render
thousands of StatefulSets, and a SARIF log built whole in memory took about 23 KB per
finding (each result with its explanation and simulated timelines; 150,000 small sets would
need about 23 GB). Each result is now made when it is written and dropped after.

Measured with tracemalloc while writing to a stream that keeps nothing: the peak grows by at
most :data:`BYTES_PER_FINDING` for each finding more (from 20 to 200 StatefulSets), and the
JSON report stays a small multiple of its input (see ``test_json_report_size``).
"""

from __future__ import annotations

import io
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
    """Peak bytes allocated (tracemalloc) while ``fmt`` writes ``report``."""
    rules = {r.id: r for r in collect_rules(plugin_manager())}
    reporter = collect_reporters(plugin_manager())[fmt](rules=rules)
    reporter.write(report, _Discard())  # imports and caches (rule pages) outside the measure
    tracemalloc.start()
    try:
        reporter.write(report, _Discard())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("fmt", ["sarif", "json", "junit"])
def test_memory_per_finding_while_writing(fmt: str, tmp_path: Path) -> None:
    small, large = _report(tmp_path, 20), _report(tmp_path, 200)
    grown = _peak_while_writing(fmt, large) - _peak_while_writing(fmt, small)
    per_finding = grown / (len(large.findings) - len(small.findings))
    assert per_finding <= BYTES_PER_FINDING, f"{fmt}: {per_finding:.0f} bytes per finding"
