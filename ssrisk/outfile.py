"""Writing report and baseline files safely (``--output``, ``--write-baseline``).

In CI the working directory is an untrusted checkout, so a path such as ``ssrisk.sarif`` may
already exist there as a symbolic link to a file the job can write (a shell profile, another
job's file). ssrisk never writes through a symbolic link: a link as the file, or as a
directory of the working directory or of its repository on the way to the file, is
refused. A regular file is written to a new temporary file in the same directory and
renamed over the target, so a failed, interrupted or concurrent run never leaves a
half-written file (``rename`` is atomic on
POSIX, and replaces the directory entry rather than following it). Device files and pipes
(``/dev/null``) are written in place.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from typing import TextIO


class OutputError(Exception):
    """An output file that may not or cannot be written; the message names it."""


def _symlink_on_the_way(target: str) -> str | None:
    """The first symbolic link among the components of ``target`` that lie inside the working
    directory or the repository that holds it (the checked-out repository could have made
    them: ``../results`` from a subdirectory), else ``None``; the target itself is checked
    wherever it is. Where a component lies is judged by the real path of its directory, so
    a working directory reached through a link of the user's (``$PWD/results``) is no way
    around it.

    The path is walked component by component as the kernel resolves it, *before* any ``..``
    is collapsed: in ``sub/../z.sarif`` the kernel follows ``sub`` (a link to anywhere) and
    then its parent, so ``sub`` is refused. Up to the first link, ``..`` names the lexical
    parent, which is then the real one.
    """
    from .confine import is_inside, repository_of

    cwd = os.path.realpath(os.getcwd())
    roots = {cwd}
    repository = repository_of(cwd)
    if repository is not None:
        roots.add(repository)
    here = os.sep if os.path.isabs(target) else cwd
    parts = [p for p in target.split(os.sep) if p not in ("", os.curdir)]
    for i, part in enumerate(parts):
        if part == os.pardir:
            here = os.path.dirname(here)
            continue
        parent, here = here, os.path.join(here, part)
        last = i == len(parts) - 1
        if not last:
            real = os.path.join(os.path.realpath(parent), part)
            if not any(is_inside(real, root) for root in roots):
                continue
        if os.path.islink(here):
            return here
    return None


def leads_through_link(path: str) -> bool:
    """Whether :func:`write_file` refuses ``path`` for a symbolic link: ``path`` itself, or a
    directory on the way to it inside the working directory."""
    return _symlink_on_the_way(path) is not None


#: Links to standard output that CI scripts name as an output file.
_STANDARD_OUTPUT = frozenset({"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})


def write_file(path: str, write: Callable[[TextIO], object]) -> None:
    """Create or replace the file ``path`` with what ``write`` writes to the stream it gets
    (UTF-8; characters that cannot be encoded, such as undecodable bytes of file names, are
    written as backslash escapes).

    Raises:
        OutputError: ``path`` or a directory on the way to it (inside the working directory)
            is a symbolic link, ``path`` is a directory, or it cannot be written.
    """
    link = _symlink_on_the_way(path)
    if link is not None:
        shown = path if os.path.abspath(link) == os.path.abspath(path) else link
        instead = (
            "write to standard output with --output - (or without --output)"
            if os.path.abspath(path) in _STANDARD_OUTPUT
            else "remove it or choose another file"
        )
        raise OutputError(f"{path}: refusing to write through the symbolic link {shown}; {instead}")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"{path}: cannot write: it is a directory")
    if mode is not None and not stat.S_ISREG(mode):
        _write_in_place(path, write)
        return
    directory = os.path.dirname(os.path.abspath(path))
    try:
        import tempfile  # (only when an output file is written: not on a pre-commit run)

        fd, tmp = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=directory
        )
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, (stat.S_IMODE(mode) if mode is not None else 0o666 & ~umask))
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_in_place(path: str, write: Callable[[TextIO], object]) -> None:
    """A device or a pipe: opened without following links and without blocking on a pipe
    that has no reader."""
    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            write(fh)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
