"""A renderer is one class behind ``ssrisk.renderers.units.Renderer``: discovery, loading and
``--changed`` ask the registry and name no renderer themselves. A made-up renderer, added to
the registry only, is found, rendered and rebuilt for its changed files."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from conftest import ROOT, run_cli

from ssrisk.loading import LoadedFile
from ssrisk.renderers import units
from ssrisk.renderers.common import load_stream, rendered
from ssrisk.settings import Settings

MARKER = "Fakefile"


class FakeRenderer(units.Renderer):
    """Claims directories with a ``Fakefile``; a unit renders to the StatefulSet written in
    its ``template.txt`` (a stand-in for a real tool)."""

    kind = "fake"
    walk_below = False
    without_deleted = "its fake unit is rendered without it"
    rendered: ClassVar[list[str]] = []

    def marker(self, directory: str) -> str | None:
        path = os.path.join(directory, MARKER)
        return path if os.path.isfile(path) else None

    def changed_builds(
        self, path: str, unit: str, repo: units.Repository
    ) -> list[tuple[str, bool]]:
        return [(unit, True)]

    def render(
        self, units_: Sequence[str], settings: Settings, trees: Mapping[str, str]
    ) -> list[LoadedFile]:
        self.rendered.extend(units_)
        out = []
        for u in units_:
            lf = load_stream(Path(u, "template.txt").read_text(), f"{u}/template.txt", "default")
            lf.objects = [rendered(o, unit=u) for o in lf.objects]  # (names its unit)
            out.append(lf)
        return out


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeRenderer:
    renderer = FakeRenderer()
    FakeRenderer.rendered = []
    monkeypatch.setattr(units, "RENDERERS", (*units.RENDERERS, renderer))
    return renderer


def _repo(tmp_path: Path) -> Path:
    unit = tmp_path / "app"
    unit.mkdir()
    (unit / MARKER).write_text("")
    (unit / "template.txt").write_text((ROOT / "examples" / "postgres.yaml").read_text())
    # a YAML file inside the unit is the renderer's input, never read as a plain manifest
    (unit / "broken.yaml").write_text("a: [unclosed\n")
    return tmp_path


def test_discovery_and_loading_ask_the_registry(tmp_path: Path, fake: FakeRenderer) -> None:
    repo = _repo(tmp_path)
    run = run_cli("check", "--format", "json", ".", cwd=repo)
    assert run.code == 1, run.err
    report = run.json()
    assert fake.rendered == ["app"]
    assert report["errors"] == []  # (app/broken.yaml is the unit's, not read as YAML)
    names = {f["object"]["name"] for f in report["findings"]}
    assert names == {"postgres"}


def test_a_changed_file_of_a_unit_rebuilds_it(tmp_path: Path, fake: FakeRenderer) -> None:
    repo = _repo(tmp_path)
    run = run_cli("check", "--format", "json", "--changed", "app/broken.yaml", cwd=repo)
    assert run.code == 1, run.err
    assert fake.rendered == ["app"]
    assert {f["object"]["name"] for f in run.json()["findings"]} == {"postgres"}


def test_without_the_renderer_the_directory_is_plain(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    run = run_cli("check", "--format", "json", ".", cwd=repo)
    assert run.code == 2  # app/broken.yaml read as a manifest: an input error
    assert [Path(e["path"]).name for e in run.json()["errors"]] == ["broken.yaml"]
