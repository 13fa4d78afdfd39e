"""Inputs that used to cost super-linear time: each must cost at most 25 times as much when
it is 10 times larger (measured in this process, best of five, so start-up and noise do
not count; a quadratic cost gives about 100, the costs these inputs had before), and stay
fast.

The inputs are generated (they are large by design): 40,000 duplicate keys in one mapping
(took 60 s), 200,000 tiny documents in one file (66 s), template lines of 40 ``{{ "" }}``
directives (the template locator's regular expression never finished), N StatefulSets
with N PodDisruptionBudgets that all select the same pods (quadratic), and a ``kind: List``
whose N items merge one anchored spec of N values (each item expanded it again).
"""

from __future__ import annotations

import gc
import io
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import DATA

from ssrisk.engine import Report, check
from ssrisk.loading import load_text
from ssrisk.plugins import collect_rules, plugin_manager
from ssrisk.renderers.locate import TemplateLocator
from ssrisk.settings import Settings
from ssrisk.validation import validate_objects

GOOD = (DATA / "robust" / "good.yaml").read_text()
#: Allowed cost of a 10x larger input: linear, plus a margin for what a larger input costs
#: the processor's caches and for a machine whose other core is busy (linear code has given
#: 16-19x on the 2-core CI machine, failing 15 now and then), plus 20 ms of noise; a
#: quadratic cost gives about 100.
RATIO = 25
SLACK_S = 0.02


def _cpu_seconds(run: Callable[[], object], times: int = 1) -> float:
    """CPU time of this process per run, over ``times`` runs in a row, with the cyclic
    garbage collector paused as ssrisk pauses it while loading (``engine.load_all``): its
    passes over everything loaded so far would otherwise make any large input look
    super-linear. CPU time, not wall-clock time: other processes on the machine do not
    count."""
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        for _ in range(times):
            run()
        return (time.process_time() - started) / times
    finally:
        gc.enable()


def _scales_linearly(
    make: Callable[[int], Callable[[], object]], small: int, ratio: float = RATIO
) -> None:
    """The input of size ``10 * small`` costs at most ``ratio`` (:data:`RATIO`) times the
    input of size ``small``: best of five, measured in turns (each small measurement is the
    mean of ten runs, so both sides do the same amount of work and a linear cost gives about
    10)."""
    small_run, large_run = make(small), make(small * 10)
    small_run()  # warm caches and imports
    t_small = t_large = float("inf")
    for _ in range(5):
        t_small = min(t_small, _cpu_seconds(small_run, times=10))
        t_large = min(t_large, _cpu_seconds(large_run))
    assert t_large <= ratio * t_small + SLACK_S, (
        f"10x the input took {t_large / t_small:.1f}x the time ({t_small:.3f} s -> {t_large:.3f} s)"
    )


def test_duplicate_keys() -> None:
    def make(n: int) -> Callable[[], object]:
        text = (
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n  annotations:\n"
            + "    key: value\n" * n
            + "spec:\n  replicas: 1\n"
        )

        def run() -> object:
            lf = load_text(text, "dup.yaml")
            assert len(lf.notices) == n - 1  # every duplicate is reported
            return lf

        return run

    _scales_linearly(make, 4_000)


def test_many_tiny_documents() -> None:
    def make(n: int) -> Callable[[], object]:
        text = "---\na: 1\n" * n
        return lambda: load_text(text, "docs.yaml")

    _scales_linearly(make, 10_000)


def test_template_lines_of_many_directives() -> None:
    line = '{{ "" }}' * 40
    started = time.perf_counter()
    locator = TemplateLocator(
        f"kind: StatefulSet\nspec:\n  {line} x\n  replicas: 1\n", "t.yaml", "x"
    )
    assert time.perf_counter() - started < 1

    def make(n: int) -> Callable[[], object]:
        body = "".join(f"  {line}\n  {line} x: y\n" for _ in range(n))
        text = f"kind: StatefulSet\nspec:\n{body}  replicas: 1\n"

        def run() -> object:
            found = TemplateLocator(text, "t.yaml", "StatefulSet").locate(
                None, ("spec", "replicas")
            )  # type: ignore[arg-type]
            assert found is not None and found.line == 2 * n + 3
            return found

        return run

    del locator
    _scales_linearly(make, 300)


def test_statefulsets_times_overlapping_pdbs(tmp_path: Path) -> None:
    rules = collect_rules(plugin_manager())
    settings = Settings(jobs=1)

    def make(n: int) -> Callable[[], object]:
        docs = []
        for i in range(n):
            docs.append(GOOD.replace("name: db\n", f"name: db{i}\n", 1))
            docs.append(
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
                f"metadata:\n  name: p{i}\nspec:\n  maxUnavailable: 1\n"
                "  selector:\n    matchLabels:\n      app: db\n"
            )
        path = tmp_path / f"n{n}.yaml"
        path.write_text("---\n".join(docs))

        def run() -> object:
            report = check([str(path)], rules, settings)
            assert report.statefulsets == n and not report.errors
            return report

        return run

    _scales_linearly(make, 20)


def test_list_items_merging_one_aliased_spec() -> None:
    """N items of a ``kind: List`` merge (``<<: *base``) a base whose env list has N entries:
    expanding the base again per item cost N * N. The values reached again count against
    one alias limit per file (lowered here from 400,000 so that the small input already
    reaches it and the test stays fast)."""

    def make(n: int) -> Callable[[], object]:
        env = ", ".join(f"{{name: E{i}, value: v}}" for i in range(n))
        text = (
            "apiVersion: v1\nkind: List\nitems:\n- &base\n  apiVersion: apps/v1\n"
            "  kind: StatefulSet\n  metadata: {name: s0}\n  spec:\n    replicas: 3\n"
            "    serviceName: s\n    selector: {matchLabels: {a: b}}\n    template:\n"
            "      metadata: {labels: {a: b}}\n      spec:\n"
            f"        containers: [{{name: c, image: i, env: [{env}]}}]\n"
            + "".join(f"- {{<<: *base, metadata: {{name: s{i}}}}}\n" for i in range(1, n))
        )

        def run() -> object:
            lf = load_text(text, "list.yaml")
            kept, errors, _ = validate_objects(lf.objects, "1.37", max_alias_values=3_000)
            assert kept and errors and len(kept) + len(errors) == n
            return kept

        return run

    _scales_linearly(make, 60)


def test_junit_report_of_many_statefulsets(tmp_path: Path) -> None:
    """JUnit has a case per StatefulSet: writing them costs linear time (junitparser recounted
    the whole suite for each case added: 1,000 sets did not finish in 600 s)."""
    from ssrisk.reporters.junit import junit_xml

    rules = collect_rules(plugin_manager())
    settings = Settings(jobs=1)

    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"j{n}.yaml"
        path.write_text(
            "---\n".join(GOOD.replace("name: db\n", f"name: db{i}\n", 1) for i in range(n))
        )
        report = check([str(path)], rules, settings)
        assert report.statefulsets == n

        def run() -> object:
            xml = junit_xml(report)
            assert xml.count("<testcase ") == n
            return xml

        return run

    _scales_linearly(make, 10)


def _report_of_many_sets(tmp_path: Path, n: int) -> Report:
    path = tmp_path / f"s{n}.yaml"
    path.write_text("---\n".join(GOOD.replace("name: db\n", f"name: db{i}\n", 1) for i in range(n)))
    report = check([str(path)], collect_rules(plugin_manager()), Settings(jobs=1))
    assert report.statefulsets == n and report.findings
    return report


class _Discard(io.TextIOBase):
    """A text stream that counts what is written to it and keeps none of it."""

    def __init__(self) -> None:
        self.chars = 0

    def write(self, text: str) -> int:
        self.chars += len(text)
        return len(text)


@pytest.mark.parametrize("fmt", ["sarif", "json"])
def test_sarif_and_json_reports_of_many_statefulsets(fmt: str, tmp_path: Path) -> None:
    """Writing the SARIF log or the JSON report costs linear time in the findings (without
    rule metadata: the rules' pages, parsed once per log, would be most of a small log)."""
    from ssrisk.plugins import collect_reporters

    reporter = collect_reporters(plugin_manager())[fmt]()

    def make(n: int) -> Callable[[], object]:
        report = _report_of_many_sets(tmp_path, n)

        def run() -> object:
            sink = _Discard()
            reporter.write(report, sink)
            assert sink.chars > 1000 * n
            return sink

        return run

    _scales_linearly(make, 4)


_PV = (
    "apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: pv{i}}}\n"
    "spec: {{storageClassName: {cls}, capacity: {{storage: 1Gi}}, accessModes: [ReadWriteOnce], "
    "local: {{path: /x}}, nodeAffinity: {{required: {{nodeSelectorTerms: [{{matchExpressions: "
    "[{{key: topology.kubernetes.io/zone, operator: In, values: [z{i}]}}]}}]}}}}}}\n"
)
_CLASS = (
    "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {{name: c{i}, annotations: "
    "{{storageclass.kubernetes.io/is-default-class: 'true'}}}}\nprovisioner: x\n"
)


@pytest.mark.parametrize("kind", ["PersistentVolume", "StorageClass"])
def test_statefulsets_times_storage_objects(kind: str, tmp_path: Path) -> None:
    """N PersistentVolumes (or default StorageClasses) and N / 10 StatefulSets with claims:
    every set's claims looked through every volume and class (quadratic: 10,000 volumes,
    3.5 MB, took 75 s); they are indexed once per inventory (StorageIndex)."""
    rules = collect_rules(plugin_manager())

    def make(n: int) -> Callable[[], object]:
        docs = [
            (_PV if kind == "PersistentVolume" else _CLASS).format(i=i, cls="fast")
            for i in range(n)
        ]
        sts = GOOD.replace("name: db\n", "name: db{i}\n", 1) + (
            "  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec: {accessModes: "
            "[ReadWriteOnce], storageClassName: fast, resources: {requests: {storage: 1Gi}}}\n"
        )
        docs += [sts.replace("{i}", str(i)) for i in range(n // 10)]
        path = tmp_path / f"{kind}{n}.yaml"
        path.write_text("---\n".join(docs))
        return lambda: check([str(path)], rules, Settings(jobs=1))

    report = make(20)()
    assert isinstance(report, Report) and report.statefulsets == 2 and not report.errors
    _scales_linearly(make, 100)


def test_rejected_statefulsets_with_ignore_comments(tmp_path: Path) -> None:
    """N StatefulSets the API server would reject, each with an ignore comment: where each is
    written was found against every object, and each comment against every such place (20,000
    took 21 s, 30 times 2,000)."""
    rules = collect_rules(plugin_manager())
    settings = Settings(jobs=1)

    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"r{n}.yaml"
        path.write_text(
            "---\n".join(
                f"apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: s{i}\nspec:\n"
                '  replicas: "three"  # ssrisk: ignore[single-replica] r\n'
                for i in range(n)
            )
        )

        def run() -> object:
            report = check([str(path)], rules, settings)
            assert len(report.errors) == n
            return report

        return run

    _scales_linearly(make, 150)


def test_many_ignore_comments_aimed_at_the_lines_of_many_findings(tmp_path: Path) -> None:
    """N comments on lines of their own above one line holding M StatefulSets (a JSON List):
    every finding on that line looked at every comment aimed at it (M*N)."""
    import json

    rules = collect_rules(plugin_manager())
    settings = Settings(jobs=1)

    def make(n: int) -> Callable[[], object]:
        items = [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": f"s{i}"},
                "spec": {
                    "replicas": 1,
                    "serviceName": "x",
                    "selector": {"matchLabels": {"a": f"s{i}"}},
                    "template": {
                        "metadata": {"labels": {"a": f"s{i}"}},
                        "spec": {"containers": [{"name": "c", "image": "i"}]},
                    },
                },
            }
            for i in range(n // 10)
        ]
        path = tmp_path / f"c{n}.yaml"
        path.write_text(
            "".join(f"# ssrisk: ignore[zz-{i}] r\n" for i in range(n))
            + json.dumps({"apiVersion": "v1", "kind": "List", "items": items})
            + "\n"
        )

        def run() -> object:
            report = check([str(path)], rules, settings)
            assert report.statefulsets == n // 10
            return report

        return run

    _scales_linearly(make, 600)
