"""``key=value``, ``key: value``, ``"key": "value"`` and ``--key value`` whose key names a secret.

The key is matched from its secret-naming keyword onwards (``DB_PASSWORD`` is found at
``password``), case-insensitively through the lowered block. Only the value is replaced, so
the log still says which setting was there. Values that are plainly not secrets —
placeholders, type names, variable references, counters (``max_tokens=512``) — are kept.
"""

from __future__ import annotations

import re

from relay.redact.formats import is_named_placeholder
from relay.redact.rules import Found, Kind, Rule, rule

# Keywords, each its own rule so that each regex opens with a literal (see ``rules``);
# ``key`` stands for api_key, access-key, privateKey (the word before it is checked), and
# ``auth`` shares its pass with the Authorization header.
_KEYWORDS: tuple[bytes, ...] = (
    rb"pass(?:w(?:or)?d|phrase|(?![a-z]))",
    rb"secret",
    rb"token",
    rb"credential",
    rb"cookie",
    rb"pwd",
)
# The keywords most logs never hold, whose pass a block without them skips (see ``engine``).
_GATES = {rb"credential": rb"credential", rb"cookie": rb"cookie", rb"pwd": rb"pwd"}
_KEY_OWNERS = re.compile(rb"(?:api|access|private|signing|encryption|client)[_\-]?$")

# Key endings that name something about a secret rather than the secret itself
# (``max_tokens``, ``token_url``, ``password_file``; a plural, but not ``pass`` nor
# ``credentials``). They are look-behinds after the key, so that the regex itself refuses
# them instead of a Python check on every counter.
_NOT_SECRET_ENDINGS: tuple[bytes, ...] = (
    *(b"[^sl]s", b"izer", b"ize", b"ized", b"ization", b"ing", b"count", b"type", b"len"),
    *(b"length", b"limit", b"size", b"name", b"file", b"path", b"dir", b"url", b"uri"),
    *(b"endpoint", b"env", b"var", b"id", b"index", b"usage", b"budget", b"max", b"min"),
    *(b"policy", b"required", b"enabled", b"expire", b"expiry", b"ttl", b"header", b"kind"),
    *(b"method", b"mode", b"provider", b"source", b"store", b"class", b"or", b"ority"),
    *(b"entication", b"enticated", b"enticate", b"used"),
)
_KEY_END = b"".join(b"(?<!" + ending + b")" for ending in _NOT_SECRET_ENDINGS)
# The rest of the key, the separator, then a quoted or a bare value.
# A key or value quoted as ``\"…\"`` is JSON inside a JSON string (a log that quotes a body).
_TAIL = (
    # a cheap look-ahead for the separator before the endings are tried
    rb"(?P<rest>[a-z0-9_.\-]{0,40}+)(?=\\{0,3}[\"']?[ \t]{0,8}[=:])"
    + _KEY_END
    + rb"\\{0,3}[\"']?[ \t]{0,8}(?P<sep>=>|:=|=(?!=)|:(?!:))[ \t]{0,8}"
    rb"(?:\\{1,3}\"(?P<eq>[^\"\r\n]{1,4096}?)\\{1,3}\""
    rb"|\"(?P<dq>[^\"\r\n]{1,4096})|'(?P<sq>[^'\r\n]{1,4096})"
    rb"|(?P<v>[^\s\"'&,;<>(){}\[\]]{1,4096}))"
)
# Without the leading dash: the shared dash rule (``tokens``) supplies it.
FLAG_WORDS = rb"password|passphrase|secret|token|api-key"
FLAG = (
    rb"-[a-z0-9\-]{0,40}(?:" + FLAG_WORDS + rb")"
    rb"(?P<frest>[a-z0-9\-]{0,40}+)" + _KEY_END + rb"[ =]"
)
# ``auth`` names a secret (``auth=…``, ``auth_token: …``), but ``author``, ``authority`` and
# ``authorized-by-human: yes`` (relay's own approval line) name a person or a permission.
_AUTH = (
    rb"auth(?:orization[\"']?[ \t]*[:=][ \t]*[\"']?"
    rb"(?:(?P<scheme>bearer|basic|token|digest|bot|apikey|negotiate)[ \t]+)?"
    rb"(?P<cred>[^\s\"',;\[<][^\s\"',;]{3,4096})|(?!or)" + _TAIL + rb")"
)

# After ``key: value``, more words on the line mean prose; a setting ends the line.
_PROSE = re.compile(rb"[ \t]+[^\s,;#})\]&]")
_MACHINE_MADE = re.compile(rb"[0-9A-Z+/=]")
# Values that stand for a secret without being one: literals, type names, ``$VAR`` and
# ``${VAR}``, ``%(name)s``, ``{{ template }}``, ``<placeholder>``, masks, earlier redactions.
_PLACEHOLDER = re.compile(
    rb"(?i:none|null|nil|true|false|undefined|str|string|int|bytes|bool|optional|any|"
    rb"redacted|required|\*+|x{3,}|\.\.\.)|\$|\$\{?[A-Z_][A-Z0-9_]*\}?|%(?:\(\w+\))?[sdr]|"
    rb"\{\{.*\}\}|\$\{\{[^\r\n]*\}\}|<[^<>]*>|\[redacted:[a-z\-]+\]"
)
MAX_PLACEHOLDER = 256
# A secret's own name as its value (``password: "password"``) is a template's default.
_NAMES_AS_VALUES = frozenset(
    b"password passwd passphrase secret token pass pwd apikey api_key api-key credential "
    b"credentials key auth".split()
)


def named_placeholder(value: bytes) -> bool:
    """A named value that is a placeholder: a secret's own name, a format's documented example,
    or filler or a template's word once a known prefix is stripped (``dckr_pat_XXXX…``)."""
    if len(value) > MAX_PLACEHOLDER:
        return False  # a template's value is short; reading a long one costs its length again
    return value.lower() in _NAMES_AS_VALUES or is_named_placeholder(value)


def stands_in(block: bytes, start: int, end: int) -> bool:
    """True when ``block[start:end]`` stands for a secret without being one (``$VAR``, an
    earlier redaction), so that redacting twice changes nothing."""
    return _PLACEHOLDER.fullmatch(block, start, end) is not None


def _yaml_like(block: bytes, m: re.Match[bytes], end: int) -> bool:
    """``key: value`` is a setting when the key is quoted, or when a blank follows the colon
    and the value either ends the line or looks machine-made; a plain word followed by more
    words is a sentence (``token_stream: processed 5 items``)."""
    if block[m.start("sep") - 1 : m.start("sep")] in (b'"', b"'"):
        return True
    if m.start("v") == m.end("sep"):
        return False  # image:tag, File.java:98
    return not _PROSE.match(block, end) or bool(_MACHINE_MADE.search(block, m.start("v") + 1, end))


def _bare_pass(block: bytes, m: re.Match[bytes]) -> bool:
    """``pass`` alone names a secret as a whole word set with ``=`` (``DB_PASS=…``, as the
    environment scan in ``facts`` reads it) or quoted (``"pass": …``); ``PASS: test_x``
    and ``PASS=3`` are test summaries and ``bypass=1`` a flag."""
    if m.start() > 0 and chr(block[m.start() - 1]).isalpha():
        return False
    return m.group("sep") != b":" or block[m.start("sep") - 1 : m.start("sep")] in (b'"', b"'")


# A value runs to its real end, however long (the regex reads its first 4 KB only): a
# quoted one to its closing quote, past backslash-escaped and doubled quotes (``\"``,
# ``''``), a bare one to its first stop character. Each is one possessive pass, linear.
_VALUE_END = {
    "dq": re.compile(rb'(?:[^"\\\r\n]|\\[^\r\n]|"")*+'),
    "sq": re.compile(rb"(?:[^'\\\r\n]|\\[^\r\n]|'')*+"),
    "v": re.compile(rb"[^\s\"'&,;<>(){}\[\]]*+"),
}


class _LastRun:
    """The last value run read to its end, so that a match inside it (``token=x1token=x1…``
    on a 10 MB line) does not read the same run again: the cost stays linear."""

    block: bytes = b""
    runs: dict[str, tuple[int, int]] = {}  # noqa: RUF012 - one cache for the module


def value_end(block: bytes, name: str, start: int, end: int) -> int:
    """Where the value that the regex read as ``block[start:end]`` really ends."""
    pattern = _VALUE_END.get(name)
    if pattern is None:
        return end
    if _LastRun.block is not block:
        _LastRun.block, _LastRun.runs = block, {}
    run = _LastRun.runs.get(name)
    if run is not None and run[0] <= start < run[1]:
        return max(end, run[1])
    found = pattern.match(block, start)
    stop = max(end, found.end()) if found else end
    _LastRun.runs[name] = (start, stop)
    return stop


def _value_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The value's span, unless the key or the value shows it is not a secret."""
    key = m.group(0)[:6]
    if key[:3] == b"pwd" and (m.start() == 0 or block[m.start() - 1] not in b"_.-"):
        return None  # PWD is the working directory; DB_PWD is a password
    bare_pass = key[:4] == b"pass" and key[4:5] not in (b"w", b"p")
    if bare_pass and not _bare_pass(block, m):
        return None
    for name in ("eq", "dq", "sq", "v"):
        start, end = m.span(name)
        if end > start:
            end = value_end(block, name, start, end)
            if _PLACEHOLDER.fullmatch(block, start, end) or named_placeholder(block[start:end]):
                return None
            if block[start : start + 1] == b"`" or block[start : start + 2] == b"$(":
                return None  # `pass show db`, $(cat /run/secret): a command that fetches one
            if bare_pass and block[start:end].isdigit():
                return None  # PASS=3 FAIL=0 counts tests
            if name == "v" and m.group("sep") == b":" and not _yaml_like(block, m, end):
                return None  # image:tag, File.java:98, "stream: processed 5 items"
            return start, end
    return None


def credential(m: re.Match[bytes], group: str) -> tuple[int, int] | None:
    """A header credential: long, or with a digit or symbol, so that prose is left alone."""
    value = m.group(group)
    if len(value) >= 20 or any(c in b"0123456789._-+/=~" for c in value):
        return m.span(group)
    return None


def _key_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``…key = value`` when the word before ``key`` makes it a secret (api, access, …)."""
    floor = max(0, m.start() - 12)
    floor = max(floor, block.rfind(b"\n", floor, m.start()) + 1)  # not the line above
    if not _KEY_OWNERS.search(block[floor : m.start()].lower()):
        return None
    return _value_span(block, m)


def _auth_span(block: bytes, m: re.Match[bytes]) -> Found:
    """``Authorization: <scheme> <credential>``, or ``auth = value``."""
    if m.group("cred") is None:
        return _value_span(block, m)
    found = m.span("cred") if m.group("scheme") else credential(m, "cred")
    return None if found is None else (*found, Kind.AUTHORIZATION)


_WORD_AFTER = re.compile(rb"[^ \t\r\n\"']{1,4096}")


def flag_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``--password hunter2``: the next word is the value; ``--password --verbose`` asks for it
    at a prompt (the next word is another flag)."""
    end = m.end()
    found = _WORD_AFTER.match(block, end)
    stop = found.end() if found else end
    if stop == end or block[end] == 45 or _PLACEHOLDER.fullmatch(block, end, stop):  # "-"
        return None
    word = block[end:stop]
    if stop - end <= 8 and word.isalpha() and word.islower():
        return None  # "--save-token file", "--token to keep it": a word of prose or a choice
    return end, stop


ASSIGNMENT_RULES: tuple[Rule, ...] = (
    *(
        rule(Kind.SECRET, kw + _TAIL, lower=True, check=_value_span, gate=_GATES.get(kw))
        for kw in _KEYWORDS
    ),
    rule(Kind.SECRET, rb"key" + _TAIL, lower=True, check=_key_span),
    rule(Kind.SECRET, _AUTH, lower=True, check=_auth_span),
)
