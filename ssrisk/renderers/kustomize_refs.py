"""What a kustomization would read, checked before kustomize runs.

kustomize fetches what a kustomization names over the network: an entry of ``resources``,
``bases``, ``components``, ``generators``, ``transformers`` or ``validators`` that is not a
local path is cloned as a git repository (``github.com/org/repo//dir?ref=v1``,
``https://...``, ``ssh://...``, ``git@host:...``: kustomize api/internal/git/repospec.go,
NewRepoSpecFromURL, which runs ``git`` and through it ``ssh``), and any file field
(patches, generator files, ``crds``, ``configurations``, ``openapi``...) that is an
``http(s)://`` URL is downloaded (api/internal/loader/fileloader.go, FileLoader.Load). On
an untrusted pull request that is a request to the network and a way to hang the build.

:func:`refused_references` finds every such entry, in the kustomization and in every local
kustomization it includes, with its file and line, so the build can be refused unless the
user opts in (``--allow-remote-resources``). It also refuses local references whose real
path leaves the checked tree or enters ``.git``, and a kustomization file that is itself such
a link: kustomize restricts file loads to each kustomization's root
(LoadRestrictionsRootOnly), but not the directories it includes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from ..confine import refusal
from ..model import InputError

#: Fields whose entries kustomize may clone from a repository when they are not local paths.
RESOURCE_FIELDS = ("resources", "bases", "components", "generators", "transformers", "validators")
#: Fields (and nested paths) that name files kustomize loads, possibly from an http(s) URL.
FILE_FIELDS = ("crds", "configurations", "patchesStrategicMerge")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^git@|^[\w.-]+@[\w.-]+:|^git::")
#: ``github.com/org/repo``, ``gitlab.example.com/x``: a first path component that is a host.
_HOST = re.compile(r"^[\w-]+(\.[\w-]+)+(:\d+)?/")


def refused_references(
    directory: str, root: str, kustomization_file: str | None, *, remote_ok: bool = False
) -> list[InputError]:
    """Every reference of the kustomization in ``directory`` (and of the local ones it
    includes) that kustomize would fetch remotely (unless ``remote_ok``) or that leaves the
    tree ``root`` (a real path), as errors at their file and line; ``[]`` when it may be
    built.

    A kustomization file that cannot be parsed is refused too: what it names is unknown.
    """
    out: list[InputError] = []
    seen: set[str] = set()
    pending = [(directory, kustomization_file)]
    while pending:
        here, kfile = pending.pop()
        kfile = os.path.normpath(kfile) if kfile is not None else None
        real = os.path.realpath(here)
        if real in seen or kfile is None:
            continue
        seen.add(real)
        refused = refusal(kfile, root)
        if refused is not None:
            out.append(InputError(kfile, refused))
            continue
        for problem, included in _check_file(here, kfile, root, remote_ok):
            if problem is not None:
                out.append(problem)
            if included is not None:
                pending.append(included)
    return out


def _check_file(
    directory: str, kfile: str, root: str, remote_ok: bool
) -> Iterator[tuple[InputError | None, tuple[str, str | None] | None]]:
    import yaml

    from ..loading import read_text
    from .common import kustomization_file

    text, err = read_text(kfile)
    if err is not None or text is None:
        yield InputError(kfile, f"cannot read: {err.message if err else 'unreadable'}"), None
        return
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        yield (
            InputError(
                kfile,
                "cannot read the kustomization to check what it references, so it is not "
                f"built: {getattr(exc, 'problem', None) or exc}",
                line,
            ),
            None,
        )
        return
    for field, value in _fields(node):
        if not isinstance(value.value, str) or "\n" in value.value:
            continue  # an inline patch or transformer configuration
        entry = value.value.strip()
        line = value.start_mark.line + 1
        column = value.start_mark.column + 1
        if field in RESOURCE_FIELDS:
            target = os.path.join(directory, entry)
            if not os.path.lexists(target):
                if not remote_ok and (_URL.search(entry) or _HOST.match(entry)):
                    yield InputError(kfile, _remote(field, entry), line, column), None
                continue  # a missing local path: kustomize reports it (and has no git to try)
            refused = refusal(target, root)
            if refused is not None:
                yield InputError(kfile, f"{field}: {entry!r} is {refused}", line, column), None
                continue
            if os.path.isdir(target):
                yield None, (target, kustomization_file(target))
        else:
            if _URL.search(entry):
                if not remote_ok:
                    yield InputError(kfile, _remote(field, entry), line, column), None
                continue
            target = os.path.join(directory, entry)
            refused = refusal(target, root) if os.path.lexists(target) else None
            if refused is not None:
                yield InputError(kfile, f"{field}: {entry!r} is {refused}", line, column), None


def _remote(field: str, entry: str) -> str:
    return (
        f"{field}: {entry!r} is remote: kustomize would fetch it over the network (git or "
        "HTTP), which ssrisk refuses (--allow-remote-resources allows it)"
    )


def _fields(node: Any) -> Iterator[tuple[str, Any]]:
    """``(field, scalar node)`` for every path-like value of a kustomization node tree,
    including the values of repeated keys (which a YAML reader may resolve either way)."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    if not isinstance(node, MappingNode):
        return

    def scalars(value: Any) -> Iterator[Any]:
        if isinstance(value, ScalarNode):
            yield value
        elif isinstance(value, SequenceNode):
            for item in value.value:
                if isinstance(item, ScalarNode):
                    yield item

    def child(mapping: Any, name: str) -> Iterator[Any]:
        if isinstance(mapping, MappingNode):
            for key, value in mapping.value:
                if isinstance(key, ScalarNode) and key.value == name:
                    yield value

    def entries(value: Any) -> Iterator[Any]:
        if isinstance(value, SequenceNode):
            yield from value.value

    for key, value in node.value:
        name = key.value if isinstance(key, ScalarNode) else None
        if name in RESOURCE_FIELDS or name in FILE_FIELDS:
            for scalar in scalars(value):
                yield str(name), scalar
        elif name in ("patches", "patchesJson6902", "replacements"):
            for entry in entries(value):
                for path in child(entry, "path"):
                    for scalar in scalars(path):
                        yield f"{name}.path", scalar
        elif name in ("configMapGenerator", "secretGenerator"):
            for entry in entries(value):
                for sub in ("files", "envs", "env"):
                    for found in child(entry, sub):
                        for scalar in scalars(found):
                            _, _, path = scalar.value.rpartition("=")  # key=path
                            yield (
                                f"{name}.{sub}",
                                ScalarNode(scalar.tag, path, scalar.start_mark, scalar.end_mark),
                            )
        elif name == "openapi":
            for path in child(value, "path"):
                for scalar in scalars(path):
                    yield "openapi.path", scalar
        elif name in ("helmCharts", "helmChartInflationGenerator"):
            for entry in entries(value):
                for repo in child(entry, "repo"):
                    for scalar in scalars(repo):
                        yield f"{name}.repo", scalar
