"""``ssrisk profile``: a cluster profile from saved ``kubectl get nodes`` output
(tests/data/profile/, whose README cites the public examples the files follow), and the
configuration's ``profile: nodes:`` that reads it back."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from conftest import DATA, docs_text, run_cli, run_process

PROFILES = DATA / "profile"
SEARCH = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: search}
spec:
  serviceName: search
  replicas: 3
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: search}}
  template:
    metadata: {labels: {app: search}}
    spec:
      nodeSelector: {eks.amazonaws.com/nodegroup: data}
      tolerations: [{key: dedicated, operator: Equal, value: data, effect: NoSchedule}]
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchLabels: {app: search}}
      containers:
      - name: es
        image: docker.elastic.co/elasticsearch/elasticsearch:8.15.0
        resources: {requests: {cpu: "12", memory: 100Gi}}
"""


def _profile(*args: str) -> dict:
    run = run_cli("profile", *args)
    assert run.code == 0, run.err
    return yaml.safe_load(run.out)


def test_eks_nodes_become_pools_per_node_group_and_zone() -> None:
    doc = _profile(
        str(PROFILES / "eks-nodes.json"), "--storage-classes", str(PROFILES / "storageclasses.yaml")
    )
    assert doc["kube-version"] == "1.31.7"  # the newest of v1.31.7-eks / v1.31.6-eks
    prof = doc["profile"]
    assert (prof["assume-default-storage"], prof["assume-default-binding"]) == (
        "zonal",
        "WaitForFirstConsumer",
    )
    pools = {p["pool"]: p for p in prof["nodes"]}
    assert sorted(pools) == [
        f"{group}-us-east-1{z}" for group in ("data", "general") for z in "abc"
    ]
    data = pools["data-us-east-1a"]
    assert data["count"] == 1 and data["names"] == ["ip-10-0-10-50.ec2.internal"]
    assert data["taints"] == [{"key": "dedicated", "value": "data", "effect": "NoSchedule"}]
    assert data["allocatable"] == {"cpu": "15890m", "memory": "128009112Ki", "pods": 234}
    assert pools["general-us-east-1b"]["count"] == 2
    # the hostname is per node (kept in names), the zone is the pool's own key
    labels = data["labels"]
    assert "kubernetes.io/hostname" not in labels and "topology.kubernetes.io/zone" not in labels
    assert labels["node.kubernetes.io/instance-type"] == "r5.4xlarge"
    # providerID aws:///...: the profile says how to state that the cloud deletes lost Nodes
    text = run_cli("profile", str(PROFILES / "eks-nodes.json")).out
    assert "# The nodes run on aws:" in text and "node-remediation: node-deletion" in text
    assert "node-remediation" not in doc["profile"]  # a hint, not a setting


def test_standard_input_and_a_tainted_control_plane(tmp_path: Path) -> None:
    text = (PROFILES / "rack-nodes.yaml").read_text(encoding="utf-8")
    run = run_process("profile", "-", cwd=tmp_path, stdin=text)
    assert run.code == 0, run.err
    pools = yaml.safe_load(run.out)["profile"]["nodes"]
    assert [p["count"] for p in pools] == [2, 2, 2, 1]
    assert [p["labels"].get("topology.rook.io/rack") for p in pools] == ["r1", "r2", "r3", None]
    assert pools[3]["taints"] == [
        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
    ]


def test_a_set_too_big_for_the_assumed_nodes_is_simulated_on_the_profile(tmp_path: Path) -> None:
    (tmp_path / "search.yaml").write_text(SEARCH, encoding="utf-8")
    assumed = run_cli("simulate", "--format", "json", str(tmp_path / "search.yaml"))
    (res,) = json.loads(assumed.out)["results"]
    assert res["placement_basis"]["unplaced"] == [0, 1, 2]  # 12 CPU on 4-CPU nodes
    config = tmp_path / ".ssrisk.yaml"
    config.write_text(run_cli("profile", str(PROFILES / "eks-nodes.json")).out, encoding="utf-8")
    run = run_cli("simulate", "--format", "json", str(tmp_path / "search.yaml"))
    assert run.code == 0, run.err
    (res,) = json.loads(run.out)["results"]
    assert res["kube_version"] == "1.31.7"
    assert res["cluster_shape"] == {
        "zones": 3,
        "nodes_per_zone": 3,
        "text": "3 zones × 3 nodes",
        "source": "profile",
    }
    # the data pool's nodes (one a zone, the only ones the pods tolerate and fit)
    assert res["failed_nodes"] == ["ip-10-0-10-50.ec2.internal"]
    assert res["replicas_on_failed_nodes"] == 1
    assert {p["node"] for p in res["pods"].values()} >= {
        "ip-10-0-20-50.ec2.internal",
        "ip-10-0-30-50.ec2.internal",
    }
    text = run_cli("simulate", str(tmp_path / "search.yaml")).out
    assert "on the profile's nodes (3 zones × 3 nodes)" in text.splitlines()[0]
    check = run_cli("check", "--format", "json", str(tmp_path / "search.yaml"))
    rules = {f["rule"] for f in json.loads(check.out)["findings"]}
    assert "replicas-share-failure-domain" not in rules  # one data node a zone: forced apart


def test_bad_input_is_an_error_at_its_position(tmp_path: Path) -> None:
    bad = tmp_path / "nodes.yaml"
    bad.write_text("items:\n  - kind: Node\n   bad: [\n", encoding="utf-8")
    run = run_cli("profile", str(bad))
    assert run.code == 2 and run.out == ""
    assert f"{bad}:3:" in run.err and "Traceback" not in run.err
    bad.write_text('{"kind": "List", "items": [}', encoding="utf-8")
    run = run_cli("profile", str(bad))
    assert run.code == 2 and f"{bad}:1:" in run.err and "not JSON" in run.err
    bad.write_text("apiVersion: v1\nkind: List\nitems: []\n", encoding="utf-8")
    run = run_cli("profile", str(bad))
    assert run.code == 2 and "no Node objects" in run.err
    run = run_cli("profile", str(tmp_path / "missing.yaml"))
    assert run.code == 2 and "missing.yaml" in run.err


def test_more_nodes_than_a_profile_holds_is_refused(tmp_path: Path) -> None:
    items = [
        {"kind": "Node", "metadata": {"name": f"n{i}", "labels": {"rack": str(i)}}}
        for i in range(5001)
    ]
    big = tmp_path / "nodes.json"
    big.write_text(json.dumps({"kind": "List", "items": items}), encoding="utf-8")
    run = run_cli("profile", str(big))
    assert run.code == 2 and "5001 nodes; a profile holds at most 5000" in run.err


def test_profile_nodes_in_the_configuration_are_checked(tmp_path: Path) -> None:
    sts = tmp_path / "s.yaml"
    sts.write_text(SEARCH, encoding="utf-8")
    config = tmp_path / ".ssrisk.yaml"
    cases = {
        "profile:\n  zones: 2\n  nodes: [{pool: a, count: 1}]\n": "cannot be given with",
        "profile:\n  nodes: [{pool: a, count: 2, names: [x]}]\n": "names must list count (2)",
        "profile:\n  nodes: [{pool: a, names: [Bad_Name]}]\n": "'Bad_Name' is not a valid",
        "profile:\n  nodes: [{pool: a, count: 1, color: red}]\n": "color",
    }
    for text, said in cases.items():
        config.write_text(text, encoding="utf-8")
        run = run_cli("check", str(sts))
        assert run.code == 2, text
        assert ".ssrisk.yaml:" in run.err and said in run.err, (text, run.err)


def test_the_readme_commands_make_a_profile(tmp_path: Path) -> None:
    # The README's two lines, with the kubectl output saved in tests/data/profile/.
    readme = docs_text()
    shown = "ssrisk profile nodes.yaml --storage-classes sc.yaml > .ssrisk.yaml"
    assert "kubectl get nodes -o yaml > nodes.yaml" in readme and shown in readme
    (tmp_path / "nodes.yaml").write_bytes((PROFILES / "rack-nodes.yaml").read_bytes())
    (tmp_path / "sc.yaml").write_bytes((PROFILES / "storageclasses.yaml").read_bytes())
    run = run_cli("profile", "nodes.yaml", "--storage-classes", "sc.yaml", cwd=tmp_path)
    assert run.code == 0, run.err
    (tmp_path / ".ssrisk.yaml").write_text(run.out, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(SEARCH, encoding="utf-8")
    check = run_cli("check", "s.yaml", cwd=tmp_path)
    assert check.code in (0, 1), check.err


def test_the_report_says_which_cluster_the_sets_were_simulated_on(tmp_path: Path) -> None:
    (tmp_path / "search.yaml").write_text(SEARCH, encoding="utf-8")
    assumed = json.loads(run_cli("check", "--format", "json", "search.yaml", cwd=tmp_path).out)
    assert assumed["clusters"] == ["an assumed cluster (3 zones × 2 nodes)"]
    profile = run_cli("profile", str(PROFILES / "eks-nodes.json")).out
    (tmp_path / ".ssrisk.yaml").write_text(profile, encoding="utf-8")
    stated = json.loads(run_cli("check", "--format", "json", "search.yaml", cwd=tmp_path).out)
    assert stated["clusters"] == ["the profile's nodes (3 zones × 3 nodes)"]
    text = run_cli("check", "search.yaml", cwd=tmp_path).out.splitlines()[-1]
    assert text.endswith("; simulated on the profile's nodes (3 zones × 3 nodes)")


def _node(name: str, **extra: object) -> dict:
    node: dict = {"kind": "Node", "metadata": {"name": name, "labels": {}}, "spec": {}}
    for key, value in extra.items():
        if key == "labels":
            node["metadata"]["labels"] = value
        elif key == "allocatable":
            node["status"] = {"allocatable": value}
        else:
            node["spec"][key] = value
    return node


def _nodes_file(tmp_path: Path, *nodes: dict) -> Path:
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps({"kind": "List", "items": list(nodes)}), encoding="utf-8")
    return path


def test_what_kubectl_shows_of_a_node_reaches_the_profile_as_written(tmp_path: Path) -> None:
    path = _nodes_file(
        tmp_path,
        # a cordoned node whose saved output lacks the taint the controller adds
        _node("cordoned", unschedulable=True),
        # a hostname label that is not the node name is a selector target: kept
        _node("vm-1", labels={"kubernetes.io/hostname": "host1", "rack": "1e3"}),
    )
    doc = _profile(str(path))
    cordoned, vm = doc["profile"]["nodes"]
    assert cordoned["taints"] == [
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    ]
    # "1e3" is a number to a YAML 1.1 reader: written quoted, read back as the string
    assert vm["labels"] == {"kubernetes.io/hostname": "host1", "rack": "1e3"}
    text = run_cli("profile", str(path)).out
    assert 'rack: "1e3"' in text
    (tmp_path / ".ssrisk.yaml").write_text(text, encoding="utf-8")
    sts = SEARCH.replace(
        "nodeSelector: {eks.amazonaws.com/nodegroup: data}", 'nodeSelector: {rack: "1e3"}'
    ).replace('requests: {cpu: "12", memory: 100Gi}', "requests: {cpu: 100m}")
    (tmp_path / "s.yaml").write_text(sts, encoding="utf-8")
    run = run_cli("simulate", "--format", "json", "s.yaml", cwd=tmp_path)
    assert run.code == 0, run.err
    (res,) = json.loads(run.out)["results"]
    assert res["pods"]["search-0"]["node"] == "vm-1"  # not the cordoned node


def test_a_node_the_api_server_would_not_hold_is_named(tmp_path: Path) -> None:
    cases = {
        "Bad_Name": ((_node("Bad_Name"),), "Node 1: 'Bad_Name' is not a valid node name"),
        "twice": ((_node("a"), _node("a")), "Node 2: node 'a' is listed twice"),
        "cpu": ((_node("a", allocatable={"cpu": "banana"}),), "allocatable cpu 'banana'"),
        "effect": (
            (_node("a", taints=[{"key": "k", "effect": "Sometimes"}]),),
            "taint k=:Sometimes is not a valid taint",
        ),
        "label": ((_node("a", labels={"k": {"x": 1}}),), "label k: not a valid label value"),
    }
    for nodes, said in cases.values():
        run = run_cli("profile", str(_nodes_file(tmp_path, *nodes)))
        assert run.code == 2 and said in run.err and "nodes.json" in run.err, run.err


def test_storage_classes_and_standard_input_are_checked(tmp_path: Path) -> None:
    empty = tmp_path / "sc.yaml"
    empty.write_text("apiVersion: v1\nkind: List\nitems: []\n", encoding="utf-8")
    run = run_cli("profile", str(PROFILES / "rack-nodes.yaml"), "--storage-classes", str(empty))
    assert run.code == 2 and "no StorageClass objects" in run.err
    run = run_cli("profile", "-", "--storage-classes", "-")
    assert run.code == 2 and "standard input can be read once" in run.err


def test_the_profile_s_nodes_and_default_class_are_the_stated_assumptions(tmp_path: Path) -> None:
    text = run_cli(
        "profile",
        str(PROFILES / "eks-nodes.json"),
        "--storage-classes",
        str(PROFILES / "storageclasses.yaml"),
    ).out
    (tmp_path / ".ssrisk.yaml").write_text(text, encoding="utf-8")
    sts = SEARCH + (
        "  volumeClaimTemplates:\n  - metadata: {name: data}\n"
        "    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n"
    )
    (tmp_path / "s.yaml").write_text(sts, encoding="utf-8")
    (res,) = json.loads(run_cli("simulate", "--format", "json", "s.yaml", cwd=tmp_path).out)[
        "results"
    ]
    said = " ".join(res["assumptions"])
    assert "each node has the allocatable the profile lists for it" in said
    assert "4 CPU" not in said
    assert "the cluster's default StorageClass 'gp3' (the profile's)" in said


def test_nodes_without_zone_or_kubelet_version(tmp_path: Path) -> None:
    path = _nodes_file(tmp_path, _node("a"), _node("b"), _node("c"))
    text = run_cli("profile", str(path)).out
    assert "No node shows a kubelet version" in text and "kube-version:" not in text
    (tmp_path / ".ssrisk.yaml").write_text(text, encoding="utf-8")
    sts = SEARCH.replace("      nodeSelector: {eks.amazonaws.com/nodegroup: data}\n", "").replace(
        'requests: {cpu: "12", memory: 100Gi}', "requests: {cpu: 100m}"
    )
    (tmp_path / "s.yaml").write_text(sts, encoding="utf-8")
    run = run_cli("simulate", "s.yaml", cwd=tmp_path)
    assert run.code == 0, run.err
    assert "a (no zone) stops renewing its Lease" in run.out


def test_an_unreadable_file_is_said_once() -> None:
    """It read "ssrisk: error: /dev/null: error: cannot read file: ..."."""
    run = run_cli("profile", "/dev/null")
    assert run.code == 2
    assert run.err.endswith(
        "ssrisk: error: /dev/null: cannot read file: not a regular file (device)\n"
    )
    assert run.err.count("error:") == 1
