"""Token-shaped secrets: the vendor formats, private key markers, headers, URLs.

Each format is anchored on its literal prefix (see ``rules``). Lengths are bounded so that a
match never reaches past the overlap that the streaming layer keeps between blocks.
Private key blocks are the one multi-line secret: the rule here finds the BEGIN line and the
engine finds where the block ends, across blocks if need be.
"""

from __future__ import annotations

import re

from relay.redact.assignments import FLAG, credential, flag_span
from relay.redact.network import MAC_DASH, mac_dash
from relay.redact.rules import (
    WORD,
    Found,
    Kind,
    Rule,
    boundary_after,
    boundary_before,
    group_span,
    rule,
    word_start,
)
from relay.redact.shell import P_FLAG, p_flag_span

BEGIN_KEY = re.compile(rb"(?i)-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
END_KEY = re.compile(rb"(?i)-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# Longer than any END marker, so a block boundary never splits one unseen.
END_KEY_MAX = 80

_B64URL = rb"[A-Za-z0-9_\-]"


def _stripe(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The anchor is ``k_live_``; the key starts one byte earlier with s, r or p."""
    start = m.start() - 1
    if start < 0 or block[start] not in b"srp" or not boundary_before(block, start):
        return None
    return start, m.end()


def _sk_key(block: bytes, m: re.Match[bytes]) -> Found:
    """``sk-ant-…`` is Anthropic's; other ``sk-…`` is OpenAI's if it has mixed characters."""
    if not boundary_before(block, m.start()):
        return None
    body = m.group()[3:]
    if body.startswith(b"ant-"):
        return m.start(), m.end(), Kind.ANTHROPIC_KEY
    if body.startswith((b"proj-", b"svcacct-", b"admin-")):
        return m.span()
    # Random base62 has both cases, and a digit unless it is short: kebab-case names do not.
    has_upper = any(65 <= c <= 90 for c in body)
    has_lower = any(97 <= c <= 122 for c in body)
    has_digit = any(48 <= c <= 57 for c in body)
    return m.span() if has_upper and has_lower and (has_digit or len(body) >= 32) else None


def _after_boundary(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """Accept a fixed-length token only when nothing token-like follows it."""
    return m.span() if boundary_after(block, m.end(), WORD) else None


def _aws_or_google(block: bytes, m: re.Match[bytes]) -> Found:
    """One rule for both ``A…`` formats: ``AIza…`` is Google's, the others AWS key ids."""
    if not boundary_after(block, m.end(), WORD):
        return None
    kind = Kind.GOOGLE_API_KEY if m.group().startswith(b"AIza") else Kind.AWS_ACCESS_KEY
    return m.start(), m.end(), kind


def _bearer(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    return credential(m, "cred")


def _userinfo(info: bytes, colon: bytes) -> bool:
    """``user:pass`` or ``:pass`` (redis, with no user), or a lone TOKEN if it looks like one."""
    at = info.find(colon)
    if 0 <= at < len(info) - len(colon):
        return True
    return len(info) >= 20 and any(48 <= c <= 57 for c in info)


def _url(block: bytes, m: re.Match[bytes]) -> Found:
    """A Slack webhook; ``scheme://user:pass@``; ``scheme://TOKEN@`` if it looks like one."""
    if m.group("hook") is not None:
        return m.start("hook"), m.end("hook"), Kind.SLACK_WEBHOOK
    return group_span(m, "info") if _userinfo(m.group("info"), b":") else None


def _encoded_url(block: bytes, m: re.Match[bytes]) -> Found:
    """``https%3A%2F%2Fuser%3Apass%40host``: a URL passed as a query parameter."""
    return group_span(m, "info") if _userinfo(m.group("info"), b"%3a") else None


def _dash(block: bytes, m: re.Match[bytes]) -> Found:
    """The one pass for everything that starts with a dash: key blocks, flags, MACs, and
    ``-p`` passwords (``shell``)."""
    if m.group("key") is not None:
        return m.start(), m.end(), Kind.PRIVATE_KEY
    if m.group("mac") is not None:
        found = mac_dash(block, m)
        return None if found is None else (*found, Kind.MAC)
    if m.group("pw") is not None:
        return p_flag_span(block, m)
    found = flag_span(block, m)
    return None if found is None else (*found, Kind.SECRET)


TOKEN_RULES: tuple[Rule, ...] = (
    # Classic 40-char tokens and the long stateless installation tokens ghs_<appid>_<jwt>.
    rule(
        Kind.GITHUB_TOKEN,
        rb"g(?:h[pousr]_[A-Za-z0-9][A-Za-z0-9_.\-]{14,4094}[A-Za-z0-9_\-]"
        rb"|ithub_pat_[A-Za-z0-9_]{22,255})",
    ),
    rule(
        Kind.AWS_ACCESS_KEY,
        rb"A(?:(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}|Iza" + _B64URL + rb"{35})",
        check=_aws_or_google,
    ),
    rule(Kind.SLACK_TOKEN, rb"x(?:ox[abposre]|app-[0-9])-[0-9A-Za-z\-]{10,250}"),
    rule(Kind.STRIPE_KEY, rb"k_(?:live|test)_[0-9A-Za-z]{10,247}", check=_stripe),
    rule(Kind.STRIPE_KEY, rb"whsec_[0-9A-Za-z+/=]{20,200}"),
    rule(Kind.OPENAI_KEY, rb"sk-" + _B64URL + rb"{20,400}", check=_sk_key),
    rule(Kind.NPM_TOKEN, rb"npm_[A-Za-z0-9]{36}", check=_after_boundary),
    rule(Kind.PYPI_TOKEN, rb"pypi-AgE" + _B64URL + rb"{40,4096}"),
    rule(
        Kind.JWT,
        rb"eyJ" + _B64URL + rb"{5,4096}\." + _B64URL + rb"{5,8192}\." + _B64URL + rb"{0,4096}",
        check=word_start,
    ),
    rule(
        Kind.AUTHORIZATION,
        rb"bearer[ \t]+(?P<cred>[A-Za-z0-9_\-.~+/]{8,4096}=*)",
        lower=True,
        check=_bearer,
    ),
    rule(
        Kind.URL_CREDENTIALS,
        rb"://(?:(?P<hook>hooks\.slack\.com/(?:services|workflows|"
        rb"triggers)/[A-Za-z0-9_/+\-]{8,300})|(?P<info>[^\s/@\"'<>\[][^\s/@\"'<>]{0,255})@)",
        check=_url,
    ),
    # Lowered, so %3A and %3a alike; the user info ends at the first %40 (the @).
    rule(
        Kind.URL_CREDENTIALS,
        rb"%3a%2f%2f(?P<info>(?:[^\s/@%\"'<>&]|%(?!40|2f)[0-9a-f]{2}){1,255}?)%40",
        lower=True,
        check=_encoded_url,
    ),
    rule(
        Kind.SECRET,
        rb"-(?:(?P<key>----begin [a-z0-9 ]{0,40}private key(?: block)?-----)|"
        rb"(?P<mac>" + MAC_DASH + b")|" + FLAG + b"|" + P_FLAG + b")",
        lower=True,
        check=_dash,
    ),
)
