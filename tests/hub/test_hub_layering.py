"""The hub stands alone: ``relay/hub`` imports nothing of relay but itself and
``relay.errors``, so the rest of relay can move without touching the embedded GitHub."""

from __future__ import annotations

import ast
from pathlib import Path

import relay.hub

ALLOWED = ("relay.hub", "relay.errors")


def test_the_hub_imports_only_itself_and_relay_errors() -> None:
    root = Path(relay.hub.__file__).parent
    found = []
    for module in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            for name in names:
                outside = name == "relay" or name.startswith("relay.")
                if outside and not name.startswith(ALLOWED):
                    found.append(f"{module.name}: {name}")
    assert len(list(root.glob("*.py"))) > 10
    assert found == []
