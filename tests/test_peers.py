"""Peer fixtures (../shared/peers): each file alone must give the outcome its expect.json states.

Where ssrisk differs from the peer on purpose, the fixture's ``note`` says why (for example an
unset ``replicas`` is 1, as the API server defaults it, not "maybe many").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED, run_cli
from expectations import RULE_ISSUE, registered_rules


def _collect() -> list[Any]:
    peers = SHARED / "peers"
    if not peers.is_dir():
        return [pytest.param(None, None, marks=pytest.mark.skip(reason="../shared/peers absent"))]
    params = []
    for expect in sorted(peers.glob("*/*.expect.json")):
        manifest = expect.with_name(expect.name[: -len(".expect.json")])
        spec = json.loads(expect.read_text())
        check = spec.get("check") or {}
        for kind in ("must", "must_not"):
            for i, item in enumerate(check.get(kind, [])):
                marks = []
                if kind == "must" and item["rule"] not in registered_rules():
                    marks.append(
                        pytest.mark.xfail(
                            reason=f"rule {item['rule']} not built yet: {RULE_ISSUE}", strict=True
                        )
                    )
                pid = f"{manifest.parent.name}/{manifest.name}:{kind}[{i}]:{item['rule']}"
                params.append(
                    pytest.param(
                        manifest,
                        (kind, item, spec.get("kube_version", "1.34")),
                        id=pid,
                        marks=marks,
                    )
                )
    return params


@pytest.mark.parametrize(("manifest", "want"), _collect())
def test_peer_fixture(manifest: Path | None, want: tuple[str, dict[str, Any], str] | None) -> None:
    assert manifest is not None and want is not None
    kind, item, kube_version = want
    run = run_cli("check", "--format", "json", "--kube-version", kube_version, str(manifest))
    assert run.code in (0, 1), run.out + run.err
    found = [
        f
        for f in run.json()["findings"]
        if f["rule"] == item["rule"] and ("name" not in item or f["object"]["name"] == item["name"])
    ]
    if kind == "must":
        assert found, f"expected {item} in {manifest.name}"
    else:
        assert not found, f"unexpected {item['rule']} at line {found[0]['line']}"
