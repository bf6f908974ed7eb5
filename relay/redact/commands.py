"""Secrets in syntaxes the assignment rules do not read: a multi-line string, a properties
file's blank separator, a URL-encoded pair, and the command lines of tools that take a
secret as plain text.

- TOML's and Python's triple-quoted strings, on one line or over several (``password =
  \"\"\"…\"\"\"``): the value runs to the closing quotes, which may be lines below.
- A ``.properties`` line whose key and value a blank separates (``db.password hunter2``):
  the key is dotted, the value ends the line.
- ``password%3DVALUE`` (a form or a query string encoded once more, inside a URL).
- PowerShell's ``ConvertTo-SecureString "…" -AsPlainText``, ``echo … | docker login
  --password-stdin`` (and every command that reads a password on its standard input), and
  ``gh secret set NAME --body …``.

The name is judged as every named find's is (``values``): ``token_url = \"\"\"…`` names no
secret. Each rule opens with a literal and has a superset in ``SUPERSETS`` for the
prefilter (the multi-line one first: its find spans the lines below its own).
"""

from __future__ import annotations

import re
import urllib.parse

from relay.redact.assignments import stands_in
from relay.redact.placeholders import is_named_placeholder_value, is_reference
from relay.redact.rules import Found, Kind, Rule, rule
from relay.redact.values import name_is_secret

_WORDS = rb"(?:pass|secret|token|credential|pwd|key|auth|pw(?![a-z]))"
_NAME_CHARS = re.compile(rb"[A-Za-z0-9_.\-]*$")


def _name_at(block: bytes, word_at: int, end: int) -> bytes:
    """The whole name whose secret word starts at ``word_at`` and which ends at ``end``."""
    line = block.rfind(b"\n", 0, word_at) + 1
    head = _NAME_CHARS.search(block, max(line, word_at - 80), word_at)
    start = head.start() if head else word_at
    return block[start:end]


def _secret_value(block: bytes, start: int, end: int) -> Found:
    """The span, unless its text stands for a secret (a reference, a template's word)."""
    value = block[start:end].strip()
    if not value or stands_in(block, start, end) or is_reference(value):
        return None
    return None if is_named_placeholder_value(value) else (start, end)


# name = """value""" (or '''…'''), on one line or many
TRIPLE = _WORDS + rb"[a-z0-9_.\-]{0,40}[\"']?[ \t]*=[ \t]*(?P<q>\"\"\"|''')"
_LONGEST = 8192


def _triple_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The triple-quoted string's inside, when the name means a secret."""
    name_end = m.start() + len(m.group(0).split(b"=", 1)[0].rstrip(b" \t\"'"))
    if name_is_secret(_name_at(block, m.start(), name_end)) is not True:
        return None
    start = m.end()
    close = block.find(block[m.start("q") : m.end("q")], start, start + _LONGEST)
    if close < 0:
        return None
    inside = block[start:close]
    lead, tail = len(inside) - len(inside.lstrip()), len(inside) - len(inside.rstrip())
    return _secret_value(block, start + lead, close - tail)


# a.b.password value (a .properties file's blank separator): the line is the key and value
PROPERTY = _WORDS + rb"[a-z0-9_\-]{0,40}[ \t]+(?P<v>[^\s=:\"'][^\s]{0,4095})[ \t]*(?=\r?\n|\Z)"
_SEEK_PROPERTY = (
    rb"(?:pass|secret|token|credential|pwd|key|auth|pw)[a-z0-9_\-]{0,40}[ \t]+"
    rb"[^\s=:\"'][^\s]*[ \t]*(?:\r?\n|\z)"
)
_PROPERTY_KEY = re.compile(rb"[ \t]*[a-z0-9_\-]+(?:\.[a-z0-9_\-]+)+$")


def _property_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The value, when the key opens its line, is dotted, and means a secret."""
    line = block.rfind(b"\n", 0, m.start()) + 1
    name_end = m.start() + len(m.group(0).split(None, 1)[0])
    if not _PROPERTY_KEY.match(block[line:name_end].lower()):
        return None
    if name_is_secret(block[line:name_end].strip()) is not True:
        return None
    return _secret_value(block, *m.span("v"))


# password%3Dvalue: a pair encoded inside a URL's query (its end is ``&`` or ``%26``)
ENCODED = (
    rb"(?:passw(?:or)?d|passcode|pwd|secret|token|api[_\-]?key|credential)[a-z0-9_\-]{0,20}"
    rb"%3d(?P<v>(?:[^\s&%\"'<>]|%(?!26)[0-9a-f]{2}){1,4096})"
)


def _encoded_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The encoded value, judged as it reads decoded (``%24%7BPASSWORD%7D`` is a reference)."""
    start, end = m.span("v")
    decoded = urllib.parse.unquote_to_bytes(block[start:end])
    if is_reference(decoded) or is_named_placeholder_value(decoded):
        return None
    return _secret_value(block, start, end)


_QUOTED_ARG = (
    rb"(?:\"(?P<dq>[^\"\r\n]{1,4096})\"|'(?P<sq>[^'\r\n]{1,4096})'"
    rb"|(?P<w>[^\s\"'$|;&-][^\s|;&]{0,4095}))"
)


def _argument(block: bytes, m: re.Match[bytes]) -> Found:
    """The quoted or bare argument the pattern read."""
    for group in ("dq", "sq", "w"):
        start, end = m.span(group)
        if end > start:
            return _secret_value(block, start, end)
    return None


# ConvertTo-SecureString "…" -AsPlainText (or -String '…'): the plain text of a password
SECURE_STRING = rb"convertto-securestring[ \t]+(?:-string[ \t]+)?" + _QUOTED_ARG


def _secure_string_span(block: bytes, m: re.Match[bytes]) -> Found:
    line_end = block.find(b"\n", m.end())
    line_end = len(block) if line_end < 0 else line_end
    if b"-asplaintext" not in block[m.start() : line_end].lower():
        return None  # an encrypted standard string, not the password itself
    return _argument(block, m)


# echo … | docker login --password-stdin (printf '%s' …, chpasswd, passwd --stdin)
PIPED = (
    rb"(?:echo|printf)[ \t]+(?:-[a-z]+[ \t]+)*(?:(?:'%s[^']{0,4}'|\"%s[^\"]{0,4}\")[ \t]+)?"
    + _QUOTED_ARG
    + rb"[ \t]*\|[^\n|]{0,400}?(?:pass(?:word)?-stdin|chpasswd|passwd[ \t]+--stdin)"
)

# gh secret set NAME --body VALUE (-b VALUE, --body=VALUE)
GH_SECRET = (
    rb"gh[ \t]+secret[ \t]+set[ \t]+[^\n|;&]{0,200}?(?:--body[ =]|-b[ \t]+)[ \t]*" + _QUOTED_ARG
)

# the multi-line string and the lines below it, to its closing quotes (listed before every
# other superset in the prefilter, so that all its lines are kept)
MULTILINE_SUPERSET = (
    r"(?:pass|secret|token|credential|pwd|key|auth|pw)[a-z0-9_.\-]*[\"']?[ \t]*=[ \t]*"
    r"(?:\"\"\"|''')(?:[^\n]*\n){0,64}?[^\n]*(?:\"\"\"|''')"
)
SUPERSETS: tuple[str, ...] = (
    r"\.[a-z0-9_\-]*(?:pass|secret|token|credential|pwd|key|auth|pw)[a-z0-9_\-]*[ \t]+"
    r"[^\s=:\"']",
    r"(?:pass|pwd|secret|token|key|credential)[a-z0-9_\-]*%3d",
    r"convertto-securestring",
    r"(?:echo|printf)[ \t][^\n]*\|[^\n]*(?:pass(?:word)?-stdin|chpasswd|passwd[ \t]+--stdin)",
    r"gh[ \t]+secret[ \t]+set[ \t]",
)

COMMAND_RULES: tuple[Rule, ...] = (
    rule(Kind.SECRET, TRIPLE, lower=True, check=_triple_span, gate=rb"\"\"\"|'''"),
    rule(Kind.SECRET, PROPERTY, lower=True, check=_property_span, seek=_SEEK_PROPERTY),
    rule(Kind.SECRET, ENCODED, lower=True, check=_encoded_span, gate=rb"%3d"),
    rule(
        Kind.SECRET,
        SECURE_STRING,
        lower=True,
        check=_secure_string_span,
        gate=rb"convertto-securestring",
    ),
    rule(Kind.SECRET, PIPED, lower=True, check=_argument, gate=rb"-stdin|chpasswd"),
    rule(Kind.SECRET, GH_SECRET, lower=True, check=_argument, gate=rb"gh[ \t]+secret"),
)
