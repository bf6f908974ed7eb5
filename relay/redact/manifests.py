"""Kubernetes Secrets: every value of a ``data:`` map is a secret, whatever its key is called.

A Secret's ``data`` holds base64 of the secret's bytes under keys that name files or
settings (``config.json``, ``tls.key``, ``app-settings``), not secrets, so the named rules
do not see them. The shape is the map itself: an entry ``key: <base64>`` whose lines above,
as far as its indentation goes, lead up to a ``data:`` line. The value must be base64 (a
length that is a multiple of four) that is padded or mixes cases and digits, as encoded
bytes do; a ConfigMap's plain ``data`` values (words, numbers, paths, hex digests) are not.
The header is looked for only among the lines right above (the prefilter keeps a ``data:``
block whole, see ``prefilter``).
"""

from __future__ import annotations

import re

from relay.redact.rules import Found, Rule, rule

ENTRY = (
    rb"\n(?P<indent>[ \t]+)[A-Za-z0-9_.\-]{1,253}:[ \t]+(?P<v>[A-Za-z0-9+/]{16,}={0,2})"
    rb"[ \t]*\r?(?=\n|$)"
)
_SEEK = rb"\n[ \t]+[A-Za-z0-9_.\-]+:[ \t]+[A-Za-z0-9+/]{16}"
# Over the lowered block: a ``data:`` line with an indented line under it.
GATE = rb"(?:^|\n)[ \t]*data:[ \t]*\r?\n[ \t]"
# The prefilter's: the ``data:`` line and every indented (or blank) line under it.
SUPERSET = r"(?:^|\n)[ \t]*data:[ \t]*\r?\n(?:[ \t]*\r?\n|[ \t]+[^\n]*(?:\n|$))*"
_HEADER = re.compile(rb"[ \t]*data:[ \t]*\r?")
_LOOK_BACK = 256  # lines: a Secret's map is short
_UPPER = re.compile(rb"[A-Z]")
_LOWER = re.compile(rb"[a-z]")
_DIGIT = re.compile(rb"[0-9]")


def _encoded(value: bytes) -> bool:
    """Base64 of bytes: padded to four, and padded or of mixed cases and digits."""
    if len(value) % 4 or len(set(value)) < 8:
        return False
    if value.endswith(b"="):
        return True
    return bool(_UPPER.search(value) and _LOWER.search(value) and _DIGIT.search(value))


def _under_data(block: bytes, line_start: int, indent: int) -> bool:
    """The lines above ``line_start``, each indented at least ``indent``, lead to ``data:``."""
    end = line_start - 1  # the line break before the entry's line
    for _ in range(_LOOK_BACK):
        if end <= 0:
            return False
        start = block.rfind(b"\n", 0, end) + 1
        line = block[start:end]
        stripped = line.lstrip(b" \t")
        if stripped.strip() and len(line) - len(stripped) < indent:
            return _HEADER.fullmatch(line) is not None
        end = start - 1
    return False


def _value(block: bytes, m: re.Match[bytes]) -> Found:
    """The entry's value when it is encoded bytes in a ``data:`` map."""
    start, end = m.span("v")
    if not _encoded(block[start:end]):
        return None
    indent = m.end("indent") - m.start("indent")
    return (start, end) if _under_data(block, m.start() + 1, indent) else None


MANIFEST_RULES: tuple[Rule, ...] = (
    # its own kind: the named values' judgement of a name (``app-settings``) does not apply
    rule("kubernetes-secret", ENTRY, check=_value, seek=_SEEK, gate=GATE),
)
