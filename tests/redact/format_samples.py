"""Secrets and placeholders made from the format table's own rows, for the property tests.

A row says each part's alphabet and lengths, so a generator needs nothing else: a positive
is each part filled with random characters of its alphabet (the checksum, where the row has
one, computed over the random part), a placeholder is the same shape filled with the filler
that documentation uses (``x``, ``X``, ``0``).
"""

from __future__ import annotations

import random

from relay.redact.formats import B62, Format, Run, crc32_base62

_ALNUM = frozenset(B62)
# Where a token may sit in a log line: bare, quoted, named neutrally, in a URL, a table,
# an element, a JSON field, a list. None of them names a secret: the format alone speaks.
SYNTAXES = (
    "{t}",
    "remote: {t}",
    "got {t} back",
    "VALUE={t}",
    '"value": "{t}"',
    "value: '{t}'",
    "GET https://api.example.org/v1/{t} 200",
    "| prod | {t} | ok |",
    "<value>{t}</value>",
    "items = [{t}]",
    "(see {t})",
)


def _run(rng: random.Random, run: Run, *, first: bool) -> str:
    high = min(run.most, run.low + 24)
    n = rng.randint(run.low, high)
    chars = run.alphabet
    if first:  # a token opens with a letter or digit, not with its alphabet's punctuation
        chars = "".join(c for c in run.alphabet if c in _ALNUM) or run.alphabet
    return "".join(rng.choice(chars if i == 0 else run.alphabet) for i in range(n))


def positive(fmt: Format, rng: random.Random) -> str:
    """A token of this format with random content (and a valid checksum if it has one)."""
    for _ in range(100):
        out: list[str] = []
        for i, part in enumerate(fmt.parts):
            if isinstance(part, Run):
                out.append(_run(rng, part, first=i == 0))
            else:
                out.append(rng.choice((part,) if isinstance(part, str) else part))
        if fmt.checksum == "crc32-base62":
            random_part = "".join(rng.choice(B62) for _ in range(30))
            out = [out[0], random_part + crc32_base62(random_part)]
        token = "".join(out)
        if fmt.check is None or fmt.check(token.encode()):
            return token
    raise AssertionError(f"could not make a {fmt.name} that passes its own check")


def _filler(run: Run) -> str:
    for c in "xX0":
        if c in run.alphabet:
            return c * max(run.low, 1 if run.high else 0)
    return run.alphabet[0] * run.low


def placeholder(fmt: Format) -> str:
    """The row's shape filled with documentation filler: ``ghp_xxxx…``, ``AKIAXXXX…``."""
    out = []
    for part in fmt.parts:
        if isinstance(part, Run):
            out.append(_filler(part))
        else:
            out.append(part if isinstance(part, str) else part[0])
    return "".join(out)


def clean_lines(rng: random.Random, size: int) -> str:
    """Ordinary build-log lines, about ``size`` bytes, to push a token across chunk edges."""
    lines = (
        "[ 42%] Building CXX object src/CMakeFiles/core.dir/parser.cpp.o",
        "tests/test_parser.py::test_roundtrip PASSED",
        "npm WARN deprecated inflight@1.0.6: this module is not supported",
        "  Compiling serde v1.0.190",
        "commit 3f9a2b7c1d0e4f5a6b7c8d9e0f1a2b3c4d5e6f7a",
    )
    out: list[str] = []
    total = 0
    while total < size:
        line = rng.choice(lines)
        out.append(line)
        total += len(line) + 1
    return "".join(line + "\n" for line in out)
