"""How one kind of sensitive text is found: a regex that starts with a literal, plus a check.

Speed rule: CPython's ``re`` finds a pattern that *starts with a literal* with a fast
substring search (gigabytes per second), while a pattern that starts with a character class,
an alternation or a look-behind is tried at every position (tens of megabytes per second).
So every rule here opens with a literal anchor — the token's prefix, the ``@`` of an e-mail,
the ``.`` between octets — and whatever cannot be said that way (a left boundary, a first
octet, a local part) is checked in Python on the few places the anchor matched.

What a rule found is named by a ``Kind``, whose value is the wire string in the redacted
text: secrets become ``[redacted:<kind>]``; personal and machine data become a short word
(``<user>``, ``<home>``, ``<host>``, ``<ip>``, ``<mac>``, ``<email>``) so that a reader of
the log still understands the sentence.

Rules run over a block of UTF-8 bytes; rules marked ``lower`` run over the block lowered
(ASCII only, so offsets are the same), which is how case-insensitive keywords stay fast.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

import re2

from relay.redact.linear import Searcher, searcher


class Kind(enum.StrEnum):
    """One kind of sensitive text; the value is the name used in the replacement."""

    GITHUB_TOKEN = "github-token"
    AWS_ACCESS_KEY = "aws-access-key"
    GOOGLE_API_KEY = "google-api-key"
    SLACK_TOKEN = "slack-token"
    SLACK_WEBHOOK = "slack-webhook"
    STRIPE_KEY = "stripe-key"
    OPENAI_KEY = "openai-key"
    ANTHROPIC_KEY = "anthropic-key"
    NPM_TOKEN = "npm-token"
    PYPI_TOKEN = "pypi-token"
    PRIVATE_KEY = "private-key"
    JWT = "jwt"
    AUTHORIZATION = "authorization"
    URL_CREDENTIALS = "url-credentials"
    SECRET = "secret"
    OWN_SECRET = "own-secret"
    USER = "user"
    HOME = "home"
    HOST = "host"
    IP = "ip"
    MAC = "mac"
    EMAIL = "email"


# Personal and machine data read better as a word than as a redaction stamp.
WORD_KINDS = frozenset({Kind.USER, Kind.HOME, Kind.HOST, Kind.IP, Kind.MAC, Kind.EMAIL})


def placeholder(kind: str) -> str:
    """The text that stands in for a redacted span of this kind."""
    if kind in WORD_KINDS:
        return f"<{kind}>"
    return f"[redacted:{kind}]"


Span = tuple[int, int, str]


class Skip(NamedTuple):
    """A check's answer: nothing here, nor anywhere before ``until`` (a run it has read
    whole). The rule's next search starts there, so that a line made of nothing but
    near-matches (``::::…``) costs one check per run, not one per byte."""

    until: int


# A check gets the original block and the match; it returns the span to replace (with a
# kind when it names one other than the rule's), None, or a Skip.
Found = tuple[int, int] | tuple[int, int, str] | Skip | None
Check = Callable[[bytes, "re.Match[bytes]"], Found]

WORD = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")

# How many places one rule may check in Python on one line. A real line holds a handful; a
# line made of near-matches (``mysql -pmysql -p…``, ``ghp_abghp_ab…``) would cost one Python
# check per few bytes. Past the budget the rest of that line is replaced whole, in the
# rule's kind: a guardrail refuses to publish what it has not read, and the cost of a line
# stays bounded by its length at the engine's speed.
HITS_PER_LINE = 64


class LineBudget:
    """Counts one rule's checks on the current line; says where the line ends once spent."""

    __slots__ = ("_end", "_hits", "_text")

    def __init__(self, text: bytes) -> None:
        self._text = text
        self._end = -1  # where the current line's break is (or the text's end)
        self._hits = 0

    def spent(self, at: int) -> int:
        """-1 while the line of ``at`` has budget left; else where that line ends."""
        if at > self._end:
            end = self._text.find(b"\n", at)
            self._end = len(self._text) if end < 0 else end
            self._hits = 0
        self._hits += 1
        return -1 if self._hits <= HITS_PER_LINE else self._end


TOKEN_CHARS = WORD | frozenset(b"-")


class Rule:
    """One regex over the block (or its lowered copy) that yields spans of one kind.

    The regex and its seek are compiled the first time the rule is asked for spans: the
    prefilter sends a rule only the lines it could match, so a log that never holds a
    rule's shape never pays for compiling it (most of a short run's start-up)."""

    __slots__ = ("_compiled", "_pattern", "_seek_pattern", "check", "gate", "kind", "lower")

    def __init__(
        self,
        kind: str,
        pattern: bytes,
        *,
        lower: bool = False,
        check: Check | None = None,
        gate: bytes | None = None,
        seek: bytes | None = None,
    ) -> None:
        self.kind = kind
        self.lower = lower
        self.check = check
        # An RE2 pattern over the lowered block that any match implies (see ``engine``): a
        # block without it skips the rule, which saves its pass for what most logs never hold.
        self.gate = gate
        self._pattern = pattern
        # An RE2 search for every place the regex can match at (its literal and what its
        # look-ahead asks): where ``re`` would try, and refuse, a match at each of a megabyte
        # of dots in C, RE2 skips them in linear time and ``re`` matches only where it points.
        self._seek_pattern = seek
        self._compiled: tuple[re.Pattern[bytes] | None, Searcher | None] | None = None

    def _compile(self) -> tuple[re.Pattern[bytes] | None, Searcher | None]:
        seek = self._seek_pattern
        # (``spans`` seeks from a place within the text to its end)
        found = None if seek is None else searcher(re2.compile(seek), within=True)
        # A rule with a seek compiles its regex at the seek's first place (``regex``): most
        # seeks find none in a log, and ``re``'s compile of their rules' regexes was a tenth
        # of ``relay redact``'s start-up.
        regex = None if found is not None else re.compile(self._pattern)
        self._compiled = compiled = (regex, found)
        return compiled

    @property
    def regex(self) -> re.Pattern[bytes]:
        """The rule's regex (compiled on first use)."""
        regex, seek = self._compiled or self._compile()
        if regex is None:
            regex = re.compile(self._pattern)
            self._compiled = (regex, seek)
        return regex

    @property
    def seek(self) -> Searcher | None:
        """The rule's RE2 seek, when it has one (compiled on first use)."""
        return (self._compiled or self._compile())[1]

    def spans(self, block: bytes, lowered: bytes, start: int) -> Iterator[Span]:
        """Every span this rule finds in ``block`` at or after ``start``."""
        hay = lowered if self.lower else block
        regex, seek = self._compiled or self._compile()
        search = self.regex.search if seek is None else None
        match = None if regex is None else regex.match
        budget = LineBudget(hay)
        size = len(hay)
        pos = start
        while True:
            if search is not None:
                if (m := search(hay, pos)) is None:
                    return
                at = m.start()
            else:
                if pos > size or seek is None or (at := seek(hay, pos, size)[0][0]) < 0:
                    return
                if match is None:
                    match = self.regex.match
                m = match(hay, at)
            if (stop := budget.spent(at)) >= 0:
                yield at, stop, self.kind
                pos = stop + 1
                continue
            if m is None:
                pos = at + 1
                continue
            pos = m.end() if m.end() > m.start() else m.start() + 1
            if self.check is None:
                yield m.start(), m.end(), self.kind
                continue
            found = self.check(block, m)
            if isinstance(found, Skip):
                pos = max(pos, found.until)
            elif found is not None and found[1] > found[0]:
                yield found[0], found[1], found[2] if len(found) == 3 else self.kind


def rule(
    kind: str,
    pattern: bytes,
    *,
    lower: bool = False,
    check: Check | None = None,
    gate: bytes | None = None,
    seek: bytes | None = None,
) -> Rule:
    """One rule; the pattern must open with a literal (see the module docstring)."""
    return Rule(kind, pattern, lower=lower, check=check, gate=gate, seek=seek)


def boundary_before(block: bytes, pos: int, chars: frozenset[int] = TOKEN_CHARS) -> bool:
    """True when ``pos`` starts a token: the byte before it is not a token character."""
    return pos == 0 or block[pos - 1] not in chars


def boundary_after(block: bytes, pos: int, chars: frozenset[int] = TOKEN_CHARS) -> bool:
    """True when ``pos`` ends a token: the byte at it is not a token character."""
    return pos >= len(block) or block[pos] not in chars


def after_scheme(block: bytes, pos: int) -> bool:
    """True when ``pos`` is where a URL's authority starts: right after ``scheme:/`` (the
    second slash of ``://``), so ``/root`` in ``mysql://root@db`` starts no path."""
    return pos >= 2 and block[pos - 2 : pos] == b":/"


def group_span(m: re.Match[bytes], group: int | str) -> tuple[int, int] | None:
    """The span of a match group, or None when it did not take part or is empty."""
    start, end = m.span(group)
    return (start, end) if end > start else None


def word_start(block: bytes, m: re.Match[bytes]) -> tuple[int, int] | None:
    """Accept the match only where it starts a token (``task-…`` is not ``sk-…``)."""
    return m.span() if boundary_before(block, m.start()) else None
