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
from collections.abc import Callable, Iterable, Iterator
from fnmatch import translate

import msgspec


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


class Exclude(msgspec.Struct, frozen=True):
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
        globs: dict[str, list[str]] = {}  # the same, as patterns (base "" for absolute ones)
        for item in patterns:
            raw, base = (item.pattern, item.base) if isinstance(item, Exclude) else (item, None)
            pattern = _normal_pattern(raw)
            if not pattern:
                continue
            regex = translate(pattern)
            names.append(regex)
            if os.path.isabs(pattern):
                absolute.append(regex)
                globs.setdefault("", []).append(pattern)
            else:
                anchor = os.path.abspath(base) if base else cwd
                anchored.setdefault(anchor, []).append(regex)
                globs.setdefault(anchor, []).append(pattern)
        self._names = _union(names)
        self._anchored = {base: _compile(rx) for base, rx in anchored.items()}
        self._absolute = _union(absolute)
        self.empty = not names
        #: (base, spelling) -> the patterns matched incrementally against long paths
        self._long = _LongPaths(globs)
        self._under: dict[tuple[str, str], bool] = {}

    def __bool__(self) -> bool:
        return not self.empty

    def __call__(self, path: str) -> bool:
        """Whether the file or directory ``path`` (as walked) matches a pattern itself."""
        if self.empty:
            return False
        if self._names is not None and self._names.match(os.path.basename(path)):
            return True
        full = os.path.abspath(path)
        if self._absolute is not None and self._long.matches("", full, self._absolute):
            return True
        for base, regex in self._anchored.items():
            rel = _relative(full, base)
            if self._long.matches(base, rel, regex) or self._long.matches(base, "./" + rel, regex):
                return True
        return False

    def under(
        self, path: str, root: str, realpath: Callable[[str], str] = os.path.realpath
    ) -> bool:
        """Whether ``path`` or a directory it is in below ``root`` matches: whether a walk of
        ``root`` would leave ``path`` out. What ``--changed`` asks of a changed file, which
        no walk reached. Each directory is asked once per :class:`Excludes` (the answers of
        one run's files share their directories); ``realpath`` may be a memo of
        :func:`os.path.realpath` (``ssrisk.confine.RealPaths``)."""
        if self.empty:
            return False
        full, stop = os.path.abspath(path), realpath(root)
        climbed: list[str] = []  # the directories asked, below a known one
        answer = False
        # (the root may be spelt another way than the path: a link to the repository)
        while full != stop and realpath(full) != stop:
            known = self._under.get((stop, full))
            if known is not None:
                answer = known
                break
            climbed.append(full)
            if self(full):
                answer = True
                break
            parent = os.path.dirname(full)
            if parent == full:
                break
            full = parent
        for directory in climbed:
            # a directory is left out when it or one above it below the root matches: the
            # answer found is that of every directory climbed through (the file itself too)
            self._under[stop, directory] = answer
        return answer


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


#: A path spelt in more characters than this is matched against the patterns a piece at a time
#: (:class:`_LongPaths`); a shorter one by the patterns' regular expressions.
LONG_PATH = 256

#: How many long paths' match states :class:`_LongPaths` keeps (a walk needs its current
#: directories'; a forgotten one is read again from its path, once).
_KEPT_STATES = 512


class _Glob:
    """One glob pattern as :func:`fnmatch.translate` reads it, matched against a path that grows
    a name at a time: each ``*``-separated piece is found at its earliest place after the one
    before (which is where a match may put it, so the earliest place never loses one), the
    first piece at the start and the last at the end. The match state of a path is a small
    tuple, and a path's state is its directory's carried over the new characters, so a walk
    D levels deep reads each character once per pattern, not D times."""

    def __init__(self, pattern: str) -> None:
        self.whole = re.compile(translate(pattern))
        pieces = _pieces(pattern)
        self.star = len(pieces) > 1
        compiled = [(_piece_regex(piece), size) for piece, size in pieces]
        self.first, self.first_len = compiled[0]
        self.middle = compiled[1:-1]
        self.last, self.last_len = compiled[-1]

    def advance(self, state: _State, text: str) -> _State:
        """The state of ``text``, from that of a prefix of it (``None``: nothing read yet)."""
        if not self.star:
            return None  # (matched whole: a path of one length only can match)
        if state is _DEAD:
            return _DEAD
        if state is None:
            if len(text) < self.first_len:
                return None
            if self.first.match(text) is None:
                return _DEAD
            k, pos, searched = 0, self.first_len, self.first_len
        else:
            k, pos, searched = state
        while k < len(self.middle):
            regex, size = self.middle[k]
            found = regex.search(text, max(pos, searched))
            if found is None:
                return k, pos, max(pos, len(text) - size + 1)
            k, pos = k + 1, found.end()
            searched = pos
        return k, pos, searched

    def matches(self, state: _State, text: str) -> bool:
        """Whether ``text``, whose state is ``state``, matches the pattern."""
        if not self.star:
            return len(text) == self.first_len and self.whole.match(text) is not None
        if state is None or state is _DEAD or state[0] < len(self.middle):
            return False
        start = len(text) - self.last_len
        return start >= state[1] and self.last.match(text, start) is not None


_DEAD = (-1, -1, -1)  # the first piece did not match: nothing after it can
_State = tuple[int, int, int] | None


def _pieces(pattern: str) -> list[tuple[str, int]]:
    """``pattern`` split at each ``*`` outside a ``[...]`` set (a run of ``*`` is one), each
    piece with the number of characters it matches (one per character, ``?`` or set), the
    extent of a set found as :func:`fnmatch.translate` finds it."""
    pieces: list[tuple[str, int]] = []
    start, count, i, n = 0, 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if not (i > 0 and pattern[i - 1] == "*"):
                pieces.append((pattern[start:i], count))
            start, count, i = i + 1, 0, i + 1
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j < n:
                i = j  # a set: one character
        count += 1
        i += 1
    pieces.append((pattern[start:], count))
    return pieces


def _piece_regex(piece: str) -> re.Pattern[str]:
    """The regular expression of a piece without ``*``, unanchored (``fnmatch.translate``
    gives ``(?s:…)\\Z``)."""
    translated = translate(piece)
    if not (translated.startswith("(?s:") and translated.endswith(")\\Z")):
        raise ValueError(f"unexpected translation of {piece!r}: {translated!r}")
    return re.compile(translated[4:-3], re.DOTALL)


class _LongPaths:
    """Long paths matched against a base's patterns, each path's match states carried over
    from its directory's (see :class:`_Glob`); a path of at most :data:`LONG_PATH` characters
    is matched by the given regular expression."""

    def __init__(self, patterns: dict[str, list[str]]) -> None:
        self._patterns = patterns
        #: base -> its patterns as globs, made when a path of the base is first long (most runs
        #: have none, and each run builds several Excludes)
        self._globs: dict[str, list[_Glob]] = {}
        self._states: dict[tuple[str, str], list[_State]] = {}

    def matches(self, base: str, text: str, regex: re.Pattern[str]) -> bool:
        """Whether ``text`` (a path spelt relative to ``base``, or absolute for base ``""``)
        matches one of ``base``'s patterns, whose union is ``regex``."""
        if len(text) <= LONG_PATH:
            return regex.match(text) is not None
        globs = self._globs.get(base)
        if globs is None:
            globs = self._globs[base] = [_Glob(p) for p in self._patterns[base]]
        states = self._state(base, globs, text)
        return any(g.matches(state, text) for g, state in zip(globs, states, strict=True))

    def _state(self, base: str, globs: list[_Glob], text: str) -> list[_State]:
        known = self._states.get((base, text))
        if known is not None:
            return known
        head, sep, _name = text.rpartition("/")
        before: list[_State] | None = None
        if sep and head:
            before = self._states.get((base, head))
            if before is None:  # (a short directory, or one forgotten: read once)
                before = self._remember(base, head, [g.advance(None, head) for g in globs])
        if before is None:
            before = [None] * len(globs)
        return self._remember(
            base, text, [g.advance(state, text) for g, state in zip(globs, before, strict=True)]
        )

    def _remember(self, base: str, text: str, states: list[_State]) -> list[_State]:
        if len(self._states) >= _KEPT_STATES:
            self._states.clear()
        self._states[base, text] = states
        return states
