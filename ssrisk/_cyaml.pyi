"""The compiled YAML reader (ssrisk/_cyaml.c); see :func:`ssrisk.yamlpos.load_documents`."""

from collections.abc import Callable
from typing import Any

def configure(posmap: type, poslist: type, array: type, bail: object) -> None:
    """The types to build (PosMap, PosList, array.array) and what ``plain`` returns to leave a
    text to the Python reader."""

def load(text: str, plain: Callable[[str], Any]) -> list[Any] | None:
    """The documents of ``text`` (``None`` for an empty one), or ``None`` when the text holds
    a case left to the Python reader."""
