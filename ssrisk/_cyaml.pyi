"""The compiled YAML reader (ssrisk/_cyaml.c); see :func:`ssrisk.yamlpos.load_documents`."""

from collections.abc import Callable
from typing import Any

def configure(posmap: type, poslist: type, array: type, bail: object) -> None:
    """The types to build (PosMap, PosList, array.array) and what ``plain`` returns to leave a
    text to the Python reader."""

def load(text: str, plain: Callable[[str], Any]) -> list[Any] | None:
    """The documents of ``text`` (``None`` for an empty one), or ``None`` when the text holds
    a case left to the Python reader."""

def plain_json(
    data: Any, max_nodes: int, max_depth: int, before: set[int] | None
) -> set[int] | None:
    """The ids of ``data``'s containers when it is plain JSON as
    :func:`ssrisk.validation.is_plain_json` walks it (``before``: ids that count as reached
    already), else ``None``."""
