"""Options a rule declares (thresholds and the like), set in the configuration file under
``rule-options`` and checked there against every installed rule's declarations.

A rule lists its options in :attr:`ssrisk.rule.Rule.options`; the configuration reads::

    rule-options:
      long-termination-grace:
        max-grace-period-s: 600

Each value is checked generically: the rule must be installed, the option declared by it, the
value a number (an integer where the default is one) within the declared range.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

#: What the configuration file holds: rule id → option name → value.
RuleOptions = Mapping[str, Mapping[str, float]]


class RuleOption(msgspec.Struct, frozen=True):
    """One option of a rule: ``name`` in kebab case with its unit (``max-grace-period-s``),
    its ``default``, the inclusive range ``minimum`` .. ``maximum`` and a line of ``help``. An
    integer default makes an integer option."""

    name: str
    default: float
    minimum: float
    maximum: float
    help: str

    @property
    def integer(self) -> bool:
        return isinstance(self.default, int)

    @property
    def kind(self) -> str:
        """``an integer from MIN to MAX`` (or ``a number ...``)."""
        what = "an integer" if self.integer else "a number"
        return f"{what} from {_number(self.minimum)} to {_number(self.maximum)}"

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not a valid setting of this option (``None``: it is). A whole
        number written as a float (``1e3``) is an integer, as the API server reads one."""
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        whole = number and float(value).is_integer()
        if not number or (self.integer and not whole) or not self.minimum <= value <= self.maximum:
            return f"expected {self.kind}, got {_shown(value)}"
        return None

    def read(self, value: float) -> float:
        """A valid configured ``value`` as the rule uses it (an int for an integer option)."""
        return int(value) if self.integer else value

    def describe(self) -> str:
        """``name (default D, an integer from MIN to MAX): help``, as the rule's page and
        ``ssrisk rules --format json`` give it."""
        return f"{self.name} (default {_number(self.default)}, {self.kind}): {self.help}"


def _shown(value: Any) -> str:
    """A configured value as the configuration file spells it (``true``, ``null``, ``"x"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return _number(value) if abs(value) < 1e16 else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)[:80]
    return f"a {type(value).__name__}"


def _number(value: float) -> str:
    """``31536000``, ``0.5``: a whole number without a decimal point or an exponent."""
    return str(int(value)) if float(value).is_integer() else repr(value)


def option_problems(
    given: Mapping[str, Any], declared: Mapping[str, Sequence[RuleOption]]
) -> list[tuple[tuple[str, ...], str, bool]]:
    """``(key path under rule-options, message, about the value)`` for each option name or
    value of ``given`` that its rule does not declare (``False``: the message is about the
    key) or that its option rejects, in file order. ``declared`` maps every installed rule id
    to its options; a rule id it lacks is the caller's to report (as every unknown rule id of
    the configuration)."""
    out: list[tuple[tuple[str, ...], str, bool]] = []
    for rule_id, values in given.items():
        if rule_id not in declared:
            continue
        options = {o.name: o for o in declared[rule_id]}
        for name, value in values.items():
            option = options.get(name)
            if option is None:
                known = ", ".join(options) if options else "none"
                message = f"rule {rule_id} has no option {name!r} (options: {known})"
                out.append(((rule_id, name), message, False))
                continue
            problem = option.problem(value)
            if problem is not None:
                out.append(((rule_id, name), f"{rule_id} {name}: {problem}", True))
    return out
