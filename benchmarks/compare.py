"""Compare the cost of ``ssrisk check`` at another revision with the working tree, in one run.

Lays out each tree as it is installed (``ssrisk/``, with ``rules/`` as ``ssrisk.rules`` and
``embedded_sim/`` as ``ssrisk.embedded_sim``) in a temporary directory, writes bench.py's
synthetic repository of about ``--docs`` documents, warms the byte-code caches, then runs
``ssrisk check --jobs 1`` (text and ``--format json``) with the base and the working tree
alternately, ``--repeat`` times each, in fresh processes with this interpreter. It prints, for
each format, the median CPU time (user + system, from ``wait4``) and peak RSS of each tree,
and their ratios (working tree / base): below 1 is faster or smaller.

The base is read with ``git archive`` from this repository; nothing outside it is read.

Usage: ``.venv/bin/python benchmarks/compare.py REV [--docs 10000] [--repeat 5]``
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench  # noqa: E402  (bench.py beside this file)

#: Source directories and where the installed package puts them (pyproject.toml package-dir).
LAYOUT = (("ssrisk", "ssrisk"), ("rules", "ssrisk/rules"), ("embedded_sim", "ssrisk/embedded_sim"))


def _lay_out(source: Path, dest: Path) -> None:
    """Copy the three trees of ``source`` into their installed places under ``dest``."""
    for src, target in LAYOUT:
        shutil.copytree(
            source / src,
            dest / target,
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )


def _extract(rev: str, dest: Path) -> None:
    """The three source trees of ``rev`` (``git archive``) under ``dest``."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, *(s for s, _ in LAYOUT)],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")


def _run(pkg: Path, args: list[str]) -> tuple[float, int]:
    """CPU seconds (user + system) and peak RSS (KiB) of one ``ssrisk`` run on ``pkg``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(pkg)
    proc = subprocess.Popen(
        [sys.executable, "-m", "ssrisk", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the base revision (a commit, tag or branch of this repository)")
    ap.add_argument("--docs", type=int, default=10000, help="documents in the repository")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each tree and format")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssrisk-compare-") as tmp:
        work = Path(tmp)
        base_src, base, head = work / "base-src", work / "base", work / "head"
        _extract(args.rev, base_src)
        _lay_out(base_src, base)
        _lay_out(ROOT, head)
        repo = work / "repo"
        docs = bench.generate(repo, max(1, args.docs // 3))
        formats = {"text": ["check", "--jobs", "1", str(repo)]}
        formats["json"] = [*formats["text"][:3], "--format", "json", str(repo)]
        for pkg in (base, head):  # write the byte-code caches
            _run(pkg, formats["text"])
        print(f"{docs} documents; {args.repeat} runs of each; base {args.rev}, head working tree")
        for name, cmd in formats.items():
            runs: dict[str, list[tuple[float, int]]] = {"base": [], "head": []}
            for _ in range(args.repeat):
                runs["base"].append(_run(base, cmd))
                runs["head"].append(_run(head, cmd))
            cpu = {k: statistics.median(c for c, _ in v) for k, v in runs.items()}
            rss = {k: statistics.median(m for _, m in v) / 1024 for k, v in runs.items()}
            print(
                f"{name:>4}: CPU base {cpu['base']:.2f} s, head {cpu['head']:.2f} s "
                f"(×{cpu['head'] / cpu['base']:.3f}); peak RSS base {rss['base']:.0f} MiB, "
                f"head {rss['head']:.0f} MiB (×{rss['head'] / rss['base']:.3f})"
            )


if __name__ == "__main__":
    main()
