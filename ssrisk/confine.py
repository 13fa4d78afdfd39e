"""Reading only inside the checked tree.

In CI ssrisk reads an untrusted pull request, whose symbolic links can point anywhere: at
``/proc/self/environ`` (the job's tokens), ``/etc/passwd``, or the checkout's own
``.git/config`` (which holds the checkout token). A file is read only when its real path
(every link resolved) stays inside the tree it was found in and outside any ``.git``
directory; otherwise it is an input error naming the link, and its content is never read.

The tree of a path given on the command line is the repository that holds it: the nearest
directory at or above it that has a ``.git`` entry; else the working directory when the path
is inside it; else the path itself (a directory) or its directory (a file). A Helm chart is
confined to its own directory (see :mod:`ssrisk.renderers.chartcopy`).
"""

from __future__ import annotations

import os
from functools import lru_cache

GIT_DIR = ".git"


@lru_cache(maxsize=256)
def _repository_root(real_dir: str) -> str | None:
    here = real_dir
    while True:
        if os.path.lexists(os.path.join(here, GIT_DIR)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def tree_of(path: str) -> str:
    """The real path of the tree that ``path`` (a file or directory named by the user) is
    checked in: its repository, else the working directory, else itself (see the module)."""
    absolute = os.path.abspath(path)
    directory = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
    real = os.path.realpath(directory)
    found = _repository_root(real)
    if found is not None:
        return found
    cwd = os.path.realpath(os.getcwd())
    return cwd if is_inside(real, cwd) else real


def is_inside(real_path: str, real_root: str) -> bool:
    """Whether ``real_path`` is ``real_root`` or below it (both already real paths)."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def in_git_dir(real_path: str, real_root: str) -> bool:
    """Whether ``real_path`` lies in a ``.git`` directory at or below ``real_root``."""
    rel = os.path.relpath(real_path, real_root)
    return GIT_DIR in rel.split(os.sep)


def refusal(path: str, root: str) -> str | None:
    """Why ``path`` may not be read from the tree ``root`` (a real path), or ``None``.

    The reason names where the link leads, never what is there.
    """
    real = os.path.realpath(path)
    if not is_inside(real, root):
        if is_inside(os.path.abspath(path), root):
            return (
                f"a symbolic link that leads outside the checked tree ({root}) to {real}; not read"
            )
        return f"outside the checked tree ({root}): {real}; not read"
    if in_git_dir(real, root):
        return "inside a .git directory (or a link into one); not read"
    return None
