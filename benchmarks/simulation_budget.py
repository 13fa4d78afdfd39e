"""Time of the simulator's work budget (embedded_sim/budget.py, ssrisk/engine.py
``simulation_steps``) on the inputs that used to run for minutes.

Checks, each in a fresh process with ``--jobs 1`` and ``--format json``:

- ``tests/data/hostile/simulation/250-one-per-node.yaml``: one StatefulSet of 250 replicas that
  a zone anti-affinity, a hostname spread and a hostPort keep one per node (took 6-19 s);
- 300 varied StatefulSets written by ``scripts/varied_statefulsets.py`` (took over 15 minutes),
- sets of 250 replicas whose every filter pass does more work: one anti-affinity term (the
  baseline), 200 anti-affinity terms, 60 topology spread constraints, 300 node affinity
  requirements (each took 9 to 20 times as long per counted step, up to 2 minutes a set,
  before ``budget.filter_pass_steps`` charged for them),

and prints the CPU and wall time of each, the StatefulSets reported "not simulated", and the
same with the budget lifted (``--unbounded``: slow, for comparison). CPU figures are best
compared as ratios to the one-term set of the same run.

Usage: ``.venv/bin/python benchmarks/simulation_budget.py [--unbounded]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIMULATION = ROOT / "tests" / "data" / "hostile" / "simulation"
WIDE = SIMULATION / "250-one-per-node.yaml"
LONG_PASSES = (
    ("250, one term", SIMULATION / "250-one-term.yaml"),
    ("250, 200 anti-affinity", SIMULATION / "250-200-anti-affinity-terms.yaml"),
    ("250, 60 spread", SIMULATION / "250-60-spread-constraints.yaml"),
    ("250, 300 node affinity", SIMULATION / "250-300-node-affinity-requirements.yaml"),
)
_UNBOUNDED = (
    "import sys; from ssrisk import engine; "
    "engine.SIMULATION_STEPS_PER_SET = engine.SIMULATION_STEPS_PER_RUN = 10**15; "
    "from ssrisk.cli import main; sys.exit(main(sys.argv[1:]))"
)
_BOUNDED = "import sys; from ssrisk.cli import main; sys.exit(main(sys.argv[1:]))"


def measure(path: Path, unbounded: bool) -> tuple[float, float, int, int]:
    """(CPU s, wall s, StatefulSets, StatefulSets not simulated in full) of one check."""
    code = _UNBOUNDED if unbounded else _BOUNDED
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "check", "--jobs", "1", "--format", "json", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    out = proc.stdout.read() if proc.stdout else b""
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    report = json.loads(out)
    stopped = sum(1 for n in report["notices"] if "not simulated in full" in n["message"])
    return usage.ru_utime + usage.ru_stime, wall, report["summary"]["statefulsets"], stopped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unbounded", action="store_true", help="also run without a budget")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "scripts"))
    import varied_statefulsets

    with tempfile.TemporaryDirectory() as tmp:
        varied = Path(tmp) / "varied.yaml"
        varied.write_text("---\n".join(varied_statefulsets.statefulset(i, 250) for i in range(300)))
        inputs = (("one set, 250 replicas", WIDE), ("300 varied sets", varied), *LONG_PASSES)
        for name, path in inputs:
            for unbounded in (False, True) if args.unbounded else (False,):
                cpu, wall, sets, stopped = measure(path, unbounded)
                budget = "no budget" if unbounded else "budget"
                print(
                    f"{name:24} {budget:9}  cpu {cpu:7.1f} s  wall {wall:7.1f} s  "
                    f"{stopped} of {sets} StatefulSet(s) not simulated in full"
                )


if __name__ == "__main__":
    main()
