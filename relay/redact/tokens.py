"""Token-shaped secrets in context: private key markers, headers, URLs, dashes.

Each rule is anchored on its literal prefix (see ``rules``). Lengths are bounded so that a
match never reaches past the overlap that the streaming layer keeps between blocks.
Private key blocks are the one multi-line secret: the rule here finds the BEGIN line and the
engine finds where the block ends, across blocks if need be.
"""

from __future__ import annotations

import re

from relay.redact.assignments import FLAG, FLAG_WORDS, credential, flag_span
from relay.redact.network import MAC_DASH, mac_dash
from relay.redact.rules import (
    Found,
    Kind,
    Rule,
    group_span,
    rule,
)
from relay.redact.shell import P_FLAG, p_flag_span

BEGIN_KEY = re.compile(rb"(?i)-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
END_KEY = re.compile(rb"(?i)-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# Longer than any END marker, so a block boundary never splits one unseen.
END_KEY_MAX = 80


# The rest of a credential longer than the header rule reads at once (possessive: once).
_CRED_RUN = re.compile(rb"[A-Za-z0-9_\-.~+/]*+=*")


def _bearer(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The credential, to its end: a token longer than the rule's read is replaced whole
    (its end in a later window is the stream's to drop, see ``stream``)."""
    found = credential(m, "cred")
    if found is None or found[1] != m.end("cred"):
        return found
    return found[0], _CRED_RUN.match(block, found[1]).end()  # type: ignore[union-attr]


# ``Authorization: <Scheme> <credential>`` for a scheme the assignment rules do not name
# (Splunk's HEC token, Opsgenie's ``GenieKey``, ``Key``, ``SSWS``): whatever the scheme, the
# word after it is the credential, a UUID too (``Splunk 700b736a-…``). The scheme is one word
# that opens with a capital, as HTTP's schemes are written (``authorization: see docs/…`` is
# a sentence); Basic and Digest keep their own readings.
OTHER_SCHEME = (
    rb"authorization[\"']?[ \t]{0,16}[:=][ \t]{0,16}[\"']?"
    rb"(?!(?:bearer|basic|token|digest|bot|apikey|negotiate|sso-key)[ \t])"
    rb"(?P<scheme>[a-z][a-z0-9_\-]{1,30})[ \t]{1,16}(?P<cred>[^\s\"',;\[<][^\s\"',;]{3,4095})"
)


def _other_scheme(block: bytes, m: re.Match[bytes]) -> Found:
    """The credential after a capitalised scheme, when it holds a digit or is long (a
    sentence's words after ``Authorization: Required`` are none)."""
    if not block[m.start("scheme") : m.start("scheme") + 1].isupper():
        return None
    value = m.group("cred")
    if len(value) < 20 and not any(48 <= c <= 57 for c in value):
        return None
    return (*m.span("cred"), Kind.AUTHORIZATION)


def _userinfo(info: bytes, colon: bytes) -> bool:
    """``user:pass`` or ``:pass`` (redis, with no user), or a lone TOKEN if it looks like one."""
    at = info.find(colon)
    if 0 <= at < len(info) - len(colon):
        return True
    return len(info) >= 20 and any(48 <= c <= 57 for c in info)


def _url(block: bytes, m: re.Match[bytes]) -> Found:
    """``scheme://user:pass@``; ``scheme://TOKEN@`` if it looks like one. (Webhook URLs are
    formats of their own: see ``formats``.)"""
    return group_span(m, "info") if _userinfo(m.group("info"), b":") else None


# A password holding a slash (``openssl rand -base64`` pasted into a URL unescaped): the
# user, a colon, the password to the ``@`` before the host, at least one ``/`` in it. Read
# by this rule alone (the general one stops at the first ``/``, a path's).
_SLASHED = (
    rb"://(?P<info>[A-Za-z0-9._~%!$&*+,;=\-]{1,256}:[^\s@\"'<>/]{0,1000}/[^\s@\"'<>]{0,1000})"
    rb"@[A-Za-z0-9]"
)
# (RE2's: where the rule can match, unbounded)
_SLASHED_SEEK = rb"://[A-Za-z0-9._~%!$&*+,;=\-]+:[^\s@\"'<>/]*/[^\s@\"'<>]*@[A-Za-z0-9]"
_PORT_PATH = re.compile(rb"[0-9]{1,5}(?:/|$)")


def _slashed_url(block: bytes, m: re.Match[bytes]) -> Found:
    """``scheme://user:pa/ss@host``; not ``host:8080/path@x`` (a port, then a path)."""
    info = m.group("info")
    password = info[info.index(b":") + 1 :]
    return None if _PORT_PATH.match(password) else group_span(m, "info")


def _encoded_url(block: bytes, m: re.Match[bytes]) -> Found:
    """``https%3A%2F%2Fuser%3Apass%40host``: a URL passed as a query parameter."""
    return group_span(m, "info") if _userinfo(m.group("info"), b"%3a") else None


def _dash(block: bytes, m: re.Match[bytes]) -> Found:
    """The one pass for everything that starts with a dash: key blocks, flags, MACs, and
    ``-p`` passwords (``shell``)."""
    if m.group("key") is not None:
        # A marker between quotes that close right after it names a key, holds none
        # (``grep -- "-----BEGIN RSA PRIVATE KEY-----" id_rsa``, a test's message): taken for
        # a block, it would blank the log to its end for want of an END line.
        quote = block[m.start() - 1 : m.start()]
        if quote in (b'"', b"'") and block[m.end() : m.end() + 1] == quote:
            return None
        return m.start(), m.end(), Kind.PRIVATE_KEY
    if m.group("mac") is not None:
        found = mac_dash(block, m)
        return None if found is None else (*found, Kind.MAC)
    if m.group("pw") is not None:
        return p_flag_span(block, m)
    if m.group("dash2") is None and m.start() > 0 and block[m.start() - 1] not in _OPENS_A_WORD:
        return None  # one dash inside a word: ``my-password``, ``db-token`` name no flag
    found = flag_span(block, m)
    return None if found is None else (*found, Kind.SECRET)


_OPENS_A_WORD = frozenset(b" \t\n\r\"'(")


# The vendor formats (GitHub, AWS, Slack, Stripe, OpenAI, npm, PyPI, JWTs and a hundred
# more) are rows of one table, matched in one pass: see ``formats``. What remains here
# needs context that a format has not: a header, a URL's user info, a dash.
TOKEN_RULES: tuple[Rule, ...] = (
    rule(
        Kind.AUTHORIZATION,
        rb"bearer[ \t]+(?P<cred>[A-Za-z0-9_\-.~+/]{8,4096}=*)",
        lower=True,
        check=_bearer,
        gate=rb"bearer[ \t]+[a-z0-9_\-.~+/]{8}",
    ),
    rule(
        Kind.AUTHORIZATION,
        OTHER_SCHEME,
        lower=True,
        check=_other_scheme,
        gate=rb"authorization[\"']?[ \t]*[:=]",
    ),
    rule(
        Kind.URL_CREDENTIALS,
        # to the last ``@`` before the host: a password may hold a raw one (``p@ss``)
        rb"://(?P<info>[^\s/@\"'<>\[][^\s/\"'<>]{0,8191})@",
        check=_url,
    ),
    rule(
        Kind.URL_CREDENTIALS,
        _SLASHED,
        check=_slashed_url,
        gate=_SLASHED_SEEK,
        seek=_SLASHED_SEEK,
    ),
    # Lowered, so %3A and %3a alike; the user info ends at the first %40 (the @).
    rule(
        Kind.URL_CREDENTIALS,
        rb"%3a%2f%2f(?P<info>(?:[^\s/@%\"'<>&]|%(?!40|2f)[0-9a-f]{2}){1,255}?)%40",
        lower=True,
        check=_encoded_url,
        gate=rb"%3a%2f%2f",
    ),
    rule(
        Kind.SECRET,
        rb"-(?:(?P<key>----begin [a-z0-9 ]{0,40}private key(?: block)?-----)|"
        rb"(?P<mac>" + MAC_DASH + b")|" + FLAG + b"|" + P_FLAG + b")",
        lower=True,
        check=_dash,
        # each branch's own opening, so that a run of dashes (a key's END lines, a rule of
        # "-----" in a log) costs one RE2 skip, not a try of every branch at every dash
        seek=rb"-(?:----begin |" + MAC_DASH + rb"|[a-z0-9_\-]{0,40}(?:" + FLAG_WORDS + rb")|p)",
    ),
)
