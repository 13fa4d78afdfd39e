"""Simulation results kept in the user's cache between runs (ssrisk/simcache.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from ssrisk import embedded_sim, simcache

MANIFEST = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres:16
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("SSRISK_NO_CACHE", raising=False)
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "sts.yaml").write_text(MANIFEST)
    return tmp_path


def _check(home: Path) -> str:
    """A run as a new process makes it: nothing of the simulator's in memory."""
    embedded_sim.cache_clear()
    run = run_cli("check", "--format", "json", str(home / "repo" / "sts.yaml"))
    assert run.code in (0, 1), run.err
    return run.out


def _entries(home: Path) -> list[Path]:
    root = home / "cache" / "ssrisk" / "simulations"
    return sorted(p for d in root.iterdir() for p in d.iterdir())


def test_a_later_run_reads_the_results_and_reports_the_same(home: Path) -> None:
    first = _check(home)
    kept = _entries(home)
    assert kept and all(p.stat().st_mode & 0o077 == 0 for p in kept)
    assert embedded_sim.cache_info()["store_hits"] == 0
    second = _check(home)
    assert second == first
    info = embedded_sim.cache_info()
    assert info["store_hits"] == len(kept) == info["misses"]
    assert _entries(home) == kept
    text = b"".join(p.read_bytes() for p in kept)
    assert b"db-0" not in text and b"shop" not in text  # (names are placeholders)


def test_a_renamed_set_is_read_from_the_store(home: Path) -> None:
    _check(home)
    renamed = MANIFEST.replace("db", "orders").replace("shop", "sales")
    (home / "repo" / "sts.yaml").write_text(renamed)
    _check(home)
    assert embedded_sim.cache_info()["store_hits"] > 0


def test_links_and_fifos_in_the_store_are_not_followed(home: Path, tmp_path: Path) -> None:
    first = _check(home)
    outside = tmp_path / "outside"
    outside.write_bytes(b"not a result")
    kept = _entries(home)
    for i, path in enumerate(kept):
        path.unlink()
        if i % 2:
            os.mkfifo(path)
        else:
            path.symlink_to(outside)
    # (a FIFO opened for reading would wait for a writer: a child process, with a timeout)
    code = (
        "import sys; from ssrisk.cli import main; "
        f"sys.exit(main(['check', '--format', 'json', {str(home / 'repo' / 'sts.yaml')!r}]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert run.stdout == first
    assert outside.read_bytes() == b"not a result"
    for path in kept:  # each simulated again and written anew: the link replaced, not followed
        assert path.is_file() and not path.is_symlink()


def test_a_shared_cache_directory_is_not_used(home: Path) -> None:
    root = home / "cache" / "ssrisk"
    root.mkdir(mode=0o700)
    (root / "simulations").mkdir(mode=0o777)
    os.chmod(root / "simulations", 0o777)  # (whatever the umask)
    _check(home)
    assert list((root / "simulations").iterdir()) == []


def test_no_cache_turns_the_store_off(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSRISK_NO_CACHE", "1")
    _check(home)
    assert not (home / "cache" / "ssrisk").exists()


def test_the_store_holds_at_most_max_entries(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simcache, "MAX_ENTRIES", 2)
    _check(home)
    first = _entries(home)
    assert len(first) == 2
    (home / "repo" / "sts.yaml").write_text(MANIFEST.replace("replicas: 3", "replicas: 4"))
    _check(home)  # (full: the older half goes, and new behaviours are kept)
    second = _entries(home)
    assert len(second) == 2 and second != first


def test_a_changed_or_misplaced_entry_is_a_miss(home: Path) -> None:
    first = _check(home)
    kept = _entries(home)
    data = [p.read_bytes() for p in kept]
    kept[0].write_bytes(data[0][:-1] + bytes([data[0][-1] ^ 1]))  # (one bit of the result)
    kept[1].write_bytes(data[2])  # (another key's entry in its place)
    assert _check(home) == first
    assert embedded_sim.cache_info()["store_hits"] == len(kept) - 2


def test_the_store_holds_at_most_max_total_bytes(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _check(home)
    kept = _entries(home)
    sizes = sorted(p.stat().st_size for p in kept)
    for path in kept:
        path.unlink()
    assert len(sizes) >= 2
    monkeypatch.setattr(simcache, "MAX_TOTAL_BYTES", sum(sizes) - 1)  # (one byte short)
    _check(home)
    assert 1 <= len(_entries(home)) < len(kept)
    assert sum(p.stat().st_size for p in _entries(home)) <= sum(sizes) - 1


def test_another_simulator_uses_another_directory_and_old_ones_go(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _check(home)
    root = home / "cache" / "ssrisk" / "simulations"
    for i in range(simcache.KEPT_IDENTITIES + 2):
        monkeypatch.setattr(simcache, "_identity", lambda i=i: f"another simulator {i}")
        os.utime(next(root.iterdir()), (i, i))  # (the oldest first)
        assert _check(home) == first
        assert embedded_sim.cache_info()["store_hits"] == 0
    kept = sorted(root.iterdir(), key=lambda d: d.stat().st_mtime_ns)
    assert len(kept) == simcache.KEPT_IDENTITIES + 1
