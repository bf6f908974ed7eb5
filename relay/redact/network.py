"""Addresses: IPv4, IPv6, MAC, e-mail, and home directories of any user.

Each rule is anchored on the literal that the address cannot do without (the ``.`` between
octets, the ``::`` or the run of colons, the ``@``) and widened in Python to the whole
address, then checked, so that version numbers, times, UUIDs and C++ scopes are left alone.

The version rule: a dotted quad whose parts are 0-255 is a version, and kept, when
- it is part of a longer dotted run (``1.2.3.4.5``), glued to a word (``v1.2.3.4``,
  ``lib1.2.3.4``, ``1.2.3.4a``), or has a pre-release or build suffix (``1.2.3.4-rc1``,
  ``1.2.3.4+b2``);
- it follows a version word (``version 10.2.0.1``, ``ver: …``, ``release``, ``build``,
  ``rev``);
- it follows a version operator (``setuptools>=68.0.0.1``, ``==``, ``~=``, ``^``) or a
  name joined to it by ``-`` or ``/`` (``foo-2.3.4.5``, ``Firefox/115.0.2.1``; not ``@``,
  as in ``root@203.0.113.9``);
- or it follows the name of a build tool and blanks (``cmake 3.28.1.0``, ``SDK 8.0.100.1``,
  ``libfoo 1.2.3.4``; see ``PRODUCTS``), with no port or prefix length after the quad
  (``:5432``, ``/24``), and the quad is not in a private or link-local range (``10.``,
  ``172.16-31.``, ``192.168.``, ``169.254.``, ``100.64-127.``). After any other word
  (``admin 203.0.113.9``, ``Ready 34.123.45.67``) a quad is an address.
Anything else that looks like an address is treated as one — at a line's start, after
punctuation (``Host: 172.16.4.2``, ``(203.0.113.9)``, ``ip=…``), after an address word
(``connect to 10.0.0.5:5432``, ``inet 192.168.1.20/24``, ``from 203.0.113.9``):
over-redacting a version is harmless, leaking an address is not. Loopback and unspecified
addresses (``127.x.x.x``, ``0.x.x.x``, ``::1``, ``::``) say nothing about the machine and are
kept.
"""

from __future__ import annotations

import ipaddress
import re

from relay.redact.rules import (
    WORD,
    Found,
    Kind,
    Rule,
    Skip,
    after_scheme,
    boundary_after,
    boundary_before,
    rule,
)

_HEX = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")
_V6_CHARS = _HEX | frozenset(b":.")
# (``ver`` and ``rev`` as words of their own: ``server: 10.0.0.1`` is an address; a call's
# quote after the version word too, ``AssemblyVersion("1.0.0.0")``, not after the others:
# ``build = "203.0.113.9"``, ``release: '…'`` name a host)
_VERSION_WORD = re.compile(
    rb"(?:(?:version|(?:^|[^a-z])ver)[ \t]*[:=]?[ \t]*\(?[\"']?"
    rb"|(?:(?:^|[^a-z])rev|release|build|revision)[ \t]*[:=]?[ \t]*"
    # an object identifier (``ObjectIdentifier("2.5.29.15")``, ``oid: 1.3.6.1``)
    rb"|(?:identifier|(?:^|[^a-z])oid)[ \t]*[:=(]?[ \t]*[\"']?)$"
)
# A version operator (``<`` and ``>`` alone only glued to a name: ``<10.0.0.5>`` is an
# address), or a name joined by "-" or "/" (``foo-2.3.4.5``, ``Firefox/115.0.2.1``), right
# before the quad; not "@", which joins a user to a host (``root@203.0.113.9``).
_MARK_ENDS = frozenset(bytes([c]) for c in b"<>=~^-/")
# (a name's dash: after a letter, or a name's digits after one, ``python3-``; not an
# address's last digit, ``10.0.0.1-10.0.0.5`` is a range of two)
_VERSION_MARK = re.compile(
    rb"(?:[<>!~=]=|[A-Za-z0-9_][<>]|[~^]|[A-Za-z][0-9]{0,3}-|[A-Za-z]/)[ \t]{0,2}$"
)
# A product name before a quad: its bytes, and what may stand before it.
_NAME_CHARS = WORD | frozenset(b"+-")
_NAME_EDGE = frozenset(b" \t\r\n([")
# Words that introduce an address: prepositions and verbs of prose, and the words of
# networking tools' output (ip, ifconfig, ping, ssh, dig, route).
_ADDRESS_WORDS = frozenset(
    b"""
    a an the to from at on in by of for via into onto with as and or is was are be been
    not no than between using use uses get got set sent send reply replied answer
    ip ipv4 inet addr address addresses host hostname hosts server servers peer peers
    remote local client clients gateway gw dns nameserver resolver src dst source
    destination origin target proxy upstream backend endpoint listen listening bind
    bound route netmask mask broadcast brd subnet network net node nodes nat vip lan
    wan public private internal external dhcp lease leased dev ping pinging connect
    connecting connected trying resolve resolved resolving lookup ssh scp sftp rsync
    curl wget telnet nc ncat nslookup dig traceroute tracepath whois mtr allow allowed
    deny denied block blocked ban banned refused reject rejected accept accepted
    reached unreachable timeout forwarded x-forwarded-for x-real-ip
    """.split()
)
_LOCAL_PART = WORD | frozenset(b".%+-")
_DOTTED = WORD | frozenset(b".")


_HEX4 = rb"[0-9A-Fa-f]{1,4}"
_HEX2 = rb"[0-9A-Fa-f]{2}"
# Without the leading dash: the shared dash rule (``tokens``) supplies it.
MAC_DASH = b"-".join([_HEX2] * 4) + b"-"
_MAC_COLON = re.compile(b":".join([_HEX2] * 6))
# The commonest versions (``version 10.2.0.1``, ``v1.2.3.4``, ``pkg>=1.2.3.4``,
# ``foo-1.2.3.4``, ``Firefox/115.0.2.1``) refused inside the regex, so that a log full of
# them costs no Python check each; ``_ipv4`` applies the whole rule.
_NOT_VERSION = b"".join(
    b"(?<!" + lead + b"[0-9]" * width + b"\\.)"
    for lead in (b"ersion ", b"ERSION ", b"v", b"V", b"[<>=!~]=", b"[A-Za-z]-", b"[A-Za-z]/")
    for width in (1, 2, 3)
)


# Tools whose four-part versions show up in build and test logs. Only these (and names
# starting "lib" or ending "sdk"/"runtime") make a bare quad after them a version: after
# any other word (``admin 203.0.113.9``, ``Ready 34.123.45.67``) it is an address. Servers
# (nginx, redis, postgres …) are left out: their names are followed by addresses as often.
PRODUCTS = frozenset(
    b"""
    python python3 py pypy node nodejs npm npx yarn pnpm deno bun cmake make ninja meson
    gnu gcc g++ cc clang clang++ llvm lld ld rustc cargo rustup go golang java javac jdk jre
    openjdk kotlin kotlinc scala gradle maven mvn ant dotnet msbuild msvc cl vs
    visualstudio xcode swift swiftc ruby gem bundler perl php composer pip pip3 setuptools
    wheel poetry conda openssl git curl wget firefox chrome chromium edge safari electron
    qt boost protobuf protoc grpc bazel buck terraform kubectl helm ansible docker podman
    windows kernel linux macos ios android gradlew jenkins
    """.split()
)


def _private(octets: list[int]) -> bool:
    """10/8, 172.16/12, 192.168/16, 169.254/16, 100.64/10: after a bare name, an address."""
    a, b = octets[0], octets[1]
    return (
        a == 10
        or (a, b >> 4) == (172, 1)
        or (a, b) in ((192, 168), (169, 254))
        or (a, b >> 6) == (100, 1)
    )


def _after_name(block: bytes, start: int, end: int) -> bool:
    """True when the quad follows a product name and blanks (``cmake 3.28.1.0``)."""
    if block[end : end + 1] in (b":", b"/") and block[end + 1 : end + 2].isdigit():
        return False  # a port or a prefix length: 10.0.0.5:5432, 192.168.1.20/24
    stop = start
    while stop > 0 and start - stop < 8 and block[stop - 1] in b" \t":
        stop -= 1
    word = stop
    while word > 0 and stop - word < 40 and block[word - 1] in _NAME_CHARS:
        word -= 1
    if stop == start or word == stop or (word > 0 and block[word - 1] not in _NAME_EDGE):
        return False
    name = block[word:stop].lower()
    return name in PRODUCTS or name.startswith(b"lib") or name.endswith((b"sdk", b"runtime"))


def _reads_as_version(block: bytes, start: int, end: int, octets: list[int]) -> bool:
    """The version rule's context half (see the module docstring)."""
    if not _private(octets) and _after_name(block, start, end):
        return True  # the commonest in build logs (``cmake 3.28.1.0``): asked first
    floor = max(0, start - 12)
    before = block[max(floor, block.rfind(b"\n", floor, start) + 1) : start]  # this line's
    if _VERSION_WORD.search(before.lower()):
        return True
    return before.rstrip(b" \t")[-1:] in _MARK_ENDS and bool(_VERSION_MARK.search(before))


# After a quad: a Debian revision at a package's close bracket or with a letter in it
# (``(1.2.5.1-2)``, ``(<< 2.2.7.1-3~)``, ``-0ubuntu2``, ``-0.cvs2000``; bare digits,
# ``1.2.3.1-254``, are a range of addresses, nmap's and a firewall's) or a pre-release mark
# (not the next address of a range).
_REVISION = re.compile(rb"-[0-9]+\.?[A-Za-z)~+]|~[0-9A-Za-z]+(?![0-9.])")
# A subscript's slice (``xs[0::2]``, ``data[1::4]``): small decimal numbers between colons,
# in brackets right after a name or a closing bracket.
_SLICE = re.compile(rb"[0-9]{0,3}::?-?[0-9]{0,3}")


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
    if _REVISION.match(block, end):
        return None  # (1.2.5.1-2), 1.2.3.4~beta: a package's version and its revision
    octets = [int(o) for o in block[start:end].split(b".")]
    if any(o > 255 for o in octets) or octets[0] in (0, 127) or octets[3] == 0:
        return None  # (``x.y.z.0``: a network's address, or a version: no host's)
    return None if _reads_as_version(block, start, end, octets) else (start, end)


def _widen(block: bytes, start: int, end: int, chars: frozenset[int]) -> tuple[int, int]:
    """Grow ``start:end`` over neighbouring bytes in ``chars``, at most 45 each way."""
    lo, hi = start, end
    while lo > 0 and start - lo < 45 and block[lo - 1] in chars:
        lo -= 1
    while hi < len(block) and hi - end < 45 and block[hi] in chars:
        hi += 1
    return lo, hi


def _ipv6(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | Skip:
    """Widen a ``::`` or a run of colon groups to a whole IPv6 address and check it. When it
    is none, no other colon in the run read is one either: skip past the run."""
    lo, hi = _widen(block, m.start(), m.end(), _V6_CHARS)
    skip = Skip(hi)
    while hi > lo and block[hi - 1] in b".:" and block[hi - 2 : hi] != b"::":
        hi -= 1  # a sentence's full stop or a port separator is not part of it
    if not boundary_before(block, lo, WORD) or not boundary_after(block, hi, WORD):
        return skip
    text = block[lo:hi]
    if not any(c in _DIGITS for c in text) or text.count(b"::") > 1:
        return skip  # dead::beef reads as code far more often than as an address
    subscript = lo > 1 and block[lo - 1] == 91 and block[lo - 2] in WORD | {93, 41}  # [ ] )
    if subscript and block[hi : hi + 1] == b"]" and _SLICE.fullmatch(text):
        return skip  # ``xs[0::2]``: a slice
    try:
        address = ipaddress.IPv6Address(text.decode("ascii"))
    except ValueError:
        return skip
    if address.is_loopback or address.is_unspecified:
        return skip
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
    if start > 0 and block[start - 1] in _LOCAL_PART:
        return None  # a local part is at most 64 bytes: this is the end of something longer
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


def _path_start(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``/home/<name>`` where a path starts, not a URL's host ``http://home/x``."""
    return None if after_scheme(block, m.start()) else m.span()


NETWORK_RULES: tuple[Rule, ...] = (
    rule(
        Kind.IP,
        rb"\.(?=[0-9]{1,3}\.[0-9]{1,3}\.[0-9])"
        + _NOT_VERSION
        + rb"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}(?![0-9]|\.[0-9])",
        check=_ipv4,
        seek=rb"\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}",
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
        gate=rb":(?::|[0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}:[0-9a-f]{1,4}:)",
    ),
    rule(
        Kind.EMAIL,
        rb"@[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}"
        rb"(?![A-Za-z0-9\-])",
        check=_email,
    ),
    rule(
        Kind.HOME,
        rb"/(?:home|Users)/[A-Za-z0-9_.@\-]{1,64}",
        check=_path_start,
        gate=rb"/(?:home|users)/",
    ),
    rule(
        Kind.HOME,
        rb":(?:\\\\?|/)users(?:\\\\?|/)[a-z0-9_.@\-]{1,64}",
        lower=True,
        check=_drive,
        gate=rb"users",
    ),
)

# Suffixes a bare host name takes on a home or office network (mDNS, routers, AD domains).
LOCAL_SUFFIXES = ("local", "lan", "home", "internal", "localdomain", "corp", "intranet")
_HOST_EDGE = WORD | frozenset(b".-")
_HOST_END = WORD | frozenset(b"-")


def _fqdn(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """A node's name as a whole word, then its domain: not ``ci-mac-studio.x.y``, not a
    name glued to more word after the domain."""
    if not boundary_before(block, m.start(), _HOST_EDGE):
        return None
    return m.span() if boundary_after(block, m.end(), _HOST_END) else None


def node_host_rule(names: tuple[str, ...]) -> Rule | None:
    """The host names of the repository's nodes in their fully qualified forms
    (``win-desktop.local``, ``mac-studio.corp.example.net``), which say where a machine
    lives; the short name alone is public (the node table shows it) and is kept. Matched in
    the lowered block, so any case; None when the table names no node."""
    words = sorted({n.lower().encode() for n in names if n}, key=len, reverse=True)
    if not words:
        return None
    alternatives = b"|".join(re.escape(w) for w in words)
    local = "|".join(LOCAL_SUFFIXES).encode()
    return rule(
        Kind.HOST,
        b"(?:" + alternatives + rb")(?:(?:\.[a-z0-9-]+){2,}|\.(?:" + local + b"))",
        lower=True,
        check=_fqdn,
    )
