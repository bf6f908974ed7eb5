"""Secrets in syntaxes the assignment rules do not read: a multi-line string, a properties
file's blank separator, a URL-encoded pair, and the command lines of tools that take a
secret as plain text.

- TOML's and Python's triple-quoted strings, on one line or over several (``password =
  \"\"\"…\"\"\"``): the value runs to the closing quotes, which may be lines below.
- A ``.properties`` line whose key and value a blank separates (``db.password hunter2``):
  the key is dotted, the value ends the line.
- ``password%3DVALUE`` (a form or a query string encoded once more, inside a URL).
- PowerShell's ``ConvertTo-SecureString "…" -AsPlainText``, ``echo … | docker login
  --password-stdin`` and ``gh auth login --with-token <<< …`` (every command that reads a
  password on its standard input, piped or as a here-string, a secret store's ``docker
  secret create NAME -`` and ``gcloud secrets versions add`` among them), ``gh secret set
  NAME --body …``, ``aws ssm put-parameter … --value …`` and ``az keyvault secret set …
  --value …``.
- A shell's expansion whose default a secret's variable falls back to,
  ``${DB_PASSWORD:-…}``.
- GitHub Actions' older workflow commands, ``::set-output name=token::…`` (and
  ``::save-state``), and an XML element that a secret's word names, ``<secret value="…"/>``.

The name is judged as every named find's is (``values``): ``token_url = \"\"\"…`` names no
secret. Each rule opens with a literal and has a superset in ``SUPERSETS`` for the
prefilter (the multi-line one first: its find spans the lines below its own).
"""

from __future__ import annotations

import re
import urllib.parse

from relay.redact.assignments import secret_value
from relay.redact.linear import line_searcher, past_line
from relay.redact.named import looks_random, named_identifier
from relay.redact.placeholders import is_named_placeholder_value, is_reference
from relay.redact.rules import Found, Kind, Rule, rule
from relay.redact.shell import STDIN_READERS, reads_stdin
from relay.redact.values import name_is_secret, sentence_words, value_is_not_secret

_WORDS = rb"(?:pass|secret|token|credential|pwd|key|auth|pw(?![a-z]))"
_NAME_CHARS = re.compile(rb"[A-Za-z0-9_.\-]*$")


def _name_at(block: bytes, word_at: int, end: int) -> bytes:
    """The whole name whose secret word starts at ``word_at`` and which ends at ``end``."""
    line = block.rfind(b"\n", 0, word_at) + 1
    head = _NAME_CHARS.search(block, max(line, word_at - 80), word_at)
    start = head.start() if head else word_at
    return block[start:end]


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
    return secret_value(block, start + lead, close - tail)


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
    return secret_value(block, *m.span("v"))


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
    return secret_value(block, start, end)


_QUOTED_ARG = (
    rb"(?:\"(?P<dq>[^\"\r\n]{1,4096})\"|'(?P<sq>[^'\r\n]{1,4096})'"
    rb"|(?P<w>[^\s\"'$|;&-][^\s|;&]{0,4095}))"
)


def _argument(block: bytes, m: re.Match[bytes]) -> Found:
    """The quoted or bare argument the pattern read."""
    for group in ("dq", "sq", "w"):
        start, end = m.span(group)
        if end > start:
            return secret_value(block, start, end)
    return None


# A literal as bash's xtrace (``set -x``) prints it inside a single-quoted argument, its
# quotes written as '\'' or as '"'"' (``+ mysql -e 'CREATE USER … IDENTIFIED BY '\''pw'\'''``).
_XTRACE_QUOTED = rb"'\\''(?P<xq>[^'\\\r\n]{1,4096})'\\''|'\"'\"'(?P<xd>[^'\"\r\n]{1,4096})'\"'\"'"


# SQL that sets a user's password: ``CREATE USER … IDENTIFIED BY 'pw'`` (MySQL, MariaDB,
# Oracle; ``ALTER``, ``GRANT``; MySQL's ``IDENTIFIED WITH plugin BY 'pw'``), quoted or bare
# (a bind variable, ``:pw``, is none). The statement's words first: "identified by" alone
# is prose's (``Problem identified by Eric Blake``).
IDENTIFIED = (
    rb"(?<![a-z0-9_])(?:(?:create|alter)[ \t]+(?:user|role|login)|grant[ \t])[^\n;]{0,200}?(?:"
    rb"identified[ \t]+(?:with[ \t]+[a-z0-9_]+[ \t]+)?by[ \t]+(?:" + _XTRACE_QUOTED + rb"|"
    rb"\"(?P<dq>[^\"\r\n]{1,4096})\"|'(?P<sq>[^'\r\n]{1,4096})'|(?P<w>[^\s\"'$:?;][^\s;]{0,4095}))"
    # PostgreSQL's ``[WITH] [ENCRYPTED] PASSWORD 'pw'``: a string literal, whatever its shape
    # (``PASSWORD NULL`` sets none)
    # (an escape string E'…', a doubled quote inside, or dollar quotes $$…$$, $pw$…$pw$)
    rb"|(?<![a-z0-9_])password[ \t]*(?:" + _XTRACE_QUOTED.replace(b"?P<x", b"?P<px") + rb"|"
    rb"e?'(?P<pq>(?:[^'\r\n]|''){1,4096})'"
    rb"|\$(?P<tag>[a-z_]{0,16})\$(?P<pd>[^$\r\n]{1,4096}?)\$(?P=tag)\$))"
)


# Other SQL that sets a password: MySQL's ``SET PASSWORD [FOR user] = 'pw'`` (or ``=
# PASSWORD('pw')``, as older servers had it) and the current password an ``ALTER USER …
# REPLACE 'pw'`` names; SQL Server's ``sp_addlogin 'login', 'pw'``; MongoDB's
# ``db.changeUserPassword("user", "pw")``. Each read from its statement's words (``SQL_SEEK``),
# the literal's quotes as SQL writes them (a quote inside doubled).
_SQL_ARG = rb"(?:n?'[^'\r\n]{0,256}'|\"[^\"\r\n]{0,256}\"|[a-z0-9_@.]{1,128})"
SQL_SETS = (
    rb"(?<![a-z0-9_])(?:set[ \t]+password[ \t]*(?:for[ \t]+[^\n=;]{1,200}?)?=[ \t]*"
    rb"(?:password[ \t]*\([ \t]*)?"
    rb"|(?:alter[ \t]+user|set[ \t]+password)[^\n;]{0,300}?[ \t]replace[ \t]+"
    rb"|(?:sp_addlogin|changeuserpassword)[ \t]*\(?[ \t]*" + _SQL_ARG + rb"[ \t]*,[ \t]*)"
    rb"(?:n?'(?P<sq>(?:[^'\r\n]|''){1,4096})'|\"(?P<dq>[^\"\r\n]{1,4096})\")"
)
SQL_SEEK = rb"set[ \t]+password|alter[ \t]+user|sp_addlogin|changeuserpassword"


def _sql_sets_span(block: bytes, m: re.Match[bytes]) -> Found:
    group = "sq" if m.group("sq") is not None else "dq"
    return secret_value(block, *m.span(group))


# A word after the value that is no clause of the statement (``ACCOUNT UNLOCK``,
# ``DEFAULT TABLESPACE``, ``REQUIRE SSL``): prose goes on.
_PROSE_GOES_ON = re.compile(
    rb"[ \t]+(?!(?i:account|default|temporary|quota|profile|password|container|replace"
    rb"|require|with|failed_login_attempts)\b)[A-Za-z]"
)


def _identified_span(block: bytes, m: re.Match[bytes]) -> Found:
    for group in ("xq", "xd", "pxq", "pxd", "pq", "pd"):
        if m.group(group) is not None:
            return secret_value(block, *m.span(group))
    if m.group("w") is None:
        return _argument(block, m)
    start, end = m.span("w")
    value = block[start:end].rstrip(b";)")
    prose = _PROSE_GOES_ON.match(block, end)  # a word after it, not the statement's end
    if prose and value.isalpha() and value.islower() and len(value) <= 8:
        return None  # ``is identified by their email``: prose (``BY tiger;`` is a password)
    return None if value_is_not_secret(value) else secret_value(block, start, start + len(value))


# ConvertTo-SecureString "…" -AsPlainText (or -String '…'): the plain text of a password
SECURE_STRING = rb"convertto-securestring[ \t]+(?:-string[ \t]+)?" + _QUOTED_ARG


def _secure_string_span(block: bytes, m: re.Match[bytes]) -> Found:
    line_end = block.find(b"\n", m.end())
    line_end = len(block) if line_end < 0 else line_end
    if b"-asplaintext" not in block[m.start() : line_end].lower():
        return None  # an encrypted standard string, not the password itself
    return _argument(block, m)


# echo … | docker login --password-stdin (printf '%s' …, gh auth login --with-token,
# chpasswd, passwd --stdin, az devops login: its personal access token)
PIPED = (
    rb"(?:echo|printf)[ \t]+(?:-[a-z]+[ \t]+)*(?:(?:'%s[^']{0,4}'|\"%s[^\"]{0,4}\")[ \t]+)?"
    + _QUOTED_ARG
    + rb"[ \t]*\|[^\n|]{0,400}?(?:"
    + STDIN_READERS
    + rb")"
)


def _piped_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The argument, when the command it is piped to reads it: a ``sudo`` only with ``-S``
    as written (``echo "apt-get update" | sudo -s`` feeds a root shell), or another reader
    further on in the same command."""
    if m.group(0).endswith((b"sudo ", b"sudo\t")):
        command = m.end() - 5
        stop = block.find(b"|", command)
        line_end = block.find(b"\n", command)
        ends = [e for e in (stop, line_end) if e >= 0]
        if not reads_stdin(block[command : min(ends) if ends else len(block)]):
            return None
    return _argument(block, m)


# docker login --password-stdin <<< V, gh auth login --with-token <<< "V": a here-string
# fed to the same commands (the command's words before or after it on the line)
HERE_STRING = rb"<<<[ \t]*" + _QUOTED_ARG
_HERE_STRING_GATE = rb"<<<[^\n]*(?:" + STDIN_READERS + rb")|(?:" + STDIN_READERS + rb")[^\n]*<<<"


def _here_string_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The here-string, when its command reads a password on its standard input."""
    line = block.rfind(b"\n", 0, m.start()) + 1
    end = block.find(b"\n", m.end())
    if not reads_stdin(block[line : len(block) if end < 0 else end]):
        return None
    return _argument(block, m)


# ``::set-output name=token::V`` (``::save-state``): GitHub Actions' older workflow commands
# that set a step's output or state, whose value is the line's rest; the name says a secret.
SET_OUTPUT = (
    rb"::(?:set-output|save-state)[ \t]+name=(?P<name>[a-z0-9_.\-]{1,100})::"
    rb"(?P<v>[^\r\n]{1,4096})"
)


def _set_output_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The value, to the line's end or to the quote that the command opened with (``echo
    "::set-output name=token::V"; …``), when the output's name means a secret."""
    if name_is_secret(block[m.start("name") : m.end("name")]) is not True:
        return None
    start, end = m.span("v")
    quote = block[m.start() - 1 : m.start()]
    if quote in (b'"', b"'") and (close := block.find(quote, start, end)) >= 0:
        end = close
    end = start + len(block[start:end].rstrip())
    return secret_value(block, start, end)


# <secret value="V"/>, <password value='V'>: an element that a secret's word names, and its
# value attribute (a name attribute that names one is ``named``'s: ``<param name=… value=…>``)
ELEMENT_VALUE = (
    rb"<(?P<name>[a-z][a-z0-9_.:\-]{0,80})[ \t](?:[^<>\n]{0,400}?[ \t])?value[ \t]*=[ \t]*"
    rb"(?:\"(?P<dq>[^\"\r\n]{1,4096})\"|'(?P<sq>[^'\r\n]{1,4096})')"
)
_SEEK_ELEMENT_VALUE = (
    rb"<[a-z0-9_.:\-]*(?:pass|secret|token|credential|pwd|key|auth)[a-z0-9_.:\-]*[ \t]"
    rb"[^<>\n]*value[ \t]*=[ \t]*[\"']"
)


def _element_value_span(block: bytes, m: re.Match[bytes]) -> Found:
    name = block[m.start("name") : m.end("name")].rsplit(b":", 1)[-1]
    return _argument(block, m) if name_is_secret(name) is True else None


# gh secret set NAME --body VALUE (-b VALUE, -bVALUE, -b=VALUE, --body=VALUE); what a
# secret store's command keeps: ``aws ssm put-parameter … --value V`` (whatever its
# ``--type``: a String's value is read as any), ``az keyvault secret set … --value V``
_STORES = rb"gh[ \t]+secret[ \t]+set|keyvault[ \t]+secret[ \t]+set|put-parameter"
GH_SECRET = (
    rb"(?:gh[ \t]+secret[ \t]+set[ \t]+[^\n|;&]{0,200}?(?:--body[ =]|(?<=[ \t])-b(?:=|[ \t]*))"
    rb"|(?:keyvault[ \t]+secret[ \t]+set|put-parameter)[ \t]+[^\n|;&]{0,200}?--value[ =])"
    rb"[ \t]*" + _QUOTED_ARG
)


def _stored_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The argument, unless it names a file that holds the value (``--value
    file://secret.txt``: the CLI reads it from there)."""
    found = _argument(block, m)
    if found and block[found[0] : found[0] + 8].lower().startswith((b"file://", b"fileb://")):
        return None
    return found


# A password in a sentence: ``the admin password is Xk9#mQ2v``, ``login with password
# "Hunter2!x"``, ``passphrase: correct horse battery staple`` (plain words to the line's end).
PROSE = (
    rb"(?:pass(?:w(?:or)?d|phrase|code)(?P<pw>)|token|secret|api[ _\-]?key)"
    rb"(?:[ \t]+(?:is|was)[ \t]+"
    + _QUOTED_ARG
    + rb"|[ \t]+(?:\"(?P<q2>[^\"\r\n]{4,128})\"|'(?P<q3>[^'\r\n]{4,128})')"
    + rb"|[ \t]*(?::|=|[ \t]is|[ \t]was)[ \t]*(?P<words>[a-z]{2,12}(?:[ \-][a-z]{2,12}){2,7})"
    + rb"[ \t]*[.!]?[ \t]*(?=\r?\n|\Z)"
    # ``with password Xk9mP2vL…``, ``(password Xk9mP2vL…)``: a bare word right after it
    + rb"|[ \t]+(?P<bare>[^\s\"'()<>,;]{12,128}))"
)
_PROSE_WORD = rb"(?:pass(?:w(?:or)?d|phrase|code)|token|secret|api[ _\-]?key)[ \t:=]"
_SENTENCE_END = b".,;:!?)"
# ``SHA256-hashed``, ``base64-encoded``: a word that says how, joined to what
_COMPOUND = re.compile(rb"[A-Za-z0-9]+(?:-[a-z]{3,})+")
# ``GNUTLS_E_DECRYPTION_FAILED``: a constant's name
_CONSTANT = re.compile(rb"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
# ``the token is alice's, so…``: whose it is, a name's possessive, not the token
_POSSESSIVE = re.compile(rb"[A-Za-z][A-Za-z0-9_.\-]*'s")


def _password_like(value: bytes) -> bool:
    """A word a person would choose as a password: six characters or more, letters with a
    digit or a symbol, and no shape of a word, a number or code (``required``, ``8``,
    ``self.password``)."""
    if not 6 <= len(value) <= 128 or value_is_not_secret(value) or is_reference(value):
        return False
    if _COMPOUND.fullmatch(value) or _CONSTANT.fullmatch(value) or _POSSESSIVE.fullmatch(value):
        return False
    text = value.decode("latin-1")
    letters = any(c.isalpha() for c in text)
    others = any(not c.isalpha() and not c.isspace() for c in text)
    return letters and others and not is_named_placeholder_value(value)


# What opens a password's own mention in a sentence: ``… with password``, ``using
# password``, ``(password``.
_GIVEN_WITH = re.compile(rb"(?:(?:^|[^a-z0-9_])(?:with|using)[ \t]+|\()$")
_BARE_END = b".,:!?"


def _bare_password(block: bytes, m: re.Match[bytes]) -> Found:
    """The word after ``with password``, ``using password`` or ``(password``, when it looks
    drawn (``with password protection``, ``using password auth`` are prose)."""
    line = block.rfind(b"\n", 0, m.start()) + 1
    if m.start("pw") < 0 or not _GIVEN_WITH.search(
        block[max(line, m.start() - 8) : m.start()].lower()
    ):
        return None
    start, end = m.span("bare")
    while end > start and block[end - 1] in _BARE_END:
        end -= 1
    value = block[start:end]
    if not looks_random(value, least=12) or named_identifier(value):
        return None
    return secret_value(block, start, end)


def _prose_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The password the sentence gives: quoted, a word that looks chosen, or a passphrase
    of plain words in small letters (none of them one that only a sentence has) to the
    line's end (``gtlspassword: Fix inverted assertion`` is a change log's entry)."""
    if m.group("bare") is not None:
        return _bare_password(block, m)
    for group in ("dq", "sq", "q2", "q3", "w"):
        start, end = m.span(group)
        if end > start:
            while group == "w" and end > start and block[end - 1] in _SENTENCE_END:
                end -= 1  # the sentence's stop, not the password's
            return secret_value(block, start, end) if _password_like(block[start:end]) else None
    start, end = m.span("words")
    words = block[start:end]
    passphrase = m.start("pw") >= 0
    if passphrase and end > start and words.islower() and not sentence_words(words):
        return secret_value(block, start, end)
    return None


# A .pgpass line, ``host:port:database:user:password``: the password is the line's rest.
# Read from the line's start alone (a host opens it): tried at every colon, a line of
# ``1:1:1:…`` cost a thousand steps a colon (55 KB a second).
PGPASS = (
    rb"(?m)^(?:[A-Za-z0-9_.\-]{1,253}|\*)(?P<f>:(?:[0-9]{1,5}|\*):[^:\s]{1,128}:[^:\s]{1,128}:)"
    rb"(?P<v>[^\s]{1,1024})[ \t]*(?=\r?\n|\Z)"
)
_NAMED_FIELD = re.compile(rb"[A-Za-z*]")


def _pgpass_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The password, when the database and the user are names (a time,
    ``10:20:30:40:50``, has none)."""
    fields = block[m.start("f") + 1 : m.start("v") - 1].split(b":")
    if not all(_NAMED_FIELD.search(f) for f in fields[1:]):
        return None
    return secret_value(block, *m.span("v"))


# An AWS access key id and, on its line or the next, a 40-character secret with no name
# (``AKIA… wJalr…``, a credentials CSV, two ``echo``s): the pair's other half.
AWS_PAIR = rb"(?:akia|asia|abia|acca)[a-z0-9]{16}"
_AWS_SECRET = re.compile(rb"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_AWS_ID = re.compile(rb"[A-Z0-9]{20}")


def _aws_pair_span(block: bytes, m: re.Match[bytes]) -> Found:
    """The secret beside an upper-case key id, mixed as random base64 is (a SHA-1 in hex
    is not), unless a document marks either an example."""
    if (
        not _AWS_ID.fullmatch(block, m.start(), m.end())
        or block[m.end() - 7 : m.end()] == b"EXAMPLE"
    ):
        return None
    line = block.rfind(b"\n", 0, m.start()) + 1
    end = block.find(b"\n", m.end())
    end = -1 if end < 0 else block.find(b"\n", end + 1)
    for found in _AWS_SECRET.finditer(block, line, len(block) if end < 0 else end):
        value = found.group()
        mixed = value.lower() != value and value.upper() != value
        if mixed and any(c in b"0123456789/+" for c in value):
            return None if is_named_placeholder_value(value) else found.span()
    return None


# A default in a shell's expansion, ``${DB_PASSWORD:-V}`` (``-``, ``:=``, ``=``), as a script
# and ``docker compose config`` print it: the value a secret's variable falls back to.
EXPANSION_DEFAULT = rb"\$\{(?P<name>[a-z_][a-z0-9_]{0,80}):?[\-=](?P<v>[^}\r\n]{1,4096})\}"
EXPANSION_SUPERSET = r"\$\{[a-z0-9_]*(?:pass|secret|token|credential|key|auth|pw)[a-z0-9_]*:?[\-=]"


def _expansion_default(block: bytes, m: re.Match[bytes]) -> Found:
    """The default, when the variable's name means a secret (``${HOME:-/root}`` names
    none) and the default is a value, not another expansion (``${DB_PASSWORD:-$PW}``)."""
    if name_is_secret(block[m.start("name") : m.end("name")]) is not True:
        return None
    start, end = m.span("v")
    if value_is_not_secret(block[start:end].strip()):
        return None
    return secret_value(block, start, end)


# A secret's multi-line string opens (the prefilter keeps its lines to the closing quotes:
# ``lines_below``).
TRIPLE_SUPERSET = (
    r"(?:pass|secret|token|credential|pwd|key|auth|pw)[a-z0-9_.\-]*[\"']?[ \t]*=[ \t]*"
    r"(?:\"\"\"|''')"
)
_TRIPLE_OPEN = line_searcher(TRIPLE_SUPERSET.encode())
_KEY_ID = line_searcher(AWS_PAIR)


def lines_below(block: bytes, line: int, end: int) -> int:
    """Where the prefilter's kept text ends for a hit on the line from ``line`` to ``end``
    (past its break): past the closing quotes of a secret's triple-quoted string that opens
    on it (as ``_triple_span`` reads it), past the line below an access key id (the secret
    ``_aws_pair_span`` reads there); else ``end``. (Read in the prefilter's regex, those
    lines cost its automaton a counter of 64 lines, and states, on every word of a log.)"""
    if block.find(b'"""', line, end) >= 0 or block.find(b"'''", line, end) >= 0:
        at, stop_at = line, end
        while at < stop_at and (opened := _TRIPLE_OPEN(block, at, stop_at)[0][1]) >= 0:
            close = block.find(block[opened - 3 : opened], opened, opened + _LONGEST)
            if close >= end:
                end = past_line(block, close)
                break
            at = opened
    if _KEY_ID(block, line, end)[0][0] >= 0 and end < len(block):
        end = past_line(block, end)
    return end


def open_triple(block: bytes, floor: int, cut: int) -> int:
    """The start of the line where a triple-quoted string that a secret's name may open
    (``DB_PASSWORD = \"\"\"``) opens before ``cut`` and does not close before it, within
    the reach ``_triple_span`` reads for its close (and not before ``floor``); -1 when none
    is open. A stream's window cut there leaves the next one the string whole: a cut inside
    it emitted its lines before their closing quotes were read."""
    found = _open_at(block, floor, cut)
    return -1 if found is None else max(floor, block.rfind(b"\n", 0, found[0]) + 1)


def triple_close(block: bytes, floor: int, cut: int) -> int:
    """Past the closing quotes of the string ``open_triple`` finds open at ``cut``, as
    ``_triple_span`` reads them; -1 when none is open or it does not close within that
    reach, ``len(block) + 1`` when the reach runs past the block's end (its close unread).
    A parallel piece that starts inside such a string is given none of it: the piece
    before it must read the string to its close, and it is cut there."""
    found = _open_at(block, floor, cut)
    if found is None:
        return -1
    opened = found[1]
    close = block.find(block[opened - 3 : opened], opened, opened + _LONGEST)
    if close >= 0:
        return close + 3
    return len(block) + 1 if opened + _LONGEST > len(block) else -1


def _open_at(block: bytes, floor: int, cut: int) -> tuple[int, int] | None:
    """Where the triple-quoted string ``open_triple`` reads opens (its name's match, and
    past its opening quotes), or None."""
    at = max(floor, cut - _LONGEST)
    if block.find(b'"""', at, cut) < 0 and block.find(b"'''", at, cut) < 0:
        return None
    while at < cut:
        opener, opened = _TRIPLE_OPEN(block, at, cut)[0]
        if opened < 0:
            return None
        close = block.find(block[opened - 3 : opened], opened, cut)
        if close < 0:
            return opener, opened
        at = close + 3
    return None


SUPERSETS: tuple[str, ...] = (
    r"\.[a-z0-9_\-]*(?:pass|secret|token|credential|pwd|key|auth|pw)[a-z0-9_\-]*[ \t]+"
    r"[^\s=:\"']",
    r"(?:pass|pwd|secret|token|key|credential)[a-z0-9_\-]*%3d",
    r"convertto-securestring",
    r"identified[ \t]+(?:with[ \t]+[a-z0-9_]+[ \t]+)?by[ \t]",
    r"password[ \t]*(?:e?'|\$[a-z_]{0,16}\$)",  # (PostgreSQL's, in ``IDENTIFIED``'s)
    r"set[ \t]+password|[ \t]replace[ \t]+'|sp_addlogin|changeuserpassword",  # ``SQL_SETS``
    r"(?:echo|printf)[ \t][^\n]*\|[^\n]*(?:" + STDIN_READERS.decode() + ")",
    _HERE_STRING_GATE.decode(),
    r"::(?:set-output|save-state)[ \t]",
    _SEEK_ELEMENT_VALUE.decode(),
    r"(?:" + _STORES.decode() + r")[ \t]",  # gh secret set, a secret store's --value
    r"pass(?:w(?:or)?d|phrase|code)[ \t]*(?:[:=\"']|(?:is|was)[ \t])",
    r"(?:with|using)[ \t]+pass(?:w(?:or)?d|phrase|code)[ \t]",  # ``PROSE``'s bare word
    r"\(pass(?:w(?:or)?d|phrase|code)[ \t]",
    r"(?:token|secret|api[ _\-]?key)[ \t]+(?:is|was)[ \t]",
    r":(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:[^\s]",
    AWS_PAIR.decode(),  # an access key id (and the line below it: ``lines_below``)
    EXPANSION_SUPERSET,
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
    rule(
        Kind.SECRET,
        PIPED,
        lower=True,
        check=_piped_span,
        gate=rb"-stdin|chpasswd|with-token|secrets?[ \t]+(?:create|versions)|sudo[ \t]|devops",
        seek=rb"(?:echo|printf)[ \t]",
    ),
    rule(Kind.SECRET, HERE_STRING, lower=True, check=_here_string_span, gate=_HERE_STRING_GATE),
    rule(
        Kind.SECRET,
        SET_OUTPUT,
        lower=True,
        check=_set_output_span,
        gate=rb"::(?:set-output|save-state)[ \t]",
    ),
    rule(
        Kind.SECRET,
        ELEMENT_VALUE,
        lower=True,
        check=_element_value_span,
        seek=_SEEK_ELEMENT_VALUE,
        gate=_SEEK_ELEMENT_VALUE,
    ),
    rule(
        Kind.SECRET,
        IDENTIFIED,
        lower=True,
        check=_identified_span,
        gate=rb"identified[ \t]|password[ \t]*(?:e?'|\$)",
        seek=rb"create|alter|grant",
    ),
    rule(
        Kind.SECRET,
        GH_SECRET,
        lower=True,
        check=_stored_span,
        gate=rb"gh[ \t]+secret|keyvault[ \t]+secret|put-parameter",
        seek=_STORES,
    ),
    rule(
        Kind.SECRET,
        SQL_SETS,
        lower=True,
        check=_sql_sets_span,
        gate=rb"set[ \t]+password|alter[ \t]+user[^\n]*replace|sp_addlogin|changeuserpassword",
        seek=SQL_SEEK,
    ),
    rule(
        Kind.SECRET,
        PROSE,
        lower=True,
        check=_prose_span,
        gate=_PROSE_WORD,
        seek=_PROSE_WORD,  # (an alternation first: RE2 finds where it may start)
    ),
    rule(Kind.SECRET, PGPASS, check=_pgpass_span, gate=rb":(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:"),
    rule(Kind.SECRET, AWS_PAIR, lower=True, check=_aws_pair_span, gate=AWS_PAIR, seek=AWS_PAIR),
    rule(
        Kind.SECRET,
        EXPANSION_DEFAULT,
        lower=True,
        check=_expansion_default,
        gate=EXPANSION_SUPERSET.encode(),
    ),
)
