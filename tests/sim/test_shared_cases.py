"""The `simulate` expectations of ../shared/cases, called through the Python API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from ssrisk.embedded_sim import simulate

CASES = (Path(__file__).resolve().parents[2] / ".." / "shared" / "cases").resolve()
EXPECT = sorted(CASES.glob("*/expect.json")) if CASES.is_dir() else []


def _params() -> list[Any]:
    out = []
    for f in EXPECT:
        exp = json.loads(f.read_text())
        for s in exp.get("simulate", []):
            out.append(
                pytest.param(
                    f.parent,
                    exp.get("kube_version", "1.34"),
                    s,
                    id=f"{f.parent.name}-{s['scenario']}",
                )
            )
    return out


@pytest.mark.skipif(not EXPECT, reason="shared cases not available")
@pytest.mark.parametrize(("case", "version", "want"), _params())
def test_shared_case(case: Path, version: str, want: dict[str, Any]) -> None:
    docs = [d for p in sorted(case.glob("*.yaml")) for d in yaml.safe_load_all(p.read_text()) if d]
    sts = next(
        d for d in docs if d.get("kind") == "StatefulSet" and d["metadata"]["name"] == want["name"]
    )
    r = simulate(
        sts,
        want["scenario"],
        kube_version=version,
        pdbs=[d for d in docs if d.get("kind") == "PodDisruptionBudget"],
        storage_classes=[d for d in docs if d.get("kind") == "StorageClass"],
    ).to_dict()
    for k, v in want.items():
        if k in ("scenario", "name"):
            continue
        if isinstance(v, list):
            assert r[k] is not None and v[0] <= r[k] <= v[1], k
        else:
            assert r[k] == v, k
