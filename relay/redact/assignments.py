"""``key=value``, ``key: value``, ``"key": "value"`` and ``--key value`` whose key names a secret.

The key is matched from its secret-naming keyword onwards (``DB_PASSWORD`` is found at
``password``), case-insensitively through the lowered block. Only the value is replaced, so
the log still says which setting was there. Values that are plainly not secrets —
placeholders, type names, variable references, counters (``max_tokens=512``) — are kept.

The same rules read a type between the name and ``=`` (Go's ``apiKey string = …``, Python's
``API_KEY: Final[str] = …``), a subscript (``os.environ["API_TOKEN"] = …``) and a YAML block
scalar (``password: |`` over indented lines); HCL's variable blocks and table rows named by
their first cell are rules of their own below.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import re2

from relay.redact.expressions import close_runs_on, made_part
from relay.redact.formats import is_named_placeholder
from relay.redact.linear import line_searcher, past_line, searcher
from relay.redact.named import looks_random
from relay.redact.placeholders import (
    is_named_placeholder_value,
    is_reference,
    looks_like_placeholder,
)
from relay.redact.rules import Found, Kind, Rule, Span, rule

# Keywords, each its own rule so that each regex opens with a literal (see ``rules``);
# ``key`` stands for api_key, access-key, privateKey (the word before it is checked), and
# ``auth`` shares its pass with the Authorization header.
_KEYWORDS: tuple[bytes, ...] = (
    rb"pass(?:w(?:or)?d|phrase|code|(?![a-z]))",
    rb"secret",
    rb"token",
    rb"credential",
    rb"cookie",
    rb"pwd",
    rb"pw(?![a-z])",
    rb"pat(?![a-z])",  # a personal access token: GH_PAT, AZURE_DEVOPS_PAT, pat
)
# The keywords most logs never hold, whose pass a block without them skips (see ``engine``).
_GATES = {
    **{rb"credential": rb"credential", rb"cookie": rb"cookie", rb"pwd": rb"pwd"},
    rb"pw(?![a-z])": rb"(?:[^a-z0-9]|^)pw(?:[^a-z]|$)",
    rb"pat(?![a-z])": rb"(?:[^a-z0-9]|^)pat(?:[^a-z]|$)",
}
_KEY_OWNERS = re.compile(rb"(?:api|access|private|signing|encryption|client|master)[_\-]?$")

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
_NOT_SECRET_NAME = re.compile(b"(?:" + b"|".join(_NOT_SECRET_ENDINGS) + b")$")
# A type between the name and ``=``: Go's ``apiKey string = …``, Python's and TypeScript's
# annotations (``API_KEY: Final[str] = …``, ``apiKey: string = …``), Rust's references
# (``const API_KEY: &'static str = …``, ``&[u8]``). Only before ``=``: in ``key: str`` the
# type is the value (a schema's), which is no secret.
_GO_TYPE = rb"[ \t]+(?:string|\[\]byte)"
_ANNOTATION = (
    rb"[ \t]*:[ \t]*(?:typing\.)?(?:final|classvar|optional|str|string|bytes|secretstr"
    rb"|&(?:'[a-z_]{1,20}[ \t]+)?(?:str|\[u8\]))"
    rb"(?:\[[a-z0-9_., |\[]{0,40}+\]{1,3})?"
)
_SUBSCRIPTS = rb"(?:\[[\"'][a-z0-9_.\-]{0,40}+[\"']\]){0,3}+"  # ["key"] after ["secret"]
# The rest of the key, the separator, then a quoted or a bare value.
# A key or value quoted as ``\"…\"`` is JSON inside a JSON string (a log that quotes a body);
# a quoted key closed by ``]`` is a subscript (``os.environ["API_TOKEN"] = …``,
# ``config["secret"]["key"] = …``), whose later keys are in ``sub``.
_TAIL = (
    # a cheap look-ahead for the separator before the endings are tried
    # (a subscript's and a Go type's up to their ``=``, so that ``["token"]["`` repeated is
    # refused there, not after the endings)
    rb"(?P<rest>[a-z0-9_.\-]{0,40}+)(?=\\{0,3}[\"']?(?:[ \t]{0,40}(?:[=:]|<-)|\]"
    + _SUBSCRIPTS
    + rb"[ \t]{0,40}="
    + b"|"
    + _GO_TYPE
    + rb"[ \t]*=))"
    + _KEY_END
    + rb"\\{0,3}(?:[\"']\](?P<sub>"
    + _SUBSCRIPTS
    + rb")|[\"']?)"
    rb"(?:(?:(?P<go>" + _GO_TYPE + b")|" + _ANNOTATION + rb")(?=[ \t]*=))?"
    # (R's arrow, ``db_password <- "…"``, before a string only: ``token <- getToken()``)
    rb"[ \t]{0,40}(?P<sep>=>|:=|=(?!=)|:(?!:)|<-(?=[ \t]{0,40}[\"']))[ \t]{0,40}"
    # a YAML core tag that only says the value is a string (``password: !!str "…"``)
    rb"(?:!!?(?:str|binary)[ \t]{1,8})?"
    # the escaped quote's backslashes are kept (``eqo``): the value ends at the same quote
    rb"(?:(?P<eqo>\\{1,3})\"(?P<eq>(?:[^\"\\\r\n]|\\[^\"\r\n]){1,4096})"
    rb"|\"(?P<dq>[^\"\r\n]{1,4096})|'(?P<sq>[^'\r\n]{1,4096})"
    # a YAML block scalar's indicator (``password: |``, ``token: >-``): the value is below
    # (maybe after a tag and an anchor: ``token: !!binary |``, ``token: &a |``)
    rb"|(?:[!&][^\s]{0,100}+[ \t]++){0,2}+(?P<bs>[|>][-+1-9]{0,2}+)(?=[ \t]*+(?:#|\r?\n|$))"
    # a value in braces, as an ODBC connection string quotes one (``Pwd={p;w}``)
    rb"|\{(?P<br>[^{}\s\"':;]{1,256})\}(?=;|[ \t\r\n]|$)"
    rb"|(?P<v>[^\s\"'&,;<>(){}\[\]]{1,4096})"
    # a value that opens with a bracket or a mark: a drawn password's first character where
    # the value runs to its ``;``, ``&`` or blank whatever it holds (``_marked_value``)
    rb"|(?P<mv>[(){}\[\]<>,][^\s\"'`;&]{0,4095}))"
)
# Without the leading dash: the shared dash rule (``tokens``) supplies it. One dash is a
# flag too where it opens a word (``keytool -storepass V``, PowerShell's ``-Password V``).
# A flag's name in snake case too (``--client_secret``, ``--api_key``: Python's argparse
# keeps the underscores it is given).
FLAG_WORDS = rb"password|passphrase|secret|token|api[\-_]?key|licen[cs]e-key|storepass|keypass"
FLAG = (
    rb"(?P<dash2>-)?[a-z0-9_\-]{0,40}(?:" + FLAG_WORDS + rb")"
    rb"(?P<frest>[a-z0-9_\-]{0,40}+)" + _KEY_END + rb"(?:[ =]|['\"],[ \t]?)"
)  # (or the next item of a printed argument list: ``['--password', 'VALUE']``)
# ``auth`` names a secret (``auth=…``, ``auth_token: …``), but ``author``, ``authority`` and
# ``authorized-by-human: yes`` (relay's own approval line) name a person or a permission.
_AUTH = (
    rb"auth(?:orization[\"']?[ \t]*[:=][ \t]*[\"']?"
    rb"(?:(?P<scheme>bearer|basic|token|digest|bot|apikey|negotiate|sso-key)[ \t]+)?"
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


def secret_value(block: bytes, start: int, end: int) -> tuple[int, int] | None:
    """The span, unless its text stands for a secret (a reference, a template's word): what
    a rule that reads a value by its place (a command's argument, a call's) keeps."""
    value = block[start:end].strip()
    if not value or stands_in(block, start, end) or is_reference(value):
        return None
    return None if is_named_placeholder_value(value) else (start, end)


def _prose_after_equals(block: bytes, m: re.Match[bytes], start: int, end: int) -> bool:
    """``name= word more words``: a blank after ``=``, a lower-case word, then another: a
    sentence that mentions a setting, not a setting (its value ends its line)."""
    return (
        start > m.end("sep")
        and block[start:end].isalpha()
        and block[start:end].islower()
        and (_PROSE.match(block, end) is not None or block[end : end + 1] in (b".", b","))
    )


# A command line's flag up to its ``=``: ``--set-credential``, ``-token``.
_FLAG_HEAD = re.compile(rb"(?m)(?:^|[\s\"'`(])--?[A-Za-z0-9][A-Za-z0-9_.\-]{0,80}")


def _empty_flag(block: bytes, m: re.Match[bytes], start: int) -> bool:
    """``--flag= word``: a blank after a flag's ``=`` leaves the flag empty (a shell splits
    there), and the word after it is the next argument or the sentence going on."""
    sep = m.start("sep")
    if start == m.end("sep") or block[sep : sep + 1] != b"=" or block[sep - 1] in b" \t":
        return False
    floor = max(block.rfind(b"\n", 0, sep) + 1, sep - 82)
    return any(h.end() == sep for h in _FLAG_HEAD.finditer(block, floor, sep))


# A sentence going on after a comma: ``, as well as``.
_CLAUSE = re.compile(rb",[ \t]+[a-z]+[ \t]+[a-z]")


def _word_in_a_sentence(block: bytes, start: int, end: int) -> bool:
    """``token: word, more words``: one word in small letters after ``name:``, then a comma
    and a clause, is prose that names a setting (an object literal's comma is followed by
    the next key, ``token: abc123, user: bob``)."""
    value = block[start:end]
    return value.isalpha() and value.islower() and _CLAUSE.match(block, end) is not None


def _yaml_like(block: bytes, m: re.Match[bytes], end: int) -> bool:
    """``key: value`` is a setting when the key is quoted, or when a blank follows the colon
    and the value either ends the line or looks machine-made; a plain word followed by more
    words is a sentence (``token_stream: processed 5 items``)."""
    if block[m.start("sep") - 1 : m.start("sep")] in (b'"', b"'"):
        return True
    if m.start("v") == m.end("sep"):
        return False  # image:tag, File.java:98
    return not _PROSE.match(block, end) or bool(_MACHINE_MADE.search(block, m.start("v") + 1, end))


# What may stand before a YAML key on its line: indentation, a list item's dash, a quote,
# and the start of the key's name (``DB_`` of ``DB_PASSWORD``).
_YAML_KEY_HEAD = re.compile(rb"[ \t]*+(?:-[ \t]++)?[\"']?[A-Za-z0-9_.\-]{0,40}+")
_YAML_HEAD_MAX = 128
# A plain scalar's end: a comment (``#`` after a blank), then blanks; a lone ``,`` or ``;``
# after the value is code's (``token: abc123,`` in an object literal), not the value's.
_COMMENT = re.compile(rb"[ \t]#")


def _opens_line(block: bytes, key_at: int) -> bool:
    """The key whose keyword is at ``key_at`` opens its line, as a YAML key does."""
    floor = max(0, key_at - _YAML_HEAD_MAX)
    line = block.rfind(b"\n", floor, key_at) + 1
    if line == 0 and floor > 0:
        return False  # no line start in sight
    return _YAML_KEY_HEAD.fullmatch(block, line, key_at) is not None


def _plain_scalar_end(block: bytes, key_at: int, end: int) -> int:
    """Where an unquoted value after ``key:`` ends: on a line that the key opens (YAML's
    ``password: Yml33 plain with spaces``), at the line's end less a comment, since a
    plain scalar holds blanks; elsewhere (prose, a log message) at ``end``."""
    if not _opens_line(block, key_at):
        return end
    line_end = block.find(b"\n", end)
    line_end = len(block) if line_end < 0 else line_end
    comment = _COMMENT.search(block, end - 1, line_end)
    stop = comment.start() if comment else line_end
    while stop > end and block[stop - 1] in b" \t\r":
        stop -= 1
    if stop - end == 1 and block[end] in b",;":
        return end
    return stop


def _bare_pass(block: bytes, m: re.Match[bytes]) -> bool:
    """``pass`` alone names a secret as a whole word set with ``=`` (``DB_PASS=…``, as the
    environment scan in ``facts`` reads it), quoted (``"pass": …``), or with ``:`` after a
    prefix (``DB_PASS: …``, ``smtp.pass: …``) or in lower case (YAML's ``pass: …``);
    ``PASS: test_x`` and ``--- PASS: TestX`` are test summaries (``PASS=3`` is a count,
    refused later) and ``bypass=1`` a flag."""
    at = m.start()
    if at > 0 and chr(block[at - 1]).isalpha():
        return False
    if m.group("sep") != b":" or block[m.start("sep") - 1 : m.start("sep")] in (b'"', b"'"):
        return True
    prefixed = at > 1 and block[at - 1] in b"_.-" and chr(block[at - 2]).isalnum()
    return prefixed or (block[at : at + 4] == b"pass" and _opens_line(block, at))


# A value runs to its real end, however long (the regex reads its first 4 KB only): a
# quoted one to its closing quote, past backslash-escaped and doubled quotes (``\"``,
# ``''``), a bare one to its first stop character. Each is one possessive pass, linear.
VALUE_END: dict[str, re.Pattern[bytes]] = {
    "dq": re.compile(rb'(?:[^"\\\r\n]|\\[^\r\n]|"")*+'),
    "sq": re.compile(rb"(?:[^'\\\r\n]|\\[^\r\n]|'')*+"),
    "v": re.compile(rb"[^\s\"'&,;<>(){}\[\]]*+"),
    # A bare value that a quote does not end: one with more of the value right after it
    # (``password=Sh31Secret'quote9x``); a quote before a blank, a comma or the line's end
    # closes a string the setting stands in (``"password=abc123", …``). Assignments only:
    # a stream goes on past a window's end with ``v``.
    "vq": re.compile(rb"(?:[^\s\"'&,;<>(){}\[\]]++|[\"']++(?=[^\s\"'&,;<>(){}\[\]]))*+"),
    # JSON inside a JSON string, opened by ``\"``: the units of the outer string (a plain
    # character, ``\x``) and of the inner one (``\\`` is the inner backslash, which escapes
    # the inner character after it), so that ``\\\"`` (an inner quote) is read past and the
    # value ends at the ``\"`` that closes it. Every unit's first two bytes tell it apart.
    "eq1": re.compile(rb'(?:[^"\\\r\n]|\\[^"\\\r\n]|\\\\(?:[^"\\\r\n]|\\[^\r\n]))*+'),
    # Deeper (``\\\"``): past any quote with more backslashes than the opening one.
    "eq2": re.compile(rb'(?:[^"\\\r\n]|\\{3,}+"|\\++(?!"))*+'),
    "eq3": re.compile(rb'(?:[^"\\\r\n]|\\{4,}+"|\\++(?!"))*+'),
}


_STRING_PREFIXES = frozenset(b"r b u f rb br fr rf".split())
_QUOTED_BY = {34: "dq", 39: "sq"}
_FIELD = re.compile(rb"\{[A-Za-z_][\w.]*(?:![rsa])?(?::[^{}]*)?\}")
_PATTERN_SYNTAX = re.compile(rb"\\[dswbDSWB]|\[[^\]]*\][+*?{]|\(\?[:P<=!]|\]\+")


def _code_string(prefix: bytes, text: bytes) -> bool:
    """A prefixed string that is code's: an f-string with a field, a raw string written as a
    regular expression (a class or an escape quantified)."""
    if b"f" in prefix and _FIELD.search(text):
        return True
    return b"r" in prefix and _PATTERN_SYNTAX.search(text) is not None


class _LastRun:
    """The last value run read to its end, so that a match inside it (``token=x1token=x1…``
    on a 10 MB line) does not read the same run again: the cost stays linear."""

    block: bytes = b""
    runs: dict[str, tuple[int, int]] = {}  # noqa: RUF012 - one cache for the module


def value_end(block: bytes, name: str, start: int, end: int) -> int:
    """Where the value that the regex read as ``block[start:end]`` really ends."""
    pattern = VALUE_END.get(name)
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


# YAML's block scalars: ``password: |`` or ``token: >-`` (with a chomping or indentation
# indicator, maybe a comment), then the value on the lines below, indented deeper than the key.
_BLOCK_INDICATOR = re.compile(rb"[|>](?:[1-9]?[-+]?|[-+][1-9])")
_HEADER_END = re.compile(rb"[ \t]*+(?:#[^\r\n]*+)?\r?\n(?:[ \t]{0,80}+\r?\n){0,16}+")
_SPACES = re.compile(rb" *+")
MAX_INDENT = 80  # deeper blocks are read as if at this depth (a sibling may go with them)


@functools.lru_cache(maxsize=64)
def block_lines(indent: int, prefix: bytes = b"") -> re.Pattern[bytes]:
    """The lines of a block scalar whose content is indented ``indent`` spaces: lines at
    least that deep, and blank lines (possessive: each line is read once). ``prefix``: the
    pattern of the log's prefix that each of its lines opens with (``log_prefix``), and
    its blank, before the indentation; a blank line may have it or not."""
    if not prefix:
        return re.compile(rb"(?: {%d}[^\r\n]*+(?:\r?\n|\Z)|[ \t]*+\r?\n)*+" % indent)
    return re.compile(
        rb"(?:%s {%d}[^\r\n]*+(?:\r?\n|\Z)|(?:%s)?+[ \t]*+\r?\n)*+" % (prefix, indent + 1, prefix)
    )


@functools.lru_cache(maxsize=64)
def block_lines_mid(indent: int, prefix: bytes = b"") -> re.Pattern[bytes]:
    """``block_lines`` from inside one of its lines (a stream's window ended there)."""
    return re.compile(rb"[^\r\n]*+(?:\r?\n|\Z)" + block_lines(indent, prefix).pattern)


# What a log writes before each of its lines, so that a block scalar printed in it has its
# lines indented after that text, not from the line's start: a timestamp (a GitHub Actions
# raw log's ``2026-01-02T10:00:00.1234567Z ``, ``docker logs -t``), a source's column
# (docker compose's ``web_1  | ``), a bracket (``kubectl logs --prefix``'s
# ``[pod/api-7d9f/app] ``), or a source and a timestamp; each part ends with a blank. A
# timestamp is any on each line; a source is the same text on every line. Each part is
# bounded and reads each byte once.
_TIMESTAMP = (
    rb"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9}+)?+"
    rb"(?:Z|[+\-][0-9]{2}:?[0-9]{2})"
)
_LOG_PREFIX = re.compile(
    rb"(?P<ts>%s )?+"
    rb"(?P<src>(?:[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}+ {1,40}+\||\[[^\]\r\n]{1,256}+\]) )?+"
    rb"(?P<ts2>%s )?+" % (_TIMESTAMP, _TIMESTAMP)
)


# A log's prefix as its lines share it: whether it has a timestamp before the source, the
# source's text (with its blank), whether it has one after it.
LogShape = tuple[bool, bytes, bool]
_PREFIX_MAX = 400  # longer than any prefix ``_LOG_PREFIX`` reads


def log_prefix(block: bytes, line: int) -> tuple[int, LogShape] | None:
    """Where the log's prefix of the line from ``line`` ends (past its blank), and its
    shape (``LogShape``); None when the line has none."""
    m = _LOG_PREFIX.match(block, line)
    if m is None or m.end() == line:
        return None
    return m.end(), _shape(m)


def _shape(m: re.Match[bytes]) -> LogShape:
    return m["ts"] is not None, m["src"] or b"", m["ts2"] is not None


def after_prefix(block: bytes, line: int, shape: LogShape) -> int:
    """Where the text of the line from ``line`` starts after a log's prefix of ``shape``
    and its blank (a line that holds nothing else may have lost that blank: then where
    the prefix ends); -1 when the line does not open with such a prefix. Reads a few
    hundred bytes at most."""
    m = _LOG_PREFIX.match(block, line)
    if m is not None and m.end() > line and _shape(m) == shape:
        return m.end()
    stop = block.find(b"\n", line, line + _PREFIX_MAX)
    if stop < 0 and len(block) - line < _PREFIX_MAX:
        stop = len(block)
    text = block[line:stop].rstrip(b" \t\r")
    m = _LOG_PREFIX.fullmatch(text + b" ") if stop >= 0 and text else None
    return line + len(text) if m is not None and _shape(m) == shape else -1


def text_start(block: bytes, line: int, end: int) -> int:
    """Where the text of the line ``block[line:end]`` starts after any log's prefix and its
    blank (``line`` when it has none; ``end`` when it holds only a prefix, with its blank or
    without, which a block scalar's lines take for a blank one): for a cut that must not
    fall inside such a block."""
    m = _LOG_PREFIX.match(block, line, end)
    if m is not None and m.end() > line:
        return m.end()
    if end - line > _PREFIX_MAX:
        return line
    text = block[line:end].rstrip(b" \t\r")
    return end if text and _LOG_PREFIX.fullmatch(text + b" ") else line


def block_header(block: bytes, start: int, end: int) -> bool:
    """The line's text ``block[start:end]`` (past any log's prefix) ends with a block
    scalar's header (``key: |``, ``token: >-``, maybe a comment)."""
    return _BLOCK_HEADER.search(block, start, end) is not None


def prefix_pattern(shape: LogShape) -> bytes:
    """The pattern of a log's prefix of ``shape``, without its last blank (a line that is
    blank after the prefix may have lost it): for a stream's regex over a block's lines."""
    ts, src, ts2 = shape
    parts = [
        rb"(?:%s)" % _TIMESTAMP if ts else b"",
        re.escape(src[:-1]) if src else b"",
        rb"(?:%s)" % _TIMESTAMP if ts2 else b"",
    ]
    return b" ".join(part for part in parts if part)


@functools.lru_cache(maxsize=16)
def line_prefix(prefix: bytes) -> re.Pattern[bytes]:
    """The log's prefix ``prefix`` (``prefix_pattern``) at a line's start, with its blank."""
    return re.compile(rb"(?m)^%s ?" % prefix)


_LINE_REST = re.compile(rb"[^\r\n]*+(?:\r?\n|\Z)")
_BLANK_REST = re.compile(rb"[ \t]*+\r?\n")


def _prefixed_lines_end(block: bytes, at: int, shape: LogShape, indent: int) -> int:
    """``block_lines(indent, prefix_pattern(shape)).match(block, at).end()``, read line by
    line without a regex of its own (a log of many sources would compile one for each):
    the lines at least ``indent`` deep after the prefix, and the blank ones."""
    size = len(block)
    deep = b" " * indent
    while at < size:
        text = after_prefix(block, at, shape)
        if text >= 0 and block.startswith(deep, text):
            line = _LINE_REST.match(block, text + indent)
        else:
            line = _BLANK_REST.match(block, at if text < 0 else text)
        if line is None or line.end() == at:
            break
        at = line.end()
    return at


_BLOCK_HEADER = re.compile(
    rb":[ \t]*+(?:[!&]\S{0,100}+[ \t]++){0,2}+[|>][-+1-9]{0,2}+[ \t]*+(?:#[^\r\n]*+)?\r?$"
)


def block_indent(block: bytes, at: int) -> tuple[int, bytes] | None:
    """The indentation of the block scalar whose first value line starts its text at
    ``at`` (the line above it, past blank ones, ends with ``: |``), and the pattern of the
    log's prefix that its lines open with (``b""``: none), or None: for a stream whose
    window ends inside such a value, to drop the rest of it in the next one."""
    line = block.rfind(b"\n", 0, at) + 1
    shape = None
    found = log_prefix(block, line)
    if found is not None and found[0] <= at:
        line, shape = found
    if not 0 < at - line <= MAX_INDENT or block[line:at].strip(b" "):
        return None
    end = block.rfind(b"\n", 0, line) if shape else line - 1  # the line break above
    for _ in range(17):  # the header, past as many blank lines as ``_HEADER_END`` takes
        if end < 0:
            return None
        above = block.rfind(b"\n", 0, end) + 1
        text = block[above:end]
        if shape is not None and text.strip():
            opened = after_prefix(text, 0, shape)
            if opened < 0:
                return None  # a line without the log's prefix: not its block's header
            text = text[opened:]
        if text.strip():
            prefix = b"" if shape is None else prefix_pattern(shape)
            return (at - line, prefix) if _BLOCK_HEADER.search(text) else None
        end = above - 1
    return None


class _LastBlock:
    """The last block scalar read: a header inside it is part of its value, and reading the
    lines below that header again would make a nest of headers quadratic."""

    block: bytes = b""
    span: tuple[int, int] = (0, 0)


_KEY_COLUMN = re.compile(rb" *+(?:-[ \t]++)*+")  # a key's column: past its list items' dashes


def block_scalar(
    block: bytes, key_at: int, after: int, indicator: bytes = b"|"
) -> tuple[int, int] | None:
    """The value lines of the block scalar whose header's indicator ends at ``after``: from
    the first value character to the end of its last line (blank lines after it included,
    so that a stream cut below it knows the block may go on). An indentation indicator
    (``|2``) sets the depth from the key's column, so that a first line deeper than the
    rest (its extra blanks are content) does not hide the lines below it."""
    if _LastBlock.block is block and _LastBlock.span[0] <= key_at < _LastBlock.span[1]:
        return None  # a line of a value already found
    head = _HEADER_END.match(block, after)
    if head is None:
        return None  # ``token: |x``: not a block scalar
    line = block.rfind(b"\n", 0, key_at) + 1  # once per header, which ends its line
    first = body = head.end()
    shape = None
    logged = log_prefix(block, line)
    if logged is not None and logged[0] <= key_at:
        lines = _prefixed_below(block, first, logged[1])
        if lines is not None:  # the block's lines have the header's prefix too
            line, shape = logged
            first, body = lines
    key_indent = _SPACES.match(block, line).end() - line  # type: ignore[union-attr]
    indent = _SPACES.match(block, body).end() - body  # type: ignore[union-attr]
    if indent <= key_indent or block[body + indent : body + indent + 1] in (b"", b"\r", b"\n"):
        return None  # nothing deeper than the key: an empty value
    if block.startswith(b"-----BEGIN ", body + indent):
        return None  # a key block: its own rule reads it to its END line, across windows too
    depth = indent
    digits = [c - 48 for c in indicator if 49 <= c <= 57]
    if digits:
        column = _KEY_COLUMN.match(block, line).end() - line  # type: ignore[union-attr]
        depth = max(key_indent + 1, min(indent, column + digits[0]))
    depth = min(depth, MAX_INDENT)
    if shape is None:
        end = block_lines(depth).match(block, first).end()  # type: ignore[union-attr]
    else:
        end = _prefixed_lines_end(block, first, shape, depth)
    _LastBlock.block, _LastBlock.span = block, (body + indent, end)
    if end - first <= MAX_PLACEHOLDER and all(
        _PLACEHOLDER.fullmatch(text) or is_reference(text)
        for text in block_words(block, body, end)  # each line: a stand-in has no blank
    ):
        return None  # password: |\n  ${DB_PASSWORD}
    return body + indent, end


def _prefixed_below(block: bytes, first: int, shape: LogShape) -> tuple[int, int] | None:
    """The start of the first line below a header that holds text after a log's prefix
    of ``shape`` (past lines that hold only that prefix), and where its text starts; None
    when that line does not open with such a prefix."""
    for _ in range(17):  # as many blank lines as ``_HEADER_END`` takes
        opened = after_prefix(block, first, shape)
        if opened < 0:
            return None
        stop = block.find(b"\n", opened)
        stop = len(block) if stop < 0 else stop + 1
        if block[opened:stop].strip():
            return first, opened
        first = stop
    return None


def block_words(block: bytes, start: int, end: int) -> list[bytes]:
    """The words of the block scalar's value ``block[start:end]`` (as ``block_scalar``
    returned it), without the log's prefix that its lines open with."""
    line = block.rfind(b"\n", 0, start) + 1
    logged = log_prefix(block, line)
    text = block[start:end]
    if logged is None or logged[0] > start or b"\n" not in text:
        return text.split()
    words: list[bytes] = []
    for at, part in enumerate(text.split(b"\n")):
        opened = after_prefix(part, 0, logged[1]) if at else 0
        words += part[max(opened, 0) :].split()
    return words


# After a bare value, a call's or a subscript's bracket (``= os.environ['KEY']``) makes it
# code (when a blank after the separator says it is code, not ``PASSWORD=abc(1``).
_CALL = re.compile(rb"[(\[]")


_NAME_PATH = re.compile(rb"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
_CLOSE = re.compile(rb"[^\r\n]{0,4096}?\)")
# A name as the first argument, the line ending after its comma: the arguments run on
# below (``ConfigValue(credentials.access_key,``).
_NAME_ARGUMENT_ENDS_LINE = re.compile(
    rb"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+[ \t]*+,[ \t]*+(?:\r?\n|\Z)"
)


def _name_argument_ends_line(block: bytes, at: int) -> bool:
    """A name that looks named is the first argument, and the line ends after its comma."""
    m = _NAME_ARGUMENT_ENDS_LINE.match(block, at)
    return m is not None and not made_part(block[at : m.end()])


_OPEN_TO_LINE_END = re.compile(rb"[ \t]*(?:#[^\r\n]*)?(?:\r?\n|\Z)")


def _closes_the_key(block: bytes, key_at: int, sep_at: int, value_at: int) -> bool:
    """The quote before the value closes a string that the key is inside (``print("shlex:
    token=" + repr(t))``, ``'Cookie:' header``): an odd count of that quote between the
    line's start and the separator (a JSON key's own quotes are two)."""
    if block[value_at : value_at + 1] not in _AFTER_A_STRING:
        return False  # ``X="… password="*-2*c2g…"``: a value quoted inside a string
    quote = block[value_at - 1]
    line = block.rfind(b"\n", 0, key_at) + 1
    return block.count(quote, line, sep_at) % 2 == 1


_AFTER_A_STRING = frozenset((b" ", b"\t", b",", b")", b";", b"+", b"]", b"%", b"."))


def _is_call(block: bytes, start: int, end: int) -> bool:
    """``block[start:end]`` names a function that the bracket at ``end`` calls: a path of
    names that look named (see ``expressions.made_part``), whose bracket is closed on the
    line, or ends it, or follows a method's name or opens a string."""
    if block[end] != 40 or not _NAME_PATH.fullmatch(block, start, end):  # "("
        return False
    if made_part(block[start:end]) or close_runs_on(block, end):
        return False
    # closed on the line, or its arguments run on below it, or a method's, or a string's
    return bool(
        _CLOSE.match(block, end)
        or _OPEN_TO_LINE_END.match(block, end + 1)
        or _name_argument_ends_line(block, end + 1)
        or b"." in block[start:end]
        or block[end + 1 : end + 2] in (b'"', b"'")
    )


_BRACKETED = re.compile(rb"(?:[^\s\"'&,;<>{}\[\]()]|\((?!\s))*+")
_VALUE_GOES_ON = re.compile(rb"[A-Za-z0-9!@#%^*+=~]")


def _bracketed_end(block: bytes, end: int) -> int:
    """A bare value read on past its opening brackets (not a call's), and past the closing
    ones that close them: in ``f(password=Zq8v(3W))`` it is ``Zq8v(3W)``, and the last
    bracket is the call's."""
    depth = 0
    at = end
    while at - end < 4096:
        run = _BRACKETED.match(block, at)
        stop = run.end() if run else at
        depth += block.count(b"(", at, stop)
        at = stop
        if block[at : at + 1] != b")":
            return at
        if depth == 0:
            # ``FhLFwtmLO)ap64u``: a bracket that nothing opened, with more of the value
            # right after it, is the password's own (a call's closes before a separator)
            if not _VALUE_GOES_ON.match(block, at + 1):
                return at
            depth += 1
        depth -= 1
        at += 1
    return at


def doubled_quote_at(block: bytes, start: int, end: int) -> int:
    """Where the first doubled quote (``""``, ``''``) in a value that its quote opened lies,
    or -1. A quoted value is read past one (an escaped quote, as CSV and SQL write it), yet
    the string may have ended before it (``"s3cret"" ; …``, a stray quote): a judgement that
    the value is no secret must then hold for the part before it too, or the rest of the
    line (``… registry.example.org``, a template's word) would vouch for a real value."""
    quote = block[start - 1 : start] if start > 0 else b""
    if quote not in (b'"', b"'"):
        return -1
    return block.find(quote * 2, start, end)


def _stands_for_one(block: bytes, start: int, end: int) -> bool:
    """The value is a placeholder (``${DB_PASSWORD}``, ``your_token_here``), read to its end
    and, when it holds a doubled quote, to that quote too (see ``doubled_quote_at``)."""
    if not (_PLACEHOLDER.fullmatch(block, start, end) or named_placeholder(block[start:end])):
        return False
    cut = doubled_quote_at(block, start, end)
    if cut <= start:
        return True
    return bool(_PLACEHOLDER.fullmatch(block, start, cut) or named_placeholder(block[start:cut]))


_A_PATH = re.compile(rb"[\"']?(?:/|~|[A-Za-z]:\\|\$|\.{1,2}/|%[A-Za-z_]+%)")


def _value_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The value's span, unless the key or the value shows it is not a secret."""
    key = m.group(0)[:6]
    glued = m.start() > 0 and chr(block[m.start() - 1]).isalnum()
    if key[:2] == b"pw" and key[2:3] != b"d" and glued:
        return None  # ``npw=``, ``IPW``: another word; ``PW=`` and ``DB_PW=`` name a password
    if key[:3] == b"pat" and glued:
        return None  # ``compat=``, ``spat``: another word; ``PAT=`` and ``GH_PAT=`` a token
    if key[:3] == b"pwd" and (m.start() == 0 or block[m.start() - 1] not in b"_.-"):
        at = m.end("sep")
        while block[at : at + 1] in (b" ", b"\t"):
            at += 1
        if glued or _A_PATH.match(block, at):
            return None  # PWD is the working directory; DB_PWD and Pwd=… are passwords
    bare_pass = key[:4] == b"pass" and key[4:5] not in (b"w", b"p", b"c")
    if bare_pass and not _bare_pass(block, m):
        return None
    sub = m.group("sub")
    if sub and _NOT_SECRET_NAME.search(sub[sub.rfind(b"[") + 2 : -2]):
        return None  # settings["token"]["url"]: the last key names something about it
    if m.group("mv") is not None:
        drawn = _drawn_line_rest(block, m, m.start("mv"))
        return (m.start("mv"), drawn) if drawn else _marked_value(block, m)
    for name in ("eq", "dq", "sq", "bs", "br", "v"):
        start, end = m.span(name)
        if end > start and name == "br":
            value = block[start:end]  # (the engine judges its shape, as every value's)
            return None if _PLACEHOLDER.fullmatch(value) or is_reference(value) else (start, end)
        if end > start:
            if name in ("dq", "sq") and _closes_the_key(block, m.start(), m.start("sep"), start):
                return None  # print("token=" + t), 'Cookie:' header: the quote ends a string
            if name == "bs":
                ok = m.group("sep") == b":" and _BLOCK_INDICATOR.fullmatch(m[name])
                return block_scalar(block, m.start(), end, m[name]) if ok else None
            quote = name + str(m.end("eqo") - m.start("eqo")) if name == "eq" else name
            if name == "v" and block[start:end].lower() not in _STRING_PREFIXES:
                quote = "vq"  # (``token = f"…"``: the quote opens the value's string)
            elif name == "v" and block[end : end + 1] in (b'"', b"'"):
                prefix = block[start:end].lower()
                name = quote = _QUOTED_BY[block[end]]
                start = end = end + 1
                end = value_end(block, quote, start, end)
                if _code_string(prefix, block[start:end]):
                    return None  # f"{user}:{password}", r"[^{}]+": a template, a pattern
            end = value_end(block, quote, start, end)
            env = _ENV_VALUE if name == "v" and _env_line(block, m, start) else None
            if name == "v" and env is None and (env := _env_flag_value(block, m, start)):
                end = start  # (a quoted flag's value is read from its start to its quote)
            part = name == "v" and not env and _connection_part(block, m, start)
            ticks = end - start > 2 and block[start] == block[end - 1] == 96  # `…`
            go_raw = bool(m.group("go")) and ticks
            colon = name == "v" and m.group("sep") == b":"
            # The cheap refusals first (a build log's test counts and prose lines are many):
            # below, only a Go raw string could be kept instead.
            if not go_raw and bare_pass and block[start:end].isdigit():
                return None  # PASS=3 FAIL=0 counts tests
            if not go_raw and colon and not _yaml_like(block, m, end):
                return None  # image:tag, File.java:98, "stream: processed 5 items"
            if name == "v" and not colon and _prose_after_equals(block, m, start, end):
                return None  # "the option --passphrase= can be empty"
            if name == "v" and not colon and _empty_flag(block, m, start):
                return None  # "new --set-credential= and": the blank ends the flag
            if colon and _word_in_a_sentence(block, start, end):
                return None  # '"name" and "token: variables, as well as from …"'
            if env or part:
                # ``SECRET_KEY=p@8i#4a&)ek+@ct)br4``, ``- DB_PASSWORD=Xq7,Lp2z``: a .env or a
                # compose list's value runs to its blank, marks and brackets and all (a
                # connection string's part to its ``;``)
                runs_to = env or _PART_VALUE
                end = runs_to.match(block, end).end()  # type: ignore[union-attr]
                return None if _stands_for_one(block, start, end) else (start, end)
            if _stands_for_one(block, start, end):
                return None
            if go_raw:
                return start + 1, end - 1  # a Go raw string: var dbPassword string = `…`
            if block[start : start + 1] == b"`" or block[start : start + 2] == b"$(":
                return None  # `pass show db`, $(cat /run/secret): a command that fetches one
            if (
                name == "v"
                and block[end : end + 1] in (b"(", b"[", b",")
                and (drawn := _drawn_line_rest(block, m, start))
            ):
                return start, drawn  # ``SECRET_KEY: r9o(ci19w)(fbx4op0``: one drawn word
            if name == "v" and _CALL.match(block, end):
                subscript = (
                    block[end] == 91
                    and (  # "["
                        m.start(name) > m.end("sep") or block[end + 1 : end + 2] in (b'"', b"'")
                    )
                )
                if _is_call(block, start, end) or subscript:
                    return None  # password = get_secret("db"), token = env["TOKEN"]: code
                end = _bracketed_end(block, end)  # Zq8vLp(3Wn5r: a bracket in a password
            elif name == "v" and block[end : end + 1] == b")":
                end = _bracketed_end(block, end)  # jz)ud.27: a close that nothing opened
            if colon and key[:6] != b"cookie":  # a header's cookies: ``id=…; theme=dark``
                end = _plain_scalar_end(block, m.start(), end)
            return start, end
    return None


# A .env line's, or a compose list item's, name from the line's start to its ``=``.
# (at the line's start, or after a list's dash: an indented ``name=value,`` is code's)
_ENV_HEAD = re.compile(rb"(?:export[ \t]+|[ \t]*-[ \t]+)?[A-Za-z_][A-Za-z0-9_.\-]*")
_ENV_VALUE = re.compile(rb"[^\s\"'`]*+")
# A connection string's part runs to its ``;``: an XML character reference in it (a .config
# file's ``&amp;``) is one character of the value, and blanks inside it are the value's
# where more of it follows them up to a ``;`` (``Password=correct horse battery;``).
_PART_WORD = rb"(?:[^\s\"'`;&]++|&(?:amp|lt|gt|quot|apos|#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});|&)"
_PART_VALUE = re.compile(_PART_WORD + rb"*+(?:(?:[ \t]++" + _PART_WORD + rb"++)++(?=[ \t]*+;))?+")
# ODBC's braces hold a value with a ``;`` in it (``PWD={p;w}``, ``}}`` a brace inside),
# the whole value: its close ends the part (a ``;``, a quote, the line's end after it).
# ``Password={ab}Xk9m…;`` is no braced value but a password that opens with a brace.
_ODBC_BRACED = re.compile(rb"\{((?:[^}\r\n]|\}\})++)\}(?=[ \t]*+(?:[;\"'<]|\r?\n|\Z))")
_CONNECTION_PASSWORD_KEYS = frozenset((b"password", b"pwd"))
# A connection string's other parts (ADO.NET, ODBC, JDBC's SQL Server form), before its
# password's.
_CONNECTION_KEYS = re.compile(
    rb"(?i)(?:^|[;\s\"'])(?:server|data[ \t]+source|host|address|addr|database"
    rb"|initial[ \t]+catalog|user[ \t]*id|uid|user(?:name)?|provider|driver|dsn)[ \t]*="
)


# The rest of a line after a setting's value: blanks, maybe a comment, the line's end.
_LINE_END_AFTER_VALUE = re.compile(rb"[ \t]*+(?:[#;][^\r\n]*+)?(?:\r?\n|\Z)")
_ONE_WORD = re.compile(rb"[^\s]++")
_OPEN_ENDS = frozenset(b",;([{")


def _drawn_line_rest(block: bytes, m: re.Match[bytes], start: int) -> int | None:
    """Where the value ends when it is one drawn word to its line's end (past blanks and a
    comment) after a settings file's key that opens its line and a blank after its ``:`` or
    ``=`` (YAML's ``SECRET_KEY: (hwz_q7!fal2…``, an INI file's ``password = Xq7,Lp2z…``):
    brackets and commas are characters of it, as they are of a drawn password, where no
    blank stands between code's arguments or items; None otherwise."""
    if m.group("sep") not in (b":", b"=") or start == m.end("sep"):
        return None
    word = _ONE_WORD.match(block, start)
    if word is None or word.end() - start < 12 or block[word.end() - 1] in _OPEN_ENDS:
        return None
    if not _LINE_END_AFTER_VALUE.match(block, word.end()) or not _opens_line(block, m.start()):
        return None
    text = block[start : word.end()]
    if _CODE_IN_A_WORD.search(text) or _closed_call(text) or not made_part(text):
        return None  # ``os.environ['K1x2']``, ``hash(k1v2)``, ``(x)=>x.k1``: code
    return None if _stands_for_one(block, start, word.end()) else word.end()


_CODE_IN_A_WORD = re.compile(rb"[\"'`]|=>")


def _closed_call(text: bytes) -> bool:
    """The word ends with a bracket that closes all it opened (a call's, a subscript's)."""
    return text[-1:] in (b")", b"]") and all(
        text.count(o) == text.count(c) for o, c in ((b"(", b")"), (b"[", b"]"))
    )


def _marked_value(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """A value that opens with a bracket or a mark (``Password=(_:MK4Tb;``), taken where
    what it is part of says where it ends: a connection string's part (to its ``;``), a
    URL's query parameter (``?user=app&password=)oiVC…``, to its ``&``), a .env line's value
    (to its blank). Elsewhere it is code's (``token=(a, b)``, ``key=[1, 2]``): left."""
    start = m.start("mv")
    if not _glued_equals(m, start):
        return None
    key_at = m.start()
    query = (
        key_at > 0
        and block[key_at - 1] in b"?&"
        and b"://" in block[max(block.rfind(b"\n", 0, key_at) + 1, key_at - 2048) : key_at]
    )
    if query:
        runs = _QUERY_VALUE
    elif _connection_part(block, m, start):
        braced = _ODBC_BRACED.match(block, start)
        if braced is not None:
            value = braced.group(1)
            if _PLACEHOLDER.fullmatch(value) or is_reference(value):
                return None
            return braced.span(1)
        runs = _PART_VALUE
    elif _env_line(block, m, start):
        runs = _ENV_VALUE
    else:
        return None
    found = runs.match(block, start)
    end = found.end() if found else start
    if end - start < 8 or _stands_for_one(block, start, end):
        return None
    if block[start] == 123 and block[end - 1] == 125 and _stands_for_one(block, start + 1, end - 1):
        return None  # ``PWD={${DB_PASSWORD}}``: a reference in ODBC's braces
    return start, end


_QUERY_VALUE = re.compile(rb"[^\s\"'`&#]*+")


def _glued_equals(m: re.Match[bytes], start: int) -> bool:
    """The separator is ``=`` and the value (from ``start``) follows it with no blank."""
    return m.group("sep") == b"=" and m.end("sep") == start


def _connection_part(block: bytes, m: re.Match[bytes], start: int) -> bool:
    """The setting is a connection string's password after another part (``…;User Id=sa;
    Password=value;``: ADO.NET's, ODBC's, blanks after each ``;`` too), ``=`` with no blank
    around it or blanks on both sides (``Password = value;``, which ADO.NET trims), on a
    line that names a server, a database or a user as such strings do (not a URL's
    ``;jsessionid=…;password=…&x=1``): its value runs to the ``;``, an ``&`` or a bracket in
    it one of its characters, as a drawn password holds."""
    if m.group("sep") != b"=":
        return False
    key = block[m.start() : m.start("sep")]
    spaced = key.endswith((b" ", b"\t")) and start > m.end("sep")
    if not (_glued_equals(m, start) or spaced):
        return False
    if key.rstrip(b" \t").lower() not in _CONNECTION_PASSWORD_KEYS:
        return False
    before = m.start()
    while before > 0 and block[before - 1] in (32, 9):  # " ", "\t"
        before -= 1
    if before == 0 or block[before - 1] != 59:  # ";"
        return False
    line = max(block.rfind(b"\n", 0, before) + 1, before - 1024)
    return _CONNECTION_KEYS.search(block, line, before) is not None


# ``docker run -e NAME=V`` (``--env``, ``--env=``; podman's, kubectl run's): the setting is
# the flag's argument, a shell word. Quoted (``-e 'NAME=V'``, ``-e "NAME=V"``), its value is
# the quote's whole inside; bare, it runs to its blank, an ``&`` inside the word its own
# (``Tr0ub4dor&GY7rVR``) but not ``&&``, ``&>`` or an ``&`` that ends the word (operators).
_ENV_FLAG = re.compile(rb"(?:-e|--env)(?:[ \t]{1,8}|=)\Z")
_ENV_FLAG_NAME = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_FLAG_VALUES = {
    b"": re.compile(rb"(?:[^\s\"'`&]++|&(?=[^&\s>]))*+"),
    b"'": re.compile(rb"[^'\r\n]*+"),
    b'"': re.compile(rb'(?:[^"\\\r\n]++|\\[^\r\n])*+'),
}


def _env_flag_value(block: bytes, m: re.Match[bytes], start: int) -> re.Pattern[bytes] | None:
    """How far the value of ``-e NAME=V`` (or ``--env``) runs, when the setting is that
    flag's argument (``=`` glued to the name and the value); None when it is not."""
    if not _glued_equals(m, start):
        return None
    at = m.start()
    floor = max(at - 128, block.rfind(b"\n", 0, at) + 1)
    while at > floor and block[at - 1] in _ENV_FLAG_NAME:
        at -= 1
    if at == m.start("sep") or block[at] in b"0123456789":
        return None
    quote = block[at - 1 : at] if at > floor and block[at - 1] in b"\"'" else b""
    at -= len(quote)
    flag = _ENV_FLAG.search(block, max(floor, at - 16), at)
    if flag is None or (flag.start() > floor and block[flag.start() - 1] not in b" \t"):
        return None
    return _FLAG_VALUES[quote]


def _env_line(block: bytes, m: re.Match[bytes], start: int) -> bool:
    """The setting is a ``.env`` line's (or a compose list's item): ``NAME=value`` with no
    blank around the ``=``, the name opening its line, or its text after a log's prefix
    (``web_1  | DB_PASSWORD=…``, a timestamp: a container's or a runner's log)."""
    if not _glued_equals(m, start):
        return False
    sep = m.start("sep")
    line = block.rfind(b"\n", 0, sep) + 1
    if _ENV_HEAD.fullmatch(block, line, sep) is not None:
        return True
    logged = log_prefix(block, line)
    return logged is not None and _ENV_HEAD.fullmatch(block, logged[0], sep) is not None


def credential(m: re.Match[bytes], group: str) -> tuple[int, int] | None:
    """A header credential: long, or with a digit or symbol, so that prose is left alone."""
    value = m.group(group)
    if value.lower() == b"sso-key":
        return None  # GoDaddy's scheme with no credential after it
    if len(value) >= 20 or any(c in b"0123456789._-+/=~" for c in value):
        return m.span(group)
    return None


def _key_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``…key = value`` when the word before ``key`` makes it a secret (api, access, …)."""
    floor = max(0, m.start() - 12)
    floor = max(floor, block.rfind(b"\n", floor, m.start()) + 1)  # not the line above
    if not _KEY_OWNERS.search(block[floor : m.start()].lower()):
        return _key_material(block, m)
    return _value_span(block, m)


def _key_material(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``key: |`` over lines of key material: ``key`` alone names no secret (a cache's
    ``key: |`` holds a template or ``Linux-node-4f2a…``), but a block whose every line is
    base64, the first of them machine-made (the standard ``named`` sets for ``key: Xk3j…``),
    holds one."""
    if not m.group("bs") or m.group("rest"):
        return None  # keyboard: |, and one-line values (``named`` reads those)
    found = _value_span(block, m)
    if found is None:
        return None
    lines = block_words(block, found[0], found[1])
    if not all(_BASE64_LINE.fullmatch(line) for line in lines):
        return None
    return found if lines and looks_random(lines[0]) else None


_BASE64_LINE = re.compile(rb"[A-Za-z0-9+/]++=*+")


# A Digest header's parameters (``username="admin", realm=…, nonce=…``) are no credential;
# its ``response`` is, a hash that a weak password is found from.
_PARAMETER = re.compile(rb"[A-Za-z][A-Za-z0-9_\-]*=")
_DIGEST_RESPONSE = re.compile(rb"(?i:[ \t,]response=\"?)([^\s\",]{1,512})")


def _digest_response(block: bytes, start: int) -> Found:
    """``Authorization: Digest …, response="…"``: the response's value on the line."""
    line_end = block.find(b"\n", start)
    found = _DIGEST_RESPONSE.search(block, start - 1, len(block) if line_end < 0 else line_end)
    return None if found is None else (*found.span(1), Kind.AUTHORIZATION)


def _auth_span(block: bytes, m: re.Match[bytes]) -> Found:
    """``Authorization: <scheme> <credential>``, or ``auth = value``."""
    if m.group("cred") is None:
        return _value_span(block, m)
    if m.group("scheme") == b"digest" and _PARAMETER.match(m.group("cred")):
        return _digest_response(block, m.start("cred"))
    if m.group("scheme") and all(map(is_reference, m.group("cred").split(b":"))):
        return None  # ``sso-key $GODADDY_KEY:$GODADDY_SECRET``: a key's and a secret's names
    found = m.span("cred") if m.group("scheme") else credential(m, "cred")
    return None if found is None else (*found, Kind.AUTHORIZATION)


# After a flag's word: a stop, or two more words of a sentence (``mysql --password
# correcthorse db`` gives one word after it, a command's argument).
_SENTENCE_GOES_ON = re.compile(rb"[.,;:]|[ \t]+[a-z]+[ \t]+[a-z]")
_METAVAR = re.compile(rb"[A-Z][A-Z_]+(?::[A-Za-z_]+)?")
_WORD_AFTER = re.compile(rb"[^ \t\r\n\"']{1,4096}")


def flag_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``--password hunter2``: the next word is the value; ``--password --verbose`` asks for it
    at a prompt (the next word is another flag). A quoted value is read to its quote."""
    end = m.end()
    if block[end : end + 1] in (b"'", b'"'):
        return _quoted_flag_value(block, end)
    if b"," in block[end - 2 : end]:
        # a list's next item after the flag's string is its value only as a string
        # (``['--password', 'V']``, as a failed command prints it); a bare one is code's:
        # ``add_argument("--api_key", type=str)``, ``run(["tool", "--token", token])``
        return None
    found = _WORD_AFTER.match(block, end)
    stop = found.end() if found else end
    if block[stop - 1 : stop] == b"]" and _bracket_open(block, end):
        stop -= 1  # ``[--token TOKEN]``: a usage line's bracket closes, no part of the value
    if stop == end or block[end] == 45 or _PLACEHOLDER.fullmatch(block, end, stop):  # "-"
        return None
    if is_named_placeholder_value(block[end:stop].rstrip(b"`'\".,;:)")):
        return None  # ``--change-passphrase your-user-id``
    word = block[end:stop].rstrip(b"`'\".,;:)")
    if len(word) < 3 or _METAVAR.fullmatch(word) or word.lstrip(b"(")[:1] == b"-":
        return None  # ``--token V``, ``--pass-secret NAME:ROLE``, ``(-r)``: usage's names
    if word.isalpha() and word.islower() and _SENTENCE_GOES_ON.match(block, end + len(word)):
        return None  # ``--password respectively.``, ``--password description to the``
    if len(word) <= 8 and word.isalpha() and word.islower():
        return None  # "--save-token file", "--token to keep it": a word of prose or a choice
    return end, stop


def _bracket_open(block: bytes, at: int) -> bool:
    """A square bracket is open before ``at`` on its line (read 256 bytes back at most): a
    usage line's optional flag (``[--token TOKEN]``)."""
    line = block.rfind(b"\n", max(0, at - 256), at) + 1
    floor = max(line, at - 256)
    return block.count(b"[", floor, at) > block.count(b"]", floor, at)


def _quoted_flag_value(block: bytes, quote_at: int) -> tuple[int, int] | None:
    """``--master-user-password 'Correct horse 9'``: the inside of the quotes on the line,
    unless it stands for the value (``"$PW"``, ``'<password>'``, ``'PASSWORD'``)."""
    start = quote_at + 1
    line_end = block.find(b"\n", start)
    close = block.find(block[quote_at : quote_at + 1], start, None if line_end < 0 else line_end)
    if close <= start or close - start > 4096:
        return None
    value = block[start:close]
    if _PLACEHOLDER.fullmatch(value) or is_named_placeholder_value(value):
        return None
    if len(value) < 3 or _METAVAR.fullmatch(value) or value[:1] == b"-":
        return None
    return start, close


# HCL's input variables: ``variable "db_password" { default = "…" }``, on one line or over the
# block's lines (its type, description and ``sensitive`` may come first). The block is read
# for 512 bytes at most and not past a brace, so a stream's context still holds the header
# when the default is in the next window, and the regex stays linear.
_HCL = (
    rb"variable[ \t]+\"(?P<name>[a-z0-9_.\-]{1,80})\"[ \t]*\{[^{}]{0,512}?"
    rb"(?<![a-z0-9_])default[ \t]*=[ \t]*"
    rb"(?:\"(?P<dq>[^\"\r\n]{1,4096})|(?P<v>[^\s\"'&,;<>(){}\[\]]{1,4096}))"
)
# HCL's variable block opens, for the prefilter: it keeps the lines to its default with any
# hit on this one (``hcl_below``), which a regex from ``variable`` did not where another
# find began earlier on the line.
HCL_SUPERSET = r"variable[ \t]+\"[^\"\n]*\"[ \t]*\{"
_HCL_OPEN = line_searcher(HCL_SUPERSET.encode())
_HCL_DEFAULT = line_searcher(rb"[^a-z0-9_]default[ \t]*=")  # (after the block's brace)


def hcl_below(block: bytes, line: int, end: int) -> int:
    """``end`` (past the break of the hit line from ``line``), or past the line of the
    ``default =`` of a variable block that opens on it (``_HCL`` reads it within 512 bytes
    that hold no brace)."""
    if block.find(b"{", line, end) < 0:
        return end
    opened = _HCL_OPEN(block, line, end)[0][1]
    if opened < 0:
        return end
    reach = min(opened + 512, len(block))
    for brace in (block.find(b"{", opened, reach), block.find(b"}", opened, reach)):
        if brace >= 0:
            reach = min(reach, brace)
    found = _HCL_DEFAULT(block, opened - 1, reach)[0][1]
    return end if found <= end else past_line(block, found)


# Names that name a secret: the keywords of the rules above, and ``key`` after its owner.
_SECRET_NAME = re.compile(
    rb"pass|secret|token|credential|pwd|cookie|auth(?!or)"
    rb"|(?:api|access|private|signing|encryption|client)[_\-]?key"
)


def _plain_value(block: bytes, name: str, start: int, end: int) -> tuple[int, int] | None:
    """A value read to its end, unless it stands for a secret (a placeholder, a reference)."""
    end = value_end(block, name, start, end)
    value = block[start:end]
    if _PLACEHOLDER.fullmatch(value) or named_placeholder(value) or is_reference(value):
        return None
    return start, end


def _hcl_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """The default of a variable whose name names a secret (not ``db_password_file``)."""
    name = m["name"]
    if not _SECRET_NAME.search(name) or _NOT_SECRET_NAME.search(name):
        return None
    for group in ("dq", "v"):
        start, end = m.span(group)
        if end > start:
            return _plain_value(block, group, start, end)
    return None


# A table row whose first cell names a secret (``| DB_PASSWORD | hunter2-xyz |``, a CLI's
# ``|  SecretString  |  …  |``): its later cells hold the value. The row opens its line.
_TABLE_NAME = (
    rb"[ \t]*\|[ \t]*[`*]{0,2}[a-z0-9_.\-]{0,40}"
    rb"(?:pass|secret|token|credential|pwd|cookie|auth|(?:api|access|private|signing)[_\-]?key)"
)
_TABLE_ROW = searcher(  # read from a place within the text to its end
    re2.compile(rb"(?m:^)" + _TABLE_NAME + rb"(?P<rest>[a-z0-9_.\-]{0,40})[`*]{0,2}[ \t]*\|")
)
# A table's separator line (the row above it is a header): cells of dashes, each maybe with
# a colon at either end, and a bar at least (``|---|:--|``, ``--- | ---``), not YAML's
# ``---``, a rule of dashes nor a key's ``-----BEGIN`` line.
_SEP_CELL = rb"[ \t]*+:?-++:?[ \t]*+"
_TABLE_SEPARATOR = re.compile(
    rb"\r?\n[ \t]*+(?:\|" + _SEP_CELL + rb"(?:\|" + _SEP_CELL + rb")*+\|?"
    rb"|" + _SEP_CELL + rb"\|(?:" + _SEP_CELL + rb"\|)*+(?:" + _SEP_CELL + rb")?)"
    rb"[ \t]*+\r?(?:\n|\Z)"
)
_TABLE_CELLS = 32  # cells read after the name (a row is short; a line of pipes is not a row)
_TABLE_BYTES = 8192
# Words that head a table's value column rather than fill it, and a feature table's marks.
_COLUMN_HEADS = frozenset(
    b"value values description type default required name notes example status scope "
    b"yes no on off set unset enabled disabled optional supported n/a".split()
)
_TABLE_LEAST = 4  # a mark (``x``, ``-``, a check mark) is shorter than any password
# A date, a time, a version or a count: what a table's other columns hold beside a token.
_NOT_A_VALUE = re.compile(rb"(?i:v?[0-9]+(?:[.\-:/t][0-9]+)*z?)")


def _table_value(cell: bytes, *, alone: bool) -> bool:
    """A cell that holds a secret: one word, not a placeholder, a reference or a mask. In a
    row of two cells any such word is the value; beside other columns (an environment, a
    date) only a machine-made one is (eight characters or more, letters and a digit)."""
    if len(cell) < _TABLE_LEAST or len(cell) > _TABLE_BYTES or any(c in b" \t" for c in cell):
        return False  # empty, or words: a description
    if _PLACEHOLDER.fullmatch(cell) or named_placeholder(cell) or is_reference(cell):
        return False
    if looks_like_placeholder(cell) or cell.lower() in _COLUMN_HEADS:
        return False
    if alone:
        return True
    digit = any(48 <= c <= 57 for c in cell)
    letter = any(65 <= c <= 90 or 97 <= c <= 122 for c in cell)
    return len(cell) >= 8 and digit and letter and not _NOT_A_VALUE.fullmatch(cell)


def _cell_span(block: bytes, start: int, end: int) -> tuple[int, int]:
    """A cell's text without its padding (and a code span's back-quotes)."""
    while start < end and block[start] in b" \t":
        start += 1
    while end > start and block[end - 1] in b" \t\r":
        end -= 1
    if end - start >= 2 and block[start] == block[end - 1] and block[start] in b"`'\"":
        return start + 1, end - 1
    return start, end


class TableRows(Rule):
    """The value cells of each table row named by its first cell, read once per row."""

    def __init__(self) -> None:
        super().__init__(Kind.SECRET, b"|", lower=True, gate=_TABLE_NAME)

    def spans(self, block: bytes, lowered: bytes, start: int) -> Iterator[Span]:
        size = len(lowered)
        pos = start
        while pos < size:
            found = _TABLE_ROW(lowered, pos, size)
            s, e = found[0]
            if s < 0:
                return
            name_end = found[1][1]
            line_end = lowered.find(b"\n", e)
            line_end = size if line_end < 0 else line_end
            pos = line_end + 1
            if _NOT_SECRET_NAME.search(lowered, max(s, name_end - 12), name_end):
                continue  # | token_url | …: the name says what the value is about
            if _TABLE_SEPARATOR.match(lowered, line_end):
                continue  # a header row: its cells name columns
            stop = min(line_end, e + _TABLE_BYTES)
            cells: list[tuple[int, int]] = []
            at = e
            while at < stop and len(cells) < _TABLE_CELLS:
                bar = lowered.find(b"|", at, stop)
                if bar < 0:
                    break  # the text after the last bar is no cell
                cells.append(_cell_span(block, at, bar))
                at = bar + 1
            alone = len(cells) == 1
            for cs, ce in cells:
                if _table_value(block[cs:ce], alone=alone):
                    yield cs, ce, Kind.SECRET


def _pat_span(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """``pat`` names a personal access token, and a pattern as often (``pat = "*.py"``,
    ``pat: Pattern``): its value counts only where it looks machine-made."""
    span = _value_span(block, m)
    return span if span is not None and looks_random(block[span[0] : span[1]]) else None


ASSIGNMENT_RULES: tuple[Rule, ...] = (
    *(
        rule(
            Kind.SECRET,
            kw + _TAIL,
            lower=True,
            check=_pat_span if kw.startswith(b"pat(") else _value_span,
            gate=_GATES.get(kw),
        )
        for kw in _KEYWORDS
    ),
    rule(Kind.SECRET, rb"key" + _TAIL, lower=True, check=_key_span),
    rule(Kind.SECRET, _AUTH, lower=True, check=_auth_span),
    rule(Kind.SECRET, _HCL, lower=True, check=_hcl_span, gate=rb"variable[ \t]+\""),
    TableRows(),
)
