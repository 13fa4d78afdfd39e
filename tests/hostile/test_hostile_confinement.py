"""Hostile kustomizations and charts against confinement: kustomize builds a private copy of
the tree (no ``.git``, no link out) with its root-only load restrictor; references that the
restrictor does not cover are refused after decoding the kustomization as kustomize does
(``!!binary``, case-insensitive field names); renderer children have no network (the kernel
refuses their sockets); kubectl never contacts a cluster; Helm template sources come from the
chart's copy. Built from the inputs of an adversarial trial (each test names its input).
"""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from checkout import SECRET, assert_clean, make_checkout
from conftest import DATA, run_cli

from ssrisk.renderers import bounded
from ssrisk.renderers.nonet import network_guard

KUSTOMIZE = DATA / "hostile" / "kustomize"
needs_kubectl = pytest.mark.skipif(
    shutil.which("kubectl") is None and shutil.which("kustomize") is None,
    reason="kubectl or kustomize needed",
)


def _checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> Path:
    """A checkout (``.git/config`` holds the secret) with the kustomization ``case`` in
    ``kz/`` beside a plain manifest ``deploy/db.yaml``."""
    repo = make_checkout(tmp_path, monkeypatch)
    shutil.copytree(KUSTOMIZE / case, repo / "kz")
    return repo


class _Server:
    """An HTTP server on the loopback address that records every request it gets."""

    def __init__(self) -> None:
        requests: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                body = f"LOOPBACK_{SECRET}\n".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                return None

        self.requests = requests
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


# --- the copy and the decoded references ----------------------------------------------------------


@needs_kubectl
@pytest.mark.parametrize("allow", [False, True])
def test_a_generator_file_cannot_read_git_config(
    allow: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repro 4 (and 6): ``generators: [gen.yaml]`` whose ``files: [config=.git/config]``
    is copied into serviceName by a replacement; with --allow-remote-resources too."""
    repo = _checkout(tmp_path, monkeypatch, "generator-leak")
    flags = ["--allow-remote-resources"] if allow else []
    for fmt in ("text", "json", "github", "sarif"):
        run = run_cli("check", ".", "--format", fmt, *flags, cwd=repo)
        assert run.code == 2, run.out
        assert_clean(run.out, run.err)
    run = run_cli("check", ".", *flags, cwd=repo)
    assert "gen.yaml:6:3: error: file: '.git/config' is inside a .git directory" in run.out


@needs_kubectl
def test_the_copy_has_no_git_even_when_a_check_misses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Structural: the generator's .git/config read with the static check switched off (as
    for a field no check knew of): the copy kustomize builds has no .git."""
    repo = _checkout(tmp_path, monkeypatch, "generator-leak")
    from ssrisk.renderers import kustomize_refs

    monkeypatch.setattr(kustomize_refs, "file_entries", lambda node: iter(()))
    run = run_cli("check", ".", cwd=repo)
    assert run.code == 2
    assert_clean(run.out, run.err)
    assert "cannot build kustomization" in run.out


@pytest.mark.parametrize(
    ("case", "allow", "expected"),
    [
        ("binary-files", False, "kustomization.yaml:5:11: error: file: '.git/config' is inside"),
        ("binary-escape", False, "resources: '../../../outside/kz' leads outside the checked"),
        ("binary-escape", True, "resources: '../../../outside/kz' leads outside the checked"),
        ("binary-url", False, "resources: 'http://127.0.0.1:9/x.yaml' is remote"),
        ("casefold-escape", True, "resources: '../../../outside/kz' leads outside the checked"),
        ("nul", False, "kustomization.yaml:3:3: error: resources: 'a\\x00b' contains a NUL"),
        ("surrogate", False, "kustomization.yaml:3:6: error: cannot read the kustomization"),
    ],
)
def test_references_are_decoded_as_kustomize_decodes_them(
    case: str, allow: bool, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repro 15 (a, b, c), repro 2: ``!!binary`` paths and URLs, ``RESOURCES:``, a NUL and a
    lone surrogate: each an error at its line, never built, never an internal error, and the
    other files of the run are still checked."""
    repo = _checkout(tmp_path, monkeypatch, case)
    flags = ["--allow-remote-resources"] if allow else []
    run = run_cli("check", ".", *flags, cwd=repo)
    assert run.code == 2, run.out
    assert expected in run.out, run.out
    assert_clean(run.out, run.err)
    assert "db.yaml" in run.out  # the checkout's other manifest was checked
    run = run_cli("check", ".", "--format", "json", *flags, cwd=repo)
    assert run.json()["summary"]["statefulsets"] == 1
    run = run_cli("check", "--changed", "kz/kustomization.yaml", "deploy/db.yaml", cwd=repo)
    assert run.code == 2 and "internal error" not in run.err


def test_deep_and_huge_kustomizations_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repro 3 (600 levels) and repro 14 (a kustomization of megabytes, read in ssrisk's own
    process): errors at the file, the rest checked."""
    repo = make_checkout(tmp_path, monkeypatch)
    (repo / "kz").mkdir()
    (repo / "kz" / "kustomization.yaml").write_text("resources:\n- " + "[" * 600 + "]" * 600 + "\n")
    (repo / "kz2").mkdir()
    with open(repo / "kz2" / "kustomization.yaml", "w") as fh:
        fh.write("commonAnnotations:\n")
        fh.writelines(f"  a{i}: b\n" for i in range(200_000))
    run = run_cli("check", ".", cwd=repo)
    assert run.code == 2
    assert "kz: error: cannot build kustomization" in run.out  # kustomize's own error
    assert "kz2/kustomization.yaml" in run.out
    assert "larger than 1048576 bytes" in run.out
    assert "deploy/db.yaml" in run.out and "internal error" not in run.err


@needs_kubectl
def test_an_include_cycle_is_reported(tmp_path: Path) -> None:
    """repro 10: ``deploy/db`` includes ``../db``: an error at that line (kustomize is not
    run: it would reject the cycle), in a walk too."""
    tree = tmp_path / "repo"
    shutil.copytree(KUSTOMIZE / "cycle", tree)
    (tree / ".git").mkdir()
    run = run_cli("check", "deploy/", "--fail-if-empty", cwd=tree)
    assert run.code == 2, run.out
    assert (
        "deploy/db/kustomization.yaml:4:3: error: resources: '../db' closes an include cycle "
        "(deploy/db -> deploy/db): kustomize rejects it (cycle detected); not built"
    ) in run.out
    run = run_cli("check", "--changed", "deploy/db/sts.yaml", cwd=tree)
    assert run.code == 2 and "cycle" in run.out, run.out


# --- no network ---------------------------------------------------------------------------------


@pytest.mark.skipif(network_guard() is None, reason="no seccomp here")
def test_the_kernel_refuses_renderer_sockets(server: _Server, tmp_path: Path) -> None:
    """Defence in depth: a renderer child cannot open an IPv4 or IPv6 socket at all, even to
    the loopback address; with network allowed (--allow-remote-resources) it can."""
    code = (
        "import socket,sys\n"
        f"s=socket.create_connection(('127.0.0.1',{server.port}),timeout=5)\n"
        "s.sendall(b'GET /from-child HTTP/1.0\\r\\n\\r\\n'); print(s.recv(100))\n"
    )
    env = bounded.scrubbed_environment(str(tmp_path))
    with pytest.raises(bounded.RenderError, match="Permission denied"):
        bounded.run_bounded([sys.executable, "-c", code], what="t", cwd=str(tmp_path), env=env)
    assert server.requests == []
    out = bounded.run_bounded(
        [sys.executable, "-c", code], what="t", cwd=str(tmp_path), env=env, network=True
    )
    assert "200 OK" in out and server.requests == ["/from-child"]


@pytest.mark.skipif(network_guard() is None, reason="no seccomp here")
def test_the_kernel_refuses_every_socket_family_but_local(tmp_path: Path) -> None:
    """A renderer child can open no socket of any family but AF_UNIX: raw packet sockets
    and netlink (which reach the host's interfaces and routing without IP) are refused like
    IPv4 and IPv6, whatever the family number (a family the kernel adds later too); a
    local socket and a socket pair still work (runtimes use them)."""
    families = {
        "AF_INET": int(socket.AF_INET),
        "AF_INET6": int(socket.AF_INET6),
        "AF_PACKET": 17,
        "AF_NETLINK": 16,
        "AF_VSOCK": 40,
        "unknown": 250,
    }
    code = (
        "import socket\n"
        f"for name, family in {sorted(families.items())!r}:\n"
        "    try:\n"
        "        socket.socket(family, socket.SOCK_RAW if name == 'AF_PACKET' else "
        "socket.SOCK_DGRAM).close()\n"
        "        print(name, 'opened')\n"
        "    except OSError as exc:\n"
        "        print(name, 'refused' if exc.errno == 13 else f'other {exc.errno}')\n"
        "socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()\n"
        "a, b = socket.socketpair(); a.close(); b.close()\n"
        "print('AF_UNIX opened')\n"
    )
    env = bounded.scrubbed_environment(str(tmp_path))
    out = bounded.run_bounded([sys.executable, "-c", code], what="t", cwd=str(tmp_path), env=env)
    seen = dict(line.split(" ", 1) for line in out.splitlines())
    assert seen == {**{name: "refused" for name in families}, "AF_UNIX": "opened"}, out


@needs_kubectl
def test_a_generator_url_is_refused_and_never_fetched(
    server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repro 12: ``files: [config=http://127.0.0.1:PORT/secret.txt]`` in a generator file:
    an error at its line; and when the static check is bypassed, the kernel still refuses."""
    repo = _checkout(tmp_path, monkeypatch, "generator-url")
    gen = repo / "kz" / "gen.yaml"
    gen.write_text(gen.read_text().replace("PORT", str(server.port)))
    run = run_cli("check", ".", cwd=repo)
    assert run.code == 2 and "gen.yaml:6:3: error: file: 'http://127.0.0.1:" in run.out
    assert server.requests == []
    if network_guard() is None:
        return
    from ssrisk.renderers import kustomize_refs

    monkeypatch.setattr(kustomize_refs, "file_entries", lambda node: iter(()))
    run = run_cli("check", ".", cwd=repo)
    assert run.code == 2 and "cannot build kustomization" in run.out
    assert "LOOPBACK" not in run.out and server.requests == []


@needs_kubectl
def test_kubectl_never_contacts_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """repro 17: kubectl (or a version dispatcher in front of it) asks no server anything,
    not even the default http://localhost:8080 without a kubeconfig."""
    probe = socket.socket()
    try:
        probe.bind(("127.0.0.1", 8080))
    except OSError:
        probe.close()
        pytest.skip("port 8080 is in use here")
    probe.listen(8)
    probe.settimeout(0.5)
    from ssrisk.renderers import nonet

    try:
        repo = make_checkout(tmp_path, monkeypatch)
        (repo / "kz").mkdir()
        shutil.copy(KUSTOMIZE / "generator-leak" / "sts.yaml", repo / "kz" / "sts.yaml")
        (repo / "kz" / "kustomization.yaml").write_text("resources: [sts.yaml]\n")
        # without the kernel filter too: the kubeconfig alone keeps kubectl away
        nonet.network_guard.cache_clear()
        monkeypatch.setattr(nonet, "network_guard", lambda: None)
        run = run_cli("check", "kz", cwd=repo)
        assert run.code == 0, run.out
        with pytest.raises(TimeoutError):
            conn, _ = probe.accept()
            conn.close()
    finally:
        probe.close()


# --- Helm: every file read for a chart comes from its copy ---------------------------------------


def test_chart_sources_come_from_the_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """repro 5: subchart directory ``charts/real`` named ``evil`` in its Chart.yaml, and
    ``charts/evil`` a link to a chart outside: the template source (and its suppression
    comments) are read from the copy, by chart name, never through the link."""
    from ssrisk.renderers.helm import describe_renderer

    if not describe_renderer():
        pytest.skip("no Helm renderer")
    outside = tmp_path / "outside" / "evilchart" / "templates"
    outside.mkdir(parents=True)
    (outside / "sts.yaml").write_text(
        f"# ssrisk: ignore[not-a-rule-{SECRET}]\napiVersion: apps/v1\nkind: StatefulSet\n"
        f"metadata:\n  name: db\nspec:\n  # ssrisk: ignore[single-replica] {SECRET}\n"
        "  replicas: 1\n"
    )
    repo = make_checkout(tmp_path, monkeypatch)
    chart = repo / "chart"
    (chart / "charts" / "real" / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: top\nversion: 0.1.0\n")
    (chart / "charts" / "real" / "Chart.yaml").write_text(
        "apiVersion: v2\nname: evil\nversion: 0.1.0\n"
    )
    shutil.copy(KUSTOMIZE / "generator-leak" / "sts.yaml", chart / "charts" / "real" / "templates")
    text = (chart / "charts" / "real" / "templates" / "sts.yaml").read_text()
    (chart / "charts" / "real" / "templates" / "sts.yaml").write_text(
        text.replace("    ssrisk.io/ignore: single-replica\n", "").replace(
            "    ssrisk.io/ignore-reason: placeholder\n", ""
        )
    )
    (chart / "charts" / "evil").symlink_to(tmp_path / "outside" / "evilchart")
    run = run_cli("check", "chart", "--fail-on", "info", cwd=repo)
    assert_clean(run.out, run.err)
    assert run.code == 1, run.out  # single-replica is not suppressed by the outside file
    # (a note: the pod declares no port and no claim)
    assert "chart/charts/real/templates/sts.yaml:7:3: info single-replica" in run.out, run.out
    assert "chart/charts/evil/templates" not in run.out


def test_a_path_through_a_directory_link_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """repro 1: ``deploy -> /outside`` in the checkout: ``check deploy/`` and ``check
    deploy/leak.yaml`` refuse the outside file (the tree is found on the path as written)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / ".git").mkdir()  # an outside repository must not become the tree either
    text = (DATA / "robust" / "good.yaml").read_text().replace("name: db", f"name: o-{SECRET}")
    (outside / "leak.yaml").write_text(text)
    repo = make_checkout(tmp_path, monkeypatch)
    (repo / "linked").symlink_to(outside)
    for path in ("linked/", "linked", "linked/leak.yaml"):
        for fmt in ("text", "json"):
            run = run_cli("check", path, "--format", fmt, cwd=repo)
            assert run.code == 2, (path, run.out)
            assert_clean(run.out, run.err)
    run = run_cli("check", "linked/leak.yaml", cwd=repo)
    assert "a symbolic link that leads outside the checked tree" in run.out


def test_explicit_paths_into_git_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_checkout(tmp_path, monkeypatch)
    for args in (["check", ".git/config"], ["check", "--changed", ".git/config"]):
        run = run_cli(*args, cwd=repo)
        assert run.code == 2, run.out
        assert_clean(run.out, run.err)
    assert os.path.isfile(repo / ".git" / "config")
