"""The redaction engine: find every sensitive span in a block of bytes and replace it.

Ground rules: pure (no environment, clock, disk or network — the machine's facts come in as
``MachineFacts``); works on UTF-8 bytes so that case-insensitive keywords can be searched in
``bytes.lower()`` at memory speed with the same offsets; overlapping finds are merged into
one span (a partly replaced secret is a leaked secret); a span that crosses lines is
replaced by its name followed by the same number of line breaks, so line numbers in the log
stay true. Allowed exceptions are regexes; a find whose whole text matches one is kept —
except this node's own secret values, which no exception un-masks.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import re2

from relay.errors import LocalUsageError
from relay.redact.assignments import ASSIGNMENT_RULES, doubled_quote_at
from relay.redact.code import CODE_RULES
from relay.redact.commands import COMMAND_RULES
from relay.redact.disguises import Disguises, with_bodies
from relay.redact.expressions import is_annotation, made_part
from relay.redact.formats import B64_KEY, ESCAPED_SLASHES, SCANNER, escaped_scanner
from relay.redact.labelled import LABEL_RIDER
from relay.redact.linear import Searcher, searcher
from relay.redact.literals import (
    Literal,
    LiteralScanner,
    MachineFacts,
    ansi_split_spans,
    build_literals,
)
from relay.redact.manifests import MANIFEST_RULES
from relay.redact.named import SCANNER as NAMED
from relay.redact.network import NETWORK_RULES, node_host_rule
from relay.redact.placeholders import (
    is_placeholder_phrase,
    is_public,
    is_reference,
    looks_like_placeholder,
)
from relay.redact.prefilter import PAIR_RIDER, Prefilter, compile_latin1
from relay.redact.riders import Rider
from relay.redact.rules import WORD_KINDS, Kind, Rule, Span, placeholder
from relay.redact.shell import SHELL_RULES
from relay.redact.tokens import BEGIN_KEY, END_KEY, TOKEN_RULES
from relay.redact.values import is_code_identifier, is_not_secret, value_is_code

_FEW_NEEDLES = 8
# The ssh user of the big forges is not anyone's address.
DEFAULT_ALLOWED: tuple[str, ...] = (r"git@[A-Za-z0-9.\-]+",)


@dataclass(frozen=True)
class Scan:
    """What one block held: merged spans, and where an unfinished key block starts."""

    spans: tuple[Span, ...]
    open_key_at: int | None = None
    # how far past the block an open key's END may still close it (``KEY_REACH``'s rest)
    key_left: int = 0


class LinearRule(Rule):
    """A rule whose regex RE2 runs: a pattern someone wrote (a master section's, a flag's)
    matches in linear time whatever the log holds (``(a|a)*b`` too)."""

    __slots__ = ()

    def _compile(self) -> tuple[re.Pattern[bytes], Searcher | None]:
        self._compiled = compiled = (re2.compile(self._pattern), None)  # type: ignore[assignment]
        return compiled  # type: ignore[return-value]


def _in_re2(pattern: bytes) -> re2._Regexp[bytes] | None:
    """``pattern`` compiled by RE2, or None when RE2 does not read it (look-around,
    back-references). The refusal is no error of the user's: RE2 is asked not to log it."""
    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error:
        return None


def _compile_extra(extra: Mapping[str, str]) -> tuple[Rule, ...]:
    """Extra patterns from the master section, as rules over the original bytes: run by
    RE2 when it reads them (linear time), by Python's ``re`` only when it does not.

    Like the built-in rules, a pattern should match within one line and stay shorter than
    the stream's overlap (32 KiB), or a block boundary could split what it matches."""
    rules: list[Rule] = []
    for kind, pattern in extra.items():
        try:
            re.compile(pattern.encode())  # an error here names the pattern
            raw = pattern.encode()
            rules.append(LinearRule(kind, raw) if _in_re2(raw) else Rule(kind, raw))
        except re.error as err:
            raise LocalUsageError(
                f"extra redaction pattern {kind!r} is not a valid regex: {err}",
                hint="fix it in the master section's shared scope",
            ) from err
    return tuple(rules)


def _compile_allowed(exceptions: Iterable[str]) -> Callable[[bytes, int, int], bool]:
    """One regex for every allowed exception; a find whose whole text matches is kept.

    Each is compiled alone first, so that an error names the exception and a position in it."""
    patterns = tuple(exceptions)
    for allowed in patterns:
        try:
            re.compile(allowed.encode())
        except re.error as err:
            raise LocalUsageError(
                f"allowed redaction exception {allowed!r} is not a valid regex: {err}",
                hint="fix it in the master section's shared scope",
            ) from err
    joined = "|".join(f"(?:{a})" for a in patterns).encode()
    # RE2 when it reads them all (a find is checked in linear time), else Python's re;
    # RE2's through its matcher (the library's match object costs three times the check,
    # paid for every find of a log).
    regex = _in_re2(joined)
    if regex is None:
        try:
            fallback = [re.compile(joined)]
        except re.error:  # a flag that must open its pattern ((?i)…) opens one of several
            fallback = [re.compile(a.encode()) for a in patterns]
        return lambda block, start, end: any(
            one.fullmatch(block, start, end) is not None for one in fallback
        )
    whole = searcher(regex, whole=True, within=True)
    return lambda block, start, end: whole(block, start, end)[0][0] >= 0


def _tie_rank(kind: str) -> int:
    """Which kind names two spans with the same ends: the lower wins."""
    if kind == Kind.OWN_SECRET:
        return 1
    return 2 if kind in WORD_KINDS else 0


def merge(spans: Iterable[Span]) -> list[Span]:
    """Union overlapping spans; the kind is the one that starts first (longest on a tie;
    on a tie of both ends a token's own format, then this node's own secret, then a word for
    machine data: a secret's bytes in hex between colons are a MAC address by shape, and are
    named as what they are, while a GitHub token that is also this node's keeps its name)."""
    merged: list[Span] = []
    for start, end, kind in sorted(spans, key=lambda s: (s[0], -s[1], _tie_rank(s[2]))):
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, kind))
    return merged


class KeyBody(NamedTuple):
    """Where a private key block ends, and whether the block ended first (``open``: the
    key may go on in the next window)."""

    end: int
    open: bool


# Bytes after a key's BEGIN marker within which its END marker closes the block, whatever
# lies between (a prefix on each line, another process's lines, a diff's marks, a string's
# quotes): a key is a few kilobytes. With no END within them the block runs over the
# lines of its body alone (``key_lines``): a BEGIN line in prose, or one a step printed
# alone, takes no more of the log than that.
KEY_REACH = 64 << 10
# A line of a key's body: base64 (``=Ab3d``: PGP's checksum line) after any prefix.
_B64_RUN = re.compile(rb"=?[A-Za-z0-9+/]+={0,2}")
# A PEM or armor header line right below the BEGIN line (``Proc-Type: 4,ENCRYPTED``).
_ARMOR_HEADER = re.compile(rb"[A-Za-z][A-Za-z0-9-]{0,30}: ")
_KEY_MARKS = frozenset(b"0123456789+/=")
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")


def _key_line(line: bytes, *, headers: bool) -> bool:
    """Whether ``line`` below a key's BEGIN line is part of its body: blank, a header
    (``headers``: none of the body read yet), base64 alone, or base64 after a prefix (a
    log's timestamp on each line) that looks like random data (16 or more characters with
    a digit, ``+`` or ``/``, or the short last line's ``=``). An ordinary log line (``INFO
    step 1 done``) is none of these."""
    text = line.strip()
    if not text:
        return True
    if headers and _ARMOR_HEADER.match(text):
        return True
    parts = text.rsplit(None, 1)
    token = parts[-1]
    if _B64_RUN.fullmatch(token) is None:
        return False
    if len(parts) == 1:
        return len(token) >= 4
    return token.endswith(b"=") or (len(token) >= 16 and not _KEY_MARKS.isdisjoint(token))


def _unprefixed(line: bytes, prefix: bytes, shape: bytes) -> bytes:
    """``line`` without the BEGIN line's prefix when it opens with one of its shape (each
    digit any digit: a timestamp's)."""
    head = line[: len(prefix)]
    return line[len(prefix) :] if prefix and head.translate(_DIGITS_AS_ZERO) == shape else line


def key_lines(block: bytes, at: int, *, headers: bool = True, prefix: bytes = b"") -> KeyBody:
    """Where the key whose body lines start at ``at`` (a line's start) ends: at its END
    marker, else at the end of its last body line (:func:`_key_line`, each line read
    without the BEGIN line's ``prefix``). One other line between two body lines is the
    key's too (another process's output); two, or one before a line that is none of the
    key's, end it. Open when the block ends within its lines."""
    size = len(block)
    shape = prefix.translate(_DIGITS_AS_ZERO)
    last = max(at - 1, 0)  # the end of its last body line so far
    other = False  # the line before this one was no body line
    while at < size:
        nl = block.find(b"\n", at)
        stop = size if nl < 0 else nl
        end = END_KEY.search(block, at, stop)
        if end is not None:
            return KeyBody(end.end(), False)
        if nl < 0:
            return KeyBody(size, True)
        line = _unprefixed(block[at:stop], prefix, shape)
        if _key_line(line, headers=headers) and not (other and not line.strip()):
            text = line.strip()
            headers = headers and (not text or _ARMOR_HEADER.match(text) is not None)
            last, other = stop, False
        elif other:
            return KeyBody(last, False)
        else:
            other = True
        at = nl + 1
    return KeyBody(last, False) if other else KeyBody(size, True)


def key_block_end(block: bytes, start: int) -> KeyBody:
    """Where the private key block open at ``start`` (a line's start: the stream's next
    window) ends; see :func:`key_lines`."""
    return key_lines(block, start, headers=False)


class Engine:
    """The pure scanner and replacer that ``Redactor`` and the stream share."""

    def __init__(
        self,
        facts: MachineFacts,
        *,
        extra_patterns: Mapping[str, str] | None = None,
        allowed: Iterable[str] = (),
        node_hosts: Iterable[str] = (),
        prefilter: bool = True,
    ) -> None:
        """``node_hosts``: the node table's names, whose fully qualified forms are redacted
        as hosts; ``prefilter=False`` runs every rule over every line (the tests compare)."""
        # A token's secret part without its prefix is a secret too (``${TOKEN#ghp_}``).
        facts = dataclasses.replace(facts, secrets=with_bodies(facts.secrets))
        hosts = node_host_rule(tuple(node_hosts))
        self.rules: tuple[Rule, ...] = (
            *TOKEN_RULES,
            *ASSIGNMENT_RULES,
            *CODE_RULES,
            *MANIFEST_RULES,
            *NETWORK_RULES,
            *SHELL_RULES,
            *COMMAND_RULES,
            *((hosts,) if hosts else ()),
        )
        # Extra patterns may be any regex, across lines too: each reads the whole block, in
        # its own pass, and the built-in rules keep the prefilter.
        self.extra: tuple[Rule, ...] = _compile_extra(extra_patterns or {})
        self._gates, self._gate_of = _gate_set(self.rules)
        self.literals: tuple[Literal, ...] = build_literals(facts)
        self._own = tuple(lit.needle for lit in self.literals if lit.kind == Kind.OWN_SECRET)
        own = [lit for lit in self.literals if lit.kind == Kind.OWN_SECRET]
        # This node's secrets spaced, folded, reversed, re-encoded: one more pass over the
        # whole block (a find may cross lines), which streams and pieces never cut into.
        # That pass finds the secrets as written and encoded too: one read of every byte
        # for all of them, however many (see ``canon``).
        self.disguises = Disguises.build(facts.secrets, also=own)
        self._own_at = None
        if self.disguises is not None:
            self._own_at = LiteralScanner(own).at
            left = set(self.disguises.unanchored)
            own = [lit for lit in own if lit in left]
        # What rides on the format table's pass (``riders``): the prefilter's pair word, and
        # for this node's secrets the labels' first place and the canonical strings' places.
        riders: list[Rider] = [PAIR_RIDER]
        if self.disguises is not None and self.disguises.labelled is not None:
            riders.append(LABEL_RIDER)
        if self.disguises is not None and self.disguises.rider is not None:
            riders.append(self.disguises.rider)
        self._riders = tuple(riders)
        # The user's name, home and hosts (and a secret that pass does not find): read on
        # the lines the prefilter keeps.
        names = [lit for lit in self.literals if lit.kind != Kind.OWN_SECRET] + own
        self._literals = LiteralScanner(names)
        # A stream keeps a needle with a line break whole across its windows; one in the
        # prefilter (which reads lines) makes every rule read the whole block instead.
        self.multiline_needles = tuple(lit.needle for lit in self.literals if b"\n" in lit.needle)
        folds = [(lit.needle, lit.lower) for lit in names]
        hosts_folded = [(name.lower().encode(), True) for name in node_hosts if name]
        # A few needles (the user's name and home) cost the supersets' pass little; many
        # are a pass of their own, the scanner's.
        few = len(folds) <= _FEW_NEEDLES
        needles = hosts_folded + (folds if few else [])
        plain = prefilter and not any(b"\n" in n or b"\r" in n for n, _ in folds + hosts_folded)
        # The format table is not in it: its own pass over the whole block finds its anchors
        # and checks each where it is (a pass that kept their lines for it to search again
        # read them twice, and left the rules more lines to read).
        passes = () if few else self._literals.passes
        self._prefilter = Prefilter(needles, ansi=bool(self._own), passes=passes) if plain else None
        exceptions = (*DEFAULT_ALLOWED, *allowed)  # the defaults always hold
        self.allowed = _compile_allowed(exceptions)

    def warm(self, sample: bytes = b"") -> None:
        """Compile every rule and row now (each is compiled when first needed otherwise), so
        that processes forked from this one share them instead of each compiling its own.

        RE2 builds its automata's states as the text asks for them, which costs more than
        the search on a process's first megabytes: a scan of ``sample`` builds the states
        text like it needs once, here, for every process forked after it."""
        for r in (*self.rules, *self.extra):
            r.regex  # noqa: B018 - compiled on first use
        SCANNER.compile_all()
        SCANNER.ride(self._riders)
        if sample:
            self.scan(sample)

    def scan(self, block: bytes, start: int = 0, *, final: bool = True) -> Scan:
        """Find and merge every span at or after ``start`` (bytes before it are context).

        Every rule reads only the lines the prefilter hit, when they are few (see
        ``prefilter``); the format table, extra patterns and this node's disguised secrets
        read the whole block (the table's anchors are its own one pass). ``final``: nothing
        follows the block (a stream's window that more text follows is not)."""
        table: list[Span] | None = None
        lines = None
        rode: dict[Rider, list[int]] = {}
        if self._prefilter is not None and start == 0:
            # The table's finds first, as ``_collect`` has them (a tie keeps the first kind),
            # and in the same pass the riders' places: the word that the prefilter's
            # name/value pair needs, this node's secrets' (see ``FormatScanner.finds``).
            riding: list[tuple[Rider, list[int]]] = [(rider, []) for rider in self._riders]
            table = [(f.start, f.end, f.fmt.label) for f in SCANNER.finds(block, 0, riding)]
            rode = dict(riding)
            lines = self._prefilter.lines(block, rode[PAIR_RIDER])
        if lines is None:
            lowered = block.lower()
            found = self._collect(block, lowered, start, table=table is None)
            if table is not None:
                found = table + found
            ends = _end_markers(lowered, start)
        else:
            low = lines.text.lower()
            to_block = lines.span_to_block
            found = table or []
            kept = self._collect(lines.text, low, 0, table=False)
            found += [(*to_block(s, e), k) for s, e, k in kept]
            ends = [lines.to_block(at) for at in _end_markers(low, 0)]
        # URLs in a JSON string whose slashes are escaped, or percent-encoded in a query: the
        # twin tables read only a block that holds the mark
        for slash, holds in _ESCAPED_MARKS:
            if holds(block, 0, len(block))[0][0] >= 0:
                found.extend(escaped_scanner(slash).spans(block, block, start))
        for extra in self.extra:  # the whole block, as written: no lowered copy
            found.extend(s for s in extra.spans(block, block, start) if not _stands_in(block, s))
        if (disguises := self.disguises) is not None:
            places = rode.get(disguises.rider) if disguises.rider is not None else None
            labels = rode.get(LABEL_RIDER)
            found.extend(disguises.spans(block, start, self._own_at, places=places, labels=labels))
        # This node's own secret values are masked whatever the exceptions say (``.*`` too).
        allowed = self.allowed
        found = [s for s in found if s[2] == Kind.OWN_SECRET or not allowed(block, s[0], s[1])]
        found, open_at, left = _stretch_key_blocks(block, found, final=final)
        found += _headless_key_ends(block, ends, start, found)
        spans = merge(found)
        # An unfinished key block runs to the block's end, so it is in the last merged span.
        return Scan(tuple(spans), None if open_at is None else spans[-1][0], left)

    def _collect(
        self, block: bytes, lowered: bytes, start: int, *, table: bool = True
    ) -> list[Span]:
        """Every built-in rule's finds and (``table``) the format table's in ``block``,
        before merging."""
        found: list[Span] = list(SCANNER.spans(block, lowered, start)) if table else []
        if start >= len(block):  # nothing to read (the prefilter kept no line): every rule
            return found  # opens with a literal, so none runs, nor is compiled, for nothing
        # One RE2 pass says which gated rules can match in this block at all.
        present = set(_matches(self._gates, lowered)) if self._gates is not None else set()
        for i, r in enumerate(self.rules):
            if i in self._gate_of and self._gate_of[i] not in present:
                continue
            found.extend(s for s in r.spans(block, lowered, start) if not _stands_in(block, s))
        # Last, so that where a named rule agrees with a rule above, the latter's kind stands.
        found.extend(s for s in NAMED.spans(block, lowered, start) if not _not_secret(block, s))
        found.extend(self._literals.spans(block, lowered, start))
        found.extend(ansi_split_spans(block, start, self._own, Kind.OWN_SECRET))
        return found


# The escaped slashes' marks, each found by RE2 (it skips to a literal's first byte at memory
# speed: Python's own substring search of ``%2F`` or ``\\/`` stops at every ``%`` or ``/``
# of a log, about 0.08 CPU-s in 100 MB, five times RE2's).
_ESCAPED_MARKS = tuple((mark, compile_latin1(re2.escape(mark))) for mark in ESCAPED_SLASHES)


def _gate_set(rules: tuple[Rule, ...]) -> tuple[re2.Set | None, dict[int, int]]:
    """One RE2 set of every rule's gate, and which set entry is which rule's."""
    gated = [(i, r.gate) for i, r in enumerate(rules) if r.gate is not None]
    if not gated:
        return None, {}
    options = re2.Options()
    options.never_capture = True
    gates = re2.Set.SearchSet(options)
    gate_of = {i: gates.Add(gate) for i, gate in gated}
    gates.Compile()
    return gates, gate_of


def _matches(gates: re2.Set, text: bytes) -> list[int]:
    """The entries of ``gates`` that match somewhere in ``text`` (the stubs say bool)."""
    found: object = gates.Match(text)
    return found if isinstance(found, list) else []


_CONTEXT_KINDS = frozenset({Kind.AUTHORIZATION, Kind.URL_CREDENTIALS, Kind.SECRET})
_LONGEST_VALUE = 8192


# A template's slot where the value goes: a format field (``{password}``, ``{{ pw }}``,
# ``{0}``) or a printf conversion (``%s``, ``%(password)s``). The field's name is a name:
# digits, letters, or a digit in one case only (``{db_password2}``); ``{S3cretPass}`` is
# a value in braces.
_SLOT = re.compile(
    rb"\{\{?[ \t]*(?:[0-9]*|[A-Za-z_.]*|[a-z_.][a-z0-9_.]*|[A-Z_.][A-Z0-9_.]*)[ \t]*\}?\}"
    rb"|%(?:\([A-Za-z_][A-Za-z0-9_]*\))?[sdr]"
)


def _stands_in(block: bytes, span: Span) -> bool:
    """A header, URL or setting whose value is a reference or filler (``Bearer ${TOKEN}``,
    ``https://ci:****@host``, ``password: xxxxxxxx``): it protects nothing to redact it.
    A quoted value read past a doubled quote must be one before that quote too (see
    ``assignments.doubled_quote_at``).

    Only filler counts here, not a template's words: a password may well say "your"."""
    start, end, kind = span
    if kind not in _CONTEXT_KINDS or end - start > _LONGEST_VALUE:
        return False  # longer than any value a rule reads: a line's rest (``LineBudget``)
    if not _stands_in_to(block, start, end, kind):
        return False
    cut = doubled_quote_at(block, start, end)
    return cut <= start or _stands_in_to(block, start, cut, kind)


def _stands_in_to(block: bytes, start: int, end: int, kind: str) -> bool:
    """``_stands_in`` for the value read as ``block[start:end]``."""
    value = block[start:end]
    if kind == Kind.URL_CREDENTIALS and b":" in value:
        value = value[value.index(b":") + 1 :]
    if value.startswith((b"$(", b"${", b"`")):
        return True  # a command's or a variable's expansion, cut at its first blank
    if _SLOT.fullmatch(value):
        return True  # a template's slot: ``postgres://app:{password}@db``, ``:%s@``
    if is_reference(value) or is_public(value) or looks_like_placeholder(value, words=False):
        return True
    if kind == Kind.URL_CREDENTIALS:
        return is_placeholder_phrase(value)  # ``https://user:pass@host``: a document's
    if kind == Kind.AUTHORIZATION:
        # ``authorization = self.headers.get(``, ``…_authorization: Authorization | None``
        made = made_part(value)
        prose = value.isalpha() and value.islower()  # ``fix Authorization: Basic parsing``
        return (
            prose
            or value_is_code(value)
            or is_annotation(block, start, end, made=made)
            or (not made and is_code_identifier(block, start, end))
        )
    return kind == Kind.SECRET and is_not_secret(block, start, end)


def _not_secret(block: bytes, span: Span) -> bool:
    """A named value that its name's meaning or its own shape says is no secret (see
    ``values``); only plain secret finds are judged, not a line's rest (``LineBudget``).
    A quoted value read past a doubled quote is judged before that quote too."""
    start, end, kind = span
    if kind != Kind.SECRET or end - start > _LONGEST_VALUE:
        return False
    if not is_not_secret(block, start, end):
        return False
    cut = doubled_quote_at(block, start, end)
    return cut <= start or is_not_secret(block, start, cut)


# The lines of base64 below a key's first one (``base64 key.pem`` wraps at 76 columns).
B64_KEY_LINES = re.compile(rb"(?:\r?\n[A-Za-z0-9+/]{4,}={0,2}(?=\r?\n|$))*")


def _stretch_key_blocks(
    block: bytes, spans: list[Span], *, final: bool = True
) -> tuple[list[Span], int | None, int]:
    """Stretch each BEGIN marker's span to its END marker within ``KEY_REACH``, else over
    the lines of its body (``key_lines``); open (to the block's end) when the block ends
    first: within its body's lines, or (unless ``final``) within reach of its END, which a
    stream's next window may hold. Also how much of the reach the next window has.

    Done before merging, so that no other find overlapping a BEGIN line can hide it."""
    out: list[Span] = []
    open_at: int | None = None
    left = 0
    # One END search serves every BEGIN before it (a line of a thousand BEGIN markers would
    # otherwise search the rest of the block a thousand times), one reading of the lines
    # below a line every BEGIN on it.
    searched_from: int | None = None  # where the last END search started
    last_end: tuple[int, int] | None = None  # and the END marker it found
    below: dict[int, KeyBody] = {}
    for start, end, kind in sorted(spans):
        if kind == B64_KEY:  # a key in base64: over its wrapped lines
            lines = B64_KEY_LINES.match(block, end)
            end = max(end, lines.end()) if lines else end
        if kind == Kind.PRIVATE_KEY and BEGIN_KEY.match(block, start):
            reuse = searched_from is not None and searched_from <= end
            if reuse and last_end is not None and last_end[0] < end:
                reuse = False  # the END found then lies before this BEGIN's end
            if not reuse:
                m = END_KEY.search(block, end)
                searched_from, last_end = end, (m.span() if m else None)
            nl = block.find(b"\n", end)
            if last_end is not None and last_end[1] <= end + KEY_REACH:
                body = KeyBody(last_end[1], False)
            elif nl < 0:
                body = KeyBody(len(block), True)
            else:  # the rest of the BEGIN line, and the body lines below it
                if nl not in below:
                    prefix = block[block.rfind(b"\n", 0, start) + 1 : start]
                    below[nl] = key_lines(block, nl + 1, prefix=prefix)
                body = KeyBody(max(below[nl].end, nl), below[nl].open)
            if not final and last_end is None and end + KEY_REACH > len(block):
                body = KeyBody(len(block), True)  # its END may be in the next window
                left = max(left, end + KEY_REACH - len(block))
            if body.open:
                open_at = start if open_at is None else min(open_at, start)
            end = max(body.end, end)
        out.append((start, end, kind))
    return out, open_at, left


# A line of key material, or the armor checksum line that ends a PGP block (``=Ab3d``).
_KEY_LINE = re.compile(rb"(?:[A-Za-z0-9+/=]{8,}|=[A-Za-z0-9+/]{4})\r?")


def _end_markers(lowered: bytes, start: int) -> list[int]:
    """Where each ``-----end `` marker starts (a key's END line, maybe without its BEGIN)."""
    out = []
    at = lowered.find(b"-----end ", start)
    while at >= 0:
        out.append(at)
        at = lowered.find(b"-----end ", at + 9)
    return out


def _headless_key_ends(
    block: bytes, ends: Iterable[int], start: int, found: list[Span]
) -> list[Span]:
    """Key material whose BEGIN line is not in the text (a log's cap cut it, or a step
    printed only the end of a key file): from an END line with no BEGIN before it, back
    over the base64 lines above it."""
    out: list[Span] = []
    # One sweep over the finds in order of start (``ends`` ascend): a line of END markers
    # would otherwise compare every marker with every find.
    spans = sorted((s, e) for s, e, _ in found)
    i, reach = 0, -1  # the finds that start at or before ``at``, and how far they reach
    past = -1  # where the last run of END lines stopped
    for at in ends:
        if at < past:
            continue  # one of the END lines the last span took in
        while i < len(spans) and spans[i][0] <= at:
            reach = max(reach, spans[i][1])
            i += 1
        m = END_KEY.match(block, at)
        if m and not at < reach:
            # The END lines right below it go into the same span, in one match (a file of
            # END lines would otherwise be a find, and a placeholder, per line).
            past = _END_LINES.match(block, m.end()).end()  # type: ignore[union-attr]
            first = _key_body_start(block, at, floor=start)
            if first == at and block.rfind(b"\n", 0, at) + 1 < at:
                continue  # ``_SK_END = b"-----END …"``: code naming the marker, no key above
            out.append((first, past, Kind.PRIVATE_KEY))
    return out


# END lines, each right after the one before (possessive: a run is read once, never again).
_END_LINES = re.compile(rb"(?i)(?:\r?\n-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----)*+")


def _key_body_start(block: bytes, end_line: int, *, floor: int) -> int:
    """The first of the base64-looking lines that run up to ``end_line``."""
    first = end_line
    while first > floor:
        line_start = block.rfind(b"\n", floor, first - 1) + 1
        line_start = max(line_start, floor)
        if not _KEY_LINE.fullmatch(block, line_start, first - 1):
            break
        first = line_start
    return first


def replace(block: bytes, spans: Iterable[Span], start: int = 0, end: int | None = None) -> bytes:
    """``block[start:end]`` with each span replaced by its placeholder."""
    stop = len(block) if end is None else end
    out: list[bytes] = []
    pos = start
    for s, e, kind in spans:
        out.append(block[pos:s])
        out.append(placeholder(kind).encode())
        out.append(b"\n" * block.count(b"\n", s, e))
        pos = e
    out.append(block[pos:stop])
    return b"".join(out)
