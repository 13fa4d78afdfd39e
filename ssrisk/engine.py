"""The pipeline: load → inventory → rules (which call the simulator) → report.

One direction, no cycles: loading knows nothing of rules, rules nothing of reporting.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import msgspec
from msgspec.structs import replace

from .inventory import Inventory
from .loading import RELATED_KINDS, LoadedFile
from .model import (
    Finding,
    InputError,
    K8sObject,
    Notice,
    ObjectRef,
    Position,
    RunNote,
    Severity,
    forget_templates,
    named_text,
)
from .rule import CheckContext, Rule, ascii_text
from .settings import Settings


class Report(msgspec.Struct):
    """The outcome of one run, read by every reporter."""

    #: The Kubernetes version of the run (the first configuration's when several configuration
    #: files set others: :attr:`kube_versions` has them all).
    kube_version: str
    findings: list[Finding] = msgspec.field(default_factory=list)
    #: Findings folded into another finding of the same StatefulSet (``Finding.folded_into``):
    #: kept for the JSON report and the explanation of the finding they are folded into.
    folded: list[Finding] = msgspec.field(default_factory=list)
    #: Facts stated once for the run (``Rule.note``), with the number of StatefulSets each
    #: applies to.
    run_notes: list[RunNote] = msgspec.field(default_factory=list)
    errors: list[InputError] = msgspec.field(default_factory=list)
    notices: list[Notice] = msgspec.field(default_factory=list)
    files: int = 0
    documents: int = 0
    statefulsets: int = 0
    skipped_documents: int = 0
    #: Objects of the kinds ssrisk reads, loaded from the checked paths (not ``--context``).
    objects: int = 0
    #: Findings dropped because a baseline (``--baseline``) lists them.
    baselined: int = 0
    #: Every StatefulSet checked with where it starts, and the ids of the rules that ran.
    checked: list[tuple[ObjectRef, Position]] = msgspec.field(default_factory=list)
    rules_run: list[str] = msgspec.field(default_factory=list)
    #: Severities the configuration sets per rule id (``severity:``), for formats that
    #: describe the rules (SARIF's ``defaultConfiguration.level``).
    rule_severity: dict[str, Severity] = msgspec.field(default_factory=dict)
    #: The clusters the StatefulSets were simulated on, one per configuration of the run
    #: (``"an assumed cluster (3 zones × 2 nodes)"``, ``"the profile's nodes (9 nodes in 3
    #: zones)"``: :func:`cluster_description`).
    clusters: list[str] = msgspec.field(default_factory=list)
    #: The Kubernetes versions the StatefulSets were checked at, each once, in the order of
    #: the configurations that set them (empty: :attr:`kube_version` alone).
    kube_versions: list[str] = msgspec.field(default_factory=list)
    #: The ids (``id()``) of the reported findings at or above their configuration's
    #: ``fail-on``: those that fail the run (set by :func:`ssrisk.run.check`; ``None``: not
    #: judged, every finding counts as failing).
    failing: frozenset[int] | None = None

    def versions(self) -> list[str]:
        """The Kubernetes versions of the run, each once (``["1.34"]``)."""
        return list(self.kube_versions) or [self.kube_version]

    def fails(self, finding: Finding) -> bool:
        """Whether ``finding`` is one that fails the run (see :attr:`failing`)."""
        return self.failing is None or id(finding) in self.failing

    def keep_folded_of_reported(self) -> None:
        """Drop folded findings whose finding of cause is no longer reported (a baseline
        took it): they go with it."""

        def key(f: Finding, rule: str | None) -> tuple[object, ...]:
            at = f.checked_at  # (Position equality leaves the kustomization and variant out)
            return (at, at.scope() if at else None, f.obj, rule)

        kept = {key(f, f.rule) for f in self.findings}
        self.folded = [f for f in self.folded if key(f, f.folded_into) in kept]

    def reported(self) -> list[Finding]:
        """The findings a run reports: neither suppressed nor baselined (a baseline drops
        them from ``findings``) nor folded (kept in ``folded``); the exit code, the text and
        github summaries and ``summary.findings`` count these."""
        return [f for f in self.findings if not f.suppressed]

    def summary(self) -> dict[str, int]:
        """Counts for the JSON report. ``findings``: :meth:`reported` findings, the number
        every format states; ``suppressed``, ``baselined`` and ``folded`` count the findings
        a suppression, the baseline or another finding's cause took (none of them is in
        ``findings``)."""
        reported = len(self.reported())
        return {
            "files": self.files,
            "documents": self.documents,
            "statefulsets": self.statefulsets,
            "findings": reported,
            "errors": len(self.errors),
            "skipped_documents": self.skipped_documents,
            "suppressed": len(self.findings) - reported,
            "baselined": self.baselined,
            "folded": len(self.folded),
        }


def cluster_description(settings: Settings) -> str:
    """The cluster the settings' profile simulates on, in words: its nodes when the profile
    lists them (``ssrisk profile``), its zones and nodes-per-zone when it states them, else
    ssrisk's assumed cluster (ClusterShape.described)."""
    from .embedded_sim import ClusterProfile, ClusterShape

    profile = settings.profile or ClusterProfile()
    return ClusterShape.of((n.zone for n in profile.nodes), profile.cluster_source).described


def merge_reports(reports: Sequence[Report], labels: Sequence[str] = ()) -> Report:
    """One report of several runs (inputs checked under different configuration files): every
    finding, error, notice and count, findings sorted as in one run, and one run note per rule
    (:func:`merge_group_notes`; ``labels`` name the runs' configurations, in order). The
    Kubernetes version and configured severities are the first run's (formats that state one
    use it)."""
    first = reports[0]
    if len(reports) == 1:
        return first
    merged = Report(kube_version=first.kube_version, rule_severity=dict(first.rule_severity))
    names = [*labels, *(f"run {i + 1}" for i in range(len(labels), len(reports)))]
    merged.run_notes = merge_group_notes(
        [(n, r.run_notes) for n, r in zip(names, reports, strict=True)]
    )
    for r in reports:
        merged.findings.extend(r.findings)
        merged.folded.extend(r.folded)
        merged.errors.extend(r.errors)
        merged.notices.extend(r.notices)
        merged.checked.extend(r.checked)
        merged.rules_run.extend(i for i in r.rules_run if i not in merged.rules_run)
        for name in ("files", "documents", "statefulsets", "skipped_documents", "objects"):
            setattr(merged, name, getattr(merged, name) + getattr(r, name))
        merged.baselined += r.baselined
        merged.clusters.extend(c for c in r.clusters if c not in merged.clusters)
        merged.kube_versions.extend(v for v in r.versions() if v not in merged.kube_versions)
    merged.findings.sort(key=Finding.sort_key)
    merged.folded.sort(key=Finding.sort_key)
    merged.errors = _distinct_errors(merged.errors)
    return merged


def load_all(
    paths: Sequence[str],
    settings: Settings,
    kinds: frozenset[str] | None = None,
    chart_files: bool = True,
) -> tuple[list[LoadedFile], list[InputError]]:
    """Discover and load every input: plain files, Helm charts and kustomizations (rendered)
    and ``-`` (stdin). Errors come back as values, never raised. With ``kinds``, only objects
    of those kinds are read (:func:`ssrisk.renderers.inputs.load_inputs`); with
    ``chart_files``, a file named in ``paths`` that lies in a chart checks that chart.

    Every loaded object is validated once against the Kubernetes schemas of
    ``settings.kube_version`` (:mod:`ssrisk.validation`): an object with a wrong type or an
    out-of-range value becomes errors of its file and is not checked; unknown fields and
    missing required fields are warnings and the object is checked as written."""
    from .loading import unchecked_spans
    from .renderers.inputs import load_inputs
    from .validation import save_verdicts, validate_objects

    # Loading allocates hundreds of thousands of long-lived objects and no garbage cycles;
    # the cyclic collector would rescan them over and over (measured: 5x the loading time on
    # 10,000 documents). Pause it while loading and exempt what was loaded from later scans.
    collecting = gc.isenabled()
    gc.disable()
    try:
        loaded, errors = load_inputs(paths, settings, kinds=kinds, chart_files=chart_files)
        for lf in loaded:
            if lf.objects:
                every = lf.objects
                lf.objects, invalid, dubious = validate_objects(
                    every, settings.kube_version, feature_gates=settings.feature_gates
                )
                lf.errors.extend(invalid)
                lf.notices.extend(dubious)
                if len(lf.objects) < len(every):
                    kept = {id(o) for o in lf.objects}
                    rejected = [o for o in every if id(o) not in kept]
                    lf.unchecked = unchecked_spans(every, rejected)
        save_verdicts()
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
    return loaded, errors


def check(
    paths: Sequence[str],
    rules: Sequence[Rule],
    settings: Settings,
    context: Sequence[str] = (),
) -> Report:
    """Run ``rules`` over every StatefulSet found under ``paths``.

    ``context`` paths are loaded too, but only so that rules see related objects (PDBs,
    Services, StorageClasses) defined there: their StatefulSets are not checked and their
    unreadable files are not errors (`--context cluster/storage/` in a pre-commit hook); a
    ``context`` path itself that cannot be read is a warning (:func:`unread_context`).

    Returns:
        A :class:`Report` with findings sorted by path, line and column; unreadable inputs are
        in ``report.errors`` and every other input is still checked.
    """
    loaded, errors = load_all(paths, settings)
    extra: list[LoadedFile] = []
    unread: list[Notice] = []
    if context:
        # The checked files are not context too (compared by real path; only files with the
        # name of a checked one need resolving, the context may hold thousands of files).
        seen = {os.path.realpath(lf.path) for lf in loaded}
        names = {os.path.basename(p) for p in seen}
        both: set[str] = set()  # (checked and given as context: cluster facts too)
        context_files, context_errors = load_all(context, settings, kinds=RELATED_KINDS)
        unread = unread_context(context, context_errors)
        for lf in context_files:
            real = ""
            if os.path.basename(lf.path) in names or os.path.islink(lf.path):
                real = os.path.realpath(lf.path)
            if real in seen:
                both.add(real)
            else:
                extra.append(lf)
        for lf in loaded if both else ():
            if os.path.realpath(lf.path) in both:
                for o in lf.objects:
                    o.cluster_wide = True
    return check_loaded(loaded, errors, rules, settings, context=extra, notices=unread)


def unread_context(context: Sequence[str], errors: Sequence[InputError]) -> list[Notice]:
    """A warning for each ``--context`` path itself that could not be read (refused as a
    link out of the tree, missing, unreadable): the rules then do not see what it holds.
    Files found below a context directory stay unsaid (a directory of cluster objects may
    hold templates and other YAML that are not manifests)."""
    named = {os.path.normpath(p) for p in context}  # (ctx/ and ./ctx are read as ctx)
    return [
        Notice(e.path, f"--context: {e.message} (the rules do not see it)", level="warning")
        for e in errors
        if os.path.normpath(e.path) in named
    ]


def check_loaded(
    loaded: Sequence[LoadedFile],
    errors: Sequence[InputError],
    rules: Sequence[Rule],
    settings: Settings,
    context: Sequence[LoadedFile] = (),
    related: Sequence[LoadedFile] = (),
    select: Callable[[Inventory], Sequence[K8sObject]] | None = None,
    warn_in: Callable[[str], bool] | None = None,
    notices: Sequence[Notice] = (),
) -> Report:
    """Check the StatefulSets of ``loaded`` with ``rules``.

    ``context``, ``related`` and ``select`` are as for :func:`prepare`; ``warn_in`` chooses
    the files whose useless suppressions get a warning (default: all); ``notices`` are added
    to the report's (the context paths not read: :func:`unread_context`).
    """
    report, inventory, checked = prepare(loaded, errors, settings, context, related, select)
    report.notices.extend(notices)
    if checked:
        from .simcache import attach

        attach()  # (results kept between runs: the user's cache, unless it is off)
    active = [r for r in rules if settings.rule_enabled(r.id)]
    report.rules_run = [r.id for r in active]
    findings, rule_errors, sim_notices, run_notes = evaluate(inventory, active, settings, checked)
    report.findings.extend(f for f in findings if not f.folded_into)
    report.folded.extend(f for f in findings if f.folded_into)
    report.run_notes = merge_notes(run_notes)
    report.errors.extend(rule_errors)
    report.notices.extend(sim_notices)
    from .suppression import apply as apply_suppressions

    comments = {path: c for lf in loaded for path, c in lf.ignore_comments.items()}
    # a suppression is used when it matches a finding, folded into another one or not
    report.notices.extend(
        apply_suppressions(
            [*report.findings, *report.folded],
            checked,
            comments,
            known=[r.id for r in rules],
            ran=report.rules_run,
            warn_in=warn_in,
            unchecked={path: s for lf in loaded for path, s in lf.unchecked.items()},
        )
    )
    report.findings.sort(key=Finding.sort_key)
    report.folded.sort(key=Finding.sort_key)
    report.errors = _distinct_errors(report.errors)
    return report


def prepare(
    loaded: Sequence[LoadedFile],
    errors: Sequence[InputError],
    settings: Settings,
    context: Sequence[LoadedFile] = (),
    related: Sequence[LoadedFile] = (),
    select: Callable[[Inventory], Sequence[K8sObject]] | None = None,
) -> tuple[Report, Inventory, list[K8sObject]]:
    """What ``check`` and ``simulate`` share after loading: the report of the inputs
    (counts, errors, notices, duplicate definitions, one copy of each object a chart renders
    several times), the inventory the StatefulSets are read against and the StatefulSets to
    check, in input order.

    ``context`` files lend their objects other than StatefulSets (``--context``);
    ``related`` files lend all their objects, StatefulSets included, for ``select`` to pick
    from (the other files of a changed file's directory); neither adds errors, notices or
    counts. ``select`` chooses the StatefulSets from the inventory (default: every one).
    """
    report = Report(
        kube_version=settings.kube_version,
        errors=list(errors),
        rule_severity=dict(settings.severity),
        clusters=[cluster_description(settings)],
    )
    objects = []
    context_objects = [o for lf in context for o in lf.objects if o.kind != "StatefulSet"]
    for o in context_objects:
        o.cluster_wide = True
    context_objects += [o for lf in related for o in lf.objects]
    for lf in loaded:
        report.files += lf.read
        report.documents += lf.documents
        report.skipped_documents += lf.skipped_kinds
        report.errors.extend(lf.errors)
        report.notices.extend(lf.notices)
        objects.extend(lf.objects)
    report.objects = len(objects)
    objects, duplicates = _one_copy_per_unit(objects)
    report.notices.extend(duplicates)
    report.notices.extend(duplicate_definitions(objects))
    inventory = Inventory([*objects, *context_objects])
    checked = list(inventory.statefulsets if select is None else select(inventory))
    for sts in checked:
        report.statefulsets += 1
        report.checked.append((sts.ref, sts.start()))
    return report, inventory, checked


def _distinct_errors(errors: Sequence[InputError]) -> list[InputError]:
    """``errors`` sorted by place, each once: a base that two overlays include (or a chart
    file two runs render) has one error at its line, not one per build that met it."""
    return sorted(set(errors), key=lambda e: (e.path, e.line or 0, e.column or 0, e.message))


def _one_copy_per_unit(objects: list[K8sObject]) -> tuple[list[K8sObject], list[Notice]]:
    """``objects`` with only the first of several objects of one kind, namespace and name
    that one rendered unit renders, where its renderer says the unit cannot be applied with
    both (``Renderer.duplicate``: a Helm release), and a warning for each other copy, which
    is not checked a second time."""
    from .renderers.units import by_kind

    renderers = by_kind()
    first: dict[tuple[str, str | None, str, str], Position] = {}
    kept: list[K8sObject] = []
    notices: list[Notice] = []
    for obj in objects:
        unit = getattr(obj, "rendered_from", None)
        renderer = renderers.get(getattr(obj, "rendered_by", None) or "")
        if unit is None or renderer is None or not obj.name:
            kept.append(obj)
            continue
        key = (obj.kind, obj.namespace, obj.name, obj.unit)  # (a chart's variant: its own)
        start = obj.start()
        seen = first.setdefault(key, start)
        said = (
            None
            if seen is start
            else renderer.duplicate(str(obj.ref), f"{seen.path}:{seen.line}", unit)
        )
        if said is None:
            kept.append(obj)
            continue
        notices.append(Notice(start.path, said, start.line, start.column, level="warning"))
    return kept, notices


def duplicate_definitions(objects: Sequence[K8sObject]) -> list[Notice]:
    """A notice for each plain-file object whose kind, namespace and name an earlier one of
    the same directory has.

    Applied together, the later manifest replaces the earlier; ssrisk checks both and resolves
    references (Services, PDBs) to the first. Copies in different directories, charts or
    kustomizations are environments (``staging/`` and ``prod/``), each resolved on its own
    (:meth:`ssrisk.inventory.Inventory.for_unit`), and rendered objects are left out:
    several overlays of one base legitimately share identities.
    """
    first: dict[tuple[str, str | None, str, str], Position] = {}
    out: list[Notice] = []
    for obj in objects:
        start = obj.start()
        if start.rendered_from() or not obj.name:
            continue
        key = (obj.kind, obj.namespace, obj.name, obj.unit)
        if key not in first:
            first[key] = start
            continue
        seen = first[key]
        out.append(
            Notice(
                start.path,
                f"{obj.ref} is also defined at {seen.path}:{seen.line}: applied together, the "
                "later manifest replaces the earlier (copies in other directories are checked "
                "as separate environments)",
                start.line,
                start.column,
            )
        )
    return out


#: Below this many StatefulSets a second process costs more than it saves.
PARALLEL_MIN_STATEFULSETS = 200
#: With the default ``--jobs`` (0), this process first checks this many StatefulSets itself,
#: and forks workers for the rest only when, at the pace of the second half of them (the
#: simulation cache is warm by then, and the workers inherit it), the rest would take at least
#: :data:`PARALLEL_MIN_SECONDS` of CPU time: below that a fork, the cold copies of memory pages
#: and sending the findings back cost more than the second core saves.
PARALLEL_PROBE = 100
PARALLEL_MIN_SECONDS = 1.0

# What forked workers read: set just before the workers fork, so nothing is pickled to them.
_WORK: tuple[Inventory, Sequence[Rule], Settings, Sequence[K8sObject]] | None = None

_Part = tuple[list[Finding], list[InputError], list[Notice], list[RunNote]]


def merge_notes(notes: Sequence[RunNote]) -> list[RunNote]:
    """One note per rule and message, counting the StatefulSets it was given for."""
    merged: dict[tuple[str, str], RunNote] = {}
    for n in notes:
        _merge_note(merged, n)
    return sorted(merged.values(), key=lambda n: (n.rule, n.message))


def merge_group_notes(groups: Sequence[tuple[str, Sequence[RunNote]]]) -> list[RunNote]:
    """One note per rule for a run whose inputs were checked in groups (one per configuration
    file), each group given as ``(label, its notes)``.

    Notes of a rule that say the same in every group are counted together. When they differ
    (another ``kube-version`` or cluster ``profile`` changes the fact), the rule still gets one
    note: its message states each form followed by ``[label, ...: N]`` (the configurations it
    holds under and their StatefulSets), its explanation each form's explanation under a
    heading naming them, and it counts every StatefulSet.
    """
    forms: dict[str, dict[str, tuple[list[str], list[RunNote]]]] = {}
    for label, notes in groups:
        for n in notes:
            labels, same = forms.setdefault(n.rule, {}).setdefault(n.message, ([], []))
            if label not in labels:
                labels.append(label)
            same.append(n)
    out = []
    for by_message in forms.values():
        counted = [merge_notes(same)[0] for _labels, same in by_message.values()]
        if len(counted) == 1:
            out.append(counted[0])
            continue
        scopes = [", ".join(labels) for labels, _same in by_message.values()]
        out.append(
            RunNote(
                counted[0].rule,
                "; ".join(
                    f"{n.message} [{s}: {n.statefulsets}]"
                    for n, s in zip(counted, scopes, strict=True)
                ),
                partial(_forms_explanation, tuple(zip(scopes, counted, strict=True))),
                tuple(dict.fromkeys(r for n in counted for r in n.references)),
                sum(n.statefulsets for n in counted),
            )
        )
    return sorted(out, key=lambda n: n.rule)


def _forms_explanation(forms: tuple[tuple[str, RunNote], ...]) -> str:
    return "\n\n".join(
        f"Under {scope} ({n.statefulsets} StatefulSet(s)): {n.explanation}" for scope, n in forms
    )


def _merge_note(merged: dict[tuple[str, str], RunNote], n: RunNote) -> None:
    """Count ``n`` into ``merged``: only the first note of a rule and message is kept (a
    note's explanation builder keeps its StatefulSet's check context alive)."""
    key = (n.rule, n.message)
    count = max(n.statefulsets, 1)
    if key in merged:
        merged[key].statefulsets += count
    else:
        merged[key] = RunNote(n.rule, n.message, n.raw_explanation(), n.references, count)


def fold(
    findings: list[Finding], covering: frozenset[str] = frozenset(), mention: bool = True
) -> None:
    """Fold the echoes among the findings of one StatefulSet into the finding of their cause.

    Every finding of a StatefulSet the API server rejects (a finding of a rule in
    ``covering``, whose ``covers_all`` is set) is folded into that finding. Otherwise a finding
    whose ``echo_of`` names a rule that reported the set is folded into the first such rule
    (chains resolve to the rule at their end). A fold never hides severity or data loss: a
    finding more severe than the one it would be folded into, or one whose rule says it
    destroys data (``Finding.never_folded``), stays reported on its own. With ``mention``, the
    finding folded into gets the folded messages appended to its explanation.
    """
    if len(findings) < 2:
        return
    # (a covering rule's finding on another object, a budget the API server rejects, covers
    # only itself)
    rejected = next(
        (f for f in findings if f.rule in covering and f.obj.kind == "StatefulSet"), None
    )
    if rejected is not None:  # the API server rejects the object: nothing else applies
        others = [f for f in findings if f.rule != rejected.rule and _foldable(f, rejected)]
        for f in others:
            f.folded_into = rejected.rule
        if mention:
            _mention(rejected, others)
        return
    by_rule: dict[str, Finding] = {}
    for f in findings:
        by_rule.setdefault(f.rule, f)

    def target(f: Finding, seen: frozenset[str]) -> Finding | None:
        for rule_id in f.echo_of:
            g = by_rule.get(rule_id)
            if g is None or g is f or rule_id in seen:
                continue
            return target(g, seen | {f.rule}) or g
        return None

    into: dict[int, Finding] = {}
    for f in findings:
        g = target(f, frozenset())
        if g is not None and _foldable(f, g):
            into[id(f)] = g
    for f in findings:
        g = into.get(id(f))
        if g is not None:
            f.folded_into = g.rule
    if mention:
        for g in {id(g): g for g in into.values()}.values():
            _mention(g, [f for f in findings if into.get(id(f)) is g])


def _foldable(f: Finding, into: Finding) -> bool:
    """Whether ``f`` may be folded into ``into``: it is no more severe and loses no data."""
    return not f.never_folded and f.severity <= into.severity


def _mention(primary: Finding, folded: list[Finding]) -> None:
    """Append the folded findings' messages to ``primary``'s explanation (lazily, when it is
    given as a builder)."""
    if folded:
        lines = ascii_text("\n".join(f"- {f.rule}: {f.message}" for f in folded))
        raw = primary.__dict__.get("_explanation", "")
        primary.explanation = partial(_covering, raw, lines)


def _covering(raw: object, lines: str) -> str:
    base = raw if isinstance(raw, str) else raw() if callable(raw) else ""
    covered = "This finding also covers (same cause, not reported separately):"
    return f"{base}\n\n{covered}\n{lines}".strip()


#: With the default ``--jobs``, a worker is forked per this much idle CPU (cores less the load
#: average): measured on 2 cores, a worker forked while another program kept the second core
#: busy made 10,000 documents 1.4x slower in wall time than one process.
IDLE_CORES_PER_WORKER = 1.5


def default_processes(cpus: int, load_average: float | None) -> int:
    """How many processes the default ``--jobs`` may use: this one, plus a worker for each
    :data:`IDLE_CORES_PER_WORKER` of idle CPU (``cpus`` less the 1-minute load average; all
    cores when the load is unknown)."""
    if load_average is None:
        return max(1, cpus)
    idle = cpus - load_average
    return max(1, min(cpus, 1 + int(idle // IDLE_CORES_PER_WORKER)))


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def worth_forking(seconds_per_statefulset: float, remaining: int) -> bool:
    """Whether ``remaining`` StatefulSets at that CPU cost each are worth worker processes."""
    return seconds_per_statefulset * remaining >= PARALLEL_MIN_SECONDS


#: The cyclic collector's first threshold while rules run (Python's default is 700): rules and
#: simulations allocate many short-lived objects and hardly any cycles; collecting young
#: objects 30 times less often saved 6% of the CPU time of 10,000 documents, without a
#: measurable change of peak memory.
EVALUATION_GC_THRESHOLD = 20_000


#: Simulation steps (embedded_sim/budget.py STEP_MEANING; about 2 µs each) one StatefulSet
#: may take over all its scenarios: about four seconds of one core. Ordinary StatefulSets take
#: a few thousand; a set of 250 replicas that a hostname spread and a zone anti-affinity place
#: one per node takes about three million.
SIMULATION_STEPS_PER_SET = 2_000_000
#: Steps one run may take in all (about forty seconds): with more StatefulSets than that
#: leaves the per-set figure for, each gets an equal share ...
SIMULATION_STEPS_PER_RUN = 20_000_000
#: ... but never less than this (four times the largest of ../shared/corpus).
SIMULATION_STEPS_FLOOR = 50_000


def simulation_steps(statefulsets: int) -> int:
    """The simulation steps each of ``statefulsets`` StatefulSets checked together may take:
    :data:`SIMULATION_STEPS_PER_SET`, or an equal share of :data:`SIMULATION_STEPS_PER_RUN`
    when that is smaller, at least :data:`SIMULATION_STEPS_FLOOR`. It depends only on how
    many sets a run checks, never on the order or the worker they are checked in, so the
    output is the same with any ``--jobs``; a run takes at most
    ``max(SIMULATION_STEPS_PER_RUN, statefulsets * SIMULATION_STEPS_FLOOR)`` steps."""
    share = SIMULATION_STEPS_PER_RUN // max(1, statefulsets)
    return max(SIMULATION_STEPS_FLOOR, min(SIMULATION_STEPS_PER_SET, share))


def evaluate(
    inventory: Inventory,
    rules: Sequence[Rule],
    settings: Settings,
    statefulsets: Sequence[K8sObject] | None = None,
) -> _Part:
    """Run ``rules`` on every StatefulSet of ``inventory`` (or on ``statefulsets`` of it).

    With ``settings.jobs`` > 1 and at least :data:`PARALLEL_MIN_STATEFULSETS` StatefulSets,
    contiguous slices of them are checked in parallel (this process and ``jobs - 1`` forked
    workers); with ``jobs`` 0 (one per core, the default) only when the first
    :data:`PARALLEL_PROBE` of them show that the rest is worth it (:func:`worth_forking`). The
    results are concatenated in order, so the output is identical to a single-process run.
    Returns the findings, the
    internal errors of rules and a notice for each StatefulSet the simulator could not run (its
    rules then say only what the manifest shows). When ``settings.explanations`` is true,
    the explanations an output prints are built as soon as their StatefulSet is checked and
    kept as templates shared by the sets that behave alike (:func:`_keep_explanations`), in a
    worker as here; they are never built otherwise (the findings then have none).
    """
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], EVALUATION_GC_THRESHOLD), *threshold[1:])
    forget_templates()
    try:
        return _evaluate(inventory, rules, settings, statefulsets)
    finally:
        gc.set_threshold(*threshold)


def _evaluate(
    inventory: Inventory,
    rules: Sequence[Rule],
    settings: Settings,
    statefulsets: Sequence[K8sObject] | None,
) -> _Part:

    if statefulsets is None:
        statefulsets = inventory.statefulsets
    total = len(statefulsets)
    if settings.simulation_steps is None:
        settings = replace(settings, simulation_steps=simulation_steps(total))
    jobs = settings.jobs or default_processes(_usable_cpus(), _load_average())
    jobs = min(jobs, max(1, total // (PARALLEL_MIN_STATEFULSETS // 2)))
    if jobs <= 1 or total < PARALLEL_MIN_STATEFULSETS:
        return _evaluate_range(inventory, rules, settings, statefulsets)
    import time

    if not hasattr(os, "fork"):
        return _evaluate_range(inventory, rules, settings, statefulsets)
    parts: list[_Part] = []
    begin = 0
    if settings.jobs == 0:
        half = PARALLEL_PROBE // 2
        parts.append(_evaluate_range(inventory, rules, settings, statefulsets[:half]))
        spent = time.process_time()
        parts.append(_evaluate_range(inventory, rules, settings, statefulsets[half:PARALLEL_PROBE]))
        pace = (time.process_time() - spent) / (PARALLEL_PROBE - half)
        begin = PARALLEL_PROBE
        if not worth_forking(pace, total - begin):
            parts.append(_evaluate_range(inventory, rules, settings, statefulsets[begin:]))
            return _joined(parts)
    global _WORK
    step = -(-(total - begin) // jobs)
    slices = [(i, min(i + step, total)) for i in range(begin, total, step)]
    if len(slices) < 2:
        parts.append(_evaluate_range(inventory, rules, settings, statefulsets[begin:]))
        return _joined(parts)
    _WORK = (inventory, rules, settings, statefulsets)
    try:
        parts.extend(_in_workers(slices))
    except OSError:  # (no fork or pipe to be had)
        parts.extend(_evaluate_slice(s) for s in slices)
    finally:
        _WORK = None
    return _joined(parts)


def _joined(parts: Sequence[_Part]) -> _Part:
    findings = [f for part in parts for f in part[0]]
    errors = [e for part in parts for e in part[1]]
    notices = [n for part in parts for n in part[2]]
    run_notes = [n for part in parts for n in part[3]]
    return findings, errors, notices, run_notes


def _worker_signals() -> None:
    """In a forked worker: Ctrl-C is the main process's to handle (it kills its workers), and
    SIGTERM ends it at once, without a traceback; on Linux a worker also dies with the main
    process."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    from .renderers.bounded import die_with_parent

    die_with_parent()


def _keep_explanations(findings: Sequence[Finding], sts: K8sObject, folded: bool) -> None:
    """Build the explanations of ``findings`` (of ``sts``, just checked) that an output
    prints, and keep each as a :class:`ssrisk.model.NamedText`: a template shared by the sets
    that behave alike, with the set's name and namespace. A builder holds the set's check
    context and simulation results until the report is written (about 40 MB at 10,000
    documents); the texts alike differ only by those names. Without ``folded``, a folded
    finding's explanation is dropped unbuilt (no output prints it)."""
    names = (sts.name or "", sts.namespace or "")
    for finding in findings:
        if finding.folded_into and not folded:
            finding.explanation = ""
        else:
            text = finding.explanation
            finding.explanation = named_text(text, names) if text else ""


def _evaluate_slice(bounds: tuple[int, int]) -> _Part:
    assert _WORK is not None
    inventory, rules, settings, statefulsets = _WORK
    part = statefulsets[bounds[0] : bounds[1]]
    return _evaluate_range(inventory, rules, settings, part)


def _in_workers(slices: Sequence[tuple[int, int]]) -> list[_Part]:
    """The parts of ``slices``, in order: each slice but the first checked in a forked worker,
    the first here meanwhile (one fork and one transfer fewer). A worker sends its part back
    pickled through a pipe, its findings' explanations as texts or templates
    (:class:`ssrisk.model.NamedText`); a worker that fails or dies has its slice checked here.

    Plain forks, not ``multiprocessing.Pool``: a signal sent to the whole process group
    (Ctrl-C, ``timeout -s TERM``, a CI runner's cancel) killed a pool worker that was waiting
    for a task while it held the task queue's read lock, and ``Pool.terminate()`` then waited
    for that lock for ever (about one run in ten ended by ``timeout -s TERM``). Interrupted
    here, this process kills its workers (SIGKILL) and reaps them, taking no lock."""
    import pickle
    import signal

    workers: list[tuple[int, int, tuple[int, int]]] = []  # (pid, pipe to read, slice)
    try:
        for bounds in slices[1:]:
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker: never returns
                code = 1
                try:
                    os.close(read)
                    _worker_signals()
                    data = pickle.dumps(_evaluate_slice(bounds), pickle.HIGHEST_PROTOCOL)
                    with open(write, "wb") as pipe:
                        pipe.write(data)
                    code = 0
                finally:
                    os._exit(code)  # (no clean-up of the parent's: its temporary files)
            os.close(write)
            workers.append((pid, read, bounds))
        parts = [_evaluate_slice(slices[0])]
        while workers:
            pid, read, bounds = workers[0]
            data = _read_all(read)
            _, status = os.waitpid(pid, 0)
            workers.pop(0)
            os.close(read)
            done = os.waitstatus_to_exitcode(status) == 0 and data
            parts.append(pickle.loads(data) if done else _evaluate_slice(bounds))
        return parts
    finally:
        for pid, _, _ in workers:  # (interrupted: nothing of theirs is wanted)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid, read, _ in workers:
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
            with contextlib.suppress(OSError):
                os.close(read)


def _read_all(fd: int) -> bytes:
    """Everything a worker writes to pipe ``fd`` until it closes it."""
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _evaluate_range(
    inventory: Inventory,
    rules: Sequence[Rule],
    settings: Settings,
    statefulsets: Sequence[K8sObject],
) -> _Part:
    """Check ``statefulsets``: each one's findings, with their explanations built as soon as
    its rules have run (when an output prints them), so that the builders and what they keep
    are freed there and then."""
    findings: list[Finding] = []
    errors: list[InputError] = []
    notices: list[Notice] = []
    run_notes: dict[tuple[str, str], RunNote] = {}  # merged as they come (merge_notes)
    explanations = settings.explanations
    covering = frozenset(r.id for r in rules if r.covers_all)
    cluster = cluster_description(settings) if settings.fixes else ""  # (once per run)
    for sts in statefulsets:
        start = sts.start()
        ctx = CheckContext.of(sts, inventory, settings)
        first = len(findings)
        for rule in rules:
            try:
                for finding in rule.check(ctx):
                    finding.severity = settings.severity_for(rule.id, finding.severity)
                    finding.checked_at = start
                    if not explanations:  # nothing prints it: drop its builder unbuilt
                        finding.explanation = ""
                    findings.append(finding)
                note = rule.note(ctx)
                if note is not None:
                    _merge_note(run_notes, note)
            except Exception as exc:  # a broken rule must not hide the other findings
                pos: Position = sts.start()
                errors.append(
                    InputError(
                        pos.path,
                        f"internal error in rule {rule.id} on {sts.ref}: "
                        f"{type(exc).__name__}: {exc} (please report this)",
                        pos.line,
                        pos.column,
                    )
                )
        if settings.fixes:
            _fix(findings[first:], rules, ctx, cluster)
        fold(findings[first:], covering, mention=explanations)
        if settings.drawings:
            _draw(findings[first:], ctx)
        if explanations:
            _keep_explanations(findings[first:], sts, settings.folded_explanations)
        sts.forget_model()
        failures = ctx.simulation_failures()
        for reason in sorted({f.reason for f in failures}):
            scenarios = ", ".join(sorted(f.scenario for f in failures if f.reason == reason))
            pos = sts.start()
            notices.append(
                Notice(
                    pos.path,
                    f"{sts.ref} not simulated ({scenarios}): {reason}; its findings say only "
                    "what the manifest shows",
                    pos.line,
                    pos.column,
                )
            )
    return findings, errors, notices, merge_notes(list(run_notes.values()))


def _fix(
    findings: Sequence[Finding], rules: Sequence[Rule], ctx: CheckContext, cluster: str
) -> None:
    """Give each finding the smallest change verified to remove it (:mod:`ssrisk.remedy`),
    saying the cluster it was verified on (``cluster``: :func:`cluster_description`)."""
    from .remedy import find_fix, in_overlay, in_template, placed_in_values, renders_reading

    meta = ctx.sts.data.get("metadata")
    if isinstance(meta, dict) and meta.get("ownerReferences"):
        return  # an operator owns the set and would revert a change: its resource is changed
    by_id = {r.id: r for r in rules}
    if any(by_id[f.rule].covers_all for f in findings if f.rule in by_id):
        return  # the API server rejects the set as written: that comes first
    if ctx.inventory.defined_twice(ctx.sts):
        return  # (which definition a change is for, and what it is checked with, is unclear)
    before: dict[str, Severity] = {}
    for f in findings:  # (every finding of the set, before folding)
        before[f.rule] = max(f.severity, before.get(f.rule, f.severity))
    tried: dict[Any, Any] = {}

    @functools.cache
    def built() -> tuple[Any, ...]:  # (the objects a kustomize patch must tell apart)
        return (*ctx.inventory.of_kind(ctx.sts.kind), *ctx.inventory.of_kind("PodDisruptionBudget"))

    for f in findings:
        rule = by_id.get(f.rule)
        if f.severity == Severity.INFO:
            continue  # a note is a fact to know, not a risk to change the manifest for
        if rule is not None and f.obj == ctx.sts.ref:
            f.fix = find_fix(rule, ctx, f, rules, before, tried)
            if f.fix is not None:
                f.fix = replace(f.fix, cluster=cluster)
            by = getattr(ctx.sts, "rendered_by", None)
            if f.fix is not None and by == "chart":
                f.fix = replace(f.fix, render=getattr(ctx.sts, "chart_render", None))
                f.fix = in_template(placed_in_values(f.fix, ctx.sts), ctx.sts, ctx.pdbs())
                f.fix = renders_reading(f.fix, ctx.inventory.chart_renders())
            elif f.fix is not None and by == "kustomization":
                f.fix = in_overlay(f.fix, ctx.sts, ctx.pdbs(), built())


def _draw(findings: Sequence[Finding], ctx: CheckContext) -> None:
    """Give each finding the drawing of the scenario it quotes (``facts["scenario"]``), else
    of the first scenario simulated for its StatefulSet, when one was."""
    from .gantt import drawing_of

    results = ctx.simulated_results()
    if not results:
        return
    drawings: dict[str, Any] = {}
    scope = ctx.sts.start().scope()  # (a chart variant, a kustomization: which copy)
    for f in findings:
        quoted = f.facts.get("scenario")
        scenario = quoted if isinstance(quoted, str) and quoted in results else next(iter(results))
        if scenario not in drawings:
            r = results[scenario]
            title = f"{scenario}: {r.namespace}/{r.name}" + (f" ({scope})" if scope else "")
            drawings[scenario] = drawing_of(r, f"{title}, simulated")
        f.drawing = drawings[scenario]


def exit_code(report: Report, fail_on: Severity) -> int:
    """0 clean, 1 findings at or above ``fail_on``, 2 when an input could not be read."""
    from .exitcodes import ExitCode

    if report.errors:
        return ExitCode.ERROR
    if any(f.severity >= fail_on and not f.suppressed for f in report.findings):
        return ExitCode.FINDINGS
    return ExitCode.OK
