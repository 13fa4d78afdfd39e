"""Hostile repositories against links out of the tree and very deep directories: a chart or
kustomization reached through a link to a sibling checkout is refused like a plain file (never
rendered, nothing of it printed); a refusal reads the same whether the outside target exists or
not and never prints it; a kustomization file that links out is never opened; a directory
nested deeper than Python's recursion limit is walked (or reported), never a traceback.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from checkout import assert_clean, make_checkout
from conftest import DATA, run_cli

CANARY = "privatecanary9q"
FORMATS = ["text", "json", "sarif", "github", "junit"]
STS = (DATA / "robust" / "good.yaml").read_text().replace("name: db", f"name: {CANARY}")


def _workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path/repo`` (the pull request) beside ``tmp_path/infra`` (a private checkout with
    a chart and a kustomization), reached by ``deploy/x`` and ``deploy/k``."""
    repo = make_checkout(tmp_path, monkeypatch)
    chart = tmp_path / "infra" / "charts" / "db"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {CANARY}\nversion: 0.1.0\n")
    (chart / "templates" / "sts.yaml").write_text(STS)
    kz = tmp_path / "infra" / "kz" / "db"
    kz.mkdir(parents=True)
    (kz / "kustomization.yaml").write_text("resources:\n- sts.yaml\n")
    (kz / "sts.yaml").write_text(STS)
    (repo / "deploy" / "x").symlink_to("../../infra/charts/db")
    (repo / "deploy" / "k").symlink_to("../../infra/kz/db")
    return repo


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_chart_or_kustomization_through_a_link_is_not_rendered(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _workspace(tmp_path, monkeypatch)
    for args in (
        ["."],
        ["deploy"],
        ["deploy/x"],
        ["deploy/k"],
        ["--changed", "deploy/x/templates/sts.yaml"],
        ["--changed", "deploy/k/sts.yaml"],
        ["--changed", "deploy/k/kustomization.yaml"],
    ):
        run = run_cli("check", *args, "--format", fmt, cwd=repo)
        assert_clean(run.out, run.err)
        assert CANARY not in run.out + run.err, (args, run.out)
        assert "infra" not in run.out + run.err, (args, run.out)
        # named (or changed) through the link: an input error; met in a walk, the link is no
        # manifest's name and nothing reads it: a warning, which fails nothing
        walked = args in (["."], ["deploy"])
        assert run.code == (0 if walked else 2), (args, run.out)
        if fmt == "text":
            assert "a symbolic link that leads outside the checked tree" in run.out, args
            assert ("warning: a symbolic link" in run.out) == walked, args


def test_refusals_read_the_same_for_an_existing_and_a_missing_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    (tmp_path / "infra").mkdir()
    (tmp_path / "infra" / "there.yaml").write_text(STS)
    outcomes = {}
    for name, target in (("there", "there.yaml"), ("gone", "missing.yaml")):
        (repo / "deploy" / f"{name}.yaml").symlink_to(f"../../infra/{target}")
        chart = repo / f"chart-{name}"
        (chart / "templates").mkdir(parents=True)
        (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
        (chart / "templates" / "l.yaml").symlink_to(f"../../../infra/{target}")
        for args in (
            ["deploy"],
            [f"deploy/{name}.yaml"],
            ["--changed", f"deploy/{name}.yaml"],
            [f"chart-{name}"],
        ):
            run = run_cli("check", *args, cwd=repo)
            assert_clean(run.out, run.err)
            assert "infra" not in run.out + run.err, (args, run.out)
            text = run.out.replace(name, "NAME")
            outcomes.setdefault(tuple(a.replace(name, "NAME") for a in args), []).append(text)
    for args, (there, gone) in outcomes.items():
        if args == ("deploy",):  # each walk meets both links: compare the lines of each
            continue
        assert there == gone, args


def test_a_changed_path_through_a_link_out_reads_the_same_whatever_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--changed`` names a link out of the tree, or a file below a directory link out of
    it: a file, a directory or nothing there gives the same refusal and the same summary,
    and the other changed files are still checked (a directory there used to stop the run
    with "--changed takes the changed files", telling what it was)."""
    repo = make_checkout(tmp_path, monkeypatch)
    (tmp_path / "infra" / "dir").mkdir(parents=True)
    (tmp_path / "infra" / "there").mkdir()
    (tmp_path / "infra" / "there" / "x.yaml").write_text(STS)
    (tmp_path / "infra" / "file.yaml").write_text(STS)
    (repo / "deploy" / "good.yaml").write_text(STS.replace(CANARY, "good"))
    targets = {"dir": "dir", "file": "file.yaml", "gone": "missing"}
    for name, target in targets.items():
        (repo / "deploy" / f"{name}.yaml").symlink_to(f"../../infra/{target}")
    (repo / "lnk-there").symlink_to("../infra/there")
    (repo / "lnk-gone").symlink_to("../infra/nothing")
    outcomes = []
    for changed in [*(f"deploy/{n}.yaml" for n in targets), "lnk-there/x.yaml", "lnk-gone/x.yaml"]:
        run = run_cli(
            "check", "--format", "json", "--changed", "--", changed, "deploy/good.yaml", cwd=repo
        )
        assert_clean(run.out, run.err)
        assert run.code == 2, (changed, run.err)
        report = run.json()
        link = changed.split("/")[0] if changed.startswith("lnk-") else None
        said = "a symbolic link that leads outside the checked tree; not read"
        if link is not None:  # a file below the link names it, as written
            said = f"reached through {link!r}, {said}"
        assert [(e["path"], e["message"]) for e in report["errors"]] == [(changed, said)]
        assert report["summary"]["statefulsets"] == 1  # deploy/good.yaml
        assert "infra" not in run.out + run.err and CANARY not in run.out
        outcomes.append(report["summary"])
    assert all(summary == outcomes[0] for summary in outcomes), outcomes


@pytest.mark.parametrize(
    ("marker", "changed"),
    [
        ("c/Chart.yaml", "c/templates/sts.yaml"),
        ("c/kustomization.yaml", "c/sts.yaml"),
        (".ssrisk.yaml", "c/sts.yaml"),
        ("pyproject.toml", "c/sts.yaml"),
    ],
)
def test_a_marker_or_configuration_linking_out_reads_the_same_whatever_is_there(
    marker: str, changed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chart's ``Chart.yaml``, a kustomization file or the configuration file is a link out
    of the tree: to a file, to nothing, to a directory or to a device, the run reads the
    same (it used to count the directory as a chart or kustomization, or to find the
    configuration, only when the target was a regular file: one bit about the runner's
    files in the exit code). A pipe named like the configuration is an error, not skipped."""
    repo = make_checkout(tmp_path, monkeypatch)
    (tmp_path / "infra" / "dir").mkdir(parents=True)
    (tmp_path / "infra" / "file").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (repo / changed).parent.mkdir(parents=True, exist_ok=True)
    (repo / changed).write_text(STS)
    seen = []
    for target in ("file", "missing", "dir", "/dev/null"):
        link = repo / marker
        if link.is_symlink():
            link.unlink()
        link.symlink_to(target if target.startswith("/") else f"{tmp_path}/infra/{target}")
        for args in (["c"], ["--changed", "--", changed]):
            run = run_cli("check", *args, cwd=repo)
            assert_clean(run.out, run.err)
            assert "infra" not in run.out + run.err and CANARY not in run.out
            assert run.code == 2, (target, args, run.out, run.err)
            seen.append((tuple(args), run.code, run.out, run.err))
    for args in (["c"], ["--changed", "--", changed]):
        assert len({(code, out, err) for a, code, out, err in seen if a == tuple(args)}) == 1


def test_a_walk_reads_a_link_out_of_the_tree_the_same_whatever_it_leads_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk meets links ``probe.yaml`` and ``probe`` out of the tree: to a directory, a file,
    nothing, a chart or a kustomization, the run reads the same (a link to a directory was
    silently skipped, one to a chart refused, one to a file refused when named like YAML: one
    bit about the runner's files per link in the exit code)."""
    repo = make_checkout(tmp_path, monkeypatch)
    out = tmp_path / "infra"
    (out / "chart").mkdir(parents=True)
    (out / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (out / "kz").mkdir()
    (out / "kz" / "kustomization.yaml").write_text("resources: []\n")
    (out / "plain").mkdir()
    (out / "file").write_text(STS)
    (repo / "deploy" / "db.yaml").write_text(STS.replace(CANARY, "db"))
    seen = set()
    for target in ("chart", "kz", "plain", "file", "missing"):
        for name in ("probe.yaml", "probe"):
            link = repo / "deploy" / name
            if link.is_symlink():
                link.unlink()
            link.symlink_to(out / target)
        run = run_cli("check", "deploy", cwd=repo)
        assert_clean(run.out, run.err)
        assert run.code == 2 and "infra" not in run.out + run.err, (target, run.out)
        seen.add((run.code, run.out, run.err))
    assert len(seen) == 1, seen


def test_a_pipe_named_like_the_configuration_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    (repo / "sts.yaml").write_text(STS)
    os.mkfifo(repo / ".ssrisk.yaml")
    run = run_cli("check", "sts.yaml", cwd=repo)
    assert run.code == 2 and ".ssrisk.yaml: not a regular file; not read" in run.err


def test_a_kustomization_file_linking_out_is_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO outside the tree: opening it would block the run. And a kustomization file
    outside naming ``../base`` as a base: read, it would hide ``base`` from the walk."""
    repo = make_checkout(tmp_path, monkeypatch)
    (tmp_path / "infra").mkdir()
    os.mkfifo(tmp_path / "infra" / "fifo")
    (tmp_path / "infra" / "k.yaml").write_text("resources:\n- ../base\n")
    (repo / "kz" / "base").mkdir(parents=True)
    (repo / "kz" / "base" / "kustomization.yaml").write_text("resources:\n- sts.yaml\n")
    (repo / "kz" / "base" / "sts.yaml").write_text(STS)
    (repo / "kz" / "over").mkdir()
    (repo / "kz" / "over" / "kustomization.yaml").symlink_to("../../../infra/k.yaml")
    from ssrisk.paths import Excludes
    from ssrisk.renderers.inputs import plan_inputs
    from ssrisk.renderers.kustomize_index import KustomizationIndex
    from ssrisk.renderers.kustomize_refs import local_references

    old = os.getcwd()
    os.chdir(repo)
    try:
        plan = plan_inputs(["."])
        assert "kz/base" in plan.units.get("kustomization", []), plan
        assert "kz/over" not in plan.units.get("kustomization", [])
        assert any("kz/over" in e.path for e in plan.errors), plan.errors
        assert local_references("kz/over", str(repo)) == []
        index = KustomizationIndex(os.path.realpath(repo), Excludes(()))
        assert not index.included_by.get(os.path.realpath("kz/base"))
        (repo / "kz" / "over" / "kustomization.yaml").unlink()
        (repo / "kz" / "over" / "kustomization.yaml").symlink_to("../../../infra/fifo")
        assert local_references("kz/over", str(repo)) == []  # (would block)
        KustomizationIndex(os.path.realpath(repo), Excludes(()))
    finally:
        os.chdir(old)


# --- deep directories ------------------------------------------------------------------------

DEPTH = 1_100  # deeper than the recursion limit (os.walk recursed once a level up to 3.11)


def _nest(top: Path, depth: int, leaf: str | None = None, text: str = "") -> None:
    """``depth`` nested directories ``d`` below ``top``, made one level at a time relative
    to the last (the whole path is longer than PATH_MAX for long names), and ``leaf`` at the
    bottom."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        if leaf is not None:
            out = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
            os.write(out, text.encode())
            os.close(out)
    finally:
        os.close(fd)


def _unnest(top: Path) -> None:
    """Remove what :func:`_nest` made, one level at a time (a recursive removal, as pytest's
    own clean-up, would hit the recursion limit)."""
    level = top / "d"
    while level.is_dir():
        for entry in level.iterdir():
            if entry.name != "d":
                entry.unlink()
        if (level / "d").is_dir():
            os.rename(level / "d", top / "d.next")
            level.rmdir()
            os.rename(top / "d.next", level)
        else:
            level.rmdir()


@pytest.mark.parametrize(
    "where, args",
    [
        ("deploy", ["deploy"]),  # discovery and input planning
        ("chart", ["chart"]),  # the chart copy
        ("kz", ["--changed", "kz/kustomization.yaml"]),  # the --changed index
    ],
)
def test_deep_directories_are_no_traceback(
    where: str, args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    top = repo / where
    top.mkdir(exist_ok=True)
    if where == "chart":
        (top / "templates").mkdir()
        (top / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    if where == "kz":
        (top / "kustomization.yaml").write_text("resources: []\n")
    _nest(top, DEPTH, "x.yaml", STS)
    try:
        run = run_cli("check", *args, cwd=repo)
    finally:
        _unnest(top)
    assert_clean(run.out, run.err)
    assert "RecursionError" not in run.out + run.err
    assert run.code in (0, 1, 2), run.out


def test_the_walk_is_iterative(tmp_path: Path) -> None:
    """The walk reaches the bottom of a tree deeper than the recursion limit, in os.walk's
    order, and says where it stopped when a limit is given."""
    from ssrisk.walk import TooDeep, walk

    _nest(tmp_path, DEPTH, "x.yaml")
    try:
        levels = list(walk(str(tmp_path), max_depth=None))
        errors: list[OSError] = []
        short = list(walk(str(tmp_path), onerror=errors.append, max_depth=10))
    finally:
        _unnest(tmp_path)
    assert len(levels) == DEPTH + 1
    assert levels[-1][2] == ["x.yaml"] and levels[0][1] == ["d"]
    assert len(short) == 11
    assert len(errors) == 1 and isinstance(errors[0], TooDeep)


def _file_per_level(top: Path, depth: int, base: Path) -> list[str]:
    """A ConfigMap file at every one of ``depth`` nested levels below ``top`` (paths
    relative to ``base``, shallowest first)."""
    files = []
    level = top
    for i in range(depth):
        level = level / "a"
        level.mkdir()
        (level / "cm.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\n"
        )
        files.append(str((level / "cm.yaml").relative_to(base)))
    return files


@pytest.mark.parametrize("how", ["directory", "file list", "--changed", "chart", "deleted"])
def test_a_deep_tree_looks_at_each_directory_once(
    how: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tree with a file at each of D levels: each directory above a file is looked at
    (stat, lstat) a few times, for real paths, the repository, the configuration, the
    enclosing chart or kustomization and the chart copy, not once per file below it: D*D
    calls made 800 levels take 7 s to walk, 15 s as a file list and 66 s as --changed."""
    repo = make_checkout(tmp_path, monkeypatch)
    depth = 150
    top = repo / "t"
    top.mkdir()
    if how == "chart":
        (top / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
        (top / "templates").mkdir()
        files = _file_per_level(top / "templates", depth, repo)
    else:
        files = _file_per_level(top, depth, repo)
    args = {
        "directory": [top.name],
        "file list": ["--", *files],
        "--changed": ["--changed", "--", *files],
        "chart": ["--changed", "--", *files],
        "deleted": ["--changed", "--", *files],
    }[how]
    if how == "deleted":  # (git diff --name-only lists deleted files too)
        for f in files:
            os.unlink(repo / f)
    calls = 0
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def counted(*a: object, _real: Callable[..., object] = real, **k: object) -> object:
            nonlocal calls
            calls += 1
            return _real(*a, **k)

        monkeypatch.setattr(os, name, counted)
    done = run_cli("check", *args, cwd=repo)
    monkeypatch.undo()
    assert done.code in (0, 1), done.out + done.err
    assert "no such file" not in done.out + done.err
    assert f"{depth} file(s)" in done.out or how in ("chart", "deleted"), done.out
    # a few looks per file and directory (D*D look-ups made 11,000 to 460,000 here)
    assert calls <= 40 * depth, calls
