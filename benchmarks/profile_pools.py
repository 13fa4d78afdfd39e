"""Time of ``ssrisk check`` on profiles of many nodes (``ssrisk profile`` output), with the
pools of identical nodes folded (embedded_sim/nodes.py#fold_nodes) and, for comparison, with
every node simulated (``--unfolded``: the fold replaced by the identity in that process).

Each run is a fresh process with ``--jobs 1``. The input: four StatefulSets (3 replicas with a
hostname anti-affinity; 3 on a tainted data pool; 40 and 100 with a hostname spread of
minDomains 3) checked on the assumed cluster and on profiles of 30, 300 and 3,000 nodes (3
zones, a general pool of 4/5 of the nodes and a tainted data pool). Quote the figures as ratios
to the assumed cluster of the same run.

Usage: ``.venv/bin/python benchmarks/profile_pools.py [--unfolded] [--nodes 30,300,3000]``
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
SETS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: {name}}}
spec:
  serviceName: {name}
  replicas: {replicas}
  podManagementPolicy: Parallel
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec:
{placement}
      containers:
      - name: c
        image: example.org/app:1.0
        resources: {{requests: {{cpu: 500m, memory: 1Gi}}}}
"""
ANTI = """\
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {{matchLabels: {{app: {name}}}}}"""
DATA = (
    """\
      nodeSelector: {{pool: data}}
      tolerations: [{{key: dedicated, operator: Equal, value: data, effect: NoSchedule}}]
"""
    + ANTI
)
SPREAD = """\
      topologySpreadConstraints:
      - maxSkew: 1
        minDomains: 3
        topologyKey: kubernetes.io/hostname
        whenUnsatisfiable: DoNotSchedule
        labelSelector: {{matchLabels: {{app: {name}}}}}"""
_FOLDED = "import sys; from ssrisk.cli import main; sys.exit(main(sys.argv[1:]))"
_UNFOLDED = (
    "import sys; from ssrisk.embedded_sim import simulation; "
    "simulation.fold_nodes = lambda built, keep, named=(): (built, []); "
    "from ssrisk.cli import main; sys.exit(main(sys.argv[1:]))"
)


def nodes_json(count: int) -> str:
    """``kubectl get nodes -o json`` of ``count`` nodes in 3 zones (1/5 tainted data)."""
    items = []
    for i in range(count):
        zone = f"zone-{'abc'[i % 3]}"
        data = i % 5 == 0
        items.append(
            {
                "kind": "Node",
                "metadata": {
                    "name": f"node-{i}",
                    "labels": {
                        "kubernetes.io/hostname": f"node-{i}",
                        "topology.kubernetes.io/zone": zone,
                        "pool": "data" if data else "general",
                    },
                },
                "spec": {"taints": [{"key": "dedicated", "value": "data", "effect": "NoSchedule"}]}
                if data
                else {},
                "status": {
                    "allocatable": {"cpu": "7910m", "memory": "28Gi", "pods": "110"},
                    "nodeInfo": {"kubeletVersion": "v1.33.2"},
                },
            }
        )
    return json.dumps({"kind": "List", "items": items})


def write_sets(folder: Path) -> None:
    for name, replicas, placement in (
        ("anti", 3, ANTI),
        ("data", 3, DATA),
        ("spread40", 40, SPREAD),
        ("spread100", 100, SPREAD),
    ):
        text = SETS.format(name=name, replicas=replicas, placement=placement.format(name=name))
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")


def measure(folder: Path, unfolded: bool) -> tuple[float, float, int]:
    """(CPU s, wall s, StatefulSets not simulated) of one check of ``folder``."""
    code = _UNFOLDED if unfolded else _FOLDED
    args = [sys.executable, "-c", code, "check", "--jobs", "1", "--format", "json", str(folder)]
    start, before = time.perf_counter(), os.times()
    run = subprocess.run(args, capture_output=True, text=True, cwd=folder, check=False)
    after = os.times()
    wall = time.perf_counter() - start
    cpu = after.children_user - before.children_user + after.children_system
    cpu -= before.children_system
    notices = json.loads(run.stdout).get("notices", []) if run.stdout else []
    return cpu, wall, sum(1 for n in notices if "not simulated" in n.get("message", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--unfolded", action="store_true", help="also run without the fold")
    parser.add_argument("--nodes", default="30,300,3000", help="profile sizes, comma-separated")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        assumed = base / "assumed"
        assumed.mkdir()
        write_sets(assumed)
        cpu0, wall0, skipped0 = measure(assumed, False)
        print(f"{'cluster':<28} {'CPU s':>7} {'wall s':>7} {'x assumed':>9} {'not sim.':>8}")
        print(f"{'assumed (3 zones x 2)':<28} {cpu0:7.2f} {wall0:7.2f} {1.0:9.1f} {skipped0:8}")
        for count in (int(c) for c in args.nodes.split(",")):
            folder = base / f"n{count}"
            folder.mkdir()
            write_sets(folder)
            (folder / "nodes.json").write_text(nodes_json(count), encoding="utf-8")
            profile = subprocess.run(
                [sys.executable, "-m", "ssrisk", "profile", "nodes.json"],
                capture_output=True,
                text=True,
                cwd=folder,
                check=True,
            ).stdout
            (folder / ".ssrisk.yaml").write_text(profile, encoding="utf-8")
            (folder / "nodes.json").unlink()
            runs = [("folded", False)] + ([("every node", True)] if args.unfolded else [])
            for label, unfolded in runs:
                cpu, wall, skipped = measure(folder, unfolded)
                name = f"{count} nodes, {label}"
                print(f"{name:<28} {cpu:7.2f} {wall:7.2f} {cpu / cpu0:9.1f} {skipped:8}")


if __name__ == "__main__":
    main()
