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
def cache_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("cache-home")  # (outside the tests' checked tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("SSRISK_NO_CACHE", raising=False)
    yield home
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
    schemas = cache_home / "ssrisk" / "schemas"
    prefix = f"v1.{version.split('.')[1]}.0-local-strict-statefulset-apps-v1-"
    assert len(list(schemas.glob(prefix + "????????.json"))) == 1
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


def test_the_cache_home_may_be_a_link_to_a_private_directory(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~/.cache`` linked to another disk is common: the base may be a link, ssrisk's own
    directories under it may not, and the base's target must still be private."""
    target = cache_home / "disk"
    target.mkdir(mode=0o700)
    link = cache_home / "linked"
    link.symlink_to(target)
    monkeypatch.setenv("XDG_CACHE_HOME", str(link))
    assert schemacache.directory() == link / "ssrisk" / "schemas"
    assert (target / "ssrisk" / "schemas").is_dir()
    os.chmod(target, 0o777)  # the target writable by others
    assert schemacache.directory() is None
    os.chmod(target, 0o700)
    if os.geteuid() == 0:  # a link another user owns (and could point elsewhere later)
        os.lchown(link, 65534, 65534)
        assert schemacache.directory() is None
        os.lchown(link, 0, 0)
        assert schemacache.directory() == link / "ssrisk" / "schemas"
    (target / "ssrisk" / "schemas").rmdir()
    (target / "ssrisk" / "schemas").symlink_to(target)  # a link below the base
    assert schemacache.directory() is None


@pytest.mark.parametrize("value", ["0", "false", "No", " off ", ""])
def test_a_no_cache_value_that_says_no_leaves_the_cache_on(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("SSRISK_NO_CACHE", value)
    assert schemacache.directory() == cache_home / "ssrisk" / "schemas"
    monkeypatch.setenv("SSRISK_NO_CACHE", "1")
    assert schemacache.directory() is None
    monkeypatch.setenv("SSRISK_NO_CACHE", "yes")
    assert schemacache.directory() is None


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
    (found,) = cache.glob("v1.34.0-local-strict-statefulset-apps-v1-*.json")
    name = found.name
    (cache / name).write_text('{"key": "nope", "value": {}}')
    assert _validated("1.34") == _validated("1.34")
    assert "nope" not in (cache / name).read_text()


# --- verdicts: values a schema accepted are not validated again --------------------------------


def test_a_warm_run_validates_only_what_the_schemas_did_not_accept(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[tuple[str, str]] = []
    validator = validation._Schemas.validator

    def counted(self: validation._Schemas, api_version: str, kind: str) -> object:
        built.append((api_version, kind))
        return validator(self, api_version, kind)

    monkeypatch.setattr(validation._Schemas, "validator", counted)
    cold = _validated("1.34")
    cold_calls = len(built)
    built.clear()
    warm = _validated("1.34")
    assert cold == warm
    # every object was looked at cold; warm, only those with a schema problem (INPUTS has
    # dozens of them) and none of the accepted ones
    assert 0 < len(built) < cold_calls / 2, (len(built), cold_calls)
    names = {p.name for p in (cache_home / "ssrisk" / "schemas").iterdir()}
    assert any(
        n.startswith("v1.34.0-local-strict-statefulset-apps-v1-") and n.endswith(".verdicts")
        for n in names
    ), names


STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  serviceName: web
  replicas: %s
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx%s}]
"""


def _problems(path: Path) -> list[str]:
    validation._SCHEMAS.clear()
    loaded, errors = load_all([str(path)], Settings(kube_version="1.34"))
    assert not errors
    (lf,) = loaded
    return [str(e) for e in lf.errors] + [n.message for n in lf.notices]


@pytest.mark.parametrize(
    ("replicas", "extra", "problem"),
    [
        ('"3"', "", "expected integer"),  # an error: the object is not checked
        ("3", ", colour: blue", "unknown field"),  # a warning: checked, field dropped
        # a problem of the API server's own validation, which ssrisk checks beside the schema
        ("3\n  podManagementPolicy: Sometimes", "", "is not OrderedReady or Parallel"),
    ],
)
def test_a_value_with_a_schema_problem_is_never_taken_as_accepted(
    cache_home: Path, tmp_path: Path, replicas: str, extra: str, problem: str
) -> None:
    sts = tmp_path / "sts.yaml"
    sts.write_text(STS % (replicas, extra))
    first = _problems(sts)
    assert any(problem in p for p in first), first
    assert _problems(sts) == first
    schemas = cache_home / "ssrisk" / "schemas"
    pattern = "v1.34.0-local-strict-statefulset-apps-v1-*.verdicts"
    assert [v.stat().st_size for v in schemas.glob(pattern)] in ([], [schemacache.HEAD])
    # the same object made valid is accepted, kept, and gives no problem when read back
    sts.write_text(STS % ("3", ""))
    assert _problems(sts) == _problems(sts) == []
    (verdicts,) = schemas.glob(pattern)
    assert verdicts.stat().st_size == schemacache.HEAD + schemacache.RECORD


def _verdicts(cache: Path, key: str = "k") -> schemacache.Verdicts:
    return schemacache.Verdicts(cache, "t.verdicts", key)


def _kept(verdicts: schemacache.Verdicts, value: object) -> bytes:
    """The digest of ``value``, added to ``verdicts`` and saved."""
    digest = verdicts.digest(value)
    assert digest is not None
    verdicts.add(digest)
    verdicts.save()
    return digest


def test_verdicts_are_keyed_by_their_schema(cache_home: Path) -> None:
    cache = schemacache.directory()
    assert cache is not None
    one = _verdicts(cache, "schema one")
    digest = one.digest({"kind": "StatefulSet", "spec": {"replicas": 3}})
    assert digest is not None and len(digest) == schemacache.RECORD
    assert not one.accepted(digest)
    one.add(digest)
    assert one.accepted(digest)
    one.save()
    assert _verdicts(cache, "schema one").accepted(digest)
    # another schema (or library, or version) reads the file as not its own
    other = _verdicts(cache, "schema two")
    assert not other.accepted(digest)
    assert not other.accepted(other.digest({"kind": "StatefulSet", "spec": {"replicas": 3}}))
    # the cache off: nothing is digested or kept
    off = schemacache.Verdicts(None, "t.verdicts", "schema one")
    assert off.digest({"a": 1}) is None
    # a value with no JSON form is not digested
    assert one.digest({"a": "\ud800"}) is None


def test_verdicts_are_appended_then_rewritten_sorted(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = schemacache.directory()
    assert cache is not None
    monkeypatch.setattr(schemacache, "MAX_TAIL", 5)
    digests = []
    for run in range(4):  # four runs of three new values each
        v = _verdicts(cache)
        assert all(v.accepted(d) for d in digests)
        new = [v.digest({"run": run, "n": n}) for n in range(3)]
        assert all(d is not None and not v.accepted(d) for d in new)
        for d in new:
            assert d is not None
            v.add(d)
        v.save()
        digests.extend(d for d in new if d is not None)
    raw = (cache / "t.verdicts").read_bytes()
    sorted_count = int.from_bytes(raw[schemacache.HEAD - 8 : schemacache.HEAD], "big")
    records = [raw[i : i + 16] for i in range(schemacache.HEAD, len(raw), 16)]
    # run 1 wrote 3 sorted; run 2 appended 3 (a tail of 3); run 3's would make 6 > 5: it
    # rewrote all 9 sorted; run 4 appended 3
    assert (len(records), sorted_count) == (12, 9)
    assert records[:9] == sorted(records[:9])
    assert sorted(records) == sorted(digests)
    assert all(_verdicts(cache).accepted(d) for d in digests)
    # a full file starts anew with the run's own verdicts
    monkeypatch.setattr(schemacache, "MAX_RECORDS", 12)
    v = _verdicts(cache)
    fresh = v.digest({"run": "last"})
    assert fresh is not None
    v.add(fresh)
    v.save()
    assert _verdicts(cache).accepted(fresh)
    assert not any(_verdicts(cache).accepted(d) for d in digests)


def test_torn_linked_or_foreign_verdict_files_are_not_trusted(cache_home: Path) -> None:
    cache = schemacache.directory()
    assert cache is not None
    digest = _kept(_verdicts(cache), {"a": 1})
    path = cache / "t.verdicts"
    good = path.read_bytes()
    key_and_salt, records = good[: schemacache.HEAD - 8], good[schemacache.HEAD :]
    assert records == digest

    def written(sorted_count: int, body: bytes) -> schemacache.Verdicts:
        path.write_bytes(key_and_salt + sorted_count.to_bytes(8, "big") + body)
        return _verdicts(cache)

    # a torn record before it (another run's half-written append) misaligns the digest, and
    # one that straddles two records is never matched
    assert not written(0, b"\0" * 7 + records).accepted(digest)
    assert not written(0, b"\0" * 8 + records + b"\0" * 8).accepted(digest)
    # a header whose sorted count runs past the file: the file is not used
    assert not written(9, records).accepted(digest)
    assert written(1, records).accepted(digest) and written(0, records).accepted(digest)
    # written by others, or a link to a good file: not read, and not appended to
    path.write_bytes(good)
    assert _verdicts(cache).accepted(digest)
    os.chmod(path, 0o622)
    assert not _verdicts(cache).accepted(digest)
    os.chmod(path, 0o600)
    path.rename(cache / "real.verdicts")
    path.symlink_to(cache / "real.verdicts")
    assert not _verdicts(cache).accepted(digest)
    linked = _verdicts(cache)
    other = linked.digest({"b": 2})
    assert other is not None
    linked.add(other)
    linked.save()  # replaces the link with a file; the file it pointed to is unchanged
    assert not path.is_symlink()
    assert (cache / "real.verdicts").read_bytes() == good


def test_a_verdict_file_keeps_its_limits(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = schemacache.directory()
    assert cache is not None
    # more new verdicts than a file holds: the first MAX_RECORDS, and the file reads back
    monkeypatch.setattr(schemacache, "MAX_RECORDS", 10)
    v = _verdicts(cache)
    new = [v.digest({"n": n}) for n in range(25)]
    for d in new:
        assert d is not None
        v.add(d)
    v.save()
    size = (cache / "t.verdicts").stat().st_size
    assert size == schemacache.HEAD + 10 * schemacache.RECORD
    assert sum(_verdicts(cache).accepted(d) for d in new if d is not None) == 10
    # a tail grown past twice MAX_TAIL (runs appending at once) is not read
    monkeypatch.setattr(schemacache, "MAX_RECORDS", 1000)
    monkeypatch.setattr(schemacache, "MAX_TAIL", 2)
    raw = (cache / "t.verdicts").read_bytes()
    head = raw[: schemacache.HEAD - 8]
    extra = [v.digest({"extra": n}) or b"" for n in range(5)]
    for count in (4, 5):
        (cache / "t.verdicts").write_bytes(head + (0).to_bytes(8, "big") + b"".join(extra[:count]))
        assert _verdicts(cache).accepted(extra[0]) == (count <= 4)
    # each file has its own salt: the same value under the same key, another digest
    other = Path(str(cache_home) + "-other")
    monkeypatch.setenv("XDG_CACHE_HOME", str(other))
    elsewhere = schemacache.directory()
    assert elsewhere is not None
    assert _verdicts(elsewhere).digest({"n": 1}) != _verdicts(cache).digest({"n": 1})


def test_a_file_replaced_meanwhile_is_not_appended_to(cache_home: Path) -> None:
    cache = schemacache.directory()
    assert cache is not None
    d1 = _kept(_verdicts(cache), {"n": 1})
    reader = _verdicts(cache)  # reads the file with d1
    _kept(_verdicts(cache), {"n": 2})  # an append: same file
    os.rename(cache / "t.verdicts", cache / "t.old")
    (cache / "t.verdicts").write_bytes((cache / "t.old").read_bytes())  # another inode
    os.chmod(cache / "t.verdicts", 0o600)
    d3 = _kept(reader, {"n": 3})  # not appended to a file it did not read: rewritten sorted
    raw = (cache / "t.verdicts").read_bytes()
    count = int.from_bytes(raw[schemacache.HEAD - 8 : schemacache.HEAD], "big")
    assert count == (len(raw) - schemacache.HEAD) // schemacache.RECORD == 2
    assert _verdicts(cache).accepted(d1) and _verdicts(cache).accepted(d3)


def test_two_installs_sharing_the_cache_keep_their_own_schemas(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two installs (another kubernetes-validate, another ssrisk: here another format) wrote
    one file per kind in turn, and each then rebuilt its validators from the full
    definitions on every other run."""
    ours = schemacache.FORMAT
    _validated("1.34")  # this install
    monkeypatch.setattr(schemacache, "FORMAT", ours + 1)
    _validated("1.34")  # another
    schemas = cache_home / "ssrisk" / "schemas"
    assert len(list(schemas.glob("v1.34.0-local-strict-statefulset-apps-v1-*.json"))) == 2
    monkeypatch.setattr(schemacache, "FORMAT", ours)
    _validated("1.34")  # the first again: its file is still there
    assert all(s._registry is None for s in validation._SCHEMAS.values())


def test_the_cache_keeps_a_bounded_number_of_schema_files(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = schemacache.directory()
    assert cache is not None
    monkeypatch.setattr(schemacache, "MAX_SCHEMA_FILES", 3)
    (cache / "a.verdicts").write_bytes(b"")  # another kind of file: left alone
    (cache / "stuck.json").mkdir()  # not a file: neither removed nor in the way
    for n in range(6):
        schemacache.write(cache, f"k{n}.json", "key", {"n": n})
        os.utime(cache / f"k{n}.json", ns=(n * 10**9, n * 10**9))
    assert sorted(p.name for p in cache.glob("*.json")) == [
        "k3.json",
        "k4.json",
        "k5.json",
        "stuck.json",
    ]
    assert (cache / "a.verdicts").exists()
    # fewer files than it keeps, other entries beside them: nothing is removed (the count
    # of files, not of entries, decides)
    monkeypatch.setattr(schemacache, "MAX_SCHEMA_FILES", 12)
    for n in range(6, 13):
        (cache / f"k{n}.json").write_text("{}")
    for n in range(5):
        (cache / f"d{n}.json").mkdir()
    schemacache.write(cache, "new.json", "key", {})  # 10 files, 6 other entries
    assert len(list(cache.glob("k*.json"))) == 10 and (cache / "new.json").exists()


def test_the_cache_keeps_a_bounded_number_of_verdict_files(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = schemacache.directory()
    assert cache is not None
    monkeypatch.setattr(schemacache, "MAX_VERDICT_FILES", 3)
    for n in range(6):
        _kept(schemacache.Verdicts(cache, f"k{n}.verdicts", f"kind {n}"), {"n": n})
        os.utime(cache / f"k{n}.verdicts", ns=(n * 10**9, n * 10**9))
    assert sorted(p.name for p in cache.glob("*.verdicts")) == [
        "k3.verdicts",
        "k4.verdicts",
        "k5.verdicts",
    ]


def test_verdicts_hold_for_the_gates_and_checks_they_were_made_with(
    cache_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a StatefulSet's spec is valid depends on the feature gates (the Recreate
    update strategy) and on ssrisk's own checks: a verdict made under other gates, or by
    other code, is not used."""
    sts = tmp_path / "sts.yaml"
    sts.write_text(STS % ("3", ""))
    built: list[str] = []
    validator = validation._Schemas.validator

    def counted(self: validation._Schemas, api_version: str, kind: str) -> object:
        built.append(kind)
        return validator(self, api_version, kind)

    monkeypatch.setattr(validation._Schemas, "validator", counted)

    def validated(**gates: bool) -> int:
        built.clear()
        validation._SCHEMAS.clear()
        load_all([str(sts)], Settings(kube_version="1.34", feature_gates=gates or None))
        return len(built)

    assert validated() == 1  # cold
    assert validated() == 0  # a verdict
    assert validated(MaxUnavailableStatefulSet=True) == 1  # other gates
    assert validated(MaxUnavailableStatefulSet=True) == 0
    assert validated() == 0  # (a file each: the two do not take turns)
    files = (cache_home / "ssrisk" / "schemas").glob("*statefulset-apps-v1-*.verdicts")
    assert len(list(files)) == 2
    validation._checks_identity.cache_clear()
    monkeypatch.setattr(validation, "_checks_identity", lambda: "other checks")
    assert validated() == 1  # other code


def test_the_checks_identity_names_every_module_the_checks_read() -> None:
    """A verdict holds for the code of ssrisk's own checks: every simulator module that
    validation.py imports is part of what identifies them (a check that reads another
    module must add it there)."""
    import ast

    tree = ast.parse(Path(validation.__file__).read_text(encoding="utf-8"))
    read = {
        f"{node.module.split('.')[-1]}.py"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.level == 1
        and (node.module or "").startswith("embedded_sim.")
    }
    assert read, "validation.py reads no simulator module?"
    named = {Path(part.split(":")[0]).name for part in validation._checks_identity().split()}
    read.discard("lazyre.py")  # (compiles patterns: decides nothing)
    assert read <= named, read - named
    assert "validation.py" in named


def test_a_fifo_in_place_of_a_cache_file_is_not_waited_for(cache_home: Path) -> None:
    """A named pipe where a schema or verdict file should be is not a private regular file:
    it is skipped, not opened until a writer comes (the run hung)."""
    import subprocess
    import sys

    _validated("1.34")  # writes the schema and verdict files
    schemas = cache_home / "ssrisk" / "schemas"
    for path in [*schemas.glob("*statefulset*.verdicts"), *schemas.glob("*statefulset*.json")]:
        path.unlink()
        os.mkfifo(path, 0o600)
    script = (
        "import sys; from ssrisk.engine import load_all; from ssrisk.settings import Settings;"
        "loaded, errors = load_all(sys.argv[1:], Settings(kube_version='1.34'));"
        "print(len(loaded), len(errors))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, *INPUTS],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home)},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert _validated("1.34") == _validated("1.34")  # (the FIFOs replaced by files again)
