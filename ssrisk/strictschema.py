"""The JSON Schema validator of ssrisk's own files (configuration, systems, baselines), with
``pattern`` matched as JSON Schema means it.

JSON Schema patterns are ECMA-262 regular expressions, where ``$`` matches only at the end
of the text; Python's ``re``, which ``jsonschema`` matches them with, also lets ``$`` match
before a final newline, so ``namespace: "shop\\n"`` passed ``^[a-z0-9]...$`` and was used
as a namespace (``--namespace`` refused it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping
from typing import Any


def validator(schema: Mapping[str, Any], **options: Any) -> Any:
    """A ``jsonschema`` Draft 2020-12 validator of ``schema`` (``options`` as for its class,
    such as ``format_checker``) whose ``pattern`` does not match before a final newline."""
    return _validator_class()(schema, **options)


@functools.cache
def _validator_class() -> Any:
    import jsonschema

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _pattern})


def _pattern(checker: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    import jsonschema

    if not checker.is_type(instance, "string"):
        return
    if re.search(_python_pattern(pattern), instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.lru_cache(maxsize=256)
def _python_pattern(pattern: str) -> str:
    """``pattern`` with each ``$`` anchor (not escaped, not in a character class) written
    ``\\Z``: the end of the text only, as ECMA-262 reads ``$`` without the multiline flag."""
    out: list[str] = []
    opened = -1  # where the character class being read starts in out (-1: none)
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if opened >= 0:
            first = out[opened + 1 :] in ([], ["^"])  # ("[]a]" and "[^]a]" hold a "]")
            if c == "]" and not first:
                opened = -1
        elif c == "[":
            opened = len(out)
        elif c == "$":
            c = "\\Z"
        out.append(c)
        i += 1
    return "".join(out)
