from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DATA = Path(__file__).parent / "data"


class Inputs:
    def __init__(self, docs: list[dict[str, Any]]) -> None:
        self.docs = docs

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if isinstance(d, dict) and d.get("kind") == kind]

    @property
    def sts(self) -> dict[str, Any]:
        return self.of("StatefulSet")[0]

    @property
    def pdbs(self) -> list[dict[str, Any]]:
        return self.of("PodDisruptionBudget")

    @property
    def storage_classes(self) -> list[dict[str, Any]]:
        return self.of("StorageClass")

    def kwargs(self) -> dict[str, Any]:
        return {"pdbs": self.pdbs, "storage_classes": self.storage_classes}


def load(*names: str) -> Inputs:
    docs: list[dict[str, Any]] = []
    for n in names:
        with open(DATA / n, encoding="utf-8") as fh:
            docs.extend(d for d in yaml.safe_load_all(fh) if d)
    return Inputs(docs)
