"""The layering under test: every import in the tree, checked against the rules in
docs/ARCHITECTURE.md. A forbidden edge fails here, naming the file, the line and the rule.

Imports inside functions count as much as those at the top: a lazy import is still an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# watchers/ and schedulers/ sit at the repository's top level and are imported as
# relay.watchers and relay.schedulers (relay/watchers and relay/schedulers link to them)
TREES = ("relay", "watchers", "schedulers")
LINKED = ("watchers", "schedulers")
OURS = ("relay",)

# layer -> the layers (module prefixes) it may import; "relay" alone is the package root,
# which holds only the version.
ALLOWED: dict[str, tuple[str, ...]] = {
    "relay.protocol": ("relay.protocol", "relay.errors"),
    "relay.edges": ("relay.edges", "relay.errors", "relay"),
    "relay.hub": ("relay.hub", "relay.errors"),
    "relay.redact": ("relay.redact", "relay.errors"),
    "relay.loop": ("relay.loop", "relay.protocol", "relay.errors"),
    # the ratchet writes what makers say into the spine, through redaction as the node does
    "relay.ratchet": ("relay.ratchet", "relay.loop", "relay.edges", "relay.redact", "relay.errors"),
    "relay.node": ("relay.node", "relay.protocol", "relay.edges", "relay.redact", "relay.errors"),
    "relay.schedulers": (
        "relay.schedulers",
        "relay.errors",
        "relay.edges.files",
        "relay.edges.ownpath",  # crontab, systemctl... found outside the clone's folders
        "relay",
    ),
    # the error tree and the package root are what everyone may import: they import nothing
    "relay.errors": (),
    "relay": (),
}
# commands and watchers may import anything of ours but the CLI entry point
ANYTHING_BUT_CLI = ("relay.commands", "relay.watchers")


def layer_of(module: str) -> str:
    """The layer a module of ours belongs to (its longest matching prefix)."""
    entry_points = ("relay.cli", "relay.__main__")  # `relay` and `python -m relay`
    layers = sorted([*ALLOWED, *ANYTHING_BUT_CLI, *entry_points, "relay.errors"], key=len)
    for layer in layers[::-1]:
        if module == layer or module.startswith(layer + "."):
            return layer
    return "relay"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in LINKED:
        parts.insert(0, "relay")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """Every module of ours that ``path`` imports, with its line: plain and relative
    imports, and ``importlib.import_module`` / ``__import__`` with a literal name."""
    found = []
    package = ""
    if path.is_relative_to(ROOT):
        package = module_name(path)
        package = package if path.name == "__init__.py" else package.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, package)
            found.append((node.lineno, base))
            # `from relay import github` imports the module relay.github
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call) and _dynamic(node) is not None:
            found.append((node.lineno, _dynamic(node) or ""))
    return [(line, name) for line, name in found if name.split(".")[0] in OURS]


def _absolute(module: str | None, level: int, package: str) -> str:
    """The absolute name of a (possibly relative) ``from`` import."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*base, *([module] if module else [])])


def _dynamic(call: ast.Call) -> str | None:
    """The literal module name of ``importlib.import_module("x")`` or ``__import__("x")``."""
    func = call.func
    named = isinstance(func, ast.Attribute) and func.attr == "import_module"
    named = named or (isinstance(func, ast.Name) and func.id in ("import_module", "__import__"))
    if named and call.args and isinstance(call.args[0], ast.Constant):
        value = call.args[0].value
        return value if isinstance(value, str) else None
    return None


def allowed(importer: str, imported: str) -> bool:
    """Whether a module in layer ``importer`` may import module ``imported``."""
    if importer in ANYTHING_BUT_CLI:
        return layer_of(imported) != "relay.cli"
    if importer not in ALLOWED:
        return True  # relay.cli and the package root
    return any(
        imported == p or imported.startswith(p + ".") if p != "relay" else imported == "relay"
        for p in ALLOWED[importer]
    )


def _is_module(name: str) -> bool:
    """Whether a dotted name is a module or package of ours (not a name inside one)."""
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def sources() -> list[Path]:
    return [path for tree in TREES for path in sorted((ROOT / tree).rglob("*.py"))]


def violations() -> list[str]:
    bad = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            importer = layer_of(module_name(path))
            for line, name in imports(path):
                if not _is_module(name):
                    continue
                if not allowed(importer, name):
                    where = path.relative_to(ROOT)
                    bad.append(f"{where}:{line} imports {name} ({importer} may not)")
    return bad


def test_no_module_imports_across_a_forbidden_edge() -> None:
    assert len(sources()) > 80  # the whole tree was read
    assert violations() == []


@pytest.mark.parametrize(
    ("importer", "imported", "ok"),
    [
        ("relay.protocol", "relay.edges.git", False),
        ("relay.protocol", "relay.errors", True),
        ("relay.edges", "relay.node.context", False),
        ("relay.edges", "relay.protocol", False),
        ("relay.hub", "relay.protocol.labels", False),
        ("relay.redact", "relay.edges.local", False),
        ("relay.node", "relay.watchers.once", False),
        ("relay.node", "relay.commands.output", False),
        ("relay.node", "relay.protocol.decide", True),
        ("relay.watchers", "relay.cli", False),
        ("relay.commands", "relay.cli", False),
        ("relay.commands", "relay.watchers.once", True),
        ("relay.schedulers", "relay.node.context", False),
        ("relay.errors", "relay.node.context", False),
        ("relay", "relay.edges.git", False),
        ("relay.loop", "relay.edges.worktree", False),
        ("relay.loop", "relay.protocol.spine", True),
        ("relay.ratchet", "relay.node.context", False),
        ("relay.ratchet", "relay.loop.goals", True),
    ],
)
def test_the_rules_refuse_what_they_should(importer: str, imported: str, ok: bool) -> None:
    assert allowed(importer, imported) is ok


def test_the_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from relay.cli import main\n    import relay.watchers.once\n")
    assert imports(source) == [(2, "relay.cli"), (2, "relay.cli.main"), (3, "relay.watchers.once")]


def test_the_checker_sees_relative_and_dynamic_imports() -> None:
    path = ROOT / "relay" / "protocol" / "decide.py"
    tree = ast.parse("from ..edges import git\nfrom . import work\n")
    package = "relay.protocol"
    names = [
        _absolute(n.module, n.level, package) + "." + n.names[0].name
        for n in tree.body
        if isinstance(n, ast.ImportFrom)
    ]
    assert names == ["relay.edges.git", "relay.protocol.work"]
    call = ast.parse('importlib.import_module("relay.node.context")').body[0]
    assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
    assert _dynamic(call.value) == "relay.node.context"
    assert layer_of(module_name(path)) == "relay.protocol"
