"""The rule interface: what a rule declares and what it gets to look at.

A rule is a small class with metadata as class attributes and one :meth:`Rule.check` method
that yields :class:`~ssrisk.model.Finding` values for one StatefulSet. Its documentation is a
Markdown page named after its id next to its module (``rules/<id>.md``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .inventory import Inventory
from .model import Finding, K8sObject, ObjectRef, Position, Severity

if TYPE_CHECKING:
    from .embedded_sim import ClusterProfile, ScenarioResult
    from .settings import Settings


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


#: PodDisruptionBudgets looked at per StatefulSet (one more is fetched, to know there are
#: more than this many).
MAX_PDBS = 10


@dataclass
class CheckContext:
    """Everything a rule may read while checking one StatefulSet.

    ``simulate(scenario)`` runs the embedded simulator lazily and caches the result, so
    several rules quoting the same scenario cost one run.
    """

    sts: K8sObject
    inventory: Inventory
    kube_version: str
    profile: ClusterProfile | None = None
    feature_gates: Mapping[str, bool] | None = None
    _sim_cache: dict[str, Any] = field(default_factory=dict)
    _simulator: Any = None  # embedded_sim.Simulator, made on the first simulate()
    _pdbs: list[K8sObject] | None = None

    @classmethod
    def of(cls, sts: K8sObject, inventory: Inventory, settings: Settings) -> CheckContext:
        """The context of ``sts`` with the run's version, cluster profile and feature gates."""
        return cls(
            sts=sts,
            inventory=inventory.for_unit(sts.unit),
            kube_version=settings.kube_version,
            profile=settings.profile,
            feature_gates=settings.feature_gates,
        )

    @property
    def pod_labels(self) -> Mapping[str, Any]:
        labels = self.sts.get("spec", "template", "metadata", "labels")
        return labels if isinstance(labels, Mapping) else {}

    @property
    def replicas(self) -> int:
        """``spec.replicas`` with the API server default of 1 (``None`` is also 1)."""
        value = self.sts.get("spec", "replicas")
        if isinstance(value, bool) or not isinstance(value, int):
            return 1
        return value

    @property
    def pod_management_policy(self) -> str:
        value = self.sts.get("spec", "podManagementPolicy")
        return value if value in ("OrderedReady", "Parallel") else "OrderedReady"

    @property
    def is_fragment(self) -> bool:
        """True for a kustomize patch or other partial object: no containers, or a container
        without an image. The API server would reject it on its own (pkg/apis/core/validation:
        a pod needs a container, a container an image), so rules should not infer defaults
        for the fields it leaves out."""
        items = self.sts.get("spec", "template", "spec", "containers")
        if not isinstance(items, list) or not items:
            return True
        return not all(isinstance(c, Mapping) and c.get("image") for c in items)

    @property
    def start_ordinal(self) -> int:
        """``spec.ordinals.start`` (KEP-3335), default 0."""
        start = self.sts.get("spec", "ordinals", "start")
        ok = isinstance(start, int) and not isinstance(start, bool) and start >= 0
        return start if ok else 0

    def pod_name(self, index: int = 0) -> str:
        """Name of the ``index``-th pod: ``<name>-<start ordinal + index>``."""
        return f"{self.sts.name}-{self.start_ordinal + index}"

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

    def simulate(self, scenario: str) -> ScenarioResult:
        """Result of ``scenario`` for this StatefulSet (cached).

        Raises:
            SimulationUnavailable: when the simulator does not model the scenario or fails.
        """
        if scenario not in self._sim_cache:
            self._sim_cache[scenario] = self._run(scenario)
        result = self._sim_cache[scenario]
        if isinstance(result, SimulationUnavailable):
            raise result
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
                self._simulator = embedded_sim.Simulator(
                    self.sts.data,
                    kube_version=self.kube_version,
                    pdbs=[p.data for p in self.pdbs()],
                    storage_classes=[o.data for o in self.inventory.of_kind("StorageClass")],
                    persistent_volumes=[o.data for o in self.inventory.of_kind("PersistentVolume")],
                    profile=self.profile,
                    feature_gates=self.feature_gates,
                )
            return self._simulator.run(scenario)
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
    #: One line: what the rule detects.
    summary: ClassVar[str] = ""
    #: Where the behaviour comes from (source paths, KEPs, docs pages).
    references: ClassVar[Sequence[str]] = ()

    def check(self, ctx: CheckContext) -> Iterator[Finding]:
        """Yield findings for ``ctx.sts``. Must not raise for odd but loadable manifests."""
        raise NotImplementedError

    def finding(
        self,
        ctx: CheckContext,
        at: Position,
        message: str,
        explanation: str | Callable[[], str] = "",
        *,
        obj: ObjectRef | None = None,
        references: Sequence[str] = (),
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
        """
        return Finding(
            rule=self.id,
            severity=self.severity,
            position=at,
            obj=obj or ctx.sts.ref,
            message=message,
            explanation=(
                partial(_clean_text, explanation)
                if callable(explanation)
                else ascii_text(explanation.strip())
            ),
            references=list(references or self.references),
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
