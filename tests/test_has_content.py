"""``loading.has_content`` reads a growing prefix of a document: it must answer as the whole
text's lines do, whatever line a prefix ends in (long comments, ``\\r\\n``, markers)."""

from __future__ import annotations

import pytest
from conftest import DATA

from ssrisk.loading import has_content, split_documents


def _by_every_line(text: str) -> bool:
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#") and s not in ("---", "..."):
            return True
    return False


def _cases() -> list[str]:
    texts = [p.read_text(errors="replace") for p in sorted(DATA.rglob("*.y*ml")) if p.is_file()]
    docs = [chunk for text in texts for _, chunk in split_documents(text)]
    made = []
    for n in (509, 510, 511, 512, 2047, 2048, 2049, 8191, 8192):
        made += [
            "#" * n + "\n---x\n",  # a prefix cut inside "---x" sees "---"
            "#" * n + "\r\n...\r\n" + "# more\n" * 300,
            " " * n + "# a comment\n" * 3 + "kind: Service\n",
            "# c\n" * (n // 4) + "---",
            "\u2028".join(["# c"] * (n // 3)) + "\u2028a: 1",
        ]
    return [*texts, *docs, *made, "", "---", "...\n", "# only\n#comments\n"]


def test_has_content_answers_as_reading_every_line() -> None:
    cases = _cases()
    assert len(cases) > 500
    for text in cases:
        assert has_content(text) == _by_every_line(text), text[:80]


@pytest.mark.parametrize("size", [10, 100_000])
def test_a_comment_only_document_of_any_size_has_no_content(size: int) -> None:
    assert not has_content("# comment\n" * size + "---\n")
    assert has_content("# comment\n" * size + "a: 1\n")
