"""ControllerRevision history of a StatefulSet.

pkg/controller/statefulset/stateful_set_control.go#getStatefulSetRevisions (find an equal
revision, renumber it to the top when it is not the newest, else create one) and
#truncateHistory (delete the oldest revisions that no pod, nor the current or update revision,
uses until at most spec.revisionHistoryLimit remain); pkg/controller/history/controller_history.go
(#FindEqualRevisions, #NextRevision). A revision here is named by its pod template (the
simulator's revision names, e.g. "rev-2"): two revisions are equal when their names are.
"""

from __future__ import annotations

import msgspec


class ControllerRevision(msgspec.Struct):
    name: str  # the template it records
    revision: int  # .revision, the position in the history
    owned: bool = True  # carries the set's controller reference


class History:
    def __init__(self) -> None:
        self.revisions: list[ControllerRevision] = []

    def sorted(self) -> list[ControllerRevision]:
        """history.SortControllerRevisions: by .revision, then name."""
        return sorted(self.revisions, key=lambda r: (r.revision, r.name))

    def names(self) -> list[str]:
        """Revision names, oldest first."""
        return [r.name for r in self.sorted()]

    def get(self, name: str) -> ControllerRevision | None:
        """The revision of that name, or None."""
        return next((r for r in self.revisions if r.name == name), None)

    def orphans(self) -> list[ControllerRevision]:
        """Revisions without the set's controller reference (adopted by the next sync)."""
        return [r for r in self.revisions if not r.owned]

    def record(self, template: str) -> ControllerRevision:
        """#getStatefulSetRevisions for the set's current template; returns the update revision."""
        revs = self.sorted()
        nxt = revs[-1].revision + 1 if revs else 1  # #nextRevision
        equal = [r for r in revs if r.name == template]
        if equal and equal[-1] is revs[-1]:
            return revs[-1]  # unchanged
        if equal:
            equal[-1].revision = nxt  # rollback: the equal revision moves to the top
            return equal[-1]
        rev = ControllerRevision(template, nxt)
        self.revisions.append(rev)
        return rev

    def truncate(self, live: set[str], limit: int) -> list[str]:
        """#truncateHistory: returns the names deleted. A negative limit prunes nothing."""
        old = [r for r in self.sorted() if r.name not in live]
        if limit < 0 or len(old) <= limit:
            return []
        gone = old[: len(old) - limit]
        self.revisions = [r for r in self.revisions if r not in gone]
        return [r.name for r in gone]
