"""Text from the checked repository made safe to print.

File names, object names and values quoted in messages come from the repository, which in CI
is an untrusted pull request. Printed raw, a newline in an object name starts a new line of
the log, where a runner reads ``::error::`` or ``::add-mask::`` as a workflow command (GitHub
Actions parses any log line that starts with ``::`` after leading whitespace:
actions/runner src/Runner.Worker/ActionCommandManager.cs, ActionCommand.TryParseV2), and an
ESC byte drives the terminal. Every format that writes text (``text``, ``github``,
``junit``, and ssrisk's own messages on standard error) passes such strings through here;
``json`` and ``sarif`` escape them as JSON does.

A file name that is not valid UTF-8 reaches Python as lone surrogates (``os.fsdecode``);
they are shown as the ``\\xNN`` bytes they stand for.
"""

from __future__ import annotations

import re

#: C0 and C1 control characters, DEL, the Unicode line and paragraph separators, the
#: bidirectional overrides that reorder what a reader sees ("Trojan Source", CVE-2021-42574)
#: and lone surrogates (undecodable bytes of file names).
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: A line a CI runner would take as a workflow command.
_COMMAND_LINE = re.compile(r"^(\s*):", re.MULTILINE)


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


def printable_block(text: str) -> str:
    """Multi-line ``text`` (an explanation) with each line made :func:`printable` and no line
    that a CI runner would read as a workflow command (a line starting with ``:`` gets a
    backslash before it). The line breaks are kept."""
    lines = [printable(line) for line in text.split("\n")]
    return _COMMAND_LINE.sub(r"\1\\:", "\n".join(lines))


def snippet(text: str, limit: int) -> str:
    """``text`` made :func:`printable` and cut to at most ``limit`` characters (ending in
    ``...`` when cut): how error messages quote what the repository wrote."""
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."
