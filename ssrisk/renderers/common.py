"""What every renderer shares: rendered objects that point back at the files users edit,
running an external tool, and paths shown the way the user gave them.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from ..embedded_sim.lazyre import lazy
from ..loading import LoadedFile, load_text, split_documents
from ..model import InputError, K8sObject, Position

#: ``helm template`` starts each manifest with this comment (helm pkg/action/action.go,
#: renderResources: ``fmt.Fprintf(b, "---\n# Source: %s\n%s\n", m.Name, m.Content)``).
#: A ``# Source:`` line; its name is the group with trailing whitespace stripped
#: (:func:`_source_of`: a lazy ``.*?`` before ``\s*$`` rescanned each run of spaces).
SOURCE_COMMENT = lazy(r"^# Source: (\S.*)", re.MULTILINE)


CHART_FILE = "Chart.yaml"
KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


def _marker(path: str) -> bool:
    """Whether ``path`` marks its directory as a unit: a regular file, or a symbolic link
    whatever it leads to (a link out of the tree is then refused as the unit's, and whether
    its target exists, or is a directory, makes no difference anyone can see)."""
    try:
        mode = os.lstat(path).st_mode  # (one look: a walk asks this of every directory)
    except (OSError, ValueError):
        return False
    return stat.S_ISLNK(mode) or stat.S_ISREG(mode)


def is_chart(directory: str) -> bool:
    """True when ``directory`` holds a ``Chart.yaml`` (a Helm chart; see :func:`_marker`)."""
    return _marker(os.path.join(directory, CHART_FILE))


def kustomization_file(directory: str) -> str | None:
    """The kustomization file of ``directory``, or ``None`` when it has none (a link counts
    whatever it leads to: :func:`_marker`)."""
    for name in KUSTOMIZATION_FILES:
        path = os.path.join(directory, name)
        if _marker(path):
            return path
    return None


class RenderError(Exception):
    """A renderer is missing or failed; the message says what to install or what broke.

    The message is one line of at most :data:`MAX_RENDER_MESSAGE` characters, control
    characters escaped: it quotes the renderer, which quotes the repository (a template's
    ``fail`` prints whatever the template computes).
    """

    def __init__(self, message: str, at: tuple[str, int | None, int | None] | None = None) -> None:
        from ..reporters.escape import snippet

        super().__init__(snippet(message, MAX_RENDER_MESSAGE))
        #: ``(file as shown, line, column)`` the renderer names as the cause (a template's
        #: line), or ``None``
        self.at = at


MAX_RENDER_MESSAGE = 2000


class Locator(Protocol):
    """Maps a field of a rendered object back to the file the user edits."""

    def locate(self, obj: K8sObject, keys: tuple[str | int, ...]) -> Position | None:
        """Position of the field at ``keys`` (as for :meth:`K8sObject.pos`), or ``None``."""

    def files(self) -> frozenset[str] | None:
        """The files (as shown) the object's fields are written in, ``None`` if unknown."""


@dataclass
class RenderedObject(K8sObject):
    """A Kubernetes object that came out of a renderer (Helm, kustomize) or a rendered stream.

    ``source`` is the Helm template that produced it (``chart/templates/x.yaml``, from the
    ``# Source:`` comment or the renderer), ``kustomization`` the kustomization directory
    built (shown like the path), ``locator`` maps its fields to the file the user edits.
    Positions carry ``source`` and ``kustomization`` so reporters can name them.
    """

    source: str | None = None
    locator: Locator | None = None
    kustomization: str | None = None
    #: The unit it was rendered from (a chart directory, a kustomization built; shown like
    #: the path), whatever its renderer (:mod:`ssrisk.renderers.units`).
    rendered_from: str | None = None
    #: The kind of its renderer (``Renderer.kind``: "chart", "kustomization"), or ``None``
    #: for an object of a rendered stream (standard input).
    rendered_by: str | None = None
    #: The configured chart variant it was rendered for (``Position.variant``), or ``None``.
    variant: str | None = None
    #: How to render its chart again (``(chart directory, namespace, HelmOptions)``): ``ssrisk
    #: fix`` renders a changed copy of the chart to verify a template change; ``None`` for
    #: objects not rendered from a chart.
    chart_render: tuple[str, str, Any] | None = None

    @property
    def unit(self) -> str:
        """The unit it was rendered from, else as for a plain object. A chart variant is a
        unit of its own, named as a directory below its chart's (``charts/db/[variant
        prod]``): the variants of one chart are environments, never one cluster, and what
        covers the chart's directory (a default StorageClass above it) covers each."""
        unit = self.rendered_from or self.kustomization or super().unit
        return os.path.join(unit, f"[variant {self.variant}]") if self.variant else unit

    def pos(self, *keys: str | int) -> Position:
        """Position of the field at ``keys`` in the file the user edits, or in the stream."""
        found = self.locator.locate(self, keys) if self.locator is not None else None
        return self._tag(found if found is not None else super().pos(*keys))

    def start(self) -> Position:
        """Where the object starts in the file the user edits, or in the stream."""
        found = self.locator.locate(self, ()) if self.locator is not None else None
        return self._tag(found if found is not None else super().start())

    def _tag(self, position: Position) -> Position:
        changes = {}
        if self.source and position.source is None:
            changes["source"] = self.source
        if self.kustomization and position.kustomization is None:
            changes["kustomization"] = self.kustomization
        if self.variant and position.variant is None:
            changes["variant"] = self.variant
        return msgspec.structs.replace(position, **changes) if changes else position


def rendered(
    obj: K8sObject,
    *,
    source: str | None = None,
    locator: Locator | None = None,
    path: str | None = None,
    kustomization: str | None = None,
    unit: str | None = None,
    by: str | None = None,
    variant: str | None = None,
) -> RenderedObject:
    """Wrap a loaded object as a :class:`RenderedObject` (keeping its data and positions)
    rendered from ``unit`` (default: the ``kustomization`` built)."""
    return RenderedObject(
        data=obj.data,
        path=path if path is not None else obj.path,
        line_offset=obj.line_offset,
        namespace=obj.namespace,
        doc_index=obj.doc_index,
        source=source,
        locator=locator,
        kustomization=kustomization,
        rendered_from=unit or kustomization,
        rendered_by=by or ("kustomization" if kustomization else None),
        variant=variant or None,
    )


def _source_of(chunk: str) -> str | None:
    """The template name of a document's first ``# Source:`` line, if any."""
    m = SOURCE_COMMENT.search(chunk)
    return m.group(1).rstrip() if m is not None else None


def helm_sources(text: str) -> dict[int, str]:
    """``# Source:`` comments of a rendered stream, by the line offset of their document.

    Keys are the line offsets :func:`ssrisk.loading.split_documents` yields (and that loaded
    objects carry as ``line_offset``); values are template names such as
    ``mychart/templates/statefulset.yaml``.
    """
    out: dict[int, str] = {}
    if "# Source:" not in text:
        return out
    for offset, chunk in split_documents(text):
        name = _source_of(chunk)
        if name is not None:
            out[offset] = name
    return out


def load_stream(
    text: str, path: str, default_namespace: str | None, kinds: frozenset[str] | None = None
) -> LoadedFile:
    """Load a YAML stream (a file or stdin); objects under a ``# Source:`` comment get it.

    Positions stay in the stream (``path`` is ``<stdin>`` for standard input); findings on
    those objects also name the template (``Position.source``). ``kinds`` as for
    :func:`ssrisk.loading.load_text`.
    """
    lf = load_text(text, path, default_namespace, kinds)
    sources = helm_sources(text)
    if sources:
        lf.objects = [
            rendered(o, source=sources[o.line_offset]) if o.line_offset in sources else o
            for o in lf.objects
        ]
    return lf


def split_by_source(text: str) -> dict[str, str]:
    """Split ``helm template`` output into ``{template name: rendered text}``.

    Documents of one template are joined in order; documents without a ``# Source:``
    comment are kept under ``""``.
    """
    parts: dict[str, list[str]] = {}
    for _offset, chunk in split_documents(text):
        name = _source_of(chunk) or ""
        body = chunk if chunk.startswith("---") else "---\n" + chunk
        parts.setdefault(name, []).append(body)
    return {name: "".join(chunks) for name, chunks in parts.items()}


def display_path(target: str, given: str) -> str:
    """``target`` (an absolute path) shown like the user's input ``given``.

    Absolute when ``given`` was absolute, else relative to the working directory.
    """
    target = os.path.normpath(target)
    if os.path.isabs(given):
        return target
    try:
        return os.path.relpath(target)
    except ValueError:  # another drive (Windows)
        return target


def tool_message(stderr: str, max_lines: int = 6) -> str:
    """The useful part of a tool's standard error, on one line per message."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    return "; ".join(lines[-max_lines:])


def error(path: str, message: str) -> LoadedFile:
    """A :class:`LoadedFile` carrying a single :class:`InputError` for ``path``."""
    lf = LoadedFile(path)
    lf.errors.append(InputError(path, message))
    return lf
