"""Exit codes of the ``ssrisk`` command (a documented contract)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    #: No finding at or above the failure threshold, and every input was read.
    OK = 0
    #: At least one finding at or above the failure threshold (``--fail-on``, default error).
    FINDINGS = 1
    #: Usage or configuration error, an input that could not be read or parsed, or an
    #: internal error. Every other input is still checked and reported.
    ERROR = 2
