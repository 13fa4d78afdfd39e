"""Paths as GitHub maps them: relative to the root of the repository.

GitHub resolves an annotation's ``file=`` and a SARIF result's relative URI against the root
of the repository the workflow checked out (docs.github.com, "SARIF support for code
scanning", Specifying the root for source files; "Workflow commands for GitHub Actions",
Setting an error message). A path relative to another directory, or an absolute path, is
not mapped to a file there. The ``github`` and ``sarif`` formats therefore spell every path
relative to the repository root, whatever the PATH given and the working directory:

- ``GITHUB_WORKSPACE`` (the checkout directory on GitHub Actions) when it is set;
- else the checked tree's root as :mod:`ssrisk.confine` finds it: the nearest directory at or
  above the file that has a ``.git`` entry, else the working directory when the file is in it.

A file outside that root keeps its path as written (``None`` from :meth:`relative`). Links
are resolved (GitHub cannot show a result reported at a link: "Resolving symlinks before
generating SARIF results").
"""

from __future__ import annotations

import os
from functools import lru_cache

from ..confine import is_inside, repository_of

#: The environment variable GitHub Actions sets to the checkout directory.
WORKSPACE_VARIABLE = "GITHUB_WORKSPACE"


class RepositoryPaths:
    """Maps input paths to ``(root, path relative to root)`` for one report.

    The workspace is read once, when the object is made (one report, one environment), and
    each path is resolved once (a file's findings share its path: a SARIF log of 10,000
    documents resolved 9,757 paths for 3,334 files, each a system call per directory level).
    """

    def __init__(self) -> None:
        workspace = os.environ.get(WORKSPACE_VARIABLE, "")
        self.workspace = os.path.realpath(workspace) if os.path.isdir(workspace) else None
        self._cwd = os.path.realpath(os.getcwd())
        self._resolved: dict[str, tuple[str, str] | None] = {}

    def relative(self, path: str) -> tuple[str, str] | None:
        """``(root, posix path relative to root)`` of ``path`` (a file as an output names it),
        or ``None``: standard input, or a file outside the repository root."""
        try:
            return self._resolved[path]
        except KeyError:
            found = self._resolved[path] = self._relative(path)
            return found

    def _relative(self, path: str) -> tuple[str, str] | None:
        if not path or path.startswith("<"):
            return None
        absolute = os.path.abspath(path)
        real = os.path.realpath(absolute)
        root = self.workspace or _root_of(os.path.dirname(absolute), self._cwd)
        if root is None or not is_inside(real, root) or real == root:
            return None
        return root, os.path.relpath(real, root).replace(os.sep, "/")

    def spelt(self, path: str) -> str:
        """``path`` relative to its repository root, else as written."""
        found = self.relative(path)
        return found[1] if found else path


@lru_cache(maxsize=1024)
def _root_of(directory: str, cwd: str) -> str | None:
    """The repository holding ``directory`` (absolute, as written), else ``cwd`` when the
    directory is in it, else ``None``."""
    found = repository_of(directory)
    if found is not None:
        return found
    if is_inside(os.path.realpath(directory), cwd) or is_inside(directory, cwd):
        return cwd
    return None


#: Directories below the working directory where a chart named by a stream's ``# Source:``
#: comment is looked for (``helm template x charts/db | ssrisk check -`` names
#: ``db/templates/sts.yaml``): at most two levels, so the look stays bounded.
_SOURCE_DEPTH = 2


def stream_source(path: str, source: str | None) -> str | None:
    """For a finding on standard input (``path`` ``<stdin>``): the file of its ``# Source:``
    template (``source``, ``chart/templates/x.yaml``) below the working directory, as the
    path of the template there, when exactly one such file exists; else ``None`` (a finding
    on a stream has no file of its own). ``None`` too for a path that is a file."""
    if not path.startswith("<") or not source or ".." in source.split("/"):
        return None
    import glob

    found: list[str] = []
    for depth in range(_SOURCE_DEPTH + 1):
        pattern = os.path.join(*(["*"] * depth), glob.escape(source)) if depth else source
        found += [p for p in glob.glob(pattern) if os.path.isfile(p)]
    unique = sorted(set(found))
    return unique[0] if len(unique) == 1 else None
