"""Per-kind Kubernetes schemas kept in the user's cache directory, so that a run parses only
the definitions its kinds use.

``kubernetes-validate`` ships one definitions file per Kubernetes minor (about 1.5 MB, 730
definitions) that every kind's schema refers into; parsing it and building a registry of it
took about 15 ms of every run, most of a pre-commit hook's time after the imports. The first
run that validates a kind writes that kind's schema with only the definitions it reaches
(a StatefulSet reaches 124 of them, 220 KB) to

    ``$XDG_CACHE_HOME/ssrisk/schemas/`` (default ``~/.cache/ssrisk/schemas/``)

and later runs read that file instead. Validation is the same either way: the definitions
keep their document id, so every ``$ref`` resolves to the same definition
(tests/test_schema_cache.py compares both).

The cache is outside any checked repository and nothing in a repository decides its path or
content. It is used only when it is safe: every directory of it is a real directory (not a
link) owned by this user and writable by nobody else, and a cache file is a regular file
owned by this user, opened without following links, not larger than :data:`MAX_BYTES`, that
names the exact source files (path, size, modification time) it was derived from. Files are
written to a new private temporary file and renamed into place. Anything else (no home
directory, a read-only disk, a file of another version) just means the full definitions are
read, as without a cache; ``SSRISK_NO_CACHE=1`` turns the cache off.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import msgspec

#: Bump when what is written changes (the schema hook, the format).
FORMAT = 1
#: A cache file larger than this is not read (the largest kind's is about 250 KB).
MAX_BYTES = 8 * 1024 * 1024


def directory() -> Path | None:
    """The schema cache directory, created if missing; ``None`` when it is off or unsafe."""
    if os.environ.get("SSRISK_NO_CACHE"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or ""
    if not os.path.isabs(base):  # the XDG spec: a relative value is ignored
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            return None
        base = os.path.join(home, ".cache")
    path = Path(base)
    for part in (path, path / "ssrisk", path / "ssrisk" / "schemas"):
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
        if not _private_directory(part):
            return None
    return path / "ssrisk" / "schemas"


def _private_directory(path: Path) -> bool:
    try:
        st = os.lstat(path)
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


def read(cache: Path, name: str, key: str) -> Any:
    """The value stored as ``name`` for ``key``, or ``None`` (missing, stale or unsafe)."""
    try:
        fd = os.open(cache / name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_uid != os.geteuid()
            or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            or st.st_size > MAX_BYTES
        ):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        doc = msgspec.json.decode(raw)  # (twice as fast as json.loads: paid by every run)
    except ValueError:  # (msgspec.DecodeError is one)
        return None
    if not isinstance(doc, dict) or doc.get("key") != key:
        return None
    return doc.get("value")


def write(cache: Path, name: str, key: str, value: Any) -> None:
    """Store ``value`` as ``name`` for ``key`` (atomically; errors are ignored)."""
    import tempfile

    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=cache)  # O_EXCL, mode 0600
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"key": key, "value": value}, fh, separators=(",", ":"))
        os.replace(tmp, cache / name)  # replaces a link itself, never writes through it
        tmp = None
    except (OSError, TypeError, ValueError):
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
