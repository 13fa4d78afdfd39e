"""SARIF for GitHub code scanning: the official 2.1.0 schema (../shared/schemas) and the
requirements GitHub documents ("SARIF support for code scanning", docs.github.com: required
properties, length limits, levels, locations, fingerprints, relative percent-encoded URIs)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from conftest import DATA, ROOT, run_cli, shared

GATE = DATA / "gate"
PINNED = GATE / "sarif" / "pinned.yaml"


def sarif(*args: str, cwd: Path | None = None) -> dict[str, Any]:
    run = run_cli("check", "--format", "sarif", *args, cwd=cwd)
    assert run.code in (0, 1, 2), run.err
    doc: dict[str, Any] = json.loads(run.out)
    return doc


def schema_errors(doc: dict[str, Any]) -> list[str]:
    import jsonschema

    schema = json.loads(shared("schemas", "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [e.message for e in validator.iter_errors(doc)]


def github_problems(doc: dict[str, Any], root: Path) -> list[str]:
    """What GitHub's documented requirements reject or would display wrongly (one line each).

    docs.github.com, "SARIF support for code scanning", Supported properties: required
    properties must have an explicit, non-empty value; name ≤ 255 characters, short and full
    description ≤ 1024; levels note, warning or error; 1 to 10 locations with a physical
    location (uri, startLine, startColumn, endLine); partialFingerprints; relative URIs are
    relative to the repository root and must name a file there (the upload action decodes
    them with decodeURIComponent).
    """
    out: list[str] = []

    def need(cond: bool, what: str) -> None:
        if not cond:
            out.append(what)

    def text(value: Any) -> bool:
        return isinstance(value, str) and value.strip() != ""

    need(text(doc.get("$schema")), "$schema")
    need(doc.get("version") == "2.1.0", "version")
    need(isinstance(doc.get("runs"), list) and doc["runs"], "runs[]")
    for run in doc.get("runs", []):
        driver = run.get("tool", {}).get("driver", {})
        need(text(driver.get("name")), "tool.driver.name")
        rules = driver.get("rules")
        need(isinstance(rules, list), "tool.driver.rules[]")
        ids = []
        for d in rules or []:
            rid = d.get("id")
            ids.append(rid)
            need(text(rid), "rule id")
            need(len(d.get("name", "")) <= 255, f"{rid}: name over 255 characters")
            for key in ("shortDescription", "fullDescription", "help"):
                need(text(d.get(key, {}).get("text")), f"{rid}: {key}.text")
            for key in ("shortDescription", "fullDescription"):
                need(len(d.get(key, {}).get("text", "")) <= 1024, f"{rid}: {key} too long")
            level = d.get("defaultConfiguration", {}).get("level", "warning")
            need(level in ("note", "warning", "error"), f"{rid}: level {level}")
        need(len(ids) == len(set(ids)), "rule ids repeated")
        need(isinstance(run.get("results"), list), "results[]")
        seen_fingerprints: set[tuple[str, str]] = set()
        for r in run.get("results", []):
            rid = r.get("ruleId")
            need(rid in ids, f"result of undescribed rule {rid}")
            need(r.get("level", "warning") in ("note", "warning", "error"), f"{rid}: level")
            need(text(r.get("message", {}).get("text")), f"{rid}: message.text")
            locations = r.get("locations") or []
            need(1 <= len(locations) <= 10, f"{rid}: 1 to 10 locations")
            for loc in locations[:1]:
                phys = loc.get("physicalLocation", {})
                uri = phys.get("artifactLocation", {}).get("uri", "")
                need(text(uri), f"{rid}: artifactLocation.uri")
                region = phys.get("region", {})
                for key in ("startLine", "startColumn", "endLine"):
                    need(isinstance(region.get(key), int) and region[key] >= 1, f"{rid}: {key}")
                if "endColumn" in region:
                    need(region["endColumn"] > region["startColumn"], f"{rid}: endColumn")
                need(not urlsplit(uri).scheme, f"{rid}: {uri} is not relative")
                need(unquote(uri) != uri or re.fullmatch(r"[\w./-]*", uri) is not None,
                     f"{rid}: {uri} is not percent-encoded")  # fmt: skip
                need((root / unquote(uri)).is_file(), f"{rid}: {uri} names no file")
            fingerprints = r.get("partialFingerprints") or {}
            need(bool(fingerprints), f"{rid}: partialFingerprints")
            # the one GitHub matches alerts by ("Code scanning only uses the
            # primaryLocationLineHash"); without it the REST API gives duplicate alerts
            need("primaryLocationLineHash" in fingerprints, f"{rid}: primaryLocationLineHash")
            for item in fingerprints.items():
                need(item not in seen_fingerprints, f"{rid}: fingerprint {item} repeated")
                seen_fingerprints.add(item)
    return out


def test_github_requirements_checker_catches_what_it_should() -> None:
    doc = sarif(str(PINNED.relative_to(ROOT)), cwd=ROOT)
    assert github_problems(doc, ROOT) == []
    broken = json.loads(json.dumps(doc))
    result = broken["runs"][0]["results"][0]
    result["partialFingerprints"] = broken["runs"][0]["results"][1]["partialFingerprints"]
    del broken["runs"][0]["tool"]["driver"]["rules"][0]["fullDescription"]
    result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "no such.yaml"
    problems = github_problems(broken, ROOT)
    assert any("repeated" in p for p in problems)
    assert any("fullDescription.text" in p for p in problems)
    assert any("not percent-encoded" in p for p in problems)
    del broken["runs"][0]["results"][2]["partialFingerprints"]["primaryLocationLineHash"]
    assert any(p.endswith(": primaryLocationLineHash") for p in github_problems(broken, ROOT))


def test_real_repositories_give_sarif_github_accepts() -> None:
    inputs = [
        "examples", "tests/data/inputs/repo", "tests/data/ci/suppress", "tests/data/bad",
        str(PINNED.relative_to(ROOT)),
    ]  # fmt: skip
    doc = sarif(*inputs, cwd=ROOT)
    assert len(doc["runs"][0]["results"]) > 20
    assert schema_errors(doc) == []
    assert github_problems(doc, ROOT) == []


def test_sarif_of_the_shared_corpus_is_valid() -> None:
    corpus = shared("corpus")
    doc = sarif(str(corpus.relative_to(corpus.parents[1])), cwd=corpus.parents[1])
    assert schema_errors(doc) == []
    assert github_problems(doc, corpus.parents[1]) == []


def _prints(doc: dict[str, Any], key: str) -> list[str]:
    return [r["partialFingerprints"][key] for r in doc["runs"][0]["results"]]


def test_fingerprints_are_unique_per_result_and_survive_moved_lines(tmp_path: Path) -> None:
    moved = tmp_path / "pinned.yaml"
    shutil.copy(PINNED, moved)
    doc = sarif("--select", "node-pinned-storage", "pinned.yaml", cwd=tmp_path)
    results = doc["runs"][0]["results"]
    assert len(results) == 4  # two hostPath volumes, two claims whose lines read the same
    for key in ("ssriskObjectRule/v2", "primaryLocationLineHash"):
        assert len(set(_prints(doc, key))) == 4
    # GitHub's shape: a hash and the occurrence of that hash in the run
    hashes = [p.split(":") for p in _prints(doc, "primaryLocationLineHash")]
    assert [n for _h, n in hashes] == ["1", "2", "3", "4"] and len({h for h, _n in hashes}) == 1
    moved.write_text("# a comment that moves every line\n\n" + PINNED.read_text(encoding="utf-8"))
    again = sarif("--select", "node-pinned-storage", "pinned.yaml", cwd=tmp_path)
    lines = [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results]
    moved_lines = [
        r["locations"][0]["physicalLocation"]["region"]["startLine"]
        for r in again["runs"][0]["results"]
    ]
    assert moved_lines == [n + 2 for n in lines]
    assert [r["partialFingerprints"] for r in again["runs"][0]["results"]] == [
        r["partialFingerprints"] for r in results
    ]


def test_primary_location_line_hash_survives_edited_lines_and_names_the_object(
    tmp_path: Path,
) -> None:
    """GitHub matches alerts by primaryLocationLineHash only; the upload action's own hash is
    the text from the start of the line, so an edit of the line would open a new alert."""
    single = (DATA / "ci" / "single.yaml").read_text(encoding="utf-8")
    (tmp_path / "db.yaml").write_text(single, encoding="utf-8")
    before = sarif("--select", "single-replica", "db.yaml", cwd=tmp_path)
    edited = single.replace("replicas: 1", "replicas: 1   # one is enough for now")
    assert edited != single
    (tmp_path / "db.yaml").write_text(edited, encoding="utf-8")
    after = sarif("--select", "single-replica", "db.yaml", cwd=tmp_path)
    assert _prints(after, "primaryLocationLineHash") == _prints(before, "primaryLocationLineHash")
    assert _prints(after, "ssriskObjectRule/v2") != _prints(before, "ssriskObjectRule/v2")
    renamed = edited.replace("name: db", "name: db-main", 1)
    assert renamed != edited
    (tmp_path / "db.yaml").write_text(renamed, encoding="utf-8")
    other = sarif("--select", "single-replica", "db.yaml", cwd=tmp_path)
    assert _prints(other, "primaryLocationLineHash") != _prints(before, "primaryLocationLineHash")


def _repository(tmp_path: Path) -> Path:
    """A checkout: ``repo/.git`` and ``repo/deploy/db.yaml`` (a one-replica set)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy").mkdir()
    shutil.copy(DATA / "ci" / "single.yaml", repo / "deploy" / "db.yaml")
    return repo


def _uris(doc: dict[str, Any]) -> set[str]:
    return {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in doc["runs"][0]["results"]
    }


def test_paths_are_relative_to_the_repository_root_whatever_the_path_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repository(tmp_path)
    runs = {
        "relative, from the root": sarif("--select", "single-replica", "deploy", cwd=repo),
        "from a subdirectory": sarif("--select", "single-replica", ".", cwd=repo / "deploy"),
        "absolute": sarif("--select", "single-replica", str(repo / "deploy"), cwd=tmp_path),
    }
    for how, doc in runs.items():
        assert _uris(doc) == {"deploy/db.yaml"}, how
        assert doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == repo.as_uri() + "/"
        assert github_problems(doc, repo) == [], how
        assert schema_errors(doc) == [], how
    prints = {how: _prints(doc, "primaryLocationLineHash") for how, doc in runs.items()}
    assert len({tuple(p) for p in prints.values()}) == 1, prints
    # GitHub Actions: the workspace is the root, even for a repository inside it
    monkeypatch.setenv("GITHUB_WORKSPACE", str(tmp_path))
    doc = sarif("--select", "single-replica", str(repo / "deploy"), cwd=repo)
    assert _uris(doc) == {"repo/deploy/db.yaml"}
    annotations = run_cli(
        "check", "--format", "github", "--select", "single-replica", str(repo), cwd=repo
    ).out
    assert "::error file=repo/deploy/db.yaml,line=" in annotations


def test_github_annotations_name_files_relative_to_the_repository_root(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    for path, cwd in (("db.yaml", repo / "deploy"), (str(repo / "deploy" / "db.yaml"), tmp_path)):
        run = run_cli("check", "--format", "github", "--select", "single-replica", path, cwd=cwd)
        (annotation,) = [x for x in run.out.splitlines() if x.startswith("::")]
        assert annotation.startswith("::error file=deploy/db.yaml,line="), annotation
    # outside any repository and the working directory: as written (GitHub cannot map it)
    elsewhere = tmp_path / "elsewhere.yaml"
    shutil.copy(DATA / "ci" / "single.yaml", elsewhere)
    run = run_cli("check", "--format", "github", "--select", "single-replica", str(elsewhere),
                  cwd=repo)  # fmt: skip
    assert f"::error file={elsewhere}," in run.out
    doc = sarif("--select", "single-replica", str(elsewhere), cwd=repo)
    assert _uris(doc) == {elsewhere.as_uri()}


@pytest.mark.skipif(sys.platform == "win32", reason="file names with % and # are POSIX here")
def test_file_uris_are_percent_encoded(tmp_path: Path) -> None:
    odd = tmp_path / "odd dir" / "a%b #1.yaml"
    odd.parent.mkdir()
    shutil.copy(DATA / "ci" / "single.yaml", odd)
    doc = sarif("--select", "single-replica", "odd dir/a%b #1.yaml", cwd=tmp_path)
    (result,) = doc["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "odd%20dir/a%25b%20%231.yaml", "uriBaseId": "%SRCROOT%"}
    assert github_problems(doc, tmp_path) == []
    absolute = sarif("--select", "single-replica", str(odd), cwd=tmp_path)
    uri = absolute["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert uri["artifactLocation"] == location  # inside the working directory: relative


def test_default_level_follows_the_configured_severities() -> None:
    config = GATE / "severity" / ".ssrisk.yaml"
    doc = sarif("--config", str(config), str(DATA / "ci" / "single.yaml"))
    levels = {
        d["id"]: d["defaultConfiguration"]["level"]
        for d in doc["runs"][0]["tool"]["driver"]["rules"]
    }
    assert levels["single-replica"] == "note"  # info, which was lost as a falsy severity
    assert levels["update-strategy-ondelete"] == "warning"
    assert levels["readiness-probe-missing"] == "error"
    assert levels["pdb-missing"] == "warning"  # not configured: the rule's own
    by_rule = {r["ruleId"]: r["level"] for r in doc["runs"][0]["results"]}
    assert by_rule["single-replica"] == "note"


def test_descriptions_are_plain_text_and_no_help_uri_is_invented() -> None:
    import tomllib

    # the project declares no public home yet: no address may be made up for the rule pages
    # (with a Repository URL, helpUri is its rule page: test_formats.py)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "urls" not in project
    doc = sarif("--select", "single-replica", str(DATA / "ci" / "single.yaml"))
    for d in doc["runs"][0]["tool"]["driver"]["rules"]:
        full = d["fullDescription"]["text"]
        assert not re.search(r"`|\*\*|\]\(|^#", full), (d["id"], full)
        assert not full.lower().startswith("severity"), full
        assert "](" not in d["help"]["text"] and d["help"]["markdown"].startswith("# ")
        assert "helpUri" not in d, d["helpUri"]
        assert (ROOT / "rules" / f"{d['id']}.md").is_file()
    (single,) = [
        d for d in doc["runs"][0]["tool"]["driver"]["rules"] if d["id"] == "single-replica"
    ]
    assert single["fullDescription"]["text"].startswith("A StatefulSet that runs one pod.")


def test_help_uri_base_is_a_declared_repository_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from ssrisk.reporters import sarif

    def declaring(*urls: str) -> None:
        monkeypatch.setattr(sarif, "project_urls", lambda: list(urls))
        sarif.source_url.cache_clear()

    try:
        declaring("Homepage, https://ssrisk.example.org", "Documentation, https://d.example")
        assert sarif.help_uri("single-replica") is None
        declaring("Repository, https://git.example.org/ssrisk/", "Homepage, https://x.example")
        assert sarif.help_uri("single-replica").startswith("https://git.example.org/ssrisk/blob/v")
        declaring("Repository, http://insecure.example/ssrisk")
        assert sarif.help_uri("single-replica") is None
    finally:
        monkeypatch.undo()
        sarif.source_url.cache_clear()


def test_the_project_urls_read_beside_the_package_are_importlib_metadata_s(
    tmp_path: Path,
) -> None:
    """``dist_info_urls`` reads a wheel install's ``METADATA`` as importlib.metadata does
    (without importing it on every SARIF run); it declines where it cannot be sure."""
    from importlib.metadata import PathDistribution

    from ssrisk.reporters.sarif import dist_info_urls

    info = tmp_path / "ssrisk-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ssrisk\nVersion: 1.2.3\n"
        "Project-URL: Repository, https://git.example.org/ssrisk\n"
        "project-url: Docs, https://docs.example.org\n"
        "Summary: x\n\nProject-URL: Not, a header (the description)\n",
        encoding="utf-8",
    )
    expected = PathDistribution(info).metadata.get_all("Project-URL")
    assert (
        dist_info_urls(str(tmp_path))
        == expected
        == [
            "Repository, https://git.example.org/ssrisk",
            "Docs, https://docs.example.org",
        ]
    )
    (info / "METADATA").write_text("Name: ssrisk\n\n", encoding="utf-8")
    assert (
        dist_info_urls(str(tmp_path))
        == []
        == (PathDistribution(info).metadata.get_all("Project-URL") or [])
    )
    (tmp_path / "ssrisk-1.0.dist-info").mkdir()  # a stale second install: not chosen
    assert dist_info_urls(str(tmp_path)) is None
    assert dist_info_urls(str(tmp_path / "absent")) is None


def test_an_editable_install_s_urls_are_read_from_the_first_site_that_has_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Away from the package (an editable install), the first ``sys.path`` directory with an
    ssrisk distribution is read when it is one ``dist-info``, as importlib.metadata finds
    it; an ``egg-info`` there (a source tree's) is left to importlib.metadata."""
    import importlib.metadata
    import os

    from ssrisk.reporters import sarif

    package_site = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.abspath(sarif.__file__)))
    )
    if sarif.dist_info_urls(package_site) is not None:
        pytest.skip("a wheel install: its metadata is beside the package")
    empty, site, later = tmp_path / "empty", tmp_path / "site", tmp_path / "later"
    for d in (empty, site, later):
        d.mkdir()
    for d, url in ((site, "https://first.example.org"), (later, "https://later.example.org")):
        (d / "ssrisk-9.0.dist-info").mkdir()
        (d / "ssrisk-9.0.dist-info" / "METADATA").write_text(
            f"Name: ssrisk\nProject-URL: Source, {url}\n\n", encoding="utf-8"
        )
    monkeypatch.setattr(sys, "path", [str(empty), str(site), str(later)])
    assert sarif.project_urls() == ["Source, https://first.example.org"]

    class _Metadata:
        def get_all(self, name: str) -> list[str]:
            return ["Source, https://from.importlib.example.org"]

    monkeypatch.setattr(importlib.metadata, "metadata", lambda name: _Metadata())
    (site / "ssrisk.egg-info").mkdir()
    assert sarif.project_urls() == ["Source, https://from.importlib.example.org"]


def test_streamed_sarif_is_the_whole_log_dumped() -> None:
    """What ``--format sarif`` writes one result at a time is the whole log
    (:func:`ssrisk.reporters.sarif.sarif_log`): its envelope as ``json.dumps(indent=2)``
    writes it, each result on one line as ``json.dumps`` writes it, on the examples, a
    repository with a kustomization and suppressions, and manifests with errors (non-ASCII
    names among them)."""
    import io

    from ssrisk.engine import check
    from ssrisk.plugins import collect_rules, plugin_manager
    from ssrisk.reporters.escape import json_text
    from ssrisk.reporters.sarif import sarif_log, write_sarif
    from ssrisk.settings import Settings

    rules = collect_rules(plugin_manager())
    by_id = {r.id: r for r in rules}
    paths = [str(ROOT / p) for p in ("examples", "tests/data/inputs/repo", "tests/data/bad")]
    report = check(paths, rules, Settings(jobs=1))
    assert len(report.findings) > 20
    out = io.StringIO()
    write_sarif(report, by_id, out)
    log = sarif_log(report, by_id)
    results = log["runs"][0]["results"]
    written = out.getvalue()
    assert json.loads(written)["runs"][0]["results"] == json.loads(json.dumps(results))
    lines = [line.strip().removesuffix(",") for line in written.splitlines()]
    for result in results:  # one line each
        assert json_text(json.dumps(result, ensure_ascii=False)) in lines
    log["runs"][0]["results"] = ["results"]
    head, _, tail = json.dumps(log, indent=2, ensure_ascii=False).partition('"results"\n')
    assert written.startswith(json_text(head).rstrip('"'))
    assert written.endswith(json_text(tail) + "\n")


def test_the_rule_help_made_at_build_time_is_current_and_used() -> None:
    """``ssrisk/rule_help.json`` holds the plain texts ``scripts/rule_help.py`` makes of the
    built-in rules' pages, and a descriptor takes them from there: the same texts as parsing
    the page now, without parsing it."""
    import importlib.util

    from ssrisk.plugins import collect_rules, plugin_manager
    from ssrisk.reporters import sarif

    script = ROOT / "scripts" / "rule_help.py"
    spec = importlib.util.spec_from_file_location("rule_help", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = sarif.HELP_TEXTS.read_text(encoding="utf-8")
    assert made == module.generated(), "run: .venv/bin/python scripts/rule_help.py"
    rule = collect_rules(plugin_manager())[0]
    doc, summary = sarif.rule_page(rule)
    assert sarif.help_key(doc, summary) in json.loads(made)
    parsed = (sarif.description(doc, summary), sarif.plain_text(doc))
    assert sarif.help_texts(doc, summary) == parsed
    # a page it does not hold (a plugin's) is parsed
    assert sarif.help_texts("# x\n\nWhat it is.\n", "s") == ("What it is.", "x\n\nWhat it is.\n")


def test_the_lines_of_at_most_a_few_files_are_kept_while_results_are_written(
    tmp_path: Path,
) -> None:
    """Results come in path order: a run over thousands of files holds the lines of the last
    few read (a run of 50,000 documents held all of them: about 8 KB a document)."""
    from ssrisk.reporters.sarif import _Lines

    lines = _Lines()
    paths = []
    for i in range(3 * _Lines.KEPT_FILES):
        path = tmp_path / f"f{i}.yaml"
        path.write_text(f"a: {i}\nb: {i}\n", encoding="utf-8")
        paths.append(str(path))
    for i, path in enumerate(paths):
        assert lines.line(path, 2) == f"b: {i}"
        assert lines.line(path, 3) is None
        assert len(lines._files) <= _Lines.KEPT_FILES
    assert lines.line(paths[0], 1) == "a: 0"  # read again after it was let go
