"""What a one-file run (a pre-commit hook) does not load: every module costs start-up time."""

from __future__ import annotations

import subprocess
import sys

from conftest import DATA

SCRIPT = """
import sys
from ssrisk.cli import main
code = main(["check", sys.argv[1]])
loaded = [m for m in ("multiprocessing", "importlib.metadata") if m in sys.modules]
print("exit", code, "loaded", *loaded)
"""


def test_a_one_file_check_loads_no_worker_pool_and_no_distribution_metadata() -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(DATA / "perf" / "context" / "deploy" / "kv.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    last = run.stdout.strip().splitlines()[-1]
    assert last == "exit 0 loaded", (last, run.stderr[-2000:])
