"""Running a renderer (``helm``, Helm's embedded engine, ``kustomize``, ``kubectl kustomize``)
as a bounded child process.

A chart or kustomization from an untrusted pull request is a program: Helm templates can
loop (``until``), recurse exponentially (``include``), or build huge strings (``repeat``),
and kustomize can be pointed at remote repositories. Every renderer therefore runs

* in its own process group, killed as a whole (with anything it started, such as ``git`` or
  ``ssh``) when it exceeds its wall-clock timeout, writes more than the output limit, or
  when ssrisk itself is interrupted (SIGINT) or terminated (SIGTERM); on Linux it also dies
  with ssrisk (``PR_SET_PDEATHSIG``);
* under a memory limit (``RLIMIT_AS``, the address space; Go's runtime alone reserves about
  1.8 GB of it, so the limit leaves about a gigabyte of heap), no core files and a cap on the
  size of any file it writes (``RLIMIT_FSIZE``);
* without network: on Linux the kernel refuses it IPv4 and IPv6 sockets (a seccomp filter,
  :mod:`ssrisk.renderers.nonet`), unless ``--allow-remote-resources`` asks for them;
* with a scrubbed environment (:func:`scrubbed_environment`): none of the caller's variables
  (tokens, ``KUBECONFIG``, cloud credentials, proxies) reach it, ``HOME`` and the working
  directory are a private empty directory, ``PATH`` is empty (so ``git`` and ``ssh`` cannot
  be started), and HTTP(S) proxies point at a closed local port, so any fetch fails at once.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..loading import MAX_FILE_BYTES
from .common import RenderError, tool_message
from .runbudget import run_budget

#: Default wall-clock limit of one renderer run, in seconds (``--render-timeout``).
RENDER_TIMEOUT_S = 60.0
#: Address space a renderer may map (``RLIMIT_AS``), in bytes.
RENDER_ADDRESS_SPACE_BYTES = 3 * 1024**3
#: Largest rendered output read from a renderer, in bytes (as for an input file).
RENDER_OUTPUT_BYTES = MAX_FILE_BYTES
#: Standard error kept for the error message (its end), in bytes.
_STDERR_KEEP = 64 * 1024
#: How a Go runtime or Python says it could not get memory.
_OUT_OF_MEMORY = ("out of memory", "MemoryError", "pthread_create failed", "cannot allocate memory")
#: A proxy address that refuses connections (port 9, discard, is not served).
DEAD_PROXY = "http://127.0.0.1:9"


@dataclass(frozen=True)
class Limits:
    """What one renderer run may use: wall-clock seconds, address space and output bytes.

    The defaults are read when a :class:`Limits` is created, from the module constants.
    """

    timeout_s: float | None = None
    address_space_bytes: int | None = None
    output_bytes: int | None = None

    def seconds(self) -> float:
        return self.timeout_s or RENDER_TIMEOUT_S

    def memory(self) -> int:
        return self.address_space_bytes or RENDER_ADDRESS_SPACE_BYTES

    def output(self) -> int:
        return self.output_bytes or RENDER_OUTPUT_BYTES


def scrubbed_environment(
    private_dir: str, *, network: bool = False, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment of a renderer: nothing of the caller's but, with ``network`` (the
    ``--allow-remote-resources`` opt-in), ``PATH`` and the proxy variables, so kustomize can
    run ``git``. ``HOME``, ``TMPDIR`` and ``KUBECONFIG`` point into ``private_dir``."""
    env = {
        "HOME": private_dir,
        "TMPDIR": private_dir,
        "PATH": private_dir,  # an empty directory: no git, no ssh, no plugins
        "LC_ALL": "C.UTF-8",
        "KUBECONFIG": os.path.join(private_dir, "no-kubeconfig"),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = DEAD_PROXY
    env["NO_PROXY"] = env["no_proxy"] = ""
    if network:
        for name in (
            "PATH",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "ALL_PROXY",
            "NO_PROXY",
            "no_proxy",
        ):
            if name in os.environ:
                env[name] = os.environ[name]
            elif name != "PATH":
                env.pop(name, None)
    env.update(extra or {})
    return env


def _limit_child(address_space: int, guard: Callable[[], None] | None) -> None:
    """Runs in the child between fork and exec: limits, death with the parent, and no
    network (:func:`ssrisk.renderers.nonet.network_guard`) unless ``guard`` is ``None``."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))
    die_with_parent()
    if guard is not None:
        guard()


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (``PR_SET_PDEATHSIG``), so a
    child never outlives an ssrisk that was killed outright. Elsewhere nothing."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)


def run_bounded(
    argv: Sequence[str],
    *,
    what: str,
    cwd: str,
    env: Mapping[str, str],
    stdin: bytes = b"",
    limits: Limits | None = None,
    network: bool = False,
) -> str:
    """Run ``argv`` bounded as the module describes and return its standard output.

    ``what`` names the renderer in messages (``helm``, ``kubectl kustomize``). Unless
    ``network`` (``--allow-remote-resources``), the kernel denies the child network sockets
    where it can (:mod:`ssrisk.renderers.nonet`).

    The run's render budget (:func:`start_run`) is charged with its wall-clock time, and it
    may take at most what is left of it.

    Raises:
        RenderError: the run's render budget is spent (nothing is started), it cannot
            start, ran past its timeout, the budget, its output or memory limit (it and
            its process group were killed), or exited non-zero (with the end of its standard
            error, one line per message).
    """
    from .nonet import network_guard

    limits = limits or Limits()
    memory = limits.memory()
    guard = None if network else network_guard()
    output_limit = limits.output()
    budget = run_budget()
    left = budget.left()
    if left <= 0:
        raise RenderError(
            f"{what} not started: the renderers of this run have taken its whole render "
            f"budget of {budget.total_s:g} s (--render-budget)"
        )
    timeout_s = min(limits.seconds(), left)
    cut_by_budget = timeout_s < limits.seconds()
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,  # its own process group, away from the terminal's Ctrl-C
            preexec_fn=lambda: _limit_child(memory, guard),
            close_fds=True,
        )
    except OSError as exc:
        raise RenderError(f"{what} could not be started: {exc.strerror or exc}") from None
    out = bytearray()
    err = bytearray()
    try:
        failure = _communicate(proc, stdin, out, err, timeout_s, output_limit)
    finally:
        _kill_group(proc)  # also reaps whatever it left behind in its group
        budget.charge(time.monotonic() - started)
    if failure is not None:
        if cut_by_budget and failure.startswith("did not finish"):
            failure = (
                f"did not finish within the {timeout_s:.3g} s left of this run's render "
                f"budget of {budget.total_s:g} s (--render-budget)"
            )
        raise RenderError(f"{what} {failure}; stopped")
    stderr = err.decode("utf-8", "replace")
    if proc.returncode != 0:
        if proc.returncode == -signal.SIGKILL or any(s in stderr for s in _OUT_OF_MEMORY):
            raise RenderError(
                f"{what} ran out of memory (limit: {memory // 1024**2} MiB of address space)"
            )
        raise RenderError(tool_message(stderr) or f"{what}: exit status {proc.returncode}")
    return out.decode("utf-8", "replace")


def _communicate(
    proc: subprocess.Popen[bytes],
    stdin: bytes,
    out: bytearray,
    err: bytearray,
    timeout_s: float,
    output_limit: int,
) -> str | None:
    """Feed ``stdin`` and collect the output until the child exits; a reason on a limit."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout_s
    pending = memoryview(stdin)
    with selectors.DefaultSelector() as sel:
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        sel.register(proc.stdout, selectors.EVENT_READ)
        sel.register(proc.stderr, selectors.EVENT_READ)
        readers = 2
        while readers:
            left = deadline - time.monotonic()
            if left <= 0:
                return f"did not finish within {timeout_s:g} s"
            for key, _ in sel.select(left):
                if key.fileobj is proc.stdin:
                    try:
                        written = os.write(proc.stdin.fileno(), pending[:65536])
                    except BrokenPipeError:
                        written = len(pending)
                    pending = pending[written:]
                    if not pending:
                        sel.unregister(proc.stdin)
                        proc.stdin.close()
                    continue
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                    readers -= 1
                    continue
                if key.fileobj is proc.stdout:
                    out += chunk
                    if len(out) > output_limit:
                        return f"rendered more than {output_limit} bytes"
                else:
                    err += chunk
                    if len(err) > 2 * _STDERR_KEEP:
                        del err[:-_STDERR_KEEP]
    left = max(0.0, deadline - time.monotonic())
    try:
        proc.wait(timeout=left)
    except subprocess.TimeoutExpired:
        return f"did not finish within {timeout_s:g} s"
    return None
