"""Code coverage.py leaves out of its figures, where the way it is written hides code that
runs.

Ground rules: coverage.py drops every line an exclusion pattern matches (its defaults:
``# pragma: no cover``, a line of ``...``, ``if TYPE_CHECKING:``; and the project's
``exclude_lines``/``exclude_also``), and a match on any line of a statement written over
several lines drops the whole statement, with the block it opens (a function's body, a
decorated function). So ``def div(a, b, _=(`` / ``...`` / ``)):`` or a default string
holding a line ``if TYPE_CHECKING:`` leaves ``div``'s body out, and ``TYPE_CHECKING =
True`` / ``if TYPE_CHECKING:`` leaves out a block that runs: untested code at 100%, with
"coverage not lower" kept and a coverage goal met. The pragma itself is judged with the
other suppressions (``guard.suppressions_added``); this reads what is left.

A leaving-out is honest when it hides no code that runs: a ``...`` statement, a function
or class whose body is only ``...``, ``pass`` or a docstring (a stub), ``if
TYPE_CHECKING:`` with typing's own name or a module's ``TYPE_CHECKING = False`` (false at
run time), or the pragma or a pattern of the project's matched outside a string (the
project chose to leave such lines out; the pragma is judged as a suppression).
Anything else is a finding: the line, and what it hides.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from relay.loop.guard import read_ini

# coverage.py's default exclusion patterns (coverage/config.py), the pragma's aside
ELLIPSIS_LINE = r"^\s*(((async )?def .*?)?[\])]+(\s*->.*?)?:\s*)?\.\.\.\s*(#|$)"
TYPE_CHECKING_LINE = r"^\s*if (typing\.)?TYPE_CHECKING:"
PRAGMA_LINE = r"#\s*(pragma|PRAGMA)[:\s]?\s*(no|NO)\s*(cover|COVER)"
# where coverage.py reads its report settings: (file, section)
CONFIGS = (
    (".coveragerc", "report"),
    ("setup.cfg", "coverage:report"),
    ("tox.ini", "coverage:report"),
)
TYPING = ("typing", "typing_extensions")


@dataclass(frozen=True)
class Hidden:
    """One statement coverage leaves out though it runs code: its first line, and why."""

    line: int
    what: str


def exclusion_patterns(configs: Mapping[str, str]) -> tuple[str, ...]:
    """The project's own exclusion patterns (``exclude_lines``, ``exclude_also``) from
    the files coverage.py reads (``configs``: name to text, the top folder's), beside
    its defaults (always read too: a superset can only find more)."""
    found: list[str] = [PRAGMA_LINE, ELLIPSIS_LINE, TYPE_CHECKING_LINE]
    toml = configs.get("pyproject.toml")
    if toml:
        try:
            doc = tomllib.loads(toml)
        except tomllib.TOMLDecodeError:
            doc = {}
        table = doc.get("tool", {}).get("coverage", {}).get("report", {})
        for key in ("exclude_lines", "exclude_also"):
            value = table.get(key) if isinstance(table, dict) else None
            if isinstance(value, list):
                found += [v for v in value if isinstance(v, str)]
    for name, section in CONFIGS:
        text = configs.get(name)
        if not text:
            continue
        parser = read_ini(text)
        if parser is None:
            continue
        for key in ("exclude_lines", "exclude_also"):
            if parser.has_option(section, key):
                found += [v.strip() for v in parser.get(section, key).splitlines() if v.strip()]
    return tuple(dict.fromkeys(found))


def hidden_from_coverage(text: str, patterns: Sequence[str]) -> list[Hidden]:
    """Each statement of ``text`` (a Python module) that ``patterns`` leave out of
    coverage while it holds code that runs (see the module's docstring)."""
    text = _as_coverage_reads(text)
    try:
        tree = ast.parse(text)
        firsts, strings = _logical_lines(text)
    except (SyntaxError, ValueError, tokenize.TokenError):
        return []  # what does not parse is no module coverage measures
    starts = _line_starts(text)
    heads = _statements(tree, firsts)
    top = {id(s) for s in tree.body}
    # per excluded first line: (pattern, line of the match, inside a string)
    matched: dict[int, list[tuple[str, int, bool]]] = {}
    for pattern in patterns:
        try:
            found = list(re.finditer(pattern, text, flags=re.MULTILINE))
        except re.error:
            continue
        for match in found:
            first, last = _line_of(starts, match.start()), _line_of(starts, match.end())
            inside = any(a <= match.start() < b for a, b in strings)
            for n in range(first, last + 1):
                head = firsts.get(n, n)
                matched.setdefault(head, []).append((pattern, n if first == last else -1, inside))
    out = []
    for head, hits in sorted(matched.items()):
        node = heads.get(head)
        if node is None or _runs_nothing(node, tree):
            continue
        if id(node) in top and not _compound(node):
            continue  # a module's own statement runs whenever it is imported
        if all(
            p not in (ELLIPSIS_LINE, TYPE_CHECKING_LINE) and not inside for p, _, inside in hits
        ):
            continue  # the project's pattern (or the pragma: a suppression) outside a string
        what = _what(node)
        out.append(Hidden(head, f"coverage leaves out {what}, which runs"))
    return out


def hidden_added(before: str | None, after: str, patterns: Sequence[str]) -> list[Hidden]:
    """What ``after`` hides from coverage that ``before`` (the baseline's text of the same
    file) did not: a statement hidden the same way, with the same text, is credited."""
    before = _as_coverage_reads(before or "")
    after = _as_coverage_reads(after)
    had = Counter(_text_of(before, h.line) for h in hidden_from_coverage(before or "", patterns))
    out = []
    for found in hidden_from_coverage(after, patterns):
        key = _text_of(after, found.line)
        if had[key]:
            had[key] -= 1
            continue
        out.append(found)
    return out


def config_texts(texts: Mapping[str, str]) -> dict[str, str]:
    """The texts of the files coverage.py reads its settings from, at the tree's top."""
    names = {"pyproject.toml", *(name for name, _ in CONFIGS)}
    return {p: t for p, t in texts.items() if p in names}


def _as_coverage_reads(text: str) -> str:
    """``text`` with its line ends as coverage.py and Python read them: a lone CR ends a
    line too (read as one line, a module of CR line ends hid nothing)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _text_of(text: str | None, line: int) -> str:
    lines = (text or "").split("\n")  # the line ends Python counts, not str.splitlines's
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _line_starts(text: str) -> list[int]:
    """Each line's offset in ``text`` (its lines as Python counts them: by ``\\n``)."""
    return [0, *(m.end() for m in re.finditer("\n", text))]


def _line_of(starts: list[int], offset: int) -> int:
    """The line (from 1) holding ``offset``."""
    return bisect.bisect_right(starts, offset)


def _logical_lines(text: str) -> tuple[dict[int, int], list[tuple[int, int]]]:
    """Each physical line of a statement written over several, to the statement's first
    (as coverage.py maps them), and the offsets of every string literal."""
    starts = _line_starts(text)
    firsts: dict[int, int] = {}
    strings: list[tuple[int, int]] = []
    first: int | None = None
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT)
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING or tok.type in _FSTRING:
            a = starts[tok.start[0] - 1] + tok.start[1] if tok.start[0] <= len(starts) else 0
            b = starts[tok.end[0] - 1] + tok.end[1] if tok.end[0] <= len(starts) else len(text)
            strings.append((a, b))
        if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            if first is not None:
                for n in range(first, tok.end[0] + 1):
                    firsts[n] = first
            first = None
        elif tok.type not in skip and first is None:
            first = tok.start[0]
    return firsts, strings


_FSTRING = frozenset(
    getattr(tokenize, n)
    for n in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, n)
)


def _statements(tree: ast.Module, firsts: Mapping[int, int]) -> dict[int, ast.AST]:
    """Each statement by its first line as coverage.py counts it (a decorator's line
    leads to the function it decorates), with the ``except`` and ``case`` clauses: a
    clause's line left out leaves its block out too."""
    heads: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.stmt, ast.ExceptHandler)):
            heads.setdefault(node.lineno, node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for deco in node.decorator_list:
                    heads.setdefault(deco.lineno, node)
        elif isinstance(node, ast.match_case):
            line = node.pattern.lineno
            heads.setdefault(firsts.get(line, line), node)
    return heads


def _compound(node: ast.AST) -> bool:
    return bool(getattr(node, "body", None))


def _is_stub_line(node: ast.AST) -> bool:
    return isinstance(node, ast.Pass) or (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and (node.value.value is Ellipsis or isinstance(node.value.value, str))
    )


def _runs_nothing(node: ast.AST, tree: ast.Module) -> bool:
    """A ``...`` statement, a stub (a function or class of ``...``, ``pass`` and a
    docstring), or ``if TYPE_CHECKING:`` with typing's own name."""
    if _is_stub_line(node):
        return True
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return all(_is_stub_line(s) for s in node.body)
    if isinstance(node, (ast.ExceptHandler, ast.match_case)):
        return all(_is_stub_line(s) for s in node.body)
    if isinstance(node, ast.If):
        return _typings_flag(node.test, tree) and all(_declares(s) for s in node.body)
    return False


def _declares(node: ast.stmt) -> bool:
    """Whether ``node`` opens no code of the module's own (a function with a body, a
    lambda, a loop): what a type checker alone reads (imports, annotations, asserts)
    may stay out of the count, but not a function that runs, were typing's flag made
    true at run time (``setattr(typing, "TYPE_CHECKING", True)``, which no reading of
    one module sees)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return all(_is_stub_line(s) for s in node.body)
    if isinstance(node, ast.ClassDef):
        return all(_declares(s) for s in node.body)
    if isinstance(node, (ast.If, ast.Try)):
        parts = [*node.body, *node.orelse]
        if isinstance(node, ast.Try):
            parts += [*node.finalbody, *(s for h in node.handlers for s in h.body)]
        return all(_declares(s) for s in parts)
    if _compound(node) or isinstance(node, ast.Match):
        return False  # a loop, a `with`
    return not any(isinstance(n, ast.Lambda) for n in ast.walk(node))


def _typings_flag(test: ast.expr, tree: ast.Module) -> bool:
    """Whether ``test`` is typing's ``TYPE_CHECKING`` (false at run time): imported from
    typing and bound nowhere else, or read off typing itself, never assigned."""
    binds: list[ast.AST] = []
    stores = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            binds += [a for a in node.names if (a.asname or a.name).split(".")[0] in _names(test)]
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores = stores or node.id in _names(test)
        elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
            stores = stores or node.attr == "TYPE_CHECKING"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.arg)):
            name = node.arg if isinstance(node, ast.arg) else node.name
            stores = stores or name in _names(test)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            stores = stores or bool(set(node.names) & _names(test))
        elif isinstance(node, ast.NamedExpr):
            stores = True if node.target.id in _names(test) else stores
    if not binds and _false_constant(test, tree):
        return True  # `TYPE_CHECKING = False`: typing's constant without importing typing
    if stores or not binds:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                ours = node.module in TYPING and alias.name == "TYPE_CHECKING" and not node.level
                if (alias.asname or alias.name) in _names(test) and not ours:
                    return False
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound = (alias.asname or alias.name).split(".")[0]
                if bound in _names(test) and alias.name not in TYPING:
                    return False
    return True


def _false_constant(test: ast.expr, tree: ast.Module) -> bool:
    """Whether ``test`` is a name the module binds once, at its top, to ``False``, and
    nowhere else (``TYPE_CHECKING = False``, which type checkers read as typing's)."""
    if not isinstance(test, ast.Name):
        return False
    top = [
        s
        for s in tree.body
        if isinstance(s, ast.Assign)
        and [t.id for t in s.targets if isinstance(t, ast.Name)] == [test.id]
        and len(s.targets) == 1
        and isinstance(s.value, ast.Constant)
        and s.value.value is False
    ]
    stores = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == test.id and not isinstance(node.ctx, ast.Load):
            stores += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and test.id in node.names:
            stores += 2
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores += 2 if node.name == test.id else 0
        elif isinstance(node, ast.arg) and node.arg == test.id:
            stores += 2
        elif isinstance(node, ast.Attribute) and node.attr == test.id:
            stores += 0 if isinstance(node.ctx, ast.Load) else 2
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            stores += sum(2 for a in node.names if (a.asname or a.name).split(".")[0] == test.id)
    return len(top) == 1 and stores == 1


def _names(test: ast.expr) -> frozenset[str]:
    """The module-level name ``test`` reads: ``TYPE_CHECKING`` or ``typing``'s alias."""
    if isinstance(test, ast.Name) and test.id == "TYPE_CHECKING":
        return frozenset({"TYPE_CHECKING"})
    if (
        isinstance(test, ast.Attribute)
        and test.attr == "TYPE_CHECKING"
        and isinstance(test.value, ast.Name)
    ):
        return frozenset({test.value.id})
    return frozenset({"\0"})  # no name: never typing's flag


def _what(node: ast.AST) -> str:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return f"the whole of `{node.name}`"
    if isinstance(node, ast.ClassDef):
        return f"the whole of class `{node.name}`"
    if isinstance(node, ast.If):
        return "an `if` block"
    if isinstance(node, ast.ExceptHandler):
        return "an `except` block"
    if isinstance(node, ast.match_case):
        return "a `case` block"
    first: int = getattr(node, "lineno", 0)
    end: int = getattr(node, "end_lineno", None) or first
    return f"a statement (lines {first}-{end})" if end > first else "a statement"
