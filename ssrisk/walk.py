"""One directory walk for every walker of ssrisk, iterative (an explicit stack, not one Python
frame per level): a directory nested deeper than the recursion limit (git stores one of 1,100
levels fine) cannot crash a walk.

:func:`walk` yields what :func:`os.walk` yields top-down, in the same order: ``(directory,
subdirectories, other names)`` for a directory before those below it, descending into the
subdirectories left in the list the caller may edit (to prune and order them). Entries are
sorted into directories and others as ``os.walk`` sorts them (a link to a directory is a
directory); a directory that cannot be listed is given to ``onerror`` and left out.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator

#: Directory levels below the walked directory that are walked: far deeper than any real
#: repository, and within what a path can spell (PATH_MAX, 4096 bytes, on Linux).
MAX_WALK_DEPTH = 1_000


class TooDeep(OSError):
    """A directory nested more than the walk's depth limit below its top: not listed."""

    def __init__(self, path: str, limit: int) -> None:
        super().__init__(
            errno.ELOOP, f"more than {limit} directory levels deep; not walked further", path
        )


def walk(
    top: str,
    *,
    followlinks: bool = False,
    onerror: Callable[[OSError], None] | None = None,
    max_depth: int | None = MAX_WALK_DEPTH,
    links_are_names: bool = False,
) -> Iterator[tuple[str, list[str], list[str]]]:
    """Walk ``top`` top-down like ``os.walk(top, followlinks=..., onerror=...)`` (see the
    module), without recursion.

    A directory ``max_depth`` levels below ``top`` is yielded, but its subdirectories are
    not entered: ``onerror`` gets one :class:`TooDeep` naming it (``None``: no limit).
    With ``followlinks``, links to directories are entered; the caller ends link loops (by
    pruning directories it has seen). With ``links_are_names``, every symbolic link is listed
    with the other names whatever it leads to (nothing is asked of its target: a link out of
    the checked tree must read the same whether it leads to a directory, a file or nothing).
    """
    stack: list[tuple[str, int]] = [(top, 0)]
    while stack:
        here, depth = stack.pop()
        dirs: list[str] = []
        names: list[str] = []
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=not links_are_names)
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else names).append(entry.name)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        yield here, dirs, names
        if not dirs:
            continue
        if max_depth is not None and depth >= max_depth:
            if onerror is not None:
                onerror(TooDeep(here, max_depth))
            continue
        below = []
        for name in dirs:
            path = os.path.join(here, name)
            if followlinks or not os.path.islink(path):
                below.append((path, depth + 1))
        stack.extend(reversed(below))  # the first subdirectory is walked first
