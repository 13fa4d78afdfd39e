"""The ``ssrisk`` command line: ``check``, ``simulate``, ``rules`` and ``explain``."""

from __future__ import annotations

import argparse
import errno
import functools
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from . import __version__
from .embedded_sim import DESCRIPTIONS, SCENARIOS
from .exitcodes import ExitCode
from .model import Severity
from .rule import Rule
from .settings import DEFAULT_KUBE_VERSION

if TYPE_CHECKING:
    from .engine import Report
    from .reporters import Reporter


class UsageError(Exception):
    """A bad command line or setting (exit code 2)."""


def kube_version(value: str) -> str:
    """Validate ``1.NN`` or ``1.NN.P`` with 25 ≤ NN ≤ 37 (argparse type)."""
    from .settings import normal_kube_version

    try:
        return normal_kube_version(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _as_configured(value: str, key: str, expected: str) -> str:
    """``value`` when the configuration's ``key`` would take it (the pattern and length its
    schema sets for a string: an option takes what its key takes), else argparse's error
    ``expected EXPECTED, got 'VALUE'``."""
    import re

    from .config import config_schema

    node = config_schema()["properties"][key]
    node = node.get("items", node)  # (a list's items)
    if len(value) <= node["maxLength"] and re.fullmatch(node["pattern"], value):
        return value
    from .reporters.escape import printable

    raise argparse.ArgumentTypeError(f"expected {expected}, got '{printable(value)}'")


def _namespace(value: str) -> str:
    """``--namespace``: a namespace the API server would take, a DNS-1123 label
    (pkg/apis/core/validation/validation.go#ValidateNamespaceName), as the configuration's
    ``namespace`` (argparse type)."""
    return _as_configured(
        value,
        "namespace",
        "a namespace (a DNS-1123 label, as the API server takes it: lower-case letters, "
        "digits and '-', starting and ending with a letter or digit, at most 63 characters)",
    )


def _helm_set(value: str) -> str:
    """``--set``: ``KEY=VALUE`` as helm --set takes it, a key before the first ``=``
    (argparse type; helm refused ``a`` only when a chart was rendered, and a plain file's
    run took it unsaid)."""
    key, eq, _rest = value.partition("=")
    if eq and key.strip():
        return value
    from .reporters.escape import printable

    raise argparse.ArgumentTypeError(
        f"expected KEY=VALUE (as helm --set takes it), got '{printable(value)}'"
    )


def _api_version(value: str) -> str:
    """``--api-versions``: GROUP/VERSION[/KIND] as the configuration's ``api-versions:``
    takes it (argparse type)."""
    return _as_configured(
        value,
        "api-versions",
        "GROUP/VERSION[/KIND] (as the configuration's api-versions: takes it)",
    )


def _jobs(value: str) -> int:
    """``--jobs``: a whole number ≥ 0 (argparse type)."""
    try:
        jobs = int(value)
    except ValueError:
        jobs = -1
    if jobs < 0:
        raise argparse.ArgumentTypeError(f"--jobs takes a whole number ≥ 0, not {value!r}")
    return jobs


def _seconds(value: str) -> float:
    """``--render-timeout``, ``--render-budget``: a number of seconds > 0 (argparse type)."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < 1e6:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, not {value!r}")
    return seconds


def _severity(value: str) -> Severity:
    try:
        return Severity.parse(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class _FormatAction(argparse.Action):
    """``--format F``: adds ``[F, None]`` to ``outputs`` (``--output`` fills in the file)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        outputs = list(getattr(namespace, self.dest, None) or [])
        outputs.append([str(values), None])
        setattr(namespace, self.dest, outputs)


class _OutputAction(argparse.Action):
    """``--output FILE``: the file of the ``--format`` just before (or of the default one)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        outputs = list(getattr(namespace, self.dest, None) or [])
        if not outputs or outputs[-1][1] is not None:
            outputs.append([None, str(values)])  # the default format, to FILE
        else:
            outputs[-1][1] = str(values)
        setattr(namespace, self.dest, outputs)


#: ``--output FILE`` without ``--format``: the format its name ends with (longest first).
FORMAT_BY_SUFFIX = (
    (".sarif.json", "sarif"),
    (".sarif", "sarif"),
    (".json", "json"),
    (".xml", "junit"),
    (".md", "markdown"),
    (".txt", "text"),
    (".log", "text"),
)


def _format_of_file(dest: str) -> str:
    """The format an ``--output`` file name asks for (``x.sarif`` is SARIF, ...).

    Raises:
        UsageError: the name ends with none of :data:`FORMAT_BY_SUFFIX`.
    """
    name = dest.lower()
    for suffix, fmt in FORMAT_BY_SUFFIX:
        if name.endswith(suffix):
            return fmt
    known = ", ".join(f"{suffix} {fmt}" for suffix, fmt in FORMAT_BY_SUFFIX)
    raise UsageError(
        f"--output {dest}: cannot tell the format from the file name ({known}); "
        "put --format FORMAT before --output"
    )


def _resolve_outputs(
    outputs: list[list[str | None]] | None, known: Sequence[str], baseline: str | None = None
) -> list[tuple[str, str | None]]:
    """``(format, file or None for stdout)`` pairs.

    An ``--output FILE`` without its own ``--format`` takes the format from the file name
    (:data:`FORMAT_BY_SUFFIX`); standard output gets ``github`` when ``GITHUB_ACTIONS=true``,
    else ``text``.

    Raises:
        UsageError: an unknown format, an output file name that names no format, two formats
            both written to standard output, or one file named for two outputs (the
            ``--write-baseline`` file included).
    """
    import os

    default = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
    pairs: list[tuple[str, str | None]] = []
    for fmt, dest in outputs or [[None, None]]:
        to_stdout = dest is None or dest == "-"
        if fmt is not None:  # ('' too: "unknown format ''", not the default)
            chosen = fmt
        else:
            chosen = default if to_stdout or dest is None else _format_of_file(dest)
        if chosen not in known:
            where = "argument --format: " if fmt is not None else ""
            raise UsageError(f"{where}unknown format {chosen!r}; choose from: {', '.join(known)}")
        pairs.append((chosen, None if to_stdout else dest))
    if sum(1 for _fmt, dest in pairs if dest is None) > 1:
        raise UsageError(
            "more than one --format writes to standard output: give each but one --output FILE"
        )
    named = [(dest, f"the {fmt} output") for fmt, dest in pairs if dest is not None]
    if baseline:
        named.append((baseline, "--write-baseline"))
    seen: dict[str, str] = {}
    for dest, what in named:
        key = os.path.normcase(os.path.realpath(dest))
        if key in seen:
            raise UsageError(f"{dest} is named for {seen[key]} and {what}: give each its own file")
        seen[key] = what
    return pairs


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose "unrecognized arguments" error names the closest option of
    any command (``--kube-verison``: did you mean '--kube-version'?)."""

    #: Built with one command's parser only (:func:`build_parser`).
    partial = False

    def _print_message(self, message: str, file: Any = None) -> None:
        # argparse drops an OSError of --help and --version: standard output closed or on a
        # full disk is said as for every command (a reader that stopped early is not)
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
        except BrokenPipeError:
            pass
        except (OSError, AttributeError) as exc:
            if stream is not sys.stdout:
                return
            raise StandardOutputError.of(exc) from None

    def error(self, message: str) -> NoReturn:
        from .names import closest

        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            every = build_parser() if self.partial else self
            known = sorted(_option_strings(every))
            owners = _option_commands(every)
            hints = []
            for word in message[len(prefix) :].split():
                option = word.split("=", 1)[0]
                near = closest(option, known) if word.startswith("--") else None
                if near == option:  # an option of another command
                    hints.append(f"{option} is an option of {' and '.join(owners[option])}")
                elif near is not None:
                    hints.append(f"{word}: did you mean {near}?")
            if hints:
                message += f" ({'; '.join(hints)})"
        super().error(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every option it adds, and each measured the terminal
        # through shutil (whose import, with its compression modules, was 2 ms of a start)
        make = cast(Any, self.formatter_class)  # (typeshed's protocol names prog only)
        formatter = make(prog=self.prog, width=_terminal_columns() - 2)
        color = getattr(self, "color", None)  # (Python 3.14's coloured help)
        if color is not None and hasattr(formatter, "_set_color"):
            formatter._set_color(color)
        return cast(argparse.HelpFormatter, formatter)


@functools.cache
def _terminal_columns() -> int:
    """The terminal's width in columns as argparse measures it (``shutil.
    get_terminal_size``): ``$COLUMNS``, else the width of the terminal on standard output,
    else 80."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


def _option_strings(parser: argparse.ArgumentParser) -> set[str]:
    """The long options of ``parser`` and of its commands."""
    out: set[str] = set()
    for action in parser._actions:
        out.update(o for o in action.option_strings if o.startswith("--"))
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out |= _option_strings(sub)
    return out


def _option_commands(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Each long option of the commands of ``parser`` -> the commands that take it
    (``'ssrisk simulate'``)."""
    out: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                for option in _option_strings(sub):
                    out.setdefault(option, []).append(f"'ssrisk {name}'")
    return out


#: The commands, in the order ``ssrisk --help`` lists them.
COMMANDS = ("check", "simulate", "fix", "rules", "explain", "systems", "profile")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command. No parser takes an abbreviated option (``--exc=x`` is
    not ``--exclude=x``: a file name that is a prefix of an option must not become one), and
    ``--`` ends the options before the PATHs of ``check`` and ``simulate``.

    With ``command`` (one of :data:`COMMANDS`), only that command's parser is added: the
    arguments after the command parse the same, and the others' parsers (about 5 ms of each
    start) are not built. An error's hints still name every command's options."""

    def wanted(name: str) -> bool:
        return command is None or command == name

    parser = _Parser(
        prog="ssrisk",
        description="Find StatefulSets that will not fail over the way you think.",
        allow_abbrev=False,
    )
    parser.partial = command is not None
    parser.add_argument("--version", action="version", version=f"ssrisk {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    if wanted("check") or wanted("simulate") or wanted("fix"):
        common = _common_options()
        for name, add in (("check", _add_check), ("simulate", _add_simulate), ("fix", _add_fix)):
            if wanted(name):
                add(sub, common)
    if wanted("rules"):
        _add_listings(sub)
    if wanted("explain"):
        e = sub.add_parser("explain", allow_abbrev=False, help="print the documentation of a rule")
        e.add_argument("rule", metavar="RULE-ID")
    if wanted("systems"):
        _add_systems(sub)
    if wanted("profile"):
        _add_profile(sub)
    return parser


def _add_listings(sub: Any) -> None:
    r = sub.add_parser("rules", allow_abbrev=False, help="list the rules")
    r.add_argument(
        "--format",
        choices=["text", "json", "markdown"],
        default="text",
        help="markdown: a table of id, severities and summary (docs/rules/index.md has it)",
    )


def _add_systems(sub: Any) -> None:
    y = sub.add_parser(
        "systems",
        allow_abbrev=False,
        help="list the catalog of stateful systems ssrisk recognises (rules/systems/)",
    )
    y.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="json: every entry with its facts and their sources",
    )


def _add_profile(sub: Any) -> None:
    pr = sub.add_parser(
        "profile",
        allow_abbrev=False,
        help="print a .ssrisk.yaml cluster profile made from saved kubectl get nodes output",
        description="Read the output of 'kubectl get nodes -o yaml' (or -o json) from FILE, "
        "or - for standard input, and print a .ssrisk.yaml document whose profile holds the "
        "cluster's node pools (zones, labels, taints, allocatable), the newest kubelet's "
        "version and, with --storage-classes, the default StorageClass. ssrisk never "
        "contacts a cluster.",
    )
    pr.add_argument("nodes", metavar="FILE", help="kubectl get nodes -o yaml output, or -")
    pr.add_argument(
        "--storage-classes",
        metavar="FILE",
        default=None,
        help="kubectl get storageclass -o yaml output (the default class's storage)",
    )


def _common_options() -> argparse.ArgumentParser:
    """The options ``check`` and ``simulate`` share (a parent parser)."""
    common = _Parser(add_help=False, allow_abbrev=False)
    common.add_argument(
        "--kube-version",
        type=kube_version,
        default=None,  # None: from the configuration file, else DEFAULT_KUBE_VERSION
        help="Kubernetes version whose defaults to use (1.25 to 1.37, optionally 1.NN.P; "
        f"default {DEFAULT_KUBE_VERSION})",
    )
    common.add_argument(
        "--namespace",
        type=_namespace,
        default=None,  # None: from the configuration file, else "default"
        help="namespace of objects that name none (default: default)",
    )
    common.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files and directories matching GLOB (repeatable)",
    )
    common.add_argument(
        "--values",
        action="append",
        default=[],
        dest="helm_values",
        metavar="FILE",
        help="Helm values file for every chart rendered (repeatable; later files win)",
    )
    common.add_argument(
        "--set",
        action="append",
        type=_helm_set,
        default=[],
        dest="helm_set",
        metavar="KEY=VALUE",
        help="Helm value for every chart rendered, as helm --set (repeatable)",
    )
    common.add_argument(
        "--api-versions",
        action="append",
        type=_api_version,
        default=[],
        dest="helm_api_versions",
        metavar="GROUP/VERSION[/KIND]",
        help="an API version charts' .Capabilities.APIVersions.Has answers true, beside the "
        "built-in ones of --kube-version (CRD groups; repeatable), as helm --api-versions",
    )
    common.add_argument(
        "--render-timeout",
        type=_seconds,
        default=None,  # None: ssrisk.renderers.bounded.RENDER_TIMEOUT_S
        metavar="SECONDS",
        help="stop a Helm or kustomize render after SECONDS (default 60)",
    )
    common.add_argument(
        "--render-budget",
        type=_seconds,
        default=None,  # None: ssrisk.renderers.runbudget.RENDER_BUDGET_S
        metavar="SECONDS",
        help="wall-clock SECONDS all renders of this run may take together (default 600)",
    )
    common.add_argument(
        "--allow-remote-resources",
        action="store_true",
        help="let kustomize fetch remote resources (git, HTTP); refused by default",
    )

    return common


def _add_check(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``check`` command's parser."""
    p = sub.add_parser(
        "check",
        parents=[common],
        allow_abbrev=False,
        help="report failover risks of every StatefulSet in PATHs",
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files, directories (Helm charts and kustomizations are rendered), or - for stdin",
    )
    p.add_argument(
        "--format",
        action=_FormatAction,
        dest="outputs",
        metavar="FORMAT",
        help="text (default; github when GITHUB_ACTIONS=true), json, sarif, junit, github or "
        "markdown (a job summary with the worst failover drawn); repeatable, each optionally "
        "followed by --output FILE",
    )
    p.add_argument(
        "--output",
        "-o",
        action=_OutputAction,
        dest="outputs",
        metavar="FILE",
        help="write the --format given just before to FILE instead of standard output",
    )
    p.add_argument(
        "--config",
        metavar="FILE",
        help="configuration file for every PATH (default: each PATH's own .ssrisk.yaml or "
        "[tool.ssrisk] in pyproject.toml, found by walking up from it, else from the working "
        "directory)",
    )
    p.add_argument(
        "--context",
        action="append",
        default=[],
        metavar="PATH",
        help="also load PATH for related objects (PDBs, Services, StorageClasses) without "
        "checking its StatefulSets (repeatable; for objects kept in other directories, e.g. "
        "args: [--context, cluster/storage/, --] in the pre-commit hook)",
    )
    p.add_argument(
        "--changed",
        action="store_true",
        help="PATHs are the changed files of a commit (the pre-commit hook): check each as part "
        "of its chart, kustomization or directory and report only what the change concerns",
    )
    p.add_argument(
        "--show-suppressed", action="store_true", help="list suppressed findings in text output"
    )
    p.add_argument(
        "--write-baseline",
        metavar="FILE",
        help="record today's findings in FILE (findings then do not fail the run)",
    )
    baselines = p.add_mutually_exclusive_group()
    baselines.add_argument("--baseline", metavar="FILE", help="report only findings not in FILE")
    baselines.add_argument(
        "--no-baseline",
        action="store_true",
        help="ignore the configuration's baseline: and report every finding",
    )
    p.add_argument(
        "--fail-if-empty",
        action="store_true",
        help="exit 2 when the inputs hold no Kubernetes object ssrisk reads (default: a warning)",
    )
    p.add_argument("--explain", action="store_true", help="print the explanation of each finding")
    p.add_argument(
        "--fixes",
        action="store_true",
        help="give each finding the smallest manifest change verified to remove it "
        "(JSON 'fix', SARIF fixes, --explain); 'ssrisk fix' applies them",
    )
    p.add_argument(
        "--fail-on",
        type=_severity,
        default=None,  # None: from the configuration file, else error
        metavar="SEVERITY",
        help="exit 1 when a finding has at least this severity: error (default), warning, info",
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    p.add_argument(
        "--jobs",
        type=_jobs,
        default=0,
        metavar="N",
        help="worker processes for large inputs (default 0: one per idle core when the first "
        "StatefulSets show that the rest is worth it; 1: none)",
    )
    _add_rule_selection(p)


def _add_rule_selection(p: argparse.ArgumentParser) -> None:
    """``--disable`` and ``--select``."""
    p.add_argument(
        "--disable",
        action=_RuleListAction,
        default=[],
        metavar="RULE[,RULE...]",
        help="skip these rules (repeatable, or comma-separated)",
    )
    p.add_argument(
        "--select",
        action=_RuleListAction,
        default=[],
        metavar="RULE[,RULE...]",
        help="run only these rules (repeatable, or comma-separated)",
    )


class _RuleListAction(argparse.Action):
    """``--select``/``--disable``: repeatable, each value a rule id or a comma-separated list
    of them (``--select a,b`` as ruff takes it)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        ids = [part.strip() for part in str(values).split(",") if part.strip()]
        if not ids:  # (an empty $RULES in a script had selected every rule, without a word)
            parser.error(f"argument {option_string}: expected a rule id, got {str(values)!r}")
        setattr(namespace, self.dest, [*getattr(namespace, self.dest, []), *ids])


def _add_simulate(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``simulate`` command's parser."""
    s = sub.add_parser(
        "simulate",
        parents=[common],
        allow_abbrev=False,
        help="print the simulated failover timeline of StatefulSets",
        epilog="scenarios:\n"
        + "\n".join(f"  {name}: {text}" for name, text in DESCRIPTIONS.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("paths", nargs="+", metavar="PATH")
    s.add_argument(
        "--scenario",
        action="append",
        default=[],
        metavar="NAME",
        help="scenario, repeatable (default: node loss as the profile's node-remediation "
        "handles it, node-loss when it is none): " + ", ".join(SCENARIOS),
    )
    s.add_argument(
        "--format",
        choices=["text", "json", "markdown"],
        default="text",
        help="text (default), json, or markdown: each result's pods drawn as a Mermaid gantt",
    )
    s.add_argument(
        "--config",
        metavar="FILE",
        help="configuration file whose kube-version, profile and feature-gates to use "
        "(default: found as for check)",
    )


def say(message: str) -> None:
    """One of ssrisk's own messages on standard error, made safe to print
    (:func:`ssrisk.reporters.escape.safe_lines`: it may quote the repository)."""
    from .reporters.escape import safe_lines

    print(safe_lines(message), file=sys.stderr)


class _ClosedStream:
    """Stands for a standard stream that was closed before ssrisk started (``>&-``):
    writing to it is an error of that output, never a crash."""

    closed_at_start = True

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "it was closed before ssrisk started")

    def flush(self) -> None:
        return None

    def fileno(self) -> int:
        raise OSError(errno.EBADF, "it was closed before ssrisk started")

    def isatty(self) -> bool:
        return False


#: Whether the cyclic garbage collector was paused for start-up by the ``ssrisk`` command
#: (:mod:`ssrisk.__main__`), to resume when it ends (:func:`started`).
_collection_paused = False


def started() -> None:
    """The end of start-up (the rules and formats are registered): resume the collector if
    the ``ssrisk`` command paused it, with what start-up made frozen (never scanned again)."""
    global _collection_paused
    if _collection_paused:
        import gc

        _collection_paused = False
        gc.freeze()
        gc.enable()


def main(argv: Sequence[str] | None = None, *, collection_paused: bool = False) -> int:
    """Entry point. Returns the exit code (see :class:`ssrisk.exitcodes.ExitCode`).

    ``collection_paused``: the caller paused the cyclic garbage collector, which was on, for
    start-up; it is resumed once the rules are registered (:func:`started`)."""
    import os

    global _collection_paused
    _collection_paused = collection_paused

    if sys.stderr is None:  # closed (2>&-): ssrisk's messages go nowhere
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if sys.stdout is None:  # closed (>&-): an output to it fails, outputs to files do not
        sys.stdout = cast(TextIO, _ClosedStream())
    for stream in (sys.stdout, sys.stderr):
        # undecodable bytes of file names (and any character the terminal's encoding lacks)
        # are written as backslash escapes, never an encoding error
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    previous = _on_sigterm(_terminate)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        say("ssrisk: interrupted")
        return 130
    except Terminated:
        say("ssrisk: terminated")
        return 128 + 15
    except BrokenPipeError:  # a reader that stopped early (check keeps its own exit code)
        _drop_stdout(sys.stdout)
        return ExitCode.OK  # (as when the output fitted the pipe before the reader left)
    except StandardOutputError as exc:
        _drop_stdout(sys.stdout)
        from .reporters.escape import printable

        say(f"ssrisk: error: cannot write to standard output: {printable(exc.strerror or '')}")
        return ExitCode.ERROR
    except Exception as exc:  # the last guard: never a traceback to the user
        return _internal_error(exc)
    finally:
        _on_sigterm(previous)


def _internal_error(exc: Exception) -> int:
    """Say that ``exc`` is ssrisk's bug (re-raised with ``SSRISK_DEBUG`` set, for the
    traceback); returns the exit code."""
    from .envflags import env_flag
    from .reporters.escape import printable

    say(
        f"ssrisk: internal error: {type(exc).__name__}: {printable(str(exc))}\n"
        "This is a bug in ssrisk; please report it with the input that caused it "
        "(run with SSRISK_DEBUG=1 for the traceback)."
    )
    if env_flag("SSRISK_DEBUG"):
        raise exc
    return ExitCode.ERROR


class StandardOutputError(OSError):
    """Standard output could not be written (closed before ssrisk started, a full disk, an
    I/O error): the error of the command's output, not a bug."""

    @classmethod
    def of(cls, exc: BaseException) -> StandardOutputError:
        """The error for ``exc``, raised by a write to standard output."""
        code = getattr(exc, "errno", None) or errno.EBADF
        return cls(code, getattr(exc, "strerror", None) or str(exc))


class _GuardedOutput:
    """Standard output as given to every command but ``check`` (which tells each output's
    error apart and goes on with the others): a write or flush that fails raises
    :class:`StandardOutputError` (a broken pipe stays ``BrokenPipeError``: a reader that
    stopped early)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StandardOutputError.of(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise StandardOutputError.of(exc) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Terminated(BaseException):
    """SIGTERM arrived. Raised where the main process is, like KeyboardInterrupt for
    SIGINT, so that on the way out renderer children are killed, worker processes ended and
    temporary files removed; not an ``Exception``, so no ``except Exception`` swallows it."""


def _terminate(signum: int, frame: object) -> None:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not stop the clean-up
    raise Terminated


def _on_sigterm(handler: Any) -> Any:
    """Install ``handler`` for SIGTERM; returns the previous one (``None`` off the main
    thread, where signals cannot be handled)."""
    import signal

    if handler is None:
        return None
    try:
        return signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        return None


def ambiguous_option(argv: Sequence[str]) -> str | None:
    """The first token before ``--`` that starts with ``-`` and is also the name of an
    entry of the working directory (a file, directory, link or FIFO), else ``None``; none
    at all when the command line has a ``--`` and no entry of the working directory is
    named ``--``.

    pre-commit and ``xargs`` append the names of the repository's files to the command
    line: a committed file named ``--exclude=*.yaml`` would otherwise be read as that
    option. With ``--`` the file names come after it, and the options before it are the
    caller's own (the hook's, the Action's): a repository's file named ``--changed`` made
    every run of the hook fail. Unless the repository holds a file named ``--`` too, which
    an unsorted file list could put after its option-like names: then the tokens before
    the first ``--`` are looked at, as without one. The entry is looked up with ``lstat``
    only (no link followed, nothing opened or read); ``-`` (standard input) is never an
    option and is not looked up."""
    import os

    if "--" in argv and not os.path.lexists("--"):
        return None
    for token in argv:
        if token == "--":
            return None
        if not token.startswith("-") or token == "-":
            continue
        try:
            os.lstat(token)
        except (OSError, ValueError):  # no such entry, a name too long, a NUL byte
            continue
        return token
    return None


#: The options that name one file (or several), by their ``argparse`` destination.
_FILE_OPTIONS = {
    "config": "--config",
    "baseline": "--baseline",
    "write_baseline": "--write-baseline",
    "helm_values": "--values",
    "nodes": "FILE",
    "storage_classes": "--storage-classes",
}


#: The options (and positional arguments) that take no empty value, by their ``argparse``
#: destination: their name and what they expect. Each was taken as the option not given
#: (``--select ''`` as every rule) or matched nothing, without a word;
#: ``check ''`` read as an input error about a file named ``\``.
_NON_EMPTY_VALUES = {
    "paths": ("PATH", "a file or directory, or - for standard input"),
    "context": ("--context", "a file or directory"),
    "exclude": ("--exclude", "a glob"),
    "scenario": ("--scenario", "a scenario name"),
}


def _empty_value(args: argparse.Namespace) -> tuple[str, str] | None:
    """``(option, what it expects)`` of the first option given an empty value, else
    ``None``."""
    for dest, option in _NON_EMPTY_VALUES.items():
        value = getattr(args, dest, None)
        if value == "" or (isinstance(value, list) and "" in value):
            return option
    return None


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """The parser of ``args``' command (its errors print that command's usage, as argparse's
    own do), else ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(str(getattr(args, "command", "")), parser)
    return parser


def _empty_file_name(args: argparse.Namespace) -> str | None:
    """The option given an empty file name, else ``None`` (an empty name was taken as the
    option not given: ``--baseline ''`` reported every finding and ``--write-baseline ''``
    wrote nothing, both without a word)."""
    for dest, option in _FILE_OPTIONS.items():
        value = getattr(args, dest, None)
        if value == "" or (isinstance(value, list) and "" in value):
            return option
    for _fmt, file in getattr(args, "outputs", None) or []:
        if file == "":
            return "--output"
    return None


def _main(argv: Sequence[str] | None) -> int:
    tokens = list(sys.argv[1:] if argv is None else argv)
    token = ambiguous_option(tokens)
    if token is not None:
        from .reporters.escape import printable

        command = next((t for t in tokens if not t.startswith("-")), "check")
        say(
            f"ssrisk: error: ambiguous argument {printable(token)}: it is an option and also names "
            "a file or directory here; put -- before the file names "
            f"(ssrisk {command if command == 'simulate' else 'check'} [OPTIONS] -- FILE...)"
        )
        return ExitCode.ERROR
    parser = build_parser(tokens[0] if tokens and tokens[0] in COMMANDS else None)
    args = parser.parse_args(tokens)
    empty = _empty_file_name(args)
    if empty is not None:
        _command_parser(parser, args).error(f"argument {empty}: expected a file name, got ''")
    empty_value = _empty_value(args)
    if empty_value is not None:
        option, expected = empty_value
        _command_parser(parser, args).error(f"argument {option}: expected {expected}, got ''")
    for option in ("baseline", "write_baseline"):  # ('-' is standard output for --output)
        if getattr(args, option, None) == "-":
            name = option.replace("_", "-")
            _command_parser(parser, args).error(
                f"argument --{name}: expected a file name, got '-'; name a file"
            )
    from .renderers.runbudget import start_run

    start_run(getattr(args, "render_budget", None))
    if args.command is None:
        parser.print_help(sys.stderr)
        return ExitCode.ERROR
    from .baseline import BaselineError
    from .config import ConfigError
    from .plugins import PluginError

    guarded = cast(TextIO, _GuardedOutput(sys.stdout))
    try:
        if args.command == "check":
            return cmd_check(args, sys.stdout)
        if args.command == "simulate":
            return cmd_simulate(args, guarded)
        if args.command == "fix":
            return cmd_fix(args, guarded)
        if args.command == "rules":
            return cmd_rules(args, guarded)
        if args.command == "explain":
            return cmd_explain(args, guarded)
        if args.command == "systems":
            return cmd_systems(args, guarded)
        if args.command == "profile":
            return cmd_profile(args, guarded)
    except (UsageError, PluginError, ConfigError, BaselineError) as exc:
        from .reporters.escape import printable

        for message in getattr(exc, "messages", None) or [str(exc)]:  # a file's problems
            say(f"ssrisk: error: {printable(message)}")
        return ExitCode.ERROR
    parser.error(f"unknown command {args.command}")
    return ExitCode.ERROR  # pragma: no cover


def _add_fix(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``fix`` command's parser."""
    f = sub.add_parser(
        "fix",
        parents=[common],
        allow_abbrev=False,
        help="apply the smallest manifest change verified to remove each finding",
        description="Check PATHs as 'ssrisk check' does, find for each finding the smallest "
        "change of its StatefulSet that the rule, run again (with its simulation), no longer "
        "reports, and make it where the field is written, keeping comments and style: the "
        "plain YAML file; for a kustomize build, a patch in the overlay; for a chart, the "
        "values line that writes the field, else the chart's own template (each rendered "
        "and compared first). A change that needs the owner's decision is printed as advice, "
        "never written; one that cannot be made so is printed as not applied (exit 1).",
    )
    f.add_argument("paths", nargs="+", metavar="PATH")
    f.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    f.add_argument("--config", metavar="FILE", help="configuration file for every PATH")
    f.add_argument(
        "--no-baseline",
        action="store_true",
        help="include the findings the configuration's baseline: lists",
    )
    _add_rule_selection(f)


#: How many times ``ssrisk fix`` checks again after writing fixes (each round fixes what the
#: previous one left; the findings of a round are the fixes' own, so few rounds suffice).
FIX_ROUNDS = 3


def cmd_fix(args: argparse.Namespace, out: TextIO) -> int:
    """``ssrisk fix``: 0 when every fix found was applied (or shown with ``--diff``), 1 when
    some could not be written (rendered StatefulSets), 2 for input errors."""
    from . import run
    from .fixer import unified_diff
    from .reporters.escape import printable, safe_lines

    rules = _load_rules()
    known = {r.id for r in rules}
    for rid in [*args.disable, *args.select]:
        if rid not in known:
            from .names import unknown_rule

            raise UsageError(unknown_rule(rid, known))
    request = run.RunRequest(
        paths=tuple(args.paths),
        config=args.config,
        inputs=_input_options(args),
        select=tuple(args.select),
        disable=tuple(args.disable),
        no_baseline=args.no_baseline,
        fixes=True,
    )
    # A fix can leave a milder finding that has a fix of its own (a budget that now allows
    # one eviction, without an unhealthy-pod policy): written fixes are checked again until
    # nothing more is fixed, so a second 'ssrisk fix' changes nothing.
    done, fixes, applied, undone, cautions = _fix_rounds(request, rules, args.diff)
    written = len(applied)
    for path, rule, summary in applied:
        out.write(safe_lines(printable(f"{path}: {rule}: {summary}") + "\n"))
        caution = cautions.get((rule, summary))
        if caution:
            out.write(safe_lines(printable(f"    before rolling it out: {caution}") + "\n"))
    for path, rule, summary in undone:
        text = (
            f"{path}: {rule}: not applied (written, but still reported after: something the "
            f"build applies later undoes it; put back): {summary}"
        )
        out.write(safe_lines(printable(text) + "\n"))
    for e in done.report.errors:
        say(printable(str(e)))  # ("PATH:LINE:COL: error: ...", as check prints it)
    if args.diff:
        out.write(safe_lines(unified_diff(fixes)))
    _said_fixes(fixes, done.report.findings, written, len(undone), args.diff, out)
    if not written and not fixes.changed and done.report.baselined:
        # (nothing was fixed, and the baseline hid findings: fix said nothing at all)
        say(
            f"ssrisk fix: {done.report.baselined} finding(s) in the configuration's baseline "
            "were left out; --no-baseline includes them"
        )
    if done.report.errors:
        return ExitCode.ERROR
    return ExitCode.FINDINGS if fixes.not_applied or undone else ExitCode.OK


def _fix_rounds(request: Any, rules: Sequence[Rule], diff: bool) -> tuple[Any, ...]:
    """Check, write the fixes, and check again until nothing more is fixed (at most
    :data:`FIX_ROUNDS` writes, each followed by a check): ``(the last run, its planned fixes,
    the fixes written, the fixes put back, {(rule, summary): caution})``.

    A fix still reported after it was written is undone by something the build applies
    later (a kustomize replacement or transformer): every file it wrote is put back, it is
    not tried again, and the other fixes those files held are written again in the next
    round."""
    from . import run
    from .fixer import plan_fixes, write_fixes
    from .outfile import OutputError

    Entry = tuple[str, str, str]
    cautions: dict[tuple[str, str], str] = {}
    applied: list[Entry] = []
    files_of: dict[Entry, set[str]] = {}
    originals: dict[str, str | None] = {}  # each written file before the first write
    undone: list[Entry] = []
    blocked: set[tuple[str, str]] = set()  # (rule, summary) of the fixes put back
    for last in [False] * FIX_ROUNDS + [True]:
        done = run.check(request, rules)
        findings = [
            f
            for f in done.report.findings
            if f.fix is None or (f.rule, f.fix.remedy.summary) not in blocked
        ]
        fixes = plan_fixes(findings)
        cautions.update(
            ((f.rule, f.fix.remedy.summary), f.fix.remedy.caution)
            for f in findings
            if f.fix is not None and f.fix.remedy.caution
        )
        again = [e for e in fixes.applied if e in files_of]
        if again:
            paths = set().union(*(files_of[e] for e in again))
            _put_back(paths, originals)
            undone += [e for e in again if e not in undone]
            blocked.update((rule, summary) for _path, rule, summary in again)
            for entry in [e for e in applied if files_of[e] & paths]:
                applied.remove(entry)  # (put back with it: written again next round)
                del files_of[entry]
            continue
        if diff or not fixes.changed or last:
            break
        for path, (old, _new) in fixes.changed.items():
            originals.setdefault(path, None if path in fixes.created else old)
        try:
            write_fixes(fixes)
        except OutputError as exc:
            raise UsageError(str(exc)) from None
        for entry in fixes.applied:
            if entry not in applied:
                applied.append(entry)
            files_of.setdefault(entry, set()).update(fixes.files_of.get(entry, set()))
    return done, fixes, applied, undone, cautions


def _said_fixes(
    fixes: Any, findings: Sequence[Any], written: int, undone: int, diff: bool, out: TextIO
) -> None:
    """Print what ``ssrisk fix`` did not write (each line once: two findings may share one
    fix) and the counts on standard error (with ``diff``, of the fixes the diff shows)."""
    from .model import Severity
    from .reporters.escape import printable, safe_lines

    said: list[tuple[str, ...]] = []
    for f, why in fixes.not_applied:
        said.append((f"{f.position}: {f.rule}: not applied ({why}): {f.fix.remedy.summary}",))
    for f in fixes.advice:
        head = f"{f.position}: {f.rule}: advice, not written: {f.fix.remedy.summary}"
        said.append((head, f"    {f.fix.remedy.caution}"))
    for lines in dict.fromkeys(said):
        for line in lines:
            out.write(safe_lines(printable(line) + "\n"))
    unfixed = sum(
        1 for f in findings if f.severity >= Severity.WARNING and not f.suppressed and f.fix is None
    )
    not_applied = len({id(f) for f, _why in fixes.not_applied}) + undone
    done = len(fixes.applied) if diff else written  # (--diff: the fixes the diff holds)
    if done or not_applied or fixes.advice or unfixed:
        say(
            f"ssrisk fix: {done} fix(es) {'shown, nothing written' if diff else 'written'}, "
            f"{not_applied} not applied, {len(fixes.advice)} advice; {unfixed} warning(s) or "
            "error(s) have no verified fix ('ssrisk check --explain' says what to do)"
        )


def _put_back(paths: set[str], originals: dict[str, str | None]) -> None:
    """Restore each of ``paths`` as it was before ``ssrisk fix`` wrote it (``None``: it did
    not exist: removed, unless it is no longer a regular file)."""
    import os

    from .outfile import write_file

    for path in paths:
        old = originals.get(path)
        if old is None:
            if os.path.isfile(path) and not os.path.islink(path):
                os.remove(path)
            continue

        def write(fh: TextIO, text: str = old) -> None:
            fh.write(text)

        write_file(path, write)


def _load_rules() -> list[Rule]:
    from .plugins import collect_rules, plugin_manager

    rules = collect_rules(plugin_manager())
    started()
    return rules


def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    import os

    from . import run
    from .plugins import collect_reporters, collect_rules, plugin_manager

    pm = plugin_manager()
    rules = collect_rules(pm)
    started()
    known = {r.id: r.options for r in rules}
    for rid in [*args.disable, *args.select]:
        if rid not in known:
            from .names import unknown_rule

            raise UsageError(unknown_rule(rid, known))
    both = sorted(set(args.select) & set(args.disable))
    if both:
        raise UsageError(f"--select and --disable both name {', '.join(both)}: choose one")
    reporters = collect_reporters(pm)
    outputs = _resolve_outputs(args.outputs, sorted(reporters), args.write_baseline)
    for path in args.context:
        # (lexists: a link is looked at by the loader, which refuses one that leaves the
        # tree the same whether its target exists: saying "no such file" would tell)
        if not os.path.lexists(path):
            raise UsageError(f"--context {path}: no such file or directory")
    by_id = {r.id: r for r in rules}
    writers = [
        (
            fmt,
            dest,
            reporters[fmt](explain=args.explain, rules=by_id, show_suppressed=args.show_suppressed),
        )
        for fmt, dest in outputs
    ]
    request = run.RunRequest(
        paths=tuple(args.paths),
        config=args.config,
        inputs=_input_options(args),
        context=tuple(args.context),
        changed=args.changed,
        fail_on=args.fail_on,
        select=tuple(args.select),
        disable=tuple(args.disable),
        jobs=args.jobs,
        baseline=args.baseline,
        write_baseline=args.write_baseline,
        no_baseline=args.no_baseline,
        fail_if_empty=args.fail_if_empty,
        exit_zero=args.exit_zero,
        explanations=any(w.prints_explanations for _fmt, _dest, w in writers),
        folded_explanations=any(w.prints_folded_explanations for _fmt, _dest, w in writers),
        drawings=any(w.draws_timelines for _fmt, _dest, w in writers),
        fixes=args.fixes,
        outputs=tuple(dest for _fmt, dest, _w in writers if dest is not None),
    )
    refused: tuple[type[Exception], ...] = (run.OutputRefused,)
    if args.changed:  # (the changed-files planner loads on demand)
        from .changed import ChangedError

        refused = (run.OutputRefused, ChangedError)
    try:
        done = run.check(request, rules)
    except refused as exc:
        raise UsageError(str(exc)) from None
    if done.baseline_written is not None:
        from .reporters.escape import printable

        say(f"ssrisk: wrote {done.baseline_written} finding(s) to {printable(args.write_baseline)}")
    written = _write_outputs(writers, out, done.report)
    return done.code if written else ExitCode.ERROR


def _input_options(args: argparse.Namespace) -> dict[str, Any]:
    """The settings ``check`` and ``simulate`` take from their shared options (how inputs are
    read and rendered), for :func:`ssrisk.config.build_settings`."""
    return {
        "kube_version": args.kube_version,
        "namespace": args.namespace,
        "exclude": args.exclude,
        "helm_values": tuple(args.helm_values),
        "helm_set": tuple(args.helm_set),
        "helm_api_versions": tuple(args.helm_api_versions),
        "render_timeout_s": args.render_timeout,
        "allow_remote_resources": args.allow_remote_resources,
    }


def _write_outputs(
    writers: Sequence[tuple[str, str | None, Reporter]], out: TextIO, report: Report
) -> bool:
    """Write ``report`` with each ``(format, file or None for out, reporter)``; every output
    is tried, files through :func:`ssrisk.outfile.write_file` (atomic, never through a link).

    Returns False when one could not be written (a full disk, a missing directory, a link:
    said on standard error). A reader that closes the pipe early (``ssrisk check ... | head``)
    is not a failure: the rest of that output is dropped and the exit code stays the
    findings' one.
    """
    from .outfile import OutputError, write_file

    ok = True
    for fmt, dest, reporter in writers:
        if dest is None:
            try:
                reporter.write(report, out)
                out.flush()
            except BrokenPipeError:
                _drop_stdout(out)
            except OSError as exc:
                _drop_stdout(out)
                ok = _output_failed(fmt, f"standard output: {exc.strerror or exc}")
            continue
        try:
            write_file(dest, functools.partial(reporter.write, report))
        except OutputError as exc:
            ok = _output_failed(fmt, str(exc))
    return ok


def _output_failed(fmt: str, problem: str) -> bool:
    from .reporters.escape import printable

    say(f"ssrisk: error: cannot write {fmt} output: {printable(problem)}")
    return False


def _drop_stdout(out: TextIO) -> None:
    """After a broken pipe or a failed write, point standard output at the null device so
    that the interpreter's flush at exit does not fail again (Python docs, signal module,
    "Note on SIGPIPE")."""
    import os

    if out is not sys.stdout:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def cmd_simulate(args: argparse.Namespace, out: TextIO) -> int:
    from . import run
    from .reporters.escape import json_text, printable, safe_lines
    from .timeline import format_result

    for name in args.scenario:
        if name not in SCENARIOS:
            from .names import closest

            near = closest(name, SCENARIOS)
            hint = f"did you mean {near!r}? " if near else ""
            raise UsageError(
                f"unknown scenario {name!r} ({hint}choose from: {', '.join(SCENARIOS)})"
            )
    request = run.RunRequest(
        paths=tuple(args.paths), config=args.config, inputs=_input_options(args)
    )
    scenarios = list(dict.fromkeys(args.scenario))  # (one named twice is run once)
    done = run.simulate(request, scenarios, {r.id: r.options for r in _load_rules()})
    if not done.statefulsets and not done.errors:
        say("ssrisk: warning: no apps/v1 StatefulSet found in the input")
    if args.format == "json":
        doc = {
            "version": __version__,
            "kube_version": done.kube_version,
            "results": [
                {
                    **r.to_dict(),
                    "path": at.path,
                    "line": at.line,
                    **({"kustomization": at.kustomization} if at.kustomization else {}),
                    **({"variant": at.variant} if at.variant else {}),
                }
                for r, at in zip(done.results, done.positions, strict=True)
            ],
            "errors": [e.to_dict() for e in done.errors],
        }
        out.write(json_text(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n")
    elif args.format == "markdown":
        from .gantt import drawing_of, mermaid_gantt
        from .reporters.markdown import md

        for e in done.errors:
            out.write(safe_lines(f"- {md(str(e))}\n"))
        for r, at in zip(done.results, done.positions, strict=True):
            scope = f", {md(at.scope())}" if at.scope() else ""  # (the overlay, the variant)
            place = f"{md(at.path)}:{at.line}{scope}"
            head = f"### {md(r.scenario)}: {md(f'{r.namespace}/{r.name}')} ({place})"
            title = f"{r.scenario}: {r.namespace}/{r.name}" + (
                f" ({at.scope()})" if at.scope() else ""
            )
            drawing = drawing_of(r, f"{title}, simulated")
            body = f"{head}\n\n{md(r.verdict)}\n\n{mermaid_gantt(drawing)}\n"
            out.write(safe_lines(body))
    else:
        for e in done.errors:
            out.write(safe_lines(f"{printable(str(e))}\n"))
        for r, at in zip(done.results, done.positions, strict=True):
            scope = f" ({at.scope()})" if at.scope() else ""  # (the overlay, the variant)
            out.write(safe_lines(format_result(r, f"{at.path}:{at.line}{scope}")))
    return done.code


def cmd_rules(args: argparse.Namespace, out: TextIO) -> int:
    from .reporters.escape import safe_lines

    rules = _load_rules()
    if args.format == "json":
        json.dump(
            [
                {
                    "id": r.id,
                    "severity": str(r.severity),
                    "severities": [str(level) for level in r.levels()],
                    "summary": r.summary,
                    "references": list(r.references),
                    "options": [
                        {
                            "name": o.name,
                            "default": o.default,
                            "minimum": o.minimum,
                            "maximum": o.maximum,
                            "help": o.help,
                        }
                        for o in r.options
                    ],
                }
                for r in rules
            ],
            out,
            indent=2,
        )
        out.write("\n")
    elif args.format == "markdown":
        out.write(safe_lines(rule_table(rules)))
    else:
        # a rule whose findings can have several severities lists them, the most severe
        # first ("error/info"): the column says how bad a finding of the rule can be
        width = max((len(r.id) for r in rules), default=10)
        levels = {r.id: "/".join(str(level) for level in r.levels()) for r in rules}
        lw = max((len(x) for x in levels.values()), default=7)
        for r in rules:
            out.write(safe_lines(f"{r.id:<{width}}  {levels[r.id]:<{lw}}  {r.summary}\n"))
            for o in r.options:  # (set under rule-options in the configuration file)
                out.write(safe_lines(f"{'':<{width}}  {'':<{lw}}  option {o.describe()}\n"))
    return ExitCode.OK


def cmd_systems(args: argparse.Namespace, out: TextIO) -> int:
    """List the built-in catalog of stateful systems: id, category, replication model and
    name (text), or every entry as written, sources included (json)."""
    from .reporters.escape import safe_lines
    from .rules._systems import builtin_entries

    started()

    entries = builtin_entries()
    if args.format == "json":
        json.dump([entries[k] for k in sorted(entries)], out, indent=2)
        out.write("\n")
        return ExitCode.OK
    width = max((len(k) for k in entries), default=10)
    for key in sorted(entries):
        e = entries[key]
        model = e["replication"]["model"]
        out.write(safe_lines(f"{key:<{width}}  {e['category']:<12}  {model:<15}  {e['name']}\n"))
    return ExitCode.OK


def _read_kubectl_output(name: str) -> tuple[str, str]:
    """``(text, name as messages show it)`` of a file or ``-`` (standard input), bounded
    like a manifest (:data:`ssrisk.loading.MAX_FILE_BYTES`).

    Raises:
        UsageError: it cannot be read, is too large or is not text.
    """
    from .loading import MAX_FILE_BYTES, decode, read_text
    from .reporters.escape import printable

    if name == "-":
        shown = "<stdin>"
        if sys.stdin is None:
            raise UsageError("cannot read standard input: it is closed")
        try:
            raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
        except (OSError, ValueError) as exc:
            raise UsageError(f"cannot read standard input: {exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise UsageError(f"<stdin>: larger than the {MAX_FILE_BYTES} byte limit")
        text, err = decode(shown, raw)
    else:
        shown = printable(name)
        text, err = read_text(name)
    if err is not None or text is None:
        # ("PATH: message": the usage error's own "ssrisk: error:" says what it is)
        raise UsageError(
            f"{err.path}: {err.message}" if err is not None else f"{shown}: cannot read"
        )
    return text, shown


def cmd_profile(args: argparse.Namespace, out: TextIO) -> int:
    """Print the ``.ssrisk.yaml`` profile of saved ``kubectl get nodes`` output
    (:mod:`ssrisk.clusterprofile`)."""
    from .clusterprofile import ProfileInputError, parse_objects, render
    from .reporters.escape import safe_lines

    started()  # (it may read 64 MiB of input: collect as usual)
    if args.nodes == "-" and args.storage_classes == "-":
        raise UsageError("standard input can be read once: give one of FILE and --storage-classes")
    try:
        text, shown = _read_kubectl_output(args.nodes)
        nodes = parse_objects(text, shown)
        classes: list[Any] = []
        if args.storage_classes is not None:
            sc_text, sc_shown = _read_kubectl_output(args.storage_classes)
            classes = parse_objects(sc_text, sc_shown)
            if not any(o.get("kind") == "StorageClass" for o in classes):
                raise ProfileInputError(
                    f"{sc_shown}: no StorageClass objects; give the output of "
                    "kubectl get storageclass -o yaml"
                )
        profile = render(nodes, classes, source=shown)
    except ProfileInputError as exc:
        raise UsageError(str(exc)) from None
    out.write(safe_lines(profile))  # (a failed write: main says so, as for every command)
    out.flush()
    return ExitCode.OK


def rule_table(rules: Sequence[Rule]) -> str:
    """The Markdown table of ``rules``: id, the severities each can report (most severe
    first) and its summary, one row a rule, in the order given."""
    rows = ["| id | severity | what it reports |", "| --- | --- | --- |"]
    for r in rules:
        levels = " / ".join(str(level) for level in r.levels())
        summary = " ".join(r.summary.split()).replace("|", "\\|")
        rows.append(f"| `{r.id}` | {levels} | {summary} |")
    return "\n".join(rows) + "\n"


def cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    rules = {r.id: r for r in _load_rules()}
    rule = rules.get(args.rule)
    if rule is None:
        from .names import unknown_rule

        raise UsageError(unknown_rule(args.rule, rules))
    text = rule.doc()
    if out.isatty():
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=out).print(Markdown(text))
    else:
        from .reporters.escape import safe_lines

        out.write(safe_lines(text if text.endswith("\n") else text + "\n"))
    return ExitCode.OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
