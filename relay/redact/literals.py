"""This node's own facts and secrets, found as literals: user, home, host, secret values.

The facts are plain data handed in (``facts.gather_facts`` reads them from the machine), so
the engine can be tested with any values. A secret value is also looked for in the forms a
log may carry it in — the encodings that the GitHub Actions runner masks too: base64 at
each of the three alignments, URL-encoded (``quote``, ``quote_plus``, with ``/`` kept or
not), JSON-escaped once and twice, XML-escaped (``&amp;``, ``&quot;`` …), with quotes
doubled as SQL and expression strings double them, escaped as a command-line argument
(``\"``, ``\\``), and with surrounding double quotes trimmed — because ``Authorization: Basic
…``, ``config.json``, a ``settings.xml`` and a SQL script carry secrets that way. A value split
by ANSI colour codes (a coloured log) is found through the codes (``ansi_split_spans``).
Allowed exceptions never apply to these values (see ``engine``). The forms a step makes on
purpose (spaced, folded, reversed, rot13, wrapped base64 …) are ``disguises``'.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import json
import re
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import re2

from relay.redact.linear import Searcher, searcher
from relay.redact.rules import WORD, Kind, Span, after_scheme

# A value shorter than this, or one of these words, would mangle ordinary text.
MIN_SECRET_LEN = 6
BORING_VALUES = frozenset({"true", "false", "yes", "no", "none", "null", "enabled", "disabled"})
# Account and host names that identify no one; they are kept as bare words.
GENERIC_NAMES = frozenset(
    {
        "root",
        "runner",
        "admin",
        "user",
        "ubuntu",
        "debian",
        "ec2-user",
        "build",
        "builder",
        "ci",
        "jenkins",
        "vagrant",
        "docker",
        "nobody",
        "node",
        "app",
        "daemon",
        "localhost",
        "localhost.localdomain",
        "administrator",
        "default",
        "worker",
        "github",
    }
)
# Bytes of a literal's start that its search looks for; the rest is compared where found.
ANCHOR = 8
MIN_NAME_LEN = 2  # a one-letter name would hit every "a"; "vm" is a real host name
_HOST_CHARS = WORD | frozenset(b"-")
_PATH_CHARS = WORD | frozenset(b".-")


@dataclass(frozen=True)
class MachineFacts:
    """What identifies this machine and its user; ``secrets`` are values to mask wherever seen."""

    user: str = ""
    home: str = ""
    hosts: tuple[str, ...] = ()
    secrets: tuple[str, ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class Literal:
    """One byte string to find, the kind it is, and how its ends must sit in the text."""

    needle: bytes
    kind: str
    lower: bool = False
    edge: frozenset[int] = frozenset()


_PERCENT = re.compile(r"%[0-9A-F]{2}")


def _lower(m: re.Match[str]) -> str:
    return m.group().lower()


def _numeric_xml(value: str, digits: str) -> str:
    """XML-escaped with numeric character references for ``& < > " '`` (``&#38;``,
    ``&#x26;``, ``&#x3c;``), as some serialisers write them; ``digits``: d, x or X."""

    def ref(c: str) -> str:
        return f"&#{ord(c)};" if digits == "d" else f"&#x{format(ord(c), digits)};"

    return "".join(ref(c) if c in "&<>\"'" else c for c in value)


def secret_forms(value: str) -> set[str]:
    """The value and the encodings a log may show it in, each long enough to be specific."""
    raw = value.encode()
    json_escaped = json.dumps(value)[1:-1]
    xml = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    forms = {
        value,
        xml,
        *(
            xml.replace('"', quot).replace("'", apos)
            for quot in ("&quot;", "&#34;", "&#x22;")
            for apos in ("&apos;", "&#39;", "&#x27;")
        ),
        value.replace("'", "''"),  # SQL and expression strings
        value.replace('"', '""'),  # CSV, SQL identifiers
        value.replace("\\", "\\\\").replace('"', '\\"'),  # a quoted command-line argument
        # one character escaped alone, as a JSON or shell writer may: ``\/``, ``\"``, ``\\``
        value.replace("/", "\\/"),
        value.replace('"', '\\"'),
        value.replace("\\", "\\\\"),
        value.strip('"'),
        *(urllib.parse.quote(value, safe=safe) for safe in ("", "/")),  # quote() keeps "/"
        urllib.parse.quote_plus(value),
        # the same with lower-case hex, as some encoders write it (``%2f``)
        *(_PERCENT.sub(_lower, urllib.parse.quote(value, safe=safe)) for safe in ("", "/")),
        _PERCENT.sub(_lower, urllib.parse.quote_plus(value)),
        json_escaped,
        json.dumps(json_escaped)[1:-1],  # JSON inside a JSON string
        json_escaped.replace("/", "\\/"),  # PHP's and old encoders' escaped slash
        # Go's encoding/json escapes <, > and & as \u003c …
        json_escaped.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"),
        *(_numeric_xml(value, digits) for digits in ("d", "x", "X")),
        raw.hex(),
        raw.hex().upper(),
    }
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode().rstrip("=")
        # Drop the characters that mix in the padding or whatever follows the value.
        body = encoded[(shift * 8 + 5) // 6 : (8 * (shift + len(raw))) // 6]
        forms.update({body, body.replace("+", "-").replace("/", "_")})
    return {f for f in forms if len(f) >= MIN_SECRET_LEN}


def _secret_literals(secrets: Iterable[str]) -> Iterator[Literal]:
    for value in _with_lines(secrets):
        if len(value) >= MIN_SECRET_LEN and value.lower() not in BORING_VALUES:
            for form in secret_forms(value):
                yield Literal(form.encode(), Kind.OWN_SECRET)


def _with_lines(secrets: Iterable[str]) -> Iterator[str]:
    """Each secret, and a multi-line one also with CRLF line ends and line by line, as the
    Actions runner masks it: a log may prefix every line (a timestamp) or re-wrap it."""
    for value in secrets:
        yield value
        if "\n" in value:
            lines = value.replace("\r\n", "\n").split("\n")
            yield "\r\n".join(lines)
            yield from (line.strip() for line in lines)


def _home_literals(home: str) -> Iterator[Literal]:
    """The home path in POSIX form, and in Windows form with each separator spelling."""
    if len(home.strip("/\\")) < 2:
        return
    if home[1:3] in (":\\", ":/"):
        tail = home[3:].replace("/", "\\").strip("\\").lower()
        for sep in ("\\", "\\\\", "/"):
            text = f"{home[0].lower()}:{sep}{tail.replace(chr(92), sep)}"
            yield Literal(text.encode(), Kind.HOME, lower=True, edge=_PATH_CHARS)
    else:
        yield Literal(home.rstrip("/").encode(), Kind.HOME, edge=_PATH_CHARS)


def _name_literals(facts: MachineFacts) -> Iterator[Literal]:
    """User and host names as whole words in any case (Windows ignores it), unless short
    or generic."""
    if len(facts.user) >= MIN_NAME_LEN and facts.user.lower() not in GENERIC_NAMES:
        yield Literal(facts.user.lower().encode(), Kind.USER, lower=True, edge=_HOST_CHARS)
    for host in facts.hosts:
        if len(host) >= MIN_NAME_LEN and host.lower() not in GENERIC_NAMES:
            yield Literal(host.lower().encode(), Kind.HOST, lower=True, edge=_HOST_CHARS)


def build_literals(facts: MachineFacts) -> tuple[Literal, ...]:
    """Every literal to look for, longest first so that a FQDN wins over its host name."""
    found = {*_secret_literals(facts.secrets), *_home_literals(facts.home), *_name_literals(facts)}
    return tuple(sorted(found, key=lambda lit: (-len(lit.needle), lit.needle)))


def literal_spans(lit: Literal, block: bytes, lowered: bytes, start: int) -> Iterator[Span]:
    """Every place the literal occurs at or after ``start`` with clean edges."""
    hay = lowered if lit.lower else block
    size = len(lit.needle)
    pos = hay.find(lit.needle, start)
    while pos >= 0:
        end = pos + size
        clean_left = (pos == 0 or hay[pos - 1] not in lit.edge) and not _after_scheme(lit, hay, pos)
        if clean_left and (end >= len(hay) or hay[end] not in lit.edge):
            yield pos, end, lit.kind
        pos = hay.find(lit.needle, pos + 1)


# An SGR or other CSI sequence: ESC [ parameters, intermediates, a final byte.
_ANSI = re.compile(rb"(\x1b\[[0-9;:?]*[ -/]*[@-~])")


def ansi_split_spans(block: bytes, start: int, needles: Iterable[bytes], kind: str) -> list[Span]:
    """Where a needle occurs once ANSI escape codes are taken out of ``block[start:]``, as
    spans of the original bytes (escapes inside included). Done only when codes are there;
    the split and the offsets are computed by C loops, not per byte in Python."""
    if block.find(b"\x1b[", start) < 0:
        return []
    needles = tuple(needles)
    # One pass in C says whether any needle is there at all; the offsets are worked out only
    # then (a line of nothing but colour codes would otherwise build a list per code).
    stripped = _ANSI.sub(b"", block[start:])
    if not any(needle in stripped for needle in needles):
        return []
    pieces = _ANSI.split(block[start:])  # text, code, text, code, ..., text
    at = [start, *itertools.accumulate(map(len, pieces), initial=start)][1:]
    texts = pieces[0::2]
    text_at = at[0::2]  # where each text piece starts in the block
    plain_at = list(itertools.accumulate(map(len, texts), initial=0))  # ... in the plain text
    plain = b"".join(texts)

    def original(pos: int, *, end: bool) -> int:
        i = bisect.bisect_right(plain_at, pos - 1 if end else pos) - 1
        return text_at[i] + (pos - plain_at[i])

    out: list[Span] = []
    for needle in needles:
        pos = plain.find(needle)
        while pos >= 0:
            end = pos + len(needle)
            out.append((original(pos, end=False), original(end, end=True), kind))
            pos = plain.find(needle, pos + 1)
    return out


class LiteralScanner:
    """Every literal found in one RE2 pass, instead of one ``find`` over the block for each.

    This node's secret has a dozen encoded forms, each of which a ``find`` would read the
    whole block for. One alternation of each literal's first ``ANCHOR`` bytes (in any case
    where the literal is) finds each place where some literal may start; the literals that
    start so are then compared there, with their edges. Only the anchors are in the regex:
    the whole forms of a long secret (a 2048-bit key's thirty encodings) outgrew RE2's
    memory, and its automaton grew with every secret. The search goes on from the next
    byte, not from the end of the find, so that overlapping occurrences (``abcabc`` in
    ``abcabcabc``) are all found: a secret half masked is a secret leaked."""

    def __init__(self, literals: Iterable[Literal]) -> None:
        self.literals = tuple(literals)
        self._exact: dict[bytes, list[Literal]] = {}  # by anchor
        self._folded: dict[bytes, list[Literal]] = {}  # by anchor, lowered
        anchors: set[bytes] = set()
        for lit in self.literals:
            anchor = lit.needle[:ANCHOR]
            text = re2.escape(anchor)
            anchors.add(b"(?i:" + text + b")" if lit.lower else text)
            (self._folded if lit.lower else self._exact).setdefault(anchor, []).append(lit)
        # The anchor lengths there are (a needle shorter than ``ANCHOR`` is its own anchor).
        self._sizes = sorted({len(a) for a in (*self._exact, *self._folded)})
        # The alternation alone, for a search that finds these places with others.
        self.pattern = b"|".join(sorted(anchors))
        self._longest = max((len(lit.needle) for lit in self.literals), default=0)
        self._longest_folded = max((len(n) for n in self._folded_needles()), default=0)
        self._compiled: list[re2._Regexp[bytes]] = []  # ``_search``, once asked for

    @property
    def _search(self) -> re2._Regexp[bytes] | None:
        """The anchors' search, compiled when first asked for (a scanner whose literals
        another search finds only compares them, ``at``)."""
        if not self.pattern:
            return None
        if not self._compiled:
            options = re2.Options()
            options.never_capture = True
            options.max_mem = 32 << 20
            # Every byte a character (Latin-1), as the prefilter reads a block: it runs this
            # same search over the whole block (its automaton's states serve both). A
            # needle's case folds byte by byte then, which only widens the search; each
            # find is compared.
            options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
            self._compiled.append(re2.compile(self.pattern, options))
        return self._compiled[0]

    @property
    def passes(self) -> tuple[Searcher, ...]:
        """The prefilter's pass over a block for the literals (none without literals).
        (``_ranges`` calls it with ends within the text)"""
        search = self._search
        return () if search is None else (searcher(search, within=True),)

    def spans(self, block: bytes, lowered: bytes, start: int) -> Iterator[Span]:
        """Every place a literal occurs at or after ``start`` with clean edges."""
        search = self._search
        if search is None:
            return
        pos = start
        while (hit := search.search(block, pos)) is not None:
            at = hit.start()
            pos = at + 1
            for lit in self._starting(block, lowered, at):
                yield from _literal_at(lit, block, lowered, at)

    def _starting(self, block: bytes, lowered: bytes, at: int) -> Iterator[Literal]:
        """The literals whose anchor is at ``at`` (``lowered``: the block in lower case, at
        least where the anchors are read)."""
        for size in self._sizes:
            yield from self._exact.get(block[at : at + size], ())
            yield from self._folded.get(lowered[at : at + size], ())

    def _folded_needles(self) -> Iterator[bytes]:
        for group in self._folded.values():
            yield from (lit.needle for lit in group)

    def at(self, block: bytes, at: int) -> Iterator[Span]:
        """The literals that occur at ``at`` with clean edges (a place another search found:
        the disguises', which reads the whole block for this node's secrets and these)."""
        base = max(0, at - 1)  # the byte before, for the left edge; one past, for the right
        piece = block[base : at + self._longest + 1]
        # Only a folded literal reads the lowered text: as far as the longest of them.
        lowered = piece[: at - base + self._longest_folded + 1].lower()
        for lit in self._starting(piece, lowered, at - base):
            for s, e, kind in _literal_at(lit, piece, lowered, at - base):
                yield s + base, e + base, kind


def _literal_at(lit: Literal, block: bytes, lowered: bytes, at: int) -> Iterator[Span]:
    hay = lowered if lit.lower else block
    if not hay.startswith(lit.needle, at):
        return
    end = at + len(lit.needle)
    if _after_scheme(lit, hay, at):
        return
    if (at == 0 or hay[at - 1] not in lit.edge) and (end >= len(hay) or hay[end] not in lit.edge):
        yield at, end, lit.kind


def _after_scheme(lit: Literal, hay: bytes, at: int) -> bool:
    """A home path right after a URL's ``scheme:/`` is that URL's authority, not a path
    (``mysql://root:pw@db`` with HOME=/root); ``file:///root/x`` is still a path."""
    return lit.kind == Kind.HOME and after_scheme(hay, at)
