"""The renderers: each kind of rendered input behind one interface.

A :class:`Renderer` says what makes a directory one of its units (a Helm chart's
``Chart.yaml``, a kustomization file), which unit renders for such a directory (a subchart
renders with its parent), which of the units a walk finds are rendered on their own (a
kustomization another one includes is not), which builds a changed file needs
(``--changed``) and how its units render (in the sandbox of :mod:`.bounded`, bounded in time
and memory). Discovery (:func:`ssrisk.renderers.inputs.plan_inputs`), ``--changed``
(:mod:`ssrisk.changed`) and loading ask :data:`RENDERERS` and name no renderer themselves;
plain files and standard input are read by :mod:`ssrisk.loading` and
:func:`ssrisk.renderers.inputs.load_stdin`. Where an object came from is on its position
(``Position.source``: the Helm template; ``Position.kustomization``: the build).

A new renderer is a subclass registered in :data:`RENDERERS` (the first whose marker a
directory has claims it); its heavy modules are imported in :meth:`Renderer.render` only,
so a run without one of its units never loads them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from ..paths import Excludes
from .common import (
    CHART_FILE,
    KUSTOMIZATION_FILES,
    RenderedObject,
    display_path,
    is_chart,
    kustomization_file,
)

if TYPE_CHECKING:
    from ..loading import LoadedFile
    from ..settings import Settings


class Repository(msgspec.Struct):
    """The repository of changed files, as ``--changed`` sees it: its tree ``root``, the
    exclude patterns, the real-path lookup, and ``state``, what a renderer learns of the
    repository for the run's next changed files."""

    root: str
    excludes: Excludes
    realpath: Callable[[str], str]
    state: dict[str, Any] = msgspec.field(default_factory=dict)


class Renderer:
    """One kind of rendered input (see the module)."""

    #: How plans and messages name a unit of this kind ("chart", "kustomization").
    kind: ClassVar[str]
    #: Whether a walk goes on below a unit: charts and unrelated kustomizations may sit
    #: below a kustomization, nothing is read below a chart.
    walk_below: ClassVar[bool]
    #: What ``--changed`` does for a deleted file of a unit (its notice).
    without_deleted: ClassVar[str]

    def marker(self, directory: str) -> str | None:
        """The file that makes ``directory`` a unit of this kind, or ``None``."""
        raise NotImplementedError

    def unit_for(self, directory: str) -> str:
        """The unit to render for a ``directory`` that has this renderer's marker."""
        return directory

    def roots(self, walked: Sequence[str], trees: Mapping[str, str]) -> list[str]:
        """Of the units a walk found (``trees``: the checked tree of each), those rendered on
        their own, in walk order."""
        return list(walked)

    def changed_builds(self, path: str, unit: str, repo: Repository) -> list[tuple[str, bool]]:
        """For a changed file ``path`` in ``unit`` of the repository ``repo``, the units to
        build, shown like ``path``, each with whether the change can alter every object of
        it (not only those written in ``path``)."""
        raise NotImplementedError

    def duplicate(self, obj: str, first: str, unit: str) -> str | None:
        """When one unit renders two objects of the same kind, namespace and name (``obj``,
        the first at ``first``): the warning for the second copy, when the unit cannot be
        applied with both (only the first is then checked), else ``None`` (both are)."""
        return None

    def render(
        self, units: Sequence[str], settings: Settings, trees: Mapping[str, str]
    ) -> list[LoadedFile]:
        """Render and load ``units`` (``trees``: the checked tree of each, which a unit may
        not reference out of). A renderer that is missing or fails is an error of its unit;
        nothing is raised for bad input."""
        raise NotImplementedError


class HelmCharts(Renderer):
    """Helm charts: ``helm template`` in the sandbox (:mod:`.helm`)."""

    kind = "chart"
    walk_below = False
    without_deleted = "its chart is rendered without it"

    def marker(self, directory: str) -> str | None:
        return os.path.join(directory, CHART_FILE) if is_chart(directory) else None

    def unit_for(self, directory: str) -> str:
        """A subchart in ``charts/`` renders with its parent: the outermost chart."""
        chart = directory
        while True:
            parent = os.path.dirname(chart)
            if os.path.basename(parent) != "charts" or not is_chart(os.path.dirname(parent)):
                return chart
            chart = os.path.dirname(parent)

    def changed_builds(self, path: str, unit: str, repo: Repository) -> list[tuple[str, bool]]:
        """The chart; a change to anything but a manifest template (a YAML file below a
        ``templates`` directory) can alter every object of it (values, Chart.yaml,
        helpers, files/)."""
        rel = os.path.relpath(os.path.abspath(path), os.path.abspath(unit)).split(os.sep)
        template = "templates" in rel[:-1] and path.lower().endswith((".yaml", ".yml"))
        return [(unit, not template)]

    def duplicate(self, obj: str, first: str, unit: str) -> str | None:
        """Helm cannot install a release with two copies of an object (a parent chart and its
        subchart both writing ``release-name-pg``): creating the second fails with "already
        exists" (helm/helm#1479, #3186)."""
        return (
            f"{obj} is also rendered from {first} of chart {unit}: Helm cannot install both "
            "(the second fails with 'already exists'); only the first is checked"
        )

    def render(
        self, units: Sequence[str], settings: Settings, trees: Mapping[str, str]
    ) -> list[LoadedFile]:
        from dataclasses import replace

        from ..settings import ChartVariant
        from .bounded import Limits
        from .helm import HelmOptions, render_chart

        base = HelmOptions(
            limits=Limits(timeout_s=settings.render_timeout_s),
            kube_version=settings.kube_version,
            api_versions=tuple(settings.helm_api_versions),
        )
        loaded: list[LoadedFile] = []
        for chart in units:
            real = os.path.realpath(chart)
            variants = settings.charts.get(real) or (ChartVariant(),)
            only = settings.chart_variants_only.get(real)
            for variant in variants:
                if only is not None and variant.name not in only:
                    continue
                # the configuration's values, then the command line's (helm merges in order)
                options = replace(
                    base,
                    values_files=(*variant.values, *settings.helm_values),
                    set_values=(*variant.set_values, *settings.helm_set),
                    release=variant.release,
                    variant=variant.name,
                    set_positions=variant.set_positions,
                    command_line_sets=len(settings.helm_set),
                )
                namespace = variant.namespace or settings.namespace
                for lf in render_chart(chart, namespace, options):
                    for obj in lf.objects:
                        if isinstance(obj, RenderedObject):
                            obj.chart_render = (chart, namespace, options)
                    loaded.append(lf)
        return loaded


class Kustomizations(Renderer):
    """Kustomizations: ``kustomize build`` in the sandbox, after the references are checked
    (:mod:`.kustomize`, :mod:`.kustomize_refs`)."""

    kind = "kustomization"
    walk_below = True
    without_deleted = "the kustomizations that built it are built without it"

    def marker(self, directory: str) -> str | None:
        return kustomization_file(directory)

    def roots(self, walked: Sequence[str], trees: Mapping[str, str]) -> list[str]:
        """A kustomization another walked one includes (a base of an overlay) is not rendered
        on its own, so the same object is not reported twice."""
        if not walked:
            return []
        from .kustomize_refs import included_bases, local_references

        included = included_bases(
            {os.path.realpath(k): local_references(k, trees[k]) for k in walked}
        )
        return [k for k in walked if os.path.realpath(k) not in included]

    def changed_builds(self, path: str, unit: str, repo: Repository) -> list[tuple[str, bool]]:
        """Every kustomization of the repository that builds ``unit``, directly or through
        overlays; a changed kustomization file can alter every object of those builds."""
        from .kustomize_index import KustomizationIndex

        index = repo.state.get("kustomization-index")
        if index is None or index.root != repo.root:
            index = KustomizationIndex(repo.root, repo.excludes, repo.realpath)
            repo.state["kustomization-index"] = index
        whole = os.path.basename(path) in KUSTOMIZATION_FILES
        return [(display_path(build, path), whole) for build in index.builds_of(unit)]

    def render(
        self, units: Sequence[str], settings: Settings, trees: Mapping[str, str]
    ) -> list[LoadedFile]:
        from .bounded import Limits
        from .kustomize import render_kustomization
        from .kustomize_refs import Analyser

        limits = Limits(timeout_s=settings.render_timeout_s)
        analyser = Analyser()  # each kustomization file is read and checked once per run
        return [
            render_kustomization(
                directory,
                settings.namespace,
                limits,
                network=settings.allow_remote_resources,
                tree=trees.get(directory),
                analyser=analyser,
            )
            for directory in units
        ]


#: The renderers, in the order they claim a directory (a chart's directory is a chart even
#: with a kustomization file beside its Chart.yaml).
RENDERERS: tuple[Renderer, ...] = (HelmCharts(), Kustomizations())


def by_kind() -> dict[str, Renderer]:
    """Each renderer of :data:`RENDERERS` by the kind of unit it renders."""
    return {r.kind: r for r in RENDERERS}


def unit_at(directory: str) -> tuple[Renderer, str] | None:
    """The renderer that claims ``directory`` and its marker file, or ``None`` (plain)."""
    for renderer in RENDERERS:
        marker = renderer.marker(directory)
        if marker is not None:
            return renderer, marker
    return None


class EnclosingUnits:
    """The unit enclosing each file (the changed files of a commit, a chart's file named as a
    PATH), each directory looked at once: files of a tree nested D levels deep cost D looks,
    not D*D."""

    def __init__(self, realpath: Callable[[str], str] = os.path.realpath) -> None:
        self.realpath = realpath
        #: (tree, absolute directory) -> (the renderer that claims the nearest unit, the
        #: unit it renders for it), or (None, "") for a plain file
        self._nearest: dict[tuple[str, str], tuple[Renderer | None, str]] = {}

    def enclosing(self, path: str, root: str) -> tuple[Renderer | None, str]:
        """The renderer and unit of ``path``: the nearest directory at or above the file, not
        above the tree ``root``, that a renderer claims (:func:`unit_at`), as the unit that
        renders for it (``Renderer.unit_for``: a subchart's outermost chart), shown like
        ``path``; ``(None, "")`` for a plain file."""
        renderer, unit = self._of(os.path.dirname(os.path.abspath(path)), root)
        return renderer, display_path(unit, path) if unit else ""

    def _of(self, directory: str, root: str) -> tuple[Renderer | None, str]:
        chain: list[str] = []
        here = directory
        found: tuple[Renderer | None, str]
        while (root, here) not in self._nearest:
            chain.append(here)
            claimed = unit_at(here)
            if claimed is not None:
                found = (claimed[0], claimed[0].unit_for(here))
                break
            parent = os.path.dirname(here)
            if parent == here or self.realpath(here) == root:
                found = (None, "")
                break
            here = parent
        else:
            found = self._nearest[(root, here)]
        for below in chain:
            self._nearest[(root, below)] = found
        return found
