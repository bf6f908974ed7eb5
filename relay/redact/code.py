"""Secrets that code names in the syntaxes the assignment rules do not read.

``assignments`` reads ``name = value`` and ``name: value``. Code also compares a secret
(``if (password == "…")``, ``if ("…" === api_key)``), declares one as an array or an
Objective-C string (``char secret[33] = "…"``, ``password = @"…"``), passes one to a
constructor or a setter (``std::string secret("…")``, ``secret.assign("…")``), puts one in
a map under its name (``config.put("password", "…")``, ``setProperty("DB_PASSWORD", "…")``),
or sets one in a Dockerfile (``ENV DB_PASSWORD …``), a YAML tag (``password: !!str …``) or
a Go raw string (``apiKey := `…```). Each rule opens with the name (or the quote before the
value, for a comparison written value first) and takes the quoted value only; the engine
then judges the name's meaning and the value's shape as for every named find (``values``).
"""

from __future__ import annotations

import re

from relay.redact.assignments import secret_value
from relay.redact.placeholders import looks_like_placeholder
from relay.redact.rules import Found, Kind, Rule, rule
from relay.redact.values import name_is_secret, name_words

# A name that holds a secret word (its meaning is judged later, in ``values``).
WORDS = rb"(?:password|passwd|passphrase|secret|token|api_?key|credential|pwd)"
NAME = WORDS + rb"[a-z0-9_]{0,40}"
_COMPARE = rb"[ \t]*(?:[=!]==?)[ \t]*"


def _value(block: bytes, m: re.Match[bytes]) -> Found:
    """The quoted value's span."""
    for group in ("v", "w"):
        if group in m.re.groupindex:
            start, end = m.span(group)
            if end > start:
                return start, end
    return None


def _quoted(n: int) -> bytes:
    """A value in double or single quotes, its groups numbered ``n``."""
    return rb"(?:\"(?P<v%d>[^\"\r\n]{4,1000})\"|'(?P<w%d>[^'\r\n]{4,1000})')" % (n, n)


PATTERN = (
    # name == "value", name.assign("value"), name("value"), name[33] = "value", name = @"…",
    # name "value";, "name", "value" (a map's entry), name: !!str value, name := `value`
    NAME
    + rb"(?:"
    + _COMPARE
    + _quoted(1)
    + rb"|(?:\.(?:assign|set|append))?\([ \t]*"
    + _quoted(2)
    + rb"|[ \t]*\[[0-9]*\][ \t]*=[ \t]*@?"
    + _quoted(3)
    + rb"|[ \t]*=[ \t]*@\"(?P<v4>[^\"\r\n]{4,1000})\""
    + rb"|[ \t]+\"(?P<v5>[^\"\r\n]{4,1000})\"[ \t]*;"
    + rb"|[\"'][ \t]*,[ \t]*"
    + _quoted(6)
    + rb"|[ \t]*:[ \t]*!![a-z]+[ \t]+(?P<v7>[^\s#]{4,1000})"
    + rb"|[ \t]*:=[ \t]*`(?P<v8>[^`\r\n]{4,1000})`"
    + rb")"
)
_GROUPS = ("v1", "w1", "v2", "w2", "v3", "w3", "v4", "v5", "v6", "w6", "v7", "v8")


def _any_value(block: bytes, m: re.Match[bytes]) -> Found:
    for group in _GROUPS:
        start, end = m.span(group)
        if end > start:
            if group in ("v6", "w6") and _in_a_list(block, m.start(), end):
                return None
            return start, end
    return None


_ITEM_BEFORE = re.compile(rb",[ \t]*[\"'][A-Za-z0-9_.\-]*$")
_ITEM_AFTER = re.compile(rb"[\"'][ \t]*,[ \t]*(?:[\"']|\r?\n|$)")


def _in_a_list(block: bytes, name_at: int, end: int) -> bool:
    """The quoted name and the string after it are items of a longer list (``__slots__ =
    ('user', 'password', 'host', …)``), not a map's entry: an item comes before the name
    or after the value."""
    line = block.rfind(b"\n", 0, name_at) + 1
    return bool(
        _ITEM_BEFORE.search(block, max(line, name_at - 120), name_at)
        or _ITEM_AFTER.match(block, end)
    )


# "value" == name: the quote opens the rule.
REVERSED = rb"(?:\"(?P<v>[^\"\r\n]{4,1000})\"|'(?P<w>[^'\r\n]{4,1000})')" + _COMPARE + NAME
# ENV NAME value (a Dockerfile's older form, without ``=``): a name that holds a secret
# word, or ends in a key whose owner says it is a secret's (``MASTER_KEY``, ``masterKey``,
# ``AWS_SECRET_ACCESS_KEY``; not ``GPG_KEY``, a fingerprint, nor ``CACHE_KEY``)
_ENV_KEY = (
    rb"(?:api|access|private|signing|encryption|client|master|secret|app|licen[cs]e)[_\-]?key"
)
DOCKER_ENV = (
    rb"env[ \t]+[a-z0-9_]{0,40}(?:"
    + NAME
    + b"|"
    + _ENV_KEY
    + rb")[ \t]+(?P<v>[^\s=\"'][^\s]{3,1000})"
)

# A sentence going on after the value: a blank and a word in small letters.
_SENTENCE_GOES_ON = re.compile(rb"[ \t]+[a-z]")


def _env_value(block: bytes, m: re.Match[bytes]) -> Found:
    """The value after ``ENV NAME``, unless it is a word in small letters that a sentence
    goes on from (``# ENV APP_KEY must be set``, ``the env master_key setting controls
    …``): prose that names the setting."""
    start, end = m.span("v")
    value = block[start:end]
    if value.isalpha() and value.islower() and _SENTENCE_GOES_ON.match(block, end):
        return None
    if value[-1:] in (b'"', b"'") and value.count(value[-1:]) % 2:
        end -= 1  # ``RUN echo "ENV APP_KEY …"``: the quote closes the echo's string
    return start, end


# A constant or a map entry named by a key or a salt, the name quoted before the value:
# PHP's ``define('AUTH_KEY', '…')`` (WordPress's keys and salts), ``put("signing_key", "…")``.
# The quoted name is read back from the word and judged whole (``sort_key`` is no secret).
ENTRY = rb"(?P<word>key|salt)[\"'][ \t]*,[ \t]*" + _quoted(9)
_SEEK_ENTRY = rb"(?:key|salt)[\"'][ \t]*,[ \t]*[\"']"
_ENTRY_NAME = re.compile(rb"[a-z0-9_.\-]{1,80}")


def _entry(block: bytes, m: re.Match[bytes]) -> Found:
    """The value of an entry whose quoted name, of two words or more, means a secret."""
    line = block.rfind(b"\n", 0, m.start()) + 1
    quote = max(block.rfind(b'"', line, m.start()), block.rfind(b"'", line, m.start()))
    name = block[quote + 1 : m.end("word")]
    if quote < 0 or not _ENTRY_NAME.fullmatch(name.lower()):
        return None
    if len(name_words(name)) < 2 or name_is_secret(name) is not True:
        return None  # ``get('key', …)``: a lookup's own key
    if _in_a_list(block, quote + 1, m.end()):
        return None  # ``'cmp_to_key', 'lru_cache',``: names in a list
    for group in ("v9", "w9"):
        start, end = m.span(group)
        if end > start:
            return start, end
    return None


# A password passed by position to a call that takes a user and a password: requests'
# ``HTTPBasicAuth('u', 'pw')`` (``HTTPDigestAuth``, aiohttp's ``BasicAuth``, ``setBasicAuth``),
# ``auth=('u', 'pw')`` and ``session.auth = ("u", "pw")``, .NET's ``NetworkCredential("u",
# "pw")``, Java's ``PasswordAuthentication("u", "pw".toCharArray())`` and
# ``UsernamePasswordCredentials``, python-ldap's ``simple_bind_s("cn=admin,…", "pw")``,
# JDBC's ``getConnection(url, "u", "pw")`` (the third argument) and the ``.login("u", "pw")``
# of a mail or FTP client. The password is a string
# literal, whole (``"a" + b``, a variable, stays); the arguments before it are literals,
# names, or a call of one with a literal or a name (``props.getProperty("url")``). The blanks
# in that call's parentheses are one run or two around a word, never two runs meeting (``(``
# and a long run of blanks would be split every way: quadratic in the run).
_ARG = (
    rb"(?:\"[^\"\r\n]{0,256}\"|'[^'\r\n]{0,256}'"
    rb"|[a-z_$@][a-z0-9_.$@]{0,127}(?:\[[^\]\r\n]{0,64}\])?"
    rb"(?:\((?:[ \t]*(?:\"[^\"\r\n]{0,128}\"|'[^'\r\n]{0,128}'|[a-z0-9_.$@]{1,64}))?[ \t]*\))?)"
    rb"[ \t]*,[ \t]*"
)
_CALLS = (
    rb"(?:basic|digest|proxy)auth|networkcredential|passwordauthentication"
    rb"|usernamepassword[a-z]{0,24}|simple_bind(?:_s)?"
)
CALL = (
    rb"(?:(?:"
    + _CALLS
    + rb")[ \t]*\([ \t]*"
    + _ARG
    + rb"|auth[ \t]*=[ \t]*[(\[][ \t]*"
    + _ARG
    + rb"|getconnection[ \t]*\([ \t]*"
    + _ARG
    + _ARG
    + rb"|\.login[ \t]*\([ \t]*"
    + _ARG
    + rb")(?:\"(?P<v>[^\"\r\n]{1,1024})\"|'(?P<w>[^'\r\n]{1,1024})')"
    rb"[ \t]*(?:[),\]]|\.tochararray[ \t]*\()"
)
_SEEK_CALL = (
    rb"(?:" + _CALLS + rb")[ \t]*\(|auth[ \t]*=[ \t]*[(\[]|getconnection[ \t]*\(|\.login[ \t]*\("
)
# Whose ``.login(`` takes a password: a mail or FTP client's (``smtp.login``,
# ``self.imap_conn.login``, smtplib's ``server.login``).
_LOGIN_OWNER = re.compile(rb"(?:smtp|ftp|imap|pop|mail|server)[a-z0-9_]{0,40}$")


def _call_value(block: bytes, m: re.Match[bytes]) -> Found:
    """The password literal, unless it stands for one (a template's word, a reference)."""
    start, end = m.span("v") if m.group("v") is not None else m.span("w")
    if block[m.start() : m.start() + 1] == b".":
        owner = block[max(0, m.start() - 48) : m.start()].lower()
        # another object's ``.login("u", "pw")`` (a test's page or client) is no mail or
        # FTP client's, unless an address is the user it logs in (``client.login("me@x.org",
        # "pw")``): a mailbox's
        if not _LOGIN_OWNER.search(owner) and b"@" not in block[m.start() : start]:
            return None
    if looks_like_placeholder(block[start:end], words=False):
        return None
    return secret_value(block, start, end)


# Where each rule can match, for RE2 to find before ``re`` reads the match (counted values
# in one RE2 program would be too large to run as a DFA).
_SEEK = (
    WORDS + rb"[a-z0-9_]*(?:[ \t]*[=!]==?[ \t]*[\"']|(?:\.(?:assign|set|append))?\([ \t]*[\"']"
    rb"|[ \t]*\[[0-9]*\][ \t]*=|[ \t]*=[ \t]*@\"|[ \t]+\"|[\"'][ \t]*,|[ \t]*:[ \t]*!!"
    rb"|[ \t]*:=[ \t]*`)"
)
_SEEK_REVERSED = rb"(?:\"[^\"\r\n]{4}[^\"\r\n]*\"|'[^'\r\n]{4}[^'\r\n]*')" + _COMPARE + WORDS
_SEEK_ENV = rb"env[ \t]+[a-z0-9_]*(?:" + WORDS + b"|" + _ENV_KEY + b")"

# The prefilter's supersets of these rules: each matches the line of every find, with
# what the assignment rules' supersets already take out (``name =``, ``name :``), so
# that the one pass over every line stays as fast.
SUPERSETS: tuple[str, ...] = (
    (
        WORDS + rb"[a-z0-9_]*(?:(?:\.(?:assign|set|append))?\([ \t]*[\"']"
        rb"|[ \t]*\[[0-9]*\][ \t]*=|[ \t]+\""
        rb"|[\"'][ \t]*,)"
    ).decode(),
    (rb"[=!]=[= \t]*[a-z0-9_]*" + WORDS).decode(),
    _SEEK_ENV.decode(),
    _SEEK_ENTRY.decode(),
    r"(?:basic|digest|proxy)auth[ \t]*\(|simple_bind(?:_s)?[ \t]*\(",  # ``CALL``'s
    r"networkcredential[ \t]*\(|passwordauthentication[ \t]*\(|usernamepassword",
    r"auth[ \t]*=[ \t]*[(\[]",
    r"getconnection[ \t]*\(",
    r"\.login[ \t]*\(",
)

# Each rule runs only on a block that its superset matches in (one RE2 set for every gate).
CODE_RULES: tuple[Rule, ...] = (
    rule(Kind.SECRET, PATTERN, lower=True, check=_any_value, seek=_SEEK, gate=_SEEK),
    rule(
        Kind.SECRET,
        REVERSED,
        lower=True,
        check=_value,
        seek=_SEEK_REVERSED,
        gate=SUPERSETS[1].encode(),
    ),
    rule(
        Kind.SECRET,
        DOCKER_ENV,
        lower=True,
        check=_env_value,
        seek=_SEEK_ENV,
        gate=SUPERSETS[2].encode(),
    ),
    rule(Kind.SECRET, ENTRY, lower=True, check=_entry, seek=_SEEK_ENTRY, gate=_SEEK_ENTRY),
    rule(Kind.SECRET, CALL, lower=True, check=_call_value, seek=_SEEK_CALL, gate=_SEEK_CALL),
)
