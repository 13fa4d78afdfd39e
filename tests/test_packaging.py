"""What pyproject.toml declares matches what the package uses."""

from __future__ import annotations

import re
import sys

import pytest
from conftest import ROOT

SOURCES = ("ssrisk", "rules", "embedded_sim")


def _requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip()


def test_every_runtime_dependency_is_used() -> None:
    # an unused pin still costs every install (ruamel.yaml stayed pinned after the
    # configuration moved to the manifest reader)
    if sys.version_info < (3, 11):
        pytest.skip("tomllib")
    from importlib.metadata import packages_distributions

    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    modules_of: dict[str, set[str]] = {}
    for module, dists in packages_distributions().items():
        for dist in dists:
            modules_of.setdefault(re.sub(r"[-_.]+", "-", dist.lower()), set()).add(module)
    text = "\n".join(
        p.read_text(encoding="utf-8") for d in SOURCES for p in (ROOT / d).rglob("*.py")
    )
    unused = []
    for requirement in project["dependencies"]:
        name = re.sub(r"[-_.]+", "-", _requirement_name(requirement).lower())
        modules = modules_of.get(name)
        if not modules:
            continue  # not installed here (an environment marker such as tomli's)
        # imported, or found by name (kubernetes-validate's schemas are located, not imported)
        used = any(
            re.search(rf"^\s*(?:import|from)\s+{m}\b|[\"']{m}[\"']", text, re.M) for m in modules
        )
        if not used:
            unused.append(requirement)
    assert unused == []


def test_setup_installs_without_setuptools_notices() -> None:
    # setup.sh's editable install, without resolving the dependencies again (seconds, not a
    # full set-up): setuptools' "Editable installation" notice must not reach the user
    import shlex
    import subprocess

    script = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [s for s in script.splitlines() if "pip install" in s and " -e " in s]
    command = shlex.split(line.replace(".venv/bin/python", shlex.quote(sys.executable), 1))
    done = subprocess.run(
        [*command, "--no-deps"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "Editable installation" not in done.stderr, done.stderr
    assert "BuildBackendWarning" not in done.stderr
