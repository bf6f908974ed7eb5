"""Values named as secrets in the syntaxes the assignment rules do not read, and entropy.

``assignments`` reads ``password=…``, ``"token": …`` and their kin whatever the value. This
module reads the wider family, where the name alone says less, so the value must also look
machine-made (``looks_random``): ``VENDOR_KEY=…``, ``Using Key=…``, ``const HEROKU_KEY =
"…"``, ``cloudflare: "…"``, ``--key …``, and any long high-entropy value that follows a
secret-naming word on its line (``the api token is 3kJ8…``). The same string without such a
word is left alone: hashes and ids in logs must stay readable. XML is read too:
``<password>…</password>`` (whatever the value, as the element names a secret outright),
``<name>…secret…</name><value>…</value>`` and ``key="ApiKey" value="…"``.

All of it is one RE2 regex over the lowered block: linear time on any input (see
``formats``), one pass for every syntax.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator

import re2

from relay.redact.expressions import NAME_WORDS, made_part
from relay.redact.formats import holds_a_format
from relay.redact.linear import Spans, searcher
from relay.redact.placeholders import (
    is_named_placeholder_value,
    is_public,
    is_reference,
    looks_like_placeholder,
)
from relay.redact.rules import Kind, LineBudget, Span

# Words that name a secret outright: a value under them is one, whatever it looks like.
STRONG = (
    "password", "passwd", "passphrase", "secret", "token", "pwd", "credential", "credentials",
    "apikey",
    "api_key", "api-key", "private_key", "privatekey", "access_key", "accesskey",
)  # fmt: skip
# Words that may name a secret: a value under them is one if it looks machine-made.
WEAK = (
    "key", "api", "auth", "authorization", "private", "signature", "session", "cookie", "pass",
    "access",
    "bearer", "salt",
)  # fmt: skip
# Vendors whose name, as a setting, holds that vendor's key (``cloudflare: "…"``).
VENDORS = (
    "cloudflare", "heroku", "stripe", "github", "gitlab", "slack", "twilio", "sendgrid",
    "mailgun", "mailchimp", "datadog", "sentry", "npm", "pypi", "docker", "aws", "azure",
    "gcp", "openai", "anthropic", "shopify", "okta", "auth0", "vault", "discord", "telegram",
    "firebase", "algolia", "pusher", "mapbox", "newrelic", "pagerduty", "snyk", "vercel",
    "netlify", "supabase", "digitalocean", "linode", "hetzner", "huggingface", "postman",
    "grafana", "databricks", "notion", "linear", "jira", "atlassian", "bitbucket", "circleci",
)  # fmt: skip
_WORDS = "|".join(sorted({*STRONG, *WEAK, *VENDORS}, key=len, reverse=True))
_SECRET_WORDS = "|".join(sorted({*STRONG, *WEAK}, key=len, reverse=True))
# (and a key that its owner's word names, as the assignment rules read one: .NET's
# ``<add key="encryptionKey" value="…">``, ``signing_key``, ``ClientKey``)
_STRONG_RE = re.compile(
    "|".join((*STRONG, "(?:signing|encryption|client|master)[_-]?key")).encode()
)
_ANY_WORD_RE = re.compile(_SECRET_WORDS.encode())
# A name whose last word is ``pass`` after an account's owner (``smtp_pass``, ``db.pass``,
# ``SmtpPass``): a password's, as the assignment rules read ``smtp_pass=…``; in an element
# or an attribute pair (``<add key="smtp_pass" value="…"/>``) the name is enough, as a
# strong word's is (not ``bypass``). A pass of something else (a renderer's ``<RenderPass>``,
# a filter's ``<LowPass>``, a build's ``test.pass``, ``<Pass>`` alone) names no password:
# its value is masked only when it looks drawn.
_PASS_OWNERS = (
    rb"smtp|e?mail|imap|pop3?|s?ftps?|db|database|sql|mysql|mssql|pg|psql|postgres(?:ql)?"
    rb"|oracle|redis|mongo(?:db)?|ldap|bind|admin|root|user|usr|login|account|acct|auth"
    rb"|wifi|wlan|wpa|vnc|ssh|rdp|sudo|(?:key|trust)store|jks|cert|pfx|smb|samba|mq|amqp"
    rb"|rabbit(?:mq)?|kafka|broker|app|api|svc|service|sys|system|server|client|device"
    rb"|router|vpn|web|site|portal|git|svn|repo|registry|docker|nexus|proxy_?auth|master"
)
_PASS_NAME = re.compile(
    rb"(?:^|[^A-Za-z0-9]|(?<=[a-z0-9])(?=[A-Z]))(?i:(?:" + _PASS_OWNERS + rb")[_.:\-]?pass)[\"']?$"
)


def _key_span(text: bytes, spans: Spans, name: str) -> tuple[int, int] | None:
    """Where the name of the value group ``name`` is, or None (a group named by no key):
    an element's whole name for ``<…>value</…>`` (``<apiKey>`` is read as ``api`` then the
    word ``key``)."""
    key_at = _KEY_INDEX.get(name)
    if key_at is None or spans[key_at][0] < 0:
        return None
    start, end = spans[key_at]
    if name == "x":
        start = text.rfind(b"<", 0, start) + 1
    return start, end


# Values are open-ended in the regex (a count is compiled into as many copies) and held to
# MAX_VALUE and MIN_RANDOM here. A value that must look random must hold a digit
# (``looks_random``), so the regex asks for one: a word after a name is no match at all.
MAX_VALUE = 4096


def _digit(klass: str, least: int = 8) -> str:
    """A run of ``klass`` that holds a digit and has ``least`` characters on one side of it
    (the whole length is checked after): ``max_tokens=512`` and a path's "114" are no match."""
    more = least - 1
    return f"(?:{klass}{{{more},}}[0-9]{klass}*|{klass}*[0-9]{klass}{{{more},}})"


_DQ = _digit(r'[^"\\\r\n]')
_SQ = _digit(r"[^'\r\n]")
_BQ = _digit(r"[^`\r\n]")  # a Go or JavaScript raw string
_BARE_CHAR = r"""[^\s"'&,;<>(){}\[\]\\]"""
_BARE_FIRST = r"""[^\s"'&,;<>(){}\[\]\\:]"""
# A bare value does not open with a second colon: ``test_x.py::test_y`` is a scope, not a
# setting (the assignment rules refuse ``::`` too).
_BARE = (
    f"(?:{_BARE_FIRST}{_BARE_CHAR}{{6,}}[0-9]{_BARE_CHAR}*"
    f"|(?:{_BARE_FIRST}{_BARE_CHAR}*)?[0-9]{_BARE_CHAR}{{7,}})"
)
_WORD = _digit(r"""[^\s"']""")
# (not opening with a dash: ``sshpass -pVALUE`` keeps its flag, the shell rule takes the value)
_FREE_CHAR = r"[a-z0-9+/_\-.~]"
# (its digit may be its first character: ``7UcQHprT…`` holds no other)
_FREE = f"(?:[0-9]{_FREE_CHAR}{{8,}}|[a-z0-9+/_.~]{_digit(_FREE_CHAR, 9)})"

# After the word, its name goes on only past a separator or a digit (``db_password_2``), and
# not past a colon (``token_stream.py::test_12`` names no setting):
# ``passed``, ``author``, ``tokenizer`` and ``keyboard`` are other words.
_REST = r"(?:[_.\-0-9][a-z0-9_.\-]{0,40})?"

# A name/value pair's name (``name: DB_PASSWORD``, ``"Name": "DB_PASSWORD"``, ``key=…``) and
# the ``value`` beside it, on the same line or the next: Kubernetes env lists, ECS task
# definitions, JSON. ``valueFrom:`` is another field.
_PAIR_NAME = (
    rf"(?:name|key)[\"']?[ \t]*[:=][ \t]*[\"']?"
    rf"(?P<k8>[a-z0-9_.\-]*(?:{_SECRET_WORDS})[a-z0-9_.\-]*)"
)
_PAIR_VALUE = (
    r"[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*)?[\"']?value[\"']?[ \t]*[:=][ \t]*"
    r"(?:\"(?P<nv1>[^\"\r\n]+)\"|'(?P<nv2>[^'\r\n]+)'|(?P<nv3>\$\{[^\s}]{1,80}\}|[^\s\"',}\]]+))"
)

PATTERN = (
    # - name: DB_PASSWORD / value: "…", {"name": "DB_PASSWORD", "value": "…"}
    rf"{_PAIR_NAME}{_PAIR_VALUE}"
    # key = value, key: value, "key": "value", key := value, key => value
    rf"|(?P<k1>{_WORDS}){_REST}\\{{0,3}}[\"']?[ \t]{{0,40}}(?:=>|:=|=|:)[ \t]{{0,40}}"
    rf"(?:\\{{0,3}}\"(?P<a1>{_DQ})|'(?P<a2>{_SQ})'|`(?P<a4>{_BQ})`|(?P<a3>{_BARE}))"
    # <password>value</password>, <db:api-key attr="x">value</db:api-key>
    rf"|<[a-z0-9_.:\-]{{0,40}}(?P<k2>{_WORDS}){_REST}(?:[ \t][^>\r\n]{{0,100}})?>"
    rf"(?P<x>[^<\r\n]+)</"
    # <name>fs.s3a.secret.key</name> <value>value</value>
    r"|<name>(?P<k3>[^<\r\n]{1,80})</name>\s{0,40}<value>(?P<hv>[^<\r\n]+)</value>"
    # <entry key="password">value</entry>
    r"|<[a-z0-9_.:\-]{1,40}[ \t][^>\r\n]{0,100}?(?:key|name)=\"(?P<k7>[^\"\r\n]{1,80})\""
    r"[^>\r\n]{0,100}>(?P<ex>[^<\r\n]+)</"
    # <value>value</value> with no name: it must look machine-made
    r"|<value>(?P<vv>[^<\r\n]+)</value>"
    # <add key="ApiKey" value="value"/>
    r"|(?:key|name)=\"(?P<k4>[^\"\r\n]{1,80})\"[ \t]+value=\"(?P<av>[^\"\r\n]+)\""
    # --key value, --auth=value, -token value
    rf"|[\s'\"]--?(?P<k5>[a-z0-9\-]{{0,30}}(?:{_SECRET_WORDS})(?:-[a-z0-9\-]{{0,20}})?)[ =]"
    rf"(?P<fv>[^\s\"'\-]{_WORD})"
    # a secret-naming word, then a long value further on the line
    # (``token 3kJ8…``, ``the api token is 3kJ8…``, ``key: "3kJ8…"``): the word, a separator,
    # at most three short words, then the value. Not across ``=``: ``key=value 3f9a…``
    # already has its value, and what follows it is the next field.
    rf"|(?P<k6>{_SECRET_WORDS})(?:[_.\-][a-z0-9_\-]{{1,20}})?(?:[ \t]*[:>(,\"'][ \t]*|[ \t]+)"
    rf"(?:[a-z]{{1,12}}[ \t]+){{0,3}}(?P<ev>{_FREE}={{0,2}})"
)
_VALUE_GROUPS = (
    *("nv1", "nv2", "nv3", "a1", "a2", "a4", "a3", "x", "ex", "vv", "hv", "av", "fv", "ev"),
)
_KEY_OF = {
    **{"a1": "k1", "a2": "k1", "a3": "k1", "a4": "k1", "x": "k2", "hv": "k3", "av": "k4"},
    **{"fv": "k5", "ex": "k7", "nv1": "k8", "nv2": "k8", "nv3": "k8"},
}
# Where the name alone is enough: an element, a name/value pair, named by a strong word.
_NAME_ENOUGH = frozenset({"x", "ex", "hv", "av", "nv1", "nv2", "nv3"})
MIN_RANDOM = 16
MIN_FREE_STANDING = 20  # a value that no syntax ties to the word must be longer


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = 8 << 20  # 2 MB less cache at peak than 32 MB, as fast on a long log
    return options


REGEX = re2.compile(PATTERN.encode(), _options())
_GROUP = {name.decode(): index for name, index in REGEX.groupindex.items()}
_VALUE_INDEX = tuple((name, _GROUP[name]) for name in _VALUE_GROUPS)
_KEY_INDEX = {name: _GROUP[key] for name, key in _KEY_OF.items()}
# Where a match is comes from RE2's DFA alone; its groups are then read over that span
# only. A value open to the line's end (``key=…`` for a megabyte) would otherwise have its
# groups followed, at the slower pace that needs, across the whole line, to be refused.
_BOUNDS = searcher(
    re2.compile(re.sub(r"\(\?P<\w+>", "(?:", PATTERN).encode(), _options()), within=True
)
_SEARCH_AT = searcher(REGEX, anchored=True, within=True)  # both read within the text
# The name word of the syntaxes that a bare ``key`` may open (``key: …``, ``key 3kJ8…``).
_NAME_OF = {**{name: _GROUP["k1"] for name in ("a1", "a2", "a3", "a4")}, "ev": _GROUP["k6"]}
_LONGEST_MATCH = MAX_VALUE + 512  # the longest name, separator and attributes, and a value


def entropy(value: bytes) -> float:
    """Shannon entropy in bits per character."""
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


# A relative or absolute path to a file: folders, then a name with an extension.
_PATH = re.compile(rb"/?(?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*\.[a-z0-9]{1,5}")
# An OpenPGP key's id or fingerprint, as release notes print it (public, and in capitals).
_FINGERPRINT = re.compile(rb"(?:0x)?(?:[0-9A-F]{16}|[0-9A-F]{40})")
# Code's names: CamelCase words (``VP8RecordCoeffTokens``), snake case in small letters or
# in capitals (``gnutls_x509_crt_get_pk_oid``, ``GNUTLS_PRIVKEY_SIGN_FLAG``).
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_SNAKE_NAME = re.compile(rb"[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){2,}")
_UNSAID = re.compile(rb"^[^aeiouyAEIOUY]*$|[^aeiouyAEIOUY]{4}")


def named_identifier(value: bytes) -> bool:
    """A name from code, not drawn characters: snake case whose parts look named, or
    CamelCase words of three letters or more (one shorter at most) around one number at
    most, each a word one can say. Random base62 of twenty characters reads so about once
    in thousands of draws."""
    if _SNAKE_NAME.fullmatch(value):
        return not made_part(value)
    if not _IDENTIFIER.fullmatch(value):
        return False
    words = NAME_WORDS.findall(value)
    letters = [w for w in words if not w.isdigit()]
    if len(words) - len(letters) > 1 or len(letters) < 2:
        return False
    if sum(len(w) < 3 for w in letters) > 1 or any(len(w) > 12 for w in letters):
        return False
    # words one can say: each part in small letters holds a vowel and no run of four
    # consonants (``Coeff``, ``Tokens``; drawn characters give ``fzv``, ``Pwcf``), but for
    # one short abbreviation in a name of three words at most (``XMLHttpRequest``, ``SecretStr``)
    unsaid = [w for w in letters if not w.isupper() and _UNSAID.search(w)]
    return not unsaid or (len(unsaid) == 1 and len(unsaid[0]) <= 4 and len(letters) <= 3)


# A name's variants after it (``xcb_render_glyphs_8/16/32``), and a private name's leading
# underscores (``_libssh2_ecdsa_get_curve_type``): the name is what is left.
_VARIANTS = re.compile(rb"(?:/[A-Za-z0-9]{1,3})+$")


def _snake_name(word: bytes) -> bool:
    """Snake case whose parts look named, less its leading underscores and its variants."""
    word = _VARIANTS.sub(b"", word).lstrip(b"_")
    return _SNAKE_NAME.fullmatch(word) is not None and not made_part(word)


# A part of a file's or a font's name: a word one can say, or a short number.
_SAID = re.compile(rb"[A-Z]?[a-z]{2,}|[0-9]{1,4}")
_NAME_PARTS = re.compile(rb"[-.]")


def _named_parts(word: bytes) -> bool:
    """Names joined by dashes and dots (``SourceHanSans-Regular.41``): a CamelCase name one
    can say, and each other part a word one can say or a short number."""
    parts = _NAME_PARTS.split(word)
    if len(parts) < 2 or not any(_IDENTIFIER.fullmatch(p) and named_identifier(p) for p in parts):
        return False
    said = (_SAID.fullmatch(p) and not (p.isalpha() and _UNSAID.search(p)) for p in parts)
    return all(named_identifier(p) or ok for p, ok in zip(parts, said, strict=True))


def looks_random(value: bytes, *, least: int = MIN_RANDOM) -> bool:
    """Machine-made: long, mixed like random text, and of high entropy. Words, paths,
    counters, versions and names are not (``/app/src/index.js``, ``test_parser_12``)."""
    if len(value) < least or is_reference(value) or is_named_placeholder_value(value):
        return False
    if _PATH.fullmatch(value):
        return False  # ``tofu/conflicting/1C005AF3-1.txt``: a file's path
    # (each test one pass in C: bytes' own case mapping and deletion, not a loop per byte)
    upper = value.lower() != value
    lower = value.upper() != value
    digit = len(value.translate(None, _DIGITS)) < len(value)
    if not value.translate(None, _HEX_LOWER) or not value.translate(None, _HEX_UPPER):
        return len(value) >= 32 and digit and (upper or lower) and entropy(value) >= 3.0
    if upper and lower and digit:
        return entropy(value) >= 3.0
    return (upper or lower) and digit and len(value) >= 24 and entropy(value) >= 3.8


_DIGITS = b"0123456789"
_HEX_LOWER = b"0123456789abcdef"
_HEX_UPPER = b"0123456789ABCDEF"


def _span(block: bytes, lowered: bytes, spans: Spans) -> tuple[int, int] | None:
    """The value's span, if it is a secret: named outright in an element, or machine-made."""
    for name, index in _VALUE_INDEX:
        start, end = spans[index]
        if start < 0 or end <= start:
            continue
        if end - start > MAX_VALUE:
            return None
        value = block[start:end]
        if is_reference(value.strip()) or is_public(value):
            return None
        if name == "vv" and holds_a_format(value):
            return None  # a token the format table names itself
        key_span = _key_span(lowered, spans, name)
        key = None if key_span is None else lowered[key_span[0] : key_span[1]]
        named_by = _NAME_OF.get(name)
        if named_by is not None and _a_cache_key(lowered, spans[named_by], block[start:end]):
            return None
        if name in _NAME_ENOUGH and key is not None and key_span is not None:
            if not _ANY_WORD_RE.search(key):
                return None  # <name>fs.defaultFS</name>: not a secret's name
            # (the name as written, its case kept: ``SmtpPass`` reads as two words)
            written = block[key_span[0] : key_span[1]]
            strong = _STRONG_RE.search(key) or _PASS_NAME.search(written)
            if strong and not looks_like_placeholder(value, words=False):
                return start, end
        word = value.rstrip(b".,")
        if _FINGERPRINT.fullmatch(word) or _snake_name(word):
            return None  # ``GnuPG key: 0x7EC2DBB6F4DBF434``, ``key: gnutls_x509_crt_verify``
        if name == "ev" and (named_identifier(word) or _named_parts(word)):
            return None  # ``fix signature for VP8RecordCoeffTokens()``
        if name == "ev" and block[end : end + 1] == b"(" and _SNAKE_NAME.fullmatch(word):
            return None  # ``access in snd_emu10k1_pcm_alloc()``: a function, called in prose
        least = MIN_FREE_STANDING if name == "ev" else MIN_RANDOM
        return (start, end) if looks_random(value, least=least) else None
    return None


# ``key`` right after these words names a cache's key, not a secret: actions/cache prints
# ``Cache restored from key: Linux-node-4f2a…`` and ``Cache saved with key: …`` in nearly
# every log, and ``primary key``, ``restore-key``, ``cache_key`` are its inputs' names.
_CACHE_KEY = re.compile(rb"(?:^|[^a-z0-9])(?:from|with|cache|primary|restore)[ \t_.\-]{1,3}$")


# A cache key's value: words or versions joined by dashes, then a hex digest
# (``Linux-node-94c0…``, ``setup-python-Linux-x64-python-3.11.6-pip-94c0…``).
_CACHE_KEY_VALUE = re.compile(rb"(?P<words>(?:[A-Za-z0-9._]{1,24}-){2,16})[0-9a-f]{32,128}")
# A part of it: a word one can say (maybe with a short number: ``x64``, ``py311``), or a
# version (``3.11.6``, ``v20``).
_CACHE_WORD = re.compile(rb"[A-Za-z]{1,16}[0-9]{0,3}|v?[0-9]{1,4}(?:\.[0-9]{1,4}){0,3}")


def _a_cache_key(lowered: bytes, span: tuple[int, int], value: bytes = b"") -> bool:
    """The name is ``key`` alone, after a word that makes it a cache's key, or opening its
    line (or after a cache's words) before a value shaped as one: named words, one of them
    a runner's platform, before a hex digest (a key's drawn characters are no words, and
    ``key: 3f9a…``, a digest alone, stays a secret)."""
    start, end = span
    if start < 0 or lowered[start:end] != b"key":
        return False
    if _CACHE_KEY.search(lowered, max(0, start - 12), start) is not None:
        return True
    if start > 0 and lowered[start - 1] in _NAME_CHARS:
        return False  # ``signing-key``, ``ssh_key``: a name that ends in ``key``
    line = lowered.rfind(b"\n", 0, start) + 1
    if lowered[line:start].strip(b" \t") and not _CACHE_WORDS.search(
        lowered, max(line, start - 64), start
    ):
        return False  # ``API key: prod-app-<hex>``: a key of something else's
    m = _CACHE_KEY_VALUE.fullmatch(value.strip())
    if m is None:
        return False
    words = m.group("words")[:-1].split(b"-")
    if not any(w.lower() in _PLATFORMS for w in words):
        return False  # ``key: prod-app-<hex>``: a cache key names the runner's platform
    return all(_CACHE_WORD.fullmatch(w) and not _unsaid(w) for w in words)


# A cache's own words before its ``key`` (``Cache hit for key:``, ``restore-keys``)
_CACHE_WORDS = re.compile(
    rb"(?<![a-z0-9])(?:cache[ \t][a-z \t]{0,32}(?:for|from|with)|restore-keys:?)[ \t]+$"
)
# A runner's platform, one of a cache key's parts (``Linux-node-<hex>``)
_PLATFORMS = frozenset(
    b"linux windows macos darwin ubuntu osx win win32 win64 x64 x86 amd64 arm64 aarch64 arm".split()
)


_NAME_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.-")


def _unsaid(word: bytes) -> bool:
    """Letters no one says (``Xkqm``, ``qzrt``): no vowel, or four consonants in a row; an
    abbreviation of three letters at most may have none (``x64``, ``npm``)."""
    letters = bytes(c for c in word if chr(c).isalpha())
    return len(letters) > 3 and _UNSAID.search(letters) is not None


class NamedScanner:
    """The engine's interface (see ``rules.Rule.spans``) over the one RE2 regex."""

    def spans(self, block: bytes, lowered: bytes, start: int) -> Iterator[Span]:
        size = len(lowered)
        budget = LineBudget(lowered)
        pos = start
        while pos <= size:
            s, e = _BOUNDS(lowered, pos, size)[0]
            if s < 0:
                return
            pos = e if e > s else e + 1
            if e - s > _LONGEST_MATCH:
                continue  # its value is longer than any secret's (``MAX_VALUE``)
            if (stop := budget.spent(s)) >= 0:
                yield s, stop, Kind.SECRET  # a line of near-matches: see ``LineBudget``
                pos = stop + 1
                continue
            found = _span(block, lowered, _SEARCH_AT(lowered, s, e))
            if found is not None:
                yield found[0], found[1], Kind.SECRET


SCANNER = NamedScanner()
