"""Simulation results kept in the user's cache directory between runs.

Within a run, StatefulSets that behave alike share one simulation per scenario
(``embedded_sim/memo.py``). This store keeps those results for later runs too, under

    ``$XDG_CACHE_HOME/ssrisk/simulations/<identity>/`` (default ``~/.cache/ssrisk/...``)

so that a pre-commit hook checking a changed file whose failover behaviour did not change (a
new image tag, labels, names), or a CI run over a repository checked before, does not run the
simulator again. A result is the same read from the store as simulated: the store holds the
placeholder-named result of the in-process cache (no name, namespace or label value of the
repository), written and read exactly typed (``embedded_sim/persist.py``), and a hit charges
the set's simulation budget the steps the run took, as an in-process hit does.

* **Identity.** The directory is named after a digest of the simulator's source files (the
  package's real path, and each file's path, size and modification time), the versions of
  Python and msgspec, and the store's format. A changed, upgraded or reinstalled simulator
  uses a new directory; a run removes all but the :data:`KEPT_IDENTITIES` most recently
  used others.
* **Entries.** A file per result, named after a 16-byte BLAKE2b digest of its key (the
  behaviour: the parsed workload without names, the storage it resolves to, the PDBs'
  budgets, the scenario, Kubernetes version, feature gates, cluster profile and horizon)
  keyed with the identity, that starts with a keyed digest of the key and the result
  (:data:`SEAL` bytes): an entry with a changed byte, or another key's entry copied in its
  place, is a miss. At most :data:`MAX_ENTRIES` files of at most :data:`MAX_BYTES`,
  :data:`MAX_TOTAL_BYTES` in all: a run that finds the directory full removes the least
  recently written half of it first.
* **Safety.** As the schema cache (:mod:`ssrisk.schemacache`): directories that are real,
  private and this user's; files opened without following links or waiting on a FIFO,
  regular, private and this user's, written to a new private file and renamed into place.
  Nothing in a repository decides a path. A file that does not decode is a miss.
  ``SSRISK_NO_CACHE=1`` turns the store off, with the schema cache.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from . import schemacache

#: Result files an identity's directory holds at most (a result is 1-4 KB).
MAX_ENTRIES = 8192
#: A result file larger than this is not read (a 250-replica set's is about 40 KB).
MAX_BYTES = 1024 * 1024
#: Bytes of result files an identity's directory holds at most (a repository of large sets
#: cannot fill the disk: MAX_ENTRIES files of MAX_BYTES would be 8 GiB).
MAX_TOTAL_BYTES = 64 * 1024 * 1024
#: Directories of other simulator identities kept besides the current one.
KEPT_IDENTITIES = 3
#: Bytes of the check each entry starts with (:meth:`SimulationStore._seal`).
SEAL = 16


def _identity() -> str:
    """What the stored results depend on besides their keys (see the module docstring)."""
    import msgspec

    from .embedded_sim import persist

    package = os.path.realpath(os.path.dirname(persist.__file__))
    parts = [
        f"ssrisk-simulations/{persist.FORMAT}",
        f"python {sys.version}",
        f"msgspec {msgspec.__version__}",
        package,
    ]
    todo = [""]
    while todo:  # (one stat a file: the package's real path is resolved once)
        sub = todo.pop()
        with os.scandir(os.path.join(package, sub)) as found:
            entries = sorted(found, key=lambda e: e.name)
        for e in entries:
            name = os.path.join(sub, e.name)
            if e.is_dir(follow_symlinks=False) and e.name != "__pycache__":
                todo.append(name)
            elif e.name.endswith(".py"):
                st = e.stat()
                parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "\n".join(parts)


class SimulationStore:
    """A :class:`ssrisk.embedded_sim.memo.ResultStore` in ``root`` (the ``simulations``
    directory of the cache). Never raises: an entry it cannot read or write is a miss."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._ready = False
        self._dir: Path | None = None
        self._key = b""
        self._usage: list[int] | None = None  # (files, bytes) in the directory
        self._evicted = False

    def _directory(self) -> Path | None:
        if not self._ready:
            self._ready = True
            try:
                identity = _identity()
            except OSError:
                return None
            self._key = schemacache._blake2b()(identity.encode(), digest_size=32).digest()
            path = self._root / schemacache.short_digest(identity)
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            except OSError:
                return None
            if schemacache._private_directory(path):
                self._dir = path
        return self._dir

    def _name(self, digest_input: bytes) -> str:
        blake2b = schemacache._blake2b()
        return str(blake2b(digest_input, key=self._key, digest_size=16).hexdigest())

    def _seal(self, digest_input: bytes, data: bytes) -> bytes:
        """The check an entry starts with: a keyed BLAKE2b digest of its key and its data."""
        blake2b = schemacache._blake2b()
        mac = blake2b(digest_input, key=self._key, digest_size=SEAL, person=b"ssrisk-sim-key")
        mac.update(data)
        return bytes(mac.digest())

    def load(self, digest_input: bytes) -> bytes | None:
        """The bytes kept for ``digest_input``, or ``None`` (also for an entry whose check
        does not match: a changed byte, or another key's entry in its place)."""
        path = self._directory()
        if path is None:
            return None
        raw = schemacache._read_private(path, self._name(digest_input), MAX_BYTES + SEAL)
        if raw is None or len(raw) < SEAL:
            return None
        data = raw[SEAL:]
        return data if raw[:SEAL] == self._seal(digest_input, data) else None

    def save(self, digest_input: bytes, data: bytes) -> None:
        """Keep ``data`` for ``digest_input`` (while the directory has room)."""
        path = self._directory()
        if path is None or len(data) > MAX_BYTES:
            return
        if self._usage is None:
            self._usage = _usage(path)
            _prune(self._root, keep=path.name)
        files, size = self._usage
        sealed = self._seal(digest_input, data) + data
        if (files >= MAX_ENTRIES or size + len(sealed) > MAX_TOTAL_BYTES) and not self._evicted:
            self._evicted = True  # (once a run: the older half goes, the store keeps learning)
            self._usage = _evict(path)
            files, size = self._usage
        if files >= MAX_ENTRIES or size + len(sealed) > MAX_TOTAL_BYTES:
            return
        if schemacache._replace(path, self._name(digest_input), sealed) is not None:
            self._usage = [files + 1, size + len(sealed)]


def _usage(path: Path) -> list[int]:
    """``[files, bytes]`` in ``path`` (entries that are not regular files count as full)."""
    files = size = 0
    try:
        with os.scandir(path) as found:
            for entry in found:
                files += 1
                st = entry.stat(follow_symlinks=False)
                size += st.st_size if stat.S_ISREG(st.st_mode) else MAX_BYTES
    except OSError:
        return [MAX_ENTRIES, MAX_TOTAL_BYTES]  # (unreadable: write nothing)
    return [files, size]


def _evict(path: Path) -> list[int]:
    """Remove the least recently written half of the result files in ``path`` (links and
    files, unlinked, never followed); ``[files, bytes]`` left. Errors are ignored."""
    try:
        with os.scandir(path) as found:
            entries = [(e.stat(follow_symlinks=False), e) for e in found]
        files = [(st.st_mtime_ns, e.path) for st, e in entries if not stat.S_ISDIR(st.st_mode)]
        files.sort()
        for _, name in files[: (len(files) + 1) // 2]:
            os.unlink(name)
    except OSError:
        pass
    return _usage(path)


def _prune(root: Path, keep: str) -> None:
    """Remove the directories of other identities beyond :data:`KEPT_IDENTITIES`, least
    recently modified first: their regular files and links (unlinked, never followed), then
    the directory if that emptied it. Errors are ignored."""
    try:
        with os.scandir(root) as found:
            others = [e for e in found if e.name != keep and e.is_dir(follow_symlinks=False)]
        others.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns, reverse=True)
        for entry in others[KEPT_IDENTITIES:]:
            with os.scandir(entry.path) as files:
                for f in files:
                    if not stat.S_ISDIR(f.stat(follow_symlinks=False).st_mode):
                        os.unlink(f.path)
            os.rmdir(entry.path)
    except OSError:
        pass


def attach() -> None:
    """Give the simulator's result cache the user's store (``None`` when the cache is off or
    unsafe: results are then kept for this process only)."""
    from .embedded_sim.memo import CACHE

    root = schemacache.directory("simulations")
    CACHE.store = SimulationStore(root) if root is not None else None
