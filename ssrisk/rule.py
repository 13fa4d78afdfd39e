"""The rule interface: what a rule declares and what it gets to look at.

A rule is a small class with metadata as class attributes and one :meth:`Rule.check` method
that yields :class:`~ssrisk.model.Finding` values for one StatefulSet. Its documentation is a
Markdown page named after its id next to its module (``rules/<id>.md``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from functools import cached_property, lru_cache, partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

import msgspec

from .inventory import Inventory
from .model import NO_FACTS, FactValue, Finding, K8sObject, ObjectRef, Position, RunNote, Severity
from .objectives import Objectives
from .ruleoptions import RuleOption

if TYPE_CHECKING:
    from .embedded_sim import ClusterProfile, ScenarioResult
    from .embedded_sim.podtemplate import SetSpec
    from .remedy import Remedy
    from .settings import Settings


T = TypeVar("T")

#: Typographic characters in explanations and their ASCII spelling.
_ASCII = (("–", "-"), ("—", "-"), ("−", "-"), ("…", "..."), ("×", "x"), ("≥", ">="), ("≤", "<="))


def ascii_text(text: str) -> str:
    """``text`` with typographic dashes, ellipses and signs spelt in ASCII.

    Explanations are long (they carry simulated timelines) and a large run holds thousands of
    them; Python stores a string with a single non-ASCII character at two or four bytes per
    character, so one en dash doubles the memory of a whole explanation.
    """
    if text.isascii():
        return text
    for char, spelt in _ASCII:  # str.replace is a fast C scan; translate() is not, here
        if char in text:
            text = text.replace(char, spelt)
    return text


def _clean_text(build: Callable[[], str]) -> str:
    """The text ``build()`` returns, stripped and in ASCII (a lazy explanation, when read)."""
    return ascii_text(build().strip())


@lru_cache(maxsize=1)
def _default_profile() -> ClusterProfile:
    from .embedded_sim import ClusterProfile

    return ClusterProfile()


class SimulationUnavailable(Exception):
    """The simulator could not run this scenario for this StatefulSet.

    ``reason`` says why without naming the scenario (several scenarios often share it).
    """

    def __init__(self, message: str, reason: str = "", scenario: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message
        self.scenario = scenario


#: The distinct ``echo_of`` tuples of findings (a few dozen), shared by the findings.
_ECHOES: dict[tuple[str, ...], tuple[str, ...]] = {}

#: PodDisruptionBudgets looked at per StatefulSet (one more is fetched, to know there are
#: more than this many).
MAX_PDBS = 10


class CheckContext(msgspec.Struct, dict=True, weakref=True):
    """Everything a rule may read while checking one StatefulSet.

    ``simulate(scenario)`` runs the embedded simulator lazily and caches the result, so
    several rules quoting the same scenario cost one run.

    (A msgspec Struct: ``dict`` for its cached properties, ``weakref`` so that a plugin or a
    test can follow when a context is freed.)
    """

    sts: K8sObject
    inventory: Inventory
    kube_version: str
    profile: ClusterProfile | None = None
    feature_gates: Mapping[str, bool] | None = None
    objectives: Objectives = msgspec.field(default_factory=Objectives)
    #: Simulation steps this StatefulSet may take over all its scenarios (None: no limit).
    max_steps: int | None = None
    #: The run's ``rule-options`` (rule id → option name → value; read by :meth:`Rule.option`).
    rule_options: Mapping[str, Mapping[str, float]] = msgspec.field(default_factory=dict)
    #: Stateful systems the configuration and plugins add to the catalog (or lay over its
    #: entries): ``(id, fields as JSON, origin)``, read by ``rules/_systems.py``.
    systems: tuple[tuple[str, str, str], ...] = ()
    _sim_cache: dict[str, Any] = msgspec.field(default_factory=dict)
    _simulator: Any = None  # embedded_sim.Simulator, made on the first simulate()
    _pdbs: list[K8sObject] | None = None
    _hpa: tuple[K8sObject | None] | None = None
    _memo: dict[Hashable, Any] = msgspec.field(default_factory=dict)

    @classmethod
    def of(cls, sts: K8sObject, inventory: Inventory, settings: Settings) -> CheckContext:
        """The context of ``sts`` with the run's version, cluster profile and feature gates."""
        return cls(
            sts=sts,
            inventory=inventory.for_unit(sts.unit),
            kube_version=settings.kube_version,
            profile=settings.profile,
            feature_gates=settings.feature_gates,
            objectives=settings.objectives,
            max_steps=settings.simulation_steps,
            rule_options=settings.rule_options,
            systems=settings.systems,
        )

    @cached_property
    def pod_labels(self) -> Mapping[str, Any]:
        """The template's labels (the model's; ``{}`` when unset)."""
        return self.sts.pod_template().labels

    @cached_property
    def replicas(self) -> int:
        """The replicas the set runs with at the least: ``spec.replicas`` with the API server
        default of 1 (``None`` is also 1), or, when a HorizontalPodAutoscaler targets the set,
        its ``minReplicas`` (default 1; the autoscaler owns ``spec.replicas`` then, and scales
        between minReplicas and maxReplicas: docs/tasks/run-application/
        horizontal-pod-autoscale.md, "Migrating Deployments and StatefulSets to
        horizontal autoscaling")."""
        hpa = self.autoscaler()
        if hpa is not None:
            value = hpa.get("spec", "minReplicas")
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
            return value if ok else 1
        value = self.sts.set_spec().replicas
        return 1 if value is None else value

    def autoscaler(self) -> K8sObject | None:
        """The HorizontalPodAutoscaler that targets this StatefulSet, if the inputs have one."""
        if self._hpa is None:
            found = self.inventory.autoscaler_for(self.sts.namespace, "StatefulSet", self.sts.name)
            self._hpa = (found,)
        return self._hpa[0]

    def replicas_at(self) -> Position:
        """Where the replica count is decided: the autoscaler's ``minReplicas`` (or its spec),
        else ``spec.replicas``, else the start of the StatefulSet (unset: 1)."""
        hpa = self.autoscaler()
        if hpa is not None:
            return hpa.pos("spec", "minReplicas")
        if "replicas" in self.sts.set_spec().fields:
            return self.sts.pos("spec", "replicas")
        return self.sts.start()

    @property
    def replicas_field(self) -> str:
        """How the manifest sets the replica count, for messages: ``"replicas: 1"``,
        ``"replicas unset (1)"`` or ``"HorizontalPodAutoscaler 'x' minReplicas: 1"``."""
        hpa = self.autoscaler()
        if hpa is not None:
            return f"HorizontalPodAutoscaler {hpa.name!r} minReplicas: {self.replicas}"
        if "replicas" not in self.sts.set_spec().fields:
            return f"replicas unset ({self.replicas})"
        return f"replicas: {self.replicas}"

    @property
    def pod_management_policy(self) -> str:
        value = self.sts.set_spec().pod_management_policy
        return value if value in ("OrderedReady", "Parallel") else "OrderedReady"

    @cached_property
    def is_fragment(self) -> bool:
        """True for a kustomize patch or other partial object: no containers, or a container
        without an image in an object that also lacks ``spec.selector`` or the template labels.
        The API server would reject it on its own (pkg/apis/core/validation: a pod needs a
        container, a container an image), so rules should not infer defaults for the fields it
        leaves out. An otherwise complete object whose images are left out (an operator's
        template, filled in when it creates the set) is checked as a whole."""
        main = [c for c in self.sts.pod_template().containers if c.field == "containers"]
        if not main:
            return True
        if all(c.image for c in main):
            return False
        spec = self.sts.set_spec()
        return not (isinstance(spec.selector, Mapping) and bool(self.pod_labels))

    @property
    def start_ordinal(self) -> int:
        """``spec.ordinals.start`` (KEP-3335), default 0."""
        start = self.sts.set_spec().ordinals_start
        return start if start is not None and start >= 0 else 0

    def pod_name(self, index: int = 0) -> str:
        """Name of the ``index``-th pod: ``<name>-<start ordinal + index>``."""
        return f"{self.sts.name}-{self.start_ordinal + index}"

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """``build()``, computed once per StatefulSet for ``key`` (for helpers that several
        rules call on the same set; ``key`` names the helper and its arguments)."""
        try:
            return cast(T, self._memo[key])
        except KeyError:
            value = self._memo[key] = build()
            return value

    @property
    def effective_profile(self) -> ClusterProfile:
        """The configured cluster profile, else the simulator's default one."""
        return self.profile or _default_profile()

    def profile_setting(self, name: str) -> Any:
        """A cluster-profile value (``out_of_service_after_s``,
        ``default_unreachable_toleration_s``, ...): the configured one, else the simulator's
        default, so that messages quote the numbers the simulation used."""
        return getattr(self.profile or _default_profile(), name)

    def pdbs(self) -> list[K8sObject]:
        """The PodDisruptionBudgets that select this StatefulSet's pods (looked up once), at
        most :data:`MAX_PDBS` + 1 of them: with more than one the eviction API refuses every
        eviction anyway, and thousands of overlapping PDBs must not cost thousands per set."""
        if self._pdbs is None:
            self._pdbs = self.inventory.pdbs_selecting(
                self.sts.namespace, self.pod_labels, limit=MAX_PDBS + 1
            )
        return list(self._pdbs)

    def simulation(self, scenario: str) -> ScenarioResult:
        """Result of ``scenario`` for this StatefulSet (cached), as ``ssrisk simulate`` shows
        it.

        Raises:
            SimulationUnavailable: when the simulator does not model the scenario or fails.
        """
        if scenario not in self._sim_cache:
            self._sim_cache[scenario] = self._run(scenario)
        result = self._sim_cache[scenario]
        if isinstance(result, SimulationUnavailable):
            raise result
        return result

    def simulated_results(self) -> dict[str, ScenarioResult]:
        """The scenarios simulated so far for this StatefulSet, by name, in the order they
        ran (those that could not run left out)."""
        return {
            name: result
            for name, result in self._sim_cache.items()
            if not isinstance(result, SimulationUnavailable)
        }

    def simulate(self, scenario: str) -> ScenarioResult:
        """Result of ``scenario`` for this StatefulSet as rules may quote it (cached): like
        :meth:`simulation`, but unavailable when no replica fits a node of the simulated
        cluster (nothing runs, so nothing fails over: what a rule would quote is the cluster
        ssrisk assumed, not the manifest; the placement sentence says which).

        Raises:
            SimulationUnavailable: when the simulator does not model the scenario or fails,
                or no replica fits a node.
        """
        result = self.simulation(scenario)
        basis = result.placement_basis
        if basis is not None and result.replicas > 0 and len(basis.unplaced) >= result.replicas:
            reason = result.placement
            unavailable = SimulationUnavailable(
                f"simulation of {scenario}: {reason}", reason, scenario
            )
            self._sim_cache[scenario] = unavailable
            raise unavailable
        return result

    def simulation_failures(self) -> list[SimulationUnavailable]:
        """The simulations asked for so far that could not run."""
        return [r for r in self._sim_cache.values() if isinstance(r, SimulationUnavailable)]

    def try_simulate(self, scenario: str) -> ScenarioResult | None:
        """Like :meth:`simulate`, but ``None`` when the scenario cannot be simulated."""
        try:
            return self.simulate(scenario)
        except SimulationUnavailable:
            return None

    def _run(self, scenario: str) -> Any:
        from . import embedded_sim

        try:
            if self._simulator is None:
                data = self.sts.data
                template = self.sts.pod_template()
                spec: SetSpec | None = self.sts.set_spec()
                meta = data.get("metadata")
                if isinstance(meta, Mapping) and meta.get("namespace") != self.sts.namespace:
                    # the namespace it is applied in (--namespace, a kustomization's, a chart
                    # variant's), which the manifest need not write
                    data = {**data, "metadata": {**meta, "namespace": self.sts.namespace}}
                classes, volumes = self.inventory.storage_inputs(
                    t.class_name for t in template.claim_templates
                )
                if self.autoscaler() is not None:  # simulate the autoscaler's minimum
                    written = dict(data.get("spec") or {})
                    written["replicas"] = self.replicas
                    data, spec = {**data, "spec": written}, None  # (its template unchanged)
                self._simulator = embedded_sim.Simulator(
                    data,
                    kube_version=self.kube_version,
                    pdbs=[p.data for p in self.pdbs()],
                    storage_classes=classes,
                    persistent_volumes=volumes,
                    profile=self.profile,
                    feature_gates=self.feature_gates,
                    max_steps=self.max_steps,
                    template=template,
                    spec=spec,
                )
            result = self._simulator.run(scenario)
            if result.budget_exhausted:
                from .embedded_sim.budget import STEP_MEANING

                reason = (
                    f"placing its replicas and running its scenarios takes more than the "
                    f"{self.max_steps} simulation steps a StatefulSet may take in this run "
                    f"({STEP_MEANING}; docs/security.md, Limits and hostile input), so the "
                    "placement was not simulated in full and nothing simulated is assumed"
                )
                return SimulationUnavailable(
                    f"simulation of {scenario} stopped: {reason}", reason, scenario
                )
            return result
        except NotImplementedError as exc:
            return SimulationUnavailable(
                f"scenario {scenario} is not modelled yet: {exc}", str(exc), scenario
            )
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            return SimulationUnavailable(
                f"simulation of {scenario} failed: {exc}", str(exc), scenario
            )


class Rule:
    """Base class of every rule. Subclasses set the class attributes and implement check()."""

    #: Stable kebab-case id, used in output, config and suppressions.
    id: ClassVar[str] = ""
    #: Default severity; configuration may override it.
    severity: ClassVar[Severity] = Severity.WARNING
    #: The other severities a finding of this rule can have, case by case (a rule that says
    #: when a case is worse or milder passes ``severity=`` to :meth:`finding`); see
    #: :meth:`levels`.
    other_severities: ClassVar[tuple[Severity, ...]] = ()
    #: One line: what the rule detects.
    summary: ClassVar[str] = ""
    #: Where the behaviour comes from (source paths, KEPs, docs pages).
    references: ClassVar[Sequence[str]] = ()
    #: True for a rule whose finding means the API server rejects the object: every other
    #: finding on that StatefulSet is folded into it (none of its settings would take effect),
    #: except a more severe one and one of a rule that is :attr:`never_folded`.
    covers_all: ClassVar[bool] = False
    #: True for a rule whose finding says data is destroyed: it is never folded into another.
    never_folded: ClassVar[bool] = False
    #: The rule's options (thresholds): set in the configuration under ``rule-options``,
    #: checked there against these declarations, read with :meth:`option`.
    options: ClassVar[tuple[RuleOption, ...]] = ()
    #: The scenarios a fix of this rule's findings is judged by and quoted with (simulated
    #: before and after the change even when no rule of the run simulates them): a budget's
    #: fix by ``node-drain``, a spread's by ``node-loss`` and ``zone-loss``.
    fix_scenarios: ClassVar[tuple[str, ...]] = ()
    #: True for a rule whose fixes make Ready mean more (a readiness probe): pods then turn
    #: Ready later by design, so a fix is not judged by when the set is back, only by how
    #: many replicas are down and whether operations finish.
    fix_delays_ready: ClassVar[bool] = False

    def option(self, ctx: CheckContext, name: str) -> float:
        """The value of this rule's option ``name`` in the run: the configured one, else its
        default. Raises KeyError for a name the rule does not declare."""
        for declared in self.options:
            if declared.name == name:
                return declared.read(ctx.rule_options.get(self.id, {}).get(name, declared.default))
        raise KeyError(f"rule {self.id} declares no option {name!r}")

    @classmethod
    def levels(cls) -> tuple[Severity, ...]:
        """Every severity a finding of the rule can have without a configured one, the most
        severe first (``(ERROR, INFO)`` for a rule that reports some cases as errors and
        others as info). ``ssrisk rules`` lists them; SARIF states the first as the rule's
        level."""
        return tuple(sorted({cls.severity, *cls.other_severities}, reverse=True))

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        """Yield findings for ``ctx.sts``. Must not raise for odd but loadable manifests."""
        raise NotImplementedError

    def note(self, ctx: CheckContext) -> RunNote | None:
        """A fact this rule states once per run instead of per StatefulSet (``None``: none
        for ``ctx.sts``). Equal notes of several StatefulSets are merged and counted."""
        return None

    def remedies(self, ctx: CheckContext, finding: Finding) -> Sequence[Remedy]:
        """Candidate changes of ``ctx.sts`` that could remove ``finding``, smallest first
        (:mod:`ssrisk.remedy`: each is verified by running this rule again on the changed
        StatefulSet before it is offered). None by default."""
        return ()

    def finding(
        self,
        ctx: CheckContext,
        at: Position,
        message: str,
        explanation: str | Callable[[], str] = "",
        *,
        obj: ObjectRef | None = None,
        references: Sequence[str] = (),
        severity: Severity | None = None,
        echo_of: Sequence[str] = (),
        facts: Mapping[str, FactValue] | None = None,
    ) -> Finding:
        """Build a finding of this rule on ``obj`` (default: the StatefulSet) at ``at``.

        ``explanation`` is the text, or a zero-argument callable that returns it. Pass a
        callable (a closure) when the text costs something to build (simulated timelines,
        paragraphs assembled from parts): it is called only when an output format or
        ``--explain`` prints the explanation, so text output never builds it. The callable
        must give the same text whenever it is called (it may be called more than once, and in
        a worker process, before the finding is sent back); a closure in a loop must bind the
        loop's variables (default arguments), since it runs after the loop moved on.
        Leading and trailing whitespace is dropped and typographic characters are spelt in
        ASCII (:func:`ascii_text`) either way.

        ``severity`` overrides the rule's default for this finding; ``echo_of`` names the rules
        whose finding on the same StatefulSet already states this one's cause (most specific
        first): the engine folds this finding into the first of them that reports the set.
        ``facts`` are the numbers and names ``message`` states (:attr:`Finding.facts`): every
        number of the message is one of them (``tests/rules/test_finding_facts.py``).
        """
        if not explanation:
            explanation = self.page_explanation  # (built only when an output prints it)
        return Finding(
            rule=self.id,
            severity=self.severity if severity is None else severity,
            position=at,
            obj=obj or ctx.sts.ref,
            message=sys.intern(message),  # many StatefulSets get the same message
            explanation=(
                partial(_clean_text, explanation)
                if callable(explanation)
                else ascii_text(explanation.strip())
            ),
            references=tuple(references or self.references),
            facts=MappingProxyType(dict(facts)) if facts else NO_FACTS,
            echo_of=_ECHOES.setdefault(tuple(echo_of), tuple(echo_of)),
            never_folded=self.never_folded,
        )

    @classmethod
    def doc_path(cls) -> Path:
        """The rule's Markdown page: ``<id>.md`` beside the module that defines it."""
        module = sys.modules[cls.__module__]
        return Path(module.__file__ or ".").with_name(f"{cls.id}.md")

    @classmethod
    def doc(cls) -> str:
        """The rule's documentation page, or its summary when the page is missing."""
        try:
            return cls.doc_path().read_text(encoding="utf-8")
        except OSError:
            return f"# {cls.id}\n\n{cls.summary}\n"

    @classmethod
    def page_section(cls, heading: str) -> str:
        """The text of the page's ``## heading`` section as plain prose: one line per
        paragraph, code spans without their backticks, code blocks left out; ``""`` when the
        page has no such section. Explanations quote their static prose from here, so each
        sentence has one home (the page)."""
        return _page_section(cls.doc(), heading)

    @classmethod
    def page_explanation(cls) -> str:
        """The explanation of a finding that states nothing beyond its message: the page's
        "Why it matters", then "Fix: " and its "How to fix" (read once per rule and run)."""
        key = f"{cls.__module__}.{cls.__qualname__}"
        found = _PAGE_EXPLANATIONS.get(key)
        if found is None:
            found = _PAGE_EXPLANATIONS[key] = _page_explanation(cls)
        return found


@lru_cache(maxsize=256)
def _page_section(page: str, heading: str) -> str:
    """See :meth:`Rule.page_section`."""
    lines = page.splitlines()
    try:
        start = lines.index(f"## {heading}") + 1
    except ValueError:
        return ""
    body: list[str] = []
    fenced = False
    for line in lines[start:]:
        if line.startswith("## "):
            break
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            body.append(line)
    paragraphs = " ".join(line.strip() or "\n" for line in body).split("\n")
    return "\n\n".join(" ".join(p.split()).replace("`", "") for p in paragraphs if p.strip())


#: :meth:`Rule.page_explanation` of each rule class, read once per run.
_PAGE_EXPLANATIONS: dict[str, str] = {}


def _page_explanation(rule: type[Rule]) -> str:
    """See :meth:`Rule.page_explanation`."""
    why, fix = rule.page_section("Why it matters"), rule.page_section("How to fix")
    word = fix.split(" ", 1)[0]
    if word[1:].islower():  # "Use ..." reads "Fix: use ...", "RollingUpdate ..." stays
        fix = fix[0].lower() + fix[1:]
    return f"{why}\n\nFix: {fix}" if fix else why
