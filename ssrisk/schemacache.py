"""Per-kind Kubernetes schemas kept in the user's cache directory, so that a run parses only
the definitions its kinds use.

``kubernetes-validate`` ships one definitions file per Kubernetes minor (about 1.5 MB, 730
definitions) that every kind's schema refers into; parsing it and building a registry of it
took about 15 ms of every run, most of a pre-commit hook's time after the imports. The first
run that validates a kind writes that kind's schema with only the definitions it reaches
(a StatefulSet reaches 124 of them, 220 KB) to

    ``$XDG_CACHE_HOME/ssrisk/schemas/`` (default ``~/.cache/ssrisk/schemas/``)

and later runs read that file instead (named after the sources it was derived from, so that
two installs sharing the cache keep one each; at most :data:`MAX_SCHEMA_FILES`, the least
recently written removed first). Validation is the same either way: the definitions
keep their document id, so every ``$ref`` resolves to the same definition
(tests/test_schema_cache.py compares both). Beside it, ``<kind's file>.verdicts`` keeps the
digests of the values that kind's schema accepted (:class:`Verdicts`), so that a run whose
objects were all validated before does not load the validator at all.

The cache's place comes from the environment (``docs/security.md``: not to be pointed into
a checkout), nothing in a repository decides its path, and
all it holds of a repository is digests (at most :data:`MAX_RECORDS` of 16 bytes a kind). It
is used only when it is safe: every directory of it is a real directory (not a link; the base,
``$XDG_CACHE_HOME`` or ``~/.cache``, may be a link to one) owned by this user and writable by
nobody else, and a cache file is a regular file owned by this user,
opened without following links, not larger than :data:`MAX_BYTES`, that names the exact
source files (path, size, modification time) it was derived from. Files are written to a new
private temporary file and renamed into place (verdicts are also appended). Anything else (no
home directory, a read-only disk, a file of another version) just means the full definitions
are read and every object validated, as without a cache; ``SSRISK_NO_CACHE=1`` turns the
cache off (``0``, ``false``, ``no``, ``off`` or empty leave it on).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
from pathlib import Path
from typing import Any

import msgspec

from .envflags import env_flag

#: Bump when what is written changes (the schema hook, the format).
FORMAT = 2
#: A cache file larger than this is not read (the largest kind's is about 250 KB).
MAX_BYTES = 8 * 1024 * 1024
#: Schema files the cache keeps (one per kind, Kubernetes version and install; named after
#: their key): writing a new one removes the least recently written beyond this.
MAX_SCHEMA_FILES = 128


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def directory(*parts: str) -> Path | None:
    """The schema cache directory (``parts``: another directory under
    ``$XDG_CACHE_HOME/ssrisk``), created if missing; ``None`` when it is off or unsafe."""
    if env_flag("SSRISK_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    path = Path(base)
    chain = [path, path / "ssrisk"]
    for name in parts or ("schemas",):
        chain.append(chain[-1] / name)
    for level in chain:
        try:
            os.mkdir(level, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
        # The base (``$XDG_CACHE_HOME``, ``~/.cache``) is the user's choice and may be a link
        # to another disk; ssrisk's own directories under it may not.
        if not _private_directory(level, follow=level is path):
            return None
    return chain[-1]


def _private_directory(path: Path, follow: bool = False) -> bool:
    """Whether ``path`` is a directory of this user's that nobody else may write to (with
    ``follow``, the directory a link of this user's there leads to; else a link is not)."""
    try:
        st = os.lstat(path)
        if follow and stat.S_ISLNK(st.st_mode):
            if st.st_uid != os.geteuid():  # (another user could point it elsewhere later)
                return False
            st = os.stat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.geteuid()
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def source_key(*files: Path) -> str:
    """What identifies the source files of a derived schema: format, paths, sizes and
    modification times (a reinstalled or upgraded package gives another key)."""
    parts = [f"ssrisk-schema-cache/{FORMAT}"]
    for f in files:
        st = os.stat(f)
        parts.append(f"{os.path.realpath(f)}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


def _read_private(cache: Path, name: str, limit: int) -> bytes | None:
    """The bytes of cache file ``name``, or ``None`` when it is missing, larger than ``limit``
    or unsafe: not a regular file of this user's, writable by others, or a link."""
    found = _read_private_stat(cache, name, limit)
    return found[0] if found is not None else None


def _read_private_stat(cache: Path, name: str, limit: int) -> tuple[bytes, os.stat_result] | None:
    """:func:`_read_private`, with the file's status."""
    try:  # (O_NONBLOCK: opening a FIFO put in a file's place does not wait for a writer)
        fd = os.open(cache / name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not _private_file(st, limit):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return (raw, st) if len(raw) <= limit else None


def _private_file(st: os.stat_result, limit: int) -> bool:
    return (
        stat.S_ISREG(st.st_mode)
        and st.st_uid == os.geteuid()
        and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        and st.st_size <= limit
    )


def read(cache: Path, name: str, key: str) -> Any:
    """The value stored as ``name`` for ``key``, or ``None`` (missing, stale or unsafe)."""
    raw = _read_private(cache, name, MAX_BYTES)
    if raw is None:
        return None
    try:
        doc = msgspec.json.decode(raw)  # (twice as fast as json.loads: paid by every run)
    except ValueError:  # (msgspec.DecodeError is one)
        return None
    if not isinstance(doc, dict) or doc.get("key") != key:
        return None
    return doc.get("value")


def write(cache: Path, name: str, key: str, value: Any) -> None:
    """Store ``value`` as ``name`` for ``key`` (atomically; errors are ignored), and remove
    the least recently written ``.json`` files beyond :data:`MAX_SCHEMA_FILES`."""
    try:
        data = json.dumps({"key": key, "value": value}, separators=(",", ":")).encode()
    except (TypeError, ValueError):
        return
    if _replace(cache, name, data) is not None:
        _prune(cache, name, ".json", MAX_SCHEMA_FILES)


def _replace(cache: Path, name: str, data: bytes) -> tuple[int, int] | None:
    """Make ``data`` the content of cache file ``name``: written to a new private file and
    renamed into place, which replaces a link itself and never writes through it. Returns
    the file's (device, inode), ``None`` when it could not be written (errors are
    ignored)."""
    import tempfile

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=cache)  # O_EXCL, mode 0600
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            st = os.fstat(fh.fileno())
        os.replace(tmp, cache / name)
        tmp = None
        return st.st_dev, st.st_ino
    except OSError:
        return None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


# --- schema verdicts --------------------------------------------------------------------------

#: Bytes of a verdict: a keyed BLAKE2b digest of one value validation accepted.
RECORD = 16
#: Bytes of the random salt of a verdict file, in its header.
SALT = 16
#: A verdict file's header: the digest of what the verdicts depend on, the file's salt, then
#: how many of the records after it are sorted (8 bytes, big-endian).
HEAD = RECORD + SALT + 8
#: Records appended unsorted after the sorted ones before the file is rewritten sorted (a
#: file whose tail grew past twice this, by runs appending at once, has its tail ignored
#: until a run rewrites it).
MAX_TAIL = 4096
#: Records a verdict file holds at most (4 MiB); a run that would make more starts it anew
#: with its own verdicts (the first of them in digest order, if even those are more).
MAX_RECORDS = 262_144
#: Verdict files the cache keeps (one per kind, Kubernetes version and set of feature
#: gates): writing a new one removes the least recently written beyond this.
MAX_VERDICT_FILES = 64


def short_digest(text: str) -> str:
    """Eight hexadecimal digits of ``text``'s BLAKE2b digest (for a file name)."""
    return str(_blake2b()(text.encode(), digest_size=4).hexdigest())


@functools.cache
def _blake2b() -> Any:
    try:  # (hashlib imports OpenSSL's bindings: 3 ms of a one-file run)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter without the module
        from hashlib import blake2b
    return blake2b


class Verdicts:
    """The values of one kind that validation accepted, as digests kept in the cache, so that
    a later run does not load the validator (importing jsonschema-rs and building a kind's
    validator is about 25 ms, most of a pre-commit hook's run after the imports) nor check
    again an object it has validated before.

    The verdict depends only on the value (its JSON encoding) and on what validated it: each
    digest is keyed by ``key`` (for :mod:`ssrisk.validation`: the schema's
    :func:`source_key`, the validator library's files, the feature gates and the files of
    ssrisk's own checks), so a digest made for another schema, version, configuration or
    install never matches, and by the file's random salt, so that nobody who has not read the
    cache can make two values with one digest. Only acceptance is kept: a value with any
    problem (an error, an unknown field, a warning) is validated again every run.

    A verdict file is read like the schemas (private, not a link, at most ``HEAD +
    MAX_RECORDS * RECORD`` bytes); records are sorted (binary search) up to the header's
    count and appended after it, by ``O_APPEND`` writes of whole records to the file this run
    read (same device and inode), until :data:`MAX_TAIL` of them make it rewrite the file
    sorted. A record torn or misaligned by a concurrent writer is never matched (records are
    read on their boundaries); its value is only validated again.

    ``cache`` ``None`` (the cache is off or unsafe) keeps nothing: :meth:`digest` is always
    ``None``.
    """

    __slots__ = (
        "_cache",
        "_file",
        "_key",
        "_name",
        "_new",
        "_raw",
        "_salt",
        "_saved",
        "_sorted",
        "_tail",
    )

    def __init__(self, cache: Path | None, name: str, key: str) -> None:
        self._cache = cache
        self._name = name
        self._key = _blake2b()(key.encode(), digest_size=RECORD).digest()
        self._raw = b""
        self._sorted = 0
        self._file: tuple[int, int] | None = None  # (device, inode) of the file read
        self._tail: set[bytes] | None = None
        self._new: dict[bytes, None] = {}
        self._saved: set[bytes] = set()
        self._salt = b""
        if cache is None:
            return
        found = _read_private_stat(cache, name, HEAD + MAX_RECORDS * RECORD)
        if found is not None:
            raw, st = found
            if len(raw) >= HEAD and raw[:RECORD] == self._key:
                count = int.from_bytes(raw[RECORD + SALT : HEAD], "big")
                if HEAD + count * RECORD <= len(raw):
                    self._raw, self._sorted = raw, count
                    self._salt = raw[RECORD : RECORD + SALT]
                    self._file = (st.st_dev, st.st_ino)
        if not self._salt:
            self._salt = os.urandom(SALT)

    def digest(self, value: Any) -> bytes | None:
        """The digest of a plain JSON value (``None`` when the cache is off or the value has
        no JSON encoding)."""
        if self._cache is None:
            return None
        try:
            data = msgspec.json.encode(value)
        except (TypeError, ValueError, OverflowError, UnicodeError):
            return None
        key = self._key + self._salt
        return bytes(_blake2b()(data, digest_size=RECORD, key=key).digest())

    def accepted(self, digest: bytes) -> bool:
        """Whether a value of ``digest`` was accepted before (by this run or an earlier one)."""
        if digest in self._new or digest in self._saved:
            return True
        raw = self._raw
        lo, hi = 0, self._sorted
        while lo < hi:
            mid = (lo + hi) // 2
            at = HEAD + mid * RECORD
            found = raw[at : at + RECORD]
            if found < digest:
                lo = mid + 1
            elif found > digest:
                hi = mid
            else:
                return True
        tail = self._tail
        if tail is None:
            start = HEAD + self._sorted * RECORD
            if (len(raw) - start) // RECORD > 2 * MAX_TAIL:
                tail = set()  # (rewritten by the next run that adds a verdict)
            else:
                tail = {raw[at : at + RECORD] for at in range(start, len(raw) - RECORD + 1, RECORD)}
            self._tail = tail
        return digest in tail

    def add(self, digest: bytes) -> None:
        """Record that validation accepted a value of ``digest`` (kept by :meth:`save`)."""
        if self._cache is not None:
            self._new[digest] = None

    def save(self) -> None:
        """Write the verdicts added since the last save (errors are ignored)."""
        cache, new = self._cache, list(self._new)
        if cache is None or not new:
            return
        self._new = {}
        self._saved.update(new)
        raw = self._raw
        records = (len(raw) - HEAD) // RECORD if raw else 0
        if raw and records - self._sorted + len(new) <= MAX_TAIL and self._append(new):
            self._raw += b"".join(new)
            return
        kept: set[bytes] = set(new)
        if records + len(new) <= MAX_RECORDS:
            kept.update(
                raw[at : at + RECORD] for at in range(HEAD, HEAD + records * RECORD, RECORD)
            )
        ordered = sorted(kept)[:MAX_RECORDS]
        header = self._key + self._salt + len(ordered).to_bytes(8, "big")
        self._raw = header + b"".join(ordered)
        self._sorted = len(ordered)
        self._tail = set()
        self._file = _replace(cache, self._name, self._raw)
        _prune(cache, self._name, ".verdicts", MAX_VERDICT_FILES)

    def _append(self, new: list[bytes]) -> bool:
        """Append ``new`` to the verdict file this run read (``False`` when it is not there:
        replaced by another run, grown past the limits, or unsafe)."""
        assert self._cache is not None
        try:
            fd = os.open(
                self._cache / self._name, os.O_WRONLY | os.O_APPEND | _NOFOLLOW | _NONBLOCK
            )
        except OSError:
            return False
        try:
            st = os.fstat(fd)
            limit = HEAD + (MAX_RECORDS - len(new)) * RECORD
            if not _private_file(st, limit) or (st.st_dev, st.st_ino) != self._file:
                return False
            os.write(fd, b"".join(new))
            return True
        except OSError:
            return False
        finally:
            os.close(fd)


def _prune(cache: Path, written: str, suffix: str, keep: int) -> None:
    """Remove the least recently written files of ``suffix`` beyond ``keep``, ``written``
    (just written) kept (errors are ignored)."""
    try:
        names = [n for n in os.listdir(cache) if n.endswith(suffix) and n != written]
    except OSError:
        return
    if len(names) < keep:
        return
    aged: list[tuple[int, str]] = []
    for name in names:
        try:
            st = os.lstat(cache / name)
        except OSError:
            continue  # (removed meanwhile)
        if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):  # (a link itself: unlinked)
            aged.append((st.st_mtime_ns, name))
    aged.sort()
    excess = len(aged) - keep + 1  # (entries that are not files do not count)
    for _mtime, name in aged[: max(0, excess)]:
        with contextlib.suppress(OSError):  # (one that cannot go does not stop the others)
            os.unlink(cache / name)
