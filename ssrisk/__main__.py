"""The ``ssrisk`` command (and ``python -m ssrisk``): :func:`ssrisk.cli.main`, with the
cyclic garbage collector paused while it starts.

Importing the command line and registering the rules allocate some hundred thousand
long-lived objects (modules, classes, functions) and no garbage cycles, and the collector
rescanned them about a dozen times (6 to 8 ms of a one-file check, about 5%). Collection
resumes once the rules are registered, with what start-up made frozen
(:func:`ssrisk.cli.started`), or when the command ends.
"""

from __future__ import annotations

import gc
import sys


def main() -> int:
    """Run the command line on ``sys.argv``; returns the exit code."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        from . import cli

        return cli.main(collection_paused=collecting)
    finally:
        if collecting:
            gc.enable()


if __name__ == "__main__":
    sys.exit(main())
