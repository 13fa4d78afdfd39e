"""The force delete an explanation gives is the command to paste: it names the pod's
namespace, or kubectl deletes a pod of that name in the current context's namespace."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT, run_cli

COMMAND = re.compile(r"kubectl delete pod (\S+)( -n \S+)? --grace-period=0 --force")


def _commands(path: Path) -> list[tuple[str, str]]:
    found = run_cli("check", "--format", "json", str(path)).json()["findings"]
    return [
        (m.group(1), m.group(2) or "")
        for f in found
        if f["rule"] == "no-automatic-failover"
        for m in [COMMAND.search(" ".join(f["explanation"].split()))]
        if m
    ]


def test_the_force_delete_names_the_namespace(tmp_path: Path) -> None:
    assert _commands(ROOT / "examples" / "postgres.yaml") == [("postgres-0", " -n shop")]
    text = (ROOT / "examples" / "postgres.yaml").read_text(encoding="utf-8")
    unset = tmp_path / "postgres.yaml"
    unset.write_text(re.sub(r"\n\s*namespace: shop\b", "", text), encoding="utf-8")
    assert _commands(unset) == [("postgres-0", "")]  # (left to the apply: not known)
