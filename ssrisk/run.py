"""One run of ``check`` (``--changed`` included) or ``simulate``, whatever calls it.

Both commands take the same path: the inputs are grouped by their configuration file
(:func:`settings_by_config`), each group is loaded once (:func:`ssrisk.engine.load_all`,
or :mod:`ssrisk.changed` for the files of a commit) and prepared once
(:func:`ssrisk.engine.prepare`: counts, duplicate definitions, one copy of what a chart
renders twice, the inventory); then ``check`` runs the rules and ``simulate`` the scenarios
over the same StatefulSets. ``check`` also merges the groups, applies baselines and decides
the exit code. :mod:`ssrisk.cli` only turns the command line into a :class:`RunRequest`,
calls :func:`check` or :func:`simulate`, writes the outputs and exits.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from .exitcodes import ExitCode
from .model import InputError, Notice, Position, Severity

if TYPE_CHECKING:
    from .embedded_sim import ScenarioResult
    from .engine import Report
    from .rule import Rule
    from .ruleoptions import RuleOption
    from .settings import Settings


class RunRequest(msgspec.Struct, frozen=True):
    """What to run, as the command line or a caller states it.

    ``inputs`` are the settings of how inputs are read and rendered (``kube_version``,
    ``namespace``, ``exclude``, ``helm_values``, ``helm_set``, ``render_timeout_s``,
    ``allow_remote_resources``; see :func:`ssrisk.config.build_settings`); ``config`` names
    one configuration file for every path (else each path's is found walking up from it).
    ``outputs`` are the files this run writes: never read as manifests.
    """

    paths: tuple[str, ...]
    config: str | None = None
    inputs: Mapping[str, Any] = msgspec.field(default_factory=dict)
    context: tuple[str, ...] = ()
    changed: bool = False
    fail_on: Severity | None = None
    select: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()
    jobs: int | None = None
    baseline: str | None = None
    write_baseline: str | None = None
    #: Ignore the configuration's ``baseline:`` (``--no-baseline``): report every finding.
    no_baseline: bool = False
    fail_if_empty: bool = False
    exit_zero: bool = False
    #: Whether an output prints explanations (they are built only then).
    explanations: bool = False
    #: Whether an output prints the explanations of folded findings (json; with
    #: ``explanations`` only).
    folded_explanations: bool = True
    #: Whether an output draws simulated timelines (``Settings.drawings``).
    drawings: bool = False
    #: Whether findings get verified fixes (``Settings.fixes``).
    fixes: bool = False
    outputs: tuple[str, ...] = ()


class CheckRun(msgspec.Struct):
    """The outcome of :func:`check`: the merged report, its exit code and, with
    ``write_baseline``, how many findings the new baseline records."""

    report: Report
    code: int
    baseline_written: int | None = None


class SimulationRun(msgspec.Struct):
    """The outcome of :func:`simulate`: one result per StatefulSet and scenario (input
    order), the input errors (a set that cannot be simulated is one), and the Kubernetes
    version of the first group of inputs."""

    kube_version: str
    results: list[ScenarioResult] = msgspec.field(default_factory=list)
    #: Where the StatefulSet of each result starts (its file and line), in the same order.
    positions: list[Position] = msgspec.field(default_factory=list)
    errors: list[InputError] = msgspec.field(default_factory=list)
    statefulsets: int = 0

    @property
    def code(self) -> int:
        return ExitCode.ERROR if self.errors else ExitCode.OK


class OutputRefused(ValueError):
    """An output or baseline file would be written over a file this run reads."""


#: A YAML or JSON key ``apiVersion`` (a manifest written anywhere, a one-line JSON one too;
#: ssrisk's own reports are recognised first). Compiled on first use.
_API_VERSION_KEY = rb"""(?m)(?:^[ \t]*(?:-[ \t]+)?|[{,][ \t]*)["']?apiVersion["']?[ \t]*:"""
#: How ssrisk's own JSON files begin (a report, a SARIF log, a baseline): never manifests.
_OWN_JSON = (
    rb"""\A\s*\{\s*"(?:version"\s*:\s*"[^"]*"\s*,\s*"kube_version"|"""
    rb"""\$schema"\s*:\s*"[^"]*sarif|ssrisk-baseline")"""
)
#: How much of an existing output file is read to tell whether it holds manifests.
_SNIFF_BYTES = 1 << 20


def _refuse_overwrites(
    request: RunRequest, configs: Sequence[Path], baselines: Sequence[str], values: Sequence[str]
) -> None:
    """Refuse (:class:`OutputRefused`) to write an output or the ``--write-baseline`` file over
    an existing file the run reads or that holds manifests: a PATH, a configuration file, a
    values file (``--values``, a configured chart's), a baseline the run reads (for an output;
    ``--write-baseline`` may rewrite it), a YAML or JSON file under a PATH directory (a
    walk reads it: manifests, a chart's ``values.yaml``, a ``kustomization.yaml``), or one
    elsewhere with an ``apiVersion`` key; ssrisk's own JSON files (a report, a SARIF log, a
    baseline) excepted. Outputs are never read as manifests: such a file was left out of the
    check and then overwritten by its report. A link, or a path through a link, is left to
    :func:`ssrisk.outfile.write_file`, which refuses it: nothing is read through it here."""
    from .config import PYPROJECT
    from .reporters.escape import printable
    from .settings import CONFIG_NAMES

    dests = [(d, "output") for d in request.outputs]
    if request.write_baseline:
        dests.append((request.write_baseline, "--write-baseline file"))
    for dest, what in dests:
        why = _read_by_the_run(request, dest, what, configs, baselines, values)
        if why is None and os.path.basename(dest) in (*CONFIG_NAMES, PYPROJECT):
            why = "named as ssrisk's configuration file, which later runs would read"
        if why is not None:
            raise OutputRefused(
                f"refusing to write the {what} to {printable(dest)}: it is {why}; name another file"
            )


def _read_by_the_run(
    request: RunRequest,
    dest: str,
    what: str,
    configs: Sequence[Path],
    baselines: Sequence[str],
    values: Sequence[str],
) -> str | None:
    """Why the existing file ``dest`` may not take the ``what`` (:func:`_refuse_overwrites`),
    else ``None``."""
    from .loading import is_yaml_name
    from .outfile import leads_through_link
    from .reporters.escape import printable

    found = _file_id(dest)
    if found is None or leads_through_link(dest):
        return None  # (nothing there to lose, or a link write_file refuses)
    named = [
        *((p, "the baseline this check reads") for p in baselines if what == "output"),
        *((p, "a values file this check reads") for p in values),
        *((p, "a values file this check reads") for p in request.inputs.get("helm_values", ())),
        *((p, "the configuration file of this check") for p in configs),
        *((p, "a PATH of this check") for p in request.paths if p != "-"),
        *((p, "a --context path of this check") for p in request.context),
    ]
    why = next((why for p, why in named if _file_id(p, follow=True) == found), None)
    if why is None and is_yaml_name(dest):
        head = _head(dest)
        if re.match(_OWN_JSON, head) is None:  # (ssrisk's own report, log or baseline)
            under = _under_a_directory(dest, [*request.paths, *request.context])
            why = f"under {printable(under)}, which this check reads" if under else None
            why = why or _holds_manifests(head)
    return why


def _file_id(path: str | Path, follow: bool = False) -> tuple[int, int] | None:
    """``(device, inode)`` of the regular file ``path`` (with ``follow``, the one a link leads
    to), else ``None``."""
    import stat

    try:
        st = os.stat(path) if follow else os.lstat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _under_a_directory(dest: str, paths: Sequence[str]) -> str | None:
    """The first of ``paths`` that is a directory holding ``dest`` (real paths compared)."""
    from .confine import is_inside

    real = os.path.realpath(dest)
    for p in paths:
        if p != "-" and os.path.isdir(p) and is_inside(real, os.path.realpath(p)):
            return p
    return None


def _head(path: str) -> bytes:
    """The first :data:`_SNIFF_BYTES` of the regular file ``path`` (not a link itself: the
    caller leaves a path through a link to :func:`ssrisk.outfile.write_file`); empty when it
    cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return b""
    try:
        return os.read(fd, _SNIFF_BYTES)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _holds_manifests(head: bytes) -> str | None:
    """``"a file that holds Kubernetes manifests (apiVersion at line N)"`` when ``head`` (a
    file's first MiB) does, else ``None``."""
    found = re.search(_API_VERSION_KEY, head)
    if found is None:
        return None
    line = head.count(b"\n", 0, found.start()) + 1
    return f"a file that holds Kubernetes manifests (apiVersion at line {line})"


def settings_by_config(
    request: RunRequest, known: Mapping[str, Sequence[RuleOption]]
) -> list[tuple[Settings, list[str]]]:
    """The run settings for each group of paths that share a configuration file, with the
    request on top.

    Files ssrisk itself reads or writes in this run (configuration, baselines, outputs) and
    every ``.ssrisk.yaml`` are never read as manifests.

    Raises:
        ConfigError: a configuration file that cannot be read or names an unknown rule.
    """
    from .config import build_settings, configs_for, load_config

    groups: dict[Path | None, list[str]] = (
        {Path(request.config): list(request.paths)}
        if request.config
        else configs_for(request.paths)
    )
    configs = {p: load_config(p, known) if p else None for p in groups}
    config_files = [p for p in groups if p is not None]
    baselines = [f for f in (request.baseline, request.write_baseline) if f]
    baselines += [c.baseline for c in configs.values() if c is not None and c.baseline]
    # a configured chart's values files are its values, not manifests (named as a PATH, they
    # check the variants that read them: ssrisk.renderers.inputs.plan_inputs)
    values = [
        values
        for c in configs.values()
        if c is not None
        for variants in c.charts.values()
        for variant in variants
        for values in variant.values
    ]
    read_baselines = [b for b in baselines if b != request.write_baseline or b == request.baseline]
    _refuse_overwrites(request, config_files, read_baselines, values)
    own = [str(p) for p in config_files] + baselines + values + list(request.outputs)
    skip = frozenset(os.path.realpath(f) for f in own)
    out = []
    for config_path, paths in groups.items():
        config = configs[config_path]
        if config is not None:
            config.check_rules(known)
        settings = build_settings(
            config,
            **request.inputs,
            fail_on=request.fail_on,
            select=request.select,
            disable=request.disable,
            jobs=request.jobs,
            skip_files=skip,
        )
        settings.explanations = request.explanations
        settings.folded_explanations = request.folded_explanations
        settings.drawings = request.drawings
        settings.fixes = request.fixes
        out.append((settings, paths))
    return out


def check(request: RunRequest, rules: Sequence[Rule]) -> CheckRun:
    """Check the request's paths with ``rules``: each group of paths under its configuration
    file, then one merged report with baselines applied.

    Returns:
        The report and its exit code: 1 when a finding reaches a group's ``fail-on`` (0
        with ``exit_zero`` or ``write_baseline``), 2 when an input could not be read.

    Raises:
        ConfigError: a configuration file that cannot be read.
        ChangedError: with ``changed``, a path that is not a file.
        BaselineError: a baseline that cannot be read or written.
    """
    from .engine import Report, exit_code, merge_reports

    known = {r.id: r.options for r in rules}
    runs = [
        (settings, _check_group(request, paths, rules, settings))
        for settings, paths in settings_by_config(request, known)
    ]
    report = merge_reports([r for _s, r in runs], labels=[config_label(s) for s, _r in runs])
    check_not_empty(report, request.paths, request.fail_if_empty, changed=request.changed)
    written = None
    if request.write_baseline:
        from .baseline import write_baseline

        written = write_baseline(request.write_baseline, report.findings)
    _apply_baselines(report, runs, request)
    # each configuration's fail-on decides for the findings of its inputs
    kept = {id(f) for f in report.findings}
    report.failing = frozenset(
        id(f) for s, r in runs for f in r.findings if id(f) in kept and f.severity >= s.fail_on
    )
    code = max(
        exit_code(Report(r.kube_version, [f for f in r.findings if id(f) in kept]), s.fail_on)
        for s, r in runs
    )
    if report.errors:
        code = ExitCode.ERROR
    if (request.exit_zero or request.write_baseline) and code == ExitCode.FINDINGS:
        code = ExitCode.OK
    return CheckRun(report, code, written)


def _check_group(
    request: RunRequest, paths: Sequence[str], rules: Sequence[Rule], settings: Settings
) -> Report:
    """One group of paths under one configuration: the files of a commit (``changed``) as
    parts of their units, else the paths as given. A changed configuration file changes what
    every input of its directory tree gives: that tree is checked whole."""
    from .engine import check as check_paths

    if request.changed:
        from .changed import check_changed

        config = settings.config_file
        real = os.path.realpath(config) if config else None
        if real is None or all(os.path.realpath(p) != real for p in paths):
            return check_changed(paths, rules, settings, context=request.context)
        assert config is not None
        from .engine import merge_reports
        from .model import path_below

        tree = os.path.dirname(config) or os.curdir
        if path_below(os.path.abspath(tree), os.getcwd()):  # shown as the other paths are
            tree = os.path.relpath(tree)
        rest = [p for p in paths if not path_below(p, tree)]

        reports = [check_paths([tree], rules, settings, context=request.context)]
        if rest:
            reports.append(check_changed(rest, rules, settings, context=request.context))
        return merge_reports(reports)

    return check_paths(paths, rules, settings, context=request.context)


def simulate(
    request: RunRequest, scenarios: Sequence[str], known: Mapping[str, Sequence[RuleOption]]
) -> SimulationRun:
    """Simulate ``scenarios`` (default: node loss as each group's profile remediates it) for
    every StatefulSet of the request's paths, each group under its configuration file's
    Kubernetes version, profile and feature gates, with the inputs prepared as ``check``
    prepares them. ``known`` are the rules' options, to check configuration files as
    ``check`` checks them (one file, one verdict).

    Raises:
        ConfigError: a configuration file that cannot be read.
    """
    from .embedded_sim import ClusterProfile
    from .engine import load_all, prepare, simulation_steps
    from .rule import CheckContext, SimulationUnavailable

    groups = settings_by_config(request, known)
    run = SimulationRun(groups[0][0].kube_version if groups else "")
    for settings, paths in groups:
        loaded, errors = load_all(paths, settings)
        report, inventory, checked = prepare(loaded, errors, settings)
        run.errors.extend(report.errors)
        run.statefulsets += len(checked)
        if settings.simulation_steps is None:  # the same work budget as check's
            settings = msgspec.structs.replace(
                settings, simulation_steps=simulation_steps(len(checked))
            )
        profile = settings.profile or ClusterProfile()
        for sts in checked:
            ctx = CheckContext.of(sts, inventory, settings)
            for name in scenarios or [profile.node_loss_scenario]:
                try:
                    run.results.append(ctx.simulation(name))
                    run.positions.append(sts.start())
                except SimulationUnavailable as exc:
                    pos = sts.start()
                    run.errors.append(
                        InputError(pos.path, f"{sts.ref}: {exc}", pos.line, pos.column)
                    )
    return run


def config_label(settings: Settings) -> str:
    """The configuration file of a group of inputs, as a note names it: relative to the
    working directory when it is below it."""
    from .reporters.escape import printable

    path = settings.config_file
    if not path:
        return "no configuration file"
    rel = os.path.relpath(path)
    return printable(path if rel.startswith(os.pardir) else rel)


def _apply_baselines(
    report: Report, runs: Sequence[tuple[Settings, Report]], request: RunRequest
) -> None:
    """Drop the findings a baseline records: the request's ``baseline`` for every input,
    else each configuration's ``baseline:`` for the findings of its inputs (not while
    ``write_baseline`` records a new one, nor with ``no_baseline``). Stale entries become
    notices, in a run that checks the baseline's whole directory tree only: a run of part of
    it (a subdirectory, ``--changed``, standard input) lacks files whose findings the
    entries record, and cannot tell a fixed finding from one it did not look for.

    Raises:
        BaselineError: a baseline that cannot be read.
    """
    from .baseline import apply_baseline

    by_file: dict[str, list[Report]] = {}
    for settings, run in runs:
        chosen = request.baseline or (
            None if request.write_baseline or request.no_baseline else settings.baseline
        )
        if chosen:
            by_file.setdefault(chosen, []).append(run)
    if not by_file:
        return
    dropped: set[int] = set()
    for path, parts in by_file.items():
        mine = {id(f) for run in parts for f in run.findings}
        _kept, baselined, stale = apply_baseline(
            [f for f in report.findings if id(f) in mine],
            path,
            checked=[c for run in parts for c in run.checked],
            rules_run=report.rules_run,
        )
        dropped.update(id(f) for f in baselined)
        if _whole_tree(request, os.path.dirname(os.path.abspath(path))):
            report.notices.extend(stale)
    report.findings = [f for f in report.findings if id(f) not in dropped]
    report.baselined = len(dropped)
    report.keep_folded_of_reported()


def _whole_tree(request: RunRequest, directory: str) -> bool:
    """Whether the request checks every input of ``directory``'s tree: not the files of a
    commit, not standard input, and one of its paths is that directory or above it."""
    from .model import path_below

    if request.changed or "-" in request.paths:
        return False
    real = os.path.realpath(directory)
    return any(path_below(real, os.path.realpath(p)) for p in request.paths)


def check_not_empty(
    report: Report, paths: Sequence[str], fail: bool, changed: bool = False
) -> None:
    """No Kubernetes object in the inputs: a warning notice, or an input error with ``fail``;
    with ``fail`` an empty input (an empty file, comments only, empty stdin) is an error too.

    With ``changed`` (the files of a commit) no object is a plain notice, never an error: a
    commit of other YAML (a ConfigMap, a workflow) has nothing to check."""
    from .loading import MODELLED_KINDS

    if fail:
        empty = [n for n in report.notices if n.empty]
        report.notices = [n for n in report.notices if not n.empty]
        report.errors.extend(
            InputError(n.path, f"{n.message} (--fail-if-empty)", n.line, n.column) for n in empty
        )
    from .renderers.inputs import STDIN, STDIN_PATH

    shown = [STDIN_PATH if p == STDIN else p for p in paths]  # (as its findings name it)
    where = ", ".join(shown[:3]) + (f" and {len(shown) - 3} more" if len(shown) > 3 else "")
    if report.objects and not report.statefulsets and not report.errors and not changed:
        text = f"no StatefulSet among the {report.objects} object(s) read: nothing to check"
        report.notices.append(Notice(where, text))
    if report.objects or report.errors:  # with an unreadable input the run fails already
        return
    message = f"no Kubernetes objects of the kinds ssrisk reads ({', '.join(MODELLED_KINDS)})"
    if changed:
        from .changed import EXCLUDED

        if all(n.message == EXCLUDED for n in report.notices if not n.empty) and report.notices:
            return  # every changed file is excluded, and each says so
        report.notices.append(Notice(where, f"nothing to check: {message} in the changed files"))
    elif fail:
        report.errors.append(InputError(where, message + " (--fail-if-empty)"))
    else:
        report.notices.append(Notice(where, message, level="warning"))
