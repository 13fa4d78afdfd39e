"""Benchmark ssrisk against the practical floor for reading YAML in Python, target by target.

Generates deterministic synthetic manifest repositories (each file: a headless Service, a
StatefulSet with volumeClaimTemplates and probes, and an unrelated Deployment) of about 1,000,
10,000 and 50,000 documents, and measures, each in a fresh process and interleaved so that the
ratios compare runs made side by side (repeated; medians):

- the floor: PyYAML ``compose_all`` with the C loader over the same files (a child process,
  interpreter start included, like ssrisk's);
- ``ssrisk check`` in text, ``--format json`` and ``--format sarif`` with the default
  ``--jobs``, and ``--format json --jobs 1``;
- CPU time (user + system of the process and the workers it waited for, from ``wait4``), wall
  time, the peak resident memory of the largest process (``ru_maxrss`` of that run alone) and
  the peak proportional set size of the whole process tree (sampled every 20 ms: forked workers
  share pages with their parent, so their RSS would be counted twice);
- one file with one StatefulSet (wall time from process start): checked alone in each
  format, as the pre-commit hook checks it (``--changed``: with the other manifests of its
  directory for relations), and with ``--context`` over the 10,000-document repository;
- the same floor ratio over ``../shared/corpus`` when it exists.

Children run with the byte-code cache on (``PYTHONDONTWRITEBYTECODE`` removed), as an installed
ssrisk does, after a warm-up run that writes it, and with a cache directory of their own
(``XDG_CACHE_HOME``: schemas, validation verdicts and simulation results), which a warm-up
run over each repository fills as an earlier run of a user's would; the text runs are also
measured with ``SSRISK_NO_CACHE=1`` and printed beside the targets (what a first run costs).

It then prints every target of the performance work with its measured value and whether it is
met. ``--markdown`` also prints the table for the README.

Usage: ``.venv/bin/python benchmarks/bench.py [--sizes 1000,10000,50000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SSRISK = Path(sys.executable).with_name("ssrisk")

TEMPLATE = """\
apiVersion: v1
kind: Service
metadata:
  name: {name}
  namespace: {ns}
  labels:
    app: {name}
spec:
  clusterIP: None
  selector:
    app: {name}
  ports:
  - name: client
    port: {port}
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {name}
  namespace: {ns}
  labels:
    app: {name}
    team: team-{team}
spec:
  serviceName: {name}
  replicas: {replicas}
  podManagementPolicy: {policy}
  selector:
    matchLabels:
      app: {name}
  updateStrategy:
    type: RollingUpdate
  template:
    metadata:
      labels:
        app: {name}
        team: team-{team}
    spec:
      terminationGracePeriodSeconds: {grace}
      containers:
      - name: server
        image: example.org/{name}:{version}
        ports:
        - containerPort: {port}
          name: client
        readinessProbe:
          tcpSocket:
            port: {port}
          periodSeconds: 10
        livenessProbe:
          tcpSocket:
            port: {port}
          initialDelaySeconds: 30
        resources:
          requests:
            cpu: 500m
            memory: 1Gi
        volumeMounts:
        - name: data
          mountPath: /var/lib/{name}
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: ["{access}"]
      resources:
        requests:
          storage: {size}Gi
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}-api
  namespace: {ns}
spec:
  replicas: 2
  selector:
    matchLabels:
      app: {name}-api
  template:
    metadata:
      labels:
        app: {name}-api
    spec:
      containers:
      - name: api
        image: example.org/{name}-api:{version}
        env:
        - name: BACKEND
          value: {name}.{ns}.svc.cluster.local
        ports:
        - containerPort: 8080
"""


def generate(directory: Path, files: int, seed: int = 20261130) -> int:
    """Write ``files`` manifest files (3 documents each) under ``directory``; return the count
    of documents."""
    rng = random.Random(seed)
    for i in range(files):
        sub = directory / f"team-{i % 40:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        text = TEMPLATE.format(
            name=f"store-{i:05d}",
            ns=f"ns-{i % 25}",
            team=i % 40,
            port=rng.choice([5432, 6379, 9092, 2181, 27017]),
            replicas=rng.choice([1, 2, 3, 3, 5]),
            policy=rng.choice(["OrderedReady", "Parallel"]),
            grace=rng.choice([30, 60, 120, 600, 1800]),
            version=f"{rng.randint(1, 9)}.{rng.randint(0, 20)}",
            access=rng.choice(["ReadWriteOnce", "ReadWriteOnce", "ReadWriteMany"]),
            size=rng.choice([5, 10, 50, 100]),
        )
        (sub / f"store-{i:05d}.yaml").write_text(text)
    return files * 3


def files_for(documents: int) -> int:
    """Synthetic files (3 documents each) for about ``documents`` documents."""
    return -(-documents // 3)


# --- running one measured process -----------------------------------------------------------


@dataclass
class Run:
    """One measured process: wall and CPU seconds, memory in KiB, exit code."""

    wall_s: float
    cpu_s: float
    max_rss_kib: int  # the largest single process (ru_maxrss from wait4: this run only)
    tree_pss_kib: int  # sampled peak of the whole process tree (PSS, or RSS without it)
    code: int

    @property
    def peak_kib(self) -> int:
        return max(self.max_rss_kib, self.tree_pss_kib)


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return out


def _memory_kib(pid: int) -> int:
    """PSS of ``pid`` (RSS where smaps_rollup is missing), 0 when it is gone."""
    for path, key in ((f"/proc/{pid}/smaps_rollup", "Pss:"), (f"/proc/{pid}/status", "VmRSS:")):
        try:
            with open(path) as fh:
                for line in fh:
                    if line.startswith(key):
                        return int(line.split()[1])
        except OSError:
            continue
    return 0


def _tree_kib(pid: int) -> int:
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += _memory_kib(p)
        todo.extend(_children(p))
    return total


#: The children's environment: as a user's, with byte-code caching on (an installed ssrisk has
#: its modules compiled; without the cache every start compiles them again, about 90 ms).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(cmd: Sequence[str], *, check: bool = True, no_cache: bool = False) -> Run:
    """Run ``cmd`` (output discarded) and measure it; ``no_cache``: with ``SSRISK_NO_CACHE=1``
    (every schema read whole, every object validated, every behaviour simulated)."""
    env = {**ENV, "SSRISK_NO_CACHE": "1"} if no_cache else ENV
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), stdout=subprocess.DEVNULL, stderr=err, env=env)
        peak = [0]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.02):
                peak[0] = max(peak[0], _tree_kib(proc.pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if check and proc.returncode not in (0, 1):
            err.seek(0)
            sys.exit(f"{cmd[0]} failed ({proc.returncode}): {err.read().decode()[-2000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, peak[0], proc.returncode)


FLOOR = """
import sys, yaml
from pathlib import Path
loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
docs = 0
suffixes = (".yaml", ".yml", ".json")
for path in sorted(p for p in Path(sys.argv[1]).rglob("*") if p.suffix in suffixes):
    try:
        for _ in yaml.compose_all(path.read_text(encoding="utf-8"), Loader=loader):
            docs += 1
    except (yaml.YAMLError, UnicodeDecodeError):
        pass
print(docs)
"""


def floor(directory: Path) -> Run:
    """PyYAML's C composer over every manifest under ``directory``, in a fresh process."""
    return run([sys.executable, "-c", FLOOR, str(directory)])


def ssrisk(*args: str) -> Run:
    return run([str(SSRISK), "check", *args])


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


# --- the measurements ---------------------------------------------------------------------


@dataclass
class Size:
    """Paired runs over one synthetic repository."""

    documents: int
    floor: list[Run] = field(default_factory=list)
    json: list[Run] = field(default_factory=list)  # --format json, default --jobs
    text: list[Run] = field(default_factory=list)  # text, default --jobs
    sarif: list[Run] = field(default_factory=list)  # --format sarif, default --jobs
    json1: list[Run] = field(default_factory=list)  # --format json --jobs 1
    cold: list[Run] = field(default_factory=list)  # text, default --jobs, SSRISK_NO_CACHE=1

    def ratio(self, runs: list[Run], of: Callable[[Run], float] = lambda r: r.cpu_s) -> float:
        """Median over the repetitions of ``of(run) / of(floor run of the same repetition)``."""
        return median([of(r) / of(f) for r, f in zip(runs, self.floor, strict=True)])

    def wall_ratio(self, runs: list[Run], base: list[Run]) -> float:
        return median([r.wall_s / b.wall_s for r, b in zip(runs, base, strict=True)])

    def peak_kib(self, runs: list[Run] | None = None) -> int:
        """The highest peak of ``runs`` (default: of every ssrisk run)."""
        return max(r.peak_kib for r in (runs or [*self.json, *self.text, *self.sarif, *self.json1]))


def measure_size(directory: Path, documents: int, repeat: int) -> Size:
    size = Size(documents)
    ssrisk(str(directory))  # warm-up: the cache as a later run finds it
    for _ in range(repeat):  # interleaved, so every ratio compares neighbouring runs
        size.floor.append(floor(directory))
        size.json.append(ssrisk("--format", "json", str(directory)))
        size.text.append(ssrisk(str(directory)))
        size.sarif.append(ssrisk("--format", "sarif", str(directory)))
        size.json1.append(ssrisk("--format", "json", "--jobs", "1", str(directory)))
        size.cold.append(run([str(SSRISK), "check", str(directory)], no_cache=True))
    return size


@dataclass
class Target:
    name: str
    measured: str
    met: bool


def targets(
    sizes: dict[int, Size],
    one_file: dict[str, list[Run]],
    with_context: list[Run],
    context_docs: int,
    changed: list[Run],
    neighbours: int,
) -> list[Target]:
    out: list[Target] = []
    for docs in sorted(sizes):
        if docs < 10000:
            continue
        s = sizes[docs]
        for label, runs in (("text", s.text), ("json", s.json), ("sarif", s.sarif)):
            r = s.ratio(runs)
            out.append(
                Target(
                    f"{docs:,} documents, {label}: CPU <= 3x the C compose floor",
                    f"{r:.2f}x",
                    r <= 3,
                )
            )
    big = [d for d in sorted(sizes) if d >= 10000]
    if len(big) >= 2:
        a, b = sizes[big[0]], sizes[big[-1]]
        per = [median([r.cpu_s for r in s.json]) / s.documents for s in (a, b)]
        growth = per[1] / per[0]
        out.append(
            Target(
                f"linear: CPU per document at {big[-1]:,} vs {big[0]:,} (json) <= 1.2",
                f"{per[0] * 1e3:.3f} -> {per[1] * 1e3:.3f} ms ({growth:.2f}x)",
                growth <= 1.2,
            )
        )
    for label, runs in one_file.items():
        one_ms = median([r.wall_s for r in runs]) * 1000
        out.append(
            Target(
                f"one file, one StatefulSet, {label}: <= 150 ms wall from process start",
                f"{one_ms:.0f} ms (CPU {median([r.cpu_s for r in runs]) * 1000:.0f} ms)",
                one_ms <= 150,
            )
        )
    changed_ms = median([r.wall_s for r in changed]) * 1000
    out.append(
        Target(
            f"one file as pre-commit runs it (--changed, {neighbours} other files in its "
            "directory): <= 150 ms wall",
            f"{changed_ms:.0f} ms (CPU {median([r.cpu_s for r in changed]) * 1000:.0f} ms)",
            changed_ms <= 150,
        )
    )
    context_s = median([r.wall_s for r in with_context])
    out.append(
        Target(
            f"one file with --context over {context_docs:,} documents: <= 1 s",
            f"{context_s:.2f} s (CPU {median([r.cpu_s for r in with_context]):.2f} s)",
            context_s <= 1,
        )
    )
    top = sizes[max(sizes)]
    for label, runs in (
        ("text", top.text),
        ("json", top.json),
        ("sarif", top.sarif),
        ("json --jobs 1", top.json1),
    ):
        kib = top.peak_kib(runs)
        per_doc = kib * 1.024 / top.documents
        out.append(
            Target(
                f"peak memory at {top.documents:,} documents, {label}: <= 10 KB per document",
                f"{kib / 1024:.0f} MiB, {per_doc:.1f} KB per document",
                per_doc <= 10,
            )
        )
    for docs in sorted(sizes):
        s = sizes[docs]
        r = s.wall_ratio(s.json, s.json1)
        out.append(
            Target(
                f"{docs:,} documents: default --jobs wall <= --jobs 1 wall (5% noise allowed)",
                f"{r:.2f}x",
                r <= 1.05,
            )
        )
    cores = median([r.cpu_s / r.wall_s for r in top.json])
    out.append(
        Target(
            f"{top.documents:,} documents: default --jobs uses both cores (CPU/wall >= 1.5)",
            f"{cores:.2f}",
            cores >= 1.5 or (os.cpu_count() or 1) < 2,
        )
    )
    return out


def print_sizes(sizes: dict[int, Size]) -> None:
    labels = ("text", "json", "sarif", "json1")
    print(
        f"{'documents':>10} {'floor CPU':>10}"
        + "".join(f" {k + ' CPU':>10} {k + '/floor':>12}" for k in labels)
        + "".join(f" {'MiB ' + k:>10}" for k in labels)
        + f" {'wall json':>9} {'wall -j1':>9}"
    )
    for docs in sorted(sizes):
        s = sizes[docs]
        row = f"{docs:>10,} {median([r.cpu_s for r in s.floor]):>9.2f}s"
        for k in labels:
            runs = getattr(s, k)
            row += f" {median([r.cpu_s for r in runs]):>9.2f}s {s.ratio(runs):>11.2f}x"
        for k in labels:
            row += f" {s.peak_kib(getattr(s, k)) / 1024:>10.0f}"
        row += f" {median([r.wall_s for r in s.json]):>8.2f}s"
        row += f" {median([r.wall_s for r in s.json1]):>8.2f}s"
        print(row)


def _load() -> float:
    """The 1-minute load average (0 where unknown)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def _platform() -> str:
    return f"{os.cpu_count()} cores, Python {sys.version.split()[0]}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--sizes",
        default="1000,10000,50000",
        help="documents per synthetic repository, comma-separated (default 1000,10000,50000)",
    )
    ap.add_argument("--repeat", type=int, default=3, help="runs of each measurement (median)")
    ap.add_argument("--keep", type=Path, help="write the synthetic repositories here and keep them")
    ap.add_argument(
        "--markdown",
        action="store_true",
        help="also print the README's Performance table (paste it as printed)",
    )
    args = ap.parse_args()
    sizes_wanted = sorted({int(x) for x in args.sizes.split(",") if x.strip()})
    load_before = _load()
    print(
        f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; "
        f"repeat {args.repeat} (medians)"
    )
    work = args.keep or Path(tempfile.mkdtemp(prefix="ssrisk-bench-"))
    cache = Path(tempfile.mkdtemp(prefix="ssrisk-bench-cache-"))  # (private: mode 0700)
    ENV["XDG_CACHE_HOME"] = str(cache)
    ENV.pop("SSRISK_NO_CACHE", None)
    sizes: dict[int, Size] = {}
    try:
        run([str(SSRISK), "rules"])  # warm-up: writes the byte-code caches
        floor(work)
        for docs in sizes_wanted:
            directory = work / f"docs-{docs}"
            if not directory.is_dir():
                generate(directory, files_for(docs))
            sizes[docs] = measure_size(directory, files_for(docs) * 3, args.repeat)
            print(f"  measured {docs:,} documents", file=sys.stderr)
        ctx_docs = 10000 if 10000 in sizes else max(sizes)
        ctx_dir = work / f"docs-{ctx_docs}"
        one = sorted(ctx_dir.rglob("*.yaml"))[0]
        one_file: dict[str, list[Run]] = {"text": [], "json": [], "sarif": []}
        for _ in range(max(5, 3 * args.repeat)):  # interleaved
            for label, runs in one_file.items():
                runs.append(ssrisk("--format", label, str(one)))
        changed = [ssrisk("--changed", str(one)) for _ in range(max(5, 3 * args.repeat))]
        neighbours = len(list(one.parent.glob("*.yaml"))) - 1
        with_context = [ssrisk("--context", str(ctx_dir), str(one)) for _ in range(args.repeat)]
        print()
        print_sizes(sizes)
        corpus = ROOT.parent / "shared" / "corpus"
        corpus_ratio: float | None = None
        if corpus.is_dir():
            pairs = [(floor(corpus), ssrisk(str(corpus))) for _ in range(args.repeat)]
            corpus_ratio = median([s.cpu_s / f.cpu_s for f, s in pairs])
            print(f"shared corpus: text CPU {corpus_ratio:.2f}x the floor")
        print()
        rows = targets(sizes, one_file, with_context, files_for(ctx_docs) * 3, changed, neighbours)
        width = max(len(t.name) for t in rows)
        for t in rows:
            print(f"{t.name:<{width}}  {t.measured:>36}  {'met' if t.met else 'NOT MET'}")
        if args.markdown:
            print()
            print(
                f"`.venv/bin/python benchmarks/bench.py --markdown`, {_platform()}, "
                f"load average {load_before:.1f} before the run and {_load():.1f} after "
                f"(medians of {args.repeat}):"
            )
            print()
            print("| target | measured | |")
            print("| --- | --- | --- |")
            for t in rows:
                print(f"| {t.name} | {t.measured} | {'met' if t.met else 'not met'} |")
            if corpus_ratio is not None:
                print()
                print(f"`../shared/corpus` (text): {corpus_ratio:.2f}x the floor in CPU time.")
            print()
            print(cold_line(sizes))
        else:
            print(cold_line(sizes))
    finally:
        import shutil

        shutil.rmtree(cache, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def cold_line(sizes: dict[int, Size]) -> str:
    """The text ratios of the runs without a cache (the targets' runs find it warm)."""
    parts = [f"{docs:,} documents {sizes[docs].ratio(sizes[docs].cold):.2f}x" for docs in sizes]
    return (
        "Text with `SSRISK_NO_CACHE=1` (the runs above find the cache a run before them left): "
        + ", ".join(parts)
        + " the floor in CPU time."
    )


if __name__ == "__main__":
    main()
