"""What one pre-commit run costs: ``ssrisk check --changed FILE`` for each kind of changed file
of the test repository ``tests/data/gate/precommit`` (a Helm chart, a kustomize base with two
overlays, plain manifests), beside checking the one file without ``--changed`` and the former
hook's ``--context .``.

Every command runs ``--repeat`` times, interleaved (so load on the machine falls on all of
them alike); the table gives medians of wall time and their ratio to the plain check.

    .venv/bin/python benchmarks/precommit.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPO = ROOT / "tests" / "data" / "gate" / "precommit"

CASES = {
    "plain file, without --changed": ["plain/kv/kv.yaml"],
    "plain file": ["--changed", "plain/kv/kv.yaml"],
    "plain file, --context . (former hook)": ["--context", ".", "plain/kv/kv.yaml"],
    "chart template": ["--changed", "charts/db/templates/statefulset.yaml"],
    "kustomize patch": ["--changed", "deploy/overlays/staging/shutdown.yaml"],
    "PDB of a kustomize base": ["--changed", "deploy/base/pdb.yaml"],
    "StorageClass (the whole repository)": ["--changed", "storage-class.yaml"],
    "the whole repository, without --changed": ["."],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    exe = str(Path(sys.executable).with_name("ssrisk"))
    times: dict[str, list[float]] = {name: [] for name in CASES}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        shutil.copytree(REPO, repo)
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        for _ in range(args.repeat):
            for name, argv in CASES.items():
                start = time.perf_counter()
                subprocess.run(
                    [exe, "check", *argv],
                    cwd=repo,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                )
                times[name].append(time.perf_counter() - start)
    base = statistics.median(times["plain file, without --changed"])
    print("| changed file | median wall time | vs plain check |\n| --- | --- | --- |")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median * 1000:.0f} ms | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
