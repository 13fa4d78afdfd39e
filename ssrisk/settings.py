"""Run settings: what the command line (and later a config file) decide."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from .model import Position, Severity
from .objectives import Objectives

if TYPE_CHECKING:
    from .embedded_sim import ClusterProfile
    from .paths import ExcludePattern

DEFAULT_KUBE_VERSION = "1.37"
#: Kubernetes minor versions whose defaults ssrisk knows (1.25 to 1.37).
SUPPORTED_MINORS = range(25, 38)


def normal_kube_version(value: str) -> str:
    """``1.NN`` or ``1.NN.P`` (a leading ``v`` allowed) with 25 ≤ NN ≤ 37 and at most three
    digits per part, as ``1.NN[.P]`` without leading zeros: the one check of the command
    line's ``--kube-version`` and the configuration's ``kube-version``.

    Raises:
        ValueError: any other text (the message says what is accepted).
    """
    parts = value.strip().lstrip("v").split(".")
    ok = len(parts) in (2, 3) and all(p.isdigit() and len(p) <= 3 for p in parts)
    if not ok or parts[0] != "1" or int(parts[1]) not in SUPPORTED_MINORS:
        raise ValueError(
            f"unsupported Kubernetes version {value!r}: use 1.25 to 1.37, optionally with a "
            "patch version (e.g. 1.35.2)"
        )
    return ".".join(str(int(p)) for p in parts)


#: Names of ssrisk's configuration file; never read as manifests.
CONFIG_NAMES = (".ssrisk.yaml", ".ssrisk.yml")
#: ssrisk's own files by name (configuration, the baseline's name in the docs): never read
#: as manifests, wherever they are and however they are named on the command line.
OWN_FILE_NAMES = (*CONFIG_NAMES, ".ssrisk-baseline.json")


#: The release name of a chart rendered without one configured (helm pkg/cmd/template.go,
#: newTemplateCmd: ``client.ReleaseName = "release-name"``).
DEFAULT_RELEASE_NAME = "release-name"


class ChartVariant(msgspec.Struct, frozen=True):
    """One render of a configured chart (the configuration's ``charts: <dir>:``): the
    chart's own settings with one variant's laid over them (values files and ``set`` after the
    chart's, release and namespace replacing them).

    ``name`` is the variant's (``"prod"``), ``""`` for a chart configured without variants.
    ``values`` are the values files shown like the configuration's other paths (relative to
    the working directory when below it), inside the configuration's repository; ``set`` the
    ``key=value`` expressions of ``helm --set``, in order.
    """

    name: str = ""
    values: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()
    release: str = DEFAULT_RELEASE_NAME
    namespace: str | None = None
    #: Where the configuration writes each ``set`` value (dotted key -> its position), for
    #: findings about a field that value sets.
    set_positions: tuple[tuple[str, Position], ...] = ()


def values_readers(
    charts: Mapping[str, Sequence[ChartVariant]],
) -> dict[str, list[tuple[str, str]]]:
    """The real path of each configured values file -> ``(real chart path, variant name)``
    of each render that reads it (``charts``: :attr:`Settings.charts`)."""
    import os

    out: dict[str, list[tuple[str, str]]] = {}
    for chart, variants in charts.items():
        for variant in variants:
            for values in variant.values:
                out.setdefault(os.path.realpath(values), []).append((chart, variant.name))
    return out


class Settings(msgspec.Struct):
    """Everything that changes what a run reports.

    ``kube_version`` is ``"1.NN"`` or ``"1.NN.P"`` (1.25 to 1.37). ``severity`` overrides the
    default severity of rules by id; ``disable``/``enable`` switch rules off or (when
    ``enable`` is non-empty) select only those.
    """

    kube_version: str = DEFAULT_KUBE_VERSION
    fail_on: Severity = Severity.ERROR
    namespace: str = "default"
    #: ``--exclude`` patterns (relative to the working directory) and the configuration's
    #: (:class:`ssrisk.paths.Exclude`, relative to its directory).
    exclude: tuple[ExcludePattern, ...] = ()
    enable: frozenset[str] = frozenset()
    disable: frozenset[str] = frozenset()
    severity: Mapping[str, Severity] = msgspec.field(default_factory=dict)
    #: The configuration's ``rule-options``: rule id → option name → value (checked against
    #: the rules' declarations; :meth:`ssrisk.rule.Rule.option` reads them).
    rule_options: Mapping[str, Mapping[str, float]] = msgspec.field(default_factory=dict)
    #: The configuration's ``systems`` and plugins' ``ssrisk_systems`` entries for the catalog
    #: of stateful systems: ``(id, fields as JSON, origin)`` (``rules/_systems.py``).
    systems: tuple[tuple[str, str, str], ...] = ()
    profile: ClusterProfile | None = None
    feature_gates: Mapping[str, bool] | None = None
    #: Helm values for every chart rendered: ``--values FILE`` and ``--set key=value``, in
    #: command-line order.
    helm_values: tuple[str, ...] = ()
    helm_set: tuple[str, ...] = ()
    #: The configuration's ``charts``: the real path of each configured chart directory → its
    #: renders, one per variant (:class:`ChartVariant`). The command line's ``--values`` and
    #: ``--set`` apply after each variant's.
    charts: Mapping[str, tuple[ChartVariant, ...]] = msgspec.field(default_factory=dict)
    #: With ``--changed``: the variants to render of the charts whose only changed files are
    #: variants' values files (real chart path → variant names); other charts render all.
    chart_variants_only: Mapping[str, frozenset[str]] = msgspec.field(default_factory=dict)
    #: More API versions for charts' ``.Capabilities.APIVersions`` (``--api-versions`` and
    #: the configuration's ``api-versions``), beside the built-in ones of ``kube_version``.
    helm_api_versions: tuple[str, ...] = ()
    #: Wall-clock seconds each renderer run (helm, kustomize) may take (``--render-timeout``;
    #: ``None``: ``ssrisk.renderers.bounded.RENDER_TIMEOUT_S``).
    render_timeout_s: float | None = None
    #: Let kustomize fetch remote resources (``--allow-remote-resources``); off, a
    #: kustomization that names one is an error and renderers get no network settings.
    allow_remote_resources: bool = False
    #: The configuration's ``baseline`` file (resolved; ``--baseline`` overrides it).
    baseline: str | None = None
    #: Recovery objectives per scenario (the configuration's ``objectives``, over the defaults).
    objectives: Objectives = msgspec.field(default_factory=Objectives)
    #: Worker processes for checking many StatefulSets: 0 = one per core, 1 = no workers.
    jobs: int = 0
    #: Real paths of files ssrisk reads or writes itself in this run (configuration,
    #: baselines, outputs): never read as manifests, like every file named in CONFIG_NAMES.
    skip_files: frozenset[str] = frozenset()
    #: Whether an output prints findings' explanations (json, sarif, junit, text with
    #: ``--explain``). When not, explanations that rules give as callables are never built
    #: (each finding's explanation is then empty).
    explanations: bool = True
    #: Whether an output prints the explanations of folded findings too (json). When not,
    #: a folded finding's explanation is dropped unbuilt.
    folded_explanations: bool = True
    #: Whether an output draws the simulated timelines of findings (``--format markdown``):
    #: the engine then keeps each finding's scenario as a :class:`ssrisk.gantt.Drawing`.
    drawings: bool = False
    #: Whether each finding gets the smallest change verified to remove it (``--fixes``,
    #: ``ssrisk fix``: :mod:`ssrisk.remedy`); off, no candidate is searched (no cost).
    fixes: bool = False
    #: The configuration file these settings come from, as found (``None``: defaults only);
    #: names the group when one run checks inputs under several.
    config_file: str | None = None
    #: Simulation steps each StatefulSet may take over all its scenarios (embedded_sim
    #: budget.py); ``None``: the engine sets it from the number of StatefulSets checked
    #: (``engine.simulation_steps``).
    simulation_steps: int | None = None

    def rule_enabled(self, rule_id: str) -> bool:
        if rule_id in self.disable:
            return False
        return not self.enable or rule_id in self.enable

    def severity_for(self, rule_id: str, default: Severity) -> Severity:
        return self.severity.get(rule_id, default)
