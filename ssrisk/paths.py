"""How paths are spelt and matched: one spelling of every file in every output, and
``--exclude`` / ``exclude:`` patterns that match whatever way the checked PATH was written.

* :func:`tidy` is the spelling of a path in every output: the path as given on the command line
  joined with the file, without ``.`` components or doubled separators (``./deploy//db.yaml``
  is ``deploy/db.yaml``; ``.`` joined with ``db.yaml`` is ``db.yaml``). Absolute paths stay
  absolute and ``..`` stays as written (collapsing ``link/..`` would name another directory
  than the one the kernel opens).
* :class:`Excludes` matches a file or directory against glob patterns (``fnmatch``: ``*``
  also matches ``/``): its name, and its path relative to the pattern's base directory (the
  working directory for ``--exclude``, the configuration file's directory for ``exclude:``),
  also with a leading ``./`` so that ``*/testdata/*`` matches a ``testdata`` directory at any
  depth, the top included. An absolute pattern is matched against the absolute path. So
  ``charts/redis`` leaves out the same chart whether the PATH was ``.``, ``./charts``,
  ``charts`` or an absolute path, in a walk and in ``--changed`` alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fnmatch import translate


def ancestors(path: str) -> Iterator[str]:
    """``path`` and every directory above it, up to the root, as ``os.path.dirname`` spells
    them (a relative path stops at its first component)."""
    while True:
        yield path
        up = os.path.dirname(path)
        if up == path or not up:
            return
        path = up


def tidy(path: str) -> str:
    """``path`` without ``.`` components, doubled separators and a trailing separator (``-``
    is returned as it is; ``.`` stays ``.``; a relative path starting with ``-`` keeps or gets
    ``./``). ``..`` and symbolic links are not resolved, so
    the result names the file the kernel opens for ``path``."""
    sep = os.sep
    if path in ("", "-"):
        return path
    if not (
        path.startswith("." + sep)
        or path.endswith(sep)
        or path.endswith(sep + ".")
        or sep + sep in path
        or f"{sep}.{sep}" in path
    ):
        return _not_an_option(path)
    parts = [p for p in path.split(sep) if p not in ("", ".")]
    joined = sep.join(parts)
    if path.startswith(sep):
        return sep + joined
    return _not_an_option(joined) or os.curdir


def _not_an_option(path: str) -> str:
    """``./-x.yaml`` for a relative path whose first character is ``-``: spelt without
    ``./`` it would read as an option when pasted into a command line (``ssrisk check
    -x.yaml``, ``git add -x.yaml``)."""
    return os.curdir + os.sep + path if path.startswith("-") else path


def join(directory: str, name: str) -> str:
    """``os.path.join`` that spells the current directory's files without ``./`` (but for a
    name starting with ``-``: ``./-x.yaml``)."""
    return _not_an_option(name) if directory == os.curdir else os.path.join(directory, name)


@dataclass(frozen=True)
class Exclude:
    """A glob pattern and the directory its relative paths are anchored at (``None``: the
    working directory of the run)."""

    pattern: str
    base: str | None = None


#: What a setting holds: a pattern of the command line (anchored at the working directory)
#: or an :class:`Exclude` of a configuration file.
ExcludePattern = str | Exclude


class Excludes:
    """The exclude patterns of a run, compiled once (see the module)."""

    def __init__(self, patterns: Iterable[ExcludePattern]) -> None:
        cwd = os.getcwd()
        self._cwd = cwd
        names: list[str] = []
        #: base directory -> regexes of the relative patterns anchored there
        anchored: dict[str, list[str]] = {}
        absolute: list[str] = []
        for item in patterns:
            raw, base = (item.pattern, item.base) if isinstance(item, Exclude) else (item, None)
            pattern = _normal_pattern(raw)
            if not pattern:
                continue
            regex = translate(pattern)
            names.append(regex)
            if os.path.isabs(pattern):
                absolute.append(regex)
            else:
                anchored.setdefault(os.path.abspath(base) if base else cwd, []).append(regex)
        self._names = _union(names)
        self._anchored = {base: _compile(rx) for base, rx in anchored.items()}
        self._absolute = _union(absolute)
        self.empty = not names

    def __bool__(self) -> bool:
        return not self.empty

    def __call__(self, path: str) -> bool:
        """Whether the file or directory ``path`` (as walked) matches a pattern itself."""
        if self.empty:
            return False
        if self._names is not None and self._names.match(os.path.basename(path)):
            return True
        full = os.path.abspath(path)
        if self._absolute is not None and self._absolute.match(full):
            return True
        for base, regex in self._anchored.items():
            rel = _relative(full, base)
            if regex.match(rel) or regex.match("./" + rel):
                return True
        return False

    def under(self, path: str, root: str) -> bool:
        """Whether ``path`` or a directory it is in below ``root`` matches: whether a walk of
        ``root`` would leave ``path`` out. What ``--changed`` asks of a changed file, which
        no walk reached."""
        if self.empty:
            return False
        full, stop = os.path.abspath(path), os.path.realpath(root)
        # (the root may be spelt another way than the path: a link to the repository)
        while full != stop and os.path.realpath(full) != stop:
            if self(full):
                return True
            parent = os.path.dirname(full)
            if parent == full:
                return False
            full = parent
        return False


def _normal_pattern(pattern: str) -> str:
    """A pattern without a leading ``./`` or a trailing ``/`` (``./charts/redis/`` and
    ``charts/redis`` are one pattern)."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if len(pattern) > 1:
        pattern = pattern.rstrip("/")
    return tidy(pattern) if pattern not in (".", "") else ""


def _relative(full: str, base: str) -> str:
    """``full`` relative to ``base`` (both absolute), with ``/`` separators."""
    if full.startswith(base + os.sep):
        rel = full[len(base) + 1 :]
    elif full == base:
        rel = os.curdir
    else:
        rel = os.path.relpath(full, base)
    return rel.replace(os.sep, "/")


def _compile(regexes: list[str]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{r})" for r in regexes))


def _union(regexes: list[str]) -> re.Pattern[str] | None:
    return _compile(regexes) if regexes else None
