"""Property-based tests (hypothesis): StatefulSet manifests from the whole field space.

For every generated manifest (odd but valid combinations included):

* ``ssrisk check --format json`` on it, written as a file, raises nothing, reports no input
  error and no internal error, and its report validates against ``report.schema.json``;
* the simulator, over every scenario, terminates within its horizon and keeps its invariants:
  a pod is never Ready on a node that is down, two pods never share a name, recovery never
  precedes the fault, times never go backwards;
* random edits of a manifest's text give input errors or findings, never an exception.

The default run tries a few derandomized examples; ``scripts/fuzz.py`` runs the same
properties for minutes with fresh random data.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
import yaml
from conftest import ROOT, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssrisk.loading import load_text
from ssrisk.validation import validate_objects

embedded_sim = pytest.importorskip("ssrisk.embedded_sim")
simulate = getattr(embedded_sim, "simulate", None)
if simulate is None:  # pragma: no cover - before the simulator exports simulate()
    pytest.skip("the simulator does not export simulate() yet", allow_module_level=True)
SCENARIOS: tuple[str, ...] = tuple(embedded_sim.SCENARIOS)

#: Simulated seconds; every event must fall inside it.
HORIZON_S = 86400.0
#: Wall-clock seconds one scenario may take (it is a few milliseconds normally).
SCENARIO_BUDGET_S = 10.0
DEFAULT_RUN = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,  # the default run is the same every time; scripts/fuzz.py explores
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
KUBE_VERSIONS = [f"1.{m}" for m in range(25, 38)]

# --- strategies: the field space of a StatefulSet and the objects around it ------------------

LABEL_VALUES = st.sampled_from(["db", "web", "kafka", "a", "x-1"])
ZONE = "topology.kubernetes.io/zone"
HOST = "kubernetes.io/hostname"
maybe = st.booleans()


def _int_or_percent(low: int, high: int) -> st.SearchStrategy[Any]:
    return st.one_of(st.integers(low, high), st.integers(low, 100).map(lambda p: f"{p}%"))


@st.composite
def pod_specs(draw: st.DrawFn, labels: Mapping[str, str]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "main", "image": draw(st.sampled_from(["db:1", "app:2"]))}
    if draw(maybe):
        container["readinessProbe"] = {
            "tcpSocket": {"port": 5432},
            "periodSeconds": draw(st.integers(1, 30)),
            "failureThreshold": draw(st.integers(1, 10)),
        }
    if draw(maybe):
        container["lifecycle"] = {
            "preStop": {"exec": {"command": ["sleep", str(draw(st.integers(0, 600)))]}}
        }
    if draw(maybe):
        container["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    spec: dict[str, Any] = {"containers": [container]}
    if draw(maybe):
        spec["terminationGracePeriodSeconds"] = draw(
            st.one_of(st.integers(0, 7200), st.integers(-5, -1))  # negative: treated as 1
        )
    if draw(maybe):
        terms = []
        for key in draw(st.lists(st.sampled_from([HOST, ZONE]), max_size=2, unique=True)):
            terms.append({"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": key})
        kind = draw(st.sampled_from(["required", "preferred"]))
        if kind == "required" and terms:
            spec["affinity"] = {
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}
            }
        elif terms:
            weighted = [{"weight": draw(st.integers(1, 100)), "podAffinityTerm": t} for t in terms]
            spec["affinity"] = {
                "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": weighted}
            }
    if draw(maybe):
        spec["topologySpreadConstraints"] = [
            {
                "maxSkew": draw(st.integers(1, 3)),
                "topologyKey": draw(st.sampled_from([HOST, ZONE])),
                "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
                "labelSelector": {"matchLabels": dict(labels)},
            }
        ]
    if draw(maybe):
        spec["tolerations"] = [
            {
                "key": draw(
                    st.sampled_from(
                        ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"]
                    )
                ),
                "operator": "Exists",
                "effect": "NoExecute",
                **({"tolerationSeconds": draw(st.integers(0, 3600))} if draw(maybe) else {}),
            }
        ]
    if draw(maybe):
        spec["nodeSelector"] = {ZONE: draw(st.sampled_from(["zone-a", "zone-b", "zone-c"]))}
    if draw(maybe):
        spec["priorityClassName"] = draw(st.sampled_from(["system-node-critical", "high"]))
    return spec


@st.composite
def statefulsets(draw: st.DrawFn) -> dict[str, Any]:
    name = draw(st.sampled_from(["db", "web", "kafka", "zk", "a"]))
    labels = {"app": draw(LABEL_VALUES)}
    spec: dict[str, Any] = {
        "selector": {"matchLabels": dict(labels)},
        "template": {"metadata": {"labels": dict(labels)}, "spec": draw(pod_specs(labels))},
    }
    if draw(maybe):
        spec["serviceName"] = name
    if draw(st.integers(0, 9)):  # mostly set; unset means 1
        spec["replicas"] = draw(st.integers(0, 7))
    if draw(maybe):
        spec["podManagementPolicy"] = draw(st.sampled_from(["OrderedReady", "Parallel"]))
    if draw(maybe):
        spec["minReadySeconds"] = draw(st.integers(0, 600))
    if draw(maybe):
        spec["ordinals"] = {"start": draw(st.integers(0, 1000))}
    if draw(maybe):
        strategy: dict[str, Any] = {"type": draw(st.sampled_from(["RollingUpdate", "OnDelete"]))}
        if strategy["type"] == "RollingUpdate" and draw(maybe):
            rolling: dict[str, Any] = {}
            if draw(maybe):
                rolling["partition"] = draw(st.integers(0, 10))  # may exceed replicas
            if draw(maybe):
                rolling["maxUnavailable"] = draw(_int_or_percent(1, 10))
            strategy["rollingUpdate"] = rolling
        spec["updateStrategy"] = strategy
    if draw(maybe):
        spec["persistentVolumeClaimRetentionPolicy"] = {
            "whenDeleted": draw(st.sampled_from(["Retain", "Delete"])),
            "whenScaled": draw(st.sampled_from(["Retain", "Delete"])),
        }
    if draw(maybe):
        claim: dict[str, Any] = {
            "accessModes": [
                draw(st.sampled_from(["ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod"]))
            ],
            "resources": {"requests": {"storage": "1Gi"}},
        }
        if draw(maybe):
            claim["storageClassName"] = draw(st.sampled_from(["zonal", "regional", "local"]))
        spec["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": claim}]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "fuzz"},
        "spec": spec,
    }


@st.composite
def surroundings(draw: st.DrawFn, sts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """PDBs, StorageClasses and a headless Service that may go with ``sts``."""
    labels = sts["spec"]["selector"]["matchLabels"]
    out: list[dict[str, Any]] = []
    if draw(maybe):
        pdb_spec: dict[str, Any] = {"selector": {"matchLabels": dict(labels)}}
        field = draw(st.sampled_from(["minAvailable", "maxUnavailable"]))
        pdb_spec[field] = draw(_int_or_percent(0, 8))
        if draw(maybe):
            pdb_spec["unhealthyPodEvictionPolicy"] = draw(
                st.sampled_from(["IfHealthyBudget", "AlwaysAllow"])
            )
        out.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "pdb", "namespace": "fuzz"},
                "spec": pdb_spec,
            }
        )
    for sc in draw(st.lists(st.sampled_from(["zonal", "regional", "local"]), unique=True)):
        storage: dict[str, Any] = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": sc},
            "provisioner": {
                "zonal": "ebs.csi.aws.com",
                "regional": "pd.csi.storage.gke.io",
                "local": "kubernetes.io/no-provisioner",
            }[sc],
            "volumeBindingMode": draw(st.sampled_from(["WaitForFirstConsumer", "Immediate"])),
        }
        if sc == "regional":
            storage["parameters"] = {"replication-type": "regional-pd"}
        out.append(storage)
    if draw(maybe):
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": sts["metadata"]["name"], "namespace": "fuzz"},
                "spec": {"clusterIP": "None", "selector": dict(labels)},
            }
        )
    return out


profiles = st.builds(
    embedded_sim.ClusterProfile,
    node_returns_after_s=st.one_of(st.none(), st.floats(30, 3000)),
    node_returns_rebooted=st.booleans(),
    default_unreachable_toleration_s=st.sampled_from([0.0, 30.0, 300.0]),
    out_of_service_after_s=st.floats(60, 3600),
)


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    sts = draw(statefulsets())
    return sts, draw(surroundings(sts)), draw(st.sampled_from(KUBE_VERSIONS))


# --- the properties (also run by scripts/fuzz.py) ---------------------------------------------

_REPORT_VALIDATOR = jsonschema_rs.validator_for(
    json.loads((ROOT / "ssrisk" / "schemas" / "report.schema.json").read_text())
)
_READY_ON = re.compile(r"Ready on (\S+)")
_DISRUPTIONS = ("fault", "template-changed", "drain-started", "node-cordoned", "operator-action")


def check_manifest(sts: dict[str, Any], others: list[dict[str, Any]], kube_version: str) -> None:
    """``ssrisk check`` on the manifest written as a YAML file: no input or internal error,
    a report that validates against its schema."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "manifest.yaml"
        path.write_text(yaml.safe_dump_all([sts, *others], sort_keys=False))
        run = run_cli("check", "--format", "json", "--kube-version", kube_version, str(path))
    assert run.code in (0, 1), (run.code, run.err, run.out[-2000:])
    report = run.json()
    assert report["errors"] == [], report["errors"]
    problems = [e.message for e in _REPORT_VALIDATOR.iter_errors(report)]
    assert problems == [], problems
    assert report["summary"]["statefulsets"] == 1
    for finding in report["findings"]:
        assert "internal error" not in finding["message"]
        assert finding["line"] >= 1 and finding["column"] >= 1


def check_invariants(result: Any, horizon_s: float = HORIZON_S) -> None:
    """The simulator's own invariants on one :class:`ScenarioResult`."""
    d = result.to_dict()
    timeline = d["timeline"]
    times = [e["t_s"] for e in timeline]
    assert times == sorted(times), "time went backwards"
    assert all(0 <= t <= horizon_s for t in times), "an event outside [0, horizon]"
    # recovery: consistent, and never before the disruption started
    ttr = d["time_to_recovery_s"]
    assert d["recovered"] == (ttr is not None), (d["recovered"], ttr)
    start = min((e["t_s"] for e in timeline if e["kind"] in _DISRUPTIONS), default=0)
    if ttr is not None:
        assert start <= ttr <= horizon_s, (start, ttr)
    for name, pod in d["pods"].items():
        if pod["unavailable_s"] is not None:
            assert 0 <= pod["unavailable_s"] <= horizon_s, (name, pod)
    # one live pod per name (the StatefulSet's at-most-one guarantee)
    live = set(d["pods"])
    first: dict[str, str] = {}
    for e in timeline:
        if e["pod"] and e["kind"] in ("pod-created", "pod-deleted", "pod-force-deleted"):
            first.setdefault(e["pod"], e["kind"])
    live |= {p for p, kind in first.items() if kind != "pod-created"}
    live -= {p for p, kind in first.items() if kind == "pod-created"}
    for e in timeline:
        if e["kind"] == "pod-created":
            assert e["pod"] not in live, f"two pods named {e['pod']} at {e['t_s']} s"
            live.add(e["pod"])
        elif e["kind"] in ("pod-deleted", "pod-force-deleted"):
            live.discard(e["pod"])
    # no pod becomes Ready on a node that is down
    down: dict[str, float] = {}
    for e in timeline:
        for node in d.get("failed_nodes", []):
            if node in e["event"] and e["kind"] == "fault" and node not in down:
                down[node] = e["t_s"]
        if e["kind"] in ("node-returned", "node-ready"):
            for node in list(down):
                if node in e["event"]:
                    del down[node]
        if e["kind"] == "pod-ready":
            m = _READY_ON.search(e["event"])
            if m and m.group(1) in down:
                raise AssertionError(
                    f"{e['pod']} Ready on {m.group(1)}, down since {down[m.group(1)]} s"
                )


def check_simulation(
    sts: dict[str, Any], others: list[dict[str, Any]], kube_version: str, profile: Any
) -> None:
    """Every scenario terminates within its budget and keeps the invariants."""
    pdbs = [o for o in others if o["kind"] == "PodDisruptionBudget"]
    classes = [o for o in others if o["kind"] == "StorageClass"]
    for scenario in SCENARIOS:
        started = time.monotonic()
        result = simulate(
            sts,
            scenario,
            kube_version=kube_version,
            pdbs=pdbs,
            storage_classes=classes,
            profile=profile,
            horizon_s=HORIZON_S,
        )
        took = time.monotonic() - started
        assert took < SCENARIO_BUDGET_S, f"{scenario} took {took:.1f} s"
        assert result.scenario == scenario
        check_invariants(result)


_EDIT = st.tuples(st.integers(0, 10_000), st.integers(0, 8), st.text(max_size=6))


def check_text_edits(
    sts: dict[str, Any], edits: list[tuple[int, int, str]], kube_version: str
) -> None:
    """Load and validate a randomly edited manifest: errors are values, never exceptions."""
    text = yaml.safe_dump(sts, sort_keys=False)
    for at, cut, insert in edits:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + cut :]
    lf = load_text(text, "edited.yaml")
    kept, errors, warnings = validate_objects(lf.objects, kube_version)
    for problem in [*lf.errors, *errors]:
        assert problem.path == "edited.yaml" and problem.message
        assert problem.line is None or problem.line >= 1
    assert len(kept) <= len(lf.objects)
    del warnings


# --- the default run ---------------------------------------------------------------------------


@DEFAULT_RUN
@given(cases())
def test_check_never_fails_on_valid_manifests(case: tuple[Any, Any, str]) -> None:
    check_manifest(*case)


@DEFAULT_RUN
@given(cases(), profiles)
def test_simulator_terminates_and_keeps_its_invariants(
    case: tuple[Any, Any, str], profile: Any
) -> None:
    check_simulation(*case, profile)


@DEFAULT_RUN
@given(statefulsets(), st.lists(_EDIT, min_size=1, max_size=5), st.sampled_from(KUBE_VERSIONS))
def test_edited_text_gives_errors_not_exceptions(
    sts: dict[str, Any], edits: list[tuple[int, int, str]], kube_version: str
) -> None:
    check_text_edits(sts, edits, kube_version)


def test_the_invariant_checks_can_fail() -> None:
    """A result that breaks the invariants is caught (so a passing run means something)."""
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "db:1"}]},
            },
        },
    }
    result = simulate(sts, "node-deleted")
    check_invariants(result)
    ready = result.first("pod-ready")
    assert ready is not None
    broken = dataclasses.replace(result, timeline=[*result.timeline, ready])
    with pytest.raises(AssertionError, match="time went backwards"):
        check_invariants(broken)
    created = result.first("pod-created")
    assert created is not None
    twice = dataclasses.replace(
        result, timeline=sorted([*result.timeline, created], key=lambda e: e.t_s)
    )
    with pytest.raises(AssertionError, match="two pods named"):
        check_invariants(twice)
