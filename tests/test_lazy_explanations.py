"""Explanations are built only when an output prints them, as soon as their StatefulSet is
checked, and are kept (and cross process boundaries) as templates shared by the sets that
behave alike."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DATA, run_cli

from ssrisk import rule as rule_module
from ssrisk.engine import check
from ssrisk.model import NamedText, named_text
from ssrisk.plugins import collect_rules, plugin_manager
from ssrisk.settings import Settings

RISKY = DATA / "perf" / "risky.yaml"


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The rule ids whose lazy explanations were built, one entry per build."""
    built: list[str] = []
    real = rule_module._clean_text

    def counting(build: Callable[[], str]) -> str:
        text = real(build)
        built.append(text[:40])
        return text

    monkeypatch.setattr(rule_module, "_clean_text", counting)
    return built


def test_text_output_never_builds_an_explanation(builds: list[str]) -> None:
    run = run_cli("check", str(RISKY))
    assert run.code == 1 and "single-replica" in run.out and "Simulated" not in run.out
    assert builds == []


@pytest.mark.parametrize("how", [["--format", "json"], ["--explain"], ["--format", "sarif"]])
def test_formats_that_print_explanations_build_each_once(builds: list[str], how: list[str]) -> None:
    run = run_cli("check", *how, str(RISKY))
    assert run.code == 1
    assert "Simulated timeline (scenario node-loss" in run.out
    # (findings folded into the finding of their cause are printed in JSON only)
    assert run.out.count("Simulated timeline (scenario") >= 8
    # each lazily given explanation is built at most once, by the output that prints it
    # (JSON prints every finding, folded ones too; the others only the reported findings)
    lazy = len(builds)
    builds.clear()
    findings = run_cli("check", "--format", "json", str(RISKY)).json()["findings"]
    assert len(builds) >= len([f for f in findings if "Simulated" in f["explanation"]])
    if how == ["--format", "json"]:
        assert lazy == len(builds)
    else:
        assert 8 <= lazy <= len(builds)


def test_explanations_quoting_a_simulation_are_given_lazily() -> None:
    from ssrisk.engine import load_all
    from ssrisk.inventory import Inventory
    from ssrisk.rule import CheckContext

    settings = Settings()
    inventory = Inventory(o for lf in load_all([str(RISKY)], settings)[0] for o in lf.objects)
    quoting = []
    for sts in inventory.statefulsets:
        ctx = CheckContext.of(sts, inventory, settings)
        for rule in collect_rules(plugin_manager()):
            for f in rule.check(ctx):
                if "Simulated timeline" in f.explanation:
                    quoting.append(f)
    assert len({f.rule for f in quoting}) >= 8
    for f in quoting:
        assert callable(f.__dict__["_explanation"]), f.rule


TWINS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: %(name)s, namespace: %(ns)s}
spec:
  serviceName: %(name)s
  replicas: 1
  selector: {matchLabels: {app: %(name)s}}
  template:
    metadata: {labels: {app: %(name)s}}
    spec:
      containers: [{name: db, image: postgres:16}]
      volumes: [{name: data, emptyDir: {}}]
"""


def test_explanations_of_sets_alike_share_one_template(tmp_path: Path) -> None:
    """Two StatefulSets that differ only by name and namespace (names of one length: the
    timelines pad pod names to a column): each explanation is built once its set is checked
    (the builder and the context it holds are freed then) and the two sets' explanations are
    one template with each set's names."""
    (tmp_path / "a.yaml").write_text(TWINS % {"name": "ledger", "ns": "prod"})
    (tmp_path / "b.yaml").write_text(TWINS % {"name": "orders", "ns": "shop"})
    report = check([str(tmp_path)], collect_rules(plugin_manager()), Settings())
    by_set: dict[str, dict[str, object]] = {}
    for f in report.findings:
        by_set.setdefault(f.obj.name, {})[f.rule] = f.__dict__["_explanation"]
    assert set(by_set) == {"ledger", "orders"}
    shared = 0
    for rule, kept in by_set["ledger"].items():
        other = by_set["orders"][rule]
        assert isinstance(kept, NamedText) and isinstance(other, NamedText), rule
        assert kept.template is other.template, rule
        assert kept().replace("ledger", "orders").replace("prod", "shop") == other(), rule
        if "ledger" in kept():
            assert (kept.names[0], other.names[0]) == ("ledger", "orders")
            shared += 1
    assert shared >= 3


def test_a_worker_builds_the_explanations_of_each_statefulset_once_it_is_checked() -> None:
    # a worker's findings go back pickled: built there, before the next set is checked
    from ssrisk.engine import _evaluate_range, load_all
    from ssrisk.inventory import Inventory

    settings = Settings()
    inventory = Inventory(o for lf in load_all([str(RISKY)], settings)[0] for o in lf.objects)
    rules = collect_rules(plugin_manager())
    findings = _evaluate_range(inventory, rules, settings, inventory.statefulsets)[0]
    kept = [f.__dict__["_explanation"] for f in findings]
    assert findings and all(isinstance(k, (str, NamedText)) for k in kept)
    assert sum(isinstance(k, NamedText) for k in kept) >= 8
    copies = pickle.loads(pickle.dumps(findings))
    assert [f.explanation for f in copies] == [f.explanation for f in findings]
    # the templates of one batch arrive once, and are the ones this process keeps
    templates = {
        id(c.__dict__["_explanation"].template)
        for c in copies
        if c.__dict__["_explanation"] and isinstance(c.__dict__["_explanation"], NamedText)
    }
    assert len(templates) == len({k.template for k in kept if isinstance(k, NamedText)})


def test_a_finding_sent_to_another_process_carries_its_explanation() -> None:
    rules = collect_rules(plugin_manager())
    findings = check([str(RISKY)], rules, Settings()).findings
    for f in findings:
        copy = pickle.loads(pickle.dumps(f))
        assert isinstance(copy.__dict__["_explanation"], (str, NamedText))
        assert copy.explanation == f.explanation and copy.explanation
        assert copy.message == f.message and copy.position == f.position


def test_folded_findings_keep_an_explanation_only_for_an_output_that_prints_them() -> None:
    rules = collect_rules(plugin_manager())
    both = check([str(RISKY)], rules, Settings())
    assert both.folded and all(f.explanation for f in both.folded)
    reported = check([str(RISKY)], rules, Settings(folded_explanations=False))
    assert [f.rule for f in reported.folded] == [f.rule for f in both.folded]
    assert all(f.explanation == "" for f in reported.folded)
    assert [f.explanation for f in reported.findings] == [f.explanation for f in both.findings]


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("web-0 of web in prod: web-0 stays", ("web", "prod")),
        ("ns-0-db in ns-0", ("ns-0-db", "ns-0")),  # the namespace inside the name
        ("db in db", ("db", "db")),  # name and namespace alike
        ("aaaa", ("aa", "a")),  # overlapping occurrences
        ("no names here", ("web", "")),  # no namespace (cluster-scoped or unset)
        ("a control \x00 character", ("control", "a")),  # kept whole
        ("web", ("w\x01", "x")),  # a name with a mark: kept whole
        ("", ("web", "prod")),
    ],
)
def test_a_named_text_reads_back_exactly(text: str, names: tuple[str, str]) -> None:
    kept = named_text(text, names)
    assert (kept if isinstance(kept, str) else kept()) == text


def test_named_texts_read_back_exactly_whatever_the_names() -> None:
    import random

    rng = random.Random(7)
    alphabet = "ab-0\n"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        names = tuple(
            "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 4))) for _ in range(2)
        )
        kept = named_text(text, names)
        assert (kept if isinstance(kept, str) else kept()) == text, (text, names)


def test_without_an_output_that_prints_them_explanations_are_dropped(builds: list[str]) -> None:
    rules = collect_rules(plugin_manager())
    report = check([str(RISKY)], rules, Settings(explanations=False))
    assert report.findings and all(f.explanation == "" for f in report.findings)
    assert builds == []


def test_writing_the_explanations_keeps_neither_models_nor_result_dicts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # JSON builds every explanation after its set was checked: the model it reads again is
    # parsed again but not kept on the object (10,000 documents: 14 MB more peak RSS), and the
    # timeline is read from the result's events, not from its JSON dict (kept on the result)
    from ssrisk.embedded_sim.result import ScenarioResult

    from ssrisk.engine import _evaluate_range, load_all
    from ssrisk.inventory import Inventory
    from ssrisk.model import FORGOTTEN

    as_dict: list[str] = []
    real = ScenarioResult.to_dict

    def counting(self: ScenarioResult) -> dict[str, object]:
        as_dict.append(self.scenario)
        return real(self)

    monkeypatch.setattr(ScenarioResult, "to_dict", counting)
    settings = Settings()
    inventory = Inventory(o for lf in load_all([str(RISKY)], settings)[0] for o in lf.objects)
    rules = collect_rules(plugin_manager())
    findings = _evaluate_range(inventory, rules, settings, inventory.statefulsets)[0]
    texts = [f.explanation for f in findings]
    assert sum("Simulated timeline" in t for t in texts) >= 8
    assert as_dict == []
    assert all(sts.__dict__.get("_template") is FORGOTTEN for sts in inventory.statefulsets)
