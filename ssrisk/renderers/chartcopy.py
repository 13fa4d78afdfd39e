"""A private copy of a Helm chart, made before it is rendered.

Helm's chart loader follows symbolic links wherever they lead (helm pkg/chart/loader,
LoadDir walks with ``sympath.Walk``, which logs "found symbolic link in path. Contents of
linked file included and used") and loads every file that ``.helmignore`` does not exclude,
``.git/`` included; a template can then print any of them, for example with
``{{ fail (.Files.Get "files/env") }}`` where ``files/env`` links to ``/proc/self/environ``.
Both renderers (the ``helm`` binary and Helm's embedded engine) therefore render a copy,
made here, that holds only regular files whose real path is inside the chart directory and
outside ``.git``: a link that leads elsewhere, a ``.git`` directory, a pipe or a device is
left out (Helm then sees no such file), and the caller reports each one. A link inside the
chart is copied as the file or directory it names, as Helm would read it. The copy is
bounded: at most :data:`MAX_CHART_FILES` files and :data:`MAX_CHART_BYTES` bytes.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from ..confine import GIT_DIR, RealPaths, in_git_dir, is_inside
from ..loading import MAX_FILE_BYTES
from ..walk import TooDeep, walk
from .common import RenderError

MAX_CHART_FILES = 10_000
MAX_CHART_BYTES = MAX_FILE_BYTES
#: Directory levels of a confined copy: the copy is a temporary directory, removed by a
#: recursive walk (``shutil.rmtree``, one Python frame a level), so deeper directories are
#: left out (reported) rather than copied.
MAX_COPY_DEPTH = 200


@dataclass(frozen=True)
class Skipped:
    """A chart entry left out of the copy: its path inside the chart and why."""

    path: str
    reason: str


class CopyTooLarge(Exception):
    """A confined copy would hold more files or bytes than its :class:`CopyBudget` allows."""


@dataclass
class CopyBudget:
    """The files and bytes one or more :func:`copy_confined` calls may copy in all."""

    max_files: int
    max_bytes: int
    files: int = 0
    size: int = 0

    def charge(self, size: int) -> None:
        """Count one file of ``size`` bytes.

        Raises:
            CopyTooLarge: the budget is exceeded.
        """
        self.files += 1
        self.size += size
        if self.files > self.max_files or self.size > self.max_bytes:
            raise CopyTooLarge(f"more than {self.max_files} files or {self.max_bytes} bytes")


def copy_confined(top: str, root: str, dest: str, budget: CopyBudget, place: str) -> list[Skipped]:
    """Copy the directory ``top`` (a real path inside ``root``) into ``dest``: regular files
    whose real path stays inside ``root`` and outside ``.git``; a link inside ``root`` is
    copied as what it names, each directory once (link loops end). ``place`` names ``root``
    in the reasons ("the chart").

    Returns:
        What was left out, with paths relative to ``top``.

    Raises:
        CopyTooLarge: the copy exceeds ``budget`` (shared by the calls given it).
    """
    skipped: list[Skipped] = []
    realpath = RealPaths()  # (each directory resolved once: a deep chart is no D*D lstat calls)
    visited = {top}
    outside = f"a symbolic link that leads outside {place}"  # never where, nor if it exists

    def unlistable(exc: OSError) -> None:
        rel = os.path.relpath(exc.filename or top, top)
        reason = exc.strerror if isinstance(exc, TooDeep) else None
        skipped.append(Skipped(rel, reason or f"cannot be listed: {exc.strerror or exc}"))

    for here, dirs, names in walk(
        top, followlinks=True, onerror=unlistable, max_depth=MAX_COPY_DEPTH
    ):
        rel_here = os.path.relpath(here, top)
        os.makedirs(os.path.normpath(os.path.join(dest, rel_here)), exist_ok=True)
        keep = []
        for d in sorted(dirs):
            rel = os.path.normpath(os.path.join(rel_here, d))
            real = realpath(os.path.join(here, d))
            if d == GIT_DIR:
                skipped.append(Skipped(rel, "a .git directory"))
            elif not is_inside(real, root):
                skipped.append(Skipped(rel, outside))
            elif in_git_dir(real, root):
                skipped.append(Skipped(rel, "a .git directory"))
            elif real not in visited:
                visited.add(real)
                keep.append(d)
        dirs[:] = keep
        for name in sorted(names):
            rel = os.path.normpath(os.path.join(rel_here, name))
            real = realpath(os.path.join(here, name))
            if not is_inside(real, root):
                skipped.append(Skipped(rel, outside))
                continue
            if in_git_dir(real, root) or name == GIT_DIR:
                skipped.append(Skipped(rel, "inside a .git directory"))
                continue
            try:
                st = os.stat(real)
            except OSError as exc:
                skipped.append(Skipped(rel, f"cannot be read: {exc.strerror or exc}"))
                continue
            if not stat.S_ISREG(st.st_mode):
                skipped.append(Skipped(rel, "not a regular file"))
                continue
            budget.charge(st.st_size)
            with open(real, "rb") as src, open(os.path.join(dest, rel), "xb") as out:
                # never more than the budget, even from a file that grew since its stat
                out.write(src.read(budget.max_bytes + 1))
    return skipped


def copy_chart(chart_dir: str, into: str) -> tuple[str, list[Skipped]]:
    """Copy the chart at ``chart_dir`` into a new directory below ``into``.

    Returns:
        ``(the copy's path, what was left out)``; the copy has the chart directory's name.

    Raises:
        RenderError: the chart has more than :data:`MAX_CHART_FILES` files or
            :data:`MAX_CHART_BYTES` bytes.
    """
    root = os.path.realpath(chart_dir)
    dest = os.path.join(into, os.path.basename(root) or "chart")
    os.makedirs(dest)
    try:
        skipped = copy_confined(
            root, root, dest, CopyBudget(MAX_CHART_FILES, MAX_CHART_BYTES), "the chart"
        )
    except CopyTooLarge:
        raise RenderError(
            f"the chart has more than {MAX_CHART_FILES} files or {MAX_CHART_BYTES} "
            "bytes (links included); not rendered"
        ) from None
    return dest, skipped
