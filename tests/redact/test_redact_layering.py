"""``relay.redact`` stands alone: it imports nothing of relay but ``relay.errors``.

Other parts of relay call the redactor; if it called them back, a change there could
change what is redacted, and the redactor could not be tested, benchmarked or moved alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

import relay.redact

PACKAGE = Path(relay.redact.__file__).parent
ALLOWED = ("relay.errors", "relay.redact")


def _relay_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += names if node.module == "relay" else [node.module]
    return [name for name in found if name == "relay" or name.startswith("relay.")]


def test_the_redactor_imports_only_itself_and_the_errors() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    assert files
    for path in files:
        for name in _relay_imports(path):
            assert name.startswith(ALLOWED), f"{path.name} imports {name}"
