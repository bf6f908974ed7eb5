"""Honest UTF-16 output in scripts whose units hold a 0x0A byte or only ASCII bytes."""

from __future__ import annotations

import codecs

import pytest

from relay.edges.console import decode

HONEST = [
    "ファイルは上書きされました",  # 上 is U+4E0A: its low byte is a line feed
    "ชื่อผู้ใช้: admin",  # ช is U+0E0A
    "Њујорк је велики град",  # Њ is U+040A
    "╔════════════╗",  # U+2554, U+2550, U+2557: every byte is printable ASCII
    "あいうえおかきくけこ",  # hiragana U+3042..U+3053: every byte is printable ASCII
]


@pytest.mark.parametrize("line", HONEST)
def test_honest_utf16_lines_read_as_written(line: str) -> None:
    text = "Name: test\r\n" + line + "\r\nafter\r\n"
    assert decode(codecs.BOM_UTF16_LE + text.encode("utf-16-le")) == text
