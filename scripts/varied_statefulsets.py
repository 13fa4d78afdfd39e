"""Write N StatefulSets that each make the simulator place many replicas under different hard
constraints (zone and hostname anti-affinity, hostname spread, hostPorts, resource requests),
so that no two share a simulation result: the input behind the simulator's work budget.

Usage: python scripts/varied_statefulsets.py OUT.yaml [--sets 300] [--max-replicas 250]
"""

from __future__ import annotations

import argparse
from pathlib import Path


def statefulset(i: int, max_replicas: int) -> str:
    """One StatefulSet; ``i`` picks its replicas and constraints."""
    replicas = max(2, max_replicas - (i * 37) % max_replicas)
    lines = [
        "apiVersion: apps/v1",
        "kind: StatefulSet",
        "metadata:",
        f"  name: set{i}",
        "spec:",
        f"  replicas: {replicas}",
        f"  serviceName: set{i}",
        "  selector:",
        f"    matchLabels: {{app: set{i}}}",
        "  template:",
        "    metadata:",
        f"      labels: {{app: set{i}}}",
        "    spec:",
    ]
    terms = []
    if i % 3 == 0:
        terms.append("topology.kubernetes.io/zone")
    if i % 4 == 1:
        terms.append("kubernetes.io/hostname")
    if terms:
        lines += ["      affinity:", "        podAntiAffinity:"]
        lines.append("          requiredDuringSchedulingIgnoredDuringExecution:")
        for key in terms:
            lines += [
                "          - labelSelector:",
                f"              matchLabels: {{app: set{i}}}",
                f"            topologyKey: {key}",
            ]
    if i % 2 == 0:
        lines += [
            "      topologySpreadConstraints:",
            f"      - maxSkew: {1 + i % 3}",
            "        topologyKey: kubernetes.io/hostname",
            "        whenUnsatisfiable: DoNotSchedule",
            "        labelSelector:",
            f"          matchLabels: {{app: set{i}}}",
        ]
    lines += ["      containers:", "      - name: c", "        image: registry.example/db:1"]
    if i % 5 in (0, 2):
        lines += [
            "        ports:",
            f"        - containerPort: {8000 + i}",
            f"          hostPort: {8000 + i}",
        ]
    if i % 7 in (1, 3, 5):
        lines += [
            "        resources:",
            "          requests:",
            f"            cpu: {250 + 10 * (i % 50)}m",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--sets", type=int, default=300)
    parser.add_argument("--max-replicas", type=int, default=250)
    args = parser.parse_args()
    docs = [statefulset(i, args.max_replicas) for i in range(args.sets)]
    args.out.write_text("---\n".join(docs))


if __name__ == "__main__":
    main()
