"""``ssrisk profile``: a cluster profile made from ``kubectl get nodes -o yaml`` output.

Offline: ssrisk reads what the user saved from their cluster and never contacts one. The nodes
become pools of identical nodes (same zone, labels, taints and allocatable resources), which
the configuration's ``profile: nodes:`` reads back (:func:`ssrisk.config._node_pools`); the
newest kubelet version becomes ``kube-version`` (the control plane is at least as new: the
version skew policy, docs/setup/release/version-skew-policy.md, lets kubelets lag, never
lead); the default StorageClass (``kubectl get storageclass -o yaml``) becomes
``assume-default-storage`` and ``assume-default-binding``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from .embedded_sim.nodes import HOSTNAME_KEY, ZONE_KEYS

#: Labels that name one node, not a pool: the hostname (set by the kubelet) and cloud
#: instance ids. They are left out of the pools; the node's name is kept in ``names``.
IDENTITY_LABELS = frozenset({HOSTNAME_KEY})
_IDENTITY_SUFFIXES = ("/instance-id", "instance-id")
#: Labels that name a node's pool on the managed platforms, in order of preference (EKS
#: managed node groups, GKE node pools, AKS agent pools, Karpenter, kOps instance groups).
POOL_LABELS = (
    "eks.amazonaws.com/nodegroup",
    "cloud.google.com/gke-nodepool",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "karpenter.sh/nodepool",
    "kops.k8s.io/instancegroup",
    "node.kubernetes.io/instance-type",
)
_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


class ProfileInputError(ValueError):
    """The input is not kubectl output of Nodes (the message names the source and where)."""


@dataclass(frozen=True)
class Pool:
    """Nodes that only differ by name: ``names``, in ``zone`` ("" for none)."""

    pool: str
    zone: str
    labels: tuple[tuple[str, str], ...]
    taints: tuple[tuple[str, str, str], ...]  # (key, value, effect)
    allocatable: tuple[tuple[str, str], ...]  # (cpu | memory | pods, quantity as written)
    names: tuple[str, ...]


def parse_objects(text: str, source: str) -> list[Mapping[str, Any]]:
    """The objects of kubectl output: a JSON or YAML ``List`` (``kubectl get -o``), a
    ``NodeList``, single objects or several YAML documents, flattened to their items.

    Raises:
        ProfileInputError: the text is neither JSON nor YAML, with the line and column.
    """
    docs: list[Any]
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            docs = [json.loads(text)]
        except json.JSONDecodeError as exc:
            raise ProfileInputError(
                f"{source}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}"
            ) from None
        except RecursionError:
            raise ProfileInputError(f"{source}: not JSON: nested too deeply") from None
    else:
        docs = _yaml_documents(text, source)
    out: list[Mapping[str, Any]] = []
    for doc in docs:
        for item in doc if isinstance(doc, list) else [doc]:  # a bare list of objects too
            out.extend(_items(item))
    return out


def _yaml_documents(text: str, source: str) -> list[Any]:
    import yaml

    from .yamlpos import YamlInputError, load_documents

    try:
        return [data for data, _ in load_documents(text)]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProfileInputError(f"{where}: not YAML: {problem}") from None
    except YamlInputError as exc:
        line = "" if exc.line is None else f":{exc.line + 1}"
        raise ProfileInputError(f"{source}{line}: {exc.message}") from None


def _items(doc: Any, implied: str | None = None) -> Iterable[Mapping[str, Any]]:
    """The objects of ``doc``; the items of a typed list (``NodeList``, what the API returns
    and ``kubectl get --raw`` prints) carry no kind of their own and get the list's."""
    if not isinstance(doc, Mapping):
        return
    items = doc.get("items")
    kind = doc.get("kind", implied)
    if isinstance(items, list) and isinstance(kind, str) and kind.endswith("List"):
        inner = kind[: -len("List")] or None
        for item in items:
            yield from _items(item, inner)
    elif isinstance(kind, str):
        yield doc if "kind" in doc else {**doc, "kind": kind}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _identity(key: str, value: str, name: str) -> bool:
    """A label that only names the node: its hostname label when it is the node's name (the
    simulator gives every node that one), cloud instance ids, a value that is the name."""
    if key in IDENTITY_LABELS:
        return value == name
    return key.endswith(_IDENTITY_SUFFIXES) or value == name


def node_pools(objects: Sequence[Mapping[str, Any]], source: str = "-") -> list[Pool]:
    """The Nodes of ``objects`` grouped into pools of identical nodes, in the order their
    first node comes. A pool is named after its platform pool label (:data:`POOL_LABELS`),
    else ``pool<N>``; its zone is the node's topology.kubernetes.io/zone label (or the
    deprecated beta key). A cordoned node (spec.unschedulable) has the
    node.kubernetes.io/unschedulable:NoSchedule taint the node lifecycle controller gives it
    (TaintNodesByCondition), whether or not the saved output shows it.

    Raises:
        ProfileInputError: a node whose name, labels, taints or allocatable the API server
            would not hold, or a name given twice (``source`` and the node are named).
    """
    groups: dict[tuple[Any, ...], list[str]] = {}
    first: dict[tuple[Any, ...], Mapping[str, str]] = {}
    names: set[str] = set()
    for i, node in enumerate(o for o in objects if o.get("kind") == "Node"):
        meta = _map(node.get("metadata"))
        spec, status = _map(node.get("spec")), _map(node.get("status"))
        name = _text(meta.get("name"))
        labels = {str(k): v for k, v in _map(meta.get("labels")).items()}
        _check_node(source, i, name, names, labels)
        names.add(name)
        text = {k: _text(v) for k, v in labels.items()}
        zone = next((text[k] for k in ZONE_KEYS if text.get(k)), "")
        kept = tuple(
            sorted(
                (k, v) for k, v in text.items() if k not in ZONE_KEYS and not _identity(k, v, name)
            )
        )
        taints = _taints(source, name, spec)
        allocatable = _allocatable(source, name, _map(status.get("allocatable")))
        key = (zone, kept, taints, allocatable)
        groups.setdefault(key, []).append(name)
        first.setdefault(key, text)
    pools: list[Pool] = []
    used: dict[str, int] = {}
    for (zone, kept, taints, allocatable), members in groups.items():
        seen = first[(zone, kept, taints, allocatable)]
        base = next((seen[k] for k in POOL_LABELS if seen.get(k)), f"pool{len(pools) + 1}")
        label = base if zone == "" else f"{base}-{zone}"
        used[label] = used.get(label, 0) + 1
        if used[label] > 1:
            label = f"{label}-{used[label]}"
        pools.append(Pool(label, zone, kept, taints, allocatable, tuple(members)))
    return pools


#: node.kubernetes.io/unschedulable (well_known_taints.go, TaintNodeUnschedulable).
UNSCHEDULABLE = ("node.kubernetes.io/unschedulable", "", "NoSchedule")


def _check_node(source: str, i: int, name: str, seen: set[str], labels: Mapping[str, Any]) -> None:
    """Raise :class:`ProfileInputError` for a node name or label the API server would not
    hold (the configuration reads the profile back with the same checks)."""
    from .config import NODE_NAME_RE
    from .embedded_sim.selectors import is_label_value, is_qualified_name

    where = f"{source}: Node {i + 1}"
    if len(name) > 253 or not NODE_NAME_RE.fullmatch(name):
        raise ProfileInputError(f"{where}: {name!r} is not a valid node name")
    if name in seen:
        raise ProfileInputError(f"{where}: node {name!r} is listed twice")
    for k, v in labels.items():
        if not is_qualified_name(k):
            raise ProfileInputError(f"{where} ({name}): {k!r} is not a valid label key")
        if isinstance(v, (Mapping, list)) or not is_label_value(_text(v)):
            raise ProfileInputError(f"{where} ({name}): label {k}: not a valid label value")


def _taints(source: str, name: str, spec: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """spec.taints as (key, value, effect), with the cordon taint of an unschedulable node."""
    from .embedded_sim.podtemplate import TAINT_EFFECTS
    from .embedded_sim.selectors import is_label_value, is_qualified_name

    out: list[tuple[str, str, str]] = []
    raw = spec.get("taints")
    for item in raw if isinstance(raw, list) else []:
        t = _map(item)
        key, value, effect = _text(t.get("key")), _text(t.get("value")), _text(t.get("effect"))
        ok = is_qualified_name(key) and is_label_value(value) and effect in TAINT_EFFECTS
        if not ok:
            raise ProfileInputError(
                f"{source}: node {name}: taint {key}={value}:{effect} is not a valid taint"
            )
        out.append((key, value, effect))
    if spec.get("unschedulable") is True and not any(t[0] == UNSCHEDULABLE[0] for t in out):
        out.append(UNSCHEDULABLE)
    return tuple(out)


def _allocatable(source: str, name: str, alloc: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """status.allocatable cpu, memory and pods as written, checked as the configuration
    checks them (positive finite quantities, 1 to 10000 pods)."""
    import math

    from .embedded_sim.quantity import parse_quantity

    out: list[tuple[str, str]] = []
    for k in ("cpu", "memory", "pods"):
        if k not in alloc:
            continue
        text = _text(alloc[k])
        if k == "pods":
            ok = text.isdigit() and 1 <= int(text) <= 10000
        else:
            q = parse_quantity(text)
            ok = q is not None and math.isfinite(q) and q > 0
        if not ok:
            raise ProfileInputError(
                f"{source}: node {name}: allocatable {k} {text!r} is not a quantity ssrisk reads"
            )
        out.append((k, text))
    return tuple(out)


def kubelet_version(objects: Sequence[Mapping[str, Any]]) -> str | None:
    """The newest ``status.nodeInfo.kubeletVersion`` as ``1.NN.P`` (None without one)."""
    found: list[tuple[int, int, int]] = []
    for node in objects:
        if node.get("kind") != "Node":
            continue
        info = _map(_map(node.get("status")).get("nodeInfo"))
        m = _VERSION.match(_text(info.get("kubeletVersion")))
        if m:
            found.append((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    if not found:
        return None
    major, minor, patch = max(found)
    return f"{major}.{minor}.{patch}"


def cloud_providers(objects: Sequence[Mapping[str, Any]]) -> list[str]:
    """The cloud providers of the Nodes' ``spec.providerID`` (``aws:///us-east-1a/i-0…`` ->
    ``aws``), when every Node has one, in the order first seen; else empty."""
    found: list[str] = []
    for node in objects:
        if node.get("kind") != "Node":
            continue
        provider = _text(_map(node.get("spec")).get("providerID"))
        scheme = provider.split("://", 1)[0] if "://" in provider else ""
        if not re.fullmatch(r"[a-z][a-z0-9-]{0,30}", scheme):
            return []
        if scheme not in found:
            found.append(scheme)
    return found


def default_storage(objects: Sequence[Mapping[str, Any]]) -> tuple[str, str, str] | None:
    """The default StorageClass as ``(name, assume-default-storage, assume-default-binding)``
    (the simulator's reading of it: :func:`embedded_sim.storage.classify_class`), else None."""
    from .embedded_sim.objects import StorageClass, default_class
    from .embedded_sim.storage import classify_class

    classes = [StorageClass.from_object(o) for o in objects if o.get("kind") == "StorageClass"]
    model = default_class(classes)
    if model is None:
        return None
    topology, binding, _ = classify_class(model, ("ReadWriteOnce",))
    storage = topology if topology in ("zonal", "regional", "network", "local") else "local"
    return model.name, storage, binding


def render(
    nodes: Sequence[Mapping[str, Any]],
    classes: Sequence[Mapping[str, Any]] = (),
    *,
    source: str = "-",
) -> str:
    """The ``.ssrisk.yaml`` text of the profile: ``kube-version`` and ``profile: nodes:``,
    with the default StorageClass's reading when ``classes`` are given.

    Raises:
        ProfileInputError: ``nodes`` holds no Node, or more than the configuration takes.
    """
    from .config import MAX_PROFILE_NODES
    from .embedded_sim.versions import MAX_MINOR, MIN_MINOR

    pools = node_pools(nodes, source)
    total = sum(len(p.names) for p in pools)
    if not pools:
        raise ProfileInputError(
            f"{source}: no Node objects; give the output of kubectl get nodes -o yaml"
        )
    if total > MAX_PROFILE_NODES:
        raise ProfileInputError(
            f"{source}: {total} nodes; a profile holds at most {MAX_PROFILE_NODES}"
        )
    zones = len({p.zone for p in pools})
    head = [
        f"# Cluster profile made by ssrisk profile from {total} node(s) in {len(pools)} "
        f"pool(s) and {zones} zone(s):",
        "# ssrisk simulates on these nodes instead of its assumed cluster (3 zones x 2 nodes).",
    ]
    doc: dict[str, Any] = {}
    version = kubelet_version(nodes)
    if version is None:
        head.append(
            "# No node shows a kubelet version (status.nodeInfo.kubeletVersion): give "
            "kube-version yourself."
        )
    else:
        minor = int(version.split(".")[1])
        if MIN_MINOR <= minor <= MAX_MINOR:
            head.append(
                f"# kube-version is the newest kubelet's ({version}); the control plane is at "
                "least as new: give its version (kubectl version) if it is newer."
            )
            doc["kube-version"] = version
        else:
            head.append(
                f"# The newest kubelet is {version}, outside the versions ssrisk simulates "
                f"(1.{MIN_MINOR} to 1.{MAX_MINOR}): kube-version is left to the default."
            )
    clouds = cloud_providers(nodes)
    if clouds:
        head += [
            f"# The nodes run on {', '.join(clouds)}: the cloud controller deletes the Node of an "
            "instance that is gone",
            "# (cloud-provider controllers/nodelifecycle MonitorNodes). If a lost node of yours "
            "ends with its instance replaced,",
            "# add node-remediation: node-deletion under profile (node-deleted-after-s: how long "
            "that takes).",
        ]
    profile: dict[str, Any] = {}
    storage = default_storage(classes)
    if storage is not None:
        name, topology, binding = storage
        head.append(f"# assume-default-storage and -binding read the default StorageClass {name}.")
        profile["assume-default-storage"] = topology
        profile["assume-default-binding"] = binding
        profile["default-storage-class"] = name
    shared = _shared_labels(pools)
    if shared:  # written once: node-labels apply to every node (nodes.py#build_nodes)
        profile["node-labels"] = dict(shared)
    profile["nodes"] = [_pool_map(p, shared) for p in pools]
    doc["profile"] = profile
    body = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=4096)
    text = "\n".join(head) + "\n" + body
    _check_size(source, text, doc, total, len(pools))
    return text


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Quotes every string that is not a plain word, so that the configuration reader (YAML
    1.1 as kubectl reads it: ``1e3``, ``yes`` and ``0x1f`` are not strings there) reads back
    the same strings."""


_PLAIN = re.compile(r"[A-Za-z_][-A-Za-z0-9_./]*\Z")
_NOT_STRINGS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    plain = _PLAIN.match(data) is not None and data.lower() not in _NOT_STRINGS
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=None if plain else '"')


_Dumper.add_representer(str, _represent_str)


def _values(doc: Any) -> int:
    if isinstance(doc, Mapping):
        return sum(1 + _values(v) for v in doc.values())
    if isinstance(doc, list):
        return sum(_values(v) for v in doc)
    return 1


def _check_size(source: str, text: str, doc: Any, nodes: int, pools: int) -> None:
    """Raise :class:`ProfileInputError` when the profile is more than a configuration file
    may hold (ssrisk.config: MAX_CONFIG_BYTES, MAX_CONFIG_VALUES), so ssrisk never writes a
    profile it then refuses."""
    from .config import MAX_CONFIG_BYTES, MAX_CONFIG_VALUES

    size, values = len(text.encode("utf-8")), _values(doc)
    if size > MAX_CONFIG_BYTES or values > MAX_CONFIG_VALUES:
        raise ProfileInputError(
            f"{source}: {nodes} nodes in {pools} pools make a profile of {size} bytes and "
            f"{values} values; a configuration file holds at most {MAX_CONFIG_BYTES} bytes "
            f"and {MAX_CONFIG_VALUES} values"
        )


def _shared_labels(pools: Sequence[Pool]) -> tuple[tuple[str, str], ...]:
    """The labels (key and value) every pool has, when there are several pools."""
    if len(pools) < 2:
        return ()
    common = set(pools[0].labels)
    for p in pools[1:]:
        common &= set(p.labels)
    return tuple(sorted(common))


def _pool_map(p: Pool, shared: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    m: dict[str, Any] = {}
    m["pool"] = p.pool
    if p.zone:
        m["zone"] = p.zone
    m["count"] = len(p.names)
    m["names"] = list(p.names)
    own = [kv for kv in p.labels if kv not in shared]
    if own:
        m["labels"] = dict(own)
    if p.taints:
        m["taints"] = [
            dict([("key", k), *([("value", v)] if v else []), ("effect", e)])
            for k, v, e in p.taints
        ]
    if p.allocatable:
        alloc: dict[str, Any] = {}
        for k, v in p.allocatable:
            alloc[k] = int(v) if k == "pods" and v.isdigit() else v
        m["allocatable"] = alloc
    return m
