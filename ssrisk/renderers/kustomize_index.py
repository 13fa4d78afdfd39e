"""The kustomizations of a repository and which include which: the builds a change in one
needs (``ssrisk check --changed``; :class:`ssrisk.renderers.units.Kustomizations`)."""

from __future__ import annotations

import os
from collections.abc import Callable

from ..paths import Excludes
from .common import kustomization_file


class KustomizationIndex:
    """The kustomizations of a repository and which include which (read on first need: the
    walk lists directories and reads only kustomization files)."""

    def __init__(
        self, root: str, excludes: Excludes, realpath: Callable[[str], str] = os.path.realpath
    ) -> None:
        from ..confine import refusal
        from ..loading import DEFAULT_EXCLUDES
        from ..walk import walk

        self.root = root
        #: kustomization (real path) -> the kustomizations that include it
        self.included_by: dict[str, set[str]] = {}
        #: the include cycle (strongly connected component) of each, made on first need
        self._component: dict[str, int] | None = None
        #: kustomization -> the builds a change in it needs (:meth:`builds_of`)
        self._tops: dict[str, frozenset[str]] = {}
        for here, dirs, _names in walk(root):  # (the walk reports nothing: discovery does)
            dirs[:] = sorted(
                d for d in dirs if d not in DEFAULT_EXCLUDES and not excludes(os.path.join(here, d))
            )
            marker = kustomization_file(here)
            if marker is None or excludes(os.path.join(here, os.path.basename(marker))):
                continue  # (a kustomization the patterns leave out includes nothing)
            if refusal(marker, root, realpath) is not None:
                continue  # never opened: its build reports the refusal
            from .kustomize import local_references  # (only for a kustomization)

            real = realpath(here)
            self.included_by.setdefault(real, set())
            for ref in local_references(here, root):
                self.included_by.setdefault(ref, set()).add(real)

    def builds_of(self, directory: str) -> list[str]:
        """The kustomizations (real paths) to build for a change in ``directory`` (a
        kustomization): those that include it, through any number of overlays, and that
        nothing includes; the directory itself when nothing includes it. A kustomization in
        an include cycle is built (kustomize reports the cycle): a parent in its own cycle is
        no overlay of it. Each kustomization's answer is found once per index, so the changes
        of a run cost time linear in the kustomizations and includes (the include cycles are
        found once too)."""
        start = os.path.realpath(directory)
        tops = self._tops
        todo = [start]
        while todo:  # (iterative: overlays may nest thousands deep)
            here = todo[-1]
            if here in tops:
                todo.pop()
                continue
            parents = self._overlays_of(here)
            waiting = [p for p in parents if p not in tops]
            if waiting:
                todo.extend(waiting)  # (overlays of overlays: acyclic, between cycles)
                continue
            tops[here] = (
                frozenset().union(*(tops[p] for p in parents)) if parents else frozenset({here})
            )
            todo.pop()
        return sorted(tops[start])

    def _overlays_of(self, here: str) -> list[str]:
        """The kustomizations that include ``here`` and are not in an include cycle with it."""
        if self._component is None:
            from .kustomize_refs import components

            includes: dict[str, set[str]] = {}
            for child, parents_of in self.included_by.items():
                for parent in parents_of:
                    includes.setdefault(parent, set()).add(child)
            self._component = components(includes)
        component = self._component
        return sorted(
            p
            for p in self.included_by.get(here, set())
            if p != here and component.get(p) != component.get(here)
        )
