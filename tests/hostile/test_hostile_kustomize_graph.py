"""Kustomizations that include each other: what ssrisk checks before kustomize runs is read
once per run and costs time linear in the kustomization files (nodes and include edges).

Built from an adversarial input: L kustomizations in one include cycle were each rendered,
and before each build the whole reachable graph was read and checked again (378 KB of
kustomization files took 394 s with ``--render-timeout 5``). A cycle is now one error at the
line that closes it, and nothing whose graph holds it is handed to kustomize. Nothing here
needs a kustomize binary: any attempt to copy or build is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import run_cli
from test_hostile_scaling import _scales_linearly

from ssrisk.loading import LoadedFile
from ssrisk.model import InputError
from ssrisk.renderers import kustomize
from ssrisk.renderers.common import RenderError
from ssrisk.renderers.inputs import load_inputs
from ssrisk.renderers.kustomize_refs import TreeCopy
from ssrisk.settings import Settings


def _no_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every copy of a tree and every kustomize run instead of doing them; a run
    fails with a short message (so the pre-analysis is what is measured)."""
    attempts: list[str] = []

    def fake_copy(roots: list[str], root: str, into: str) -> TreeCopy:
        attempts.append(f"copy {len(roots)}")
        return TreeCopy(root, into)

    def fake_build(copy: TreeCopy, directory: str, *args: object, **kw: object) -> object:
        attempts.append(f"build {directory}")
        raise RenderError("not built in this test")

    monkeypatch.setattr(kustomize, "copy_tree", fake_copy)
    monkeypatch.setattr(kustomize, "build", fake_build)
    return attempts


def _kustomization(directory: Path, text: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "kustomization.yaml").write_text(text)


def _ring(tree: Path, n: int) -> Callable[[], tuple[list[LoadedFile], list[InputError]]]:
    """k0 -> k1 -> ... -> k0 in ``tree`` (each also names a resource and some labels): a
    function that loads it."""
    (tree / ".git").mkdir(parents=True)
    labels = "".join(f"  l{j}: v\n" for j in range(20))
    for i in range(n):
        _kustomization(
            tree / f"k{i}", f"commonLabels:\n{labels}resources:\n- sts.yaml\n- ../k{(i + 1) % n}\n"
        )
        (tree / f"k{i}" / "sts.yaml").write_text("kind: ConfigMap\n")
    return lambda: load_inputs([str(tree)], Settings())


def test_a_ring_of_kustomizations_costs_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """L kustomizations in one ring: every one is a build (none is a base outside the
    cycle), and each build re-read the whole ring (L * L reads); 10x as many must cost
    about 10x. The cycle is one error, and nothing is built."""
    attempts = _no_builds(monkeypatch)
    _scales_linearly(lambda n: _ring(tmp_path / f"ring{n}", n), 20)
    loaded, errors = _ring(tmp_path / "ring", 5)()
    found = {(e.path, e.line, e.message) for lf in loaded for e in lf.errors} | set(errors)
    assert len(loaded) == 5 and len(found) == 1 and "cycle" in str(found), found
    assert attempts == []


def _dag(tree: Path, n: int) -> Callable[[], tuple[list[LoadedFile], list[InputError]]]:
    """N overlays in ``tree`` that each list every one of five shared bases, each base a
    kustomization of 10 N annotations: a function that loads it."""
    (tree / ".git").mkdir(parents=True)
    annotations = "".join(f"  a{j}: v\n" for j in range(10 * n))
    bases = [f"b{j}" for j in range(5)]
    for base in bases:
        _kustomization(tree / "bases" / base, f"commonAnnotations:\n{annotations}")
    listed = "".join(f"- ../../bases/{b}\n" for b in bases)
    for i in range(n):
        _kustomization(tree / "overlays" / f"o{i}", f"resources:\n{listed}")
    return lambda: load_inputs([str(tree)], Settings())


def test_overlays_sharing_bases_cost_linear_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every base is read and checked once per run, not once per overlay that includes it
    (N overlays * bases); each overlay is still copied with its six directories and built."""
    attempts = _no_builds(monkeypatch)
    _scales_linearly(lambda n: _dag(tmp_path / f"dag{n}", n), 10)
    attempts.clear()
    tree = tmp_path / "dag"
    loaded, errors = _dag(tree, 3)()
    assert not errors and len(loaded) == 3  # every overlay, no base on its own
    assert attempts == [
        step for i in range(3) for step in ("copy 6", f"build {tree / 'overlays' / f'o{i}'}")
    ]
    assert all("not built in this test" in e.message for lf in loaded for e in lf.errors)


def test_a_cycle_is_one_error_at_the_line_that_closes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """a -> b -> c -> a, and an overlay o that includes a: one error, at the entry of the
    kustomization that closes the cycle, naming it; no kustomization is copied or built
    (kustomize would only fail with "cycle detected"), and the exit code is 2."""
    attempts = _no_builds(monkeypatch)
    tree = tmp_path / "repo"
    (tree / ".git").mkdir(parents=True)
    _kustomization(tree / "a", "resources:\n- sts.yaml\n- ../b\n")
    (tree / "a" / "sts.yaml").write_text("kind: ConfigMap\n")
    _kustomization(tree / "b", "resources:\n- ../c\n")
    _kustomization(tree / "c", "namePrefix: x-\nresources:\n  - ../a\n")
    _kustomization(tree / "o", "resources:\n- ../a\n")
    run = run_cli("check", ".", cwd=tree)
    assert run.code == 2, run.out
    assert attempts == []
    errors = [line for line in run.out.splitlines() if ": error: " in line]
    # the walk builds b, c and o (a is a base of o); b is built first: b -> c -> a -> b
    assert errors == [
        "a/kustomization.yaml:3:3: error: resources: '../b' closes an include cycle "
        "(b -> c -> a -> b): kustomize rejects it (cycle detected); not built"
    ], run.out
    assert "Traceback" not in run.err and "internal error" not in run.err


def test_a_self_include_is_a_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``resources: [../db]`` in ``db/``: the kustomization includes itself."""
    attempts = _no_builds(monkeypatch)
    tree = tmp_path / "repo"
    (tree / ".git").mkdir(parents=True)
    _kustomization(tree / "db", "resources:\n- ../db\n")
    run = run_cli("check", "db", cwd=tree)
    assert run.code == 2 and attempts == [], run.out
    assert re.search(
        r"^db/kustomization.yaml:2:3: error: resources: '../db' closes an include cycle "
        r"\(db -> db\)",
        run.out,
        re.M,
    ), run.out


def test_a_base_generator_configuration_is_shown_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote file in the generator configuration of a base that an overlay includes is
    an error at the base's file (it was shown below the overlay, where no such file is)."""
    attempts = _no_builds(monkeypatch)
    tree = tmp_path / "repo"
    (tree / ".git").mkdir(parents=True)
    _kustomization(tree / "b", "generators:\n- gen.yaml\n")
    (tree / "b" / "gen.yaml").write_text(
        "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata:\n  name: x\n"
        "files:\n- http://127.0.0.1:1/s\n"
    )
    _kustomization(tree / "o", "resources:\n- ../b\n")
    run = run_cli("check", "o", cwd=tree)
    assert run.code == 2 and attempts == [], run.out
    assert run.out.startswith("b/gen.yaml:6:3: error: file: 'http://127.0.0.1:1/s' is remote")


def _chain(tree: Path, n: int) -> Callable[[], object]:
    """k0 <- k1 <- ... <- k(n-1), each overlay including the one before, every kustomization
    file changed (as pre-commit passes a commit that touches them all), with a two-member
    include cycle at the bottom: a function that plans the changed run."""
    from ssrisk.changed import plan_changes

    (tree / ".git").mkdir(parents=True)
    _kustomization(tree / "c0", "resources:\n- ../c1\n")
    _kustomization(tree / "c1", "resources:\n- ../c0\n")
    _kustomization(tree / "k0", "resources:\n- ../c0\n")
    for i in range(1, n):
        _kustomization(tree / f"k{i}", f"resources:\n- ../k{i - 1}\n")
    changed = [
        str(tree / d / "kustomization.yaml") for d in ("c0", "c1", *(f"k{i}" for i in range(n)))
    ]
    return lambda: plan_changes(changed)


def test_changes_down_a_chain_of_overlays_cost_linear_time(tmp_path: Path) -> None:
    """With ``--changed``, each changed kustomization is built through the overlays that
    nothing includes: found once per kustomization (each change walked every overlay above
    it and checked each for a cycle with a walk of the graph: cubic in the chain's length).
    A member of an include cycle is built as well as the overlays above the cycle."""
    from ssrisk.changed import plan_changes

    _scales_linearly(lambda n: _chain(tmp_path / f"chain{n}", n), 30)
    tree = tmp_path / "small"
    plan = _chain(tree, 3)()
    assert isinstance(plan, type(plan_changes([])))
    builds = {Path(b).name for b in plan.units.get("kustomization", {})}
    # c0's change builds k2 (k0 includes c0, and nothing includes k2) and c1 (c0's cycle
    # partner, which only its cycle includes); c1's change builds c1
    assert builds == {"k2", "c1"}, builds
