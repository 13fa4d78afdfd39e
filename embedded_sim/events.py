"""Timeline recording: every observable step with a stable kind and a readable source."""

from __future__ import annotations

from .result import TimelineEvent

# Stable machine-readable kinds (the linter's rules quote these).
KINDS: tuple[str, ...] = (
    "fault",
    "node-unknown",
    "node-not-ready",
    "node-shutdown",
    "node-deleted",
    "node-returned",
    "node-ready",
    "node-cordoned",
    "taint-added",
    "taint-removed",
    "pod-not-ready",
    "pod-deletion-requested",
    "pod-terminating-stuck",
    "pod-terminated",
    "pod-failed",
    "pod-deleted",
    "pod-force-deleted",
    "pod-created",
    "pod-scheduled",
    "pod-pending",
    "pod-started",
    "pod-ready",
    "pod-available",
    "pod-readiness-failing",
    "volume-multi-attach",
    "volume-detach-waiting",
    "volume-detached",
    "volume-attached",
    "volume-mounted",
    "pvc-deleted",
    "pvc-created",
    "pvc-conflicting-controller",
    "pod-create-failed",
    "pod-adopted",
    "pod-released",
    "eviction-scheduled",
    "eviction-cancelled",
    "toleration-forever",
    "zone-disruption",
    "template-changed",
    "rollout-stalled",
    "rollout-complete",
    "scale-complete",
    "drain-started",
    "drain-evict-refused",
    "drain-evicted",
    "drain-complete",
    "drain-failed",
    "operator-action",
)


class Timeline:
    """Append-only list of events; de-duplicates identical (t, pod, kind, event) entries."""

    def __init__(self) -> None:
        self.events: list[TimelineEvent] = []
        self._once: set[tuple[str | None, str, str]] = set()

    def add(self, t_s: float, pod: str | None, kind: str, event: str, source: str) -> None:
        self.events.append(TimelineEvent(round(t_s, 6), pod, kind, event, source))

    def once(
        self, key: str, t_s: float, pod: str | None, kind: str, event: str, source: str
    ) -> None:
        """Record only the first occurrence of (pod, kind, key)."""
        k = (pod, kind, key)
        if k in self._once:
            return
        self._once.add(k)
        self.add(t_s, pod, kind, event, source)
