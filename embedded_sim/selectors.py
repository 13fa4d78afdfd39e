"""Kubernetes label selectors, evaluated as the API machinery does.

Source: k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go#LabelSelectorAsSelector and
k8s.io/apimachinery/pkg/labels/selector.go (Requirement.Matches). ``matchLabels`` and every
``matchExpressions`` requirement are ANDed; ``In``/``NotIn`` take a value list, ``Exists`` /
``DoesNotExist`` none. An empty selector matches everything; a ``null`` selector nothing
(callers decide which applies: for policy/v1 PDBs an empty selector selects every pod of the
namespace, for policy/v1beta1 it selects none).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .lazyre import lazy

#: Label keys and values as the API server validates them
#: (k8s.io/apimachinery/pkg/util/validation/validation.go#IsQualifiedName and
#: #IsValidLabelValue): an optional DNS-subdomain prefix and a name of at most 63 characters;
#: values of at most 63 characters, possibly empty.
_LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_KEY_RE = lazy(rf"([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_LABEL_NAME}")
_LABEL_VALUE_RE = lazy(rf"({_LABEL_NAME})?")


def is_qualified_name(key: str) -> bool:
    """Whether ``key`` is a valid label key (also a toleration's or taint's key)."""
    return _LABEL_KEY_RE.fullmatch(key) is not None


def is_label_value(value: str) -> bool:
    """Whether ``value`` is a valid label value (also an Equal toleration's value)."""
    return _LABEL_VALUE_RE.fullmatch(value) is not None


class InvalidSelector(ValueError):
    """A selector that the API server would reject (unknown operator, bad values)."""


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, Any]) -> bool:
    """Whether a ``LabelSelector`` (matchLabels + matchExpressions) selects ``labels``.

    Raises:
        InvalidSelector: for an operator Kubernetes does not know or a malformed entry.
    """
    if selector is None:
        return False
    labels = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise InvalidSelector("matchLabels must be a map")
    for key, value in match_labels.items():
        if labels.get(str(key)) != str(value):
            return False
    exprs = selector.get("matchExpressions") or []
    if not isinstance(exprs, list):
        raise InvalidSelector("matchExpressions must be a list")
    for expr in exprs:
        if not isinstance(expr, Mapping):
            raise InvalidSelector("each matchExpressions entry must be a map")
        key = str(expr.get("key", ""))
        op = expr.get("operator")
        raw = expr.get("values") or []
        if not isinstance(raw, list):
            raise InvalidSelector("matchExpressions values must be a list")
        values = [str(v) for v in raw]
        present = key in labels
        if op == "In":
            if not present or labels[key] not in values:
                return False
        elif op == "NotIn":
            if present and labels[key] in values:
                return False
        elif op == "Exists":
            if not present:
                return False
        elif op == "DoesNotExist":
            if present:
                return False
        else:
            raise InvalidSelector(f"unknown operator {op!r}")
    return True


def selects(selector: Any, labels: Mapping[str, Any]) -> bool:
    """Whether a LabelSelector as written selects ``labels``: ``None`` (or any non-mapping)
    selects nothing, ``{}`` every pod, and a selector the API server would reject nothing."""
    if not isinstance(selector, Mapping):
        return False
    try:
        return selector_matches(selector, labels)
    except InvalidSelector:
        return False


def map_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, Any]) -> bool:
    """Whether a plain map selector (as in ``Service.spec.selector``) selects ``labels``.

    An empty or missing Service selector selects no pods (the endpoints controller skips it).
    """
    if not selector or not isinstance(selector, Mapping):
        return False
    return all(str(labels.get(str(k))) == str(v) for k, v in selector.items())


def is_empty_selector(selector: Any) -> bool:
    """True for ``{}`` (no matchLabels and no matchExpressions)."""
    return (
        isinstance(selector, Mapping)
        and not selector.get("matchLabels")
        and not (selector.get("matchExpressions"))
    )
