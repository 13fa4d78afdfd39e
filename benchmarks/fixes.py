"""What verified fixes cost: ``ssrisk check --fixes`` against ``ssrisk check``, in CPU time,
paired in one run (the two alternate, each in a fresh process; medians of ``--repeat``).

The repository is :func:`bench.generate`'s synthetic one (each file a headless Service, a
StatefulSet and a Deployment: every StatefulSet has findings with fixes to verify), plus
``../shared/corpus`` when it exists. The target (issue "Fix it"): a check that asks for fixes
costs at most 2x a check; one that does not ask costs nothing more (no candidate is searched
without ``--fixes``: ``ssrisk.engine._fix`` runs only then).

Usage: ``.venv/bin/python benchmarks/fixes.py [--documents 10000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import files_for, generate, ssrisk

TARGET = 2.0


def ratio(path: Path, repeat: int) -> tuple[float, float]:
    """``(plain CPU s, --fixes CPU s)`` medians over ``path``, runs interleaved."""
    plain: list[float] = []
    fixes: list[float] = []
    for _ in range(repeat):
        plain.append(ssrisk("--format", "json", "--jobs", "1", str(path)).cpu_s)
        fixes.append(ssrisk("--fixes", "--format", "json", "--jobs", "1", str(path)).cpu_s)
    return statistics.median(plain), statistics.median(fixes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    targets: list[tuple[str, Path]] = []
    with tempfile.TemporaryDirectory(prefix="ssrisk-fixes-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        generate(repo, files_for(args.documents))
        targets.append((f"{args.documents} documents", repo))
        corpus = Path(__file__).resolve().parents[2] / "shared" / "corpus"
        if corpus.is_dir():
            targets.append(("../shared/corpus", corpus))
        failed = False
        for name, path in targets:
            plain, fixes = ratio(path, args.repeat)
            met = fixes / plain <= TARGET
            failed |= not met
            print(
                f"{name}: check {plain:.2f} s, check --fixes {fixes:.2f} s CPU: "
                f"{fixes / plain:.2f}x (target <= {TARGET:.0f}x: {'met' if met else 'NOT met'})"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
