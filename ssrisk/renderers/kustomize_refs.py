"""What a kustomization would read, found before kustomize runs, and the private copy of the
checked tree it is built from.

Confinement is structural (:func:`copy_tree`): kustomize builds a *copy* of the
kustomization directories it can load, made of the tree's regular files only (no ``.git``,
no link that leads out of the tree, no pipe or device), with kustomize's own root-only load
restrictor (``--load-restrictor LoadRestrictionsRootOnly``: a file is loaded only from the
directory of the kustomization that names it, api/internal/loader/fileloader.go). Whatever
field names a file, it can only be one of those copies.

What the load restrictor does not cover is checked here, on the kustomization decoded the
way kustomize decodes it (:func:`kustomization_entries`):

* a *directory* named by ``resources``, ``bases``, ``components``, ``generators``,
  ``transformers`` or ``validators`` becomes a new kustomization root wherever it is
  (fileloader.go, ``New``: only a root equal to or above the current one is refused). Such
  an entry that is absolute or whose ``..`` leave the checked tree is an error at its line,
  so ``../../..`` can never reach a real directory of the machine;
* a remote entry (a git repository, ``github.com/org/repo``, ``ssh://``, ``git@``) of those
  fields, or an ``http(s)://`` URL in any field that names a file (patches, generator
  files, ``crds``, ...; generator and transformer configuration files included), is an
  error at its line unless ``--allow-remote-resources``; the renderer's child is also
  denied network sockets by the kernel (:mod:`ssrisk.renderers.nonet`);
* an include cycle (a kustomization that includes itself, directly or through others) is
  one error, at the entry that closes it, naming the cycle: kustomize would reject it
  ("cycle detected"), so nothing whose graph holds it is built. Each kustomization file is
  read and checked once per run, whatever number of builds reach it (:class:`Analyser`).

Decoding follows kustomize: ``sigs.k8s.io/yaml`` turns the YAML into JSON (go-yaml v2:
aliases and merge keys applied, ``!!binary`` base64-decoded) and ``encoding/json`` matches
field names without regard to case (``Resources:`` is ``resources``). A tag that decodes
otherwise, a NUL or an undecodable character in a path, or a kustomization that cannot be
read within :data:`MAX_KUSTOMIZATION_BYTES` is refused at its line: what it names is not
known, so it is not built.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..confine import GIT_DIR, is_inside, refusal
from ..model import InputError
from ..paths import ancestors
from .chartcopy import CopyBudget, CopyTooLarge, copy_confined

#: Fields whose entries may be a directory (a new kustomization root) or, when not local, a
#: git repository kustomize clones (api/internal/target/kusttarget.go, accumulateResources,
#: configureExternalGenerators/Transformers; api/internal/git/repospec.go).
RESOURCE_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")
#: Keys whose values name files (possibly ``key=path``) that kustomize loads, from an
#: http(s) URL too, in a kustomization or a generator/transformer configuration.
FILE_KEYS = frozenset(
    {
        "crds",
        "configurations",
        "patchesstrategicmerge",
        "path",
        "paths",
        "files",
        "envs",
        "env",
        "valuesfile",
        "additionalvaluesfiles",
        "repo",
    }
)
#: A kustomization is a few kilobytes; ssrisk's own process reads at most this much of one.
MAX_KUSTOMIZATION_BYTES = 1024 * 1024
#: The private copy a kustomization is built from holds at most this many files and bytes.
MAX_COPY_FILES = 10_000
MAX_COPY_BYTES = 64 * 1024 * 1024

_GENERATORS = ("configmapgenerator", "secretgenerator")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^git@|^[\w.-]+@[\w.-]+:|^git::")
#: ``github.com/org/repo``, ``gitlab.example.com/x``: a first path component that is a host.
_HOST = re.compile(r"^[\w-]+(\.[\w-]+)+(:\d+)?/")
_T = "tag:yaml.org,2002:"
_PLAIN_TAGS = frozenset({f"{_T}str", "!", f"{_T}int", f"{_T}float", f"{_T}bool", f"{_T}null"})
_CONTAINER_TAGS = frozenset({f"{_T}map", f"{_T}seq", f"{_T}omap", "!"})


class Unreadable(Exception):
    """A kustomization (or configuration) that cannot be decoded as kustomize would."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass
class Entry:
    """A string value of a kustomization as kustomize reads it, with where it is written."""

    field: str
    value: str
    line: int
    column: int
    multiline: bool = False
    #: for a ``"file"`` entry: its key (case-folded) and the key of the field it is under
    #: (``path`` under ``patches``), ``None`` at the top level
    key: str | None = None
    under: str | None = None


def is_remote(entry: str) -> bool:
    """Whether kustomize would fetch ``entry`` (of a resource-like field) over the network."""
    return bool(_URL.search(entry) or _HOST.match(entry))


def read_kustomization(kfile: str) -> Any:
    """The composed YAML node of a kustomization file (or a generator configuration), read
    bounded: at most :data:`MAX_KUSTOMIZATION_BYTES`, libyaml's composer (which refuses deep
    nesting), one document.

    Raises:
        Unreadable: it cannot be read or parsed (the message says why, at its line).
    """
    from ..loading import TooLarge, decode, read_bounded

    try:
        raw = read_bounded(kfile, MAX_KUSTOMIZATION_BYTES)
    except TooLarge:
        raise Unreadable(
            f"larger than {MAX_KUSTOMIZATION_BYTES} bytes; not a kustomization ssrisk reads"
        ) from None
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    text, err = decode(kfile, raw)
    if text is None or err is not None:
        raise Unreadable(err.message if err is not None else "not text")
    return _compose_one(text)


def _compose_one(text: str) -> Any:
    import yaml

    from ..yamlevents import compose_documents

    try:
        nodes = [n for n in compose_documents(text) if n is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise Unreadable(
            f"YAML syntax: {getattr(exc, 'problem', None) or exc}",
            mark.line + 1 if mark is not None else None,
            mark.column + 1 if mark is not None else None,
        ) from None
    except RecursionError:
        raise Unreadable("nested too deeply to read") from None
    return nodes[0] if nodes else None


def _mark(node: Any) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _scalar_text(node: Any) -> str | None:
    """A scalar node's value as kustomize's decoder gives it to a string field; ``None``
    for a scalar that is not a string there (a number or boolean is no path).

    Raises:
        Unreadable: a tag kustomize would decode otherwise than as text, or base64 that does
            not decode.
    """
    tag = node.tag
    if tag == f"{_T}binary":
        try:
            data = base64.b64decode("".join(str(node.value).split()), validate=True)
        except (binascii.Error, ValueError):
            raise Unreadable("a !!binary value that is not base64", *_mark(node)) from None
        return data.decode("utf-8", "surrogateescape")  # Go: string(bytes)
    if tag not in _PLAIN_TAGS:
        raise Unreadable(
            f"the tag {tag} is not one kustomize reads as text; not built", *_mark(node)
        )
    if tag in (f"{_T}str", "!") or node.style:
        return str(node.value)
    return None


def _pairs(node: Any) -> list[tuple[str | None, Any]]:
    """``(case-folded key, value node)`` of a mapping node, merge keys applied and every
    repeated key kept (kustomize reads field names without regard to case)."""
    from yaml.constructor import SafeConstructor
    from yaml.nodes import MappingNode, ScalarNode

    if not isinstance(node, MappingNode):
        return []
    if node.tag not in _CONTAINER_TAGS:
        raise Unreadable(f"the tag {node.tag} is not one kustomize reads", *_mark(node))
    if any(k.tag == f"{_T}merge" for k, _ in node.value):
        try:
            SafeConstructor().flatten_mapping(node)
        except Exception as exc:
            raise Unreadable(f"bad merge key: {exc}", *_mark(node)) from None
    out: list[tuple[str | None, Any]] = []
    for k, v in node.value:
        key = _scalar_text(k) if isinstance(k, ScalarNode) else None
        out.append((key.casefold() if key is not None else None, v))
    return out


def _strings(node: Any, name: str) -> Iterator[Entry]:
    """The string entries of a field's value: a scalar, or the scalars of a sequence."""
    from yaml.nodes import ScalarNode, SequenceNode

    items = node.value if isinstance(node, SequenceNode) else [node]
    for item in items:
        if isinstance(item, ScalarNode):
            text = _scalar_text(item)
            if text is not None:
                line, column = _mark(item)
                yield Entry(name, text, line, column, multiline="\n" in text)


def kustomization_entries(root: Any) -> Iterator[Entry]:
    """Every entry of a kustomization node that kustomize may load: the entries of the
    :data:`RESOURCE_FIELDS` (field named as there), then every string under a key in
    :data:`FILE_KEYS` at any depth (field ``"file"``).

    Raises:
        Unreadable: see :func:`_scalar_text`.
    """
    for key, value in _pairs(root):
        if key in RESOURCE_FIELDS:
            yield from _strings(value, key)
    yield from file_entries(root)


def file_entries(root: Any) -> Iterator[Entry]:
    """Every string under a key of :data:`FILE_KEYS`, at any depth of ``root`` (each node
    once: aliases can make the node graph cyclic); ``key=path`` entries give the path."""
    from yaml.nodes import MappingNode, SequenceNode

    seen: set[int] = set()
    stack: list[tuple[Any, str | None]] = [(root, None)]
    while stack:
        node, under = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, value in _pairs(node):
                if key in FILE_KEYS:
                    for entry in _strings(value, "file"):
                        if not entry.multiline:
                            entry.value = entry.value.rpartition("=")[2]
                        entry.key, entry.under = key, under
                        yield entry
                stack.append((value, key))
        elif isinstance(node, SequenceNode):
            stack.extend((item, under) for item in node.value)


def _unusable(entry: str) -> str | None:
    """Why ``entry`` cannot be a path the file system takes, or ``None``."""
    if "\x00" in entry:
        return "contains a NUL character"
    try:
        os.fsencode(entry)
    except UnicodeError:
        return "holds a character that is not valid text (a lone surrogate)"
    return None


@dataclass
class Analysis:
    """What building a kustomization would read: refusals (errors at their lines), and the
    kustomization directories it can load (real paths inside the tree)."""

    errors: list[InputError] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)


def analyse(directory: str, root: str, *, remote_ok: bool = False) -> Analysis:
    """Check the kustomization in ``directory`` and every local one it loads (see the
    module), inside the checked tree ``root`` (a real path); :meth:`Analyser.analyse` with
    an analyser of its own.

    Never raises for bad input: every problem is an error of the result.
    """
    return Analyser().analyse(directory, root, remote_ok=remote_ok)


class Analyser:
    """The reference analysis of one run, shared by every kustomization it builds: each
    kustomization file is read, decoded and checked once (by real path), each include cycle
    is found once, so checking every build of a run costs time linear in the kustomization
    files read and the includes they hold (not builds times graph)."""

    def __init__(self) -> None:
        self._graphs: dict[tuple[str, bool, bool], _Graph] = {}

    def analyse(self, directory: str, root: str, *, remote_ok: bool = False) -> Analysis:
        """What building the kustomization in ``directory`` would read, inside the checked
        tree ``root`` (a real path); paths are shown absolute when ``directory`` is.

        Returns:
            The errors of every kustomization it loads (when it loads one with errors or an
            include cycle, at least one of them; those an earlier build of this analyser
            already returned may be left out, as the run reports each error once), and,
            when there is none, the kustomization directories to copy (:func:`copy_tree`).
            Never raises for bad input.
        """
        key = (root, remote_ok, os.path.isabs(directory))
        graph = self._graphs.get(key)
        if graph is None:
            graph = self._graphs[key] = _Graph(root, remote_ok, directory)
        return graph.analyse(directory)


@dataclass
class _Node:
    """One directory a kustomization loads, read once: its kustomization file as shown
    (``None``: it has none), whether it is a kustomization root to copy, its own errors
    and the directories it includes (as named, their real path, the entry naming them)."""

    real: str
    kfile: str | None = None
    root: bool = False
    errors: list[InputError] = field(default_factory=list)
    includes: list[tuple[str, str, Entry]] = field(default_factory=list)


@dataclass
class _Component:
    """A strongly connected set of kustomizations (one, or an include cycle): whether a
    build that reaches it fails, and the errors such a build reports when it has read
    nothing new (those of the first failing kustomization it reaches)."""

    fails: bool = False
    errors: list[InputError] = field(default_factory=list)


class _Graph:
    """The kustomizations of one tree read by an :class:`Analyser`: a depth-first walk
    (Tarjan's strongly connected components) that continues from each new build, so each
    directory and include is visited once."""

    def __init__(self, root: str, remote_ok: bool, given: str) -> None:
        self.root = root
        self.remote_ok = remote_ok
        self.given = given  # (only whether it is absolute: how paths are shown)
        self.nodes: dict[str, _Node] = {}
        self.component: dict[str, _Component] = {}
        self._index: dict[str, int] = {}
        self._low: dict[str, int] = {}
        self._parent: dict[str, tuple[str, Entry] | None] = {}

    def analyse(self, directory: str) -> Analysis:
        """See :meth:`Analyser.analyse`."""
        real = os.path.realpath(directory)
        new: list[InputError] = []
        if real not in self.component:
            self._walk(directory, real, new)
        found = self.component[real]
        if found.fails:
            return Analysis(errors=new or list(found.errors))
        return Analysis(roots=self._roots(real))

    def _roots(self, start: str) -> list[str]:
        """The kustomization directories ``start`` loads, in the order of a depth-first
        walk (only for a build that is run: its copy costs as much)."""
        seen: set[str] = set()
        pending, out = [start], []
        while pending:
            real = pending.pop()
            if real in seen:
                continue
            seen.add(real)
            node = self.nodes[real]
            if node.root:
                out.append(real)
            pending.extend(include for _, include, _ in node.includes)
        return out

    def _walk(self, directory: str, real: str, new: list[InputError]) -> None:
        """Read every directory reachable from ``directory`` not read yet (their errors
        are added to ``new``), completing the component of each."""
        stack: list[str] = []  # Tarjan's stack: visited, component not yet complete
        on_stack: set[str] = set()
        on_path: set[str] = set()  # the walk's current path (a back edge closes a cycle)
        #: include edges ``(from, entry, to)`` whose target is on the path, in walk order;
        #: those of a component are the last ones when it completes
        back: list[tuple[str, Entry, str]] = []
        mark: dict[str, int] = {}

        def visit(lexical: str, real: str, parent: tuple[str, Entry] | None) -> None:
            node = self._read(lexical, real)
            new.extend(node.errors)
            self._index[real] = self._low[real] = len(self._index)
            self._parent[real] = parent
            mark[real] = len(back)
            stack.append(real)
            on_stack.add(real)
            on_path.add(real)
            work.append((real, iter(node.includes)))

        work: list[tuple[str, Iterator[tuple[str, str, Entry]]]] = []
        visit(directory, real, None)
        while work:
            here, todo = work[-1]
            for lexical, include, entry in todo:
                if include not in self._index:
                    visit(lexical, include, (here, entry))
                    break
                if include in on_stack:
                    self._low[here] = min(self._low[here], self._index[include])
                    if include in on_path:
                        back.append((here, entry, include))
            else:
                work.pop()
                on_path.discard(here)
                if work:
                    up = work[-1][0]
                    self._low[up] = min(self._low[up], self._low[here])
                if self._low[here] == self._index[here]:
                    members: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == here:
                            break
                    closing = back[mark[here] :]
                    del back[mark[here] :]
                    self._complete(members, closing[0] if closing else None, new)

    def _complete(
        self, members: list[str], closing: tuple[str, Entry, str] | None, new: list[InputError]
    ) -> None:
        """Record the component ``members`` (``closing``: its first include that closes a
        cycle); the components it includes are complete already."""
        component = _Component()
        if closing is not None:
            cycle = self._cycle_error(*closing)
            new.append(cycle)
            component.fails, component.errors = True, [cycle]
        inside = set(members)
        for real in reversed(members):  # (the order they were read in)
            node = self.nodes[real]
            if node.errors and not component.fails:
                component.fails, component.errors = True, node.errors
            for _, include, _ in node.includes:
                below = self.component.get(include) if include not in inside else None
                if below is not None and below.fails and not component.fails:
                    component.fails, component.errors = True, below.errors
        for real in members:
            self.component[real] = component

    def _cycle_error(self, last: str, entry: Entry, first: str) -> InputError:
        """The error at ``entry`` of the kustomization ``last``, which includes ``first``,
        its ancestor on the walk: an include cycle, named from ``first`` to ``first``."""
        chain = [last]
        while chain[-1] != first:
            parent = self._parent[chain[-1]]
            assert parent is not None  # ``first`` is on the walk's path above ``last``
            chain.append(parent[0])
        names = [self._shown_directory(real) for real in reversed(chain)]
        names.append(names[0])
        if len(names) > 10:
            names = [*names[:5], f"... ({len(names) - 1} kustomizations)", *names[-4:]]
        kfile = self.nodes[last].kfile or last
        return InputError(
            kfile,
            f"{entry.field}: {entry.value.strip()!r} closes an include cycle "
            f"({' -> '.join(names)}): kustomize rejects it (cycle detected); not built",
            entry.line,
            entry.column,
        )

    def _shown_directory(self, real: str) -> str:
        kfile = self.nodes[real].kfile
        return (os.path.dirname(kfile) or os.curdir) if kfile else real

    def _read(self, here: str, real: str) -> _Node:
        """The directory ``here`` (its real path ``real``) read and checked (see the
        module), once."""
        from ..paths import tidy
        from .common import display_path, kustomization_file

        node = self.nodes.get(real)
        if node is not None:
            return node
        node = self.nodes[real] = _Node(real)
        root, given = self.root, self.given
        found = kustomization_file(here)
        if found is None:
            return node
        kfile = node.kfile = tidy(display_path(os.path.abspath(found), given))
        refused = refusal(kfile, root)
        if refused is None and not is_inside(real, root):
            refused = f"outside the checked tree ({root}); not read"
        if refused is not None:
            node.errors.append(InputError(kfile, refused))
            return node
        node.root = True
        try:
            document = read_kustomization(kfile)
            charts = _helm_charts(document, kfile)
            if charts is not None:  # (its other entries are not what stops the build)
                node.errors.append(charts)
                return node
            for entry in kustomization_entries(document):
                problem, include = _check_entry(entry, kfile, real, root, self.remote_ok, given)
                if problem is not None:
                    node.errors.append(problem)
                if include is not None:
                    node.includes.append((include, os.path.realpath(include), entry))
        except Unreadable as exc:
            node.errors.append(_unreadable(kfile, exc))
        return node


#: Why a kustomization with ``helmCharts`` is not built, and what to do instead.
HELM_CHARTS = (
    "helmCharts: kustomize inflates charts only with --enable-helm and a helm binary, "
    "pulling each chart from its repo over the network, which ssrisk does not do; not built. "
    "Vendor the chart (helm pull REPO/CHART --untar --untardir charts) and check that "
    "directory as a chart (with charts: in .ssrisk.yaml for its values), or render it "
    "yourself: kustomize build --enable-helm DIR | ssrisk check -"
)


def _helm_charts(document: Any, kfile: str) -> InputError | None:
    """An error at the ``helmCharts`` key of a kustomization document, if it has one."""
    from yaml.nodes import MappingNode, ScalarNode

    if not isinstance(document, MappingNode):
        return None
    for key, _value in document.value:  # (kustomize reads field names without regard to case)
        text = _scalar_text(key) if isinstance(key, ScalarNode) else None
        if text is not None and text.casefold() == "helmcharts":
            return InputError(kfile, HELM_CHARTS, *_mark(key))
    return None


def _unreadable(kfile: str, exc: Unreadable) -> InputError:
    return InputError(
        kfile,
        f"cannot read the kustomization to check what it references, so it is not built: {exc}",
        exc.line,
        exc.column,
    )


def _check_entry(
    entry: Entry, kfile: str, here: str, root: str, remote_ok: bool, given: str
) -> tuple[InputError | None, str | None]:
    """``(error or None, a directory to check next or None)`` for one entry of the
    kustomization ``kfile`` in the real directory ``here`` (``given``: the PATH's spelling,
    for the paths shown)."""

    def error(message: str) -> InputError:
        return InputError(kfile, f"{entry.field}: {message}", entry.line, entry.column)

    value = entry.value.strip()
    if entry.multiline:  # an inline patch or generator configuration: its file fields
        return _check_inline(entry, kfile, here, root, remote_ok), None
    if not value:
        return None, None
    bad = _unusable(value)
    if bad is not None:
        return error(f"{value!r} {bad}; not built"), None
    remote = _URL.search(value) is not None or (
        entry.field in RESOURCE_FIELDS and _HOST.match(value) is not None
    )
    if remote:
        if remote_ok:
            return None, None
        return error(
            f"{value!r} is remote: kustomize would fetch it over the network (git or HTTP), "
            "which ssrisk refuses (--allow-remote-resources allows it)"
        ), None
    if os.path.isabs(value):
        return error(
            f"{value!r} is an absolute path: kustomize builds a copy of the checked tree "
            f"({root}), so only paths inside it are built"
        ), None
    rel_here = os.path.relpath(here, root)
    target = os.path.normpath(os.path.join(rel_here, value))
    parts = target.split(os.sep)
    if parts[0] == os.pardir:
        return error(f"{value!r} leads outside the checked tree ({root}); not built"), None
    if GIT_DIR in parts:
        return error(f"{value!r} is inside a .git directory; not built"), None
    full = os.path.join(root, target)
    refused = refusal(full, root)  # before lexists: the same whether the outside exists
    if refused is not None:
        return error(f"{value!r} is {refused}"), None
    if not os.path.lexists(full):
        if _must_exist(entry):
            return InputError(
                kfile,
                f"{_field_name(entry)}: {value!r} does not exist; not built",
                entry.line,
                entry.column,
            ), None
        return None, None
    if entry.field in RESOURCE_FIELDS:
        if os.path.isdir(full):
            return None, full
        if entry.field in ("generators", "transformers", "validators"):
            from .common import display_path

            shown = display_path(full, given)  # (of the kustomization in ``here``)
            return _check_configuration(entry, full, shown, here, root, remote_ok), None
    return None, None


#: ``(key, the field it is under)`` of the file entries of a kustomization that kustomize
#: loads whenever it builds (a missing one fails the build: api/internal/target/
#: kusttarget.go; api/internal/generators and api/filters for generator files and patches).
#: ``path`` elsewhere is a field path (``labels[].fields[].path: spec/selector``), not a file.
_LOADED_FILES = frozenset(
    {
        ("patchesstrategicmerge", None),
        ("crds", None),
        ("configurations", None),
        ("path", "patches"),
        ("path", "patchesjson6902"),
        ("path", "replacements"),
        *((key, gen) for key in ("files", "envs", "env") for gen in _GENERATORS),
    }
)


def _must_exist(entry: Entry) -> bool:
    """Whether kustomize fails the build when the local path of ``entry`` is missing: every
    entry of :data:`RESOURCE_FIELDS` and the file fields of :data:`_LOADED_FILES`; a glob
    pattern (``*``, ``?``, ``[``) names no one file and is left to kustomize."""
    if any(c in entry.value for c in "*?["):
        return False
    if entry.field in RESOURCE_FIELDS:
        return True
    return (entry.key, entry.under) in _LOADED_FILES


#: kustomization field names as kustomize spells them (entries hold them case-folded)
_FIELD_NAMES = {
    n.casefold(): n
    for n in ("patchesStrategicMerge", "patchesJson6902", "configMapGenerator", "secretGenerator")
}


def _field_name(entry: Entry) -> str:
    """The kustomization field ``entry`` belongs to, as the user wrote it in the common
    spelling: ``patches`` for ``patches[].path``, ``files`` for a generator's files."""
    name = entry.field
    if name == "file" and entry.key is not None:
        name = entry.under if entry.key == "path" and entry.under else entry.key
    return _FIELD_NAMES.get(name, name)


def _check_inline(
    entry: Entry, kfile: str, here: str, root: str, remote_ok: bool
) -> InputError | None:
    """An inline generator, transformer or patch text: its file fields."""
    try:
        node = _compose_one(entry.value)
    except Unreadable:
        return None  # kustomize reports a broken inline text
    return _check_files(node, kfile, entry.line, here, root, remote_ok)


def _check_configuration(
    entry: Entry, path: str, shown: str, here: str, root: str, remote_ok: bool
) -> InputError | None:
    """A generator, transformer or validator configuration file (``shown`` as the user
    sees it): its file fields, which kustomize loads for the kustomization in ``here``."""
    try:
        node = read_kustomization(path)
    except Unreadable as exc:
        return InputError(
            shown, f"cannot read this {entry.field} configuration: {exc}", exc.line, exc.column
        )
    return _check_files(node, shown, 0, here, root, remote_ok)


def _check_files(
    node: Any, shown: str, line_offset: int, here: str, root: str, remote_ok: bool
) -> InputError | None:
    """The first file field of a configuration that names a URL (unless ``remote_ok``), a
    file in ``.git`` or a path out of the tree: kustomize would refuse the last two too, or
    find nothing in its copy, but this names the line (the first line of defence)."""
    try:
        for found in file_entries(node):
            value = found.value.strip()
            line = found.line + line_offset
            if not value or found.multiline:
                continue
            problem = None
            if _URL.search(value):
                if not remote_ok:
                    problem = (
                        f"{value!r} is remote: kustomize would fetch it over the network, "
                        "which ssrisk refuses (--allow-remote-resources allows it)"
                    )
            elif _unusable(value) is not None:
                problem = f"{value!r} {_unusable(value)}; not built"
            else:
                rel = os.path.normpath(os.path.join(os.path.relpath(here, root), value))
                parts = rel.split(os.sep)
                if os.path.isabs(value) or parts[0] == os.pardir:
                    problem = f"{value!r} leads outside the checked tree ({root}); not built"
                elif GIT_DIR in parts:
                    problem = f"{value!r} is inside a .git directory; not built"
            if problem is not None:
                return InputError(shown, f"file: {problem}", line, found.column)
    except Unreadable as exc:
        return InputError(shown, f"cannot read: {exc}", exc.line, exc.column)
    return None


def local_references(directory: str, root: str | None = None) -> list[str]:
    """Local directories the kustomization in ``directory`` includes (the directories named
    by :data:`RESOURCE_FIELDS`), as real paths; remote and file entries are left out, and a
    kustomization that cannot be read includes nothing. With the checked tree ``root`` (a
    real path), a kustomization file that leads out of it or into ``.git`` is not opened and
    includes nothing. Never raises."""
    from .common import kustomization_file

    kfile = kustomization_file(directory)
    if kfile is None or (root is not None and refusal(kfile, root) is not None):
        return []
    out: list[str] = []
    try:
        node = read_kustomization(kfile)
        for key, value in _pairs(node):
            if key not in RESOURCE_FIELDS:
                continue
            for entry in _strings(value, key):
                text = entry.value.strip()
                if entry.multiline or not text or _unusable(text) or is_remote(text):
                    continue
                path = os.path.realpath(os.path.join(directory, text))
                if os.path.isdir(path):
                    out.append(path)
    except (Unreadable, OSError, ValueError):
        return out
    return out


def included_bases(includes: Mapping[str, Iterable[str]]) -> set[str]:
    """The kustomizations that another one includes (a base of an overlay), other than
    through an include cycle: a kustomization in a cycle (``resources: [../db]`` in
    ``db/``) is no base of its own cycle; it is built, and the cycle is an error then
    (:class:`Analyser`), never a silent skip. Linear in the kustomizations and includes."""
    component = components(includes)
    return {
        child
        for parent, children in includes.items()
        for child in children
        if component[child] != component[parent]
    }


def components(includes: Mapping[str, Iterable[str]]) -> dict[str, int]:
    """The strongly connected component of every kustomization of ``includes``
    (kustomization -> the kustomizations it names) and of every one named: two have the
    same number when each includes the other, directly or through others (Tarjan's
    algorithm without recursion; linear in kustomizations and includes)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    out: dict[str, int] = {}
    stack: list[str] = []
    count = 0
    for start in includes:
        if start in index:
            continue
        index[start] = low[start] = len(index)
        stack.append(start)
        work = [(start, iter(includes.get(start, ())))]
        while work:
            here, todo = work[-1]
            for nxt in todo:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    work.append((nxt, iter(includes.get(nxt, ()))))
                    break
                if nxt not in out:  # (on the stack)
                    low[here] = min(low[here], index[nxt])
            else:
                work.pop()
                if work:
                    up = work[-1][0]
                    low[up] = min(low[up], low[here])
                if low[here] == index[here]:
                    count += 1
                    while True:
                        member = stack.pop()
                        out[member] = count
                        if member == here:
                            break
    return out


# --- the private copy --------------------------------------------------------------------------


@dataclass
class TreeCopy:
    """A copy of the kustomization roots of a tree: ``path`` mirrors the tree ``root``."""

    root: str
    path: str
    skipped: list[str] = field(default_factory=list)

    def copy_of(self, real_path: str) -> str:
        """Where ``real_path`` (inside the tree) is in the copy."""
        return os.path.join(self.path, os.path.relpath(real_path, self.root))

    def original_of(self, copy_path: str) -> str:
        """The tree's path of ``copy_path`` (inside the copy)."""
        return os.path.normpath(
            os.path.join(self.root, os.path.relpath(os.path.normpath(copy_path), self.path))
        )


def copy_tree(roots: list[str], root: str, into: str) -> TreeCopy:
    """Copy the directories ``roots`` (real paths inside the tree ``root``) and everything
    below them into ``into`` at the same places relative to ``root``: regular files whose
    real path stays inside the tree and outside ``.git``; a link inside the tree is copied as
    what it names, each directory once. Nothing else is copied (kustomize's root-only
    loading reads no other file).

    Raises:
        CopyTooLarge: more than :data:`MAX_COPY_FILES` files or :data:`MAX_COPY_BYTES` bytes.
    """
    copy = TreeCopy(root, into)
    os.makedirs(into, exist_ok=True)
    budget = CopyBudget(MAX_COPY_FILES, MAX_COPY_BYTES)
    done: set[str] = set()
    for top in sorted(set(roots), key=len):
        if _within(top, done):
            continue
        done.add(top)
        try:
            left = copy_confined(top, root, copy.copy_of(top), budget, "the checked tree")
        except CopyTooLarge:
            raise CopyTooLarge(
                f"the directories it loads hold more than {MAX_COPY_FILES} files or "
                f"{MAX_COPY_BYTES} bytes; not built"
            ) from None
        copy.skipped.extend(os.path.join(top, s.path) for s in left)
    return copy


def _within(path: str, directories: set[str]) -> bool:
    """Whether ``path`` (a real path) is one of ``directories`` or below one (its
    ancestors looked up, not every directory compared)."""
    return any(p in directories for p in ancestors(path))


def refused_references(
    directory: str, root: str, kustomization_file: str | None, *, remote_ok: bool = False
) -> list[InputError]:
    """The errors of :func:`analyse` (kept for callers that only check)."""
    del kustomization_file
    return analyse(directory, root, remote_ok=remote_ok).errors
