"""Memory per input byte of every file ssrisk parses in its own process (manifests,
kustomizations, ``Chart.yaml``, values files, the configuration and the baseline): a large
generated input must cost ssrisk's process at most :data:`PER_BYTE` bytes of peak resident
memory per byte of input, over what a small input of the same kind costs.

Peak memory is measured in a child process that runs ssrisk and reports its own
``ru_maxrss`` (renderer children, bounded separately, do not count). Before the limits here a
26 MB kustomization took ssrisk's process to 2.5 GB (about 94 bytes per byte) and a
StatefulSet of small numbers in a flow sequence to about 170 bytes per byte.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from checkout import GOOD

#: Peak resident memory one byte of input may cost ssrisk's own process.
PER_BYTE = 30
#: Size of the large inputs (bytes); the small ones are a hundredth of it.
SIZE = 2_000_000

_CHILD = (
    "import resource, sys\n"
    "from ssrisk.cli import main\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit:\n"
    "    pass\n"
    "sys.stderr.write(f'\\nmaxrss_kb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n')\n"
)


def _peak(args: list[str], cwd: Path) -> tuple[int, str]:
    """ssrisk's peak resident memory (bytes) checking ``args`` in ``cwd``, and its output."""
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, "check", "--jobs", "1", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**os.environ, "SSRISK_NO_CACHE": "1"},
    )
    found = re.search(r"maxrss_kb=(\d+)", p.stderr)
    assert found is not None and "Traceback" not in p.stderr, p.stderr[-2000:]
    assert "usage:" not in p.stderr, p.stderr
    return int(found.group(1)) * 1024, p.stdout + p.stderr


def _repeat(head: str, line: Callable[[int], str], size: int) -> str:
    parts = [head]
    total, i = len(head), 0
    while total < size:
        parts.append(line(i))
        total += len(parts[-1])
        i += 1
    return "".join(parts)


_STS = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n  annotations:\n"


def _manifest_keys(size: int) -> dict[str, str]:
    return {"deploy/big.yaml": _repeat(_STS, lambda i: f"    a{i}: b\n", size)}


def _manifest_numbers(size: int) -> dict[str, str]:
    head = _STS.replace("  annotations:\n", "") + "spec:\n  replicas: 3\n  x: [1"
    return {"deploy/big.yaml": _repeat(head, lambda i: ",1", size) + "]\n"}


def _kustomization(size: int) -> dict[str, str]:
    return {
        "deploy/kustomization.yaml": _repeat(
            "resources: [db.yaml]\ncommonAnnotations:\n", lambda i: f"  a{i}: b\n", size
        ),
        "deploy/db.yaml": GOOD.read_text(),
    }


def _chart(size: int) -> dict[str, str]:
    return {
        "chart/Chart.yaml": _repeat(
            "apiVersion: v2\nname: db\nversion: 0.1.0\nannotations:\n",
            lambda i: f"  a{i}: b\n",
            size,
        ),
        "chart/templates/db.yaml": GOOD.read_text(),
    }


def _configuration(size: int) -> dict[str, str]:
    return {
        ".ssrisk.yaml": _repeat("exclude: [", lambda i: f"x{i},", size) + "x]\n",
        "deploy/db.yaml": GOOD.read_text(),
    }


def _baseline(size: int) -> dict[str, str]:
    return {
        ".ssrisk-baseline.json": _repeat(
            '{"ssrisk-baseline": 1, "findings": [{}', lambda i: ",{}", size
        )
        + "]}\n",
        "deploy/db.yaml": GOOD.read_text(),
    }


def _values(size: int) -> dict[str, str]:
    return {
        "values.yaml": _repeat("x:\n", lambda i: f"  a{i}: b\n", size),
        "chart/Chart.yaml": "apiVersion: v2\nname: db\nversion: 0.1.0\n",
        "chart/templates/db.yaml": GOOD.read_text(),
    }


#: case -> (its files, the options and paths to check, what the large run's output says)
CASES: dict[str, tuple[Callable[[int], dict[str, str]], list[str], str]] = {
    "manifest-keys": (_manifest_keys, ["deploy"], "good/db.yaml"),
    "manifest-numbers": (_manifest_numbers, ["deploy"], "good/db.yaml"),
    "kustomization": (_kustomization, ["deploy"], "larger than"),
    "chart": (_chart, ["chart"], "good/db.yaml"),
    "values": (_values, ["--values", "values.yaml", "chart"], "good/db.yaml"),
    "configuration": (_configuration, ["deploy"], "larger than"),
    "baseline": (_baseline, ["--baseline", ".ssrisk-baseline.json", "deploy"], "baseline"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_memory_per_input_byte(case: str, tmp_path: Path) -> None:
    make, args, said = CASES[case]
    peaks = []
    for size in (SIZE // 100, SIZE):
        repo = tmp_path / str(size)
        (repo / ".git").mkdir(parents=True)
        # the same valid StatefulSet in both runs, so that both load the same schemas
        files = {"good/db.yaml": GOOD.read_text(), **make(size)}
        for name, text in files.items():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text(text)
        big = max(len(t) for t in files.values())
        peak, output = _peak([*args, "good"], repo)
        peaks.append((peak, big))
    assert said in output, output[-2000:]
    (small, _), (large, big) = peaks
    assert (large - small) / big <= PER_BYTE, (
        f"{case}: {big} bytes of input cost {(large - small) / 2**20:.0f} MB more "
        f"({(large - small) / big:.0f} bytes per byte)"
    )
