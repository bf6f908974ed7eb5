"""What a maker may not change, beyond the contract's protected paths: the spine relay
keeps, the files that define the gates, the tests that existed at the baseline, and the
clone's own machinery under ``.git`` (hooks, info, config).

Ground rules: a gate is only as good as its definition, so a maker that could rewrite a
Makefile's test target, delete a test or add a coverage ``omit`` could pass any gate. All
of that is decided here from observed paths and texts; ``relay.ratchet`` does the looking.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import json
import re
import shlex
import sys
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from relay.loop.contract import ENV_ONLY_MAKER
from relay.loop.goals import BOARD_NAME, GOALS_NAME
from relay.loop.records import HANDOVER_NAME

if TYPE_CHECKING:
    from configparser import ConfigParser

# the spine relay writes itself: a maker's edit would be committed as relay's record
SPINE_KEPT = (
    GOALS_NAME,
    BOARD_NAME,
    HANDOVER_NAME,
    "docs/loop/CONTRACT.md",
    "docs/loop/state/",
    "docs/loop/EXPERIMENTS.md",
    "docs/loop/audits/",
    # the rest of the spine (LOOP.md's rules, learned rules, relay's roster and logs): what
    # every later brief carries comes only through relay's own path, never a maker's edit
    "docs/loop/",
)
# files whose whole text defines how the gates run
GATE_FILES = frozenset(
    {
        "Makefile",
        "makefile",
        "GNUmakefile",
        "setup.cfg",
        "tox.ini",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        ".coveragerc",
        "noxfile.py",
        "mypy.ini",
        ".mypy.ini",
        "ruff.toml",
        ".ruff.toml",
        ".flake8",
        ".pylintrc",
        "pylintrc",
        "pyrightconfig.json",
        "conftest.py",
        ".pre-commit-config.yaml",
        # run by Python itself at start-up, before any gate's own code
        "sitecustomize.py",
        "usercustomize.py",
        # what the linters skip: ruff honours .gitignore and .ignore (git's own exclude
        # lies under .git/info, kept by GIT_META), so `src/*.py` there blinds the lint gate
        ".gitignore",
        ".ignore",
        ".rgignore",
    }
)
STARTUP_SUFFIXES = (".pth",)  # a site directory's .pth lines run at every start-up
STARTUP_PACKAGES = frozenset({"sitecustomize", "usercustomize"})
# package.json keys a maker may change (what the project depends on, not how it is gated)
NODE_FREE = frozenset(
    {
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
        "version",
        "description",
    }
)
GIT_META = ("hooks/", "info/", "config")
# comments that switch a checker off for a whole file: a new one weakens a gate as surely
# as an edited configuration does (what each tool reads, as people write it)
FILE_WIDE_SUPPRESSIONS = (
    "# ruff: noqa",
    "# flake8: noqa",
    "# pylint: skip-file",
    "# pylint: disable-all",
    "# pylint: disable=all",
    "# mypy: ignore-errors",
    "# type: ignore",
    "# pyright: basic",
    "# pyright: ignore",
    "# pytype: skip-file",
    "# pragma: no cover",
    "/* eslint-disable */",
    "// eslint-disable",
    "/* eslint-disable",
    "// @ts-nocheck",
)
# matched by shape, whatever the spacing and case: on a line of their own (the tools
# read them there), but coverage's pragma anywhere (it drops the line or block it ends)
_OWN_LINE = re.compile(
    r"""^(?:
      \#\s*(?:ruff|flake8)\s*:\s*noqa\b
    | \#\s*pylint\s*:\s*(?:skip-file|disable-all|disable\s*=\s*(?:all\b|[^#]*\ball\b))
    | \#\s*mypy\s*:                       # any inline configuration weakens or bends it
    | \#\s*type\s*:\s*ignore\b
    | \#\s*pyright\s*:(?!\s*strict\s*$)
    | \#\s*pytype\s*:\s*(?:skip-file|disable)
    | (?:/\*|//)\s*eslint-disable(?![-\w])
    | (?:/\*|//)\s*eslint\s+[^*]*\boff\b
    | (?:/\*|//)\s*@ts-nocheck\b
    | (?:/\*|//)\s*jshint\s+ignore\s*:\s*start
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_ANYWHERE = re.compile(r"#\s*pragma[:\s]?\s*no\s*(?:cover|branch)\b", re.IGNORECASE)
# comments that switch a checker off for the line they end (or the next): a new finding
# hidden by one is as new as one left in sight
_LINE_LEVEL = re.compile(
    r"""(?:
      \#\s*noqa\b
    | \#\s*type\s*:\s*ignore\b
    | \#\s*pyright\s*:\s*ignore\b
    | \#\s*pylint\s*:\s*disable\b
    | \#\s*nosec\b
    | \#\s*pytype\s*:\s*disable\b
    | (?://|/\*)\s*eslint-disable-(?:next-)?line\b
    | (?://|/\*)\s*@ts-(?:ignore|expect-error)\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
# files that run (or instruct an agent) when a person opens the project, known by shape
# rather than listed (a list misses the next editor's or agent's folder): any path with a
# dot component (.vscode/, .claude/, .gemini/, .codex/, .mcp.json, .envrc, .github/, ...),
# an agent's instructions file at any depth, mise's configuration (its hooks run on `cd`)
AGENT_FILES = frozenset(
    {
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        "QWEN.md",
        "CRUSH.md",
        "WARP.md",
        "CONVENTIONS.md",
        ".cursorrules",
        # agents' and editors' configurations without a dot: MCP servers are commands
        "opencode.json",
        "opencode.jsonc",
        "crush.json",
        "devcontainer.json",
    }
)
MISE_FILES = re.compile(r"^\.?mise(?:\.[\w-]+)?\.toml$")
# the configuration folders read on open whatever their files are called (``mise/``)
OPEN_FOLDERS = frozenset({"mise"})
# a top-level all-capitals Markdown file is an agent's instructions (``WARP.md``,
# ``QWEN.md``, the next agent's) unless it is one of a project's usual documents
PROJECT_DOCS = frozenset(
    {
        "README",
        "CHANGELOG",
        "CHANGES",
        "CONTRIBUTING",
        "CONTRIBUTORS",
        "LICENSE",
        "LICENCE",
        "COPYING",
        "SECURITY",
        "CODE_OF_CONDUCT",
        "AUTHORS",
        "NOTICE",
        "HISTORY",
        "NEWS",
        "MAINTAINERS",
        "SUPPORT",
        "GOVERNANCE",
        "RELEASE",
        "RELEASING",
        "UPGRADING",
        "MIGRATION",
        "TODO",
        "ROADMAP",
        "FAQ",
        "INSTALL",
        "CITATION",
        "COPYRIGHT",
        "CREDITS",
        "THANKS",
        "NOTES",
        "DESIGN",
        "ARCHITECTURE",
        "DEVELOPMENT",
        "HACKING",
        "BUILDING",
        "USAGE",
        "PRIVACY",
    }
)
# new top-level files of these shapes are read by an editor or agent on open (an
# agent's or editor's JSON settings, a workspace whose tasks run on folder open)
NEW_TOP_OPENED = (".json", ".jsonc", ".json5", ".code-workspace")
SOURCE_SUFFIXES = (".py", ".pyi", ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx")


def _simple(path: str) -> bool:
    """Whether ``path`` is spelled as git spells a tree's paths, plainly: relative, no
    empty part, none that starts with a dot, no trailing slash. Its name and parent are
    then read off its text (:func:`path_name`), not off a Path: the guards look at every
    file of a tree several times an attempt, and making a Path of each was most of it."""
    return (
        bool(path)
        and path[0] not in "/."
        and path[-1] != "/"
        and "//" not in path
        and "/." not in path
    )


def path_name(path: str) -> str:
    """``PurePosixPath(path).name``."""
    return path.rpartition("/")[2] if _simple(path) else PurePosixPath(path).name


def path_parent(path: str) -> str:
    """``str(PurePosixPath(path).parent)`` ("." for a top-level path)."""
    return (path.rpartition("/")[0] or ".") if _simple(path) else str(PurePosixPath(path).parent)


def path_parts(path: str) -> tuple[str, ...]:
    """``PurePosixPath(path).parts``."""
    return tuple(path.split("/")) if _simple(path) else PurePosixPath(path).parts


def is_test_file(path: str) -> bool:
    """Whether ``path`` is a test: under a ``tests``/``test`` directory, or named like one."""
    parts = path_parts(path)
    name = parts[-1] if parts else ""
    if any(p in ("tests", "test", "__tests__") for p in parts[:-1]):
        return True
    return (name.startswith("test_") and name.endswith(".py")) or name.endswith(
        ("_test.py", "_test.go", ".test.js", ".test.ts", ".spec.js", ".spec.ts")
    )


# a distribution's metadata in the clone: `python -m pytest` puts the clone on sys.path,
# so pytest loads the plugins an entry_points.txt there names, before any test runs
METADATA_SUFFIXES = (".dist-info", ".egg-info")
# the gates' own tools: a new module of that name where the gates import from (the clone,
# or its src/) would be imported in their place
GATE_TOOLS = frozenset(
    {
        "pytest",
        "_pytest",
        "pluggy",
        "iniconfig",
        "py",
        "coverage",
        "pytest_cov",
        "xdist",
        "hypothesis",
        "mypy",
        "ruff",
        "flake8",
        "pylint",
        "pyright",
        "tox",
        "nox",
    }
)


def defines_gates(path: str) -> bool:
    """Whether ``path`` is a file that defines how a gate runs or what it collects (a
    pyproject.toml only through its ``[tool]`` tables, which ``gate_definition_touched``
    compares), or one the gates' tools load of their own accord (a distribution's
    metadata: its entry points are pytest plugins; a JavaScript tool's configuration,
    ``node_gates.NODE_CONFIG``)."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    if name == "entry_points.txt" or any(p.endswith(METADATA_SUFFIXES) for p in parts[:-1]):
        return True
    if any(p in STARTUP_PACKAGES for p in parts[:-1]):
        return True  # sitecustomize/__init__.py runs at start-up as sitecustomize.py does
    from relay.loop.node_gates import is_node_config

    return name in GATE_FILES or name.endswith(STARTUP_SUFFIXES) or is_node_config(name)


# programs that run the script they are given (``sh scripts/check.sh``, ``python
# tools/lint.py``): the script is as much the gate's definition as the command is
INTERPRETERS = re.compile(
    r"^(?:sh|bash|dash|zsh|ksh|mksh|fish|python(?:\d+(?:\.\d+)?)?|pypy\d*|node|deno|bun|perl"
    r"|ruby|php|lua|tclsh|Rscript|pwsh|awk|gawk|source|\.)$"
)
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh"})
# what runs the rest of its words as a command of its own (``env X=1 sh x.sh``)
WRAPPERS = frozenset(
    {"env", "exec", "command", "nice", "nohup", "time", "timeout", "xvfb-run", "stdbuf",
     "chronic", "sudo"}
)  # fmt: skip
# runners whose ``run`` word is followed by the command they run (``uv run sh x.sh``)
RUNNERS = frozenset({"uv", "poetry", "pipenv", "hatch", "pdm", "rye", "npx", "pnpm", "yarn"})
_MAKE_DIRS = ("GNUmakefile", "makefile", "Makefile")


def gate_scripts(
    commands: Iterable[str],
    files: Iterable[str],
    read: Callable[[str], str | None] = lambda _: None,
    *,
    root: str = "",
) -> frozenset[str]:
    """Every file of the tree (``files``: its paths) that a gate or acceptance command
    (``commands``) names or resolves to, and, in turn, every file such a script or
    makefile names the same way and the modules a Python script imports from its own
    folder (``read``: a file's text at the baseline, None when unreadable): the program
    itself when it is in the tree (``./check``, ``bin/lint``), the script an interpreter
    is given (``sh scripts/check.sh``, ``python tools/lint.py``, ``python -m tools.lint``),
    a makefile (``make -f ci.mk``, ``make -C sub``), an option's value (``--config
    lint.cfg``) and a path argument that is not the project's source or a test (which the
    gates check, not define). A maker that could
    rewrite one could pass any gate, as with a Makefile's target. ``root``: the tree's
    absolute path, for a command that names a file of it in full."""
    from relay.loop.node_gates import package_scripts

    have = frozenset(files)
    found: set[str] = set()
    commands = list(commands)
    package = read("package.json") if "package.json" in have else None
    commands += package_scripts(commands, package)  # ``npm test``: the script it runs
    queue = [p for c in commands for p in _named_files(c, have, root, script=False)]
    queue += tool_plugins(commands, have, read)
    beside: dict[str, list[str]] = {}
    for name in have:
        beside.setdefault(path_parent(name), []).append(name)
    while queue:
        path = queue.pop()
        if path in found:
            continue
        found.add(path)
        queue += _neighbours(path, have, beside)
        if path.endswith(DOC_SUFFIXES):
            continue
        body = read(path)
        if not body:
            continue
        if path.endswith(".py"):  # what a Python script imports from beside it, and runs
            queue += _beside(path, body, have)
            for line in _py_commands(body):
                queue += _named_files(line, have, root, script=False)
        elif path.endswith((".ini", ".cfg")):  # tox's commands, each an INI value
            queue += _named_files(_ini_values(body), have, root, script=True)
        elif not path.endswith(SOURCE_SUFFIXES):  # a shell script's or makefile's commands
            queue += _named_files(body, have, root, script=True)
    return frozenset(found)


DOC_SUFFIXES = (".md", ".rst")
# the settings through which a gate's tool loads code of the tree's as its own (a plugin,
# a hook, a configuration it extends): the keys, as any of their files spells them
_PLUGIN_KEYS = frozenset({"plugins", "load-plugins", "extension", "report"})
# ruff's and pyright's extended configuration, flake8's folders, pyright's stubs
_PATH_KEYS = frozenset({"extend", "extends", "paths", "stubpath"})
# where they live: pyproject.toml's [tool] tables, an INI file's sections (.coveragerc's
# [run], .pylintrc's [MAIN] or [MASTER])
QUOTES = "'\""
_TOOL_TABLES = frozenset(
    {"mypy", "pytest", "coverage", "flake8", "pylint", "ruff", "pyright", "basedpyright"}
)
_TOOL_SECTIONS = (*_TOOL_TABLES, "tool:pytest", "run", "main", "master")
# the files those settings are read from (a pyproject.toml through its [tool] tables)
_TOOL_CONFIGS = (
    "pyproject.toml", "setup.cfg", "tox.ini", "mypy.ini", ".mypy.ini", "pytest.ini",
    ".pytest.ini", "pytest.toml", ".pytest.toml", ".coveragerc", ".flake8", ".pylintrc",
    "pylintrc", "ruff.toml", ".ruff.toml", "pyrightconfig.json",
)  # fmt: skip
# pyright's settings: the configuration it extends (read in turn), and its stubs' folder
# (a stub there is read in place of the module: ``typings`` when none is named)
_EXTENDS_KEYS = frozenset({"extend", "extends"})
_STUB_KEYS = frozenset({"stubpath"})
_PYRIGHT_STUBS = "typings"


def tool_plugins(
    commands: Iterable[str],
    files: Iterable[str],
    read: Callable[[str], str | None] = lambda _: None,
) -> list[str]:
    """The tree's files a gate's tool loads as its own code because its settings (at the
    baseline: ``read``) or a gate's command name them, and the tree's modules those import
    in turn: mypy's ``plugins``, pytest's ``-p NAME`` (in ``addopts`` or a command) and a
    conftest.py's ``pytest_plugins``, coverage's ``plugins``, flake8's ``local-plugins``
    (its ``paths`` and modules), pylint's ``load-plugins`` and ``init-hook``, ruff's
    ``extend``; a module name is found through the tree's import folders. A maker that
    could rewrite a plugin could make its gate pass anything (mypy's ``ignore_errors``)."""
    have = frozenset(files)
    texts = {n: read(n) for n in _TOOL_CONFIGS if n in have}
    dirs = set(importable_dirs(sorted(have), config_pythonpath(texts)))
    modules: list[str] = []
    paths: list[str] = []
    for command in commands:  # a pytest command's own -p (not mkdir's)
        for part in re.split(r"&&|\|\||[;|&\n]", command):
            modules += _pytest_p(part) if "pytest" in part else []
    todo = [n for n in texts]
    seen: set[str] = set()
    stubs = False  # pyright's stubs' folder named
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for key, value in _settings(name, texts.get(name) or read(name)):
            if key == "addopts":
                modules += _pytest_p(value)
            elif key == "init-hook":
                quoted = re.findall(r'"([^"]*)"', value) + re.findall(r"'([^']*)'", value)
                words = [_plain(w) for w in quoted]
                dirs |= {w for w in words if w and any(f.startswith(w + "/") for f in have)}
                paths += words
                code = "\n".join(p.strip(" " + QUOTES) for p in re.split(r"[;\n]", value))
                modules += _imported(code)
            elif key in _PATH_KEYS:
                stubs = stubs or key in _STUB_KEYS
                for word in re.split(r"[\s,]+", value):  # relative to their file
                    word = _plain(f"{PurePosixPath(name).parent}/{word.strip(QUOTES)}")
                    paths.append(word)
                    if key == "paths":
                        dirs.add(word)
                    elif word in have and key in _EXTENDS_KEYS:
                        todo.append(word)  # an extended file may extend another
            elif key in _PLUGIN_KEYS:
                for item in re.split(r"[\s,]+", value):
                    item = item.split("=")[-1].split(":")[0].strip("'\"")
                    if "/" in item or item.endswith(".py"):  # mypy puts its folder on sys.path
                        paths.append(item)
                        parent = str(PurePosixPath(_plain(item)).parent)
                        dirs.add("" if parent == "." else parent)
                    elif item:
                        modules.append(item)
    for conftest in sorted(p for p in have if path_name(p) == "conftest.py"):
        modules += _pytest_plugins(read(conftest) or "")
    if not stubs and _pyright(texts):
        paths.append(_PYRIGHT_STUBS)  # pyright's stubs' folder when none is named
    out: list[str] = []
    for word in paths:
        path = _plain(word)
        if path in have:
            out.append(path)
        elif path:  # a folder of plugins: every file of it
            out += [p for p in have if p.startswith(path + "/")]
    out += [p for m in modules for p in _module_files(m, frozenset(dirs), have)]
    from relay.loop.node_gates import node_gate_files

    out += node_gate_files(have, read)  # a JavaScript tool's setup files, imported rules
    # what a plugin imports of the tree's runs with it (its own folder is on sys.path)
    queue, done = list(out), set(out)
    while queue:
        path = queue.pop()
        if not path.endswith(".py"):
            continue
        own = str(PurePosixPath(path).parent)
        where = frozenset({*dirs, "" if own == "." else own})
        for name in _imported(read(path) or ""):
            for found in _module_files(name, where, have):
                if found not in done:
                    done.add(found)
                    out.append(found)
                    queue.append(found)
    return sorted(set(out))


def _plain(word: str) -> str:
    """A relative path as the tree's paths are spelled (``./a/../b/`` is ``b``; "" for
    the top or a path outside it)."""
    parts: list[str] = []
    if word.startswith("/"):
        return ""
    for part in PurePosixPath(word).parts:
        if part == "..":
            if not parts:
                return ""
            parts.pop()
        elif part not in (".", "/"):
            parts.append(part)
    return "/".join(parts)


def _settings(name: str, text: str | None) -> list[tuple[str, str]]:
    """(key, value) for every setting of the gates' tools in their configuration file
    ``name`` (keys in lower case, ``_`` as ``-``; a list's items joined by a space): a
    TOML file's tables at any depth (pyproject.toml's under ``[tool]``), an INI file's
    sections of those tools (``_TOOL_SECTIONS``)."""
    if not text:
        return []
    found: list[tuple[str, str]] = []
    if name.endswith(".json"):  # pyrightconfig.json (comments and trailing commas allowed)
        doc = _jsonc(text)
        if doc is None:
            return [(k, text) for k in ("extends", "stubpath")]  # unreadable: its words
        return _table_settings(doc)
    if name.endswith(".toml"):
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return [(k, text) for k in ("plugins", "addopts")]  # unreadable: its words
        if PurePosixPath(name).name == "pyproject.toml":
            doc = doc.get("tool") if isinstance(doc, dict) else None
            if isinstance(doc, dict):  # another tool's table names no gate's plugin
                doc = {k: v for k, v in doc.items() if k in _TOOL_TABLES}
        return _table_settings(doc)
    parser = read_ini(text)
    if parser is None:
        return [(k, text) for k in ("plugins", "addopts")]
    for section in parser.sections():
        if not section.lower().startswith(_TOOL_SECTIONS):
            continue
        for key, value in parser.items(section, raw=True):
            found.append((key.lower().replace("_", "-"), value or ""))
    return found


def read_ini(text: str) -> ConfigParser | None:
    """An ini file's text (setup.cfg, tox.ini, .coveragerc...) read as its tools read it:
    no interpolation, a repeated key allowed; None when it does not parse. Its reader is
    loaded here only, for a project that has such a file."""
    import configparser

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _table_settings(doc: object) -> list[tuple[str, str]]:
    """(key, value) for every setting of a parsed TOML or JSON document, its tables at any
    depth (keys in lower case, ``_`` as ``-``; a list's items joined by a space)."""
    found: list[tuple[str, str]] = []
    stack = [doc]
    while stack:
        table = stack.pop()
        if not isinstance(table, dict):
            continue
        for key, value in table.items():
            if isinstance(value, dict):
                stack.append(value)
                continue
            items = value if isinstance(value, list) else [value]
            said = " ".join(str(i) for i in items if isinstance(i, str | int))
            found.append((str(key).lower().replace("_", "-"), said))
    return found


def _jsonc(text: str) -> object | None:
    """JSON with comments and trailing commas, as pyright reads its configuration; None
    when it is not even that."""
    bare = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text,
                  flags=re.DOTALL)  # fmt: skip
    bare = re.sub(r",(\s*[}\]])", r"\1", bare)
    try:
        doc: object = json.loads(bare)
    except ValueError:
        return None
    return doc


def _pyright(texts: Mapping[str, str | None]) -> bool:
    """Whether the tree configures pyright (pyrightconfig.json, pyproject.toml's
    ``[tool.pyright]`` or ``[tool.basedpyright]``)."""
    if "pyrightconfig.json" in texts:
        return True
    tool = _toml_part(texts.get("pyproject.toml"), "tool")
    return isinstance(tool, dict) and bool({"pyright", "basedpyright"} & set(tool))


def _pytest_p(text: str) -> list[str]:
    """The plugins a pytest command line or ``addopts`` loads by name (``-p NAME``,
    ``-pNAME``; not ``-p no:NAME``, which stops one)."""
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    out = []
    for i, word in enumerate(words):
        value = None
        if word == "-p" and i + 1 < len(words):
            value = words[i + 1]
        elif word.startswith("-p") and not word.startswith("--") and len(word) > 2:
            value = word[2:]
        if value and not value.startswith("no:"):
            out.append(value)
    return out


def _pytest_plugins(text: str) -> list[str]:
    """The modules a conftest.py's ``pytest_plugins`` names (a string or a list of
    them); every quoted word of it when it is no plain literal."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return re.findall(r"[\"']([\w.]+)[\"']", text) if "pytest_plugins" in text else []
    out: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
            strings = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant)]
            out += [s for s in strings if isinstance(s, str)]
    return out


def _imported(text: str) -> list[str]:
    """The dotted names a Python text imports (``from a.b import c``: ``a.b`` and
    ``a.b.c``, which may be a module)."""
    out = []
    for match in _IMPORTS.finditer(text):
        if match.group(1):
            base = match.group(1).lstrip(".")
            out.append(base)
            rest = text[match.end() :].split("\n", 1)[0].strip().strip("()")
            for name in rest.split(","):
                word = name.strip().split(" ")[0]
                if word.isidentifier():
                    out.append(f"{base}.{word}" if base else word)
        else:
            out += [n.strip().split(" ")[0] for n in match.group(2).split(",")]
    return [n for n in out if n]


def _module_files(name: str, dirs: frozenset[str], have: frozenset[str]) -> list[str]:
    """The tree's files that importing ``name`` (dotted) runs, from any of ``dirs``: the
    module or package, and the packages above it."""
    parts = name.strip().split(".")
    if not all(p.isidentifier() for p in parts):
        return []
    out = []
    for folder in dirs:
        prefix = f"{folder.strip('/')}/" if folder.strip("/.") else ""
        cands = [f"{prefix}{'/'.join(parts[:i])}/__init__.py" for i in range(1, len(parts) + 1)]
        cands.append(f"{prefix}{'/'.join(parts)}.py")
        out += [c for c in cands if c in have]
    return out


def _neighbours(path: str, have: frozenset[str], beside: Mapping[str, list[str]]) -> list[str]:
    """The files beside a gate script (``. "$(dirname "$0")/lib.sh"``, ``${0%/*}/rules.sh``
    and a script's ``import rules`` all reach them, in forms no reading of the script
    follows): none for a script at the top, in ``src/``, in a Python package (its
    neighbours are the project's modules, which the gates check) or in a test folder."""
    folder = str(PurePosixPath(path).parent)
    if folder in (".", "src") or f"{folder}/__init__.py" in have or is_test_file(path):
        return []
    return [p for p in beside.get(folder, ()) if not is_test_file(p)]


_IMPORTS = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import\b|import\s+([\w., \t]+))", re.M)


def _beside(script: str, text: str, have: frozenset[str]) -> list[str]:
    """The tree's modules a Python gate script imports from its own folder (Python puts
    a script's folder first on sys.path): ``tools/lint.py``'s ``import rules`` is
    ``tools/rules.py``; a top-level script's, only its top-level modules (``check.py``'s
    ``import checkrules``: ``checkrules.py``). Not for a script in ``src/``, whose
    neighbours are the project's own modules, which the gates check."""
    folder = str(PurePosixPath(script).parent)
    if folder == "src":
        return []
    out = []
    for match in _IMPORTS.finditer(text):
        names = [match.group(1)] if match.group(1) else match.group(2).split(",")
        for name in names:
            dotted = name.strip().split(" ")[0].lstrip(".").replace(".", "/")
            if not dotted:
                continue
            if folder == ".":  # a top-level script's top-level module (``import rules``)
                cands: tuple[str, ...] = (f"{dotted}.py",)
            else:
                cands = (f"{folder}/{dotted}.py", f"{folder}/{dotted}/__init__.py")
            out += [c for c in cands if c in have and not is_test_file(c)]
    return out


def _named_files(text: str, have: frozenset[str], root: str, *, script: bool) -> list[str]:
    """The tree's files one command text names (see ``gate_scripts``), a line at a time,
    each split as the shell splits it (quotes kept whole, ``;``, ``&&``, ``|``, ``(``
    separating commands); ``script``: a script's or makefile's text (comments, a recipe's
    ``@``/``-``)."""
    out: list[str] = []
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#" if script else ""
        try:
            tokens = list(lexer)
        except ValueError:
            tokens = line.split()
        words: list[str] = []
        for token in [*tokens, ";"]:
            if token and all(c in "();<>|&" for c in token):
                if words and script:
                    words[0] = words[0].lstrip("@-+")
                out += _words_files([w for w in words if w], have, root)
                words = []
            else:
                words.append(token)
    return out


def _in_tree(word: str, have: frozenset[str], root: str) -> str | None:
    """The tree's path ``word`` names, or None (``./x``, ``x``, ``/root/x``)."""
    word = word.strip("'\"")
    if root and word.startswith(root.rstrip("/") + "/"):
        word = word[len(root.rstrip("/")) + 1 :]
    if not word or word.startswith("/") or "$" in word:
        return None
    parts = [p for p in PurePosixPath(word).parts if p != "."]
    if ".." in parts or not parts:
        return None
    path = "/".join(parts)
    return path if path in have else None


def _words_files(words: list[str], have: frozenset[str], root: str) -> list[str]:
    """The tree's files one simple command's words name (see ``gate_scripts``)."""
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words = words[1:]  # X=1 before the program
    if not words:
        return []
    out: list[str] = []
    program = words[0]
    base = program.rsplit("/", 1)[-1]
    own = _in_tree(program, have, root)
    if own is not None:
        out.append(own)
    rest = words[1:]
    if base in WRAPPERS:
        rest = [w for w in rest if not re.match(r"^[A-Za-z_]\w*=", w)]
        while rest and (rest[0].startswith("-") or rest[0][:1].isdigit()):
            rest = rest[1:]  # timeout 60, nice -n 5: options and numbers before the command
        return out + _words_files(rest, have, root)
    if base in RUNNERS and rest:
        skip = 1 if rest[0] in ("run", "exec", "x") else 0
        return out + _words_files(rest[skip:], have, root)
    if base in RUNS_A_FILE:
        return out + _runner_file(base, rest, have, root)
    if base in ("make", "gmake"):
        told = any(w in ("-f", "--file", "--makefile") or w.startswith(("-f", "--file=",
                   "--makefile=")) for w in rest)  # fmt: skip
        into = next((rest[i + 1] for i, w in enumerate(rest[:-1]) if w == "-C"), ".")
        if not told:  # the makefile make reads by default: its recipes run the gate
            out += [p for name in _MAKE_DIRS if (p := _in_tree(f"{into}/{name}", have, root))][:1]
        for i, word in enumerate(rest):
            value = None
            if word in ("-f", "--file", "--makefile") and i + 1 < len(rest):
                value = rest[i + 1]
            elif word.startswith(("--file=", "--makefile=")):
                value = word.split("=", 1)[1]
            elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
                value = word[2:]
            if value is not None and (p := _in_tree(value, have, root)) is not None:
                out.append(p)
        return out
    interpreter = INTERPRETERS.match(base) is not None
    module = False
    given = False  # the interpreter's script is found
    inline = False  # the next word is a shell's -c command
    for word in rest:
        if module and word in RUNS_A_FILE:  # python -m tox: tox.ini's commands
            return out + _runner_file(word, rest[rest.index(word) + 1 :], have, root)
        if module:  # python -m tools.lint: the module's file in the tree
            dotted = word.replace(".", "/")
            out += [
                p
                for cand in (f"{dotted}.py", f"{dotted}/__main__.py", f"src/{dotted}.py",
                             f"src/{dotted}/__main__.py")
                if (p := _in_tree(cand, have, root)) is not None
            ]  # fmt: skip
            module, given = False, True
            continue
        if interpreter and not given and word in ("-m",):
            module = True
            continue
        if interpreter and not given and word in ("-c", "-e", "--eval"):
            given = True  # inline code: the words after it are its arguments
            inline = base in SHELLS
            continue
        if inline:  # sh -c 'sh scripts/check.sh': a command line of its own
            out += _named_files(word, have, root, script=False)
            inline = False
            continue
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        path = _in_tree(value, have, root)
        if interpreter and not given and not word.startswith("-"):
            given = True
            if path is not None:
                out.append(path)  # the script an interpreter runs, whatever its suffix
            continue
        if path is None or is_test_file(path):
            continue
        bare = "/" not in word and "." not in word  # ``ruff check``: a subcommand
        if word.startswith("-") or not (_checked(path) or bare):
            out.append(path)  # an option's value or a path argument that is no source
    return out


# runners that run what a file of the tree defines (tox.ini's commands, noxfile.py's
# sessions): (the option naming another file, its long form, the file read by default)
RUNS_A_FILE = {
    "tox": (("-c",), ("--conf",), "tox.ini"),
    "nox": (("-f",), ("--noxfile", "--nox-file"), "noxfile.py"),
}


def _runner_file(tool: str, rest: list[str], have: frozenset[str], root: str) -> list[str]:
    """The file tox or nox reads its commands from (``-c``/``-f`` or the default)."""
    short, long, default = RUNS_A_FILE[tool]
    told = default
    for i, word in enumerate(rest):
        if word in (*short, *long) and i + 1 < len(rest):
            told = rest[i + 1]
        elif word.startswith(tuple(f"{o}=" for o in long)):
            told = word.split("=", 1)[1]
    found = _in_tree(told, have, root)
    return [found] if found is not None else []


def _ini_values(text: str) -> str:
    """An INI file's lines as commands: ``commands = python x.py`` is ``python x.py``,
    a continuation line itself; tox's ``{toxinidir}/`` is the tree's top."""
    lines = [re.sub(r"^\s*[\w.:-]+\s*=\s*", "", line) for line in text.splitlines()]
    return re.sub(r"\{(?:toxinidir|tox_root)\}/", "", "\n".join(lines))


def _py_commands(text: str) -> list[str]:
    """The command lines a Python gate script runs by literal words
    (``subprocess.run(["sh", "x.sh"])``, ``os.system("sh x.sh")``, nox's
    ``session.run("python", "tools/a.py")``); none when it cannot be parsed (its imports
    are still followed). What it only reads (``open("data.txt")``) is not a command."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in _RUNS_COMMANDS:
            continue
        first = node.args[0]
        items = list(first.elts) if isinstance(first, ast.List | ast.Tuple) else node.args
        words = [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]
        if len(words) == len(items):
            out.append(words[0] if len(words) == 1 else shlex.join(words))
    return out


# what runs a command from Python: subprocess's, os's, nox's session
_RUNS_COMMANDS = frozenset(
    {"run", "call", "check_call", "check_output", "Popen", "system", "popen", "getoutput",
     "getstatusoutput", "run_always", "run_install", "run_in_venv"}
)  # fmt: skip


# what makes a command's reach into the tree past reading: a script's own folder (``$0``,
# ``dirname``), a change of folder, a PATH of the tree's, inline code, ``exec``
_OPAQUE = re.compile(
    r"\$0|\$\{0|\bdirname\b|(?:^|[\s;&|(])(?:cd|pushd)\s|\bPATH=|(?:^|\s)-c\b|\bexec\b"
)


def runs_the_tree(
    commands: Iterable[str],
    files: Iterable[str],
    *,
    root: str = "",
    scripts: frozenset[str] = frozenset(),
) -> bool:
    """Whether a gate or acceptance command (``commands``) runs a file of the tree
    (``files``) in a way no reading of it can bound: ``gate_scripts`` found one
    (``scripts``), a word names a path or folder of the tree that is neither a test nor
    the project's source (``bin`` of ``PATH=bin:$PATH lint``, ``bash < scripts/x.sh``),
    or it uses ``$0``, ``dirname``, ``cd``, ``PATH=``, ``-c`` or ``exec``. Then
    ``gate_definition_touched`` fails closed (``gates_run_tree``)."""
    if scripts:
        return True
    have = frozenset(files)
    folders: set[str] = set()
    for p in have:  # each folder holding a file (a folder met was met with its own)
        folder = path_parent(p)
        while folder != "." and folder not in folders:
            folders.add(folder)
            folder = path_parent(folder)
    prefix = root.rstrip("/") + "/" if root else ""
    for command in commands:
        if _OPAQUE.search(command):
            return True
        for word in re.split(r"[\s=:;,&|()<>'\"`]+", command):
            if prefix and word.startswith(prefix):
                word = word[len(prefix) :]
            parts = [p for p in PurePosixPath(word).parts if p != "."] if word else []
            path = "/".join(parts)
            if not path or path == "src" or is_test_file(path) or is_test_file(path + "/x"):
                continue
            if (path in have and not _checked(path)) or path in folders:
                return True
    return False


def _checked(path: str) -> bool:
    """Whether a path argument is what a gate checks rather than how: the project's
    source (``mypy src/calc.py``, ``ruff check src/calc.py``). (A bare word with neither
    ``/`` nor ``.``, ``ruff check``, is a subcommand, whatever the tree holds.)"""
    return path.endswith(SOURCE_SUFFIXES)


# names a new top-level module may not take: the standard library's (``tomllib.py``
# is imported by pytest before any plugin, ``sysconfig.py`` by ruff's launcher), relay's
# own (a clone's ``relay/`` would run as relay at the next scheduled fire) and the tools'
# and relay's optional extras, which relay's own process imports when they are there
# (keyring for a node's token and the loop's secrets, anthropic for the managed roster): a
# clone's module of that name would run as relay wherever the project's folders reached
# relay's sys.path, installed here or not
OPTIONAL_EXTRAS = frozenset({"keyring", "anthropic"})
SHADOWED = frozenset({*GATE_TOOLS, *sys.stdlib_module_names, "relay", *OPTIONAL_EXTRAS}) - {
    "__main__"
}
# names imported by what the interpreter itself loads, whatever list they are missing
# from: sysconfig's build-time data (``_sysconfigdata_<abi>_<platform>``, imported by
# name through ``sysconfig.get_path``), and the start-up hooks
SHADOWED_PREFIXES = ("_sysconfigdata",)
# a project's usual folders, which a badly packaged distribution may also install at the
# top of site-packages: nothing the gates run imports them by that name
PROJECT_FOLDERS = frozenset(
    {"tests", "test", "testing", "docs", "doc", "examples", "scripts", "bench", "benchmarks"}
)
# the settings that add folders to sys.path for pytest: (file, table or section)
PYTEST_CONFIGS = (
    ("pytest.ini", "pytest"),
    (".pytest.ini", "pytest"),
    ("pyproject.toml", "tool.pytest.ini_options"),
    ("tox.ini", "pytest"),
    ("setup.cfg", "tool:pytest"),
    # the type checkers' import folders: mypy's ``mypy_path``, pyright's ``extraPaths``
    ("mypy.ini", "mypy"),
    (".mypy.ini", "mypy"),
    ("pyrightconfig.json", ""),
)


def shadow_names(site_modules: Iterable[str]) -> frozenset[str]:
    """Every top-level module the interpreter relay runs under can import apart from a
    clone, given what its site-packages hold (``site_modules``, which the driver asks the
    interpreter for once): the standard library's, the built-in ones, the start-up hooks
    and those (pytest's plugins import ``typing_extensions``, ``pygments``, ``execnet``...
    by name, so a clone's module of that name, first on sys.path, runs in a gate)."""
    found = set(site_modules) - PROJECT_FOLDERS
    return frozenset({*SHADOWED, *sys.builtin_module_names, *found, *STARTUP_PACKAGES}) - {
        "__main__"
    }


def config_pythonpath(texts: Mapping[str, str | None]) -> list[str]:
    """The folders pytest's ``pythonpath`` setting adds to sys.path, from the clone's
    pytest configurations (``texts``: a top-level file's name to its text, or None):
    pytest.ini, pyproject.toml's ``[tool.pytest.ini_options]``, tox.ini, setup.cfg; and
    the folders the type checkers import from (mypy's ``mypy_path``, pyright's
    ``extraPaths``): a new module at their top is read in place of the one it is named
    like, as one on sys.path is imported."""
    found: list[str] = []
    for name in dict.fromkeys(n for n, _ in PYTEST_CONFIGS):
        found += _checker_paths(name, texts.get(name))
    for name, section in PYTEST_CONFIGS:
        text = texts.get(name)
        if not text or not section or name in ("mypy.ini", ".mypy.ini"):
            continue
        value: object = None
        if name.endswith(".toml"):
            try:
                doc: object = tomllib.loads(text)
            except tomllib.TOMLDecodeError:
                continue
            for key in section.split("."):
                doc = doc.get(key) if isinstance(doc, dict) else None
            value = doc.get("pythonpath") if isinstance(doc, dict) else None
        else:
            parser = read_ini(text)
            if parser is None:
                continue
            value = parser.get(section, "pythonpath", fallback=None)
        items = value.split() if isinstance(value, str) else value
        if isinstance(items, list):
            found += [str(PurePosixPath(str(i).strip().strip("/"))) for i in items]
    return [("" if f == "." else f) for f in found if not f.startswith("..")]


def _checker_paths(name: str, text: str | None) -> list[str]:
    """The import folders a type checker's configuration ``name`` adds (mypy's
    ``mypy_path``, ``:`` or ``,`` between them; pyright's and basedpyright's
    ``extraPaths``, each execution environment's too), as relative paths."""
    if not text:
        return []
    words: list[object] = []
    if name == "pyrightconfig.json" or name == "pyproject.toml":
        doc = _jsonc(text) if name.endswith(".json") else _toml_part(text, "tool")
        tables = [doc] if name.endswith(".json") else []
        if isinstance(doc, dict) and name == "pyproject.toml":
            tables = [doc.get("pyright"), doc.get("basedpyright")]
            mypy = doc.get("mypy")
            words += [mypy.get("mypy_path")] if isinstance(mypy, dict) else []
        for table in tables:
            if not isinstance(table, dict):
                continue
            envs = table.get("executionEnvironments")
            for each in [table, *(envs if isinstance(envs, list) else [])]:
                paths = each.get("extraPaths") if isinstance(each, dict) else None
                words += paths if isinstance(paths, list) else []
    elif name in ("mypy.ini", ".mypy.ini", "setup.cfg"):
        parser = read_ini(text)
        if parser is None:
            return []
        words.append(parser.get("mypy", "mypy_path", fallback=None))
    out: list[str] = []
    for word in words:
        items = word if isinstance(word, list) else re.split(r"[:,\n]", str(word or ""))
        for item in items:
            item = str(item).strip().replace("$MYPY_CONFIG_FILE_DIR/", "")
            plain = _plain(item) if item else ""
            if plain or item in (".", "./"):
                out.append(plain)
    return out


def importable_dirs(files: Sequence[str], pythonpath: Sequence[str] = ()) -> frozenset[str]:
    """The folders of ``files`` (a tree's paths) whose modules import as top-level ones
    when the gates run: the tree's root (``python -m`` puts it first on sys.path), its
    ``src/``, pytest's ``pythonpath`` entries (``config_pythonpath``), and the folder
    pytest puts first on sys.path for each test module and conftest.py (the first one
    upwards with no ``__init__.py``)."""
    return _importable_dirs(tuple(files), tuple(pythonpath))


@functools.lru_cache(maxsize=8)
def _importable_dirs(files: tuple[str, ...], pythonpath: tuple[str, ...]) -> frozenset[str]:
    """:func:`importable_dirs`, once for each tree: the guards of one attempt ask it of
    the same files several times, and it looks at each of them."""
    have = set(files)
    found = {"", "src", *pythonpath}
    for path in files:
        if ".py" not in path:  # neither a test module nor a conftest.py
            continue
        name = path_name(path)
        if name != "conftest.py" and not (is_test_module(path) and name != "__init__.py"):
            continue
        folder = path_parent(path)
        while folder != "." and f"{folder}/__init__.py" in have:
            folder = path_parent(folder)
        found.add("" if folder == "." else folder)
    return frozenset(found)


def shadowed_name(path: str, dirs: frozenset[str], installed: frozenset[str]) -> str | None:
    """The module ``path`` would be imported in place of, or None: a module or package
    named like one the interpreter can import apart from the clone (``installed``, from
    ``shadow_names``: the standard library's, a built-in, what site-packages holds, relay,
    a gate's tool),
    sysconfig's data (``_sysconfigdata_*``) or a ``.pth`` start-up file (``pytest.py``,
    ``tomllib.py``, ``typing_extensions.py``, ``relay/__init__.py``) in a folder the
    gates import from as top-level (``dirs``, from ``importable_dirs``)."""
    pure = PurePosixPath(path)
    if pure.suffix == ".pth":
        where = "" if str(pure.parent) == "." else str(pure.parent)
        return pure.name if where in dirs else None
    name = top_level_name(path, dirs)
    if name is None:
        return None
    known = name in installed or name.startswith(SHADOWED_PREFIXES)
    return name if known else None


def top_level_name(path: str, dirs: frozenset[str]) -> str | None:
    """The top-level module name ``path`` takes when the gates import from ``dirs``
    (``importable_dirs``): a module (``.py``, ``.pyi``, compiled) or a package's
    ``__init__`` directly in one of them; None for any other file."""
    pure = PurePosixPath(path)
    if pure.name in ("__init__.py", "__init__.pyi"):
        if len(pure.parts) < 2:
            return None
        name, folder = pure.parent.name, pure.parent.parent
    elif pure.suffix in (".py", ".pyi", ".so", ".pyd") or pure.name.endswith(".pyc"):
        name, folder = pure.name.split(".")[0], pure.parent
    else:
        return None
    return name if ("" if str(folder) == "." else str(folder)) in dirs else None


NEW_TOP_MODULE = (
    "a new top-level module {name}: modules at the top of an import folder can shadow what a"
    " gate imports"
)


# top-level files of a project that are not its modules (a folder holding only these is
# not where the project's modules live)
_NOT_THE_PROJECTS = frozenset({"conftest.py", "setup.py", "noxfile.py", "fabfile.py"})


def _module_folder(path: str) -> str:
    """The import folder a top-level module's file sits in ("" for the clone's top):
    ``src/calc.py`` and ``src/calc/__init__.py`` are both in ``src``."""
    pure = PurePosixPath(path)
    folder = pure.parent.parent if pure.name in ("__init__.py", "__init__.pyi") else pure.parent
    return "" if str(folder) == "." else str(folder)


def new_top_modules(
    changes: Sequence[str],
    *,
    at_baseline: Sequence[str],
    present: Sequence[str],
    pythonpath: Sequence[str] = (),
    imported: frozenset[str] = frozenset(),
) -> list[tuple[str, str]]:
    """(path, name) for each file the change adds as a top-level module of a folder the
    gates import from first (``importable_dirs`` of the tree after it), whatever its name:
    a gate's interpreter can import a module no list of relay's names (one only the gates'
    environment has: ``mypy_extensions``). Only the project's growth is free: a module
    beside the project's own top-level modules (a folder that held one at the baseline)
    that the change's code or tests import by name (``imported``). Test files and
    conftest.py may always be added (tests may grow)."""
    known, now = set(at_baseline), set(present)
    dirs = importable_dirs(sorted(now), pythonpath)
    roots = {
        _module_folder(p)
        for p in known
        if top_level_name(p, dirs) is not None
        and not is_test_file(p)
        and PurePosixPath(p).name not in _NOT_THE_PROJECTS
    }
    found = []
    for path in changes:
        if path in known or path not in now or is_test_file(path):
            continue
        if PurePosixPath(path).name == "conftest.py":
            continue
        name = top_level_name(path, dirs)
        if name is None:
            continue
        if _module_folder(path) in roots and name in imported:
            continue  # the project's growth, beside its own modules, and used
        found.append((path, name))
    return found


def shadows_a_tool(
    path: str,
    files: Sequence[str] = (),
    pythonpath: Sequence[str] = (),
    *,
    installed: frozenset[str],
) -> bool:
    """Whether ``path``, as a new file, is a module imported in place of another the gates
    or relay need (``shadowed_name``): ``pytest.py``, ``_pytest/__init__.py``,
    ``sysconfig.py``, ``relay/__init__.py`` at the clone's top, in its ``src/`` or beside
    a test (``files``: the tree after the change)."""
    dirs = importable_dirs([*files, path], pythonpath)
    return shadowed_name(path, dirs, installed) is not None


def is_test_module(path: str) -> bool:
    """Whether pytest would import ``path`` of its own accord: a test module, a
    conftest.py, or a package's ``__init__.py`` in a test folder (imported with its tests)."""
    name = path_name(path)
    if name in ("conftest.py", "__init__.py"):
        return is_test_file(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def baseline_suite(
    changes: Sequence[str],
    *,
    at_baseline: Sequence[str],
    may_edit_tests: bool = False,
    texts: Mapping[str, tuple[str | None, str | None]] | None = None,
    pythonpath: Sequence[str] = (),
    installed: frozenset[str],
    gate_files: frozenset[str] = frozenset(),
) -> tuple[list[str], list[str]]:
    """What the re-run that judges the candidate's code against the baseline's tests and
    gate configuration does to a fresh tree of the candidate: (put back as the baseline
    has them, remove). Every changed file that defines the gates is put back (removed
    when new), and so is every changed test file the baseline had (but with
    ``may_edit_tests``, whose edits are the goal's); every new test file is removed (with
    ``may_edit_tests``, every new file pytest would import: the goal's new helpers stay
    for its edited tests). A pyproject.toml is put back when its ``[tool]`` tables
    (``texts`` holds its before and after) differ; ``pythonpath``: pytest's setting's
    folders (``config_pythonpath``); ``installed``: the names a new module may not take
    (``shadow_names``); ``gate_files``: the files the gates' commands run
    (``gate_scripts``)."""
    known = set(at_baseline)
    dirs = importable_dirs([*known, *changes], pythonpath)
    put: list[str] = []
    gone: list[str] = []
    for path in changes:
        name = PurePosixPath(path).name
        if name == "pyproject.toml":
            before, after = (texts or {}).get(path, (None, ""))
            gated = _toml_gated(before) != _toml_gated(after)
        else:
            shadow = path not in known and shadowed_name(path, dirs, installed) is not None
            gated = defines_gates(path) or path in gate_files or shadow
        if path in known:
            if gated or (is_test_file(path) and not may_edit_tests):
                put.append(path)
        elif gated or (is_test_module(path) if may_edit_tests else is_test_file(path)):
            gone.append(path)
    return put, gone


ALLOW_ENV_ONLY = "--allow-env-only"


def env_only_refusal(
    env_only: bool, *, allowed: bool, authorised: Sequence[str], unattended: bool
) -> str | None:
    """Why a maker may not start, or None. Where the maker's boundary is env-level only
    (no namespaces), a maker (a command or an agent) that looks can reach the person's
    clone and HOME's credentials, so it runs only when the person said so: with
    --allow-env-only by hand, or, for a run nobody starts by hand (scheduled, resumed, a
    node's), with the contract's authorisation."""
    if not env_only or ENV_ONLY_MAKER in authorised:
        return None
    where = "the maker's boundary here is env-level only (no user namespaces), so a maker"
    where += " that looks can reach this clone and HOME's credentials"
    if unattended:
        return (
            f"{where}; an unattended run starts one only when CONTRACT.md lists"
            f" `- {ENV_ONLY_MAKER}` under ## Authorised irreversible actions"
        )
    if allowed:
        return None
    return (
        f"{where}; run again with {ALLOW_ENV_ONLY} to accept that (or list"
        f" `- {ENV_ONLY_MAKER}` under the contract's ## Authorised irreversible actions)"
    )


def spine_touched(changes: Sequence[str]) -> list[tuple[str, str]]:
    """(path, why) for each spine file relay keeps that the changes touch (LOOP.md is
    judged by ``revise.loop_md_touched``)."""
    found = []
    for path in changes:
        if path == "docs/loop/LOOP.md":
            continue
        for kept in SPINE_KEPT:
            if path == kept or (kept.endswith("/") and path.startswith(kept)):
                found.append((path, f"`{path}` is relay's record; only relay writes it"))
                break
    return found


def gate_definition_touched(
    changes: Sequence[str],
    *,
    at_baseline: Sequence[str],
    deleted: Sequence[str],
    texts: Mapping[str, tuple[str | None, str | None]],
    may_edit_tests: bool = False,
    pythonpath: Sequence[str] = (),
    installed: frozenset[str],
    gate_files: frozenset[str] = frozenset(),
    gates_run_tree: bool = False,
) -> list[tuple[str, str]]:
    """(path, why) for each change that would weaken the gates: a gate-definition file
    (by name, or one a gate's command runs: ``gate_files``, from ``gate_scripts``)
    changed, pyproject.toml's ``[tool]`` tables or package.json's scripts and settings
    changed, a test that existed at the baseline deleted, and (unless the goal declared
    ``may_edit_tests``) a new gate-definition file (a new pytest.ini can deselect a test,
    a new ruff.toml select nothing) or a new file-wide suppression comment (``# ruff:
    noqa``). ``at_baseline`` is the baseline commit's files, ``deleted`` the changed paths
    that are gone; ``texts`` holds (before, after) of pyproject.toml and package.json when
    they changed, and of every other changed source file the suppressions are looked for in;
    ``installed``: the names a new module may not take (``shadow_names``).
    ``gates_run_tree`` (``runs_the_tree``): a gate runs a file of the tree, which may
    reach any other (a sourced helper, a folder's program, a module it imports); then
    every changed file that is neither a test nor the project's source (documentation
    too: a script may read its rules from one) defines a gate as far as relay can tell,
    and is held."""
    known, gone = set(at_baseline), set(deleted)
    dirs = importable_dirs([p for p in {*known, *changes} if p not in gone], pythonpath)
    own = _source_roots(known, dirs, gate_files) if gates_run_tree else frozenset()
    have = (known | set(changes)) - gone
    found: list[tuple[str, str]] = []
    for path in changes:
        held = len(found)
        name = PurePosixPath(path).name
        new = path not in known and path not in gone
        shadow = shadowed_name(path, dirs, installed) if new else None
        if shadow is not None:  # never kept, whatever the goal declared
            found.append(
                (path, f"`{path}` is a new module imported in place of `{shadow}` (one the"
                 " interpreter imports from elsewhere: the standard library's, an installed"
                 " package's, relay's or a gate tool's); give it another name")
            )  # fmt: skip
            continue
        gated = defines_gates(path) or path in gate_files
        if gated and (path in known or name == "conftest.py"):
            found.append((path, f"`{path}` defines how the gates run"))
        elif gated and path not in gone and not may_edit_tests:
            found.append(
                (path, f"`{path}` is a new file that defines how the gates run"
                 " (a goal that must add one declares --may-edit-tests)")
            )  # fmt: skip
        elif not may_edit_tests and path in texts and suppressions_added(*texts[path]):
            said = suppressions_added(*texts[path])[0]
            found.append((path, f"`{path}` gained `{said}`, which switches a gate off for it"))
        elif name == "pyproject.toml" and path in texts:
            before, after = texts[path]
            if _toml_gated(before) != _toml_gated(after):
                found.append(
                    (path, f"`{path}` [tool] tables and pytest11 entry points define how the"
                     " gates run")
                )  # fmt: skip
        elif name == "package.json" and path in texts:
            before, after = texts[path]
            if _node_gated(before) != _node_gated(after):
                found.append((path, f"`{path}` scripts and settings define how the gates run"))
        elif path in known and path in gone and is_test_file(path):
            found.append((path, f"`{path}` is a test the baseline had; never delete one"))
        declared = gated and new and may_edit_tests  # a goal's declared new gate file
        if (
            len(found) == held
            and gates_run_tree
            and not declared
            and not _free_beside_gates(path, have, own)
        ):
            found.append(
                (path, f"`{path}` is neither the project's source nor a test, and the gates"
                 " run the tree's own files: it may define how they run")
            )  # fmt: skip
    return found


def _source_roots(
    known: set[str], dirs: frozenset[str], gate_files: frozenset[str]
) -> frozenset[str]:
    """The import folders that held one of the project's top-level modules at the
    baseline (as ``new_top_modules`` counts them; a gate's script is none of them)."""
    return frozenset(
        _module_folder(p)
        for p in known
        if top_level_name(p, dirs) is not None
        and not is_test_file(p)
        and p not in gate_files
        and PurePosixPath(p).name not in _NOT_THE_PROJECTS
    )


def _free_beside_gates(path: str, have: set[str], roots: frozenset[str]) -> bool:
    """Whether a change to ``path`` is free when the gates run the tree's own files: a
    test (the test rules judge it) or the project's source (a source file
    under ``src/``, or a module of a package or top-level module in an import folder that
    held the project's modules, ``roots``). Not documentation: a script that runs may read
    its rules from any file (``"$(dirname "$0")/../docs/forbidden.md"``)."""
    if is_test_file(path):
        return True
    if not path.endswith(SOURCE_SUFFIXES) or PurePosixPath(path).name in _NOT_THE_PROJECTS:
        return False
    if path.startswith("src/"):
        return True
    folder = PurePosixPath(path).parent
    while str(folder) != "." and f"{folder}/__init__.py" in have:
        folder = folder.parent
    return ("" if str(folder) == "." else str(folder)) in roots


def suppressions_added(before: str | None, after: str | None) -> list[str]:
    """The suppression comments ``after`` holds that ``before`` did not (by shape,
    whatever their spacing or case): file-wide ones (``#ruff:noqa``, ``# Flake8 : NOQA``;
    coverage's ``# pragma: no cover`` on any line) and line-level ones ending a line the
    change added (``x = 1  # NOQA: E741``, ``# type: ignore[arg-type]``), each as written
    (its line, stripped). A line the baseline had, suppression and all, is not counted."""

    def found(text: str | None) -> list[str]:
        lines = (ln.strip() for ln in (text or "").splitlines())
        return [
            ln
            for ln in lines
            if _OWN_LINE.match(ln) or _ANYWHERE.search(ln) or _LINE_LEVEL.search(ln)
        ]

    had = Counter(_shape(ln) for ln in found(before))
    added: list[str] = []
    for line in found(after):
        if had[_shape(line)] > 0:
            had[_shape(line)] -= 1
        else:
            added.append(line)
    return added


def opens_with_project(path: str) -> bool:
    """Whether ``path`` is a file that runs (or instructs an agent) when a person opens
    the project, known by its shape: any dot folder or dot file (an editor's tasks, an
    agent's hooks and MCP servers, direnv, CI) but the gate files judged on their own, an
    agent's instructions (AGENTS.md, CLAUDE.md, GEMINI.md, CONVENTIONS.md, ``*.mdc``, an
    all-capitals Markdown name holding AGENT) at any depth (agents read nested ones too),
    any all-capitals name holding AGENT at the top, a personal ``*.local.md`` (CLAUDE.local.md)
    at any depth, a top-level all-capitals Markdown file that is not a usual project
    document (QWEN.md, WARP.md: not README.md), agents' and editors' undotted settings
    (opencode.json, crush.json, devcontainer.json, ``*.code-workspace``), and mise's
    configuration (``mise.toml``, anything under a ``mise/`` folder)."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    if defines_gates(path) and not any(p.startswith(".") for p in parts[:-1]):
        return False  # .gitignore, .coveragerc, ...: gate files, judged as such
    if any(p.startswith(".") and p not in (".", "..") for p in parts):
        return True
    if name in AGENT_FILES or name.endswith(".mdc") or MISE_FILES.match(name):
        return True
    if name.endswith((".local.md", ".code-workspace")) or OPEN_FOLDERS & set(parts[:-1]):
        return True
    stem = name.split(".")[0]
    caps = stem.isupper() and name.endswith(".md")
    if caps and len(parts) == 1 and stem not in PROJECT_DOCS:
        return True
    agent = "AGENT" in stem and stem.isupper()
    return agent and (len(parts) == 1 or name.endswith(".md"))


# files at any depth that change what git checks out (``.gitattributes``: a working-tree
# encoding, a filter) or where (``.gitmodules``): only a goal naming the file itself, not
# its folder or a glob, may change one
GIT_READS = frozenset({".gitattributes", ".gitmodules"})


def project_hooks_touched(
    changes: Sequence[str],
    *,
    declared: Sequence[str] = (),
    at_baseline: Sequence[str] | None = None,
) -> list[tuple[str, str]]:
    """(path, why) for each change to a file that runs when a person opens the project,
    but those the goal declares among its paths (a path, a folder ending in ``/`` or a
    glob): no maker's edit there is kept unless a person said the goal is about it. With
    ``at_baseline`` (the baseline's files), a new top-level JSON file or workspace is one
    too, whatever its name (the next agent's or editor's settings)."""
    known = None if at_baseline is None else set(at_baseline)
    found = []
    for path in changes:
        new_top = known is not None and path not in known and "/" not in path
        if PurePosixPath(path).name in GIT_READS and path not in declared:
            why = (
                f"`{path}` tells git how to check files out (an encoding or a filter turns"
                " the bytes relay judged into other code in every checkout); a goal that"
                " must change it names this very file among its paths"
            )
            found.append((path, why))
            continue
        opened = opens_with_project(path) or (new_top and path.endswith(NEW_TOP_OPENED))
        if not opened or _declared(path, declared):
            continue
        why = (
            f"`{path}` runs when a person opens the project (outside any box); a goal that"
            " must change it lists it among its paths"
        )
        found.append((path, why))
    return found


UNREVIEWED_TEST_EDITS = "tests edited under --may-edit-tests need a checker or a person's review"


def unreviewed_test_edits(
    edited: Sequence[str], *, may_edit_tests: bool, checkers: int
) -> str | None:
    """Why a candidate goes to a person, or None: a goal that may edit tests is recorded
    *and reviewed*, so baseline tests it changed or removed (``edited``) with no checker
    configured to read them are never kept on the gates alone (a weakened assertion
    passes every gate)."""
    if not may_edit_tests or not edited or checkers > 0:
        return None
    shown = ", ".join(edited[:3]) + (", ..." if len(edited) > 3 else "")
    return f"{UNREVIEWED_TEST_EDITS} (changed: {shown}); none is configured"


def _declared(path: str, declared: Sequence[str]) -> bool:
    return any(
        path == d or (d.endswith("/") and path.startswith(d)) or fnmatch.fnmatchcase(path, d)
        for d in declared
    )


def _shape(line: str) -> str:
    return re.sub(r"\s+", "", line).lower()


def _toml_part(text: str | None, key: str) -> object:
    if text is None:
        return None
    try:
        return tomllib.loads(text).get(key)
    except tomllib.TOMLDecodeError:
        return text  # unreadable: any change to the text counts


def _toml_gated(text: str | None) -> object:
    """What of a pyproject.toml defines the gates: its ``[tool]`` tables, and the
    ``pytest11`` entry points that make the project a pytest plugin once installed (a
    gate that installs the project first loads them into every pytest)."""
    doc = _toml_part(text, "project")
    points = doc.get("entry-points", {}) if isinstance(doc, dict) else doc
    plugins = points.get("pytest11") if isinstance(points, dict) else points
    return (_toml_part(text, "tool"), plugins)


def _node_gated(text: str | None) -> object:
    if text is None:
        return None
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if not isinstance(doc, dict):
        return doc
    return {k: v for k, v in doc.items() if k not in NODE_FREE}


def git_meta_changed(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[str]:
    """The files under the clone's hooks/, info/ and config that were added, changed or
    removed between two snapshots (paths relative to the git directory)."""
    return sorted(p for p in {*before, *after} if before.get(p) != after.get(p))


def refs_changed(
    before: Mapping[str, str], after: Mapping[str, str], *, own: str | None = None
) -> list[str]:
    """The refs (branches, tags, anything under refs/) created, moved or deleted between
    two snapshots, but ``own``: the branch the attempt works on, which relay resets itself."""
    return sorted(r for r in {*before, *after} if r != own and before.get(r) != after.get(r))


def branch_moved(before: str | None, after: str | None) -> str | None:
    """Why the checked-out branch is not the one the attempt began on, or None."""
    if before == after:
        return None
    was = before or "a detached HEAD"
    now = after or "a detached HEAD"
    return f"the maker switched the checkout from {was} to {now}"


def orphan_group(record: str, leader_start: str | None) -> int | None:
    """The process group a killed run's maker left, from the record ``"PGID START"``, or
    None when the record is unreadable or its leader is another process now (same pid, a
    different start time). A leader that is gone proves nothing: while any member of the
    group lives, no new process can be given its id."""
    parts = record.split()
    if not parts or not parts[0].isdigit() or int(parts[0]) <= 1:
        return None
    started = parts[1] if len(parts) > 1 else "-"
    if leader_start is not None and started not in ("-", leader_start):
        return None
    return int(parts[0])
