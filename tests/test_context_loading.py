"""``--context`` inputs are read only for the kinds StatefulSets relate to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import DATA, run_cli

from ssrisk import yamlpos

CONTEXT = DATA / "perf" / "context"
CHANGED = CONTEXT / "deploy" / "kv.yaml"


@pytest.fixture
def composed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The first line of every YAML document composed into data (the systems catalog is read
    first: it is read once a process, by whichever test checks a set first)."""
    from ssrisk.rules._systems import catalog

    catalog()
    seen: list[str] = []
    real = yamlpos.load_documents

    def counting(text: str, strict: bool = True) -> Iterator[Any]:
        seen.append(next((x for x in text.splitlines() if x.startswith("kind:")), "?"))
        return real(text, strict)

    monkeypatch.setattr(yamlpos, "load_documents", counting)
    return seen


def test_context_composes_only_related_objects_and_the_checked_file_once(
    composed: list[str],
) -> None:
    run = run_cli("check", "--format", "json", "--context", str(CONTEXT), str(CHANGED))
    report = run.json()
    # the Service and the PDB of the context were seen ...
    rules = {f["rule"] for f in report["findings"]}
    assert not rules & {"pdb-missing", "headless-service-missing"}, rules
    assert report["summary"]["statefulsets"] == 1
    # ... and nothing else of the context was parsed: not the other StatefulSet (not checked),
    # not the ConfigMap or the Deployment, not the changed file a second time
    assert sorted(composed) == [
        "kind: PodDisruptionBudget",
        "kind: Service",
        "kind: StatefulSet",
    ]


def test_without_context_every_document_of_a_modelled_kind_is_composed(
    composed: list[str],
) -> None:
    run = run_cli("check", "--format", "json", str(CONTEXT))
    assert run.json()["summary"]["statefulsets"] == 2
    assert sorted(composed).count("kind: StatefulSet") == 2


def test_a_default_storage_class_of_the_context_is_every_units_default() -> None:
    """A default class read from ``--context`` is a fact of the cluster: the claims of a set
    in another directory get it, as when the class is beside the set (a default class among
    the checked files is only the default of its own directory and those below it)."""
    base = DATA / "inputs" / "context-default-class"
    app, cluster = str(base / "app"), str(base / "cluster")

    def pinned(*args: str) -> list[dict[str, Any]]:
        findings = run_cli("check", "--format", "json", *args).json()["findings"]
        return [f for f in findings if f["rule"] == "node-pinned-storage"]

    assert pinned(app) == []  # no class: the claim is provisioned by the cluster's default
    (finding,) = pinned("--context", cluster, app)
    assert "'data' is node-local" in finding["message"], finding["message"]
    assert (finding["path"].rsplit("/", 1)[-1], finding["line"]) == ("db.yaml", 19)
    assert pinned(app, cluster) == []  # checked beside it, the class covers only its directory
    # a default of another checked directory does not reach app's claims, whatever the
    # cluster's default is (by name, alocal would be picked before zstandard)
    app1, cloud = str(base / "app1"), str(base / "cloud")
    assert pinned("--context", cloud, app1, app) == []
    (finding,) = pinned("--context", cluster, app1, app)
    assert finding["path"].endswith("db.yaml")
    # given as context and checked too (--context cluster .): still the cluster's default
    assert len(pinned("--context", cluster, str(base))) == 1


@pytest.mark.parametrize("spelt", ["ctx", "ctx/", "./ctx", "gone"])
@pytest.mark.parametrize("changed", [False, True])
def test_a_context_path_that_is_refused_is_a_warning(
    tmp_path: Any, changed: bool, spelt: str
) -> None:
    """A ``--context`` link out of the tree is not read, as a PATH is not; it was dropped
    without a word, and the findings its PDB would have removed stayed unexplained."""
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "deploy" / "db.yaml").write_text((DATA / "ci" / "single.yaml").read_text())
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / "ctx").symlink_to(outside)
    (repo / "gone").symlink_to(tmp_path / "nothing")  # (out of the tree, to nothing)
    flags = ["--changed"] if changed else []
    run = run_cli(
        "check", "--format", "json", *flags, "--context", spelt, "--", "deploy/db.yaml", cwd=repo
    )  # fmt: skip
    report = run.json()
    assert report["errors"] == [] and report["summary"]["statefulsets"] == 1
    assert [(n["path"], n["level"], n["message"]) for n in report["notices"]] == [
        (
            spelt.strip("./") if spelt != "./ctx" else "ctx",
            "warning",
            "--context: a symbolic link that leads outside the checked tree; not read "
            "(the rules do not see it)",
        )
    ]
