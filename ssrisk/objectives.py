"""Recovery objectives: what a StatefulSet must survive, per simulated scenario.

The ``objectives:`` section of the configuration sets them; every key is optional and the
defaults are ones a well-built quorum system (three or more replicas, one per node and zone,
a PodDisruptionBudget of ``maxUnavailable: 1``) meets on a cluster whose dead nodes nobody
replaces automatically:

=================  =================================  ==============================
scenario           key                                default
=================  =================================  ==============================
``node-loss``      ``max-unavailable``                ``minority``
``node-loss``      ``recover-within``                 ``15m`` (900 s)
``zone-loss``      ``max-unavailable``                ``minority``
``node-drain``     ``max-unavailable``                ``1``
``node-drain``     ``complete-within``                not set
``rolling-update`` ``max-unavailable``                ``minority``
``bad-rollout``    ``revert-without-manual-delete``   ``false``
=================  =================================  ==============================

``max-unavailable`` is a number of replicas, a percentage of ``replicas`` (rounded down) or
``minority``: for a quorum system (a known consensus-based image, or the StatefulSet annotation
``ssrisk.io/quorum: "true"``) the most replicas that can be down while a majority is up,
``(replicas - 1) // 2`` (0 for one or two replicas); for other StatefulSets at most half,
``replicas // 2`` (a pair may lose one). ``recover-within`` bounds an outage: when a fault
takes more than ``max-unavailable`` replicas, every replica must be back within that time
(measured from the fault, in the simulation). Durations are seconds or strings such as
``90s``, ``15m``, ``1h30m``; they are kept in seconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from .embedded_sim.lazyre import lazy

#: The scenarios an objective can be set for, and the keys each takes.
KEYS: Mapping[str, tuple[str, ...]] = {
    "node-loss": ("max-unavailable", "recover-within"),
    "zone-loss": ("max-unavailable", "recover-within"),
    "node-drain": ("max-unavailable", "complete-within"),
    "rolling-update": ("max-unavailable", "complete-within"),
    "bad-rollout": ("revert-without-manual-delete",),
}

MINORITY = "minority"

_DURATION = lazy(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s)?$")
_PERCENT = lazy(r"^(\d{1,3})%$")


def parse_duration(value: Any) -> float:
    """Seconds in ``value``: a number of seconds, or ``"90s"``, ``"15m"``, ``"1h30m"``.

    Raises:
        ValueError: for anything else (negative numbers, unknown units, empty strings).
    """
    if isinstance(value, bool):
        raise ValueError("a duration is a number of seconds or a string such as 15m")
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError("a duration must not be negative")
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        m = _DURATION.match(text)
        if text and m and any(m.groups()):
            h, mi, s = (float(g) if g else 0.0 for g in m.groups())
            return h * 3600 + mi * 60 + s
    raise ValueError(f"{value!r} is not a duration (seconds, or e.g. 90s, 15m, 1h30m)")


def fmt_objective_duration(seconds: float) -> str:
    """``900.0`` → ``"15m"``, ``5400`` → ``"1h30m"``, ``75`` → ``"1m15s"`` (as users write it)."""
    total = round(float(seconds))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    text = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s else "")
    return text or "0s"


def check_max_unavailable(value: Any) -> int | str:
    """A ``max-unavailable`` value as stored: an int ≥ 0, ``"minority"`` or ``"N%"``.

    Raises:
        ValueError: for other values.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text == MINORITY:
            return MINORITY
        m = _PERCENT.match(text)
        if m and int(m.group(1)) <= 100:
            return f"{int(m.group(1))}%"
    raise ValueError(f"{value!r}: use a whole number ≥ 0, a percentage such as 33%, or minority")


def minority(replicas: int, quorum: bool = True) -> int:
    """``minority`` for ``replicas``: ``(replicas - 1) // 2`` for a quorum system (the rest
    keep a majority), ``replicas // 2`` otherwise (at most half)."""
    return max(0, (replicas - 1) // 2 if quorum else replicas // 2)


def resolve_max_unavailable(value: int | str, replicas: int, quorum: bool = True) -> int:
    """How many of ``replicas`` may be unavailable under ``value``."""
    if isinstance(value, int):
        return value
    if value == MINORITY:
        return minority(replicas, quorum)
    return int(value.rstrip("%")) * replicas // 100


def describe_max_unavailable(value: int | str, replicas: int, quorum: bool = True) -> str:
    """``"minority (1 of 3)"``, ``"1"``, ``"33% (0 of 2)"``."""
    allowed = resolve_max_unavailable(value, replicas, quorum)
    if isinstance(value, int):
        return str(value)
    return f"{value} ({allowed} of {replicas})"


class Objective(msgspec.Struct, frozen=True):
    """The objective of one scenario; ``None`` means not set (not checked)."""

    scenario: str
    max_unavailable: int | str | None = None
    recover_within_s: float | None = None
    complete_within_s: float | None = None
    revert_without_manual_delete: bool | None = None

    def describe(self, replicas: int, quorum: bool = True) -> str:
        """The objective as configured, e.g. ``"max-unavailable minority (1 of 3),
        recover-within 15m"``."""
        parts = []
        if self.max_unavailable is not None:
            shown = describe_max_unavailable(self.max_unavailable, replicas, quorum)
            parts.append(f"max-unavailable {shown}")
        if self.recover_within_s is not None:
            parts.append(f"recover-within {fmt_objective_duration(self.recover_within_s)}")
        if self.complete_within_s is not None:
            parts.append(f"complete-within {fmt_objective_duration(self.complete_within_s)}")
        if self.revert_without_manual_delete is not None:
            value = str(self.revert_without_manual_delete).lower()
            parts.append(f"revert-without-manual-delete {value}")
        return ", ".join(parts)


def _defaults() -> dict[str, Objective]:
    return {
        "node-loss": Objective("node-loss", MINORITY, 900.0),
        "zone-loss": Objective("zone-loss", MINORITY),
        "node-drain": Objective("node-drain", 1),
        "rolling-update": Objective("rolling-update", MINORITY),
        "bad-rollout": Objective("bad-rollout", revert_without_manual_delete=False),
    }


class Objectives(msgspec.Struct, frozen=True):
    """The recovery objectives of a run: the defaults with the configuration's overrides."""

    by_scenario: Mapping[str, Objective] = msgspec.field(default_factory=_defaults)

    def __getitem__(self, scenario: str) -> Objective:
        return self.by_scenario.get(scenario) or Objective(scenario)

    def with_overrides(self, raw: Mapping[str, Mapping[str, Any]]) -> Objectives:
        """These objectives with ``raw`` (the config section, already checked by
        :func:`check_section`) applied on top; ``null`` unsets a key."""
        out = dict(self.by_scenario)
        for scenario, keys in raw.items():
            obj = out.get(scenario) or Objective(scenario)
            changes: dict[str, Any] = {}
            for key, value in keys.items():
                changes[key.replace("-", "_").replace("_within", "_within_s")] = value
            out[scenario] = msgspec.structs.replace(obj, **changes)
        return Objectives(out)


def check_section(raw: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Check the values of an ``objectives`` section and convert them (durations to seconds).

    The schema has already checked the scenario and key names.

    Raises:
        ValueError: with ``(scenario, key)`` as ``args[1]`` for the first bad value.
    """
    out: dict[str, dict[str, Any]] = {}
    for scenario, keys in raw.items():
        conv: dict[str, Any] = {}
        for key, value in (keys or {}).items():
            try:
                if value is None:
                    conv[key] = None
                elif key == "max-unavailable":
                    conv[key] = check_max_unavailable(value)
                elif key.endswith("-within"):
                    conv[key] = parse_duration(value)
                else:
                    conv[key] = value
            except ValueError as exc:
                raise ValueError(str(exc), (scenario, key)) from None
        out[scenario] = conv
    return out
