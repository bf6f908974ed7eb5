"""What git's own conversions make of a file's bytes as it stores them, in-process.

relay hashes a maker's files with ``git hash-object --no-filters`` so that no filter
driver (git-lfs's clean, any ``filter.<x>.clean`` of the person's) ever runs on a maker's
bytes on the host. That also turns off git's built-in conversions, which run no program:
end-of-line conversion (``core.autocrlf``, the ``text``/``eol``/``crlf`` attributes) and
``ident``. This module does them itself, following git's convert.c (``convert_attrs``,
``crlf_to_git``, ``ident_to_git``), so a maker's CRLF file is stored as the person's git
would store it. Pure: attributes, configuration and bytes in, bytes out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import Enum

# the attributes git reads to convert a file on its way in (``git check-attr`` names)
ATTRIBUTES = ("text", "crlf", "eol", "ident", "filter", "working-tree-encoding")
_IDENT = re.compile(rb"\$Id:[^$\n]*\$")


class Action(Enum):
    """How a file's line ends are converted on the way into git (convert.c's
    ``crlf_action``, both directions of output folded: on the way in they act alike)."""

    NONE = "none"  # binary, or nothing says to convert
    TEXT = "text"  # every CRLF becomes LF
    AUTO = "auto"  # as TEXT, unless the file looks binary or the index copy holds CRLF


def autocrlf(value: str | None) -> str:
    """``core.autocrlf`` as git reads it: "true", "input" or "false"."""
    said = (value or "").strip().lower()
    if said == "input":
        return "input"
    return "true" if said in ("true", "yes", "on", "1") else "false"


def action(attrs: Mapping[str, str], core_autocrlf: str) -> Action:
    """The conversion git applies to a file with the attributes ``attrs`` (``check-attr``'s
    values: "set", "unset", "unspecified" or a value) and ``core.autocrlf``."""
    given = _text(attrs.get("text", "unspecified"))
    if given is None:
        given = _text(attrs.get("crlf", "unspecified"))
    if given == "binary":
        return Action.NONE
    eol = attrs.get("eol", "unspecified")
    if eol in ("lf", "crlf"):
        return Action.AUTO if given == "auto" else Action.TEXT
    if given is not None:
        return Action.AUTO if given == "auto" else Action.TEXT
    return Action.NONE if autocrlf(core_autocrlf) == "false" else Action.AUTO


def _text(value: str) -> str | None:
    """A ``text`` (or legacy ``crlf``) attribute's value: "text", "binary", "auto" or None
    (unspecified); ``crlf=input`` counts as text."""
    if value == "set" or value == "input":
        return "text"
    if value == "unset":
        return "binary"
    if value == "auto":
        return "auto"
    return None


def _stats(data: bytes) -> tuple[int, int, int, int, int]:
    """(CRLF pairs, lone CRs, NULs, printable, non-printable), as git's gather_stats."""
    crlf = data.count(b"\r\n")
    lone_cr = data.count(b"\r") - crlf
    nul = data.count(b"\0")
    low = sum(data.count(bytes([c])) for c in range(32) if c not in (8, 9, 10, 13, 27, 12))
    nonprintable = low + data.count(b"\x7f")
    printable = len(data) - nonprintable - data.count(b"\r") - data.count(b"\n")
    if data.endswith(b"\x1a"):  # a trailing EOF mark is not counted as non-printable
        nonprintable -= 1
    return crlf, lone_cr, nul, printable, nonprintable


def looks_binary(data: bytes) -> bool:
    """Whether git's text detection calls ``data`` binary (convert_is_binary)."""
    _, lone_cr, nul, printable, nonprintable = _stats(data)
    return bool(lone_cr or nul or (printable >> 7) < nonprintable)


def holds_crlf(data: bytes) -> bool:
    """Whether ``data`` (the index's copy of a file) is text holding a CRLF: git then leaves
    an auto-detected file's CRLFs alone (has_crlf_in_index)."""
    return b"\r\n" in data and not looks_binary(data)


def to_git(data: bytes, how: Action, *, index_crlf: bool = False, ident: bool = False) -> bytes:
    """``data`` as git stores it under ``how``; ``index_crlf``: the index's copy of the file
    holds CRLF (see :func:`holds_crlf`); ``ident``: the file has the ``ident`` attribute."""
    if how is not Action.NONE and data and b"\r\n" in data:
        if how is Action.TEXT:
            data = data.replace(b"\r\n", b"\n")
        elif not looks_binary(data) and not index_crlf:
            data = data.replace(b"\r", b"")  # no lone CR, or it would look binary
    if ident and b"$Id" in data:
        data = _IDENT.sub(b"$Id$", data)
    return data
