"""Text from the checked repository made safe to print.

File names, object names and values quoted in messages come from the repository, which in CI
is an untrusted pull request. Printed raw, a newline in an object name starts a new line of
the log, where a CI runner reads workflow commands, and an ESC byte drives the terminal. The
GitHub Actions runner reads two syntaxes on every line of a job's log
(actions/runner src/Runner.Common/ActionCommand.cs):

* ``TryParseV2``: a line that starts with ``::`` after leading white space
  (``message.TrimStart()``), such as ``::add-mask::secret`` or ``::error file=x::text``;
* ``TryParse`` (the legacy syntax): ``##[`` *anywhere* in the line, such as
  ``text ##[add-mask]secret``.

One policy, :func:`safe_lines`, is applied to every text-like output after all of its
formatting (wrapping included), line by line: ``text`` (with ``--explain``), ``simulate``,
``junit`` and ssrisk's own messages on standard error. It writes control characters as
backslash escapes (:func:`printable`), puts a backslash before the first ``:`` of a line
that starts with ``:`` after white space, and writes ``##[`` as ``##\\[``, so that no line
of ssrisk's output parses as a workflow command. The ``github`` format writes workflow
commands on purpose and keeps the toolkit's own encoding (``reporters/github.py``);
``json`` and ``sarif`` escape strings as JSON does, and :func:`json_text` writes lone
surrogates as text there too.

A file name that is not valid UTF-8 reaches Python as lone surrogates (``os.fsdecode``);
every format shows them as the ``\\xNN`` bytes they stand for (other lone surrogates, which
only an escape in YAML can write, as ``\\uXXXX``).
"""

from __future__ import annotations

import re

from ..embedded_sim.lazyre import lazy

#: C0 and C1 control characters, DEL, the Unicode line and paragraph separators, the
#: bidirectional overrides that reorder what a reader sees ("Trojan Source", CVE-2021-42574)
#: lone surrogates (undecodable bytes of file names) and the noncharacters U+FFFE and U+FFFF
#: (not allowed in XML 1.0, so never in JUnit output either).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff\ufffe\uffff]"
)
_SURROGATE = lazy("[\ud800-\udfff]")
#: What :func:`safe_lines` escapes in a line: as :data:`_UNSAFE` but the tab (output
#: layout such as an XML report's indentation, harmless to a runner).
_UNSAFE_IN_LINE = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: A line a CI runner would take as a workflow command (``::`` after white space; any line
#: starting with ``:`` after white space is escaped, a superset).
_COMMAND_LINE = re.compile(r"^([^\S\n]*):", re.MULTILINE)
#: The legacy command syntax, read anywhere in a line.
_LEGACY_COMMAND = "##["


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` on one line, every control or invisible reordering character written as a
    backslash escape (``\\n``, ``\\x1b``, ``\\u202e``); other text unchanged."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)


def safe_lines(text: str) -> str:
    """Output ``text`` made safe line by line (see the module): each line (split at
    ``\\n``, which is kept) :func:`printable` (tabs kept), no line that starts with ``:``
    after white space, and no ``##[``. Apply it to the finished output, after wrapping."""
    if _UNSAFE_IN_LINE.search(text) is not None:
        text = "\n".join(_UNSAFE_IN_LINE.sub(_escape, line) for line in text.split("\n"))
    if _LEGACY_COMMAND in text:
        text = text.replace(_LEGACY_COMMAND, "##\\[")
    if ":" in text:
        text = _COMMAND_LINE.sub(r"\1\\:", text)
    return text


#: Multi-line text such as an explanation (the same policy).
printable_block = safe_lines


def json_text(text: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) without lone
    surrogates, which strict JSON parsers reject: each is written as the text ``\\xNN``
    (an undecodable byte of a file name) or ``\\uXXXX``, with the backslash escaped for
    JSON, as the other formats show it."""
    if text.isascii() or _SURROGATE.search(text) is None:  # (isascii: a word-at-a-time scan)
        return text
    return _SURROGATE.sub(lambda m: "\\" + _escape(m), text)


def no_surrogates(text: str) -> str:
    """``text`` with each lone surrogate written as ``\\xNN`` or ``\\uXXXX`` (as
    :func:`printable` does), other characters unchanged: a key that JSON can hold."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_escape, text)


def snippet(text: str, limit: int) -> str:
    """``text`` made :func:`printable` and cut to at most ``limit`` characters (ending in
    ``...`` when cut): how error messages quote what the repository wrote."""
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
