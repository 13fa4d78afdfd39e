"""The typed pod template (embedded_sim/podtemplate.py): what the simulator and the rules both
read from one parse."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from ssrisk.embedded_sim.podtemplate import parse_template
from ssrisk.embedded_sim.workload import parse_statefulset

_STS = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 3
  selector: {matchLabels: {app: db}}
  template:
    metadata:
      labels: {app: db}
      annotations: {kubectl.kubernetes.io/default-container: db}
    spec:
      initContainers:
      - {name: init, image: busybox}
      - {name: proxy, image: envoy, restartPolicy: Always}
      containers:
      - name: db
        image: postgres:16
        command: [postgres]
        env: [{name: A, value: x}, {name: PORT, value: 5432}, {name: S, valueFrom: {}}]
        ports: [{containerPort: 5432, hostPort: 5432}]
        volumeMounts:
        - {name: data, mountPath: /var/lib/pg}
        - {name: cfg, mountPath: /c, readOnly: true}
        readinessProbe: {exec: {command: [pg_isready]}, periodSeconds: 5}
        livenessProbe: {httpGet: {port: 8080}, failureThreshold: 0}
        lifecycle: {preStop: {exec: {command: [sh, -c, "{stop}"]}}}
      volumes:
      - {name: cfg, configMap: {name: c}}
      - {name: logs, hostPath: {path: /var/log/db}}
      - {name: old, persistentVolumeClaim: {claimName: legacy}}
  volumeClaimTemplates:
  - metadata:
      name: data
      annotations: {volume.beta.kubernetes.io/storage-class: fast}
    spec: {accessModes: [ReadWriteOnce], storageClassName: slow}
  - metadata: {name: logs}
    spec: {accessModes: [ReadWriteMany, 7]}
"""


def _sts(stop: str = "sleep 5") -> dict[str, Any]:
    return yaml.safe_load(_STS.replace("{stop}", stop))


def test_template_fields_paths_and_defaults() -> None:
    t = parse_template(_sts())
    assert [(c.field, c.index, c.name, c.sidecar) for c in t.containers] == [
        ("initContainers", 0, "init", False),
        ("initContainers", 1, "proxy", True),
        ("containers", 0, "db", False),
    ]
    assert [c.name for c in t.running] == ["proxy", "db"]
    db = t.main[0]
    assert db.path == ("spec", "template", "spec", "containers", 0)
    assert [(e.name, e.value) for e in db.env] == [("A", "x"), ("PORT", "5432"), ("S", None)]
    assert [(p.container_port, p.host_port) for p in db.ports] == [(5432, 5432)]
    assert [(m.name, m.read_only) for m in db.mounts] == [("data", False), ("cfg", True)]
    assert db.readiness is not None and db.readiness.handler is not None
    assert (db.readiness.handler.kind, db.readiness.handler.command_line) == ("exec", "pg_isready")
    assert db.readiness.gives_up_after_s == 3 * 5  # failureThreshold defaults to 3
    assert db.liveness is not None and db.liveness.handler is not None
    assert (db.liveness.handler.kind, db.liveness.handler.http_path) == ("httpGet", "/")
    assert db.liveness.gives_up_after_s == 3 * 10  # 0 reads as the default
    assert [(v.name, v.host_path, v.claim_name) for v in t.volumes] == [
        ("cfg", None, None),
        ("logs", "/var/log/db", None),
        ("old", None, "legacy"),
    ]
    data, logs = t.claim_templates
    assert (data.name, data.class_name, data.class_from_annotation) == ("data", "fast", True)
    assert (logs.name, logs.class_name, logs.access_modes) == ("logs", None, ("ReadWriteMany",))
    assert t.annotations["kubectl.kubernetes.io/default-container"] == "db"


@pytest.mark.parametrize(
    ("stop", "want"),
    [
        ("sleep 5", 5.0),
        # the hook runs to its end: every sleep counts (the simulator took the first: 5)
        ("sleep 5 && pg_ctl stop; sleep 10", 15.0),
        ("sleep 2m", 120.0),  # coreutils suffixes (the simulator read 2)
        ("pg_ctl stop", None),  # no length known
        ("sleep infinity", float("inf")),  # never ends (it was read as no length)
    ],
)
def test_simulator_and_rules_read_one_prestop_length(stop: str, want: float | None) -> None:
    sts = _sts(stop)
    hook = parse_template(sts).main[0].pre_stop
    assert hook is not None and hook.sleeps_s == want
    assert parse_statefulset(sts).prestop_s == want


def test_wrong_types_read_as_absent() -> None:
    sts = {"spec": {"template": {"spec": {"containers": ["x", {"env": "y", "ports": [1]}]}}}}
    t = parse_template(sts)
    assert len(t.containers) == 1 and t.containers[0].env == () and t.containers[0].ports == ()
    assert parse_template({"spec": None}).containers == ()


_ANTI = """
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: kv, namespace: shop}
spec:
  replicas: 3
  selector: {matchLabels: {app: kv}}
  template:
    metadata: {labels: {app: kv}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: kv}}
            topologyKey: kubernetes.io/hostname
            namespaces: [{namespaces}]
      containers: [{name: kv, image: example.org/kv:1}]
"""


@pytest.mark.parametrize(("namespaces", "own"), [("shop", True), ("other", False)])
def test_simulator_and_rules_read_one_affinity_term(namespaces: str, own: bool) -> None:
    """A term listing namespaces counts the set's own pods only when its namespace is listed
    (pkg/scheduler/framework/types.go#newAffinityTerm): the simulator counted them whatever
    the term listed, while replicas-share-failure-domain did not."""
    from ssrisk.rules._podspec import HOSTNAME_KEY, spread_over

    from ssrisk.loading import load_text

    text = _ANTI.replace("{namespaces}", namespaces)
    data = yaml.safe_load(text)
    term = parse_template(data).anti_affinity_required[0]
    assert term.selects_own_pods({"app": "kv"}, "shop") is own
    wl = parse_statefulset(data)
    assert [r.kind for r in wl.hard_rules] == (["anti-affinity"] if own else [])
    assert wl.foreign_affinity_terms == (0 if own else 1)
    (sts,) = load_text(text, "kv.yaml").objects
    assert (spread_over(sts, (HOSTNAME_KEY,), {"app": "kv"}).max_per_domain == 1) is own


@pytest.mark.parametrize(
    ("listed", "worst_node"), [("data", 1), ("monitoring, data", 1), ("default", 3)]
)
def test_a_cached_run_reads_a_terms_namespaces_in_the_sets_own_namespace(
    listed: str, worst_node: int
) -> None:
    """The cached simulation runs a copy named into namespace "default"; a term listing the
    set's own namespace still keeps its pods apart there, and one listing only "default" (not
    the set's) still does not (the simulator read both the other way round)."""
    from ssrisk.embedded_sim import cache_clear, simulate

    text = _ANTI.replace("namespace: shop", "namespace: data").replace("{namespaces}", listed)
    cache_clear()
    result = simulate(yaml.safe_load(text), "node-loss", kube_version="1.34")
    assert result.placement_basis is not None
    assert result.placement_basis.worst_node == worst_node


@pytest.mark.parametrize(
    ("written", "want"),
    [
        (None, 30),  # SetDefaults_PodSpec
        (45, 45),
        (0, 0),
        # negative: 1 s (kubernetes/kubernetes#98866, #115606); the rules read 30, the
        # simulator 0
        (-5, 1),
    ],
)
def test_simulator_and_rules_read_one_grace_period(written: int | None, want: int) -> None:
    sts = _sts()
    if written is not None:
        sts["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = written
    assert parse_template(sts).effective_grace_period_s == want
    assert parse_statefulset(sts).termination_grace_period_s == want


def test_simulator_and_rules_read_one_set_of_host_ports_and_requests() -> None:
    sts = _sts()
    pod = sts["spec"]["template"]["spec"]
    pod["initContainers"][1]["ports"] = [{"containerPort": 9901, "hostPort": 9901}]
    pod["containers"][0]["resources"] = {"limits": {"cpu": "2", "memory": "1Gi"}}
    pod["initContainers"][0]["resources"] = {"requests": {"cpu": "3"}}
    pod["overhead"] = {"cpu": "250m"}
    template, workload = parse_template(sts), parse_statefulset(sts)
    # main containers' ports first, then the sidecars'; each keeps the field that binds it
    assert [(p.port, p.path[-5:]) for p in template.host_ports] == [
        (5432, ("containers", 0, "ports", 0, "hostPort")),
        (9901, ("initContainers", 1, "ports", 0, "hostPort")),
    ]
    assert workload.host_ports == template.host_ports
    # limits default the requests; the init container runs alone: max(2000, 3000) + 250 m
    assert (template.requests.cpu_m, template.requests.memory_b) == (3250.0, 2.0**30)
    assert workload.requests == template.requests
