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
import stat
from collections.abc import Callable

GIT_DIR = ".git"


def tree_of(path: str) -> str:
    """The real path of the tree that ``path`` (a file or directory named by the user) is
    checked in: its repository, else the working directory, else itself (see the module).

    The repository is looked for on the path *as written*, not on its real path: a directory
    link inside the working directory (``deploy -> /elsewhere``) leads out of the tree, so
    neither its target nor a ``.git`` the target holds can become the tree. One path costs
    a look at each directory above it; :class:`Trees` answers many.
    """
    return Trees()(path)


def repository_of(directory: str) -> str | None:
    """The real path of the repository holding ``directory`` (the nearest directory at or
    above it, on the path as written, that has a ``.git`` entry), or ``None``."""
    return Trees().repository(os.path.abspath(directory))


class Trees:
    """:func:`tree_of` for many paths, each directory above them looked at once: the paths of
    a walk or a changed-file list nested D levels deep cost D looks, not D*D. Made for one
    run's lookups: the file system is not expected to change under it."""

    def __init__(self) -> None:
        self.cwd = os.path.realpath(os.getcwd())
        self.realpath = RealPaths()
        #: absolute directory as written -> (reached through a link inside the working
        #: directory, the nearest directory at or above it not so reached that has a .git)
        self._state: dict[str, tuple[bool, str | None]] = {}

    def __call__(self, path: str) -> str:
        """The tree of ``path`` (see :func:`tree_of`)."""
        absolute = os.path.abspath(path)
        directory = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        found = self.repository(directory)
        if found is not None:
            return found
        real = self.realpath(directory)
        if is_inside(directory, self.cwd) or is_inside(real, self.cwd):
            return self.cwd
        return real

    def repository(self, directory: str) -> str | None:
        """The real path of the nearest directory at or above ``directory`` (an absolute path
        as written) that has a ``.git``, skipping every directory reached through a symbolic
        link whose entry is inside the working directory (the checkout's own links)."""
        chain = []  # directories not looked at yet, from ``directory`` up
        here = directory
        while here not in self._state:
            chain.append(here)
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
        untrusted, nearest = self._state.get(here, (False, None))
        for here in reversed(chain):  # from the highest down
            if not untrusted and os.path.islink(here):
                untrusted = is_inside(self.realpath(os.path.dirname(here)), self.cwd)
            if not untrusted and os.path.lexists(os.path.join(here, GIT_DIR)):
                nearest = here
            self._state[here] = (untrusted, nearest)
        return self.realpath(nearest) if nearest is not None else None


def is_inside(real_path: str, real_root: str) -> bool:
    """Whether ``real_path`` is ``real_root`` or below it (both already real paths)."""
    return real_path == real_root or real_path.startswith(real_root.rstrip(os.sep) + os.sep)


def in_git_dir(real_path: str, real_root: str) -> bool:
    """Whether ``real_path`` lies in a ``.git`` directory at or below ``real_root``."""
    if is_inside(real_path, real_root):  # the common case, without relpath's two abspaths
        return GIT_DIR in real_path[len(real_root.rstrip(os.sep)) :].split(os.sep)
    rel = os.path.relpath(real_path, real_root)
    return GIT_DIR in rel.split(os.sep)


class RealPaths:
    """Real paths of the entries of one walk, each directory resolved once.

    ``os.path.realpath`` looks at every component of a path (one ``lstat`` each), so resolving
    every file of a tree nested D levels deep costs D*D calls (800 levels: 7 s). Here a path's
    real path is its directory's (remembered) joined with its name, unless the name is a
    symbolic link, which ``os.path.realpath`` resolves. Made for one
    walk: the file system is not expected to change under it.
    """

    def __init__(self) -> None:
        self._dirs: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        """The real path of ``path`` (as :func:`os.path.realpath` gives it)."""
        known = self._dirs.get(path)
        if known is not None:
            return known
        head, name = os.path.split(path)
        if not name or name in (os.curdir, os.pardir):
            return os.path.realpath(path)
        return self._child(self._dir(head or os.curdir), name)

    def _dir(self, directory: str) -> str:
        chain: list[tuple[str, str]] = []  # (directory, its name) up to a known one
        here = directory
        while here not in self._dirs:
            head, name = os.path.split(here)
            if not name or name in (os.curdir, os.pardir) or not head:
                self._dirs[here] = os.path.realpath(here)
                break
            chain.append((here, name))
            here = head
        real = self._dirs[here]
        for here, name in reversed(chain):
            real = self._dirs[here] = self._child(real, name)
        return real

    @staticmethod
    def _child(real_dir: str, name: str) -> str:
        full = os.path.join(real_dir, name)
        try:
            if not stat.S_ISLNK(os.lstat(full).st_mode):
                return full
        except OSError:
            return full  # (nothing there: os.path.realpath keeps the name as it is)
        return os.path.realpath(full)


def refusal(path: str, root: str, realpath: Callable[[str], str] = os.path.realpath) -> str | None:
    """Why ``path`` may not be read from the tree ``root`` (a real path), or ``None``.

    The reason is the same whether what the link leads to exists or not, and never names it
    (the caller names the path as written in the tree): what lies outside the tree is none of
    the output's business. A walk passes its :class:`RealPaths` as ``realpath``.
    """
    if "\0" in path:  # (a configuration value can hold one; no file name can)
        return "not a file name (it holds a NUL character); not read"
    real = realpath(path)
    if not is_inside(real, root):
        if is_inside(os.path.abspath(path), root):
            through = _outside_link_above(path, root)
            if through is not None:  # (the file itself need not be a link)
                return f"reached through '{through}', {OUTSIDE_LINK}"
            return OUTSIDE_LINK
        return "outside the checked tree; not read"
    if in_git_dir(real, root):
        return "inside a .git directory (or a link into one); not read"
    return None


#: The refusal of a path, as written inside the tree, whose real path leaves it.
OUTSIDE_LINK = "a symbolic link that leads outside the checked tree; not read"


def _outside_link_above(path: str, root: str) -> str | None:
    """The first directory above ``path``, as written, that is a symbolic link whose target
    leaves ``root``, or ``None`` (then ``path`` itself is the link)."""
    head = path.rstrip(os.sep) or path
    above: list[str] = []
    while True:
        head = os.path.dirname(head)
        if not head or head in above:
            break
        above.append(head)
    for directory in reversed(above):  # from the top down
        full = os.path.abspath(directory)
        if not is_inside(full, root) or full == root:
            continue
        if os.path.islink(directory) and not is_inside(os.path.realpath(directory), root):
            return directory
    return None


def confined(path: str, root: str) -> bool:
    """Whether the real path of ``path`` (a directory or file) is inside the tree ``root``
    (a real path) and outside ``.git``: a chart or kustomization reached through a link out
    of the tree is refused like a plain file (:func:`refusal`)."""
    return refusal(path, root) is None
