"""Finding input files and reading Kubernetes objects out of them, with positions.

Speed matters here (every commit runs the pre-commit hook), so each file is first split into
YAML documents as text and each document is sniffed for its ``kind``. Only documents of the
kinds ssrisk models are composed into data with positions (``yamlpos``: libyaml's composer,
the practical floor for reading YAML in Python); every other document is only parsed for
syntax. Nothing is ever constructed from tags.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from itertools import pairwise
from pathlib import Path
from typing import Any

from .model import InputError, K8sObject, Notice

#: Kinds whose documents are fully loaded, with the API versions read for each; every other
#: kind (custom resources included) is counted and skipped.
MODELLED_KINDS: dict[str, frozenset[str]] = {
    "StatefulSet": frozenset({"apps/v1"}),
    "Service": frozenset({"v1"}),
    # policy/v1beta1 is no longer served from 1.25, but old manifests still say what they mean
    "PodDisruptionBudget": frozenset({"policy/v1", "policy/v1beta1"}),
    "StorageClass": frozenset({"storage.k8s.io/v1", "storage.k8s.io/v1beta1"}),
    "PersistentVolume": frozenset({"v1"}),
    "PersistentVolumeClaim": frozenset({"v1"}),
    "Namespace": frozenset({"v1"}),
}
#: StatefulSet API versions removed in Kubernetes 1.16 (kubernetes/kubernetes#70672).
LEGACY_STATEFULSET_VERSIONS = frozenset({"apps/v1beta1", "apps/v1beta2"})
YAML_SUFFIXES = (".yaml", ".yml", ".json")
DEFAULT_EXCLUDES = (".git", "node_modules", ".venv", "venv", ".tox", "__pycache__", ".mypy_cache")
MAX_FILE_BYTES = 64 * 1024 * 1024

_DOC_SPLIT = re.compile(r"^(?:---|\.\.\.)(?=[ \t]|$)", re.MULTILINE)
_SNIFF = re.compile(
    r"""["']?kind["']?\s*:\s*["']?(StatefulSet|Service|PodDisruptionBudget|StorageClass|"""
    r"""PersistentVolume|PersistentVolumeClaim|Namespace|\w*List)\b(?!-)"""
)
_HELM_DIRECTIVE = re.compile(r"^\{\{", re.MULTILINE)


@dataclass
class LoadedFile:
    """What one input file yielded."""

    path: str
    documents: int = 0
    objects: list[K8sObject] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    skipped_kinds: int = 0


def discover(
    paths: Sequence[str], excludes: Sequence[str] = ()
) -> tuple[list[str], list[InputError]]:
    """Expand ``paths`` into the list of files to check, in a stable order.

    Directories are walked recursively for ``*.yaml``, ``*.yml`` and ``*.json`` files,
    without following symbolic links to directories (so link loops cannot hang the walk);
    ``DEFAULT_EXCLUDES`` and the ``excludes`` glob patterns (matched against the name and the
    path) are skipped. Files named explicitly are always taken. A path that does not exist is
    returned as an :class:`InputError`.
    """
    files: list[str] = []
    errors: list[InputError] = []
    seen: set[str] = set()
    patterns = tuple(excludes)

    def excluded(p: str) -> bool:
        name = os.path.basename(p)
        return any(fnmatch(name, pat) or fnmatch(p, pat) for pat in patterns)

    for raw in paths:
        if raw != "-" and not os.path.lexists(raw):
            errors.append(InputError(raw, "no such file or directory"))
            continue
        if os.path.isdir(raw):
            for root, dirs, names in os.walk(raw, followlinks=False):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if d not in DEFAULT_EXCLUDES and not excluded(os.path.join(root, d))
                )
                for name in sorted(names):
                    full = os.path.join(root, name)
                    if not name.lower().endswith(YAML_SUFFIXES) or excluded(full):
                        continue
                    if os.path.isdir(full):  # a link to a directory named like a file
                        continue
                    special = _special_file(full)
                    if special is not None:  # reading a FIFO or a device could block forever
                        errors.append(InputError(full, f"not a regular file ({special}); skipped"))
                        continue
                    if full not in seen:
                        seen.add(full)
                        files.append(full)
        elif raw not in seen:
            seen.add(raw)
            files.append(raw)
    return files, errors


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
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            return None, InputError(
                path, f"file is {size} bytes, larger than the {MAX_FILE_BYTES} byte limit"
            )
        with open(path, "rb") as fh:
            # bounded: a path named on the command line may be a pipe or a device
            raw = fh.read(MAX_FILE_BYTES + 1)
        if len(raw) > MAX_FILE_BYTES:
            return None, InputError(path, f"larger than the {MAX_FILE_BYTES} byte limit")
    except IsADirectoryError:
        return None, InputError(path, "is a directory, not a manifest file")
    except OSError as exc:
        return None, InputError(path, f"cannot read file: {exc.strerror or exc}")
    return decode(path, raw)


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
    """
    starts = [m.start() for m in _DOC_SPLIT.finditer(text) if text.startswith("---", m.start())]
    bounds = [0, *[s for s in starts if s != 0], len(text)]
    for a, b in pairwise(bounds):
        if b > a:
            yield text.count("\n", 0, a), text[a:b]


def looks_like_helm_template(text: str) -> bool:
    """True for unrendered Helm templates: a ``{{`` directive at the start of a line."""
    return "{{" in text and _HELM_DIRECTIVE.search(text) is not None


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
    """Syntax-only check (parse events, no construction) with PyYAML's C parser."""

    def __init__(self) -> None:
        try:
            import yaml

            self._yaml: Any = yaml
            self._loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        except ImportError:  # pragma: no cover - pyyaml is a dependency
            self._yaml = None

    def check(self, text: str) -> Exception | None:
        if self._yaml is None:
            return None
        try:
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


def load_text(text: str, path: str, default_namespace: str | None = "default") -> LoadedFile:
    """Read every Kubernetes object of a modelled kind out of a YAML or JSON stream.

    Args:
        text: the whole file.
        path: the path to report (as the user gave it).
        default_namespace: namespace for namespaced objects that name none.

    Returns:
        A :class:`LoadedFile`; syntax errors, duplicate keys and similar problems are in its
        ``errors`` (with 1-based line and column), never raised.
    """
    out = LoadedFile(path)
    if not text.strip() or not _has_content(text):
        out.errors.append(
            InputError(path, "empty file: no YAML documents (only whitespace or comments)")
        )
        return out
    if looks_like_helm_template(text):
        out.notices.append(
            Notice(path, "skipped: unrendered Helm template ({{ ... }}); render it first")
        )
        return out
    for line_offset, chunk in split_documents(text):
        if not _has_content(chunk):
            continue
        if _SNIFF.search(chunk) is None:
            # Not a kind ssrisk models: count it and check only its syntax.
            out.documents += 1
            out.skipped_kinds += 1
            err = _checker().check(chunk)
            if err is not None:
                line, col = _problem_position(err, line_offset)
                out.errors.append(InputError(path, f"YAML syntax: {_describe(err)}", line, col))
            continue
        _load_chunk(out, chunk, line_offset, default_namespace)
    return out


def _has_content(chunk: str) -> bool:
    for line in chunk.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and s not in ("---", "..."):
            return True
    return False


def _load_chunk(
    out: LoadedFile, chunk: str, line_offset: int, default_namespace: str | None
) -> None:
    import yaml

    from .yamlpos import YamlInputError, build, compose_documents

    path = out.path
    try:
        for node in compose_documents(chunk):
            data, duplicates = build(node)
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
                    data, path, line_offset, default_namespace, out.documents - 1, out.notices
                )
            )
    except yaml.YAMLError as exc:
        line, col = _problem_position(exc, line_offset)
        out.errors.append(InputError(path, f"YAML syntax: {_describe(exc)}", line, col))
    except YamlInputError as exc:
        line = None if exc.line is None else exc.line + 1 + line_offset
        col = None if exc.column is None else exc.column + 1
        out.errors.append(InputError(path, f"cannot load: {exc.message}", line, col))


def _objects_of(
    data: Any,
    path: str,
    line_offset: int,
    default_namespace: str | None,
    doc_index: int,
    notices: list[Notice],
) -> Iterable[K8sObject]:
    if not isinstance(data, dict):
        return
    kind = data.get("kind")
    if not isinstance(kind, str) or not isinstance(data.get("apiVersion"), str):
        return  # not a Kubernetes object: skipped quietly
    if kind == "List" or (kind.endswith("List") and isinstance(data.get("items"), list)):
        for item in data.get("items") or []:
            yield from _objects_of(item, path, line_offset, default_namespace, doc_index, notices)
        return
    api_version = data["apiVersion"]
    if kind == "StatefulSet" and api_version in LEGACY_STATEFULSET_VERSIONS:
        lc = getattr(data, "lc", None)
        line = (lc.line + 1 + line_offset) if lc is not None else None
        notices.append(
            Notice(
                path,
                f"StatefulSet {api_version} is not served by Kubernetes 1.16 or later, so this "
                "manifest cannot be applied to a supported cluster; not checked (use apps/v1)",
                line,
                1 if line else None,
                level="warning",
            )
        )
        return
    if api_version not in MODELLED_KINDS.get(kind, ()):
        return
    if kind == "PodDisruptionBudget" and api_version == "policy/v1beta1":
        lc = getattr(data, "lc", None)
        line = (lc.line + 1 + line_offset) if lc is not None else None
        notices.append(
            Notice(
                path,
                "PodDisruptionBudget policy/v1beta1 is not served by Kubernetes 1.25 or later; "
                "ssrisk still reads it as the budget it was meant to be (use policy/v1)",
                line,
                1 if line else None,
                level="warning",
            )
        )
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
