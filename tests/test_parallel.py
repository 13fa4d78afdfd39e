"""Large inputs are checked in worker processes; the output must not change at all."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from conftest import ROOT, run_process

from ssrisk.engine import PARALLEL_MIN_STATEFULSETS


def _generator():  # benchmarks/bench.py writes the synthetic repository
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks" / "bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench", module)
    spec.loader.exec_module(module)
    return module.generate


def test_parallel_and_single_process_output_are_identical(tmp_path: Path) -> None:
    files = PARALLEL_MIN_STATEFULSETS + 20
    _generator()(tmp_path, files)
    serial = run_process("check", "--jobs", "1", "--format", "json", str(tmp_path))
    parallel = run_process("check", "--jobs", "2", "--format", "json", str(tmp_path))
    assert serial.code == parallel.code == 1
    assert parallel.json()["summary"]["statefulsets"] == files
    assert parallel.out == serial.out
    text_serial = run_process("check", "--jobs", "1", str(tmp_path))
    text_parallel = run_process("check", "--jobs", "2", str(tmp_path))
    assert text_parallel.out == text_serial.out
