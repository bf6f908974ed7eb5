"""Honest UTF-16 output whose lines hold few NULs."""

from __future__ import annotations

from relay.edges.console import decode


def test_utf16_lines_of_cyrillic_text_stay_utf16() -> None:
    """Cyrillic in UTF-16 has NUL only in its spaces and line breaks, and each of its
    bytes is below 0x80 (valid UTF-8): such a line is still UTF-16."""
    lines = "Name=a\r\n" * 40 + "Служба запущена\r\n" + "done\r\n"
    assert decode(lines.encode("utf-16-le")) == lines
