"""Turning the command line's PATHs into loaded objects: plain YAML files, kustomizations,
Helm charts and standard input (``-``).

Discovery rules:

* A directory with a ``Chart.yaml`` is a Helm chart: it is rendered and nothing below it is
  read as plain YAML (its ``charts/`` subcharts render as part of it).
* A directory with a kustomization file is rendered with kustomize; YAML files anywhere
  below it are never read as plain YAML (they are its resources and patches). A kustomization
  that another kustomization found in the same walk includes (a base of an overlay) is not
  rendered on its own, so the same object is not reported twice; name it on the command line
  to check it alone.
* Every other ``*.yaml``/``*.yml``/``*.json`` file is read as plain YAML
  (:func:`ssrisk.loading.discover`, which also applies ``--exclude`` and the default excludes).
* ``--exclude`` globs (matched as for files, :class:`ssrisk.paths.Excludes`) leave out a
  chart or kustomization found in a walk when they match its directory or the file that makes
  it one (``Chart.yaml``, ``kustomization.yaml``), so ``*/p2/*`` leaves out ``overlays/p2``
  just as it leaves out the plain files below a directory ``p2``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, BinaryIO

import msgspec

from ..confine import Trees, refusal, tree_of
from ..loading import (
    DEFAULT_EXCLUDES,
    MAX_FILE_BYTES,
    YAML_SUFFIXES,
    LoadedFile,
    decode,
    discover,
    read_text,
)
from ..model import InputError, Notice
from ..paths import Excludes, join, tidy
from ..walk import TooDeep, walk
from . import units
from .common import display_path, load_stream
from .units import Renderer

if TYPE_CHECKING:
    from ..paths import ExcludePattern
    from ..settings import Settings

STDIN = "-"
STDIN_PATH = "<stdin>"


class InputPlan(msgspec.Struct):
    """What to read: plain files, the units each renderer renders (by ``Renderer.kind``),
    and stdin."""

    files: list[str] = msgspec.field(default_factory=list)
    units: dict[str, list[str]] = msgspec.field(default_factory=dict)
    stdin: bool = False
    errors: list[InputError] = msgspec.field(default_factory=list)
    #: Links out of the tree that no walk reads (not manifests' names): said, not errors.
    warnings: list[Notice] = msgspec.field(default_factory=list)
    #: The checked tree (:func:`ssrisk.confine.tree_of` of the PATH it was found under) of
    #: each chart and kustomization: what a kustomization may reference.
    trees: dict[str, str] = msgspec.field(default_factory=dict)
    #: real chart path -> the configured variants whose values files were named as PATHs
    variants: dict[str, set[str]] = msgspec.field(default_factory=dict)
    #: real paths of the charts planned otherwise (every variant renders)
    every_variant: set[str] = msgspec.field(default_factory=set)

    def add(self, renderer: Renderer, unit: str, tree: str, *, whole: bool = True) -> None:
        """Plan ``unit`` (once); ``whole=False``: a chart planned for some variants only."""
        planned = self.units.setdefault(renderer.kind, [])
        if unit not in planned:  # (a chart named twice, or by one of its files)
            planned.append(unit)
        self.trees[unit] = tree
        if whole and renderer.kind == units.HelmCharts.kind:
            self.every_variant.add(os.path.realpath(unit))

    def variants_only(self) -> dict[str, frozenset[str]]:
        """The charts to render for some variants only (``Settings.chart_variants_only``):
        those planned only because values files of theirs were named."""
        return {c: frozenset(v) for c, v in self.variants.items() if c not in self.every_variant}


def plan_inputs(
    paths: Sequence[str],
    excludes: Iterable[ExcludePattern] = (),
    skip_files: frozenset[str] = frozenset(),
    chart_files: bool = True,
    values_of: Mapping[str, Sequence[tuple[str, str]]] | None = None,
) -> InputPlan:
    """Sort ``paths`` into plain files, Helm charts, kustomizations and stdin (``skip_files``:
    real paths of files that are not manifests, see :func:`ssrisk.loading.discover`). Paths
    are spelt as :func:`ssrisk.paths.tidy` spells them; links are names (:func:`_links_out`).
    With ``chart_files``, a file named in ``paths`` that lies in a chart plans that chart
    (:class:`ChartsOf`) instead of being read as plain YAML."""
    plan = InputPlan()
    rendered_roots: list[str] = []
    found_units: dict[str, list[str]] = {}  # kind -> the units of that kind the walks found
    plain_paths: list[str] = []
    walk_errors: list[InputError] = []
    excluded = Excludes(excludes)
    trees = Trees()  # (the files of a long list nested deep: each directory looked at once)
    charts_of = ChartsOf(trees.realpath)

    def given_unit(raw: str, tree: str) -> bool:
        """A PATH that is a unit itself: planned (or refused) as it is."""
        claimed = units.unit_at(raw)
        if claimed is None:
            return False
        refused = _refused_unit(raw, tree)
        if refused is not None:
            walk_errors.append(refused)
        else:
            plan.add(claimed[0], raw, tree)
        return True

    for given in paths:
        if given == STDIN:
            plan.stdin = True
            continue
        raw = tidy(given)
        read_by = values_of.get(os.path.realpath(raw)) if values_of else None
        if read_by and chart_files and os.path.isfile(raw):
            _plan_variants_of(raw, read_by, plan, trees(raw), walk_errors)
            continue
        if not os.path.isdir(raw):
            chart = charts_of(raw, trees(raw)) if chart_files and os.path.isfile(raw) else None
            if chart is None:
                plain_paths.append(raw)
            else:
                _plan_chart_of(raw, chart, plan, given_unit, trees(raw))
            continue
        tree = tree_of(raw)
        if given_unit(raw, tree):
            continue
        plain_paths.append(raw)

        _walk_units(raw, tree, excluded, plan, found_units, rendered_roots, walk_errors)
    for renderer in units.RENDERERS:  # (of those found, the ones each renders on their own)
        for unit in renderer.roots(found_units.get(renderer.kind, []), plan.trees):
            plan.add(renderer, unit, plan.trees[unit])
    # Plain files: everything under the given directories except the rendered trees.
    plan.files, plan.errors = discover(
        plain_paths, excluded, skip_files, rendered_roots, plan.warnings
    )
    known = {(e.path, e.message) for e in plan.errors}
    plan.errors.extend(e for e in walk_errors if (e.path, e.message) not in known)
    return plan


def _walk_units(
    raw: str,
    tree: str,
    excluded: Excludes,
    plan: InputPlan,
    found_units: dict[str, list[str]],
    rendered_roots: list[str],
    walk_errors: list[InputError],
) -> None:
    """Walk the directory ``raw`` (in ``tree``) for charts and kustomizations: each found is
    added to ``found_units`` (or refused into ``walk_errors``) and to ``rendered_roots``
    (never read as plain YAML). A chart or kustomization directory is excluded like its files:
    when a glob matches the directory or the file that makes it one (``*/p2/*`` and
    ``*/p2/kustomization.yaml`` as well as ``p2`` and ``*/p2``)."""

    def too_deep(exc: OSError) -> None:
        if isinstance(exc, TooDeep):  # (discovery reports directories it cannot list)
            walk_errors.append(InputError(tidy(exc.filename), str(exc.strerror)))

    in_unit: dict[str, bool] = {}  # (in or below a walked kustomization: _links_out)
    for walked, dirs, names in walk(raw, onerror=too_deep, links_are_names=True):
        root = tidy(walked)  # os.walk(".") gives "./sub"
        unit_here = in_unit.pop(root, False)
        if unit_here:  # (elsewhere discovery refuses the links out of the tree)
            walk_errors.extend(_links_out(root, names, tree, excluded, plan.warnings))
        dirs[:] = sorted(
            d for d in dirs if d not in DEFAULT_EXCLUDES and not excluded(join(root, d))
        )
        for d in list(dirs):
            sub = join(root, d)
            in_unit[sub] = unit_here
            claimed = units.unit_at(sub)
            if claimed is None:
                continue
            renderer, marker = claimed
            rendered_roots.append(sub)  # never read as plain YAML, even if excluded
            if refusal(sub, tree) is not None:  # refused like a plain file, never read
                dirs.remove(d)
                if not excluded(sub):
                    walk_errors.append(InputError(sub, refusal(sub, tree) or ""))
                continue
            if not renderer.walk_below:
                dirs.remove(d)
            if excluded(sub) or excluded(os.path.join(sub, os.path.basename(marker))):
                continue
            if (refused := _refused_unit(sub, tree)) is not None:
                walk_errors.append(refused)
                continue
            found_units.setdefault(renderer.kind, []).append(sub)
            plan.trees[sub] = tree
            in_unit[sub] = renderer.walk_below
            # (below a kustomization the walk goes on: charts and unrelated
            # kustomizations may sit there)


def _plan_variants_of(
    path: str,
    read_by: Sequence[tuple[str, str]],
    plan: InputPlan,
    tree: str,
    errors: list[InputError],
) -> None:
    """A values file of configured charts named as a PATH (``read_by``: ``(real chart path,
    variant)`` of each render reading it): each chart is planned for those variants, and a
    notice says so. It is no manifest: its findings are its charts'."""
    charts = units.HelmCharts()
    for chart, variant in read_by:
        shown = display_path(chart, path)
        refused = _refused_unit(shown, tree)
        if refused is not None:
            errors.append(refused)
            continue
        plan.add(charts, shown, tree, whole=False)
        plan.variants.setdefault(chart, set()).add(variant)
        said = f"values of chart {shown}, variant {variant}: checked as that variant renders it"
        plan.warnings.append(Notice(path, said))


def _plan_chart_of(
    path: str,
    chart: str,
    plan: InputPlan,
    plan_unit: Callable[[str, str], bool],
    tree: str,
) -> None:
    """A file of ``chart`` (in ``tree``) named as a PATH: the chart is planned (once;
    ``plan_unit`` plans or refuses it), and a notice says so."""
    if chart not in plan.units.get(units.HelmCharts.kind, []):
        plan_unit(chart, tree)
    plan.warnings.append(Notice(path, f"part of chart {chart}: checked as the chart renders it"))


class ChartsOf:
    """The chart (the outermost, for a subchart) each file named on the command line belongs
    to (:class:`~ssrisk.renderers.units.EnclosingUnits`: each directory looked at once). A
    chart's files are not manifests until rendered; a kustomization's are."""

    def __init__(self, realpath: Callable[[str], str] = os.path.realpath) -> None:
        self._units = units.EnclosingUnits(realpath)

    def __call__(self, path: str, tree: str) -> str | None:
        """The chart of ``path`` shown like it, or ``None`` (in none, or in a kustomization)."""
        renderer, unit = self._units.enclosing(path, tree)
        return unit if renderer is not None and renderer.kind == units.HelmCharts.kind else None


def _links_out(
    root: str, names: list[str], tree: str, excluded: Excludes, warnings: list[Notice]
) -> list[InputError]:
    """The refusals of the links of ``root`` that lead out of the tree, whatever they lead to.

    Links are names in the walk of :func:`plan_inputs`: nothing is asked of a link's target,
    so a link out of the tree reads the same whether it leads to a directory, a chart, a file
    or nothing. Discovery refuses such links; in a walked kustomization, whose files discovery
    never reads, this function does: an error for a manifest's name, a warning (in
    ``warnings``) for any other, which nothing reads."""
    out = []
    for name in sorted(names):
        full = join(root, name)
        refused = refusal(full, tree) if os.path.islink(full) else None
        if refused is None or excluded(full):
            continue
        if name.lower().endswith(YAML_SUFFIXES):
            out.append(InputError(full, refused))
        else:
            warnings.append(Notice(full, refused, level="warning"))
    return out


def _refused_unit(directory: str, tree: str) -> InputError | None:
    """The error for a chart or kustomization ``directory`` whose real path (or whose
    ``Chart.yaml`` or kustomization file) leaves the checked ``tree`` or enters ``.git``:
    refused like a plain file (:func:`ssrisk.confine.refusal`), before any of it is read."""
    refused = refusal(directory, tree)
    if refused is not None:
        return InputError(directory, refused)
    claimed = units.unit_at(directory)
    marker = claimed[1] if claimed is not None else None
    if marker is not None:
        refused = refusal(marker, tree)
        if refused is not None:
            return InputError(tidy(marker), refused)
    return None


def load_inputs(
    paths: Sequence[str],
    settings: Settings,
    stdin: BinaryIO | None = None,
    kinds: frozenset[str] | None = None,
    chart_files: bool = True,
) -> tuple[list[LoadedFile], list[InputError]]:
    """Load every input of ``paths``: plain files, rendered charts and kustomizations, stdin.
    With ``kinds`` (a ``--context`` input), only objects of those kinds are read, and plain
    files' documents of other kinds are not parsed at all.

    Namespaces: a namespaced object without ``metadata.namespace`` gets the kustomization's
    namespace (applied by kustomize), else ``settings.namespace`` (``--namespace``), as kubectl
    would. A renderer that is missing or fails becomes one error naming the directory; every
    other input is still loaded.

    Returns:
        ``(loaded files, input errors)``; nothing is raised for bad input.
    """

    from ..settings import values_readers

    values_of = values_readers(settings.charts) if chart_files and settings.charts else None
    plan = plan_inputs(paths, settings.exclude, settings.skip_files, chart_files, values_of)
    only = plan.variants_only()
    if only:  # (values files named as PATHs: their variants only)
        settings = msgspec.structs.replace(
            settings, chart_variants_only={**settings.chart_variants_only, **only}
        )
    namespace = settings.namespace
    loaded: list[LoadedFile] = []
    for path in plan.files:
        text, err = read_text(path)
        if err is not None or text is None:
            lf = LoadedFile(path)
            lf.errors.append(err or InputError(path, "cannot read file"))
            loaded.append(lf)
        else:
            loaded.append(load_stream(text, path, namespace, kinds))
    for renderer in units.RENDERERS:  # (each imports its modules only when it has units)
        if plan.units.get(renderer.kind):
            loaded.extend(renderer.render(plan.units[renderer.kind], settings, plan.trees))
    if plan.stdin:
        loaded.append(load_stdin(namespace, stdin))
    if kinds is not None:
        for lf in loaded:
            lf.objects = [o for o in lf.objects if o.kind in kinds]
    if plan.warnings:  # (carried by a file the run did not read)
        said = LoadedFile(plan.warnings[0].path, read=False)
        said.notices = list(plan.warnings)
        loaded.append(said)
    return loaded, plan.errors


def load_stdin(namespace: str, stream: BinaryIO | None = None) -> LoadedFile:
    """Read a YAML stream from standard input (``helm template ... | ssrisk check -``).

    Positions are in the stream (path ``<stdin>``); objects under Helm's ``# Source:``
    comments also name their template.
    """
    if stream is None and sys.stdin is None:  # file descriptor 0 closed (`<&-`)
        lf = LoadedFile(STDIN_PATH)
        lf.errors.append(InputError(STDIN_PATH, "cannot read standard input: it is closed"))
        return lf
    source = stream if stream is not None else sys.stdin.buffer
    try:
        raw = source.read(MAX_FILE_BYTES + 1)  # bounded, like a file
        if len(raw) > MAX_FILE_BYTES:
            lf = LoadedFile(STDIN_PATH)
            lf.errors.append(InputError(STDIN_PATH, f"larger than the {MAX_FILE_BYTES} byte limit"))
            return lf
    except (OSError, ValueError) as exc:
        lf = LoadedFile(STDIN_PATH)
        lf.errors.append(InputError(STDIN_PATH, f"cannot read standard input: {exc}"))
        return lf
    text, err = decode(STDIN_PATH, raw)
    if err is not None or text is None:
        lf = LoadedFile(STDIN_PATH)
        lf.errors.append(err or InputError(STDIN_PATH, "cannot read standard input"))
        return lf
    return load_stream(text, STDIN_PATH, namespace)
