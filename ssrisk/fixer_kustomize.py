"""``ssrisk fix`` for StatefulSets built by kustomize: the change as patch files and new
objects in the kustomization that builds the set, listed in its kustomization file, which is
changed as text (:func:`plan_overlay`).
"""

from __future__ import annotations

import copy
import io
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .fixer import (
    FixRun,
    _append_items,
    _file_not_writable,
    _indentation,
    _render,
    _Unfixable,
    _Written,
)
from .model import Finding


def plan_overlay(run: FixRun, directory: str, findings: Sequence[Finding]) -> None:
    """Add to ``run`` the patch files and the kustomization change that make the fixes of
    ``findings`` in the kustomization ``directory`` (all of them, or none with the reason)."""
    refused = [f for f in findings if f.fix and f.fix.overlay and f.fix.overlay.refused]
    for f in refused:
        assert f.fix is not None and f.fix.overlay is not None
        run.not_applied.append((f, f.fix.overlay.refused))
    findings = [f for f in findings if f not in refused]
    if not findings:
        return
    try:
        files = _overlay_edited(directory, [f.fix.overlay for f in findings if f.fix])
    except _Unfixable as exc:
        run.not_applied.extend((f, str(exc)) for f in findings)
        return
    for path, (old, new) in files.items():
        run.changed[path] = (old or "", new)
        if old is None:
            run.created.add(path)
    for f in findings:
        assert f.fix is not None and f.fix.overlay is not None
        run.done((directory, f.rule, f.fix.remedy.summary), set(files))


def _overlay_edited(directory: str, overlays: Sequence[Any]) -> dict[str, tuple[str | None, str]]:
    """``{path: (old text or None for a new file, new text)}``: one patch file a changed
    object (``ssrisk-fix-<kind>-<name>.yaml``, merged into the one a former run wrote) and
    one file a new object, each listed in the kustomization (``patches:``,
    ``resources:``), which is changed as text (comments and the rest kept)."""
    from .loading import read_text
    from .renderers.common import kustomization_file
    from .yamlpos import load_documents

    if os.path.islink(directory) or not os.path.isdir(directory):
        raise _Unfixable(f"{directory}: not a directory of the tree")
    kfile = kustomization_file(directory)
    if kfile is None:
        raise _Unfixable(f"{directory}: no kustomization file")
    over = _included_by(directory)
    if over is not None:
        raise _Unfixable(
            f"{over} builds on {directory}: a change here changes it too; fix it there (check "
            "the tree, or name that kustomization)"
        )
    why = _file_not_writable(kfile)
    if why is not None:
        raise _Unfixable(f"{kfile}: {why}")
    patches: dict[tuple[str, str], dict[str, Any]] = {}
    resources: dict[tuple[str, str], dict[str, Any]] = {}
    built: dict[tuple[str, str], Any] = {}  # (kind, name in its file) -> the object built
    for overlay in overlays:
        for patch, target in zip(overlay.patches, overlay.targets, strict=False):
            key = (str(patch["kind"]), str(patch["metadata"]["name"]))
            if built.setdefault(key, target) != target:
                raise _Unfixable(
                    f"{built[key]} and {target} are both named {key[1]} in their files: a "
                    "patch cannot tell them apart"
                )
            _lay(patches.setdefault(key, {}), copy.deepcopy(patch))
        for new in overlay.resources:
            resources[(str(new["kind"]), str(new["metadata"]["name"]))] = dict(new)
    out: dict[str, tuple[str | None, str]] = {}
    kwritten = _Written.read(kfile)
    text = kold = kwritten.body
    for listed, objects in (("patches", patches), ("resources", resources)):
        for (kind, name), data in objects.items():
            fname = re.sub(r"[^A-Za-z0-9._-]", "-", f"ssrisk-fix-{kind.lower()}-{name}.yaml")
            path = os.path.join(directory, fname)
            old = None
            if os.path.lexists(path):
                why = _file_not_writable(path)
                if why is not None or listed == "resources":
                    raise _Unfixable(f"{path}: {why or 'exists already'}")
                old, err = read_text(path)
                if old is None or err is not None:
                    raise _Unfixable(f"{path}: cannot read")
                docs = [doc for doc, _dups in load_documents(old)]
                if len(docs) != 1 or not isinstance(docs[0], dict):
                    raise _Unfixable(f"{path}: not one patch document")
                out[path] = (old, _merged_text(old, data))  # (its comments and fields kept)
                continue
            out[path] = (old, _render(data, 2, 0))
            entry: Any = {"path": fname} if listed == "patches" else fname
            if not re.search(rf"(?m)^\s*-\s*(path:\s*)?[\"']?{re.escape(fname)}[\"']?\s*$", text):
                text = _add_to_list(text, listed, entry)
    if text != kold:
        try:
            loaded = [doc for doc, _dups in load_documents(text)]
        except Exception:
            raise _Unfixable(f"{kfile}: the changed kustomization would not read") from None
        if len(loaded) != 1 or not isinstance(loaded[0], dict):
            raise _Unfixable(f"{kfile}: the changed kustomization would not read")
        out[kfile] = (kwritten.old, kwritten.back(text))
    return out


#: The most kustomization files :func:`_included_by` reads.
MAX_KUSTOMIZATIONS = 2000


def _included_by(directory: str) -> str | None:
    """Another kustomization of the tree that includes the kustomization ``directory`` (an
    overlay of it: a patch or a new object there would change that build too), or
    ``None``."""
    from .confine import tree_of
    from .renderers.common import KUSTOMIZATION_FILES
    from .renderers.kustomize_refs import local_references
    from .walk import walk

    root = tree_of(directory)
    target = os.path.realpath(directory)
    seen = 0
    for top, dirs, files in walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        if not any(name in KUSTOMIZATION_FILES for name in files):
            continue
        seen += 1
        if seen > MAX_KUSTOMIZATIONS:
            break
        if os.path.realpath(top) != target and target in local_references(top, root):
            return os.path.relpath(top)
    return None


def _merged_text(old: str, patch: Mapping[str, Any]) -> str:
    """The patch file ``old`` with ``patch`` laid over it by ruamel.yaml's round trip: its
    comments, quoting and the fields it has kept; containers merged by name (as kustomize
    merges them), any other list replaced."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    step, offset = _indentation(old)
    yaml.indent(mapping=step, sequence=offset + 2, offset=offset)
    doc = yaml.load(old)

    _lay(doc, patch)
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def _lay(into: Any, over: Mapping[str, Any]) -> None:
    """Lay the patch ``over`` over ``into`` (plain data, or a ruamel.yaml round-trip document
    whose comments stay) as kustomize merges patches: mappings key by key, containers by
    name (:data:`ssrisk.remedy.MERGED_BY`), any other list or value replaced."""
    from .remedy import MERGED_BY

    for key, value in over.items():
        here = into.get(key)
        merge = MERGED_BY.get(str(key))
        if isinstance(value, dict) and isinstance(here, dict):
            _lay(here, value)
        elif merge and isinstance(value, list) and isinstance(here, list):
            for item in value:
                name = item.get(merge) if isinstance(item, dict) else None
                same = [x for x in here if isinstance(x, dict) and x.get(merge) == name]
                if same and isinstance(item, dict):
                    _lay(same[0], item)
                else:
                    here.append(item)
        else:
            into[key] = value


def _add_to_list(text: str, key: str, item: Any) -> str:
    """``text`` (a kustomization) with ``item`` appended to its top-level block list ``key``,
    or with ``key:`` and the item added at its end."""
    lines = text.splitlines(keepends=True)
    pattern = re.compile(rf"{key}\s*:\s*(#.*)?$")
    at = next((i for i, ln in enumerate(lines) if pattern.match(ln.rstrip("\r\n"))), None)
    if at is not None:
        return _append_items(lines, at, [item])
    if any(re.match(rf"[\"']?{key}[\"']?\s*:", ln) for ln in lines):
        raise _Unfixable(f"{key} in the kustomization is not a block list")
    step, offset = _indentation(text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    lines.append(_render({key: [item]}, step, offset))
    return "".join(lines)
