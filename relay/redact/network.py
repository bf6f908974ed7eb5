"""Addresses: IPv4, IPv6, MAC, e-mail, and home directories of any user.

Each rule is anchored on the literal that the address cannot do without (the ``.`` between
octets, the ``::`` or the run of colons, the ``@``) and widened in Python to the whole
address, then checked, so that version numbers, times, UUIDs and C++ scopes are left alone.

The version rule: a dotted quad is an IPv4 address when each part is 0-255, and it is NOT
part of a longer dotted run (``1.2.3.4.5``), not glued to a word (``v1.2.3.4``, ``lib1.2.3.4``,
``1.2.3.4a``), not followed by a pre-release or build suffix (``1.2.3.4-rc1``, ``1.2.3.4+b2``),
and not right after a version word (``version 10.2.0.1``, ``ver: …``, ``release``, ``build``,
``rev``). Anything else that looks like an address is treated as one: over-redacting a
version is harmless, leaking an address is not. Loopback and unspecified addresses
(``127.x.x.x``, ``0.x.x.x``, ``::1``, ``::``) say nothing about the machine and are kept.
"""

from __future__ import annotations

import ipaddress
import re

from relay.redact.rules import WORD, Found, Kind, Rule, boundary_after, boundary_before, rule

_HEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")
_V6_CHARS = _HEX | frozenset(b":.")
_VERSION_WORD = re.compile(rb"(?:version|ver|release|build|rev|revision)[ \t]*[:=]?[ \t]*$")
_LOCAL_PART = WORD | frozenset(b".%+-")
_DOTTED = WORD | frozenset(b".")


_HEX4 = rb"[0-9A-Fa-f]{1,4}"
_HEX2 = rb"[0-9A-Fa-f]{2}"
# Without the leading dash: the shared dash rule (``tokens``) supplies it.
MAC_DASH = b"-".join([_HEX2] * 4) + b"-"
_MAC_COLON = re.compile(b":".join([_HEX2] * 6))
# The commonest versions (``version 10.2.0.1``, ``v1.2.3.4``) refused inside the regex, so
# that a log full of them costs no Python check each; ``_ipv4`` applies the whole rule.
_NOT_VERSION = b"".join(
    b"(?<!" + lead + b"[0-9]" * width + b"\\.)"
    for lead in (b"ersion ", b"ERSION ", b"v", b"V")
    for width in (1, 2, 3)
)


def _ipv4(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """Widen ``.b.c.d`` to ``a.b.c.d`` and apply the version rule."""
    start, end = m.start(), m.end()
    while start > m.start() - 3 and start > 0 and block[start - 1] in _DIGITS:
        start -= 1
    if start == m.start() or not boundary_before(block, start, _DOTTED):
        return None
    if not boundary_after(block, end, WORD) or block[end : end + 1] == b"+":
        return None
    if block[end : end + 1] == b"-" and block[end + 1 : end + 2].isalpha():
        return None  # 1.2.3.4-rc1 is a version
    octets = block[start:end].split(b".")
    if any(int(o) > 255 for o in octets) or int(octets[0]) in (0, 127):
        return None
    if _VERSION_WORD.search(block[max(0, start - 12) : start].lower()):
        return None
    return start, end


def _widen(block: bytes, start: int, end: int, chars: frozenset[int]) -> tuple[int, int]:
    """Grow ``start:end`` over neighbouring bytes in ``chars``, at most 45 each way."""
    lo, hi = start, end
    while lo > 0 and start - lo < 45 and block[lo - 1] in chars:
        lo -= 1
    while hi < len(block) and hi - end < 45 and block[hi] in chars:
        hi += 1
    return lo, hi


def _ipv6(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """Widen a ``::`` or a run of colon groups to a whole IPv6 address and check it."""
    lo, hi = _widen(block, m.start(), m.end(), _V6_CHARS)
    while hi > lo and block[hi - 1] in b".:" and block[hi - 2 : hi] != b"::":
        hi -= 1  # a sentence's full stop or a port separator is not part of it
    if not boundary_before(block, lo, WORD) or not boundary_after(block, hi, WORD):
        return None
    text = block[lo:hi]
    if not any(c in _DIGITS for c in text):
        return None  # dead::beef reads as code far more often than as an address
    try:
        address = ipaddress.IPv6Address(text.decode("ascii"))
    except ValueError:
        return None
    if address.is_loopback or address.is_unspecified:
        return None
    return lo, hi


def _mac_edges(block: bytes, start: int, end: int) -> bool:
    """A MAC address stands alone: no word byte or further group on either side."""
    edge = WORD | {block[start + 2]}
    return boundary_before(block, start, edge) and boundary_after(block, end, edge)


def mac_dash(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """Widen ``-bb-cc-dd-ee-`` to ``aa-bb-cc-dd-ee-ff`` and check both ends."""
    start, end = m.start("mac") - 3, m.end("mac") + 2
    if start < 0 or end > len(block):
        return None
    if not all(c in _HEX for c in block[start : start + 2] + block[end - 2 : end]):
        return None
    return (start, end) if _mac_edges(block, start, end) else None


def _colon(block: bytes, m: re.Match[bytes]) -> Found:
    """A colon run is a MAC address when it is six two-digit groups, else maybe IPv6."""
    if m.group(0)[:2] != b"::":
        start = m.start() - 2
        if start >= 0 and _MAC_COLON.match(block, start) and _mac_edges(block, start, start + 17):
            return start, start + 17, Kind.MAC
    return _ipv6(block, m)


def _email(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """Widen ``@domain.tld`` leftwards over the local part."""
    at = start = m.start()
    while start > 0 and at - start < 64 and block[start - 1] in _LOCAL_PART:
        start -= 1
    while start < at and block[start] in b".-":
        start += 1
    if start == at:
        return None  # @decorator, @scope/package
    before = block[max(0, start - 7) : start]
    if before.endswith((b":", b"/")) and not before.endswith(b"mailto:"):
        return None  # scheme://user:pass@host is the URL rule's
    return start, m.end()


def _drive(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``C:\\Users\\<name>``: the anchor is the colon, so take the drive letter too."""
    start = m.start()
    if start > 0 and chr(block[start - 1]).isalpha():
        start -= 1
    return start, m.end()


NETWORK_RULES: tuple[Rule, ...] = (
    rule(
        Kind.IP,
        rb"\.(?=[0-9]{1,3}\.[0-9]{1,3}\.[0-9])"
        + _NOT_VERSION
        + rb"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?![0-9]|\.[0-9])",
        check=_ipv4,
    ),
    # One pass for every colon form: "::" not glued to a non-hex word (std::vector), or
    # four colon groups in a row, which both a MAC and a full IPv6 address contain.
    rule(
        Kind.IP,
        rb":(?::(?<![G-Zg-z_]::)(?![G-Zg-z_])|"
        + _HEX4
        + b":"
        + _HEX4
        + b":"
        + _HEX4
        + b":"
        + _HEX4
        + b":)",
        check=_colon,
    ),
    rule(
        Kind.EMAIL,
        rb"@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}"
        rb"(?![A-Za-z0-9\-])",
        check=_email,
    ),
    rule(Kind.HOME, rb"/(?:home|Users)/[A-Za-z0-9_.@\-]{1,64}"),
    rule(Kind.HOME, rb":(?:\\\\?|/)users(?:\\\\?|/)[a-z0-9_.@\-]{1,64}", lower=True, check=_drive),
)
