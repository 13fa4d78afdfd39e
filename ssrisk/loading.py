"""Finding input files and reading Kubernetes objects out of them, with positions.

Speed matters here (every commit runs the pre-commit hook), so each file is first split into
YAML documents as text and each document is sniffed for its ``kind``. Only documents of the
kinds ssrisk models are composed into data with positions (``yamlpos``: libyaml's composer,
the practical floor for reading YAML in Python); every other document is only parsed for
syntax. Nothing is ever constructed from tags.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from .embedded_sim.lazyre import lazy
from .model import InputError, K8sObject, Notice

if TYPE_CHECKING:
    from .paths import ExcludePattern, Excludes
    from .suppression import IgnoreComment

#: Kinds whose documents are fully loaded, with the API versions read for each; every other
#: kind (custom resources included) is counted and skipped.
MODELLED_KINDS: dict[str, frozenset[str]] = {
    # apps/v1beta1 and v1beta2 are not served since 1.16: read so that a rule can say so
    "StatefulSet": frozenset({"apps/v1", "apps/v1beta1", "apps/v1beta2"}),
    "Service": frozenset({"v1"}),
    # policy/v1beta1 is no longer served from 1.25, but old manifests still say what they mean
    "PodDisruptionBudget": frozenset({"policy/v1", "policy/v1beta1"}),
    "StorageClass": frozenset({"storage.k8s.io/v1", "storage.k8s.io/v1beta1"}),
    "PersistentVolume": frozenset({"v1"}),
    "PersistentVolumeClaim": frozenset({"v1"}),
    "Namespace": frozenset({"v1"}),
    # an autoscaler that targets a StatefulSet sets its replicas (minReplicas at the least)
    "HorizontalPodAutoscaler": frozenset({"autoscaling/v2", "autoscaling/v1"}),
}
#: StatefulSet API versions removed in Kubernetes 1.16 (kubernetes/kubernetes#70672).
LEGACY_STATEFULSET_VERSIONS = frozenset({"apps/v1beta1", "apps/v1beta2"})
YAML_SUFFIXES = (".yaml", ".yml", ".json")
DEFAULT_EXCLUDES = (".git", "node_modules", ".venv", "venv", ".tox", "__pycache__", ".mypy_cache")
MAX_FILE_BYTES = 64 * 1024 * 1024

_DOC_SPLIT = re.compile(r"^(?:---|\.\.\.)(?=[ \t]|$)", re.MULTILINE)
_SNIFF = re.compile(
    r"""["']?kind["']?\s*:\s*["']?(StatefulSet|Service|PodDisruptionBudget|StorageClass|"""
    r"""PersistentVolume|PersistentVolumeClaim|Namespace|HorizontalPodAutoscaler|\w*List)"""
    r"""\b(?!-)"""
)
_HELM_DIRECTIVE = lazy(r"^\{\{", re.MULTILINE)
#: YAML that can spell a kind the sniffing pattern does not see (an escape, a tag, an anchor
#: or alias, an explicit key, a comment or block scalar before the value): such a document is
#: composed, and its kind read from the data, as kubectl reads it.
_DISGUISED = re.compile(r"""[\\!*&?]|kind["']?\s*:\s*[>|#]""")
#: The kinds a ``--context`` input is read for: those that StatefulSets relate to (their
#: StatefulSets are not checked, so they are not even parsed).
RELATED_KINDS = frozenset(MODELLED_KINDS) - {"StatefulSet"}


def _sniffer(kinds: frozenset[str] | None) -> re.Pattern[str]:
    """The kind sniffing pattern for ``kinds`` (``None``: every modelled kind and lists)."""
    if kinds is None:
        return _SNIFF
    if kinds not in _SNIFFERS:
        names = "|".join(sorted(kinds, key=len, reverse=True))
        _SNIFFERS[kinds] = re.compile(rf"""["']?kind["']?\s*:\s*["']?({names}|\w*List)\b(?!-)""")
    return _SNIFFERS[kinds]


_SNIFFERS: dict[frozenset[str], re.Pattern[str]] = {}


class LoadedFile(msgspec.Struct):
    """What one input file yielded."""

    path: str
    documents: int = 0
    objects: list[K8sObject] = msgspec.field(default_factory=list)
    errors: list[InputError] = msgspec.field(default_factory=list)
    notices: list[Notice] = msgspec.field(default_factory=list)
    skipped_kinds: int = 0
    #: ``# ssrisk: ignore[...]`` comments of the files the user edits, by path as positions
    #: give it (this file; a chart's template sources; a kustomization's resources), recorded
    #: while their text is at hand so that suppression never reads a file again.
    ignore_comments: dict[str, list[IgnoreComment]] = msgspec.field(default_factory=dict)
    #: ``{path: [(first line, last line)]}``: where objects the API server would reject are
    #: written (not checked, so their suppressions can be neither used nor unused).
    unchecked: dict[str, list[tuple[int, int]]] = msgspec.field(default_factory=dict)
    #: Whether it is a file the run read (counted in the report's ``files``); ``False`` for
    #: what carries only the notices of something not read (a link out of the tree).
    read: bool = True


def unchecked_spans(
    objects: Sequence[K8sObject], rejected: Sequence[K8sObject]
) -> dict[str, list[tuple[int, int]]]:
    """Where each of ``rejected`` (some of ``objects``, the objects of one input) is written:
    from its first line to the line before the next object of the same file (its last line
    is not kept), as ``{path: [(first, last)]}``, for :attr:`LoadedFile.unchecked`."""
    starts: dict[str, list[int]] = {}
    for obj in objects:
        at = obj.start()
        starts.setdefault(at.path, []).append(at.line)
    for lines in starts.values():
        lines.sort()
    out: dict[str, list[tuple[int, int]]] = {}
    for obj in rejected:
        at = obj.start()
        lines = starts.get(at.path, [])
        i = bisect.bisect_right(lines, at.line)  # the next object's start (one look, not all)
        out.setdefault(at.path, []).append((at.line, lines[i] - 1 if i < len(lines) else 1 << 62))
    return out


def discover(
    paths: Sequence[str],
    excludes: Iterable[ExcludePattern] | Excludes = (),
    skip_files: Iterable[str] = (),
    skip_dirs: Iterable[str] = (),
    warnings: list[Notice] | None = None,
) -> tuple[list[str], list[InputError]]:
    """Expand ``paths`` into the list of files to check, in a stable order.

    Directories are walked recursively for ``*.yaml``, ``*.yml`` and ``*.json`` files,
    without following symbolic links to directories (so link loops cannot hang the walk);
    ``DEFAULT_EXCLUDES``, the directories ``skip_dirs`` (rendered charts and kustomizations)
    and what the ``excludes`` patterns match (:class:`ssrisk.paths.Excludes`: the name, the
    path relative to the pattern's base) are skipped. Files named explicitly are always taken,
    except ssrisk's own: a configuration or baseline file
    (:data:`ssrisk.settings.OWN_FILE_NAMES`) and the real paths in ``skip_files`` (the
    baseline and output files of the run) are never manifests. A path that does not exist, a
    directory that cannot be listed, and a file whose real path leaves the checked tree or
    enters a ``.git`` directory (:mod:`ssrisk.confine`: a symbolic link to ``/etc/passwd``)
    are returned as :class:`InputError` values; such a file is never read. A link out of the
    tree with another name (a directory, a tool's binary) is never read either, and goes to
    ``warnings``.

    Paths are spelt as :func:`ssrisk.paths.tidy` spells them (``.`` joined with ``db.yaml`` is
    ``db.yaml``), the spelling of every output.
    """
    from .confine import Trees, refusal
    from .paths import Excludes, join, tidy
    from .walk import TooDeep, walk

    files: list[str] = []
    errors: list[InputError] = []
    seen: set[str] = set()
    excluded = excludes if isinstance(excludes, Excludes) else Excludes(excludes)
    skipped = frozenset(os.path.abspath(d) for d in skip_dirs)
    own = _OwnFiles(skip_files)

    def left_out(directory: str) -> bool:
        return (bool(skipped) and os.path.abspath(directory) in skipped) or excluded(directory)

    tree_of = Trees()  # (a long list of files nested deep: each directory looked at once)
    realpath = tree_of.realpath
    for given in paths:
        raw = tidy(given)
        tree = tree_of(raw) if raw != "-" else ""
        if raw != "-" and not os.path.lexists(raw):
            # (a missing file through a link out of the tree reads as an existing one)
            errors.append(InputError(raw, refusal(raw, tree) or _missing(raw)))
            continue
        if os.path.isdir(raw) and os.path.islink(raw.rstrip(os.sep) or raw):
            # a directory named through a link: refused if it leads out, before any listing
            refused = refusal(raw.rstrip(os.sep) or raw, tree, realpath)
            if refused is not None:
                errors.append(InputError(raw, refused))
                continue
        if os.path.isdir(raw):

            def unlistable(exc: OSError, given: str = raw) -> None:
                reason = exc.strerror if isinstance(exc, TooDeep) else None
                errors.append(
                    InputError(
                        tidy(exc.filename or given),
                        reason or f"cannot list directory: {exc.strerror}",
                    )
                )

            for walked, dirs, names in walk(raw, onerror=unlistable, links_are_names=True):
                root = tidy(walked)  # os.walk(".") gives "./sub"
                dirs[:] = sorted(
                    d for d in dirs if d not in DEFAULT_EXCLUDES and not left_out(join(root, d))
                )
                for name in sorted(names):
                    full = join(root, name)
                    if excluded(full) or own.holds(full):
                        continue
                    said = _walked_name(full, tree, realpath)
                    if isinstance(said, Notice):
                        if warnings is not None:
                            warnings.append(said)
                    elif isinstance(said, InputError):
                        errors.append(said)
                    elif said and full not in seen:
                        seen.add(full)
                        files.append(full)
        elif raw not in seen and not own.holds(raw):
            # (a file named on the command line may be reached through a directory link, or
            # lie in .git: its real path is checked like a walked file's)
            refused = refusal(raw, tree, realpath) if raw != "-" else None
            if refused is not None:
                errors.append(InputError(raw, refused))
                continue
            seen.add(raw)
            files.append(raw)
    return files, errors


def _walked_name(
    full: str, tree: str, realpath: Callable[[str], str]
) -> bool | InputError | Notice:
    """What a walk does with the name ``full`` (not excluded, not ssrisk's own): ``True``,
    read it; ``False``, leave it; an error or a warning to give instead."""
    from .confine import refusal

    if not os.path.basename(full).lower().endswith(YAML_SUFFIXES):
        # not a manifest's name: never read. A link out of the tree is said, whatever it
        # leads to (a directory, a file or nothing reads alike), as a warning: nothing of it
        # is checked, and nothing of it fails
        out = refusal(full, tree, realpath) if os.path.islink(full) else None
        return Notice(full, out, level="warning") if out is not None else False
    # refused first: what lies outside the tree (a directory, a pipe, nothing) must not
    # change the message
    refused = refusal(full, tree, realpath)
    if refused is not None:
        return InputError(full, refused)
    if os.path.isdir(full):  # a link to a directory named like a file
        return False
    special = _special_file(full)
    if special is not None:  # reading a FIFO or a device could block forever
        return InputError(full, f"not a regular file ({special}); skipped")
    return True


def _missing(path: str) -> str:
    """Why ``path``, which ``lexists`` does not see, cannot be read: missing, or in a
    directory this user may not search (``Permission denied``)."""
    try:
        os.lstat(path)
    except OSError as exc:
        return "no such file or directory" if exc.strerror is None else exc.strerror.lower()
    return "no such file or directory"


class _OwnFiles:
    """Files of ssrisk itself: its configuration and baseline by name, and given real paths (looked
    up only for files whose name matches, so a walk costs no extra system call per file)."""

    def __init__(self, real_paths: Iterable[str]) -> None:
        from .settings import OWN_FILE_NAMES

        self.real_paths = frozenset(real_paths)
        self.config_names = frozenset(OWN_FILE_NAMES)
        self.names = frozenset(os.path.basename(p) for p in self.real_paths)

    def holds(self, path: str) -> bool:
        name = os.path.basename(path)
        if name in self.config_names:
            return True
        return name in self.names and os.path.realpath(path) in self.real_paths


def _special_file(path: str) -> str | None:
    """``"FIFO"``, ``"device"`` or ``"socket"`` when ``path`` is one (links followed), else None."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # a dangling link: read_text reports it
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return None


def read_text(path: str) -> tuple[str | None, InputError | None]:
    """Read ``path`` as text, detecting a UTF-8/UTF-16/UTF-32 byte order mark.

    Returns ``(text, None)`` or ``(None, error)``; never raises for a bad file.
    """
    try:
        raw = read_bounded(path, MAX_FILE_BYTES)
    except IsADirectoryError:
        return None, InputError(path, "is a directory, not a manifest file")
    except TooLarge as exc:
        return None, InputError(path, str(exc))
    except OSError as exc:
        return None, InputError(path, f"cannot read file: {exc.strerror or exc}")
    return decode(path, raw)


class TooLarge(OSError):
    """A file or stream past its size limit (the message says which limit)."""


#: Seconds to wait for the writer of a pipe named on the command line (``<(helm template)``).
PIPE_TIMEOUT_S = 60.0


def read_bounded(path: str, limit: int) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them, without ever blocking forever.

    A regular file larger than ``limit`` is refused before it is read. A pipe (a path named
    on the command line such as ``<(helm template ...)``) is read until its writer closes it,
    for at most :data:`PIPE_TIMEOUT_S` seconds; a named FIFO that no process writes to and
    that gives nothing is an error at once (nothing to check; not a wait for ever), where a
    pipe whose writer wrote nothing (``<(true)``) reads as empty, as standard input does.
    Devices and sockets are refused.

    Raises:
        TooLarge: past ``limit`` bytes.
        OSError: it cannot be opened or read, is a directory, a device or a socket, or the
            FIFO had no writer, or a pipe's writer did not finish in time.
    """
    import select
    import stat
    import time

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(21, "Is a directory", path)
        if stat.S_ISREG(mode):
            size = os.fstat(fd).st_size
            if size > limit:
                raise TooLarge(f"file is {size} bytes, larger than the {limit} byte limit")
            os.set_blocking(fd, True)
            chunks = []
            total = 0
            while total <= limit:
                chunk = os.read(fd, min(1 << 20, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        elif stat.S_ISFIFO(mode):
            chunks, total = [], 0
            deadline = time.monotonic() + PIPE_TIMEOUT_S
            while total <= limit:
                try:
                    chunk = os.read(fd, min(1 << 20, limit + 1 - total))
                except BlockingIOError:  # a writer is connected but has written nothing yet
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise OSError(
                            f"the pipe's writer did not finish within {PIPE_TIMEOUT_S:.0f} s"
                        ) from None
                    select.select([fd], [], [], left)
                    continue
                if not chunk:
                    break  # the writer closed it, or there never was one
                chunks.append(chunk)
                total += len(chunk)
            if not total and _named_fifo(fd):  # (a writer that comes later is not waited for)
                raise OSError("nothing was read from the FIFO: no process was writing to it")
        else:
            kind = "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "socket"
            raise OSError(f"not a regular file ({kind})")
    finally:
        os.close(fd)
    if total > limit:
        raise TooLarge(f"larger than the {limit} byte limit")
    return b"".join(chunks)


def _named_fifo(fd: int) -> bool:
    """Whether the pipe open as ``fd`` is a FIFO in the file system (``mkfifo``), not a pipe
    made for one command (``<(helm template ...)``, which is ``pipe:[N]`` on Linux); ``False``
    where the system does not tell."""
    try:
        return not os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
    except OSError:
        return False


def decode(path: str, raw: bytes) -> tuple[str | None, InputError | None]:
    """Decode the bytes of a manifest the way YAML 1.2 allows (UTF-8, or UTF-16/32 with BOM)."""
    for bom, codec in (
        (b"\xef\xbb\xbf", "utf-8-sig"),
        (b"\xff\xfe\x00\x00", "utf-32"),
        (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xff\xfe", "utf-16"),
        (b"\xfe\xff", "utf-16"),
    ):
        if raw.startswith(bom):
            try:
                return raw.decode(codec), None
            except UnicodeDecodeError as exc:
                return None, InputError(path, f"not valid {codec.upper()}: {exc.reason}")
    if b"\x00" in raw:
        return None, InputError(path, "binary file (contains NUL bytes), not a YAML manifest")
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        return None, InputError(
            path,
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "YAML manifests must be UTF-8 or UTF-16/32 with a byte order mark",
            line=line,
        )


def split_documents(text: str) -> Iterator[tuple[int, str]]:
    """Split a YAML stream into ``(first_line_index, text)`` chunks at ``---``/``...`` lines.

    A line that starts with ``---`` in column 0 always ends a document in YAML (block
    scalars must be indented), so this split agrees with a YAML parser on real manifests.
    The ``---`` line itself stays at the start of its chunk so the parser sees it.

    A byte order mark that starts the line after a ``---`` line (files joined with
    ``cat``, one of them saved with a BOM) is dropped: kubectl's reader
    (k8s.io/apimachinery pkg/util/yaml, ``YAMLReader.Read``) hands go-yaml each document
    without its ``---`` line, and go-yaml skips a BOM at the start of its input
    (``yaml_parser_determine_encoding``), whereas libyaml, reading the whole stream, skips
    it as a character of the line and so sees the line's content one column to the right of
    the next line's (a false "did not find expected <document start>"). A BOM anywhere else
    is left to the parser, as go-yaml would read it. Columns on that line are then counted
    without the BOM, as an editor shows them.
    """
    starts = [m.start() for m in _DOC_SPLIT.finditer(text) if text.startswith("---", m.start())]
    bounds = [0, *[s for s in starts if s != 0], len(text)]
    line = 0  # lines before ``a``, counted from the previous bound: linear in the text
    for a, b in pairwise(bounds):
        if b > a:
            chunk = text[a:b]
            if chunk.startswith("---"):
                after = chunk.find("\n") + 1
                if after and chunk.startswith("\ufeff", after):
                    chunk = chunk[:after] + chunk[after + 1 :]
            yield line, chunk
            line += text.count("\n", a, b)


def looks_like_helm_template(text: str, error_lines: Iterable[int] = ()) -> bool:
    """Whether a document that did not load (a YAML syntax error, or a mapping key that is
    not a string) is an unrendered Helm template rather than broken YAML.

    Args:
        text: the document's text.
        error_lines: 0-based lines of ``text`` where loading stopped.

    Returns:
        True when a line starts with a ``{{`` directive (``{{- if ...}}``), or when a line
        where loading stopped (or the line before it, where a parser may have started the
        construct) holds a ``{{ ... }}`` action: ``name: {{ .Release.Name }}-pg`` is a syntax
        error there and ``name: {{ .Values.name }}`` a mapping used as a key, which kubectl
        (sigs.k8s.io/yaml) cannot read either. A typo elsewhere in a document whose values
        only quote template text (``summary: "{{ $labels.instance }}"``) stays an error.
    """
    if "{{" not in text:
        return False
    if _HELM_DIRECTIVE.search(text) is not None:
        return True
    lines = text.splitlines()
    for at in error_lines:
        for i in (at - 1, at):
            opens = lines[i].find("{{") if 0 <= i < len(lines) else -1
            if opens >= 0 and lines[i].find("}}", opens + 2) >= 0:  # linear, however long
                return True
    return False


def _problem_position(exc: Exception, line_offset: int) -> tuple[int | None, int | None]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return None, None
    return int(mark.line) + 1 + line_offset, int(mark.column) + 1


def _describe(exc: Exception) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        text = str(problem)
        if context:
            text = f"{context}: {text}"
        return text
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


class _SyntaxChecker:
    """Syntax-only check. libyaml's parser through the compiled reader
    (:func:`ssrisk._cyaml.parses`) answers without importing PyYAML; PyYAML's C parser gives
    the error of a text that does not parse (``CParser.raw_parse`` runs libyaml's parser
    without making a Python object per event: about 6x faster than iterating ``yaml.parse``,
    with the same errors and marks); the pure-Python parser where libyaml is missing."""

    def __init__(self) -> None:
        from .yamlpos import _COMPILED

        self._compiled: Any = _COMPILED
        self._yaml: Any = None
        self._raw: Any = None

    def _import(self) -> None:
        try:
            import yaml

            self._yaml = yaml
            self._loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        except ImportError:  # pragma: no cover - pyyaml is a dependency
            self._yaml = False
        try:
            from yaml._yaml import CParser

            self._raw = CParser
        except ImportError:  # pragma: no cover - wheels ship libyaml
            self._raw = None

    def check(self, text: str) -> Exception | None:
        if self._compiled is not None and self._compiled.parses(text):
            return None
        if self._yaml is None:
            self._import()
        if self._yaml is False:  # pragma: no cover
            return None
        try:
            if self._raw is not None:
                self._raw(text).raw_parse()
            else:  # pragma: no cover
                for _ in self._yaml.parse(text, Loader=self._loader):
                    pass
        except self._yaml.YAMLError as exc:
            return exc
        return None


_CHECKER: _SyntaxChecker | None = None


def _checker() -> _SyntaxChecker:
    global _CHECKER
    if _CHECKER is None:
        _CHECKER = _SyntaxChecker()
    return _CHECKER


def load_text(
    text: str,
    path: str,
    default_namespace: str | None = "default",
    kinds: frozenset[str] | None = None,
) -> LoadedFile:
    """Read every Kubernetes object of a modelled kind out of a YAML or JSON stream.

    Args:
        text: the whole file.
        path: the path to report (as the user gave it).
        default_namespace: namespace for namespaced objects that name none.
        kinds: read only objects of these kinds (a ``--context`` input: :data:`RELATED_KINDS`);
            documents of other kinds are then neither parsed nor counted. ``None``: every
            modelled kind, and every other document is checked for syntax.

    Returns:
        A :class:`LoadedFile`; syntax errors, duplicate keys and similar problems are in its
        ``errors`` (with 1-based line and column), never raised.
    """
    out = LoadedFile(path)
    record_comments(out, path, text)
    if not text.strip() or not has_content(text):
        # kubectl applies nothing and reports no error for such a file; only
        # --fail-if-empty makes it one
        out.notices.append(
            Notice(path, "empty file: no YAML documents (only whitespace or comments)", empty=True)
        )
        return out
    sniff = _sniffer(kinds)
    templates = 0
    for line_offset, chunk in split_documents(text):
        if not has_content(chunk):
            continue
        errors = len(out.errors)
        if sniff.search(chunk) is not None:
            _load_chunk(out, chunk, line_offset, default_namespace)
        elif _DISGUISED.search(chunk) is not None:
            if _disguised(out, chunk, line_offset, kinds):  # a modelled kind in disguise
                _load_chunk(out, chunk, line_offset, default_namespace)
        elif kinds is None:
            # Not a kind ssrisk models: count it and check only its syntax.
            out.documents += 1
            out.skipped_kinds += 1
            err = _checker().check(chunk)
            if err is not None:
                line, col = _problem_position(err, line_offset)
                out.errors.append(InputError(path, f"YAML syntax: {_describe(err)}", line, col))
        if len(out.errors) > errors and looks_like_helm_template(
            chunk, [e.line - 1 - line_offset for e in out.errors[errors:] if e.line is not None]
        ):
            # An unrendered Helm template: its directives are not YAML. Only documents that
            # do not read as YAML are skipped; kubectl would apply the others, so they are
            # checked.
            del out.errors[errors:]
            templates += 1
        elif len(out.errors) > errors and chunk.lstrip().startswith(("{", "[", "//", "/*")):
            _json_with_comments(out, chunk, line_offset, errors)
    if templates:
        out.notices.append(
            Notice(
                path,
                "skipped: unrendered Helm template ({{ ... }}"
                + (f", {templates} documents" if templates > 1 else "")
                + "); render it first",
            )
        )
    if kinds is not None:
        out.objects = [o for o in out.objects if o.kind in kinds]
    return out


def jsonc_comment(text: str) -> tuple[int, int, str] | None:
    """The first comment of a JSON-with-comments text (``//`` or ``/*`` outside a string), as
    ``(0-based line, 0-based column, text without comments)``, else ``None``."""
    out: list[str] = []
    first: int | None = None
    i, n, in_string = 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1 : i + 2])
                i += 2
                continue
            in_string = c != '"'
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i) or text.startswith("/*", i):
            first = i if first is None else first
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else end + (0 if text[i + 1] == "/" else 2)
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:end]))
            i = end
            continue
        else:
            out.append(c)
        i += 1
    if first is None:
        return None
    line = text.count("\n", 0, first)
    return line, first - (text.rfind("\n", 0, first) + 1), "".join(out)


def _json_with_comments(out: LoadedFile, chunk: str, line_offset: int, errors: int) -> None:
    """A document that did not load and holds ``//`` or ``/* */`` comments: JSON with
    comments (an editor's ``settings.json``, ``tsconfig.json``), which neither YAML nor
    kubectl reads. Without ``apiVersion`` and ``kind`` it is no manifest: skipped with a
    notice. With them, one error at the first comment (where kubectl stops), not the YAML
    parser's confused one further on."""
    import json

    found = jsonc_comment(chunk)
    if found is None:
        return
    line, col, stripped = found
    try:  # (JSON with comments also allows a comma before a closing bracket)
        data = json.loads(re.sub(r",(\s*[}\]])", r"\1", stripped))
    except ValueError:
        data = None
    del out.errors[errors:]
    if isinstance(data, (dict, list)) and not _names_a_kind(data):
        out.notices.append(
            Notice(
                out.path,
                "skipped: JSON with comments (an editor's or tool's settings), not a Kubernetes "
                "manifest",
                line_offset + line + 1,
                col + 1,
            )
        )
        return
    out.errors.append(
        InputError(
            out.path,
            "a comment: JSON has none, so kubectl cannot read this file (remove the comments, "
            "or exclude the file)",
            line_offset + line + 1,
            col + 1,
        )
    )


def _names_a_kind(data: Any) -> bool:
    """Whether JSON data is (or lists) something with ``apiVersion`` and ``kind``."""
    items = data if isinstance(data, list) else [data]
    return any(isinstance(i, dict) and "kind" in i and "apiVersion" in i for i in items)


#: How a comment naming ssrisk is written (lower, upper or capitalised: a substring search
#: each, far cheaper than a case-blind one over every file): it may be a suppression.
NAME_SPELLINGS = ("ssrisk", "SSRISK", "Ssrisk")


def record_comments(lf: LoadedFile, path: str, text: str | None) -> None:
    """Keep the ``ssrisk: ignore`` comments of ``text`` (the file ``path``) in ``lf``."""
    if text and any(spelling in text for spelling in NAME_SPELLINGS):
        from .suppression import scan_comments

        found = scan_comments(text)
        if found:
            lf.ignore_comments[path] = found


def _disguised(out: LoadedFile, chunk: str, line_offset: int, kinds: frozenset[str] | None) -> bool:
    """Whether a document the sniffing pattern passed over is of a kind to load after all:
    its top-level ``kind`` (with escapes, tags, anchors, aliases and merge keys resolved, as
    kubectl reads it) is one of ``kinds`` (``None``: a modelled kind) or a list. When not,
    the document is counted as skipped and a syntax error is recorded in ``out``."""
    from .yamlpos import is_yaml_error, load_documents

    wanted = kinds if kinds is not None else frozenset(MODELLED_KINDS)
    found: list[str | None] = []
    try:
        for data, _duplicates in load_documents(chunk, strict=False):
            kind = data.get("kind") if isinstance(data, dict) else None
            found.append(kind if isinstance(kind, str) else None)
    except Exception as exc:
        if not is_yaml_error(exc):
            raise
        if kinds is None:
            out.documents += 1
            out.skipped_kinds += 1
            line, col = _problem_position(exc, line_offset)
            out.errors.append(InputError(out.path, f"YAML syntax: {_describe(exc)}", line, col))
        return False
    if any(k is not None and (k in wanted or k.endswith("List")) for k in found):
        return True
    if kinds is None:
        out.documents += len(found)
        out.skipped_kinds += len(found)
    return False


def has_content(chunk: str) -> bool:
    """Whether YAML text has anything but whitespace, comments and document markers.

    Reads a growing prefix of the text, not all its lines: a document has content within its
    first lines, and this runs for every document and file.
    """
    size = 512
    while True:
        whole = size >= len(chunk)
        lines = (chunk if whole else chunk[:size]).splitlines()
        for line in lines if whole else lines[:-1]:  # (a prefix's last line may go on)
            s = line.strip()
            if s and not s.startswith("#") and s not in ("---", "..."):
                return True
        if whole:
            return False
        size *= 4


def _load_chunk(
    out: LoadedFile, chunk: str, line_offset: int, default_namespace: str | None
) -> None:
    from .yamlpos import YamlInputError, is_yaml_error, load_documents

    path = out.path
    try:
        for data, duplicates in load_documents(chunk):
            for dup in duplicates:
                # kubectl (sigs.k8s.io/yaml) refuses duplicate keys; ssrisk warns and reads on.
                first = dup.first_line + 1 + line_offset
                out.notices.append(
                    Notice(
                        path,
                        f"duplicate key {dup.key!r} (first at line {first}); kubectl rejects "
                        "this document, ssrisk used the last value",
                        dup.line + 1 + line_offset,
                        dup.column + 1,
                        level="warning",
                    )
                )
            if data is None:
                continue
            out.documents += 1
            out.objects.extend(
                _objects_of(
                    data,
                    path,
                    line_offset,
                    default_namespace,
                    out.documents - 1,
                    out.notices,
                    out.errors,
                )
            )
    except YamlInputError as exc:
        line = None if exc.line is None else exc.line + 1 + line_offset
        col = None if exc.column is None else exc.column + 1
        out.errors.append(InputError(path, f"cannot load: {exc.message}", line, col))
    except Exception as exc:
        if not is_yaml_error(exc):
            raise
        line, col = _problem_position(exc, line_offset)
        out.errors.append(InputError(path, f"YAML syntax: {_describe(exc)}", line, col))


def _objects_of(
    data: Any,
    path: str,
    line_offset: int,
    default_namespace: str | None,
    doc_index: int,
    notices: list[Notice],
    errors: list[InputError],
) -> Iterable[K8sObject]:
    if not isinstance(data, dict):
        return
    kind = data.get("kind")
    if not isinstance(kind, str) or not isinstance(data.get("apiVersion"), str):
        return  # not a Kubernetes object: skipped quietly
    items = data.get("items")
    if kind == "List" and items is not None and not isinstance(items, list):
        # kubectl decodes a List's items as an array (metav1.List) and rejects anything else
        line, col = data.lc.key("items") if hasattr(data, "lc") else (-1, -1)
        errors.append(
            InputError(
                path, "List: items must be a list of objects", line + 1 + line_offset, col + 1
            )
        )
        return
    if kind == "List" or (kind.endswith("List") and isinstance(items, list)):
        for item in items or []:
            yield from _objects_of(
                item, path, line_offset, default_namespace, doc_index, notices, errors
            )
        return
    api_version = data["apiVersion"]
    if api_version not in MODELLED_KINDS.get(kind, ()):
        return
    meta = data.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, dict) else None
    if kind in ("StorageClass", "PersistentVolume", "Namespace"):
        namespace = None  # cluster-scoped
    else:
        namespace = str(ns) if isinstance(ns, (str, int)) and str(ns) else default_namespace
    yield K8sObject(data, path, line_offset, namespace, doc_index)


def load_path(path: str, default_namespace: str | None = "default") -> LoadedFile:
    """Read and load one file; errors are returned in the result, never raised."""
    text, err = read_text(path)
    if err is not None or text is None:
        lf = LoadedFile(path)
        lf.errors.append(err or InputError(path, "cannot read file"))
        return lf
    return load_text(text, path, default_namespace)


def is_yaml_name(path: str | Path) -> bool:
    return str(path).lower().endswith(YAML_SUFFIXES)
