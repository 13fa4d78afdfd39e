"""Large inputs are checked in worker processes; the output must not change at all."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_process

from ssrisk.engine import PARALLEL_MIN_STATEFULSETS


def _generator():  # benchmarks/bench.py writes the synthetic repository
    spec = importlib.util.spec_from_file_location("bench", ROOT / "benchmarks" / "bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench", module)
    spec.loader.exec_module(module)
    return module.generate


def test_parallel_and_single_process_output_are_identical(tmp_path: Path) -> None:
    files = PARALLEL_MIN_STATEFULSETS + 20
    _generator()(tmp_path, files)
    serial = run_process("check", "--jobs", "1", "--format", "json", str(tmp_path))
    parallel = run_process("check", "--jobs", "2", "--format", "json", str(tmp_path))
    assert serial.code == parallel.code == 1
    assert parallel.json()["summary"]["statefulsets"] == files
    assert parallel.out == serial.out
    text_serial = run_process("check", "--jobs", "1", str(tmp_path))
    text_parallel = run_process("check", "--jobs", "2", str(tmp_path))
    assert text_parallel.out == text_serial.out


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_a_signal_to_the_process_group_ends_a_parallel_run(tmp_path: Path) -> None:
    """``timeout -s TERM`` and CI runners signal the whole process group, workers included: the
    run ends with its message and code every time, and leaves no worker behind (with
    multiprocessing's pool about one run in ten waited for ever, in ``Pool.terminate``)."""
    import os
    import signal
    import subprocess
    import time

    from conftest import ssrisk_executable

    _generator()(tmp_path, PARALLEL_MIN_STATEFULSETS + 100)
    env = {**os.environ, "SSRISK_NO_CACHE": "1"}
    for signum, code, said in ((signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interr")):
        for attempt in range(3):
            proc = subprocess.Popen(
                [ssrisk_executable(), "check", "--jobs", "2", str(tmp_path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
            deadline = time.monotonic() + 60
            while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            workers = _children(proc.pid)
            time.sleep(0.05 * attempt)  # (the workers waiting, then busy)
            os.killpg(proc.pid, signum)
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                pytest.fail(f"the run did not end after {signum!r} (attempt {attempt})")
            assert workers, "no worker was forked"
            assert proc.returncode == code, err
            assert said in err.decode()
            assert "Traceback" not in err.decode()
            for worker in workers:
                assert (
                    not Path(f"/proc/{worker}").exists()
                    or b"Z" in Path(f"/proc/{worker}/stat").read_bytes().split(b")")[-1][:3]
                )


def test_default_jobs_fork_only_when_the_rest_is_worth_a_second_core() -> None:
    from ssrisk.engine import PARALLEL_MIN_SECONDS, worth_forking

    # 1,000 StatefulSets left at 0.1 ms each: 0.1 s, less than a fork and the transfer cost
    assert not worth_forking(0.0001, 1000)
    # 10,000 left at 0.5 ms each: 5 s of work, half of it moves to the second core
    assert worth_forking(0.0005, 10000)
    assert worth_forking(PARALLEL_MIN_SECONDS / 100, 100)


def test_default_jobs_output_is_the_single_process_output(tmp_path: Path) -> None:
    files = PARALLEL_MIN_STATEFULSETS + 20
    _generator()(tmp_path, files)
    serial = run_process("check", "--jobs", "1", "--format", "json", str(tmp_path))
    default = run_process("check", "--format", "json", str(tmp_path))
    assert default.code == serial.code == 1
    assert default.out == serial.out


def test_workers_forked_after_the_probe_give_the_single_process_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ssrisk import engine
    from ssrisk.plugins import collect_rules, plugin_manager
    from ssrisk.settings import Settings

    _generator()(tmp_path, PARALLEL_MIN_STATEFULSETS + 20)
    rules = collect_rules(plugin_manager())
    serial = engine.check([str(tmp_path)], rules, Settings(jobs=1))
    monkeypatch.setattr(engine, "PARALLEL_MIN_SECONDS", 0.0)  # always worth it
    forked = engine.check([str(tmp_path)], rules, Settings(jobs=0))
    assert [f.to_dict() for f in forked.findings] == [f.to_dict() for f in serial.findings]
    assert forked.notices == serial.notices and forked.errors == serial.errors


def test_default_jobs_fork_a_worker_only_for_an_idle_core() -> None:
    from ssrisk.engine import default_processes

    assert default_processes(2, 0.2) == 2  # a quiet 2-core machine: both cores
    assert default_processes(2, 1.0) == 1  # another program keeps a core busy
    assert default_processes(2, 3.5) == 1
    assert default_processes(8, 1.0) == 5  # 7 idle cores: a worker per 1.5 of them
    assert default_processes(1, 0.0) == 1
    assert default_processes(4, None) == 4  # load unknown: every core
