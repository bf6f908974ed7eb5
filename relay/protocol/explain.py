"""Validation errors in a person's words: the flag or field they typed and what is wrong
with it, never pydantic's internals (regular expressions, ``steps.0``, ``Value error``,
model names). The one table from model fields to flags is here."""

from __future__ import annotations

import re
from typing import Any

# the model field a person fills in, and how they fill it in
FLAGS: dict[str, str] = {
    "steps": "--step",
    "objective": "--objective",
    "scope": "--scope",
    "capture": "--capture",
    "shell": "--shell",
    "fallback": "--fallback",
    "checkout": "--checkout",
    "commit": "--commit",
    "boxed": "--boxed",
    "title": "--title",
    "kind": "--kind",
    "worker": "--worker",
    "controller": "--node",
    "name": "--node",
    "node": "--node",
    "accounts": "--accounts",
    "login": "--accounts",
    "delegable": "--delegable",
    "allowed": "--allow",
    "destructive": "--destructive",
    "summary": "--summary",
    "text": "the hypothesis",
    "outcome": "--outcome",
    "repository": "--repo",
    "api_url": "--api",
    "hypotheses": "the hypotheses",
    "os": "the OS name",
    "scheduler": "--scheduler",
    "public_key": "the public key",
    "artifacts": "--artifact",
}

# what each shape the models demand means, for the one who must meet it
SHAPES: dict[str, str] = {
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$": "a name of letters, digits and . _ - (at most 63,"
    " starting with a letter or digit)",
    r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$": "a GitHub login (letters, digits and -)",
    r"^[A-Za-z0-9][A-Za-z0-9 _.-]{0,60}$": "a word of letters, digits, spaces and . _ - (at"
    " most 61, starting with a letter or digit)",
    r"^[^|\n\r`]*$": "one line without | or backticks",
    r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$": "OWNER/NAME",
    r"^https?://[^\s`]+$": "an http(s) URL",
    r"^https?://[^\s()<>`]+$": "an http(s) URL",
    r"^[A-Za-z0-9._/-]{1,200}$": "a branch name of letters, digits and . _ / - (1 to 200)",
    r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$": "a commit's full name (40 or 64 lower-case hex digits)",
    r"^[A-Za-z0-9._*?\[\]/ -]{1,200}$": "a path or glob in the clone of letters, digits,"
    " spaces, / and . _ - * ? [ ] (1 to 200; forward slashes)",
    r"^[A-Za-z0-9._/ -]{1,300}$": "a path in the clone of letters, digits, spaces, / and"
    " . _ - (1 to 300; forward slashes)",
}

_CLASS = re.compile(r"^\^\[([^\]]+)\](?:\{(\d+),(\d+)\}|\+|\*)\$$")


def accepted(pattern: str) -> str:
    """What a one-class pattern (``^[A-Za-z0-9._-]{1,64}$``) accepts, in words; a generic
    phrase for any other shape (never the regular expression itself)."""
    m = _CLASS.match(pattern)
    if m is None:
        return "a value of the form this flag accepts (see the verb's --help)"
    chars, words = m.group(1), []
    for span, word in (("A-Za-z", "letters"), ("a-z", "lower-case letters"), ("0-9", "digits")):
        if span in chars:
            words.append(word)
            chars = chars.replace(span, "")
    rest = " ".join(c for c in chars.replace("\\", "") if c != " ")
    if " " in chars:
        words.append("spaces")
    if rest:
        words.append(rest)
    length = f" ({m.group(2)} to {m.group(3)} characters)" if m.group(2) else ""
    return f"made of {', '.join(words)}{length}"


def field_name(loc: tuple[int | str, ...]) -> str:
    """The flag (or field) a location names: ``("steps", 0)`` is the first ``--step``."""
    words = [p for p in loc if isinstance(p, str)]
    numbers = [p for p in loc if isinstance(p, int)]
    if not words:
        return ""
    name = FLAGS.get(words[-1]) or FLAGS.get(words[0]) or words[-1].replace("_", " ")
    if numbers and name.startswith("--"):
        return f"{name} number {numbers[0] + 1}"
    return name


def problem(error: dict[str, Any]) -> str:
    """What is wrong with the value, from pydantic's error type and context."""
    kind, ctx = error.get("type", ""), error.get("ctx") or {}
    if kind == "string_too_short":
        least = ctx.get("min_length", 1)
        return "is empty" if least == 1 else f"is shorter than {least} characters"
    if kind == "string_too_long":
        return f"is longer than {ctx.get('max_length')} characters"
    if kind == "too_long":
        return f"has more than {ctx.get('max_length')} entries"
    if kind == "string_pattern_mismatch":
        pattern = str(ctx.get("pattern", ""))
        shape = SHAPES.get(pattern) or accepted(pattern)
        return f"{str(error.get('input'))[:60]!r} is not {shape}"
    if kind in ("value_error", "assertion_error"):
        message = str(error.get("msg", ""))
        for prefix in ("Value error, ", "Assertion failed, "):
            message = message.removeprefix(prefix)
        return message
    if kind == "enum" or kind == "literal_error":
        return f"must be {ctx.get('expected', 'one of the listed values')}"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return f"{str(error.get('input'))[:60]!r} is not a {kind.split('_')[0]}"
    if kind == "missing":
        return "is missing"
    return str(error.get("msg", "is not valid"))


def explain(errors: list[dict[str, Any]]) -> str:
    """The first error as one line a person can act on: ``--step number 1 is empty``."""
    first = errors[0]
    where = field_name(tuple(first.get("loc", ())))
    what = problem(first)
    return f"{where} {what}" if where else what
