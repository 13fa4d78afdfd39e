"""Rendering a kustomization directory with ``kustomize build`` (or ``kubectl kustomize``).

So that findings point at the base or overlay file a user edits, the directory is built
through a throw-away kustomization that only lists it as a resource and asks kustomize to
record where every object came from (``buildMetadata: [originAnnotations]``, which adds the
``config.kubernetes.io/origin`` annotation: kustomize api/types/kustomization.go,
OriginAnnotations; api/resource/origin.go). The annotation is removed again before rules
see the object. Fields that a strategic-merge or JSON 6902 patch of the kustomization (or of
a kustomization it includes) sets are pointed at in that patch file.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from ..confine import is_inside
from ..loading import LoadedFile, load_text, read_text, record_comments
from ..model import K8sObject, Position
from .bounded import Limits, run_bounded, scrubbed_environment
from .common import (
    KUSTOMIZATION_FILES,
    RenderError,
    display_path,
    error,
    kustomization_file,
    rendered,
)
from .kustomize_refs import (
    Analyser,
    CopyTooLarge,
    TreeCopy,
    copy_tree,
    local_references,
    read_kustomization,
)
from .locate import FieldValue, InlineText, JsonPatch, ObjectLocator, PatchDocument

#: kustomize api/konfig/general.go, RecognizedKustomizationFileNames (in this order).
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
INSTALL_HINT = (
    "install kubectl (its 'kubectl kustomize' embeds kustomize) or the kustomize binary "
    "(https://kubectl.docs.kubernetes.io/installation/kustomize/)"
)


def _build_command(target: str) -> tuple[list[str], str]:
    # Files are loaded only from the directory of the kustomization that names them (the
    # default of both, given explicitly): api/krusty/options.go, LoadRestrictionsRootOnly.
    restrict = ["--load-restrictor", "LoadRestrictionsRootOnly"]
    kustomize = shutil.which("kustomize")
    if kustomize is not None:
        return [kustomize, "build", target, *restrict], "kustomize build"
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize", target, *restrict], "kubectl kustomize"
    raise RenderError(f"neither kustomize nor kubectl is on PATH; {INSTALL_HINT}")


#: kubectl never needs a cluster to build, but a wrapper such as a version dispatcher may ask
#: one for its version (GET /version) before it runs kubectl: it is given this configuration,
#: whose server is port 0 of the loopback address, where nothing can listen.
NO_CLUSTER_KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- name: none
  cluster: {server: "https://127.0.0.1:0"}
contexts:
- name: none
  context: {cluster: none, user: none}
current-context: none
users:
- name: none
  user: {}
"""


def build(
    copy: TreeCopy,
    directory: str,
    tmp: str,
    limits: Limits | None = None,
    *,
    network: bool = False,
    given: str | None = None,
) -> tuple[str, str | None]:
    """Run kustomize on the copy of ``directory`` (a real path inside ``copy``'s tree),
    bounded (:mod:`ssrisk.renderers.bounded`): no network unless ``network``
    (``--allow-remote-resources``), a scrubbed environment whose kubeconfig names no
    reachable cluster, and the time, memory and output limits of ``limits``. ``tmp`` is a
    private directory for the wrapper and the renderer's home. ``given``: the directory as
    the user spelt it (paths in kustomize's message are shown the same way).

    Returns:
        ``(yaml stream, wrapper directory)``; origin annotation paths in the stream are
        relative to the wrapper directory (``None`` when the directory had to be built
        without origins, which happens only if the wrapper cannot be built).

    Raises:
        RenderError: kustomize/kubectl is missing, the build fails (kustomize's message,
            :func:`tool_error`) or passes a limit.
    """
    target = copy.copy_of(directory)
    shown_root = display_path(copy.root, given or directory)
    shown_directory = display_path(directory, given or directory)
    private = os.path.join(tmp, "home")
    wrapper = os.path.join(tmp, "wrapper")
    os.mkdir(private)
    os.mkdir(wrapper)
    kubeconfig = os.path.join(private, "kubeconfig")
    with open(kubeconfig, "w", encoding="utf-8") as fh:
        fh.write(NO_CLUSTER_KUBECONFIG)
    env = scrubbed_environment(private, network=network, extra={"KUBECONFIG": kubeconfig})
    with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as fh:
        rel = os.path.relpath(target, wrapper)
        fh.write(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources:\n  - {_quote(rel)}\nbuildMetadata: [originAnnotations]\n"
        )

    def run(at: str) -> str:
        argv, what = _build_command(at)
        try:
            return run_bounded(
                argv, what=what, cwd=private, env=env, limits=limits, network=network
            )
        except RenderError as exc:
            raise RenderError(
                tool_error(str(exc), {copy.path: shown_root, wrapper: shown_directory})
            ) from None

    try:
        return run(wrapper), wrapper
    except RenderError as exc:
        if "stopped" in str(exc) or "out of memory" in str(exc):
            raise  # a limit: building again would only cost as much again
    # Build the directory itself: either it works without origins, or its error message
    # names the user's files rather than the wrapper.
    return run(target), None


#: kubectl logs a failed command through klog: ``E1201 14:04:22.620044   29181 run.go:72] ``
#: (k8s.io/klog/v2, the header of every line: severity, date, time, thread id, file:line).
_KLOG_HEADER = re.compile(r"\b[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [\w.-]+:\d+\] ")
#: ... followed by ``"command failed" err="<quoted message>"`` or, for a message of several
#: lines, ``err=<`` then the lines, then ``>`` (klog's structured values; here joined by
#: ``; `` as :func:`~ssrisk.renderers.common.tool_message` gives them).
_KLOG_FAILED = re.compile(r'^"command failed" err=(?:"(?P<quoted>.*)"|<; (?P<lines>.*?)(?:; >)?)$')


def tool_error(message: str, paths: Mapping[str, str]) -> str:
    """kustomize's (or kubectl's) error message as a user reads it: without klog's header
    and structured-value quoting, and every path of the private build (``paths``: prefix ->
    how to show it, the checked tree's directory as the user spelt it) written as the
    user's path."""
    text = _KLOG_HEADER.sub("", message).strip()
    failed = _KLOG_FAILED.match(text)
    if failed is not None:
        quoted = failed.group("quoted")
        text = (
            quoted.replace('\\"', '"').replace("\\\\", "\\")
            if quoted is not None
            else failed.group("lines")
        )
    for prefix, shown in sorted(paths.items(), key=lambda p: -len(p[0])):
        text = text.replace(prefix + os.sep, "" if shown == os.curdir else shown + os.sep)
        text = text.replace(prefix, shown)
    return text


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def render_kustomization(
    directory: str,
    namespace: str,
    limits: Limits | None = None,
    *,
    network: bool = False,
    tree: str | None = None,
    analyser: Analyser | None = None,
) -> LoadedFile:
    """Build ``directory`` and load its objects, pointing each at the file that defines it.

    Namespaces: kustomize already applied the kustomization's ``namespace``; objects that
    still name none get ``namespace`` (``--namespace``), as kubectl would.

    The build reads a private copy of the kustomization directories it can load, made of
    the tree's regular files without ``.git`` (:mod:`ssrisk.renderers.kustomize_refs`); a
    reference that would leave it (an absolute path, ``..`` out of the checked tree) or,
    unless ``network`` (``--allow-remote-resources``), anything kustomize would fetch over
    the network, is not built: each is an error at its file and line. ``tree`` is the
    checked tree (default: :func:`ssrisk.confine.tree_of` the directory). Every file read to
    point findings back (resources, patches, suppression comments) is read from the copy.
    ``analyser``: the run's :class:`~ssrisk.renderers.kustomize_refs.Analyser`, shared by
    all its builds, so each kustomization file is read and checked once per run (default:
    one of its own); a kustomization whose graph holds an include cycle or an error is
    never handed to kustomize.

    Returns:
        A :class:`LoadedFile` named after the directory; a missing tool or a failed build is
        its single error (naming the directory and what to install), never raised.
    """
    from ..confine import tree_of

    root = tree or tree_of(directory)
    analysis = (analyser or Analyser()).analyse(directory, root, remote_ok=network)
    if analysis.errors:
        lf = LoadedFile(directory)
        lf.errors.extend(analysis.errors)
        return lf
    real = os.path.realpath(directory)
    with tempfile.TemporaryDirectory(prefix="ssrisk-kustomize-") as tmp:
        tmp = os.path.realpath(tmp)
        try:
            copy = copy_tree(analysis.roots, root, os.path.join(tmp, "tree"))
            text, wrapper = build(copy, real, tmp, limits, network=network, given=directory)
        except CopyTooLarge as exc:
            return error(directory, f"cannot build kustomization: {exc}")
        except RenderError as exc:
            return error(directory, f"cannot build kustomization: {exc}")
        return _load_built(directory, copy, text, wrapper, namespace)


def _load_built(
    directory: str, copy: TreeCopy, text: str, wrapper: str | None, namespace: str
) -> LoadedFile:
    """The objects of a built stream, each pointed at the file (in the copy, shown as the
    tree's) that defines its fields."""
    lf = load_text(text, directory, namespace) if text.strip() else LoadedFile(directory)
    lf.ignore_comments = {}  # the built stream's lines are nobody's: see below
    resolver = _Resolver(directory, copy)
    shown = display_path(os.path.abspath(directory), directory)  # findings name the build
    objects = []
    for obj in lf.objects:
        origin = _pop_origin(obj.data)
        origin_path = origin.get("path") if isinstance(origin, Mapping) else None
        origin_file = (
            os.path.normpath(os.path.join(wrapper, str(origin_path)))
            if wrapper is not None and origin_path and not origin.get("repo")
            else None
        )
        if origin_file is not None and not is_inside(origin_file, copy.path):
            origin_file = None  # only files of the copy are read
        locator = resolver.locator(obj, origin_file)
        objects.append(rendered(obj, locator=locator, kustomization=shown))
    lf.objects = list(objects)
    for path, source in resolver.texts.items():  # the resource files findings point into
        record_comments(lf, path, source)
    return lf


def _pop_origin(data: Any) -> Mapping[str, Any]:
    """Remove kustomize's origin annotation from ``data`` and return it parsed."""
    meta = data.get("metadata") if isinstance(data, Mapping) else None
    if not isinstance(meta, dict):
        return {}
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict) or ORIGIN_ANNOTATION not in annotations:
        return {}
    raw = annotations.pop(ORIGIN_ANNOTATION)
    if not annotations:
        del meta["annotations"]
    try:
        import yaml

        parsed = yaml.safe_load(str(raw))
    except Exception:  # a malformed annotation only costs the position
        return {}
    return parsed if isinstance(parsed, Mapping) else {}


@dataclass
class _Patch:
    """One patch of a kustomization: a file, or text written inline in the kustomization."""

    file: str  # the patch file, or the kustomization file that holds the patch inline
    shown: str  # ``file`` as shown to the user
    kind: str | None  # target kind (from ``target`` or the patch document)
    name: str | None
    json6902: bool
    inline: str | None = None  # the patch text, when written inline
    place: InlineText = field(default_factory=InlineText)

    @cached_property
    def documents(self) -> list[K8sObject]:
        """The strategic-merge patch documents, with positions in the file shown."""
        text = self.inline if self.inline is not None else _read(self.file)
        if not text:
            return []
        return [
            PatchDocument(
                data=o.data,
                path=self.shown,
                line_offset=o.line_offset,
                namespace=None,
                doc_index=o.doc_index,
                text=self.place,
            )
            for o in load_text(text, self.shown, None).objects
        ]

    @cached_property
    def json_patch(self) -> JsonPatch | None:
        """The JSON 6902 operations, with positions; ``None`` when they cannot be read
        (kustomize reports a broken patch)."""
        text = self.inline if self.inline is not None else _read(self.file)
        if not text:
            return None
        try:
            from ..yamlpos import load_documents

            ops = next((data for data, _ in load_documents(text)), None)
        except Exception:
            return None
        return JsonPatch(self.shown, ops, self.place) if isinstance(ops, list) else None


@dataclass
class _Replicas:
    """A kustomization's ``replicas: [{name, count}]`` entry (kustomize's ReplicaCountTransformer,
    api/filters/replicacount/replicacount.go: it sets ``spec.replicas`` of the named object)."""

    name: str
    at: Position


class _Resolver:
    """Reads the kustomization tree once (from its copy) and builds a locator for each
    object; paths are shown as the tree's."""

    def __init__(self, directory: str, copy: TreeCopy) -> None:
        self.directory = directory
        self.copy = copy
        self.root = copy.copy_of(os.path.realpath(directory))
        self._files: dict[str, list[K8sObject]] = {}
        #: the text of each resource file read, by path as shown
        self.texts: dict[str, str] = {}
        self._patches: list[_Patch | _Replicas] | None = None

    def locator(self, obj: K8sObject, origin_file: str | None) -> ObjectLocator:
        kfile = kustomization_file(self.root)
        fallback = Position(self._shown(kfile or self.root), 1, 1)
        base = self._document(origin_file, obj) if origin_file else None
        names = {obj.name} | ({base.name} if base is not None else set())
        patches: list[K8sObject | JsonPatch | FieldValue] = []
        for patch in self.patches():
            if isinstance(patch, _Replicas):
                if patch.name in names:
                    patches.append(FieldValue(("spec", "replicas"), patch.at))
                continue
            if patch.kind not in (None, obj.kind) or (patch.name and patch.name not in names):
                continue
            if patch.json6902:
                if patch.json_patch is not None:
                    patches.append(patch.json_patch)
                continue
            for doc in patch.documents:
                if doc.kind == obj.kind and (doc.name in names or patch.name in names):
                    patches.append(doc)
        return ObjectLocator(base=base, patches=patches, fallback=fallback)

    def _shown(self, path: str) -> str:
        """A path of the copy, shown as the tree's file (as the user spelt the PATH)."""
        return display_path(self.copy.original_of(os.path.abspath(path)), self.directory)

    def _objects(self, path: str) -> list[K8sObject]:
        if path not in self._files:
            text = _read(path)
            shown = self._shown(path)
            self._files[path] = load_text(text, shown, None).objects if text else []
            if text:
                self.texts[shown] = text
        return self._files[path]

    def _document(self, path: str, obj: K8sObject) -> K8sObject | None:
        docs = [d for d in self._objects(path) if d.kind == obj.kind]
        exact = [d for d in docs if d.name == obj.name]
        if exact:
            return exact[0]
        # the overlay added a prefix or suffix: the longest name contained in the result
        inner = sorted(
            (d for d in docs if d.name and d.name in obj.name), key=lambda d: -len(d.name)
        )
        return inner[0] if inner else (docs[0] if len(docs) == 1 else None)

    def patches(self) -> list[_Patch | _Replicas]:
        """What sets fields in the kustomization and every local kustomization it includes,
        the outermost first (its transformers run last, so they win)."""
        if self._patches is None:
            self._patches = list(_walk_patches(self.root, set(), self._shown))
        return self._patches


def _read(path: str) -> str | None:
    text, err = read_text(path)
    return text if err is None else None


def _load_kustomization(directory: str) -> Mapping[str, Any]:
    """The kustomization of ``directory`` (in the copy) as data, read bounded; ``{}`` when it
    cannot be read (kustomize reports a broken kustomization)."""
    kfile = kustomization_file(directory)
    if kfile is None:
        return {}
    try:
        from ..yamlevents import build as build_data

        data, _ = build_data(read_kustomization(kfile))
    except Exception:  # kustomize itself reports a broken kustomization
        return {}
    return data if isinstance(data, Mapping) else {}


class _Tree:
    """A kustomization file read with positions: the entries of its top-level lists."""

    def __init__(self, directory: str, shown: Callable[[str], str]) -> None:
        self.file = kustomization_file(directory) or os.path.join(directory, KUSTOMIZATION_FILES[0])
        self.shown = shown(self.file)
        self.root: Any = None
        self.lines: list[str] = []
        try:
            self.root = read_kustomization(self.file)
            self.lines = (_read(self.file) or "").splitlines()
        except Exception:  # kustomize itself reports a broken kustomization
            pass

    def entries(self, key: str) -> list[Any]:
        """The nodes of the list under the top-level ``key`` (``[]`` when there is none)."""
        node = _child(self.root, key)
        return list(node.value) if isinstance(node, SequenceNode) else []

    def inline(self, node: Any) -> tuple[str, InlineText] | None:
        """Patch text written inline as the scalar ``node``, and where it sits in the file."""
        if not isinstance(node, ScalarNode) or not isinstance(node.value, str):
            return None
        text = node.value
        start, end = node.start_mark, node.end_mark
        at = InlineText(at=Position(self.shown, start.line + 1, start.column + 1))
        if node.style == "|":
            # A literal block: the text starts on the line after the indicator, every line
            # stripped of the same indentation (YAML 1.2 spec, 8.1.1.1 Block Indentation).
            first = start.line + 1
            for i, content in enumerate(text.split("\n")):
                if content.strip():
                    src = self.lines[first + i] if first + i < len(self.lines) else ""
                    if src.endswith(content):
                        return text, InlineText(first, len(src) - len(content))
                    break
            return text, at
        if "\n" not in text and start.line == end.line and start.line < len(self.lines):
            col = start.column + (1 if node.style in ("'", '"') else 0)
            if self.lines[start.line][col : col + len(text)] == text:  # no escapes
                return text, InlineText(start.line, col)
        return text, at


def _child(node: Any, key: str, *, key_node: bool = False) -> Any:
    """The value node (or with ``key_node`` the key node) of ``key`` in the mapping node
    ``node`` (the last one, as YAML readers keep), or ``None``."""
    found = None
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == key:
                found = k if key_node else v
    return found


def _walk_patches(
    directory: str, seen: set[str], shown: Callable[[str], str]
) -> Iterator[_Patch | _Replicas]:
    """What sets fields in the kustomization at ``directory``, then in those it includes.

    kustomize runs a kustomization's transformers in a fixed order (api/internal/target/
    kusttarget.go, configureBuiltinTransformers): ``patchesStrategicMerge``, ``patches``, ...,
    ``patchesJson6902``, ``replicas``; each list in order. The one that runs last wins, so
    they are yielded in the reverse order. Included kustomizations (bases, components) are
    built before the overlay's transformers run, so theirs come after.
    """
    if directory in seen:
        return
    seen.add(directory)
    data = _load_kustomization(directory)
    tree = _Tree(directory, shown)

    def target(entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        t = entry.get("target")
        if not isinstance(t, Mapping):
            return None, None
        kind, name = t.get("kind"), t.get("name")
        return (str(kind) if kind else None, str(name) if name else None)

    def listed(key: str) -> list[tuple[Any, Any]]:
        """(entry, its node) of the list ``key``, the last entry first."""
        values = data.get(key)
        entries = list(values) if isinstance(values, list) else []
        nodes = tree.entries(key)
        if len(nodes) != len(entries):  # anchors or merge keys: no positions
            nodes = [None] * len(entries)
        return list(reversed(list(zip(entries, nodes, strict=True))))

    def from_file(relative: str, kind: str | None, name: str | None, json: bool | None) -> _Patch:
        file = os.path.join(directory, relative)
        is_json = _looks_like_json6902(_read(file) or "") if json is None else json
        return _Patch(file, shown(file), kind, name, json6902=is_json)

    def inline(node: Any, kind: str | None, name: str | None, json: bool | None) -> _Patch | None:
        found = tree.inline(node)
        if found is None:
            return None
        text, place = found
        is_json = _looks_like_json6902(text) if json is None else json
        return _Patch(tree.file, tree.shown, kind, name, is_json, inline=text, place=place)

    for entry, node in listed("replicas"):
        if isinstance(entry, Mapping) and "count" in entry and entry.get("name"):
            count = _child(node, "count", key_node=True)
            mark = count.start_mark if count is not None else None
            at = Position(tree.shown, mark.line + 1, mark.column + 1) if mark else None
            yield _Replicas(str(entry["name"]), at or Position(tree.shown, 1, 1))
    # patchesJson6902 entries are JSON 6902 op lists; `patches` entries may be either form.
    for key, json_form in (("patchesJson6902", True), ("patches", None)):
        for entry, node in listed(key):
            if not isinstance(entry, Mapping):
                continue
            kind, name = target(entry)
            if isinstance(entry.get("path"), str):
                yield from_file(entry["path"], kind, name, json=json_form)
            elif isinstance(entry.get("patch"), str):
                found = inline(_child(node, "patch"), kind, name, json=json_form)
                if found is not None:
                    yield found
    for entry, node in listed("patchesStrategicMerge"):
        if isinstance(entry, str) and "\n" not in entry:
            yield from_file(entry, None, None, json=False)
        elif isinstance(entry, str):
            found = inline(node, None, None, json=False)
            if found is not None:
                yield found
    for ref in local_references(directory):
        yield from _walk_patches(ref, seen, shown)


def _looks_like_json6902(text: str) -> bool:
    """Patch text holding a list of operations (``- op: replace``) rather than objects."""
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and s != "---":
            return s.startswith("- ") or s.startswith("[")
    return False
