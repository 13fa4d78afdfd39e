#!/usr/bin/env python3
"""The long mutation fuzz run of ``ssrisk check`` (tests/hostile/mutations.py).

    .venv/bin/python scripts/fuzz_mutations.py [--cases 20000] [--seed 1] [--fresh-every 100]

Mutates the test data's manifests (and ../shared's corpus when present) at the byte level and
at the level of their YAML structure, runs each case through the command line twice (and every
``--fresh-every``-th in a fresh process with another hash seed) and checks the invariants: exit
code 0, 1 or 2, no traceback or internal error, output that parses for its format, the same
output every time. Prints a summary; exits 1 when any case broke an invariant (each one is kept
in --keep, default fuzz-failures/, with how it was made).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "hostile"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fresh-every", type=int, default=100)
    parser.add_argument("--keep", default="fuzz-failures")
    args = parser.parse_args(argv)

    from mutations import Fuzzer, Tally, check_case

    fuzzer = Fuzzer(args.seed)
    tally = Tally()
    started = time.monotonic()
    keep = Path(args.keep)
    with tempfile.TemporaryDirectory(prefix="ssrisk-fuzz-") as tmp:
        for i, case in enumerate(fuzzer.cases(args.cases)):
            fresh = args.fresh_every > 0 and i % args.fresh_every == 0
            broken = check_case(case, Path(tmp), tally, fresh_process=fresh, hash_seed=i)
            if broken:
                keep.mkdir(exist_ok=True)
                (keep / case.name).write_bytes(case.data)
                (keep / f"{case.name}.txt").write_text(
                    f"format: {case.fmt}\nmade by: {', '.join(case.how)}\n"
                    + "\n".join(broken)
                    + "\n"
                )
                print(f"case {i} ({case.fmt}; {', '.join(case.how)}): {broken}", flush=True)
            (Path(tmp) / case.name).unlink(missing_ok=True)
            if (i + 1) % 1000 == 0:
                print(
                    f"{i + 1} cases, {len(tally.failures)} broke an invariant, "
                    f"{time.monotonic() - started:.0f} s",
                    flush=True,
                )
    codes = ", ".join(f"{code}: {n}" for code, n in sorted(tally.exit_codes.items()))
    print(
        f"fuzz run: {tally.cases} mutated manifests (seed {args.seed}), each run twice; "
        f"{tally.subprocess_checks} also in a fresh process; exit codes {{{codes}}}; "
        f"{len(tally.failures)} broke an invariant; {time.monotonic() - started:.0f} s"
    )
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
