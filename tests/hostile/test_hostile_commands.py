"""No line ssrisk prints can be read as a CI runner's workflow command, whatever names the
repository holds, in every text-like output: ``check`` text (with ``--explain``, whose prose
is wrapped), ``simulate`` text, JUnit and the messages on standard error.

The runner reads two syntaxes on every log line (actions/runner
src/Runner.Common/ActionCommand.cs): ``TryParseV2``, a line that starts with ``::`` after
``TrimStart()`` and has a second ``::``, and ``TryParse``, ``##[`` anywhere followed by a
``]``. :func:`runner_command` is a port of both, stricter than the runner (any command name).
"""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import DATA, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ssrisk.reporters.escape import json_text, no_surrogates, printable_block, safe_lines

NAMES = DATA / "hostile" / "names"
#: .NET's char.IsWhiteSpace, which String.TrimStart() strips (Zs, Zl, Zp, \t-\r, U+0085).
_DOTNET_WHITESPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
_DOTNET_WHITESPACE += "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def runner_command(line: str) -> str | None:
    """The command the runner would read in ``line`` (any name), else ``None``."""
    trimmed = line.lstrip(_DOTNET_WHITESPACE)
    if trimmed.startswith("::") and trimmed.find("::", 2) >= 0:
        return trimmed[2 : trimmed.find("::", 2)].split(" ")[0] or "(empty)"
    start = line.find("##[")
    if start >= 0 and line.find("]", start) >= 0:
        return line[start + 3 : line.find("]", start)].split(" ")[0] or "(empty)"
    return None


def commands_in(text: str) -> list[str]:
    # the runner splits the log at line feeds (a CR is escaped anyway)
    return [ln for ln in text.split("\n") if runner_command(ln) is not None]


def test_the_port_reads_what_the_runner_reads() -> None:
    assert runner_command("::add-mask::x") == "add-mask"
    assert runner_command(" \u2003 ::error file=a::b") == "error"
    assert runner_command("text ##[add-mask]secret") == "add-mask"
    assert runner_command("\\::add-mask::x") is None
    assert runner_command("text ##\\[add-mask]secret") is None


def test_safe_lines_neutralises_both_syntaxes_after_formatting() -> None:
    text = "ok\n    ::add-mask::s3cr3t-0 x\n\u2003::error::y\nname ##[stop-commands]z\n\x1b[31m"
    safe = safe_lines(text)
    assert commands_in(safe) == []
    assert safe.split("\n")[1] == "    \\::add-mask::s3cr3t-0 x"
    assert "##\\[stop-commands]z" in safe and "\\x1b[31m" in safe
    assert safe.count("\n") == text.count("\n")  # the layout is kept
    assert printable_block("a\tb") == "a\tb"


def test_json_text_has_no_lone_surrogates() -> None:
    dumped = json.dumps({"path": "c\udcff.yaml", "name": "x\ud800"}, ensure_ascii=False)
    text = json_text(dumped)
    assert json.loads(text) == {"path": "c\\xff.yaml", "name": "x\\ud800"}
    text.encode("utf-8")  # strict: no surrogate left
    assert no_surrogates("c\udcff.yaml") == "c\\xff.yaml"


def _all_outputs(manifest: Path, tmp_path: Path) -> dict[str, str]:
    """Every text-like output of ssrisk for ``manifest``."""
    outs: dict[str, str] = {}
    run = run_cli("check", str(manifest), "--explain")
    outs["check text --explain"] = run.out
    outs["check stderr"] = run.err
    run = run_cli("simulate", str(manifest), "--scenario", "node-loss", "--scenario", "node-drain")
    outs["simulate text"] = run.out
    outs["simulate stderr"] = run.err
    run = run_cli("check", str(manifest), "--format", "junit")
    outs["junit"] = run.out
    return outs


@pytest.mark.parametrize(
    "name", ["simulate-commands.yaml", "wrapped-command.yaml", "legacy-command.yaml"]
)
def test_repository_names_never_become_commands(name: str, tmp_path: Path) -> None:
    for what, text in _all_outputs(NAMES / name, tmp_path).items():
        assert commands_in(text) == [], what
        assert "\x1b" not in text, what


def test_simulate_escapes_names_and_file_names(tmp_path: Path) -> None:
    run = run_cli("simulate", str(NAMES / "simulate-commands.yaml"))
    assert run.code == 0, run.err
    assert "db\\n::add-mask::s3cr3t\\n::error file=x::injected \\x1b[31mred" in run.out
    tree = tmp_path / "d"
    tree.mkdir()
    (tree / "x\n::add-mask::s3cr3t\n::error file=a::pwned\x1b[31m.yaml").write_text("a: [\n")
    run = run_cli("simulate", str(tree))
    assert run.code == 2
    assert commands_in(run.out + run.err) == [] and "\x1b" not in run.out
    assert "x\\n::add-mask::s3cr3t\\n::error file=a::pwned\\x1b[31m.yaml:2:1: error" in run.out


def test_explain_wrapping_does_not_start_a_command_line() -> None:
    # (its one pod serves and stores nothing: the single-replica finding is a note)
    run = run_cli("check", str(NAMES / "wrapped-command.yaml"), "--explain", "--fail-on", "info")
    assert run.code == 1
    # the name was wrapped onto a line of its own, and that line is escaped
    assert "\\::add-mask::s3cr3t-0" in run.out
    assert commands_in(run.out) == []


def test_the_legacy_syntax_is_escaped_in_text_and_kept_out_of_github_data() -> None:
    run = run_cli("check", str(NAMES / "legacy-command.yaml"))
    assert "db ##\\[add-mask]error-0" in run.out and commands_in(run.out) == []
    # github: every line is one of ssrisk's own annotations, which the runner reads with
    # TryParseV2 first, so a ##[ in its data is never read as a command of its own
    run = run_cli("check", str(NAMES / "legacy-command.yaml"), "--format", "github")
    for line in run.out.splitlines()[:-1]:
        assert runner_command(line) in ("error", "warning", "notice"), line


@pytest.mark.parametrize("fmt", ["junit", "text", "json", "sarif", "github"])
def test_noncharacters_do_not_break_any_format(fmt: str, tmp_path: Path) -> None:
    """U+FFFF in an object name and in a file name: JUnit is still written (to standard
    output and to a file), every other format too."""
    out = tmp_path / "report.out"
    run = run_cli("check", str(NAMES / "xml-invalid.yaml"), "--format", fmt, "-o", str(out))
    assert run.code == 1, run.err
    text = out.read_text(encoding="utf-8")
    if fmt not in ("json", "sarif"):  # (JSON holds it as data)
        assert "\uffff" not in text
    if fmt == "junit":
        ET.fromstring(text)
        assert "db\\uffff" in text
    tree = tmp_path / "d"
    tree.mkdir()
    shutil.copy(NAMES / "xml-invalid.yaml", tree / "x\uffff.yaml")
    run = run_cli("check", str(tree), "--format", fmt)
    assert run.code == 1 and "internal error" not in run.err, run.err
    if fmt == "junit":
        ET.fromstring(run.out)


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_never_holds_a_lone_surrogate(fmt: str, tmp_path: Path) -> None:
    """A file name that is not UTF-8: strict JSON parsers reject lone surrogates, so the
    byte is written as the text \\xff, as in every other format."""
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(DATA / "robust" / "good.yaml", os.path.join(os.fsencode(tree), b"c\xff.yaml"))
    out = tmp_path / f"report.{fmt}"
    run = run_cli("check", str(tree), "--format", fmt, "-o", str(out))
    assert run.code == 0, run.err
    raw = out.read_bytes()
    raw.decode("utf-8", "strict")
    assert b"\\\\udc" not in raw and b"\\udc" not in raw
    doc = json.loads(raw)
    if fmt == "json":  # shown as the text \xff
        assert doc["findings"][0]["path"].endswith("c\\xff.yaml")
    baseline = tmp_path / "baseline.json"
    run = run_cli("check", str(tree), "--write-baseline", str(baseline))
    assert b"\\udc" not in baseline.read_bytes()
    run = run_cli("check", str(tree), "--baseline", str(baseline), "--fail-on", "info")
    assert run.code == 0, run.out  # the escaped key still matches the finding


def test_closed_standard_output_is_an_output_error(tmp_path: Path) -> None:
    import subprocess
    import sys

    good = str(DATA / "robust" / "good.yaml")
    code = "import sys; from ssrisk.cli import main; sys.exit(main(sys.argv[1:]))"
    p = subprocess.run(
        [sys.executable, "-c", code, "check", good], stdout=subprocess.DEVNULL, timeout=60
    )
    assert p.returncode == 0
    p = subprocess.run(
        f'"{sys.executable}" -c "{code}" check "{good}" >&-',
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    assert "cannot write text output: standard output: it was closed" in p.stderr
    assert "internal error" not in p.stderr
    out = tmp_path / "r.json"
    p = subprocess.run(
        f'"{sys.executable}" -c "{code}" check "{good}" -o "{out}" >&-',
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["summary"]["statefulsets"] == 1


@pytest.mark.parametrize(
    "command",
    [
        ["rules"],
        ["explain", "single-replica"],
        ["systems"],
        ["simulate", "DATA/robust/good.yaml"],
        ["fix", "--diff", "DATA/robust/good.yaml"],
        ["profile", "DATA/profile/rack-nodes.yaml"],
        ["--version"],
        ["rules", "--help"],
    ],
    ids=lambda c: "-".join(c[:2]).split("/")[0],
)
@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_every_command_says_its_standard_output_failed(command: list[str], redirect: str) -> None:
    """Standard output closed before the start or on a full disk: an error of the output,
    exit 2, never "internal error" (each command but ``check`` writes only there)."""
    import shlex
    import subprocess
    import sys

    if redirect == ">/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    words = [w.replace("DATA", str(DATA)) for w in command]
    code = "import sys; from ssrisk.cli import main; sys.exit(main(sys.argv[1:]))"
    line = shlex.join([sys.executable, "-c", code, *words])
    p = subprocess.run(f"{line} {redirect}", shell=True, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "internal error" not in p.stderr
    assert p.stderr.startswith("ssrisk: error: cannot write to standard output: "), p.stderr
    assert len(p.stderr.splitlines()) == 1, p.stderr


# --- property: random names ----------------------------------------------------------------------

_TRICKY = st.sampled_from(
    [
        *(":", "::", "##[", "]", "#", "[", " ", "\t", "\n", "\r", "\x1b", "\xa0", "\u2003"),
        *("\u3000", "\u2028", "\x85", "add-mask", "error", "x", "-", "ab cd ", "%0A"),
    ]
)
_NAMES = st.lists(
    st.one_of(_TRICKY, st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)),
    min_size=1,
    max_size=12,
).map("".join)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(name=_NAMES, service=_NAMES)
def test_no_output_line_is_a_runner_command(name: str, service: str, tmp_path: Path) -> None:
    manifest = tmp_path / "sts.yaml"
    doc = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name + " " + "y" * 60 + " " + name},  # long: wrapped prose
        "spec": {
            "replicas": 1,
            "serviceName": service,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    manifest.write_text(json.dumps(doc), encoding="utf-8")
    for what, text in _all_outputs(manifest, tmp_path).items():
        assert commands_in(text) == [], (what, name, service)
        assert "\x1b" not in text and "\r" not in text, what
