"""Per-kind schemas in the user's cache: the same validation as the full definitions, read only
when the cache is safe to read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import DATA

from ssrisk import schemacache, validation
from ssrisk.engine import load_all
from ssrisk.settings import Settings

#: Inputs with every modelled kind, valid and invalid objects (wrong types, unknown fields,
#: out-of-range values).
INPUTS = [str(DATA / d) for d in ("rules", "bad", "robust", "textbook", "perf")]


def _validated(version: str) -> list[str]:
    """Every validation error and warning of INPUTS, in order, validated afresh."""
    validation._SCHEMAS.clear()
    loaded, errors = load_all(INPUTS, Settings(kube_version=version))
    out = [str(e) for e in errors]
    for lf in loaded:
        out.extend(str(e) for e in lf.errors)
        out.extend(f"{n.path}:{n.line}: {n.message}" for n in lf.notices)
    return out


@pytest.fixture
def cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("SSRISK_NO_CACHE", raising=False)
    yield tmp_path
    validation._SCHEMAS.clear()


@pytest.mark.parametrize("version", ["1.29", "1.37"])
def test_cached_schemas_validate_like_the_full_definitions(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    monkeypatch.setenv("SSRISK_NO_CACHE", "1")
    full = _validated(version)
    assert any("unknown field" in x or "is not of type" in x for x in full), full[:5]
    monkeypatch.delenv("SSRISK_NO_CACHE")
    cold = _validated(version)  # writes the cache
    written = sorted(p.name for p in (cache_home / "ssrisk" / "schemas").iterdir())
    assert f"v1.{version.split('.')[1]}.0-local-strict-statefulset-apps-v1.json" in written
    warm = _validated(version)  # reads it
    assert full == cold == warm
    # the warm run never parsed the 1.5 MB definitions file
    assert all(s._registry is None for s in validation._SCHEMAS.values())


def test_nothing_is_written_next_to_the_checked_files(cache_home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "sts.yaml").write_bytes((DATA / "perf" / "risky.yaml").read_bytes())
    _validated("1.34")
    validation._SCHEMAS.clear()
    load_all([str(repo)], Settings())
    assert [p.name for p in repo.iterdir()] == ["sts.yaml"]


def test_an_unsafe_cache_directory_is_not_used(cache_home: Path) -> None:
    target = cache_home / "elsewhere"
    target.mkdir()
    (cache_home / "ssrisk").symlink_to(target)
    assert schemacache.directory() is None
    (cache_home / "ssrisk").unlink()
    (cache_home / "ssrisk").mkdir(mode=0o777)
    os.chmod(cache_home / "ssrisk", 0o777)  # writable by others
    assert schemacache.directory() is None
    os.chmod(cache_home / "ssrisk", 0o700)
    assert schemacache.directory() == cache_home / "ssrisk" / "schemas"


def test_stale_broken_or_linked_cache_files_are_not_read(cache_home: Path) -> None:
    cache = schemacache.directory()
    assert cache is not None
    schemacache.write(cache, "x.json", "key-1", {"a": 1})
    assert schemacache.read(cache, "x.json", "key-1") == {"a": 1}
    assert schemacache.read(cache, "x.json", "key-2") is None  # another source: stale
    (cache / "broken.json").write_text('{"key": "key-1", "value": ')
    assert schemacache.read(cache, "broken.json", "key-1") is None
    (cache / "link.json").symlink_to(cache / "x.json")
    assert schemacache.read(cache, "link.json", "key-1") is None
    os.chmod(cache / "x.json", 0o666)
    assert schemacache.read(cache, "x.json", "key-1") is None
    # a broken cache file of a kind: validation builds from the sources and rewrites it
    _validated("1.34")
    name = "v1.34.0-local-strict-statefulset-apps-v1.json"
    (cache / name).write_text('{"key": "nope", "value": {}}')
    assert _validated("1.34") == _validated("1.34")
    assert "nope" not in (cache / name).read_text()
