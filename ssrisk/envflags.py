"""Reading ssrisk's on/off environment variables (``SSRISK_NO_CACHE``, ``SSRISK_DEBUG``,
``SSRISK_PURE_PYTHON_YAML``)."""

from __future__ import annotations

import os

#: Values that leave a flag off, compared without case or surrounding blanks (as most
#: tools read ``FOO=0``: ``SSRISK_NO_CACHE=0`` keeps the cache on).
OFF = frozenset({"", "0", "false", "no", "off"})


def env_flag(name: str) -> bool:
    """Whether environment variable ``name`` is set to a value that turns it on: anything
    but unset, empty, ``0``, ``false``, ``no`` or ``off`` (any case)."""
    return os.environ.get(name, "").strip().lower() not in OFF
