"""The catalog of stateful systems (rules/systems/): its entries, recognition, user entries."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from ssrisk.embedded_sim.podtemplate import parse_template
from ssrisk.rules._systems import (
    CATALOG_DIR,
    builtin_entries,
    catalog,
    data_dir,
    entry_patterns,
    factor_of,
    pattern_problem,
    system_schema,
)

ENTRIES = sorted(CATALOG_DIR.glob("*.yaml"))
#: Sections whose facts need a source when present.
SECTIONS = ("recognise", "replication", "data", "peers", "probes", "shutdown", "cold_start")


def _container(spec: dict[str, Any]) -> Any:
    pod = {"spec": {"template": {"spec": {"containers": [{"name": "c", **spec}]}}}}
    return parse_template(pod).containers[0]


def test_the_catalog_covers_thirty_systems_of_every_category() -> None:
    entries = builtin_entries()
    assert len(entries) >= 30
    categories = {e["category"] for e in entries.values()}
    wanted = {"database", "queue", "search", "coordination", "time-series", "object-store", "cache"}
    assert wanted <= categories


@pytest.mark.parametrize("path", ENTRIES, ids=lambda p: p.stem)
def test_an_entry_follows_the_schema_and_sources_every_section(path: Path) -> None:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(
        system_schema(), format_checker=jsonschema.FormatChecker()
    )
    assert [e.message for e in validator.iter_errors(raw)] == []
    assert raw["id"] == path.stem
    for section in SECTIONS:
        if section in raw and section != "recognise":
            assert len(raw[section]["source"]) >= 8, section
    rec = raw["recognise"]
    assert rec.get("images") or rec.get("commands") or rec.get("env") or rec.get("args")
    for promoter in raw["replication"].get("promoted_by", ()):
        assert promoter in builtin_entries()


@pytest.mark.parametrize(
    ("spec", "system"),
    [
        ({"image": "bitnami/etcd:3.5.9"}, "etcd"),
        ({"image": "quay.io/coreos/etcd-amd64:v3.4"}, "etcd"),
        # recognised by what runs, under an image of another name
        ({"image": "registry.example/base:1", "command": ["etcd", "--name=x"]}, "etcd"),
        (
            {
                "image": "registry.example/broker:7",
                "env": [{"name": "KAFKA_CFG_PROCESS_ROLES", "value": "controller,broker"}],
            },
            "kafka",
        ),
        # Redis Cluster's bus port, which no other system's server declares (its cluster
        # mode is set in a configuration file ssrisk does not read)
        (
            {
                "image": "redis:5.0-rc",
                "command": ["/conf/fix-ip.sh", "redis-server", "/conf/redis.conf"],
                "ports": [{"containerPort": 6379}, {"containerPort": 16379}],
            },
            "redis-cluster",
        ),
        # a client of the image is not its server
        ({"image": "bitnami/etcd:3.5", "command": ["etcdctl", "endpoint", "health"]}, None),
        ({"image": "busybox", "command": ["sleep", "3600"]}, None),
    ],
)
def test_a_container_is_recognised_by_what_it_runs(spec: dict[str, Any], system: str) -> None:
    found = catalog().match(_container(spec))
    assert (found.id if found is not None else None) == system


def test_the_data_directory_is_read_from_the_env_then_the_command_line() -> None:
    etcd = catalog().get("etcd")
    assert etcd is not None
    by_env = _container({"env": [{"name": "ETCD_DATA_DIR", "value": "/data/etcd"}]})
    by_flag = _container({"command": ["etcd", "--data-dir", "/srv/etcd"]})
    by_eq = _container({"command": ["etcd", "--data-dir=/srv/e2"]})
    assert data_dir(etcd, by_env) is not None and data_dir(etcd, by_env).path == "/data/etcd"
    assert data_dir(etcd, by_flag).path == "/srv/etcd"  # type: ignore[union-attr]
    assert data_dir(etcd, by_eq).path == "/srv/e2"  # type: ignore[union-attr]
    default = data_dir(etcd, _container({}))
    assert default is not None and default.how == "default" and default.candidates


def test_the_replication_factor_is_read_from_env_and_args() -> None:
    kafka = catalog().get("kafka")
    assert kafka is not None
    env = _container({"env": [{"name": "KAFKA_CFG_DEFAULT_REPLICATION_FACTOR", "value": "3"}]})
    assert factor_of(kafka, env) == (3, "env KAFKA_CFG_DEFAULT_REPLICATION_FACTOR")
    args = _container({"args": ["--override", "default.replication.factor=2"]})
    assert factor_of(kafka, args) == (2, "default.replication.factor")
    opts = _container(
        {"env": [{"name": "KAFKA_OPTS", "value": "x=1 default.replication.factor=1"}]}
    )
    assert factor_of(kafka, opts) == (1, "default.replication.factor")
    assert factor_of(kafka, _container({})) == (1, "default")


def test_configuration_entries_add_systems_and_replace_sections() -> None:
    new = {
        "name": "In-house store",
        "category": "database",
        "recognise": {"images": ["inhouse-store"]},
        "replication": {"model": "quorum", "source": "https://example.org/inhouse/raft"},
        "data": {"durable": True, "paths": ["/var/lib/store"], "source": "https://example.org/x"},
    }
    override = {"shutdown": {"grace_s": 900, "source": "our runbook: https://example.org/rb"}}
    cat = catalog(
        (
            ("inhouse", json.dumps(new), "cfg"),
            ("etcd", json.dumps(override), "cfg"),
        )
    )
    inhouse = cat.match(_container({"image": "example.org/inhouse-store:2"}))
    assert inhouse is not None and inhouse.model == "quorum" and inhouse.origin == "cfg"
    etcd = cat.get("etcd")
    assert etcd is not None and etcd.grace_s == 900 and etcd.model == "quorum"
    assert catalog().get("etcd").grace_s != 900  # type: ignore[union-attr]


def test_patterns_of_the_catalog_run_in_linear_time() -> None:
    """Every pattern of the catalog is matched against attacker-written command lines: none
    nests quantifiers or rescans a line from every start (pattern_problem)."""
    found = [
        (system_id, where, pattern, pattern_problem(pattern))
        for system_id, raw in builtin_entries().items()
        for where, pattern in entry_patterns(raw)
        if pattern_problem(pattern)
    ]
    assert found == []


@pytest.mark.parametrize(
    "pattern",
    [
        "(a+)+$",
        "(a|aa)+$",
        "(?:ab|a)*c",
        r"(\w)\1",
        r"\bcli\b[^;]*\bping\b",
        r"x(?![^;]*y)",
        "[",
        # shapes an outside tester found hanging on a 6,000-character argument
        "[x,]*[x,]*[x,]*[x,]*Q",
        "(?:x|,)*(?:x|,)*(?:x|,)*Q",
        r"[\s\S]{0,3000}[\s\S]{0,3000}Q",
        ".*.*Q",
    ],
)
def test_a_pattern_that_can_backtrack_is_refused(pattern: str) -> None:
    assert pattern_problem(pattern) is not None


@pytest.mark.parametrize(
    "pattern", [r"^(?:\S*/)?zkCli", r"\bcockroach\s+start(?:\s|$)", r"x[^;]{0,200}y", "a.*"]
)
def test_a_linear_pattern_is_accepted(pattern: str) -> None:
    assert pattern_problem(pattern) is None


INHOUSE_SET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: store}
spec:
  serviceName: store
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: store}}
  template:
    metadata: {labels: {app: store}}
    spec:
      containers:
      - name: store
        image: example.org/inhouse-store:2
        volumeMounts:
        - name: scratch
          mountPath: /var/lib/store
      volumes:
      - name: scratch
        emptyDir: {}
"""


def test_a_system_added_in_the_configuration_is_recognised(tmp_path: Path) -> None:
    from conftest import run_cli

    (tmp_path / "store.yaml").write_text(INHOUSE_SET, encoding="utf-8")
    run = run_cli(
        "check", "--format", "json", "--select", "data-not-persistent", "store.yaml", cwd=tmp_path
    )
    assert run.code == 0 and run.json()["findings"] == []
    (tmp_path / ".ssrisk.yaml").write_text(
        """\
systems:
  inhouse:
    name: In-house store
    category: database
    recognise: {images: [inhouse-store]}
    replication: {model: primary-replica, source: "https://example.org/inhouse/replication"}
    data: {durable: true, paths: [/var/lib/store], source: "https://example.org/inhouse/data"}
""",
        encoding="utf-8",
    )
    run = run_cli(
        "check", "--format", "json", "--select", "data-not-persistent", "store.yaml", cwd=tmp_path
    )
    facts = [f["facts"] for f in run.json()["findings"]]
    assert facts == [
        {
            "system": "inhouse",
            "data_path": "/var/lib/store",
            "storage": "emptyDir",
            "replicas": 3,
            "set_by": "default",
        }
    ]


def test_a_bad_configuration_entry_is_an_error_at_its_key(tmp_path: Path) -> None:
    from conftest import run_cli

    (tmp_path / "store.yaml").write_text(INHOUSE_SET, encoding="utf-8")
    cfg = tmp_path / ".ssrisk.yaml"
    cfg.write_text(
        "systems:\n  inhouse:\n    name: x\n    category: database\n"
        "    recognise: {images: [a]}\n    replication: {model: raft, source: somewhere-x}\n"
        "    data: {durable: true, source: somewhere-x}\n",
        encoding="utf-8",
    )
    run = run_cli("check", "store.yaml", cwd=tmp_path)
    assert run.code == 2 and "Traceback" not in run.err
    assert f"{cfg.resolve()}:6:" in run.err and "raft" in run.err, run.err


def test_the_systems_command_lists_the_catalog_with_its_sources() -> None:
    from conftest import run_cli

    text = run_cli("systems")
    assert text.code == 0
    rows = {line.split()[0]: line.split()[1:3] for line in text.out.splitlines()}
    assert rows["etcd"] == ["coordination", "quorum"]
    assert rows["kafka"] == ["queue", "sharded"]
    listed = run_cli("systems", "--format", "json").json()
    assert [e["id"] for e in listed] == sorted(builtin_entries())
    assert all(e["replication"]["source"] for e in listed)


def test_every_problem_of_configuration_entries_is_reported_and_nothing_hangs(
    tmp_path: Path,
) -> None:
    """A pull request can write the configuration: a pattern that backtracks is refused at
    its key (not run), and every problem of every entry is reported in file order."""
    from conftest import run_cli

    (tmp_path / "s.yaml").write_text(
        INHOUSE_SET.replace("example.org/inhouse-store:2", "busybox"), encoding="utf-8"
    )
    cfg = tmp_path / ".ssrisk.yaml"
    cfg.write_text(
        "systems:\n"
        "  evil:\n"
        "    id: other\n"
        "    name: Evil\n"
        "    category: databse\n"
        "    recognise: {images: [busybox]}\n"
        '    replication: {model: quorum, source: "https://example.org/x"}\n'
        '    data: {durable: maybe, source: "https://example.org/x"}\n'
        "  evil2:\n"
        "    name: Evil2\n"
        "    category: database\n"
        '    recognise: {images: [busybox], args: ["(a+)+$"]}\n'
        '    replication: {model: primary-replica, promoted_by: [nosuch], source: "x-source"}\n'
        '    data: {durable: true, source: "https://example.org/x"}\n',
        encoding="utf-8",
    )
    run = run_cli("check", "s.yaml", cwd=tmp_path)
    assert run.code == 2 and "Traceback" not in run.err
    places = [line.split(": systems: ")[0].rsplit(":", 2)[1:] for line in run.err.splitlines()]
    assert places == [["3", "5"], ["5", "5"], ["8", "12"], ["12", "43"], ["13", "57"]], run.err
    assert "nested quantifier" in run.err and "'nosuch' names no system" in run.err


def test_a_member_set_of_a_ring_on_emptydir_resyncs_from_the_other_sets(tmp_path: Path) -> None:
    """Three one-replica Cassandra sets tied by one budget are one ring: a member that starts
    empty copies its data from the other sets (a warning, as for one set of 3 replicas)."""
    from conftest import run_cli

    member = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {{name: ring-{z}}}
spec:
  serviceName: ring
  replicas: 1
  selector: {{matchLabels: {{app: ring, zone: {z}}}}}
  template:
    metadata: {{labels: {{app: ring, zone: {z}}}}}
    spec:
      containers:
      - name: cassandra
        image: cassandra:5.0
        volumeMounts: [{{name: data, mountPath: /var/lib/cassandra}}]
      volumes: [{{name: data, emptyDir: {{}}}}]
"""
    budget = (
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: ring}\n"
        "spec: {maxUnavailable: 1, selector: {matchLabels: {app: ring}}}\n"
    )
    text = "---\n".join([budget, *(member.format(z=z) for z in "abc")])
    (tmp_path / "ring.yaml").write_text(text, encoding="utf-8")
    run = run_cli(
        "check", "--format", "json", "--select", "data-not-persistent", "ring.yaml", cwd=tmp_path
    )
    found = [(f["severity"], f["facts"]["replicas"]) for f in run.json()["findings"]]
    assert found == [("warning", 3)] * 3


def test_a_program_pattern_that_matches_an_empty_command_line_is_refused(tmp_path: Path) -> None:
    """A container that runs its image's entrypoint has an empty command line, in which no
    ``recognise`` pattern is searched: one that matches it would match every container, and
    none of the catalog's does."""
    from conftest import run_cli

    assert [
        (system_id, pattern)
        for system_id, raw in builtin_entries().items()
        for where, pattern in entry_patterns(raw)
        if where[0] == "recognise" and re.search(pattern, "")
    ] == []
    (tmp_path / "s.yaml").write_text(INHOUSE_SET, encoding="utf-8")
    entry = {
        "name": "Anything",
        "category": "database",
        "recognise": {"images": ["x"], "args": ["--serve", "(?:--cluster)?"], "clients": ["^$"]},
        "replication": {"model": "quorum", "source": "https://example.org/x"},
        "data": {"durable": True, "source": "https://example.org/x"},
    }
    (tmp_path / ".ssrisk.yaml").write_text(json.dumps({"systems": {"anything": entry}}))
    run = run_cli("check", "s.yaml", cwd=tmp_path)
    assert run.code == 2 and "Traceback" not in run.err
    refused = [line for line in run.err.splitlines() if "empty command line" in line]
    assert len(refused) == 2 and "'(?:--cluster)?'" in refused[0] and "'^$'" in refused[1]


def test_the_catalog_without_extra_entries_is_built_once() -> None:
    """Rules ask for ``catalog(ctx.systems)`` and others for ``catalog()``: one catalog (two
    were built, about 3 ms of every run)."""
    assert catalog() is catalog(())


def test_no_catalog_value_is_cut_short_by_a_comment() -> None:
    """An unquoted value with `` #`` in it ends there: YAML reads the rest as a comment (two
    Kafka sources read "... (default 1) and"). Such values are quoted."""
    cut = []
    for path in ENTRIES:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            key, sep, value = line.partition(": ")
            value = value.strip()
            if (
                sep
                and key.strip()
                and value[:1] not in ("'", '"', "[", "{", "#", "")
                and " #" in value
            ):
                cut.append(f"{path.name}:{number}")
    assert cut == []
    sources = [e["replication"]["source"] for e in builtin_entries().values()]
    assert any("#kraft_voter (controller quorum)" in s for s in sources)
