"""Type-check the package as it is installed.

The source tree keeps the rules and the simulator beside the package (``rules/`` and
``embedded_sim/``) and installs them as ``ssrisk.rules`` and ``ssrisk.embedded_sim``
(``[tool.setuptools.package-dir]``). mypy cannot follow that mapping, so run over the tree it
reads every ``ssrisk.embedded_sim`` import as unknown and checks none of the typed values the
rules get from the model. This script copies the three trees into a temporary directory in the
installed layout and runs mypy there with the project's settings (``[tool.mypy]``); error
lines name the source files as they are in the repository.

Usage: ``.venv/bin/python scripts/typecheck.py`` (exit status: mypy's).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Installed package -> source directory (as [tool.setuptools.package-dir] maps them).
LAYOUT = {"ssrisk": "ssrisk", "ssrisk/rules": "rules", "ssrisk/embedded_sim": "embedded_sim"}


def main() -> int:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    with tempfile.TemporaryDirectory(prefix="ssrisk-typecheck-") as tmp:
        for installed, source in LAYOUT.items():
            shutil.copytree(ROOT / source, Path(tmp, installed), ignore=ignore, dirs_exist_ok=True)
        run = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "ssrisk"],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
    out = run.stdout
    for installed, source in sorted(LAYOUT.items(), key=lambda kv: -len(kv[0])):
        if installed != source:
            out = out.replace(installed + "/", source + "/")
    sys.stdout.write(out)
    sys.stderr.write(run.stderr)
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
