"""A checked-out repository for the hostile tests, with secrets to leak: a token in
``.git/config`` (as actions/checkout leaves it) and one in the environment of the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import DATA

GOOD = DATA / "robust" / "good.yaml"
#: Must never appear in any output: it is in ``.git/config`` and in the environment.
SECRET = "ssrisk-test-secret-7f3a9c"


def make_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, manifest: str = "deploy/db.yaml"
) -> Path:
    """``tmp_path/repo``: a ``.git`` directory whose config holds :data:`SECRET`, and the good
    manifest at ``manifest``; :data:`SECRET` is also put in the environment."""
    monkeypatch.setenv("SSRISK_TEST_TOKEN", SECRET)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(
        f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {SECRET}\n'
    )
    (repo / manifest).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(GOOD, repo / manifest)
    return repo


def assert_clean(*texts: str) -> None:
    """No secret, no ``/etc/passwd``, no traceback and no internal error in ``texts``."""
    joined = "".join(texts)
    assert SECRET not in joined
    assert "root:x:0:0" not in joined  # /etc/passwd
    assert "Traceback" not in joined and "internal error" not in joined
