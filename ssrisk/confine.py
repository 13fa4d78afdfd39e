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

GIT_DIR = ".git"


def tree_of(path: str) -> str:
    """The real path of the tree that ``path`` (a file or directory named by the user) is
    checked in: its repository, else the working directory, else itself (see the module).

    The repository is looked for on the path *as written*, not on its real path: a directory
    link inside the working directory (``deploy -> /elsewhere``) leads out of the tree, so
    neither its target nor a ``.git`` the target holds can become the tree.
    """
    absolute = os.path.abspath(path)
    directory = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
    cwd = os.path.realpath(os.getcwd())
    found = _lexical_repository_root(directory, cwd)
    if found is not None:
        return found
    real = os.path.realpath(directory)
    if is_inside(directory, cwd) or is_inside(real, cwd):
        return cwd
    return real


def repository_of(directory: str) -> str | None:
    """The real path of the repository holding ``directory`` (the nearest directory at or
    above it, on the path as written, that has a ``.git`` entry), or ``None``."""
    return _lexical_repository_root(os.path.abspath(directory), os.path.realpath(os.getcwd()))


def _lexical_repository_root(directory: str, cwd: str) -> str | None:
    """The real path of the nearest directory at or above ``directory`` (an absolute path as
    written) that has a ``.git``, skipping every directory reached through a symbolic link
    whose entry is inside the working directory ``cwd`` (the checkout's own links)."""
    chain = []
    here = directory
    while True:
        chain.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    chain.reverse()  # from the file system's root down to the directory
    untrusted = False
    candidates = []
    for here in chain:
        if not untrusted and os.path.islink(here):
            entry = os.path.realpath(os.path.dirname(here))
            untrusted = is_inside(entry, cwd)
        if not untrusted:
            candidates.append(here)
    for here in reversed(candidates):
        if os.path.lexists(os.path.join(here, GIT_DIR)):
            return os.path.realpath(here)
    return None


def is_inside(real_path: str, real_root: str) -> bool:
    """Whether ``real_path`` is ``real_root`` or below it (both already real paths)."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def in_git_dir(real_path: str, real_root: str) -> bool:
    """Whether ``real_path`` lies in a ``.git`` directory at or below ``real_root``."""
    rel = os.path.relpath(real_path, real_root)
    return GIT_DIR in rel.split(os.sep)


def refusal(path: str, root: str) -> str | None:
    """Why ``path`` may not be read from the tree ``root`` (a real path), or ``None``.

    The reason is the same whether what the link leads to exists or not, and never names it
    (the caller names the path as written in the tree): what lies outside the tree is none of
    the output's business.
    """
    if "\0" in path:  # (a configuration value can hold one; no file name can)
        return "not a file name (it holds a NUL character); not read"
    real = os.path.realpath(path)
    if not is_inside(real, root):
        if is_inside(os.path.abspath(path), root):
            return OUTSIDE_LINK
        return "outside the checked tree; not read"
    if in_git_dir(real, root):
        return "inside a .git directory (or a link into one); not read"
    return None


#: The refusal of a path, as written inside the tree, whose real path leaves it.
OUTSIDE_LINK = "a symbolic link that leads outside the checked tree; not read"


def confined(path: str, root: str) -> bool:
    """Whether the real path of ``path`` (a directory or file) is inside the tree ``root``
    (a real path) and outside ``.git``: a chart or kustomization reached through a link out
    of the tree is refused like a plain file (:func:`refusal`)."""
    return refusal(path, root) is None
