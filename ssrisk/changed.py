"""Checking the files of a commit: ``ssrisk check --changed FILE...`` (what the pre-commit
hook runs).

A changed file is checked as part of the rendered unit it belongs to, found by walking up
from it inside its repository (:func:`ssrisk.confine.tree_of`):

* inside a Helm chart (a directory with ``Chart.yaml``; for a subchart in ``charts/``, the
  outermost chart): the chart is rendered;
* inside a kustomization tree (a directory with a kustomization file, or below one): every
  kustomization of the repository that builds that directory, directly or through the
  overlays that include it as a base, is rendered (only kustomization files are read to
  find them);
* anything else: the file itself, with the other manifests of its directory for relations
  (their PodDisruptionBudgets, Services, StorageClasses and StatefulSets are read; other
  documents are not even parsed).

What is reported: every finding of the StatefulSets built from a changed file, and of the
StatefulSets that a changed PodDisruptionBudget, Service, StorageClass, PersistentVolume(Claim),
HorizontalPodAutoscaler or Namespace relates to. Namespaced related objects (and Namespaces)
re-check the StatefulSets of their own unit; a StorageClass or PersistentVolume, found by
name from anywhere (shared infrastructure in a directory of its own), those of its whole
repository (:data:`SHARED_KINDS`). A StatefulSet is built from a file when it is
written there (a plain
file, a template) or when its kustomize resource or one of its patches is that file; a changed
``values.yaml``, ``Chart.yaml``, helper or other chart file builds every object of the chart,
and a changed kustomization file every object of the builds that include it. Input errors are
those of the changed files and of the rendered units; problems of files that did not change
are not reported, and useless suppressions get a warning only in the changed files.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .confine import RealPaths, Trees
from .embedded_sim.storage import claim_class_name
from .engine import Report, check_loaded, load_all, unread_context
from .inventory import Inventory
from .loading import MODELLED_KINDS, RELATED_KINDS, YAML_SUFFIXES, LoadedFile
from .model import InputError, K8sObject, Notice
from .paths import Excludes, join, tidy
from .renderers import units as renderers
from .renderers.common import RenderedObject, display_path
from .renderers.units import Repository
from .rule import Rule
from .settings import OWN_FILE_NAMES, ChartVariant, Settings, values_readers


class ChangedError(Exception):
    """A ``--changed`` argument that is not a file (a usage error)."""


@dataclass
class ChangePlan:
    """Where each changed file belongs: directories as the user gave the files."""

    #: real paths of the changed files
    real: frozenset[str]
    #: directory -> its changed plain files
    plain: dict[str, list[str]] = field(default_factory=dict)
    #: kind of unit (``Renderer.kind``) -> unit to render (a chart, a kustomization to
    #: build) -> the changed files it builds from
    units: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    #: real paths of the charts and builds every object of which a changed file builds
    whole: set[str] = field(default_factory=set)
    #: changed files that are not on disk (deleted), with the unit kind they belonged to
    deleted: list[tuple[str, str]] = field(default_factory=list)
    #: changed files the exclude patterns leave out (not checked)
    excluded: list[str] = field(default_factory=list)
    #: changed files whose real path leaves the tree (or is in ``.git``): refused when
    #: loaded, with the same error whether anything is there or not
    refused: list[InputError] = field(default_factory=list)
    #: the trees of the run's paths and their real paths, each directory looked at once
    #: (changed files nested deep)
    trees: Trees = field(default_factory=Trees)
    #: real chart path -> the configured variants whose values files changed
    variants: dict[str, set[str]] = field(default_factory=dict)
    #: real paths of the charts a changed file of which is not a variant's values file: every
    #: variant of those renders
    every_variant: set[str] = field(default_factory=set)

    def variants_only(self) -> dict[str, frozenset[str]]:
        """The charts to render for some of their variants only (``Settings.
        chart_variants_only``): those whose only changed files are variants' values files."""
        return {
            chart: frozenset(names)
            for chart, names in self.variants.items()
            if chart not in self.every_variant
        }

    @property
    def realpath(self) -> RealPaths:
        return self.trees.realpath

    def rendered(self) -> list[str]:
        """Every unit to render, renderer by renderer."""
        return [u for r in renderers.RENDERERS for u in self.units.get(r.kind, {})]


_NOT_A_FILE = "--changed takes the changed files (as pre-commit passes them), not {!r}"


def plan_changes(
    paths: Sequence[str],
    excludes: Excludes | None = None,
    charts: Mapping[str, Sequence[ChartVariant]] | None = None,
) -> ChangePlan:
    """Sort the changed files ``paths`` into the units that build them (see the module).

    A values file of a configured chart (``charts``: ``Settings.charts``) builds that chart,
    for the variants that read it (:meth:`ChangePlan.variants_only`), wherever it lies.

    A file that a walk of its repository would leave out (``--exclude`` / ``exclude:``
    matches it, a directory it is in, or its chart or kustomization) is not checked, and
    neither are kustomizations the patterns leave out, as in ``ssrisk check .``.

    Raises:
        ChangedError: a path that is standard input or a directory.
    """
    from .confine import refusal

    excludes = excludes if excludes is not None else Excludes(())
    tree_of = Trees()  # (each directory above the changed files looked at once)
    realpath = tree_of.realpath
    plan = ChangePlan(frozenset(realpath(p) for p in paths), trees=tree_of)
    units = renderers.EnclosingUnits(realpath)
    readers = values_readers(charts or {})
    repo: Repository | None = None  # (what renderers learn of it serves its next files)
    for given in paths:
        if given == "-":
            raise ChangedError(_NOT_A_FILE.format(given))
        path = tidy(given)
        if os.path.basename(path) in OWN_FILE_NAMES:
            continue
        root = tree_of(path)
        if excludes.under(path, root, realpath):
            plan.excluded.append(path)
            continue
        refused = refusal(path, root, realpath)
        if refused is not None:
            # a link out of the tree (or into .git): refused as it is, whatever lies there
            # (a file, a directory or nothing), and nothing beside it is looked at
            plan.refused.append(InputError(path, refused))
            continue
        if os.path.isdir(given):
            raise ChangedError(_NOT_A_FILE.format(given))
        read_by = readers.get(realpath(path), ())
        for chart, variant in read_by:
            plan.units.setdefault(renderers.HelmCharts.kind, {}).setdefault(
                display_path(chart, path), []
            ).append(path)
            plan.whole.add(chart)
            plan.variants.setdefault(chart, set()).add(variant)
        renderer, unit = units.enclosing(path, root)
        if read_by and (renderer is None or renderer.kind != renderers.HelmCharts.kind):
            continue  # (a values file beside the manifests is not one of them)
        refused = refusal(unit, root, realpath) if renderer is not None else None
        if refused is not None:
            # reached through a link out of the tree: refused like a plain file (by discover)
            plan.refused.append(InputError(path, refused))
            continue
        if not os.path.lexists(path):
            plan.deleted.append((path, renderer.kind if renderer is not None else "plain"))
            if renderer is None:
                continue  # check_changed checks the other manifests of its directory
        if renderer is None:
            plan.plain.setdefault(os.path.dirname(path) or os.curdir, []).append(path)
            continue
        marker = renderer.marker(unit)
        if marker is not None and excludes(os.path.join(unit, os.path.basename(marker))):
            plan.excluded.append(path)
            continue
        builds = plan.units.setdefault(renderer.kind, {})
        if renderer.kind == renderers.HelmCharts.kind:
            plan.every_variant.add(realpath(unit))
        if repo is None or repo.root != root:
            repo = Repository(root, excludes, realpath, repo.state if repo else {})
        for build, whole in renderer.changed_builds(path, unit, repo):
            builds.setdefault(build, []).append(path)
            if whole:
                plan.whole.add(realpath(build))
    return plan


def check_changed(
    paths: Sequence[str],
    rules: Sequence[Rule],
    settings: Settings,
    context: Sequence[str] = (),
) -> Report:
    """Check the changed files ``paths`` as parts of their rendered units (see the module).

    Raises:
        ChangedError: a path that is not a file.
    """
    excludes = Excludes(settings.exclude)
    plan = plan_changes(paths, excludes, settings.charts)
    settings = msgspec.structs.replace(settings, chart_variants_only=plan.variants_only())
    realpath = plan.realpath
    gone = _deleted(plan, settings, excludes)
    for path in plan.excluded:  # said, so that "nothing to check" is not a surprise
        left_out = LoadedFile(path)
        left_out.notices.append(Notice(path, EXCLUDED))
        gone.append(left_out)
    changed_plain = [p for files in plan.plain.values() for p in files]
    # (plain: --changed found no chart above them, so none is looked for again)
    loaded, errors = (
        load_all(changed_plain, settings, chart_files=False) if changed_plain else ([], [])
    )
    errors = [*plan.refused, *errors]
    loaded += gone
    units = plan.rendered()
    if units:
        built, build_errors = load_all(units, settings)
        loaded += [_only_changed_notices(lf, plan) for lf in built]
        errors += build_errors
    seen = {realpath(lf.path) for lf in loaded}
    changed = _Changed(plan)
    shared = _shared_scopes(loaded, changed)
    wide = []
    if shared:  # a StorageClass or PersistentVolume: the repository's StatefulSets
        wide = [
            lf
            for lf in load_all(shared, settings, kinds=frozenset(MODELLED_KINDS))[0]
            if realpath(lf.path) not in seen
        ]
        seen.update(realpath(lf.path) for lf in wide)
    neighbours = [
        f
        for directory in plan.plain
        for f in manifests_in(directory, settings, excludes, realpath)
        if realpath(f) not in seen
    ]
    related = wide + (
        load_all(neighbours, settings, kinds=frozenset(MODELLED_KINDS))[0] if neighbours else []
    )
    seen.update(realpath(lf.path) for lf in related)
    extra: list[LoadedFile] = []
    unread: list[Notice] = []
    if context:
        context_files, context_errors = load_all(context, settings, kinds=RELATED_KINDS)
        extra = [lf for lf in context_files if realpath(lf.path) not in seen]
        unread = unread_context(context, context_errors)
    return check_loaded(
        loaded,
        errors,
        rules,
        settings,
        context=extra,
        related=related,
        select=changed.statefulsets_to_check,
        warn_in=changed.is_changed_file,
        notices=unread,
    )


#: The notice for a changed file that ``--exclude`` / ``exclude:`` leaves out.
EXCLUDED = "excluded (--exclude or the configuration's exclude:): not checked"

#: Cluster-scoped objects that StatefulSets find by identity anywhere in the inputs (shared
#: infrastructure, often kept in a directory of its own): a change to one re-checks the
#: StatefulSets of its whole repository that use it, not only those of its unit.
SHARED_KINDS = frozenset({"StorageClass", "PersistentVolume"})


def _shared_scopes(loaded: Sequence[LoadedFile], changed: _Changed) -> list[str]:
    """The repositories (shown like the changed files) whose StatefulSets a changed
    StorageClass or PersistentVolume of ``loaded`` may concern: a class named by
    ``storageClassName`` is found by identity anywhere, and a default class serves the claims
    of its directory tree (:meth:`ssrisk.inventory.Inventory.for_unit`)."""
    tree_of = changed.plan.trees
    scopes = {
        display_path(tree_of(o.path), o.path)
        for lf in loaded
        for o in lf.objects
        if o.kind in SHARED_KINDS and changed.built_from_changes(o)
    }
    return sorted(scopes)


def _deleted(plan: ChangePlan, settings: Settings, excludes: Excludes) -> list[LoadedFile]:
    """A notice for each changed file that is not on disk (git passes deleted files when
    asked for every changed path; pre-commit never does). A deletion is a change like any
    other: a chart is rendered and a kustomization built without the file; for a plain file,
    the other manifests of its directory are checked as if they changed, since what it held
    (a PodDisruptionBudget, a Service) may be what kept their StatefulSets safe."""
    out = []
    for path, kind in plan.deleted:  # (none is refused: plan_changes sets those apart)
        lf = LoadedFile(path)
        if kind in renderers.by_kind():
            what = renderers.by_kind()[kind].without_deleted
        else:
            directory = os.path.dirname(path) or os.curdir
            listed = plan.plain.setdefault(directory, [])
            others = [
                f
                for f in manifests_in(directory, settings, excludes, plan.realpath)
                if f not in listed
            ]
            listed.extend(others)
            if others:  # (a new set per deleted file would cost the changed files each time)
                plan.real = plan.real | {plan.realpath(f) for f in others}
            what = (
                "the other manifests of its directory are checked as if they changed"
                if others
                else "nothing else in its directory to check"
            )
        lf.notices.append(Notice(path, f"deleted (not on disk): {what}"))
        out.append(lf)
    return out


def manifests_in(
    directory: str, settings: Settings, excludes: Excludes, realpath: RealPaths
) -> list[str]:
    """The manifest files of ``directory`` itself (not of its subdirectories) that a walk
    would read."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        full = join(directory, name)
        if not name.lower().endswith(YAML_SUFFIXES) or name in OWN_FILE_NAMES:
            continue
        if excludes(full):
            continue
        if os.path.isfile(full) and realpath(full) not in settings.skip_files:
            out.append(full)
    return out


def _only_changed_notices(lf: LoadedFile, plan: ChangePlan) -> LoadedFile:
    """A rendered unit's notices (schema warnings, duplicate keys) about files that did not
    change are not the commit's; its errors (a build that fails) are kept."""
    if plan.realpath(lf.path) not in plan.whole:
        lf.notices = [n for n in lf.notices if plan.realpath(n.path) in plan.real]
    return lf


class _Changed:
    """Which objects a changed file builds, and which StatefulSets that concerns."""

    def __init__(self, plan: ChangePlan) -> None:
        self.plan = plan
        self._real: dict[str, str] = {}
        self.units = {self.realpath(u) for u in plan.rendered()}

    def realpath(self, path: str) -> str:
        found = self._real.get(path)
        if found is None:
            found = self._real[path] = self.plan.realpath(path)
        return found

    def is_changed_file(self, path: str) -> bool:
        return self.realpath(path) in self.plan.real

    def built_from_changes(self, obj: K8sObject) -> bool:
        """Whether a changed file builds ``obj`` (see the module)."""
        if isinstance(obj, RenderedObject):
            unit = obj.rendered_from
            if unit is not None and self.realpath(unit) in self.plan.whole:
                return True
            files = obj.locator.files() if obj.locator is not None else None
            if files is None:  # where it comes from is not known: any change of its build
                return unit is not None and self.realpath(unit) in self.units
            return any(self.is_changed_file(f) for f in files)
        return self.is_changed_file(obj.path)

    def statefulsets_to_check(self, inventory: Inventory) -> list[K8sObject]:
        """The StatefulSets built from a changed file, and those a changed related object
        (PDB, Service, StorageClass, volume, Namespace) relates to, in load order."""
        changed_related = [
            o
            for kind, objs in inventory.by_kind.items()
            if kind != "StatefulSet"
            for o in objs
            if self.built_from_changes(o)
        ]
        related = ChangedRelated(changed_related)
        out = []
        for sts in inventory.statefulsets:
            if self.built_from_changes(sts):
                out.append(sts)
                continue
            if changed_related and related.relate_to(sts, inventory.for_unit(sts.unit)):
                out.append(sts)
        return out


class ChangedRelated:
    """Changed objects, indexed by what ties them to a StatefulSet, so that each set costs
    its own lookups once, not one per changed object (a commit of 2,000 StorageClasses beside
    2,000 sets took minutes)."""

    def __init__(self, objs: Iterable[K8sObject]) -> None:
        self.ids: set[int] = set()
        self.namespaces: set[str] = set()
        self.pdb_namespaces: set[str | None] = set()
        self.services: set[tuple[str | None, str]] = set()
        self.volume_classes: set[str | None] = set()
        self.other_volume_classes = False
        self.claims: dict[str | None, list[K8sObject]] = defaultdict(list)
        self.kinds: set[str] = set()
        for obj in objs:
            self.ids.add(id(obj))
            self.kinds.add(obj.kind)
            if obj.kind == "Namespace":
                self.namespaces.add(obj.name)
            elif obj.kind == "PodDisruptionBudget":
                self.pdb_namespaces.add(obj.namespace)
            elif obj.kind == "Service":
                self.services.add((obj.namespace, obj.name))
            elif obj.kind == "PersistentVolume":
                cls = obj.get("spec", "storageClassName")
                if cls is None or isinstance(cls, str):
                    self.volume_classes.add(cls)
            elif obj.kind == "PersistentVolumeClaim":
                self.claims[obj.namespace].append(obj)

    def relate_to(self, sts: K8sObject, inventory: Inventory) -> bool:
        """Whether one of the changed objects is one the rules look up for ``sts`` in
        ``inventory`` (the view from the StatefulSet's unit): a PodDisruptionBudget selecting
        its pods, the Service its ``serviceName`` names, the StorageClass or a
        PersistentVolume(Claim) of its claim templates, the HorizontalPodAutoscaler that
        scales it, its Namespace."""
        ns = sts.namespace
        if sts.namespace in self.namespaces:
            return True
        service = sts.get("spec", "serviceName")
        if isinstance(service, str) and (ns, service) in self.services:
            return True
        if ns in self.pdb_namespaces:
            labels = _mapping(sts.get("spec", "template", "metadata", "labels"))
            if any(id(p) in self.ids for p in inventory.pdbs_selecting(ns, labels)):
                return True
        if "HorizontalPodAutoscaler" in self.kinds:
            hpa = inventory.autoscaler_for(ns, "StatefulSet", sts.name)
            if hpa is not None and id(hpa) in self.ids:
                return True
        claims = [_mapping(t) for t in sts.get("spec", "volumeClaimTemplates") or []]
        if claims and self.kinds & {"StorageClass", "PersistentVolume"}:
            for c in claims:
                asked = claim_class_name(c)
                sc = inventory.storage_class_for_claim(asked)
                if sc is not None and id(sc) in self.ids:
                    return True
                cls = sc.name if sc is not None else asked
                if cls in self.volume_classes:
                    return True
        if claims and self.claims.get(ns):
            prefixes = [f"{_mapping(c.get('metadata')).get('name')}-{sts.name}-" for c in claims]
            return any(o.name.startswith(p) for o in self.claims[ns] for p in prefixes)
        return False


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
