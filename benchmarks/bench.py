"""Benchmark ssrisk against the practical floor for reading YAML in Python.

Generates a deterministic synthetic manifest repository (each file: a headless Service, a
StatefulSet with volumeClaimTemplates and probes, and an unrelated Deployment), then measures
side by side, in the same run:

- ssrisk end to end (a fresh process: ``ssrisk check --format json``): wall time and peak
  memory (RSS of the process tree);
- the floor: PyYAML ``compose_all`` with ``CSafeLoader`` over the same files;
- their ratio, documents per second, and the latency of one file with one StatefulSet as
  pre-commit runs it (process start included, best of 5);
- the same over ``../shared/corpus`` when it exists.

Usage: ``.venv/bin/python benchmarks/bench.py [--files 3334] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

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


def yaml_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


def parse_floor(directory: Path) -> tuple[float, int]:
    """Seconds PyYAML's C composer needs for every document under ``directory``."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs = 0
    start = time.perf_counter()
    for path in yaml_files(directory):
        try:
            for _ in yaml.compose_all(path.read_text(encoding="utf-8"), Loader=loader):
                docs += 1
        except (yaml.YAMLError, UnicodeDecodeError):
            pass
    return time.perf_counter() - start, docs


def run_ssrisk(*args: str) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB of the process tree, and the exit code of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([str(SSRISK), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 1):
        sys.exit(f"ssrisk failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    return wall, max(peak, before) / 1024, proc.returncode


def measure(label: str, directory: Path, docs_hint: int | None = None) -> None:
    floor, docs = parse_floor(directory)
    wall, peak_mb, _ = run_ssrisk("check", "--format", "json", str(directory))
    print(f"{label}:")
    print(f"  documents            {docs_hint or docs}")
    print(f"  parse floor (C)      {floor:8.2f} s")
    print(f"  ssrisk end to end    {wall:8.2f} s   ({wall / floor:.2f}x the floor)")
    print(f"  ssrisk peak memory   {peak_mb:8.0f} MB")
    print(f"  documents per second {docs / wall:8.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=3334, help="synthetic files (3 documents each)")
    ap.add_argument("--keep", type=Path, help="write the synthetic repository here and keep it")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    work = args.keep or Path(tempfile.mkdtemp(prefix="ssrisk-bench-"))
    try:
        docs = generate(work, args.files)
        measure(f"synthetic repository ({args.files} files)", work, docs)
        one = yaml_files(work)[0]
        best = min(run_ssrisk("check", str(one))[0] for _ in range(5))
        print(f"  single file latency  {best * 1000:8.0f} ms (one StatefulSet, best of 5)")
        corpus = ROOT.parent / "shared" / "corpus"
        if corpus.is_dir():
            measure("shared corpus", corpus)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
