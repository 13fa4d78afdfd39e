"""Loading: documents, positions, kinds, and every unreadable input as a clear error."""

from __future__ import annotations

from pathlib import Path

from conftest import DATA, run_cli

from ssrisk.loading import discover, load_path, split_documents
from ssrisk.yamlpos import load_documents


def test_multi_document_positions_and_kinds() -> None:
    lf = load_path(str(DATA / "load" / "multi.yaml"))
    assert lf.errors == []
    assert [(o.kind, o.namespace, o.name) for o in lf.objects] == [
        ("StatefulSet", "ns1", "one"),
        ("StatefulSet", "default", "two"),
    ]
    one, two = lf.objects
    # the object starts at its apiVersion line; fields point at their key
    assert (one.start().line, one.start().column) == (9, 1)
    assert (one.pos("spec", "replicas").line, one.pos("spec", "replicas").column) == (16, 3)
    assert one.pos("spec", "template", "spec", "containers", 0, "image").line == 25
    # a missing field points at the deepest existing parent
    assert two.pos("spec", "replicas").line == two.pos("spec").line == 32
    # ConfigMap, the empty document and the plain mapping are counted, not loaded
    assert lf.documents == 4


def test_kind_list_items_keep_their_positions() -> None:
    lf = load_path(str(DATA / "load" / "list.yaml"))
    assert [(o.kind, o.name) for o in lf.objects] == [("Service", "db"), ("StatefulSet", "db")]
    sts = lf.objects[1]
    assert sts.pos("spec", "replicas").line == 17


def test_json_manifest() -> None:
    lf = load_path(str(DATA / "load" / "sts.json"))
    assert lf.errors == []
    (sts,) = lf.objects
    assert (sts.namespace, sts.name) == ("j", "js")
    assert sts.pos("spec", "replicas").line == 7


def test_helm_template_is_skipped_with_a_notice() -> None:
    lf = load_path(str(DATA / "load" / "chart" / "templates" / "statefulset.yaml"))
    assert lf.errors == [] and lf.objects == []
    assert len(lf.notices) == 1 and "Helm template" in lf.notices[0].message


def test_template_copied_out_of_its_chart_is_a_notice_wherever_its_directives_are() -> None:
    """A document that does not load because of a ``{{ ... }}`` action in a value (a syntax
    error, or a mapping used as a key) is an unrendered template, as the README says; a typo
    in a document that only quotes template text is still an error at its place."""
    unrendered = DATA / "load" / "unrendered"
    for name in ("statefulset.yaml", "name-key.yaml"):
        lf = load_path(str(unrendered / name))
        assert lf.errors == [] and lf.objects == [], name
        assert [n.message for n in lf.notices] == [
            "skipped: unrendered Helm template ({{ ... }}); render it first"
        ]
    typo = load_path(str(unrendered / "typo-with-quoted-template.yaml"))
    assert [(e.line, e.message.split(":")[0]) for e in typo.errors] == [(9, "YAML syntax")]
    assert typo.notices == []


def test_go_template_text_inside_values_is_not_a_helm_template() -> None:
    lf = load_path(str(DATA / "load" / "templated-strings.yaml"))
    assert lf.notices == [] and lf.errors == []
    assert [o.name for o in lf.objects] == ["alertmanager"]


def test_malformed_yaml_names_file_and_position() -> None:
    lf = load_path(str(DATA / "bad" / "malformed.yaml"))
    (err,) = lf.errors
    assert err.path.endswith("malformed.yaml")
    assert (err.line, err.column) == (7, 14)
    assert "YAML syntax" in err.message


def test_syntax_error_in_an_unmodelled_kind_is_still_reported() -> None:
    lf = load_path(str(DATA / "bad" / "badsyntax-configmap.yaml"))
    (err,) = lf.errors
    assert err.line is not None and err.line >= 6
    assert "quoted scalar" in err.message


def test_binary_empty_comment_only_and_latin1_files() -> None:
    for name, words in [
        ("binary.yaml", "binary file"),
        ("latin1.yaml", "not valid UTF-8"),
    ]:
        lf = load_path(str(DATA / "bad" / name))
        assert len(lf.errors) == 1, name
        assert words in lf.errors[0].message, (name, lf.errors[0].message)
        assert lf.objects == []
    for name in ("empty.yaml", "comments-only.yaml"):
        lf = load_path(str(DATA / "bad" / name))
        assert lf.errors == [] and lf.objects == [], name
        (notice,) = lf.notices
        assert notice.empty and notice.level == "notice" and "empty file" in notice.message


def test_latin1_error_has_the_line() -> None:
    (err,) = load_path(str(DATA / "bad" / "latin1.yaml")).errors
    assert err.line == 6


def test_duplicate_key_is_a_warning_and_the_object_is_still_read() -> None:
    lf = load_path(str(DATA / "bad" / "duplicate-key.yaml"))
    assert lf.errors == []
    (notice,) = lf.notices
    assert notice.level == "warning" and notice.line == 7 and "replicas" in notice.message
    assert [o.name for o in lf.objects] == ["dup"]


def test_split_documents_keeps_line_offsets() -> None:
    text = "a: 1\n---\nb: 2\n--- # c\nc: 3\n"
    chunks = list(split_documents(text))
    assert [off for off, _ in chunks] == [0, 1, 3]


def test_discover_walks_directories_in_order_and_reports_missing_paths(tmp_path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x.yml").write_text("a: 1\n")
    (tmp_path / "a.yaml").write_text("a: 1\n")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "c.yaml").write_text("a: 1\n")
    (tmp_path / "loop").symlink_to(tmp_path)
    files, errors = discover([str(tmp_path), str(tmp_path / "missing.yaml")])
    assert files == [str(tmp_path / "a.yaml"), str(tmp_path / "b" / "x.yml")]
    assert len(errors) == 1 and "no such file" in errors[0].message
    files, _ = discover([str(tmp_path)], excludes=["b"])
    assert files == [str(tmp_path / "a.yaml")]


def test_directory_named_like_a_manifest(tmp_path) -> None:
    (tmp_path / "x.yaml").mkdir()
    files, errors = discover([str(tmp_path)])
    assert files == [] and errors == []
    lf = load_path(str(tmp_path / "x.yaml"))
    assert "directory" in lf.errors[0].message


def test_legacy_api_versions_are_read() -> None:
    lf = load_path(str(DATA / "load" / "legacy.yaml"))
    # both are read, for the api-version-not-served rule to report (error findings; a loading
    # warning for the PDB exited 0 even with --fail-on warning), the v1beta1 PDB as the budget
    # it was meant to be
    assert [o.kind for o in lf.objects] == ["StatefulSet", "PodDisruptionBudget"]
    assert lf.notices == []


def test_json_with_comments_is_skipped_or_pointed_at_its_first_comment(tmp_path: Path) -> None:
    settings = tmp_path / ".vscode" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        '{\n  // editor settings\n  "editor.tabSize": 2,\n  /* a\n     block */\n'
        '  "files.exclude": {"**/.git": true},\n}\n'
    )
    run = run_cli("check", "--format", "json", str(tmp_path))
    report = run.json()
    # an editor's settings are no manifest: a notice at its first comment, not an error
    assert run.code == 0 and report["errors"] == []
    (notice,) = [n for n in report["notices"] if "JSON with comments" in n["message"]]
    assert (notice["line"], notice["column"]) == (2, 3)
    manifest = tmp_path / "sts.json"
    manifest.write_text('{\n "apiVersion": "apps/v1", // the API\n "kind": "StatefulSet"\n}\n')
    run = run_cli("check", "--format", "json", str(manifest))
    (error,) = run.json()["errors"]
    assert run.code == 2 and (error["line"], error["column"]) == (2, 27)
    assert "a comment: JSON has none" in error["message"]
    # a header comment before the object: the same, at the header
    manifest.write_text('// generated\n{"apiVersion": "apps/v1", "kind": "StatefulSet"}\n')
    run = run_cli("check", "--format", "json", str(manifest))
    (error,) = run.json()["errors"]
    assert run.code == 2 and (error["line"], error["column"]) == (1, 1)


def test_scalars_resolve_as_kubectl_reads_them(tmp_path: Path) -> None:
    """go-yaml v2 (resolve.go, the reader of sigs.k8s.io/yaml): a plain ``=`` is text (YAML
    1.1's value type is not Kubernetes'), and ``y``/``n`` are booleans."""
    path = tmp_path / "sts.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: db\n"
        "  annotations: {flag: y, other: N}\nspec:\n  serviceName: db\n  replicas: 3\n"
        "  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n"
        "    spec:\n      containers:\n      - name: db\n        image: postgres:16\n"
        "        args: [--sep, =]\n",
        encoding="utf-8",
    )
    loaded = load_path(str(path))
    assert loaded.errors == []
    (obj,) = loaded.objects
    assert obj.data["spec"]["template"]["spec"]["containers"][0]["args"] == ["--sep", "="]
    assert obj.data["metadata"]["annotations"] == {"flag": True, "other": False}


def test_a_recursive_alias_is_said_at_the_alias(tmp_path: Path) -> None:
    """go-yaml refuses an anchor whose value contains itself; it was reported at 1:1 as a
    nesting limit of the object."""
    path = tmp_path / "sts.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n"
        "  template: &t\n    spec: *t\n"
    )
    report = run_cli("check", "--format", "json", str(path)).json()
    (error,) = report["errors"]
    assert (error["line"], error["column"]) == (6, 11)
    assert "an anchor's value contains itself" in error["message"]


def test_a_merge_key_sets_its_keys_in_the_order_written_as_kubectl_reads_it(
    tmp_path: Path,
) -> None:
    """go-yaml v2 applies a mapping's keys in order: a merge after a key overrides it (the
    YAML merge spec, and PyYAML, keep the key). ``replicas: 3`` then ``<<: {replicas: 1}``
    is one replica for kubectl; ssrisk read 3 and missed single-replica."""
    path = tmp_path / "sts.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web}\nspec:\n"
        "  serviceName: web\n  replicas: 3\n  <<: {replicas: 1}\n"
        "  selector: {matchLabels: {app: web}}\n"
        "  template:\n    metadata: {labels: {app: web}}\n"
        "    spec: {containers: [{name: c, image: nginx:1.25}]}\n"
    )
    report = run_cli("check", "--format", "json", str(path)).json()
    assert report["errors"] == []
    assert any(f["rule"] == "single-replica" for f in report["findings"])
    ((data, _dups),) = list(load_documents("a: {b: 1, <<: [{b: 2}, {b: 3}], c: 4}\n"))
    assert data == {"a": {"b": 2, "c": 4}}  # (the first mapping of a merged list wins)
    ((data, _dups),) = list(load_documents("a: {<<: {b: 2}, b: 1}\n"))
    assert data == {"a": {"b": 1}}
