"""Remediations: the smallest manifest change that removes a finding, verified before it is
offered.

A rule proposes candidate changes for one of its findings (:meth:`ssrisk.rule.Rule.remedies`),
smallest first, each a :class:`Remedy` of field :class:`Edit` s to the StatefulSet. The engine
(only when asked: ``ssrisk check --fixes``, ``ssrisk fix``) applies each candidate to a copy
of the StatefulSet and runs the rule again on it, with the same inventory, cluster profile,
version and objectives (:func:`verify`): the rule's own simulation runs again on the changed
manifest. The first candidate after which the rule reports nothing becomes the finding's
:class:`Fix`, with the facts before and after. A candidate that needs a decision the manifest
cannot show (adding replicas to a single-writer database) is advice: never verified as a fix
nor applied.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from .model import ObjectRef, Position

if TYPE_CHECKING:
    from .model import Finding, K8sObject, Severity
    from .rule import CheckContext, Rule


def plain(value: Any) -> Any:
    """``value`` as plain JSON-like data (loaded mappings and lists carry positions; an edit's
    value is written to files and reports as plain data)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Edit(msgspec.Struct, frozen=True):
    """Set the field at ``keys`` (``("spec", "updateStrategy", "type")``; an ``int`` is the
    index of an item of a list that exists: ``("spec", "template", "spec", "tolerations", 0,
    "tolerationSeconds")``) to ``value`` (JSON-like, made plain), creating the mappings above
    it that are missing, or with ``remove`` unset it. The object is the StatefulSet, or
    ``obj`` (a PodDisruptionBudget of it), written where ``at`` says. With ``create``, ``obj``
    is a new object, ``value`` the whole of it and ``keys`` empty: it is written as a document
    of its own after the StatefulSet's."""

    keys: tuple[str | int, ...]
    value: Any = None
    remove: bool = False
    obj: ObjectRef | None = None
    at: Position | None = None
    create: bool = False
    #: For a StatefulSet rendered from a chart: the line of the user's values file (or of
    #: the configuration's ``set:``) whose value alone the field's template line writes
    #: (``replicas: {{ .Values.replicas }}``), where ``ssrisk fix`` changes it; else ``None``.
    value_at: Position | None = None

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "value", plain(self.value))

    @property
    def field(self) -> str:
        """The field as the API names it: ``spec.updateStrategy.type``,
        ``spec.template.spec.tolerations[0].tolerationSeconds``."""
        return "".join(
            f"[{k}]" if isinstance(k, int) else f".{k}" if i else k for i, k in enumerate(self.keys)
        )

    def to_dict(self) -> dict[str, Any]:
        target = {"object": str(self.obj)} if self.obj is not None else {}
        if self.create:
            return {**target, "create": self.value}
        return {
            **target,
            "field": self.field,
            **({"remove": True} if self.remove else {"value": self.value}),
        }

    def __str__(self) -> str:
        """The edit in one clause: ``spec.replicas: 3``, ``spec.x removed``, ``new
        PodDisruptionBudget web: {...}``."""
        import json

        if self.create:
            return f"new {self.obj}: {json.dumps(self.value, separators=(', ', ': '))}"
        if self.remove:
            return f"{self.field} removed"
        return f"{self.field}: {json.dumps(self.value, separators=(', ', ': '))}"


class Remedy(msgspec.Struct, frozen=True):
    """A candidate change: ``summary`` says it in one sentence, ``edits`` make it;
    ``caution`` says what applying it does that the simulation does not show (a rollout of
    every pod, a precondition to check first), ``""`` when nothing."""

    summary: str
    edits: tuple[Edit, ...]
    caution: str = ""
    #: A change that needs a decision the manifest cannot show (an immutable field, a time
    #: only the system's owner knows): verified like a fix and offered, never applied by
    #: ``ssrisk fix``; the caution says the decision.
    advice: bool = False


class Fix(msgspec.Struct, frozen=True):
    """A remedy verified on the finding's StatefulSet: the rule reports nothing after it.
    ``before`` are the finding's facts."""

    remedy: Remedy
    rule: str
    before: Mapping[str, Any] = msgspec.field(default_factory=dict)
    #: Each scenario simulated both before and after the change: ``(name, before, after)``,
    #: each an :class:`Outcome`.
    simulated: tuple[tuple[str, Outcome, Outcome], ...] = ()
    #: The cluster the rules simulated on (``"an assumed cluster (3 zones × 2 nodes)"``, a
    #: profile's): a fix holds for that cluster.
    cluster: str = ""
    #: The scenarios its numbers quote (the rule's :attr:`~ssrisk.rule.Rule.fix_scenarios`;
    #: empty: every scenario the change alters).
    quoted: tuple[str, ...] = ()
    #: For a StatefulSet built by kustomize: the change as patches in the kustomization that
    #: builds it (:func:`in_overlay`), else ``None``.
    overlay: OverlayPatch | None = None
    #: For a chart-rendered StatefulSet whose fields no value alone writes: where the change
    #: is made in the chart's templates (:func:`in_template`), else ``None``.
    template: InTemplate | None = None
    #: For a chart-rendered StatefulSet: how to render its chart again (``(chart directory,
    #: namespace, HelmOptions)``), so that a change of a values file or template is
    #: rendered and compared before it is written; else ``None``.
    render: tuple[str, str, Any] | None = None
    #: Every render of the run the change is read by (the chart's other variants for a
    #: template; each chart and variant given the values file for a values line): each is
    #: rendered and compared too.
    renders: tuple[tuple[str, str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.remedy.summary,
            **({"advice": True} if self.remedy.advice else {}),
            **({"caution": self.remedy.caution} if self.remedy.caution else {}),
            "edits": [e.to_dict() for e in self.remedy.edits],
            "verified": {
                "rule": self.rule,
                "before": dict(self.before),
                "after": "no finding",
                **({"cluster": self.cluster} if self.cluster else {}),
                "simulated": [
                    {"scenario": name, "before": b.to_dict(), "after": a.to_dict()}
                    for name, b, a in self.simulated
                ],
            },
        }

    def numbers(self) -> str:
        """The simulated scenarios whose outcome the change alters, one clause each:
        ``"zone-loss: 3 of 3 down, not back → 1 of 3 down, back in 6m12s"`` (``""``: none);
        only the rule's own scenarios (:attr:`quoted`) when it names some: another scenario
        may change with a re-run placement, not because of the change."""
        return "; ".join(
            f"{name}: {b} → {a}"
            for name, b, a in self.simulated
            if str(b) != str(a) and (not self.quoted or name in self.quoted)
        )


class OverlayPatch(msgspec.Struct, frozen=True):
    """A fix of kustomize-built objects as ``ssrisk fix`` writes it in the kustomization that
    builds them (``directory``, as shown): ``patches`` are strategic-merge patches, each
    naming its object as its resource file does (kustomize matches a patch by the name before
    this kustomization's prefix or suffix), ``resources`` new objects."""

    directory: str
    patches: tuple[Mapping[str, Any], ...] = ()
    resources: tuple[Mapping[str, Any], ...] = ()
    #: Why the change cannot be made as a patch there (a patch of the kustomization that
    #: kustomize applies after it sets the field), else ``""``.
    refused: str = ""
    #: The built objects the patches are for (``ObjectRef`` s), to tell two objects of one
    #: name apart.
    targets: tuple[ObjectRef, ...] = ()


#: Lists a strategic-merge patch merges by a key (k8s.io/api core/v1 types.go,
#: ``patchMergeKey``): an item of these is written alone, named by its key; any other list
#: is written whole, as it becomes.
MERGED_BY = {"containers": "name", "initContainers": "name"}


def strategic_patch(
    built: Mapping[str, Any], edits: Sequence[Edit], head: Mapping[str, Any]
) -> dict[str, Any]:
    """The strategic-merge patch that makes ``edits`` of the object ``built`` (as built):
    ``head`` (apiVersion, kind, metadata.name) with each edited field; a removed field is
    ``null`` (the patch deletes it); a field of a list item is written in its item, named
    by its merge key, for containers, else in the whole list as the edits leave it.
    (k8s: staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go.)"""
    after = apply_edits(built, edits)
    out: dict[str, Any] = copy.deepcopy(dict(head))
    for edit in edits:
        if edit.create or not edit.keys:
            continue
        node: dict[str, Any] = out
        src: Any = after
        keys = list(edit.keys)
        i = 0
        while i < len(keys):
            key = keys[i]
            last = i == len(keys) - 1
            if last:
                node[str(key)] = None if edit.remove else copy.deepcopy(edit.value)
                break
            below = keys[i + 1]
            if isinstance(below, int):
                items = src.get(key) if isinstance(src, dict) else None
                merge = MERGED_BY.get(str(key))
                item = items[below] if isinstance(items, list) and below < len(items) else None
                if merge and isinstance(item, dict) and item.get(merge) and i + 2 < len(keys):
                    written = node.setdefault(str(key), [])
                    mine = next((x for x in written if x.get(merge) == item[merge]), None)
                    if mine is None:
                        mine = {merge: item[merge]}
                        written.append(mine)
                    node, src, i = mine, item, i + 2
                    continue
                node[str(key)] = copy.deepcopy(items)  # (the whole list, as it becomes)
                break
            child = node.get(str(key))
            if not isinstance(child, dict):
                child = node[str(key)] = {}
            node = child
            src = src.get(key) if isinstance(src, dict) else None
            i += 1
    return out


def in_overlay(fix: Fix, sts: Any, pdbs: Sequence[Any], built: Sequence[Any] = ()) -> Fix:
    """``fix`` of a kustomize-built ``sts`` (and of its PodDisruptionBudgets ``pdbs``, built
    alike) with its :class:`OverlayPatch`: each changed object's patch, named as its resource
    file names it, and each new object (its name the StatefulSet's in its resource file, so
    that the kustomization's prefix and namespace apply to it as to the set). ``built``: the
    other objects of the run, so that a patch is refused when another object of the
    kustomization has the same kind and name in its file (kustomize could not tell which
    the patch is for). ``fix`` unchanged when an object's resource file is not known."""
    directory = getattr(sts, "kustomization", None)
    if not directory:
        return fix

    def head(obj: Any) -> dict[str, Any] | None:
        base = getattr(getattr(obj, "locator", None), "base", None)
        if base is None or not base.name:
            return None
        meta: dict[str, Any] = {"name": base.name}
        written = base.metadata.get("namespace")
        if isinstance(written, str):
            meta["namespace"] = written
        return {"apiVersion": obj.api_version, "kind": obj.kind, "metadata": meta}

    from .model import dig

    edits = fix.remedy.edits
    patches: list[dict[str, Any]] = []
    resources: list[dict[str, Any]] = []
    targets: list[ObjectRef] = []
    for obj in [sts, *pdbs]:
        mine = [e for e in edits if not e.create and (e.obj or sts.ref) == obj.ref]
        if not mine:
            continue
        named = head(obj)
        if named is None:
            return fix
        base = obj.locator.base.path
        twins = [
            o
            for o in built
            if o is not obj
            and o.kind == obj.kind
            and getattr(o, "kustomization", None) == directory
            and getattr(getattr(o.locator, "base", None), "name", None) == named["metadata"]["name"]
        ]
        if twins:
            why = (
                f"{twins[0].ref} is named {named['metadata']['name']} in its file too: a patch "
                "could not tell the two apart"
            )
            return replace(fix, overlay=OverlayPatch(directory, refused=why))
        for e in mine:  # (a field another patch sets: that patch would win, or be undone)
            found = 0
            while found < len(e.keys) and dig(obj.data, *e.keys[: found + 1]) is not None:
                found += 1
            at = obj.pos(*e.keys[:found]) if found else None
            if at is not None and at.path != base and not _own_patch(at.path):
                why = f"{at} sets {e.field} too: make the change there"
                return replace(fix, overlay=OverlayPatch(directory, refused=why))
        patches.append(strategic_patch(plain(obj.data), mine, named))
        targets.append(obj.ref)
    sts_head = head(sts)
    for e in edits:
        if e.create:
            if sts_head is None:
                return fix
            new = copy.deepcopy(e.value)
            name = str(new.get("metadata", {}).get("name", sts.name))
            suffix = name[len(sts.name) :] if name.startswith(sts.name) else ""
            meta = dict(sts_head["metadata"])
            meta["name"] = f"{meta['name']}{suffix}"
            built_ns = sts.metadata.get("namespace")  # (as built: a base's namespace too)
            if isinstance(built_ns, str) and built_ns:
                meta["namespace"] = built_ns
            new["metadata"] = meta
            resources.append(new)
    overlay = OverlayPatch(directory, tuple(patches), tuple(resources), targets=tuple(targets))
    return replace(fix, overlay=overlay)


def _own_patch(path: str) -> bool:
    """Whether ``path`` is a patch file a former ``ssrisk fix`` wrote (it is changed too)."""
    import os

    return os.path.basename(path).startswith("ssrisk-fix-")


class InTemplate(msgspec.Struct, frozen=True):
    """A fix of chart-rendered objects made in the chart's templates: for each edit (by its
    index in the remedy's edits) the template file (as shown), the 1-based line there of the
    deepest of its keys that the rendered object has, and how many of its keys it has; and
    ``render``, how to render the chart again (``(chart directory, namespace, HelmOptions)``)
    to verify the change before it is written."""

    places: tuple[tuple[int, str, int, int], ...]
    render: tuple[str, str, Any]
    #: Strings of the edits' values that a field of the object renders: ``(rendered string,
    #: the template's text for it, the keys of that field)``. Where the template writes it
    #: with a template action on the field's line (``app: {{ .Release.Name }}-db``), the
    #: change writes that text (else ``""``: written as rendered), and a render as another
    #: release must give what that release renders at the field.
    spelt: tuple[tuple[str, str, tuple[str | int, ...]], ...] = ()
    #: Label mappings of the edits' values that the object renders at its selector or pod
    #: labels from one template action on the key's line (``matchLabels: {{- include
    #: "x.selectorLabels" . | nindent 6 }}``): ``(the mapping as JSON, the action, the keys
    #: it is rendered at)``. The change writes that action, indented where it is written.
    spelt_maps: tuple[tuple[str, str, tuple[str | int, ...]], ...] = ()


def in_template(fix: Fix, sts: Any, pdbs: Sequence[Any]) -> Fix:
    """``fix`` of a chart-rendered ``sts`` (and its budgets ``pdbs``) with its
    :class:`InTemplate`, when no edit is placed in a values file and each edited object's
    template is known (:class:`ssrisk.renderers.locate.TemplateLocator`); a new object gets
    none (its name would depend on the release). ``fix`` unchanged otherwise."""
    from .model import dig

    render = getattr(sts, "chart_render", None)
    edits = fix.remedy.edits
    if render is None or any(e.value_at is not None or e.create for e in edits):
        return fix
    objects = {o.ref: o for o in [*pdbs, sts]}
    places = []
    for i, e in enumerate(edits):
        obj = objects.get(e.obj or sts.ref)
        template = getattr(getattr(obj, "locator", None), "path", None)
        if obj is None or template is None:
            return fix
        found = 0
        while found < len(e.keys) and dig(obj.data, *e.keys[: found + 1]) is not None:
            found += 1
        if found == 0:
            return fix
        at = obj.locator.locate(obj, e.keys[:found])
        if at is None or at.path != template:
            return fix
        places.append((i, template, at.line, found))
    spelt = _spelt(edits, objects, sts)
    maps = _spelt_maps(edits, objects, sts)
    return replace(fix, template=InTemplate(tuple(places), render, spelt, maps))


#: Where a set's label mappings are written, which a change may need again (a spread's or
#: an affinity's labelSelector): its selector, then its pod labels.
LABEL_MAPS: tuple[tuple[str, ...], ...] = (
    ("spec", "selector", "matchLabels"),
    ("spec", "template", "metadata", "labels"),
)


def _spelt_maps(
    edits: Sequence[Edit], objects: Mapping[ObjectRef, Any], sts: Any
) -> tuple[tuple[str, str, tuple[str | int, ...]], ...]:
    """:attr:`InTemplate.spelt_maps` for ``edits``."""
    import json
    import re

    from .model import dig

    out: list[tuple[str, str, tuple[str | int, ...]]] = []
    for e in edits:
        obj = objects.get(e.obj or sts.ref)
        if obj is None:
            continue
        wanted = {json.dumps(m, sort_keys=True) for m in _mappings(e.value)}
        for keys in LABEL_MAPS:
            here = dig(obj.data, *keys)
            text = json.dumps(plain(here), sort_keys=True) if isinstance(here, Mapping) else ""
            if text not in wanted or any(t == text for t, _a, _k in out):
                continue
            at = obj.locator.locate(obj, keys)
            if at is None or at.path != obj.locator.path:
                continue
            line = _template_line(at.path, at.line)
            action = r"(\{\{-?.*\bnindent\s+\d+\s*-?\}\})"
            m = re.match(rf"\s*{keys[-1]}:\s*{action}\s*$", line)
            after = _template_lines_after(at.path, at.line)
            if m is None and re.match(rf"\s*{keys[-1]}:\s*$", line) and after:
                # (helm create's form: the include on the line below the key)
                m = re.match(rf"\s*{action}\s*$", after[0])
                after = after[1:]
            if not m or m.group(1).count("{{") != 1:
                continue
            # literal labels written below the action belong to the mapping too
            indent = len(line) - len(line.lstrip(" "))
            more = []
            for below in after:
                if not below.strip() or len(below) - len(below.lstrip(" ")) <= indent:
                    break
                if "{{" in below or not re.match(r"\s*[\w./-]+:\s*\S", below):
                    more = ["{{"]  # (something else: not spelt)
                    break
                more.append(below.strip())
            if "{{" not in more:
                out.append((text, "\n".join([m.group(1), *more]), keys))
    return tuple(out)


def _mappings(value: Any) -> Iterator[Mapping[str, Any]]:
    """Each mapping of ``value`` whose values are all strings (a label mapping)."""
    if isinstance(value, Mapping):
        if value and all(isinstance(v, str) for v in value.values()):
            yield value
        for v in value.values():
            yield from _mappings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _mappings(v)


def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, Mapping):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return set()


def _spelt(
    edits: Sequence[Edit], objects: Mapping[ObjectRef, Any], sts: Any
) -> tuple[tuple[str, str, tuple[str | int, ...]], ...]:
    """:attr:`InTemplate.spelt` for ``edits``: each string of their values that a field of
    the edited object renders from a template line ``key: <text with {{ }}>``."""
    import re

    from .model import dig

    out: list[tuple[str, str, tuple[str | int, ...]]] = []
    for e in edits:
        obj = objects.get(e.obj or sts.ref)
        wanted = _strings(e.value) - {s for s, _t, _k in out}
        if obj is None or not wanted:
            continue
        # the labels first: a value a change copies is most often a label, and how the
        # template writes that label (literally, or with an action) is how it is written
        labels = [(k, t) for path in LABEL_MAPS for k, t in _leaves(dig(obj.data, *path), path)]
        for keys, text in [*labels, *_leaves(obj.data, ())]:
            if text not in wanted or not keys:
                continue
            wanted.discard(text)
            at = obj.locator.locate(obj, keys)
            line = _template_line(at.path, at.line) if at and at.path == obj.locator.path else ""
            m = re.match(rf"\s*(?:-\s+)?{re.escape(str(keys[-1]))}\s*:\s*(.*\S)\s*$", line)
            # (written with an action: that text; else as rendered, and a render as another
            # release shows whether that holds)
            out.append((text, m.group(1) if m and "{{" in m.group(1) else "", keys))
    return tuple(out)


def _leaves(node: Any, keys: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Each string scalar of ``node`` with its keys."""
    if isinstance(node, Mapping):
        for k, v in node.items():
            yield from _leaves(v, (*keys, str(k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, (*keys, i))
    elif isinstance(node, str):
        yield keys, node


def _template_lines_after(path: str, line: int, most: int = 50) -> list[str]:
    """Up to ``most`` lines of the template file ``path`` after line ``line`` (1-based)."""
    return list(_template_lines(path)[line : line + most])


def _template_line(path: str, line: int) -> str:
    """Line ``line`` (1-based) of the template file ``path`` (``""``: none)."""
    lines = _template_lines(path)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _template_lines(path: str) -> tuple[str, ...]:
    """The lines of the template file ``path`` (read once while it is unchanged: ``ssrisk
    fix`` writes templates between its checks)."""
    import os

    try:
        stat = os.stat(path)
    except OSError:
        return ()
    return _read_lines(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _read_lines(path: str, _mtime_ns: int, _size: int) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return tuple(fh.read().splitlines())
    except OSError:
        return ()


class Outcome(msgspec.Struct, frozen=True):
    """What a simulated scenario came to: the most replicas down at once, of how many, when
    the set was back (seconds after the fault; ``None``: not back), and for a scenario that
    starts an operation (a drain, a rollout) whether it finished (``None``: no operation)."""

    down: int
    replicas: int
    back_s: float | None
    operation: str = ""
    completed: bool | None = None

    @classmethod
    def of(cls, result: Any) -> Outcome:
        """The outcome of an ``embedded_sim`` ScenarioResult."""
        back = result.time_to_recovery_s if result.recovered else None
        goal = getattr(result, "goal", None)
        if goal is None:
            return cls(int(result.max_unavailable), int(result.replicas), back)
        return cls(
            int(result.max_unavailable),
            int(result.replicas),
            back,
            str(goal.name).replace("_", " "),
            bool(goal.completed),
        )

    def worse_than(self, before: Outcome, timed: bool = True) -> bool:
        """An operation that finished no longer finishing; more replicas down at once
        (unless the operation finishes only now: a drain a budget blocked for ever evicts);
        not back where it was back; or as many down and back later (fewer down at once and
        back later is the trade a disruption budget makes: a drain that waits for each
        replica). Without ``timed``, when it is back is not compared (a readiness probe
        makes Ready later by design)."""
        if before.completed and self.completed is False:
            return True
        if before.completed is False and self.completed:
            return False
        if self.down > before.down:
            return True
        if before.back_s is None:
            return False
        if self.back_s is None:
            return True
        return timed and self.down == before.down and self.back_s > before.back_s + 1.0

    def __str__(self) -> str:
        from .timeline import fmt_duration

        back = f"back in {fmt_duration(self.back_s)}" if self.back_s is not None else "not back"
        text = f"{self.down} of {self.replicas} down, {back}"
        if self.completed is False:
            text += f", the {self.operation} never finishes"
        return text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "max_unavailable": self.down,
            "replicas": self.replicas,
            "recovery_s": self.back_s,
        }
        if self.completed is not None:
            out[f"{self.operation.replace(' ', '_')}_completed"] = self.completed
        return out


def _copied(value: Any) -> Any:
    """A copy of loaded data as plain mappings and lists (its positions left behind: a
    changed copy is judged, never pointed into); much cheaper than ``copy.deepcopy``."""
    if isinstance(value, Mapping):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def apply_edits(data: Mapping[str, Any], edits: Sequence[Edit]) -> dict[str, Any]:
    """A deep copy of ``data`` with ``edits`` applied (the mappings above a field created
    when missing, or replaced when not a mapping; a removed field's mapping kept)."""
    out: dict[str, Any] = _copied(data)
    for edit in edits:
        if edit.create or not edit.keys:
            continue  # (a new object: not a change of this one)
        node: Any = out
        for key, below in zip(edit.keys, edit.keys[1:], strict=False):
            if isinstance(key, int):  # (an item that exists: a candidate names it so)
                node = node[key]
                continue
            child = node.get(key)
            if not isinstance(child, list if isinstance(below, int) else dict):
                child = node[key] = {}
            node = child
        last = edit.keys[-1]
        if edit.remove:
            if isinstance(node, dict):
                node.pop(last, None)
        else:
            node[last] = copy.deepcopy(edit.value)
    return out


#: The scenarios that a fix may not make worse: faults and maintenance. A change of how
#: updates roll (a partition, a strategy) changes rollouts by design, and is judged by its
#: rule and by the other rules' findings instead.
FAULTS = frozenset(
    {"node-loss", "node-loss-out-of-service", "node-deleted", "zone-loss", "node-drain"}
)


def verify(
    rule: Rule,
    ctx: CheckContext,
    finding: Finding,
    remedy: Remedy,
    others: Sequence[Rule] = (),
    before: Mapping[str, Severity] | None = None,
) -> Fix | None:
    """The :class:`Fix` ``remedy`` makes of ``finding``: the rule, run again on the
    StatefulSet with the edits applied (same inventory, profile, version and objectives; its
    simulations run anew), reports nothing as severe as ``finding``, and none of ``others``
    (the run's other rules, ``objective-missed`` among them) reports a warning or error it
    did not report before
    (``before``: rule id -> the most severe finding it had on the set), nor more severe.
    ``None`` when the change does not remove the finding, trades it for another, or cannot be
    checked."""
    from .model import K8sObject, Severity

    def changed(obj: K8sObject, edits: Sequence[Edit]) -> K8sObject:
        if not edits:
            return obj
        return K8sObject(
            data=apply_edits(obj.data, edits),
            path=obj.path,
            line_offset=obj.line_offset,
            namespace=obj.namespace,
            doc_index=obj.doc_index,
        )

    sts_edits = [e for e in remedy.edits if e.obj is None]
    pdbs = [changed(p, [e for e in remedy.edits if e.obj == p.ref]) for p in ctx.pdbs()]
    pdbs += [
        K8sObject(data=e.value, path=ctx.sts.path, line_offset=0, namespace=ctx.sts.namespace)
        for e in remedy.edits
        if e.create and e.obj is not None and e.obj.kind == "PodDisruptionBudget"
    ]
    again = replace(
        ctx,
        sts=changed(ctx.sts, sts_edits),
        _sim_cache={},
        _simulator=None,
        _pdbs=pdbs,
        _hpa=None,
        _memo={},
    )
    timed = not rule.fix_delays_ready

    def outcomes() -> tuple[tuple[str, Outcome, Outcome], ...] | None:
        """Each scenario simulated both before and after; ``None`` when a fault or
        maintenance does worse after the change."""
        before_runs = ctx.simulated_results()
        after_runs = again.simulated_results()
        pairs = tuple(
            (name, Outcome.of(before_runs[name]), Outcome.of(after_runs[name]))
            for name in before_runs
            if name in after_runs
        )
        worse = any(a.worse_than(b, timed) for name, b, a in pairs if name in FAULTS)
        return None if worse else pairs

    try:
        # the finding is gone: the rule reports nothing as severe on the changed set (a
        # milder finding of it may remain: a budget that now allows one eviction is noted)
        if any(left.severity >= finding.severity for left in rule.check(again)):
            return None
        for name in rule.fix_scenarios:  # (quoted whatever the run's other rules simulated)
            ctx.try_simulate(name)
            again.try_simulate(name)
        if outcomes() is None:  # (the rule's own scenarios first: the cheaper refusal)
            return None
        had = before or {}
        for other in others:
            if other.id == rule.id or max(other.levels()) == Severity.INFO:
                continue  # (a rule that only notes cannot trade a risk in)
            for new in other.check(again):
                if new.severity == Severity.INFO:
                    continue  # (a fact of the changed set, not a risk traded for)
                if other.id not in had or new.severity > had[other.id]:
                    return None  # (the change trades one risk for another)
    except Exception:  # a candidate a rule cannot read is no fix
        return None
    simulated = outcomes()
    if simulated is None:
        return None  # (a failure the other rules simulated does worse after the change)
    return Fix(remedy, rule.id, dict(finding.facts), simulated, quoted=rule.fix_scenarios)


def placed_in_values(fix: Fix, sts: Any) -> Fix:
    """``fix`` with each StatefulSet edit of a chart-rendered ``sts`` placed at the values
    line that writes its field (:attr:`Edit.value_at`), when the chart's template writes that
    field from one value alone (the positions :class:`ssrisk.renderers.locate.TemplateLocator`
    gives); a field the template writes otherwise keeps ``None``."""
    from .model import dig

    locator = getattr(sts, "locator", None)
    template = getattr(locator, "path", None)
    if template is None:
        return fix
    edits = []
    for e in fix.remedy.edits:
        here = dig(sts.data, *e.keys) if e.obj is None and not e.remove else None
        scalar = here is not None and not isinstance(here, (dict, list))
        at = sts.pos(*e.keys) if scalar and not isinstance(e.value, (dict, list)) else None
        edits.append(replace(e, value_at=at) if at is not None and at.path != template else e)
    return replace(fix, remedy=replace(fix.remedy, edits=tuple(edits)))


def renders_reading(fix: Fix, all_renders: Sequence[tuple[str, str, Any]]) -> Fix:
    """``fix`` with :attr:`Fix.renders`: the renders among ``all_renders`` (the run's) that
    read what it changes: for a values line, those given that values file, or every render
    of the chart whose own ``values.yaml`` it is; for a template, every render of its chart."""
    import os

    if fix.render is None:
        return fix
    chart = fix.render[0]
    top = os.path.realpath(chart)
    values = {os.path.realpath(e.value_at.path) for e in fix.remedy.edits if e.value_at}
    out = []
    for render in all_renders:
        same_chart = os.path.realpath(render[0]) == top
        given = {os.path.realpath(v) for v in render[2].values_files}
        if values:
            inside = any(v.startswith(top + os.sep) for v in values)
            if values & given or (inside and same_chart):
                out.append(render)
        elif same_chart:
            out.append(render)
    return replace(fix, renders=tuple(out) or (fix.render,))


def find_fix(
    rule: Rule,
    ctx: CheckContext,
    finding: Finding,
    others: Sequence[Rule] = (),
    before: Mapping[str, Severity] | None = None,
    tried: dict[Any, Fix | None] | None = None,
) -> Fix | None:
    """The first of the rule's candidates (smallest first) that :func:`verify` confirms.
    ``tried``: the verdicts on this StatefulSet so far (rule id and candidate -> the fix or
    ``None``), shared by its findings: two findings of one rule often have one candidate."""
    for remedy in rule.remedies(ctx, finding):
        key = (rule.id, repr(remedy), finding.severity)
        if tried is not None and key in tried:
            fix = tried[key]
            fix = replace(fix, before=dict(finding.facts)) if fix is not None else None
        else:
            fix = verify(rule, ctx, finding, remedy, others, before)
            if tried is not None:
                tried[key] = fix
        if fix is not None:
            return fix
    return None
