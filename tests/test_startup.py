"""What a one-file run (a pre-commit hook) does not load: every module costs start-up time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

SCRIPT = """
import sys
from ssrisk.cli import main
code = main(["check", *sys.argv[2:], sys.argv[1]])
modules = (
    "multiprocessing",
    "importlib.metadata",
    "ssrisk.reporters.json",
    "ssrisk.reporters.sarif",
    "ssrisk.reporters.junit",
    "ssrisk.reporters.github",
    "hashlib",
    "ssrisk.renderers.helm",
    "ssrisk.renderers.kustomize",
    "ssrisk.renderers.bounded",
    "subprocess",
)
loaded = [m for m in modules if m in sys.modules]
print("exit", code, "loaded", *loaded)
"""

KV = DATA / "perf" / "context" / "deploy" / "kv.yaml"


def _loaded(*args: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(KV), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return run.stdout.strip().splitlines()[-1] + run.stderr[-2000:]


def test_a_one_file_check_loads_no_worker_pool_renderer_or_other_reporter() -> None:
    """No worker pool, no distribution metadata, no renderer of charts or kustomizations
    (the file is plain YAML) and only the reporter of the format written."""
    assert _loaded() == "exit 0 loaded"


@pytest.mark.parametrize(
    ("fmt", "module"), [("json", "ssrisk.reporters.json"), ("github", "ssrisk.reporters.github")]
)
def test_a_run_loads_the_reporter_of_its_format(fmt: str, module: str) -> None:
    assert _loaded("--format", fmt) == f"exit 0 loaded {module}"


def test_a_sarif_run_loads_neither_openssl_nor_secrets() -> None:
    """SARIF's fingerprints and help keys are SHA-256 digests: the interpreter's own module
    makes them (hashlib loads OpenSSL's bindings, secrets four more modules)."""
    script = SCRIPT.replace('"subprocess",', '"subprocess", "secrets", "_hashlib",')
    run = subprocess.run(
        [sys.executable, "-c", script, str(KV), "--format", "sarif"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    loaded = run.stdout.strip().splitlines()[-1].split()
    assert loaded[:3] == ["exit", "0", "loaded"], run.stdout + run.stderr[-2000:]
    assert not {"hashlib", "secrets", "_hashlib"} & set(loaded), loaded


COLLECTIONS = """
import contextlib, gc, io, sys
before = [s["collections"] for s in gc.get_stats()]
from ssrisk.__main__ import main
sys.argv = ["ssrisk", "check", sys.argv[1]]
with contextlib.redirect_stdout(io.StringIO()):
    code = main()
after = [s["collections"] for s in gc.get_stats()]
print(code, gc.isenabled(), gc.get_freeze_count(), *[a - b for a, b in zip(after, before)])
"""


def test_the_command_starts_without_collecting_and_resumes_collection() -> None:
    """The ``ssrisk`` command pauses the cyclic collector while it imports and registers
    the rules (through ``ssrisk.cli.main`` alone, a one-file check collected about 40
    times), then resumes it with start-up's objects frozen."""
    run = subprocess.run(
        [sys.executable, "-c", COLLECTIONS, str(KV)], capture_output=True, text=True, timeout=60
    )
    code, enabled, frozen, young, middle, old = run.stdout.split()
    assert (code, enabled) == ("0", "True"), run.stdout + run.stderr[-2000:]
    assert int(frozen) > 10_000  # start-up's modules, classes and functions
    assert int(young) <= 10 and (int(middle), int(old)) == (0, 0)


PATTERNS = """
import contextlib, io, os, re, sys
ours = (os.sep + "ssrisk" + os.sep, os.sep + "rules" + os.sep, os.sep + "embedded_sim" + os.sep)
compiled = set()
real = re._compile


def counting(pattern, flags):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.endswith("__init__.py"):
        frame = frame.f_back  # (re's own functions)
    if frame is not None and any(p in frame.f_code.co_filename for p in ours):
        compiled.add((pattern, flags))
    return real(pattern, flags)


re._compile = counting
from ssrisk.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["check", sys.argv[1]])
print(code, len(compiled))
"""

#: Regular expressions of ssrisk's own a one-file check may compile (18 in this one; about 100
#: were compiled at import, 4 ms of the start: the others compile on first use, lazyre.py).
PATTERN_BUDGET = 25


def test_a_one_file_check_compiles_few_regular_expressions() -> None:
    run = subprocess.run(
        [sys.executable, "-c", PATTERNS, str(KV)], capture_output=True, text=True, timeout=60
    )
    code, count = run.stdout.split()
    assert code == "0", run.stdout + run.stderr[-2000:]
    assert 0 < int(count) <= PATTERN_BUDGET


def test_a_lazy_pattern_compiles_on_first_use_and_is_the_compiled_one() -> None:
    import re

    from ssrisk.embedded_sim.lazyre import lazy

    pattern = lazy(r"(\d+)s", re.I)
    assert getattr(pattern, "_compiled") is None  # noqa: B009 (not a Pattern attribute)
    found = pattern.search("grace 30S")
    assert found is not None and found.group(1) == "30"
    assert pattern.pattern == r"(\d+)s" and pattern.flags & re.I
    assert pattern.sub("N", "1s 2s") == "N N"
    broken = lazy("(")
    with pytest.raises(re.error):
        broken.search("x")
    import copy
    import pickle

    for again in (copy.copy(pattern), copy.deepcopy(pattern), pickle.loads(pickle.dumps(pattern))):
        found = again.search("grace 45S")
        assert found is not None and found.group(1) == "45"


def _compiled_reader_built() -> bool:
    from ssrisk import yamlpos

    return yamlpos._COMPILED is not None


@pytest.mark.skipif(not _compiled_reader_built(), reason="the compiled reader was not built")
def test_a_one_file_check_does_not_import_pyyaml() -> None:
    """The compiled reader reads the file and checks the syntax of the kinds not modelled,
    and its plain scalars (ports, quantities) are resolved without PyYAML's patterns:
    importing PyYAML costs about a tenth of a one-file check."""
    script = SCRIPT.replace('"subprocess",', '"subprocess", "yaml",')
    others = DATA / "perf" / "context" / "deploy" / "others.yaml"
    for path in (KV, others):
        run = subprocess.run(
            [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60
        )
        assert run.stdout.strip().splitlines()[-1] == "exit 0 loaded", run.stdout + run.stderr


def test_a_second_check_of_a_file_does_not_load_the_schema_validator(tmp_path: Path) -> None:
    """Importing jsonschema-rs and building a kind's validator is about 25 ms: a value the
    schema accepted before is known by its digest (ssrisk.schemacache.Verdicts)."""
    script = SCRIPT.replace('"subprocess",', '"subprocess", "jsonschema_rs",')
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("SSRISK_NO_CACHE", None)
    seen = []
    for _ in range(2):
        run = subprocess.run(
            [sys.executable, "-c", script, str(KV)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        seen.append(run.stdout.strip().splitlines()[-1] + run.stderr[-2000:])
    assert seen == ["exit 0 loaded jsonschema_rs", "exit 0 loaded"]


def test_a_changed_plain_file_loads_no_renderer() -> None:
    """``ssrisk check --changed FILE`` (the pre-commit hook) for a plain manifest."""
    assert _loaded("--changed") == "exit 0 loaded"


DATACLASSES = """
import dataclasses, sys
made = []
process = dataclasses._process_class


def counted(cls, *args, **kwargs):
    made.append(f"{cls.__module__}.{cls.__qualname__}")
    return process(cls, *args, **kwargs)


dataclasses._process_class = counted
from ssrisk.cli import main
code = main(["check", sys.argv[1]])
print("exit", code, "dataclasses", len(made), *sorted(m for m in made if m.startswith("ssrisk")))
"""

#: Dataclasses a one-file check may make: each costs about 0.8 ms of start-up to generate
#: its methods (frozen ones most), so the model's typed values are msgspec Structs, made in C.
DATACLASS_BUDGET = 5


def test_a_one_file_check_makes_few_dataclasses() -> None:
    run = subprocess.run(
        [sys.executable, "-c", DATACLASSES, str(KV)], capture_output=True, text=True, timeout=60
    )
    words = run.stdout.splitlines()[-1].split() if run.stdout else []
    assert words[:3] == ["exit", "0", "dataclasses"], run.stdout + run.stderr[-2000:]
    assert int(words[3]) <= DATACLASS_BUDGET, words[4:]
