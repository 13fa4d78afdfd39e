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
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..loading import LoadedFile, load_text, read_text
from ..model import K8sObject, Position
from .common import RenderError, display_path, error, rendered, run_tool
from .locate import JsonPatch, ObjectLocator

#: kustomize api/konfig/general.go, RecognizedKustomizationFileNames (in this order).
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
ORIGIN_ANNOTATION = "config.kubernetes.io/origin"
INSTALL_HINT = (
    "install kubectl (its 'kubectl kustomize' embeds kustomize) or the kustomize binary "
    "(https://kubectl.docs.kubernetes.io/installation/kustomize/)"
)


def kustomization_file(directory: str) -> str | None:
    """The kustomization file of ``directory``, or ``None`` when it has none."""
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(directory, name)
        if os.path.isfile(path):
            return path
    return None


def _build_command(target: str) -> list[str]:
    kustomize = shutil.which("kustomize")
    if kustomize is not None:
        return [kustomize, "build", target]
    kubectl = shutil.which("kubectl")
    if kubectl is not None:
        return [kubectl, "kustomize", target]
    raise RenderError(f"neither kustomize nor kubectl is on PATH; {INSTALL_HINT}")


def build(directory: str) -> tuple[str, str | None]:
    """Run kustomize on ``directory``.

    Returns:
        ``(yaml stream, wrapper directory)``; origin annotation paths in the stream are
        relative to the wrapper directory (``None`` when the directory had to be built
        without origins, which happens only if the wrapper cannot be built).

    Raises:
        RenderError: kustomize/kubectl is missing or the build fails (kustomize's message).
    """
    target = os.path.abspath(directory)
    with tempfile.TemporaryDirectory(prefix="ssrisk-kustomize-") as tmp:
        wrapper = os.path.realpath(tmp)
        with open(os.path.join(wrapper, "kustomization.yaml"), "w", encoding="utf-8") as fh:
            rel = os.path.relpath(os.path.realpath(target), wrapper)
            fh.write(
                "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                f"resources:\n  - {_quote(rel)}\nbuildMetadata: [originAnnotations]\n"
            )
        try:
            return run_tool(_build_command(wrapper)), wrapper
        except RenderError:
            pass
    # Build the directory itself: either it works without origins, or its error message
    # names the user's files rather than the wrapper.
    return run_tool(_build_command(target)), None


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def render_kustomization(directory: str, namespace: str) -> LoadedFile:
    """Build ``directory`` and load its objects, pointing each at the file that defines it.

    Namespaces: kustomize already applied the kustomization's ``namespace``; objects that
    still name none get ``namespace`` (``--namespace``), as kubectl would.

    Returns:
        A :class:`LoadedFile` named after the directory; a missing tool or a failed build is
        its single error (naming the directory and what to install), never raised.
    """
    try:
        text, wrapper = build(directory)
    except RenderError as exc:
        return error(directory, f"cannot build kustomization: {exc}")
    lf = load_text(text, directory, namespace) if text.strip() else LoadedFile(directory)
    resolver = _Resolver(directory)
    objects = []
    for obj in lf.objects:
        origin = _pop_origin(obj.data)
        origin_path = origin.get("path") if isinstance(origin, Mapping) else None
        origin_file = (
            os.path.normpath(os.path.join(wrapper, str(origin_path)))
            if wrapper is not None and origin_path and not origin.get("repo")
            else None
        )
        objects.append(rendered(obj, locator=resolver.locator(obj, origin_file)))
    lf.objects = list(objects)
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
    file: str
    kind: str | None  # target kind (from ``target`` or the patch document)
    name: str | None
    json6902: bool


class _Resolver:
    """Reads the kustomization tree once and builds a locator for each object."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        self.root = os.path.realpath(directory)
        self._files: dict[str, list[K8sObject]] = {}
        self._patches: list[_Patch] | None = None

    def locator(self, obj: K8sObject, origin_file: str | None) -> ObjectLocator:
        kfile = kustomization_file(self.directory)
        fallback = Position(self._shown(os.path.abspath(kfile or self.directory)), 1, 1)
        base = self._document(origin_file, obj) if origin_file else None
        names = {obj.name} | ({base.name} if base is not None else set())
        patches: list[K8sObject | JsonPatch] = []
        for patch in self.patches():
            if patch.kind not in (None, obj.kind) or (patch.name and patch.name not in names):
                continue
            if patch.json6902:
                jp = self._json_patch(patch.file)
                if jp is not None:
                    patches.append(jp)
                continue
            for doc in self._objects(patch.file):
                if doc.kind == obj.kind and (doc.name in names or patch.name in names):
                    patches.append(doc)
        return ObjectLocator(base=base, patches=patches, fallback=fallback)

    def _shown(self, path: str) -> str:
        return display_path(path, self.directory)

    def _objects(self, path: str) -> list[K8sObject]:
        if path not in self._files:
            text, err = read_text(path)
            self._files[path] = (
                load_text(text, self._shown(os.path.abspath(path)), None).objects
                if err is None and text is not None
                else []
            )
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

    def _json_patch(self, path: str) -> JsonPatch | None:
        text, err = read_text(path)
        if err is not None or text is None:
            return None
        try:
            from ..yamlpos import build, compose_documents

            ops = next((build(node)[0] for node in compose_documents(text)), None)
        except Exception:  # a broken patch file fails the build; kustomize reports it
            return None
        return JsonPatch(self._shown(os.path.abspath(path)), ops) if isinstance(ops, list) else None

    def patches(self) -> list[_Patch]:
        """Patches of the kustomization and every local kustomization it includes, the
        outermost first (its patches are applied last, so they win)."""
        if self._patches is None:
            self._patches = list(_walk_patches(self.root, set()))
        return self._patches


def _load_kustomization(directory: str) -> Mapping[str, Any]:
    kfile = kustomization_file(directory)
    if kfile is None:
        return {}
    text, err = read_text(kfile)
    if err is not None or text is None:
        return {}
    try:
        import yaml

        data = yaml.safe_load(text)
    except Exception:  # kustomize itself reports a broken kustomization
        return {}
    return data if isinstance(data, Mapping) else {}


def local_references(directory: str) -> list[str]:
    """Local directories a kustomization includes (``resources``, ``bases``, ``components``),
    as real paths; remote and file references are left out."""
    data = _load_kustomization(directory)
    out = []
    for key in ("resources", "bases", "components"):
        for entry in data.get(key) or []:
            if not isinstance(entry, str) or "://" in entry or entry.startswith("git@"):
                continue
            path = os.path.realpath(os.path.join(directory, entry))
            if os.path.isdir(path):
                out.append(path)
    return out


def _walk_patches(directory: str, seen: set[str]) -> Iterator[_Patch]:
    if directory in seen:
        return
    seen.add(directory)
    data = _load_kustomization(directory)

    def target(entry: Mapping[str, Any]) -> tuple[str | None, str | None]:
        t = entry.get("target")
        if not isinstance(t, Mapping):
            return None, None
        kind, name = t.get("kind"), t.get("name")
        return (str(kind) if kind else None, str(name) if name else None)

    for entry in data.get("patches") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
            file = os.path.join(directory, entry["path"])
            kind, name = target(entry)
            yield _Patch(file, kind, name, json6902=_is_json6902(file))
    for entry in data.get("patchesStrategicMerge") or []:
        if isinstance(entry, str) and "\n" not in entry:
            yield _Patch(os.path.join(directory, entry), None, None, json6902=False)
    for entry in data.get("patchesJson6902") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("path"), str):
            kind, name = target(entry)
            yield _Patch(os.path.join(directory, entry["path"]), kind, name, json6902=True)
    for ref in local_references(directory):
        yield from _walk_patches(ref, seen)


def _is_json6902(path: str) -> bool:
    """A patch file holding a list of operations (``- op: replace``) rather than objects."""
    text, err = read_text(path)
    if err is not None or text is None:
        return False
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and s != "---":
            return s.startswith("- ") or s.startswith("[")
    return False
