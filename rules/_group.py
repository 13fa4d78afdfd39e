"""StatefulSets that form one stateful system (helpers for rules).

A database ring spread over one StatefulSet per zone, an ensemble split over two sets, or a
chart installed once per member are one system: a single-replica set of such a group is one
member of it, not an outage of the whole. Sets of a namespace are grouped when they run the
same catalogued system (``rules/systems/``) and are tied together by what the system's users
write to tie them:

- a PodDisruptionBudget that selects the pods of both (one budget over the whole ring);
- a container of one that names a pod of the other by its per-pod DNS name
  (``zk-b-0.zk-b``: a peer list that spans the sets).

A Service or an installation label that spans sets is no tie: the shards of a sharded MongoDB
share both, and each shard is a replica set of its own.

The groups of a namespace are computed once per run (union-find over those ties).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from ssrisk.inventory import pdb_selects
from ssrisk.model import K8sObject
from ssrisk.rule import CheckContext

from ._systems import Catalog, ctx_catalog, server_system

#: Sets of one system looked at per namespace (beyond it, no groups are formed: a namespace of
#: thousands of sets of one system is not one ring).
MAX_SETS = 200


class Group(msgspec.Struct, frozen=True):
    """The StatefulSets that form one system with a set (itself included), by name, with
    their replicas; ``ties`` says what tied them (for messages)."""

    system: str
    replicas: Mapping[str, int]
    ties: tuple[str, ...]

    @property
    def total(self) -> int:
        """Replicas of the whole system."""
        return sum(self.replicas.values())

    def others(self, name: str) -> int:
        """Replicas of the group's other sets."""
        return self.total - self.replicas.get(name, 0)


def peer_group(ctx: CheckContext) -> Group | None:
    """:func:`group_of`, when its sets are peers that stand in for one another: not the sets
    of a primary-and-replicas system (a Redis primary set beside its replicas set: the
    replicas do not take the primary's writes over, so the primary is still one replica)."""
    group = group_of(ctx)
    if group is None:
        return None
    system = ctx_catalog(ctx).get(group.system)
    return None if system is not None and system.model == "primary-replica" else group


def group_of(ctx: CheckContext) -> Group | None:
    """The group ``ctx.sts`` belongs to, or ``None`` when no other set joins it."""
    ns = ctx.sts.namespace
    cat = ctx_catalog(ctx)
    groups = ctx.inventory.memo(("system-groups", ns, id(cat)), lambda: _groups(ctx, cat))
    return groups.get(ctx.sts.name)


def _replicas(sts: K8sObject) -> int:
    value = sts.set_spec().replicas
    return 1 if value is None else value


def _groups(ctx: CheckContext, cat: Catalog) -> dict[str, Group]:
    sets = [s for s in ctx.inventory.in_namespace("StatefulSet", ctx.sts.namespace) if s.name]
    by_system: dict[str, list[K8sObject]] = {}
    for sts in sets:
        found = server_system(sts, cat)
        if found is not None:
            by_system.setdefault(found, []).append(sts)
    out: dict[str, Group] = {}
    for system, members in by_system.items():
        if len(members) < 2 or len(members) > MAX_SETS:
            continue
        for component, ties in _components(ctx, members):
            if len(component) < 2:
                continue
            group = Group(system, {s.name: _replicas(s) for s in component}, tuple(sorted(ties)))
            for s in component:
                out[s.name] = group
    return out


def _components(
    ctx: CheckContext, members: list[K8sObject]
) -> list[tuple[list[K8sObject], set[str]]]:
    """The connected components of ``members`` under the ties of the module docstring."""
    parent = list(range(len(members)))
    ties: dict[int, set[str]] = {}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int, why: str) -> None:
        a, b = find(i), find(j)
        if a != b:
            parent[b] = a
            ties.setdefault(a, set()).update(ties.pop(b, set()))
        ties.setdefault(a, set()).add(why)

    labels = [s.pod_template().labels for s in members]
    ns = ctx.sts.namespace
    for pdb in ctx.inventory.in_namespace("PodDisruptionBudget", ns):
        _join_selected(
            [i for i, lab in enumerate(labels) if pdb_selects(pdb, lab)],
            join,
            f"PodDisruptionBudget {pdb.name!r}",
        )
    names = {s.name: i for i, s in enumerate(members)}
    pattern = re.compile(
        r"(?<![\w-])(" + "|".join(re.escape(n) for n in names) + r")-\d+\.[a-z0-9]"
    )
    for i, sts in enumerate(members):
        for other in _named_pods(sts, pattern):
            j = names[other]
            if j != i:
                join(i, j, f"peer list naming {other}'s pods")
    components: dict[int, list[K8sObject]] = {}
    for i, s in enumerate(members):
        components.setdefault(find(i), []).append(s)
    return [(c, ties.get(root, set())) for root, c in components.items()]


def _join_selected(picked: list[int], join: Any, why: str) -> None:
    for j in picked[1:]:
        join(picked[0], j, why)


def _named_pods(sts: K8sObject, pattern: re.Pattern[str]) -> Iterable[str]:
    """Names of the sets whose pods ``sts``'s containers name by per-pod DNS name."""
    for c in sts.pod_template().running:
        for text in (*c.command, *c.args, *(e.value for e in c.env if e.value)):
            for hit in pattern.finditer(text):
                yield hit.group(1)
