"""Text that stands for a secret without being one, shared by every rule that finds secrets.

Documentation, templates and earlier redactions are full of token-shaped strings that are
not secrets: ``ghp_xxxxxxxx…``, ``AKIAXXXXXXXXXXXXXXXX``, ``sk_live_0000…``, ``<your-token>``,
``####``, ``***``, ``[REDACTED]``, and references to a secret held elsewhere (``${VAR}``,
``$(cmd)``, ``var.db_password``, a back-quoted command). Redacting them costs the reader the
clue and protects nothing, so they are left alone — with one exception: a value this node
itself holds as a secret is masked whatever it looks like (see ``engine``).
"""

from __future__ import annotations

import itertools
import re

from relay.redact.linear import latin1_searcher

# Filler: x, X, 0, *, #, dots, dashes and underscores, with a run of four (or three of the
# symbols). A body is filler when nine in ten of its characters are: a format's own
# separators and letters (``Q~``, ``-us``, ``NRAL``) may remain. A body that is partly real
# (``github_pat_11AAAAAAA0xxxx…``) may be a real token cut short by a careless mask, and
# is redacted. A random body is never nine tenths filler.
# (the filler runs: xxxx, XXXX, 0000, ***, ### and ..., see ``_filler_run``)
_FILLER_CHARS = b"xX*#0._-/"  # (and a webhook's path separators: ``TXXXXX/BXXXXX/XXXX``)
FILLER_SHARE = 0.9
# Words that only a template or a document puts where a token goes.
# (each long or delimited, so that a random body holds one with odds of one in millions).
_WORDS = (
    rb"(?i:your[_\-]|[_\-]here\b|placeholder|redacted|changeme|change_me|dummy|insert[_\-]"
    rb"|replace[_\-]?me|example[_\-]?key|example|randomstring|random[_\-]string"
    rb"|(?:string|token|key|secret|value)here)"
)
# Ascending runs (``123456789``, ``abcdefgh``): seven in a row, which random text holds with
# odds of one in billions.
_ASCENDING = (
    rb"(?i:0123456|1234567|2345678|3456789|abcdefg|bcdefgh|cdefghi|defghij|efghijk|fghijkl"
    rb"|ghijklm|hijklmn|ijklmno|jklmnop|klmnopq|lmnopqr|mnopqrs|nopqrst|opqrstu|pqrstuv"
    rb"|qrstuvw|rstuvwx|stuvwxy|tuvwxyz)"
)


# Searched by RE2, every byte a character: one pass in C over a body, where Python's ``re``
# tries each alternative at each byte (what ``re`` finds, since the patterns are ASCII and
# fold ASCII letters only, as ``re`` does on bytes).
_WORDS_SEARCH = latin1_searcher(_WORDS)
_ASCENDING_SEARCH = latin1_searcher(_ASCENDING)
MAX_PERIOD = 4  # ``123123123…``, ``abababab``: a short unit repeated is a document's filler
MIN_DISTINCT = 3  # a body of eight or more characters with fewer distinct ones is filler


def looks_like_placeholder(body: bytes, *, words: bool = True) -> bool:
    """True when a token's body (its prefix removed) is filler or, with ``words``, a
    template's word (a token never holds one; a password may).

    Each test is enough alone; the cheapest come first (filler, a document's commonest
    stand-in, is a few searches in C)."""
    if _filler_run(body):
        filler = len(body) - len(body.translate(None, _FILLER_CHARS))
        if filler >= FILLER_SHARE * len(body):
            return True
    if len(body) >= 8 and len(set(body)) < MIN_DISTINCT:
        return True
    if len(body) >= 8 and (_periodic(body) or _mostly_ascending(body) or _mostly_runs(body)):
        return True
    if len(body) >= 6 and body.isdigit() and all(b == a + 1 for a, b in itertools.pairwise(body)):
        return True  # ``123456``: ascending digits, the stand-in of every tutorial
    return words and _WORDS_SEARCH(body, 0, len(body))[0][0] >= 0


def _filler_run(body: bytes) -> bool:
    """The body holds a run of filler (each a C search, no generator between)."""
    return (
        b"xxxx" in body
        or b"XXXX" in body
        or b"0000" in body
        or b"***" in body
        or b"###" in body
        or b"..." in body
    )


def _mostly_ascending(body: bytes) -> bool:
    """Half the body or more is ascending runs of four or more (``123456789…``,
    ``abcdefgh…``), and one of seven at least: a document's stand-in, not random text (a
    real id may open with ``1234567890``; the rest of it is then random)."""
    if _ASCENDING_SEARCH(body, 0, len(body))[0][0] < 0:
        return False
    covered, run = 0, 1
    lowered = body.lower()
    for a, b in itertools.pairwise(lowered):
        if b == a + 1:
            run += 1
            continue
        covered += run if run >= 4 else 0
        run = 1
    covered += run if run >= 4 else 0
    return 2 * covered >= len(body)


_RUN = re.compile(rb"(.)\1{3,}")


def _mostly_runs(body: bytes) -> bool:
    """Half the body or more is runs of four or more of one character
    (``5555555dAAAAA7777777CcccC…``): typed by hand, never drawn at random. Runs of the
    filler characters do not count: a body that is filler and some real characters
    (``11AAAAAAA0xxxx…``) may be a real token cut short by a careless mask."""
    if _RUN.search(body) is None:
        return False  # most bodies: no run at all, read once
    runs = (m for m in _RUN.finditer(body) if body[m.start()] not in _FILLER_CHARS)
    return 2 * sum(m.end() - m.start() for m in runs) >= len(body)


def _periodic(body: bytes) -> bool:
    """The body is one short unit repeated: digits (``12312312…``) or a pair (``abab…``).
    (A mixed unit repeated, ``Ab1Ab1…``, is the tests' stand-in for a token: kept a token.)"""
    most = MAX_PERIOD if body.isdigit() else 2
    return any(body[p:] == body[:-p] for p in range(1, most + 1) if len(body) > 2 * p)


# A whole value that refers to a secret kept elsewhere, or masks one.
REFERENCE = re.compile(
    rb"%\([A-Za-z_][A-Za-z0-9_.]*\)[sdifrx]|\$\{\{[^\r\n]*?\}\}|\$\{[^}\r\n]*\}|\$\([^)\r\n]*\)|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%"
    rb"|`[^`\r\n]*`|(?:var|local|data|module|secrets|env|vars|inputs|steps|needs)\.[A-Za-z_][\w.\-\[\]\"']*"
    rb"|\{\{.*\}\}|<[^<>\r\n]*>|\[(?i:redacted|masked|hidden|filtered|secret|removed)[^\]\r\n]*\]"
    rb"|\*+|#+|x{3,}|X{3,}|\.\.\.|(?i:<?redacted>?|masked|hidden|\(hidden\)|none|null|nil)"
    # the secret stores' and deploy tools' own references: 1Password's ``op://``, Vault's
    # ``vault:`` (and vals' ``ref+vault://``), ``sm://``, Google Secret Manager's resource
    # name, an ARM template's expression, Octopus' and Azure DevOps' ``#{…}``, token
    # replacement's ``@@…@@`` and ``__…__``, Grafana's ``$__env{…}``
    rb"|(?:op|sm|ref\+[a-z0-9]+)://[^\s\"']+|vault:[A-Za-z0-9_/.\-]+(?:#[A-Za-z0-9_/.\-]*)?"
    rb"|projects/[A-Za-z0-9_.\-]+/secrets/[A-Za-z0-9_.\-]+(?:/versions/[A-Za-z0-9_.\-]+)?"
    rb"|\[(?:parameters|variables|reference|concat|format|listKeys)\([^\r\n]*\)\]"
    rb"|#\{[A-Za-z_][A-Za-z0-9_.\-]*\}#?|@@[A-Za-z_][A-Za-z0-9_]*@@|__[A-Z][A-Z0-9_]*__"
    rb"|\$__(?:env|file)\{[^}\r\n]*\}"
    # Ruby's interpolation of the environment (``#{ENV['DB_PASSWORD']}``,
    # ``#{ENV.fetch("TOKEN")}``; a default after the name is a literal: a secret)
    rb"|#\{ENV(?:\[[\"']?[A-Za-z_][A-Za-z0-9_]*[\"']?\]"
    rb"|\.fetch\([\"'][A-Za-z_][A-Za-z0-9_]*[\"']\))\}"
    # Symfony's environment variable processors (``%env(DB_PASSWORD)%``,
    # ``%env(resolve:DATABASE_URL)%``)
    rb"|%env\((?:[a-z_\-]+:)*[A-Za-z_][A-Za-z0-9_]*\)%"
    # a XAML markup extension (``{Binding Password}``, ``{StaticResource Key}``)
    rb"|\{(?:Binding|TemplateBinding|StaticResource|DynamicResource|x:[A-Za-z]+)"
    rb"(?:[ ,][^{}\r\n]*)?\}"
)


def is_reference(value: bytes) -> bool:
    """True when the whole value is a reference, a mask or a template slot."""
    return REFERENCE.fullmatch(value) is not None


# Keys published by design: Stripe's and Mapbox's publishable keys, Flutterwave's public
# key, SSH public keys, Nostr public keys, age recipients. A name beside them
# (``setPublishableKey``, ``public_key:``) does not make them secret.
_PUBLIC = re.compile(
    rb"pk_(?:live|test)_|pk\.eyJ|FLWPUBK|ssh-(?:rsa|ed25519|dss) |ecdsa-sha2-|AAAA[BC]3NzaC1|npub1"
    # an age recipient: ``age1`` and 58 characters of bech32 (its secret key is
    # ``AGE-SECRET-KEY-1…``)
    rb"|age1[02-9ac-hj-np-z]{58}(?![A-Za-z0-9])"
)


def is_public(value: bytes) -> bool:
    """True when the value is a key that its owner publishes (it opens with a public prefix)."""
    return _PUBLIC.match(value) is not None


# A template's words, and the plain words a template puts beside them (``your_api_key_here``,
# ``insert-your-password``, ``ChangeMe123``). A value is a placeholder when it is nothing but
# these, one of the first kind at least, and fillers (separators, a short or ascending number):
# ``MyCompanyExample2024`` and ``dummyPass-Kx9q2`` hold a real word or random characters too.
_TEMPLATE_WORDS = frozenset(
    b"your here placeholder redacted changeme change me dummy insert replace example examples "
    b"sample samples randomstring random fake mock foo bar baz foobar todo tbd fixme xxx "
    b"test testing tests demo not something blah sensitive".split()
)
_PLAIN_WORDS = frozenset(
    b"my the a an to of for goes put enter add set new some own real actual generated "
    b"secret secrets password passwd pass pwd passphrase token tokens key keys api apikey "
    b"access private client app user admin root db database value string str text "
    b"here auth credential credentials id name it this that with i am is".split()
)
_WHOSE = frozenset(b"user username proxy a an the".split())
_VOCABULARY = _TEMPLATE_WORDS | _PLAIN_WORDS | _WHOSE
_SECRET_NAMES = frozenset(
    b"secret secrets password passwd pass pwd passphrase token key apikey credential".split()
)
_LONGEST_WORD = max(map(len, _VOCABULARY))
_PHRASE_PARTS = re.compile(rb"[a-z]+|[0-9]+")
_PHRASE_SHAPE = re.compile(rb"[A-Za-z0-9_\-. !\"':%]{3,80}")


def is_placeholder_phrase(value: bytes) -> bool:
    """The value is essentially a template's word: its letters are only template and plain
    words (run together or apart), one a template's at least, and its digits a short or an
    ascending number (``your_token_here``, ``examplekey``, ``changeme123``, ``Dummy-Secret``);
    or it is only a secret's own name and whose it is (``pass``, ``user:passwd``)."""
    if _PHRASE_SHAPE.fullmatch(value) is None:
        return False
    template = named = False
    plain = True
    count = 0
    for part in _PHRASE_PARTS.findall(value.lower()):
        if part.isdigit():
            if len(part) > 4 and not _mostly_ascending(part):
                return False
            continue
        words = _segment(part)
        if words is None:
            return False
        template = template or any(w in _TEMPLATE_WORDS for w in words)
        count += len(words)
        named = named or any(w in _SECRET_NAMES for w in words)
        plain = plain and all(w in _SECRET_NAMES or w in _WHOSE for w in words)
    # Plain words alone make a template too when they are the secret's own name or more
    # than one word (``pass``, ``user:passwd``, ``a secret``); ``admin`` alone does not.
    return template or (named and plain)


def _segment(run: bytes) -> list[bytes] | None:
    """``run`` cut into words of the vocabulary (``yourpasswordhere``), or None."""
    best: list[list[bytes] | None] = [[]] + [None] * len(run)
    for end in range(1, len(run) + 1):
        for start in range(max(0, end - _LONGEST_WORD), end):
            head = best[start]
            if head is not None and run[start:end] in _VOCABULARY:
                best[end] = [*head, run[start:end]]
                break
    return best[len(run)]


# A document marks its example value by ending it with a template's word in capitals
# (``…bPxRfiCYEXAMPLEKEY``, ``…-RANDOMSTRINGHERE``): seven letters or more, which a random
# tail spells with odds of one in billions.
_MARKED_TAIL = re.compile(
    rb"(?:EXAMPLE(?:KEY|TOKEN|SECRET)?|PLACEHOLDER|RANDOMSTRING(?:HERE)?|[A-Z]{3,}HERE|CHANGEME)$"
)


def is_named_placeholder_value(value: bytes, *, counted: bool = True) -> bool:
    """A value under a secret's name that a template or a document holds: filler, a
    template's phrase (see ``is_placeholder_phrase``), a document's marked example or a
    token's prefix with counting after it (``xoxb-12345-abcd234``). A template's word
    inside random characters does not make one (``MyCompanyExample2024`` and
    ``dummyPass-Kx9q2`` are passwords)."""
    return (
        looks_like_placeholder(value, words=False)
        or is_placeholder_phrase(value)
        or _MARKED_TAIL.search(value) is not None
        or (counted and _counted_parts(value))
    )


_PARTS = re.compile(rb"[A-Za-z0-9]+")


def _counted_parts(value: bytes) -> bool:
    """A word (a token's prefix: ``xoxb``), then two parts or more, each made of ascending
    runs of three or more alone (``12345``, ``abcd234``), six characters of them at least
    (``Welcome-123456`` is a password people choose), digits among
    them (``abc_def_ghi`` may be someone's password): a document
    counting where the random part goes, which random characters spell with odds of one in
    billions."""
    parts = _PARTS.findall(value)
    if len(parts) < 2 or b"".join(parts) != value.translate(None, b"-_."):
        return False
    rest = parts[1:] if parts[0].isalpha() else parts
    counted = sum(map(len, rest)) >= 6 and any(c in b"0123456789" for p in rest for c in p)
    return len(rest) >= 2 and counted and all(_ascending_runs(p) for p in rest)


def _ascending_runs(part: bytes) -> bool:
    """``part`` is runs of three or more characters each one past the last (``abcd234``)."""
    run = 1
    lowered = part.lower()
    for a, b in itertools.pairwise(lowered):
        if b == a + 1:
            run += 1
        elif run >= 3:
            run = 1
        else:
            return False
    return run >= 3
