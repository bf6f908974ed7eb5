"""What defines a JavaScript project's gates beside package.json's own settings (which
``guard.gate_definition_touched`` compares): its tools' configuration files, found by name
at any depth (eslint, jest, vitest, mocha, TypeScript, babel, prettier...), the tree's
files those name or import (jest's ``setupFiles`` or ``globalSetup``, the rule an eslint
configuration imports, a configuration it extends), and the package.json scripts a gate
runs through ``npm test`` or ``yarn lint``.

Ground rules: read, never run. A maker that could rewrite jest's setup file or the eslint
rule a configuration imports could make its gate pass anything, as with a pytest plugin.
What a configuration names is found by its words (every quoted string, every ``./`` path,
``<rootDir>/`` read as the configuration's folder) that are a file of the tree, with the
suffixes Node tries; a word no reading resolves is not followed, and the configuration
file itself stays a gate file by its name.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from relay.loop.guard import path_name

# the configuration files of a JavaScript project's gate tools, at any depth (eslint's
# and TypeScript's apply to their folder, a monorepo's packages have their own)
NODE_CONFIG = re.compile(
    r"^(?:"
    r"(?:jest|vitest|vite|babel|prettier|playwright|karma|mocha|ava|c8|nyc|eslint)"
    r"\.config\.(?:[cm]?[jt]s|json)"
    r"|\.eslintrc(?:\.(?:[cm]?js|json|ya?ml))?|\.eslintignore"
    r"|\.mocharc(?:\.(?:[cm]?js|jsonc?|ya?ml))?|\.babelrc(?:\.(?:[cm]?js|json))?"
    r"|\.prettierrc(?:\.(?:[cm]?js|json5?|ya?ml|toml))?|\.prettierignore"
    r"|\.nycrc(?:\.(?:json|ya?ml))?|\.c8rc(?:\.json)?"
    r"|tsconfig(?:\.[\w.-]+)?\.json|jsconfig\.json"
    r")$"
)
# package.json's tables that configure a gate tool (its other keys are compared whole)
PACKAGE_TOOLS = ("jest", "eslintConfig", "mocha", "ava", "c8", "nyc", "prettier", "babel")
# what runs a package.json script by name (``npm test``, ``yarn lint``, ``bun run x``)
SCRIPT_RUNNERS = frozenset({"npm", "yarn", "pnpm", "bun"})
# the suffixes Node (and the tools' loaders) try for a module named without one
_SUFFIXES = ("", ".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx", ".json")
_INDEXES = tuple(f"/index{s}" for s in _SUFFIXES if s)
_QUOTED = re.compile(r"""["'`]([^"'`\n]{1,300})["'`]""")
_DOTTED = re.compile(r"(?<![\w.])(?:\.\.?/|<rootDir>/)[\w@./-]+")
_CODE = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx")
_DATA = (".json", ".jsonc", ".json5", ".yaml", ".yml", ".toml")
_IMPORTS = re.compile(
    r"""(?:\brequire|\bimport)\s*\(\s*["'`]([^"'`\n]+)["'`]|\b(?:from|import)\s+["']([^"'\n]+)["']"""
)
_EXTENDS = re.compile(r""""extends"\s*:\s*(\[[^\]]*\]|"[^"]*")""")


def is_node_config(path: str) -> bool:
    """Whether ``path`` is a JavaScript gate tool's configuration file, by its name."""
    return NODE_CONFIG.match(path_name(path)) is not None


def node_gate_files(files: Iterable[str], read: Callable[[str], str | None]) -> list[str]:
    """The tree's files (``files``) that its JavaScript gate tools' configurations (at
    the baseline: ``read``) name or import, and what those import of the tree in turn."""
    have = frozenset(files)
    queue = [p for p in have if is_node_config(p)]
    if "package.json" in have:
        queue += _named("package.json", _package_tools(read("package.json")), have)
    out: set[str] = set()
    done = set(queue)
    while queue:
        path = queue.pop()
        if not is_node_config(path):
            out.add(path)
        for found in _named(path, read(path) or "", have):
            if found not in done:
                done.add(found)
                queue.append(found)
    return sorted(out)


def package_scripts(commands: Iterable[str], package: str | None) -> list[str]:
    """The package.json scripts a gate runs when one of its ``commands`` runs one by name
    (``npm test``, ``yarn lint``, ``pnpm run check``): every script, since a script runs
    others by name (``npm run lint && jest``) and npm runs ``pre``/``post`` ones itself."""
    runs = False
    for command in commands:
        for part in re.split(r"&&|\|\||[;|&\n]", command):
            try:
                words = shlex.split(part)
            except ValueError:
                words = part.split()
            words = [w for w in words if not re.match(r"^[A-Za-z_]\w*=", w)]  # ``CI=1 npm test``
            runs |= bool(words) and PurePosixPath(words[0]).name in SCRIPT_RUNNERS
    if not runs or not package:
        return []
    try:
        doc = json.loads(package)
    except ValueError:
        return [package]  # unreadable: its words, read as a command
    scripts = doc.get("scripts") if isinstance(doc, dict) else None
    if not isinstance(scripts, dict):
        return []
    return [v for v in scripts.values() if isinstance(v, str)]


def _package_tools(text: str | None) -> str:
    """package.json's gate tools' tables, as JSON text (all of it when unreadable)."""
    if not text:
        return ""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if not isinstance(doc, dict):
        return ""
    return json.dumps({k: doc[k] for k in PACKAGE_TOOLS if k in doc})


def _named(path: str, text: str, have: frozenset[str]) -> list[str]:
    """The tree's files the file ``path`` (its ``text``) names: what its code imports
    (``require("./rules")``, ``from "./x"``: a folder's index too) and its relative words
    (``"./setup.js"``, ``<rootDir>/setup``, a YAML ``./base.js``); a TypeScript
    configuration only through what it extends (its ``files`` are the project's source),
    an ignore file through nothing."""
    name = PurePosixPath(path).name
    readable = path.endswith((*_CODE, *_DATA)) or is_node_config(path)
    if name.endswith("ignore") or not readable:
        return []
    folder = str(PurePosixPath(path).parent)
    folder = "" if folder == "." else folder
    if name.startswith(("tsconfig", "jsconfig")):
        extends = _EXTENDS.search(text)
        text = extends.group(1) if extends else ""
    imports = [m.group(1) or m.group(2) for m in _IMPORTS.finditer(text)]
    words = [m.group(1) for m in _QUOTED.finditer(text)] + _DOTTED.findall(text)
    out = [f for w in imports if (f := _resolve(folder, w, have, index=True)) is not None]
    out += [f for w in words if (f := _resolve(folder, w, have, index=False)) is not None]
    return out


def _resolve(folder: str, word: str, have: frozenset[str], *, index: bool) -> str | None:
    """The tree's file a relative specifier (``./x``, ``../x``, ``<rootDir>/x``) from
    ``folder`` resolves to, with the suffixes Node tries (and a folder's index when
    ``index``), or None; a bare name is a package's, never the tree's."""
    word = word.strip()
    if word.startswith("<rootDir>/"):
        word = "./" + word[len("<rootDir>/") :]
    if not word.startswith(("./", "../")) or "*" in word:
        return None
    parts = [p for p in folder.split("/") if p]
    for part in PurePosixPath(word).parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in (".", "/"):
            parts.append(part)
    path = "/".join(parts)
    if not path:
        return None
    for suffix in (*_SUFFIXES, *(_INDEXES if index else ())):
        if path + suffix in have:
            return path + suffix
    return None
