"""A named value that is code, told by what stands around it on its line.

A setting's value stands alone: ``password: hunter2``, ``TOKEN="…"``. In code the same
name is followed by a type (``auth: BasicAuth | None = None,``), by a variable of its own
name (``self._cookie_jar = cookie_jar``), by an expression (``TOKEN = CHAR ^ CTL``, ``auth =
await …``), or is one of several targets (``proxy, auth = val``, ``user = password = None``).
Each is judged by shape: a type is a class's name or a builtin's with the punctuation of a
signature after it, a variable is an identifier that names no drawn characters (see
``made_part``). Pure functions over a block and a span; ``values`` calls them.
"""

from __future__ import annotations

import re

# A type: a dotted name, maybe subscripted (``Optional[str]``, ``dict[str, Any]``), maybe a
# union of several (``BasicAuth | None``).
_ONE_TYPE = rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\[[^\]\r\n]{0,120}\]+)?"
_TYPE = re.compile(_ONE_TYPE + rb"(?:[ \t]*\|[ \t]*" + _ONE_TYPE + rb")*")
# What follows a parameter's or a field's type: a default, the next parameter, the end of
# the signature or of the line.
_AFTER_TYPE = re.compile(
    rb"[ \t]*(?:=[^=]|,|\)|\]|:[ \t]*(?:#[^\r\n]*)?(?=\r?\n|\Z)|(?=\r?\n|\Z)|#)"
)
_BUILTIN_TYPES = frozenset(
    b"object str bytes int bool float any none dict list tuple set type callable "
    b"optional union sequence mapping iterable awaitable".split()
)
_CAMEL_WORDS = re.compile(rb"[A-Z][a-z0-9]+|[A-Z]+(?![a-z])")
_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# a name's words: CamelCase parts, capitals, numbers (``VP8RecordCoeffTokens``)
NAME_WORDS = re.compile(rb"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
# After a value: another target (``user = password = None``), or an operator and an
# operand (``CHAR ^ CTL``, ``Ignore + PlainToken``).
_CHAINED = re.compile(rb"[ \t]*=[ \t]*[^=\s]")
_OPERATOR = re.compile(rb"[ \t]+(?:[-+*/^&|%@]|\*\*|//|<<|>>|and|or|if)[ \t]+[A-Za-z_(\"'0-9]")
_KEYWORD_EXPRESSION = frozenset(b"await yield lambda not new typeof sizeof".split())
_TARGETS = re.compile(rb",[ \t]*[A-Za-z_][\w.]*[ \t]*$")


# Digits, then letters with a small one, then digits again (``Tr0ub4dor``, ``k9x2m``), or
# in a mixed-case part a digit run that a small letter follows (``Xk92mLq``), or capitals
# that start words of one or two letters (``QxApJbvJySe``): typed or drawn, not named. A
# name keeps its digits in one run, after a word or before a capital (``X25519``,
# ``sha256``, ``getX509Cert``, ``MLKEM768X25519PrivateKey``), and its words long.
_DIGITS_APART = re.compile(rb"[0-9][A-Za-z]*[a-z][A-Za-z]*[0-9]")
_DIGIT_THEN_SMALL = re.compile(rb"[0-9][a-z]")
_PARTS = re.compile(rb"[A-Za-z0-9]+")
_DIGIT = re.compile(rb"[0-9]")
_LETTER_WORDS = re.compile(rb"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def made_part(value: bytes) -> bool:
    """A part of the value (between dots, colons, dashes, underscores) that no one would
    name a thing: its digits fall apart, or follow no word in a mixed-case part."""
    for part in _PARTS.findall(value):
        if _DIGITS_APART.search(part):
            return True
        mixed = part.lower() != part and part.upper() != part
        if mixed and _DIGIT_THEN_SMALL.search(part):
            return True
        words = _LETTER_WORDS.findall(part) if mixed else []
        if len(words) >= 4 and sum(map(len, words)) < 2.5 * len(words):
            return True
        if len(words) >= 3 and len(words[0]) == len(words[1]) == 1 and _DIGIT.search(part):
            return True  # ``qWKmciqxx8``: a word of one letter after another, and a digit
    return False


def _type_like(text: bytes) -> bool:
    """A type's name: a builtin, or a class's CamelCase name of two words at least, six at
    most (``JeZtocNtujFcYzimvdAfgMtktil3OSch``, a drawn key's many short "words", is none)."""
    last = text.rsplit(b".", 1)[-1].split(b"[", 1)[0]
    if last.lower() in _BUILTIN_TYPES:
        return True
    return last[:1].isupper() and 2 <= len(_CAMEL_WORDS.findall(last)) <= 6 and len(last) <= 40


def is_annotation(block: bytes, start: int, end: int, *, made: bool) -> bool:
    """``name: Type`` in a signature or a class body: the value and what follows it on the
    line read as a type (and a default, or the next parameter). A type alone at the end of
    its line is one only when it is a builtin, a union or subscripted (``password:
    SecretStr`` may as well be a setting's value); ``made``: the value has drawn parts."""
    colon = block.rfind(b":", max(0, start - 4), start)
    if colon < 0 or block[colon + 1 : start].strip(b" \t") or made:
        return False
    head = block[block.rfind(b"\n", 0, colon) + 1 : colon]
    if b"{" in head and b"(" not in head:
        return False  # ``{user: admin, password: SuperSecret, …}``: a flow map's value
    m = _TYPE.match(block, start)
    if m is None:
        return False
    after = _AFTER_TYPE.match(block, m.end())
    if after is None:
        return False
    text = block[start : m.end()]
    compound = b"|" in text or b"[" in text
    if not (compound or _type_like(text.split(b"|")[0].strip())):
        return False
    typed_end = after.group().strip() in (b"", b":") or after.group().lstrip().startswith(b"#")
    return not typed_end or compound or text.lower() in _BUILTIN_TYPES


def bare(block: bytes, start: int) -> bool:
    """The value has no quote before it: code's operand, not a string."""
    return block[start - 1 : start] not in (b'"', b"'", b"`")


def is_same_variable(name: bytes, value: bytes) -> bool:
    """``self._cookie_jar = cookie_jar``, ``_DHPrivateKey = DHPrivateKey``: the value is a
    variable whose words are the name's, or its last ones."""
    if not _IDENTIFIER.fullmatch(value):
        return False
    mine = [w.lower() for w in NAME_WORDS.findall(name.rsplit(b".", 1)[-1])]
    theirs = [w.lower() for w in NAME_WORDS.findall(value.rsplit(b".", 1)[-1])]
    if not mine or not theirs:
        return False
    return mine[-len(theirs) :] == theirs or theirs[-len(mine) :] == mine


# A format's conversion (``%s``, ``%0.1f``, ``%(name)s``) or field (``{0}``, ``{}``,
# ``{user}``), and the operator or call that fills it after the string's quote.
_CONVERSION = re.compile(
    rb"%(?:\([A-Za-z_]\w*\))?[-#0 +]*[0-9]*(?:\.[0-9]*)?[sdifrxXeEgGc]|\{[A-Za-z_0-9]*\}"
)
_FILLED = re.compile(rb"[\"'][ \t]*(?:%[ \t]|\.format\()")
_MORE_ARGUMENTS = re.compile(rb"[\"'][ \t]*,[ \t]*[\"']")  # another string after it
_CALL_BEFORE = re.compile(rb"[A-Za-z_][\w.]*\([ \t]*[\"']$")


def is_format_template(block: bytes, start: int, end: int) -> bool:
    """A quoted value that a format fills: it holds a conversion, and ``%`` or
    ``.format(`` follows its quote (``'%s:%s' % (user, pw)``, ``'{0}:{1}'.format(…)``)."""
    return bool(_CONVERSION.search(block, start, end) and _FILLED.match(block, end))


def is_first_of_arguments(block: bytes, start: int, end: int) -> bool:
    """A quoted value that is a call's first argument, another string after it
    (``keyring.get_password("system", "user")``): a service's or a key's name; a setter's
    value stays a value (``setPassword("…")``, ``setPassword("…", true)``)."""
    line = block.rfind(b"\n", 0, start) + 1
    return bool(
        _CALL_BEFORE.search(block, max(line, start - 120), start)
        and _MORE_ARGUMENTS.match(block, end)
    )


def is_expression_around(block: bytes, start: int, end: int, *, made: bool) -> bool:
    """The bare value is an operand or a target, not a literal: another ``=`` follows it
    (``user = password = None``), an operator does (``CHAR ^ CTL``), it is a keyword that
    opens an expression (``await …``), or the name is the last of several targets
    (``proxy, auth = val``)."""
    value = block[start:end]
    if made or not bare(block, start) or not _IDENTIFIER.fullmatch(value):
        return False
    if value in _KEYWORD_EXPRESSION and block[end : end + 1] in (b" ", b"\t"):
        return True
    if _CHAINED.match(block, end) or _OPERATOR.match(block, end):
        return True
    line = block.rfind(b"\n", 0, start) + 1
    eq = block.rfind(b"=", line, start)
    # the ``=`` that binds the value (only blanks between): ``x, A=1 --password V`` is a flag
    return (
        eq > line
        and not block[eq + 1 : start].strip()
        and _TARGETS.search(block, line, eq) is not None
    )


# Words that may follow a call's close with no blank in code (``getpass()or key``).
_AFTER_A_CLOSE = re.compile(rb"(?:or|and|if|else|in|is|not|for)(?![A-Za-z0-9_])")


def close_runs_on(text: bytes, opening: int) -> bool:
    """The bracket opened at ``opening`` closes on its line with a letter or digit right
    after it (``Qb_(a4i58Vkc-h)Qpv``), a word no code puts there: no call's close runs on
    into one. Brackets within quotes are not counted (``getpass(prompt=":)")``)."""
    depth = 0
    quote = 0
    for at in range(opening, min(len(text), opening + 4096)):
        byte = text[at]
        if byte in (10, 13):  # "\n", "\r": the line ends unclosed
            return False
        if quote:
            if byte == quote and text[at - 1] != 92:  # its close, unless escaped ("\\")
                quote = 0
            continue
        if byte in (34, 39):  # '"', "'"
            quote = byte
            continue
        depth += (byte == 40) - (byte == 41)  # "(" and ")"
        if depth == 0:
            return text[at + 1 : at + 2].isalnum() and not _AFTER_A_CLOSE.match(text, at + 1)
    return False
