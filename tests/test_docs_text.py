"""The README and the docs hold no control characters: a string escape (``\\t``, ``\\r``)
written through by a tool turns ``C:\\path\\to\\relay`` into a TAB and a line break that a
person copies into a shell."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_control_characters(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [
        (number, line)
        for number, line in enumerate(text.split("\n"), start=1)
        if any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in line)
    ]
    assert not found, f"control characters in {path.name}: {found[:3]}"


def test_the_windows_install_line_names_the_path_whole() -> None:
    assert "py -m pip install C:\\path\\to\\relay\n" in (ROOT / "README.md").read_text()
