#!/usr/bin/env python3
"""The long fuzz run: the properties of tests/test_fuzz.py on fresh random data, for minutes.

    .venv/bin/python scripts/fuzz.py [--minutes 5] [--batch 200] [--seed N]

Runs batches of random cases until the time is up and prints how many cases each property
tried. A failure is shrunk by hypothesis to a minimal example, printed, and the script exits 1.
Not part of the default test run (tests/test_fuzz.py runs a few fixed examples).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0, help="time budget (default 5)")
    parser.add_argument("--batch", type=int, default=200, help="cases per property and batch")
    parser.add_argument("--seed", type=int, default=None, help="seed of the first batch")
    args = parser.parse_args(argv)

    import test_fuzz as f
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    tried: Counter[str] = Counter()
    common = settings(
        max_examples=args.batch,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )

    @common
    @given(f.cases())
    def check(case: Any) -> None:
        tried["check"] += 1
        f.check_manifest(*case)

    @common
    @given(f.cases(), f.profiles)
    def simulate(case: Any, profile: Any) -> None:
        tried["simulate"] += 1
        f.check_simulation(*case, profile)

    @common
    @given(
        f.statefulsets(),
        st.lists(f._EDIT, min_size=1, max_size=8),
        st.sampled_from(f.KUBE_VERSIONS),
    )
    def text_edits(sts: Any, edits: Any, kube_version: str) -> None:
        tried["text-edits"] += 1
        f.check_text_edits(sts, edits, kube_version)

    properties: dict[str, Callable[[], None]] = {
        "check": check,
        "simulate": simulate,
        "text-edits": text_edits,
    }

    rng = random.Random(args.seed)
    deadline = time.monotonic() + args.minutes * 60
    batches = 0
    while time.monotonic() < deadline:
        for name, prop in properties.items():
            batch_seed = rng.getrandbits(64)
            try:
                seed(batch_seed)(prop)()
            except Exception:
                traceback.print_exc()
                print(f"\nFAILED: property {name!r}, batch seed {batch_seed}", file=sys.stderr)
                print(f"cases tried: {dict(tried)}", file=sys.stderr)
                return 1
        batches += 1
        print(f"batch {batches}: {dict(tried)}", flush=True)
    total = sum(tried.values())
    print(f"fuzz run finished: {total} cases ({dict(tried)}) in {args.minutes} min, nothing found")
    return 0


if __name__ == "__main__":
    sys.exit(main())
