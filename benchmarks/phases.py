"""Where the CPU time of ``ssrisk check --jobs 1`` goes, phase by phase, on the synthetic
repository of ``bench.py``.

The check runs in a child process with a CPU-time sampler (``setitimer(ITIMER_PROF)``: a
signal for every 4 ms of CPU time, user and system, of the process (the kernel's tick: a
shorter interval gives no more samples); the handler looks at the Python stack it
interrupted and counts the phase), ``--repeat`` times. Time in C code (libyaml, the JSON
encoder, schema validation in Rust) counts for the Python function that called it. The
floor (PyYAML's C ``compose_all`` over the same files, in a fresh process) is measured in the
same run, so each phase is also given as a multiple of the floor: the sum is the
``ssrisk / floor`` ratio that ``bench.py`` reports (about; the sampler adds a few percent).
As there, the runs use a cache directory of their own, filled by a run before them.

Usage: ``.venv/bin/python benchmarks/phases.py [--documents 10000] [--format text|json|sarif]
[--repeat 3] [--markdown]``
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # (the generator and the floor of the benchmark)

#: The phases, in the order a run goes through them (the README's table).
PHASES = (
    "start-up: interpreter, imports, configuration, rule registration",
    "loading: finding and reading files",
    "loading: splitting documents, sniffing kinds, objects",
    "loading: parsing and building positioned data (libyaml events, yamlpos)",
    "loading: syntax-only pass over other kinds",
    "validation (JSON schemas, jsonschema-rs)",
    "inventory and engine (indexes, contexts, folding)",
    "rules (manifest lookups, messages)",
    "simulation: keys and cache lookups per StatefulSet",
    "simulation: renaming cached results",
    "simulation: scenario runs (cache misses)",
    "explanations (built for the outputs that print them)",
    "suppressions",
    "output (formatting, writing)",
)

#: The child: sample the stack every millisecond of CPU time while ssrisk checks.
CHILD = r"""
import collections, json, os, signal, sys, traceback
# the installed ssrisk, never a source tree that happens to be the working directory ("-c"
# puts it first on the path)
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
counts = collections.Counter()

def phase(frame):
    names, files = [], []
    while frame is not None:
        names.append(frame.f_code.co_qualname)
        files.append(frame.f_code.co_filename)
        frame = frame.f_back
    names.reverse(); files.reverse()
    s = set(names)
    if "_find_and_load" in s:
        return 0
    if "_clean_text" in s or "_covering" in s:
        return 11
    if "validate_objects" in s:
        return 5
    if "load_inputs" in s:
        if any(f.endswith("yamlpos.py") for f in files):
            return 3
        if "_SyntaxChecker.check" in s:
            return 4
        if "read_text" in s or "discover" in s or "plan_inputs" in s:
            return 1
        return 2
    if "_evaluate_range" in s:
        i = names.index("_evaluate_range")
        sim = [n for n, f in zip(names[i:], files[i:]) if "embedded_sim" in f]
        if sim:
            if "run" in sim and any(f.endswith("scenarios.py") for f in files[i:]):
                return 10
            if "rename" in sim or any(n.startswith(("RenamedResult", "_renamed")) for n in sim):
                return 9
            return 8
        rule = any("/rules/" in f for f in files[i:])
        return 7 if rule else 6
    if "apply" in s and any(f.endswith("suppression.py") for f in files):
        return 12
    if "_write_outputs" in s:
        return 13
    if "check_loaded" in s:
        return 6
    return 0

def sample(signum, frame):
    counts[phase(frame)] += 1

signal.signal(signal.SIGPROF, sample)
signal.setitimer(signal.ITIMER_PROF, 0.004, 0.004)
code, error = None, None
try:
    from ssrisk.cli import main
    code = main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
except BaseException:
    error = traceback.format_exc()
finally:
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    with open(sys.argv[1], "w") as fh:
        json.dump({"counts": counts, "code": code, "error": error}, fh)
sys.exit(3 if error else code)
"""


def profile(directory: Path, fmt: str) -> dict[int, int]:
    """Samples per phase index of one ``ssrisk check --jobs 1`` over ``directory``."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = [sys.executable, "-c", CHILD, out.name, "check", "--jobs", "1"]
        bench.run([*args, "--format", fmt, str(directory)], check=False)
        text = Path(out.name).read_text()
        result = json.loads(text) if text else {"error": "the profiled child wrote nothing"}
        if result.get("error") or result.get("code") not in (0, 1):
            sys.exit(
                f"phases.py: the profiled 'ssrisk check' failed (exit {result.get('code')}): "
                f"{result.get('error') or 'see its output'}"
            )
        return {int(k): v for k, v in result["counts"].items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--documents", type=int, default=10000, help="synthetic documents")
    ap.add_argument("--format", default="text", choices=("text", "json", "sarif"))
    ap.add_argument("--repeat", type=int, default=3, help="profiled runs (samples summed)")
    ap.add_argument(
        "--keep", type=Path, help="write the synthetic repository below this directory and keep it"
    )
    ap.add_argument("--markdown", action="store_true", help="print the README table")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="ssrisk-phases-"))
    directory = work / f"docs-{args.documents}"
    if not directory.is_dir():
        bench.generate(directory, bench.files_for(args.documents))
    cache = Path(tempfile.mkdtemp(prefix="ssrisk-phases-cache-"))  # (as bench.py's runs)
    bench.ENV["XDG_CACHE_HOME"] = str(cache)
    bench.ENV.pop("SSRISK_NO_CACHE", None)
    bench.floor(directory)  # warm-ups: the byte-code cache, the file cache and ssrisk's
    bench.ssrisk("--jobs", "1", str(directory))
    floor = bench.floor(directory)
    samples: dict[int, int] = {}
    for _ in range(args.repeat):
        for phase, n in profile(directory, args.format).items():
            samples[phase] = samples.get(phase, 0) + n
    run = bench.ssrisk("--jobs", "1", "--format", args.format, str(directory))
    total = sum(samples.values())
    ratio = run.cpu_s / floor.cpu_s
    print(
        f"ssrisk check --jobs 1 --format {args.format} over {args.documents:,} documents: "
        f"{run.cpu_s:.2f} s CPU, {ratio:.2f}x the floor ({floor.cpu_s:.2f} s); "
        f"{total:,} samples of 4 ms CPU in {args.repeat} runs"
    )
    import shutil

    shutil.rmtree(cache, ignore_errors=True)
    rows = [(PHASES[i], samples.get(i, 0) / total) for i in range(len(PHASES))]
    if args.markdown:
        print("\n| phase | share of CPU | x the floor |\n| --- | --- | --- |")
        for name, share in rows:
            print(f"| {name} | {share:.0%} | {share * ratio:.2f} |")
    else:
        for name, share in rows:
            print(f"{share:>5.0%}  {share * ratio:>5.2f}x floor  {name}")


if __name__ == "__main__":
    main()
