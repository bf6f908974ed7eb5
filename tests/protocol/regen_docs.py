"""Rewrite the generated parts of docs/loop: the baton block in PROTOCOL.md and templates/.

Run from the repository root: ``python tests/protocol/regen_docs.py``.
"""

from __future__ import annotations

from pathlib import Path

from relay.protocol.spine import EXAMPLE_MASTER, render_spine, with_generated

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "loop"


def expected_files() -> dict[Path, str]:
    """Every generated file and the text it must hold."""
    protocol = DOCS / "PROTOCOL.md"
    files = {protocol: with_generated(protocol.read_text(encoding="utf-8"))}
    for name, text in render_spine(EXAMPLE_MASTER).items():
        files[DOCS / "templates" / name] = text
    return files


def main() -> None:
    """Write the generated files that differ, and say which."""
    for path, text in expected_files().items():
        old = path.read_text(encoding="utf-8") if path.exists() else None
        if old != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", newline="\n")
            print(f"updated {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
