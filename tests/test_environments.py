"""Relations resolved per rendered unit (a directory of plain files, a chart, a
kustomization) and by object identity: copies of one object in ``staging/`` and ``prod/`` are
environments, never one cluster; shared infrastructure elsewhere is still found."""

from __future__ import annotations

from typing import Any

from conftest import DATA, run_cli

ENVS = DATA / "gate" / "envs"
KZ = DATA / "inputs" / "kz"


def _findings(*paths: str) -> list[dict[str, Any]]:
    run = run_cli("check", "--format", "json", *paths)
    assert run.code in (0, 1), run.out + run.err
    findings: list[dict[str, Any]] = run.json()["findings"]
    return findings


def test_two_copies_of_one_pdb_are_not_two_pdbs_on_the_same_pods() -> None:
    findings = _findings(str(ENVS / "copies"))
    several = [f for f in findings if "select the same pods" in f["message"]]
    assert several == []
    # each environment's set sees its own PDB: the info about its unhealthy-pod policy, once
    pdb_notes = sorted(f["path"] for f in findings if f["rule"] == "pdb-blocks-drain")
    assert pdb_notes == [
        str(ENVS / "copies" / "prod" / "pdb.yaml"),
        str(ENVS / "copies" / "staging" / "pdb.yaml"),
    ]
    assert not [f for f in findings if f["rule"] in ("pdb-missing", "headless-service-missing")]
    run = run_cli("check", "--format", "json", str(ENVS / "copies"))
    assert not [n for n in run.json()["notices"] if "also defined" in n["message"]]


def test_an_environment_does_not_see_the_other_environments_objects() -> None:
    findings = _findings(str(ENVS / "one-sided"))
    by_env = {
        (f["path"].split("/")[-2], f["rule"])
        for f in findings
        if f["rule"] in ("pdb-missing", "pdb-blocks-drain")
    }
    # staging's blocking PDB is staging's; prod has none, so prod is told it has none
    assert by_env == {("staging", "pdb-blocks-drain"), ("prod", "pdb-missing")}


def test_objects_of_other_directories_are_found_by_identity() -> None:
    findings = _findings(str(ENVS / "shared"))
    pinned = [f for f in findings if f["rule"] == "node-pinned-storage"]
    # the class named in the explanation is the one from storage/classes.yaml
    assert len(pinned) == 1 and "node-disks" in pinned[0]["explanation"]


def test_overlays_of_one_base_each_see_their_own_objects() -> None:
    # p1..p4 build the same Service and StatefulSet names in one namespace
    findings = _findings(str(KZ))
    assert not [f for f in findings if f["rule"] == "headless-service-missing"]
    assert {f["kustomization"].rsplit("/", 1)[-1] for f in findings} == {"p1", "p2", "p3", "p4"}


def test_each_copy_keeps_its_own_suppression_annotations() -> None:
    run = run_cli(
        "check", "--format", "json", "--fail-on", "info", "--select", "single-replica",
        str(ENVS / "annotated"),
    )  # fmt: skip
    by_env = {f["path"].split("/")[-2]: f.get("suppressed", False) for f in run.json()["findings"]}
    assert by_env == {"staging": True, "prod": False}
    assert run.code == 1  # prod's single replica is not suppressed by staging's annotation


def test_a_default_storage_class_covers_its_own_tree_only() -> None:
    classes = ENVS / "default-class"
    # beside the applications: not their default (the claim's class is unknown, as without it)
    beside = _findings("--select", "node-pinned-storage", str(classes / "sibling"))
    assert beside == []
    # at the top of the tree: the default of every claim below it
    above = _findings("--select", "node-pinned-storage", str(classes / "top"))
    assert len(above) == 1 and "'data'" in above[0]["message"]


def test_simulate_names_the_overlay_of_each_result() -> None:
    text = run_cli("simulate", str(KZ)).out
    heads = [ln for ln in text.splitlines() if ln.startswith("== ")]
    overlays = [h.split(" (", 1)[1].split(")", 1)[0].rsplit("/", 1)[-1] for h in heads]
    assert overlays == ["p1", "p2", "p3", "p4"] and len(set(heads)) == len(heads)
    results = run_cli("simulate", "--format", "json", str(KZ)).json()["results"]
    assert [r["kustomization"].rsplit("/", 1)[-1] for r in results] == overlays
