"""This node's own secrets in disguise: spaced, folded, reversed, re-cased, re-encoded.

``literals`` finds a secret value as written and in the encodings a tool writes it in. A
step that wants it in the log gets past those by printing it differently: one character
per line (``fold -w1``), spaced (``t o k e n``, or with NO-BREAK SPACEs), reversed
(``rev``), upper-cased, rot13, as base64 or hex wrapped at some width (``base64 -w 76``,
``xxd -p``) and starting at any byte of a longer blob, as base32, reversed and then hex
(``rev | xxd -p``), with a mark between characters (``t.o.k.e.n``, ``t-o-k-e-n``, ``t, o,
k``, ``t|o|k``, ``t_o_k``, Python's ``['t', 'o', 'k']``: one ``marked`` form), with every
character escaped (``\\u0074``, ``\\U00000074``, ``%74``, ``&#116;``, ``&#x74;``), as
its bytes one by one (``74:6f``, ``\\x74\\x6f``, ``0x74, 0x6f``), or as the base64 of the
value reversed. A token's secret part without its well-known prefix (``${TOKEN#ghp_}``) is a
secret of its own (``with_bodies``), in every one of those forms.

So the value is looked for once whitespace is taken out, in each of those transforms: the
forms are worked out once, when the redactor is built; one search of the block's canonical
text (``canon``: no whitespace, no case) finds where a form may start, and there each form's
own RE2 regex, with whitespace between two characters — any character ``str.isspace`` calls
whitespace, line breaks and Unicode spaces included — says whether it is one, in linear
time, whatever the log holds. A match counts when no gap in it is longer than ``MAX_GAP``
bytes (checked on the match: a regex that counted the bytes of every gap would be too large
for RE2's DFA once a node has a few secrets). A marked form's gap is one mark
(``.,;:|/_-``), a quote on either side of it and whitespace around each: at most
``MAX_MARK_GAP`` bytes; the canonical text drops marks and quotes as it drops whitespace. A
base64 (base32) form is the value encoded at each of the three (five) byte offsets it may
sit at in a longer blob, less the edge characters that mix in the neighbouring bytes. Text
forms are matched in any case (a character past ASCII in its lower and upper case), base64
as written.

A step may also print the secret in pieces, each on a line of its own behind a label
(``part1: <first half>`` / ``part2: <second half>``): ``Pieces`` masks any run of at least
``MIN_PIECE`` consecutive characters of a token-shaped secret that stands as a word of its
own in the text (see there for why that threshold and those conditions). A piece is on one
line, so no stream cut falls inside one (short of a line longer than a window). A long
secret (a private key) is found by its pieces too, over line breaks (``runs``).

A hex dump's rows (``xxd``, ``hexdump -C``) are read back into bytes and masked where they
hold a secret or a piece of one (``dumps``). A piece shorter than ``MIN_PIECE`` is masked
where a label names it a piece (``part 2/3: …``, see ``labelled``).

A find may cross lines, so a stream must not cut a window inside one, nor ``parallel`` a
file: ``open_at`` says where an unfinished match starts at the end of a window (the stream
keeps it for the next one) and ``crossing`` where a match that runs over a cut ends. A
match is at most ``reach`` bytes long, so only that much of the text is read for either.
"""

from __future__ import annotations

import base64
import bisect
import codecs
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import re2

from relay.redact.canon import Canonical, CanonRider, CanonSearch, Tag, canonical, lead
from relay.redact.dumps import Dumps
from relay.redact.labelled import Labelled
from relay.redact.linear import Searcher, searcher
from relay.redact.literals import ANCHOR, BORING_VALUES, MIN_SECRET_LEN, Literal
from relay.redact.rules import Kind, Span
from relay.redact.runs import Runs

# Whitespace allowed between two characters: a CRLF and an indent, a space or two.
MAX_GAP = 6
# The most strings of the canonical search that ride on the format table's pass (``rider``):
# those of two secrets of 36 characters (66). Measured on a 100 MB build log, one core: one
# secret's 1.85 -> 1.70 CPU-s, two's 1.85 -> 1.76; three's about the same, four's 2% slower
# (the riders' automaton grows with the strings, and more of the pass's hits open with one).
MOST_RIDING = 72
# Longer values (a key file in a variable) keep the exact forms alone: their disguised
# forms would make a match longer than a stream's overlap (32 KiB).
MAX_DISGUISED_LEN = 256


def _latin1() -> re2.Options:
    """Options that read a pattern and a text as bytes (Latin-1), as the forms' regex does."""
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
    return options


# One whitespace character as ``str.isspace`` says, in UTF-8 (the regexes read bytes as
# Latin-1, so a character past ASCII is its bytes; ``(?-i:`` keeps a case-folding form
# from folding those bytes into others).
_WS = (
    rb"(?-i:[\t-\r\x1c-\x20]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
    rb"|\xe2\x81\x9f|\xe3\x80\x80)"
)
_GAP = _WS + b"*"
# The marks a step puts between a secret's characters (``a.b``, ``a-b``, ``a,b``, ``a|b``,
# ``a_b``, ``a:b``, ``a;b``, ``a/b``), and the quotes around each character of a list of
# them (Python's ``['a', 'b']``, JSON's ``["a", "b"]``).
_MARKS = ".,;:|/_-'\""  # and the quotes
_MARK = rb"[.,;:|/_-]"
_QUOTE = rb"['\"]"
# Between two characters of a ``marked`` form: one mark, whitespace around it, and a quote
# on either side (``a , b``, ``a', 'b``): each run of whitespace held to ``MAX_GAP`` bytes
# as any gap is, so at most ``MAX_MARK_GAP`` bytes.
# Its whitespace is ASCII's alone: a class, where ``_WS``'s alternation of byte sequences,
# four times in every gap of every form, made 16 secrets' forms 10 MB larger and 40
# secrets' pass a sixth slower.
_MARK_WS = rb"[\t-\r ]*"
# The mark may be missing between two characters: a step that prints the value in groups
# (``fold -w4 | paste -sd-``: ``tok9-Xq2L-…``) puts one between some of them only.
_MARK_GAP = _MARK_WS + _QUOTE + b"?" + _MARK_WS + _MARK + b"?" + _MARK_WS + _QUOTE + b"?" + _MARK_WS
MAX_MARK_GAP = 4 * MAX_GAP + 3
# What may follow a start of a marked form where a text ends (a gap cut short).
_MARK_TAIL = rb"[\t-\r .,;:|/_'\"-]*"
# The starts' regex reads a gap as any run of the bytes those characters are made of: a
# superset (each start it finds is held to the whole form, gaps and all, by the form's own
# regex), one class where the exact gap is an alternation of byte sequences — spelt out
# between every two characters of every start of 16 secrets, it cost megabytes of parsed
# regex, and states. The marks and quotes of a marked form's gaps are in it too.
_HEAD_GAP = rb"(?-i:[\t-\r\x1c-\x20\x80-\x8a\x9a\x9f\xa0\xa8\xa9\xaf\xc2\xe1-\xe3.,;:|/_'\"-]*)"
# A gap wider than MAX_GAP bytes has at least three characters (none is over three bytes):
# such runs are the candidates, and their length in bytes decides.
_WIDE_CANDIDATE = re2.compile(_WS + b"{3,}", _latin1())
# Well-known token prefixes: the part after one is printed alone by ``${TOKEN#ghp_}``.
KNOWN_PREFIXES = ("github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "glpat-", "npm_")


def _aligned(raw: bytes, encode: str, bits: int) -> Iterator[str]:
    """``raw`` encoded at each byte offset in a longer blob (``bits`` per character), less
    the characters at either end that also carry the neighbouring bytes' bits."""
    group = 3 if bits == 6 else 5  # bytes per whole group of characters
    for shift in range(group):
        data = b"\0" * shift + raw
        text = (base64.b64encode(data) if encode == "64" else base64.b32encode(data)).decode()
        yield text.rstrip("=")[(8 * shift + bits - 1) // bits : 8 * (shift + len(raw)) // bits]


def with_bodies(secrets: Iterable[str]) -> tuple[str, ...]:
    """``secrets`` and, for each that starts with a well-known token prefix, its secret part
    alone (``${TOKEN#ghp_}`` prints it): that part is as much a secret as the whole."""
    found = set(secrets)
    for value in list(found):
        prefix = next((p for p in KNOWN_PREFIXES if value.startswith(p)), None)
        if prefix is not None and len(value) - len(prefix) >= MIN_SECRET_LEN:
            found.add(value[len(prefix) :])
    return tuple(sorted(found))


def _too_wide(text: bytes, start: int, end: int) -> int:
    """The end of the first whitespace run in ``text[start:end]`` longer than ``MAX_GAP``
    bytes; -1 when there is none."""
    for run in _WIDE_CANDIDATE.finditer(text, start, end):
        if run.end() - run.start() > MAX_GAP:
            return run.end()
    return -1


def _u_escapes(value: str) -> str:
    """Every character as a JSON ``\\uXXXX`` escape (a surrogate pair past the BMP)."""
    units = value.encode("utf-16-be")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def _separated(bare: str, raw: bytes) -> set[str]:
    """The value's bytes written one by one: ``61:62:63`` (``xxd``, a MAC-like dump),
    ``\\x61\\x62``, ``0x61, 0x62`` (a C array; whitespace between characters is the
    regex's), HTML's ``&#97;&#98;`` and ``&#x61;&#x62;``. (The value with a mark between its
    characters is a ``marked`` form, see ``marked_forms``.)"""
    return {
        ":".join(f"{b:02x}" for b in raw),
        "".join(f"\\x{b:02x}" for b in raw),
        ",".join(f"0x{b:02x}" for b in raw),
        "".join(f"0x{b:02x}" for b in raw),
        "".join(f"&#{ord(c)};" for c in bare),
        "".join(f"&#x{ord(c):x};" for c in bare),
    }


def disguised_forms(value: str) -> tuple[set[str], set[str]]:
    """The forms of ``value`` to match in any case, and those to match as written; each
    without whitespace (the regex allows it between characters) and long enough to be
    specific."""
    raw = value.encode()
    bare = "".join(value.split())
    rot = codecs.encode(bare, "rot13")
    any_case = {bare, bare[::-1], rot, rot[::-1], raw.hex(), _u_escapes(value)}
    any_case |= {bare[::-1].encode().hex(), raw.hex()[::-1]}  # ``rev | xxd -p``, and after
    any_case.add("".join(f"\\U{ord(c):08x}" for c in value))  # Python's long escape
    any_case.add("".join(f"%{b:02x}" for b in raw))
    any_case.update(_separated(bare, raw))
    any_case.update(_aligned(raw, "32", 5))
    # UTF-16LE, as PowerShell's ``-EncodedCommand`` and .NET's ``Encoding.Unicode`` write it
    wide = value.encode("utf-16-le")
    any_case.add(wide.hex())
    as_written: set[str] = set()
    # base64 of the value, of the value reversed (``rev | base64``) and of its UTF-16LE
    aligned = (raw, bare[::-1].encode(), wide)
    for body in (b for data in aligned for b in _aligned(data, "64", 6)):
        as_written.update({body, body.replace("+", "-").replace("/", "_")})

    def long(forms: set[str]) -> set[str]:
        return {f for f in forms if len(f) >= MIN_SECRET_LEN}

    return long(any_case), long(as_written - any_case)


def marked_forms(value: str) -> set[str]:
    """The forms of ``value`` to match, in any case, with a mark or none between any two of
    their characters (``_MARK_GAP``: ``a.b.c``, ``a-b-c``, ``a, b, c``, ``a|b``, ``a_b``,
    Python's and JSON's lists of them, ``['a', 'b']``, groups ``abc-def``): the value
    itself, whitespace out, and reversed. One form for every mark, not one for each: the
    gap's class holds them all. (Not its bytes as decimal numbers, ``[116, 111, …]``: a
    form three times as long took 40 secrets' redactor 9 MB past its 56 MB, and a tenth
    slower.)"""
    bare = "".join(value.split())
    return {bare, bare[::-1]} if len(bare) >= MIN_SECRET_LEN else set()


def _char(char: str) -> bytes:
    """One character of a form: an ASCII one as it is (the form's ``(?i:…)`` folds it), any
    other in its lower and upper case, each variant's UTF-8 bytes kept as written (RE2
    reads the text as Latin-1 and would fold a byte of one on its own)."""
    if char.isascii():
        return re2.escape(char.encode())
    variants = sorted({char, char.lower(), char.upper()})
    quoted = [re2.escape(v.encode()) if v.isascii() else b"(?-i:" + re2.escape(v.encode()) + b")"
              for v in variants]  # fmt: skip
    return b"(?:" + b"|".join(quoted) + b")"


def _longest(form: str, gap: int = MAX_GAP) -> int:
    """Bytes in the longest text a form matches (each character's longest case, each gap
    at its widest: ``gap`` bytes)."""
    if form.isascii():  # every case of each character is one byte
        size = len(form)
    else:
        size = sum(max(len(v.encode()) for v in (c, c.lower(), c.upper())) for c in form)
    return size + (len(form) - 1) * gap


def _spaced(form: str, gap: bytes = _GAP) -> bytes:
    """``form`` with whitespace (``gap``) between characters."""
    return gap.join(_char(char) for char in form)


def _spaced_prefix(form: str, gap: bytes = _GAP) -> bytes:
    """Any non-empty start of ``form``, spaced as ``_spaced`` spaces it."""
    pattern = b""
    for char in reversed(form):
        pattern = _char(char) + (b"(?:" + gap + pattern + b")?" if pattern else b"")
    return pattern


# Characters of a form the first search looks for: with the gaps between them, few enough
# for a small DFA over every form of 16 secrets, enough that ordinary text rarely has one.
PREFIX = 8
# RE2's memory for the forms' starts and for one form: enough that the DFA never runs out
# (RE2 would log it and fall back to a slower engine), and no more.
_HEADS_MEM = 32 << 20
# What the canonical search's tags say starts at a place.
_HEAD, _LITERAL, _PIECE, _RUN = range(4)
# A literal with fewer canonical bytes than this is not looked for there (``unanchored``).
_MIN_ANCHOR = 4
_FORM_MEM = 2 << 20
# RE2 needs room for twenty of a DFA's states before it searches at all, and a state holds
# an entry for each instruction: a form's program grows with its regex, and a form of a
# secret past ASCII (each character in its cases, ``\U0001f511`` ten characters with a
# gap between each) outgrew 2 MB, and RE2 logged "DFA out of memory" and fell back to its
# slower engine. Measured, each form's regex (from 3 kB to 280 kB) needed at most 134
# bytes for each of its bytes; the budget is a ceiling, spent only on states a search
# builds, and a form's search reads no more than ``reach`` bytes.
_FORM_MEM_PER_BYTE = 160


def _compile(pattern: bytes, *, anchored: bool = False, max_mem: int = 8 << 20) -> Searcher:
    return searcher(_regex(pattern, max_mem), anchored=anchored)


def _regex(pattern: bytes, max_mem: int) -> re2._Regexp[bytes]:
    options = re2.Options()
    # Where the forms of many secrets make an automaton past its budget (the starts' search
    # of 40 secrets, which only cutting a log into pieces asks for), RE2 searches without
    # it, as exactly and more slowly; its log line of that is no news to a person.
    options.log_errors = False
    options.never_capture = True
    options.longest_match = True
    options.max_mem = max_mem
    options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
    return re2.compile(pattern, options)


# Pieces: 12 characters of a token drawn from 62 is 71 bits, no log holds them by chance,
# and a token cut in two (a 40-character ``ghp_`` token in halves) leaves pieces this long.
MIN_PIECE = 12
# A secret whose pieces may be masked: token-shaped (a URL's or a sentence's pieces are
# words any log has: ``https://sent``).
# The pieces are looked for by their secret's aligned blocks of this many characters: a
# piece (``MIN_PIECE`` characters) holds a whole one, and there are fewer of them (six of a
# 36-character token, not 25 pieces): the canonical search's cost grows with its strings.
_PIECE_BLOCK = MIN_PIECE // 2
_TOKEN_SHAPED = re2.compile(rb"[A-Za-z0-9_.+/=-]+")
_DIGITS = b"0123456789"
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


@dataclass(frozen=True)
class Pieces:
    """Runs of ``MIN_PIECE`` or more consecutive characters of a token-shaped secret, as a
    word of the text: each end at the text's edge, a non-word byte, or the secret's own end.

    Only pieces with a letter and a digit are looked for (a run of letters alone may be a
    word, the token's prefix is one), and a piece inside a longer word is left alone: those
    two keep ordinary text (identifiers, hashes, base64) from ever matching. One RE2 regex
    finds each piece's first ``MIN_PIECE`` characters; a find is stretched along the secret
    at most its length either way, so a log costs linear time."""

    at: dict[bytes, tuple[tuple[bytes, int], ...]]  # a piece's start: (secret, offset) each
    compiled: list[Searcher] = field(default_factory=list)  # ``search``, once asked for

    @property
    def search(self) -> Searcher:
        """Every piece's start, over a block as written (a search of their own: the
        canonical search finds them otherwise), compiled when first asked for."""
        if not self.compiled:
            self.compiled.append(_compile(b"|".join(re2.escape(g) for g in sorted(self.at))))
        return self.compiled[0]

    @classmethod
    def build(cls, secrets: Iterable[bytes]) -> Pieces | None:
        at: dict[bytes, list[tuple[bytes, int]]] = {}
        for raw in secrets:
            if len(raw) <= MIN_PIECE or not _TOKEN_SHAPED.fullmatch(raw):
                continue
            for k in range(len(raw) - MIN_PIECE + 1):
                gram = raw[k : k + MIN_PIECE]
                # (ASCII, token-shaped: a letter has two cases, a digit is one of ten bytes)
                letters = gram.lower() != gram.upper()
                if letters and len(gram.translate(None, _DIGITS)) < MIN_PIECE:
                    at.setdefault(gram, []).append((raw, k))
        if not at:
            return None
        return cls({g: tuple(v) for g, v in at.items()})

    def spans(self, text: bytes, pos: int) -> Iterator[tuple[int, int]]:
        stop = len(text)
        while pos < stop:
            s = self.search(text, pos, stop)[0][0]
            if s < 0:
                return
            run = self.run_at(text, s)
            if run is not None and run[2]:
                yield run[0], run[1]
                pos = run[1]
            else:
                pos = s + 1

    def run_at(self, text: bytes, s: int) -> tuple[int, int, bool] | None:
        """The longest run through the piece that starts at ``s`` and whether it stands as a
        word of its own; None when no piece starts there."""
        starts = self.at.get(text[s : s + MIN_PIECE])
        if starts is None:
            return None
        return max((self._stretch(text, s, raw, k) for raw, k in starts), key=lambda r: r[1] - r[0])

    @staticmethod
    def _stretch(text: bytes, s: int, raw: bytes, k: int) -> tuple[int, int, bool]:
        """The run through ``text[s:]`` = ``raw[k:]``'s first piece, as far as both agree
        either way, and whether it stands as a word of its own."""
        back = 0
        while back < min(s, k) and text[s - back - 1] == raw[k - back - 1]:
            back += 1
        ahead = MIN_PIECE
        while ahead < min(len(text) - s, len(raw) - k) and text[s + ahead] == raw[k + ahead]:
            ahead += 1
        lo, hi = s - back, s + ahead
        left = lo == 0 or k - back == 0 or text[lo - 1] not in _WORD_BYTES
        right = hi == len(text) or k + ahead == len(raw) or text[hi] not in _WORD_BYTES
        return lo, hi, left and right


def _starts_search(starts: Iterable[tuple[str, bool]]) -> Searcher:
    """One search for the forms' starts (whitespace between characters) over a block."""
    spaced = ((_spaced(start, _HEAD_GAP), fold) for start, fold in starts)
    pattern = b"|".join(sorted(b"(?i:" + head + b")" if fold else head for head, fold in spaced))
    return searcher(_regex(pattern, _HEADS_MEM))


def _aligned_blocks(raw: bytes) -> range:
    """Where each whole aligned block (``_PIECE_BLOCK`` characters) of a secret starts."""
    return range(0, len(raw) - _PIECE_BLOCK + 1, _PIECE_BLOCK)


@dataclass(frozen=True)
class _Form:
    """One disguised form, its regex written and compiled when first needed (the regexes
    of every form of 16 secrets, spaced, take megabytes as text alone): the whole form
    (anchored at a start the prefilter found), or a start of it then whitespace to the end."""

    form: str
    fold: bool
    cache: list[Searcher]
    opening: bool = False
    # An opening form of ASCII characters, as bytes (lower case when folded): ``open_at``
    # compares it in place instead of compiling its regex.
    plain: bytes | None = None
    # An ASCII form in canonical text (``canon``): what any match of it is there, whatever
    # its gaps and case, since the canonical text drops every byte a gap may hold.
    canon: bytes = b""
    marked: bool = False  # a mark between every two characters (``_MARK_GAP``)

    def search(self) -> Searcher:
        if not self.cache:
            gap = _MARK_GAP if self.marked else _GAP
            if self.opening:
                tail = _MARK_TAIL if self.marked else _GAP
                pattern = _spaced_prefix(self.form, gap) + tail + rb"\z"
            else:
                pattern = _spaced(self.form, gap)
            pattern = b"(?i:" + pattern + b")" if self.fold else pattern
            budget = max(_FORM_MEM, _FORM_MEM_PER_BYTE * len(pattern))
            self.cache.append(_compile(pattern, anchored=not self.opening, max_mem=budget))
        return self.cache[0]


def _may_open(end: str, form: str) -> bool:
    """Whether some end of ``end`` (text, whitespace out, lower case) is a start of ``form``
    (lower case): only then may a form's start close the text."""
    last = end[-1]
    at = form.find(last, 0, len(end))
    while at >= 0:
        if end.endswith(form[: at + 1]):
            return True
        at = form.find(last, at + 1, len(end))
    return False


# A run of whitespace characters (``_WS``): a form's start may have any between characters.
_WS_RUN = re2.compile(_WS + b"+", _latin1())


def _without_whitespace(text: bytes) -> tuple[bytes, list[int], list[int]]:
    """``text`` with every run of whitespace characters taken out, where each piece left
    starts in the result, and where it starts in ``text``."""
    pieces: list[bytes] = []
    kept: list[int] = []
    origins: list[int] = []
    at = size = 0
    for gap in _WS_RUN.finditer(text):
        if gap.start() > at:
            kept.append(size)
            origins.append(at)
            pieces.append(text[at : gap.start()])
            size += gap.start() - at
        at = gap.end()
    if at < len(text):
        kept.append(size)
        origins.append(at)
        pieces.append(text[at:])
    return b"".join(pieces), kept, origins


def _origin(kept: list[int], origins: list[int], j: int) -> int:
    """Where byte ``j`` of ``_without_whitespace``'s result is in its text."""
    i = bisect.bisect_right(kept, j) - 1
    return origins[i] + j - kept[i]


@dataclass(frozen=True)
class _Openings:
    """The starts of some ASCII forms (those matched in any case, in lower case; or those
    matched as written): by their first ``PREFIX`` characters, the forms, and one search
    for those; and every shorter start of a form."""

    heads: dict[bytes, tuple[bytes, ...]]
    search: Searcher | None
    shorts: frozenset[bytes]


def _openings(opens: Iterable[tuple[str, _Form]]) -> tuple[_Openings, _Openings]:
    """The ASCII forms' starts, those matched in any case and those as written."""
    out: list[_Openings] = []
    for fold in (True, False):
        heads: dict[bytes, list[bytes]] = {}
        shorts: set[bytes] = set()
        for _, opening in opens:
            plain = opening.plain
            if plain is None or opening.fold != fold:
                continue
            if len(plain) >= PREFIX:
                heads.setdefault(plain[:PREFIX], []).append(plain)
            shorts.update(plain[:n] for n in range(1, min(PREFIX, len(plain) + 1)))
        pattern = b"|".join(re2.escape(head) for head in sorted(heads))
        search = _compile(pattern, max_mem=_HEADS_MEM) if heads else None
        out.append(_Openings({k: tuple(v) for k, v in heads.items()}, search, frozenset(shorts)))
    return out[0], out[1]


def _opening(text: bytes, index: _Openings) -> int:
    """The first place in ``text`` from which the rest is a start of one of ``index``'s
    forms; -1 when none."""
    size = len(text)
    pos = 0
    while index.search is not None and pos < size:
        j = index.search(text, pos, size)[0][0]
        if j < 0:
            break
        for plain in index.heads.get(text[j : j + PREFIX], ()):
            if size - j <= len(plain) and text.endswith(plain[: size - j]):
                return j
        pos = j + 1
    for j in range(max(0, size - PREFIX + 1), size):
        if text[j:] in index.shorts:
            return j
    return -1


def _key(text: bytes) -> str:
    """A prefilter find, or a form's start, without whitespace, marks and case: the forms to
    try (a marked form's start is found with marks between its characters)."""
    return _unmarked("".join(text.decode("utf-8", "replace").split()).lower())


_UNMARK = str.maketrans("", "", _MARKS)


def _unmarked(text: str) -> str:
    """``text`` without the marks and quotes a marked form may have between characters."""
    return text.translate(_UNMARK)


@dataclass(frozen=True)
class Disguises:
    """Every disguised form of this node's secrets: one search of the block's canonical
    text (``canon``) finds the first ``PREFIX`` characters of any form there, and only
    where it finds one are the forms that start so tried in the block, anchored there (the
    starts' regex, whitespace between characters, then each form's own).

    One alternation of every whole form grows with the secrets until RE2's DFA runs out of
    memory (and falls back to a slower engine, logging it): a node with six 36-character
    secrets did. The starts' regex over the block, whitespace allowed between characters,
    cost more the more secrets there were; the canonical text's plain strings do not."""

    heads: frozenset[tuple[str, bool]]  # each form's start, and whether it folds
    forms: dict[str, tuple[_Form, ...]]  # by start (``_key``): the forms that begin so
    # For each form, a start of it and then only whitespace, to the text's end (one regex
    # a form: RE2 takes seconds to compile them as one alternation).
    opens: tuple[tuple[str, _Form], ...]  # each form in lower case, and its start's regex
    reach: int  # bytes in the longest match (the most whitespace in every gap)
    pieces: Pieces | None = None  # on one line each: no stream cut falls inside one
    # The forms by their start in the canonical text (and how many characters before it
    # each starts): what the canonical search's start tags point at.
    groups: tuple[tuple[int, tuple[_Form, ...]], ...] = ()
    # The one search, in the canonical text, for every start of a form, literal, piece and
    # run (None: each is a search of its own over the block, as the tests compare).
    either: CanonSearch | None = None
    runs: Runs | None = None  # the long secrets' pieces
    unanchored: tuple[Literal, ...] = ()  # ``build``'s ``also`` that it does not find
    # The starts of the forms whose start the canonical text drops most of (a secret past
    # ASCII): searched for in the block as written, as every form's once was.
    weak: frozenset[tuple[str, bool]] = frozenset()
    compiled: list[Searcher] = field(default_factory=list)  # ``search``, once asked for
    weak_compiled: list[Searcher] = field(default_factory=list)  # and ``weak``'s
    # The ASCII forms' starts, in any case and as written (see ``_openings``), once needed.
    openings: list[_Openings] = field(default_factory=list)
    dumps: Dumps | None = None  # the secrets' bytes, looked for in hex dumps' rows
    labelled: Labelled | None = None  # the secrets, for pieces a label names
    # The forms past ASCII in ``opens``: those ``open_at`` runs the start's regex of (the
    # others are compared in place, and most nodes' secrets have no such form).
    unplain: tuple[tuple[str, _Form], ...] = ()
    # ``either``'s strings spelled out for the format table's pass, when they are few
    # enough that it costs that pass less than the canonical text's copy and search.
    rider: CanonRider | None = None

    @property
    def search(self) -> Searcher | None:
        """The forms' starts over a block as written (``crossing``, and each search of its
        own): compiled when first asked for, not for the one search, which never needs it
        (its regex spells out the gaps between the first characters of every form: for 40
        secrets, 60 ms and 20 MB to compile)."""
        if not self.heads:
            return None
        if not self.compiled:
            self.compiled.append(_starts_search(self.heads))
        return self.compiled[0]

    @classmethod
    def build(cls, secrets: Iterable[str], also: Iterable[Literal] = ()) -> Disguises | None:
        """The forms of each secret that ``literals`` masks and that is ``MAX_DISGUISED_LEN``
        characters long at most, the pieces of each token-shaped one and of each long one
        (``runs``); None when there are none. ``also``: literals to find in the same pass
        over a block (this node's secrets as written and encoded): ``spans`` hands each
        place where one may start to its ``also`` callback, so that the block is read once
        for all of them; those whose start the canonical text drops (a blank, a byte past
        ASCII) or that are too short to look for there are ``unanchored``, for the caller
        to find otherwise."""
        forms: dict[str, list[_Form]] = {}
        heads: set[tuple[str, bool]] = set()  # each form's start, and whether it folds
        starts: list[tuple[str, _Form]] = []
        anchors: list[tuple[bytes, Tag]] = []
        groups: dict[tuple[bytes, int], list[_Form]] = {}
        weak: set[tuple[str, bool]] = set()  # starts the canonical text keeps too little of
        reach = 0
        for value in sorted(set(secrets)):
            short = len(value) < MIN_SECRET_LEN or value.lower() in BORING_VALUES
            if short or len(value) > MAX_DISGUISED_LEN:
                continue
            any_case, as_written = disguised_forms(value)
            every = [
                *((f, True, False) for f in any_case),
                *((f, False, False) for f in as_written),
                *((f, True, True) for f in marked_forms(value)),
            ]
            for form, fold, marked in every:
                full = canonical(form.encode())
                # (a character past ASCII may have a case in ASCII: ``ı`` and ``I``)
                canon = full if form.isascii() else b""
                whole = _Form(form, fold, [], canon=canon, marked=marked)
                forms.setdefault(_key(form[:PREFIX].encode()), []).append(whole)
                heads.add((form[:PREFIX], fold))
                # (a marked form's start is compared by its regex: its gaps hold marks)
                ascii_plain = form.isascii() and not marked
                plain = (form.lower() if fold else form).encode() if ascii_plain else None
                starts.append((form.lower(), _Form(form, fold, [], True, plain, marked=marked)))
                reach = max(reach, _longest(form, MAX_MARK_GAP if marked else MAX_GAP))
                # Its start in the canonical text, and how many characters before it
                # that text drops (a form that starts past ASCII is looked for behind it).
                dropped = next((i for i, c in enumerate(form) if canonical(c.encode())), 0)
                start = full[:PREFIX]
                if len(start) < _MIN_ANCHOR:  # mostly past ASCII: a search of its own
                    weak.add((form[:PREFIX], fold))
                else:
                    groups.setdefault((start, dropped), []).append(whole)
        for i, (head_key, _) in enumerate(groups):
            anchors.append((head_key, (_HEAD, i)))
        unanchored: list[Literal] = []
        for lit in also:
            key = canonical(lit.needle)
            if len(key) < _MIN_ANCHOR:
                unanchored.append(lit)
            else:  # found where its first kept byte is: its bytes before that lead to it
                anchors.append((key[:ANCHOR], (_LITERAL, lead(lit.needle))))
        runs = Runs.build(secrets)
        pieces = Pieces.build(value.encode() for value in set(secrets))
        if pieces is not None:
            # Every run of ``MIN_PIECE`` characters holds one of these (see ``_spans``).
            raws = {raw for found in pieces.at.values() for raw, _ in found}
            blocks = {raw[k : k + _PIECE_BLOCK] for raw in raws for k in _aligned_blocks(raw)}
            anchors.extend((canonical(b), (_PIECE, lead(b))) for b in blocks)
        if runs is not None:
            grams = (gram for gram in runs.at if len(canonical(gram)) >= _MIN_ANCHOR)
            anchors.extend((canonical(gram)[:ANCHOR], (_RUN, lead(gram))) for gram in grams)
        either = CanonSearch.build(anchors)
        if either is None and not unanchored and not weak:
            return None
        found = {k: tuple(v) for k, v in forms.items()}
        by_start = tuple((dropped, tuple(group)) for (_, dropped), group in groups.items())
        return cls(
            frozenset(heads), found, tuple(starts), reach + MAX_GAP, pieces, by_start,
            either, runs, tuple(unanchored), frozenset(weak), dumps=Dumps.build(secrets),
            labelled=Labelled.build(secrets),
            unplain=tuple((form, opening) for form, opening in starts if opening.plain is None),
            rider=CanonRider(either) if either and len(either.tags) <= MOST_RIDING else None,
        )  # fmt: skip

    def spans(
        self,
        block: bytes,
        start: int = 0,
        also: Callable[[bytes, int], Iterable[Span]] | None = None,
        *,
        places: Sequence[int] | None = None,
        labels: Sequence[int] | None = None,
    ) -> Iterator[Span]:
        """Every match at or after ``start``, and every piece and run: one search of the
        canonical text finds where a form, a literal, a piece or a run may start, and each
        is then read there in the block, as written. ``also``: the finds at each place
        where one of ``build``'s ``also`` may start (without it, those are passed over).

        When the format table's pass read the block from ``start`` with ``rider`` and
        ``LABEL_RIDER``: ``places``, the places it found (instead of the canonical text's
        search), and ``labels``, where a label may first be (empty: nowhere)."""
        pieces, either, runs = self.pieces, self.either, self.runs
        for s, e in () if self.dumps is None else self.dumps.spans(block, start):
            yield s, e, Kind.OWN_SECRET  # rows of a hex dump (``dumps``)
        first = None if labels is None else labels[0] if labels else -1
        for s, e in () if self.labelled is None else self.labelled.spans(block, start, first):
            yield s, e, Kind.OWN_SECRET  # ``first half: …`` (``labelled``)
        if either is None:  # each search of its own, over the block as written
            for s, e in self._matches(block, start, len(block)):
                yield s, e, Kind.OWN_SECRET
            for s, e in () if pieces is None else pieces.spans(block, start):
                yield s, e, Kind.OWN_SECRET
            return
        pieces_from = runs_from = start
        tried = start - 1  # the last place a piece was tried at
        heads_tried: dict[int, int] = {}  # and each group of forms, by its index
        for at, tags, canon, j in self._starts(block, start, either, places):
            ends: dict[int, int] = {}  # the longest form at each start, as ``_matches``
            for what, dropped in tags:
                if what == _LITERAL and also is not None:
                    if at - dropped >= start:
                        yield from also(block, at - dropped)
                elif what == _HEAD:
                    group = self.groups[dropped]
                    s0 = max(start, heads_tried.get(dropped, start - 1) + 1)
                    heads_tried[dropped] = self._heads_at(block, s0, at, group, ends, canon, j)
                elif what == _PIECE and pieces is not None:
                    # A piece that holds this block starts up to a block's length before
                    # it; each place is tried once, in order, as a search for them would.
                    first = max(at - dropped - _PIECE_BLOCK, tried + 1, pieces_from)
                    for p in range(first, at + 1):
                        run = pieces.run_at(block, p)
                        if run is not None and run[2] and p >= pieces_from:
                            yield run[0], run[1], Kind.OWN_SECRET
                            pieces_from = run[1]
                    tried = max(tried, at)
                elif what == _RUN and runs is not None and at - dropped >= runs_from:
                    found = runs.run_at(block, at - dropped)
                    if found is not None:
                        yield found[0], found[1], Kind.OWN_SECRET
                        runs_from = found[1]
            for s, end in sorted(ends.items()):
                if _too_wide(block, s, end) < 0:
                    yield s, end, Kind.OWN_SECRET
        if self.weak:
            if not self.weak_compiled:
                self.weak_compiled.append(_starts_search(self.weak))
            for s, e in self._matches(block, start, len(block), self.weak_compiled[0]):
                yield s, e, Kind.OWN_SECRET

    @staticmethod
    def _starts(
        block: bytes, start: int, either: CanonSearch, places: Sequence[int] | None
    ) -> Iterator[tuple[int, set[Tag], bytes | None, int]]:
        """Each place where a string of ``either`` starts, in order, with its tags, and the
        canonical text with the place in it (None: worked out where needed)."""
        if places is None:
            text = Canonical(block, start)
            for j, tags in either.finds(text.text):
                yield text.origin(j), tags, text.text, j
            return
        for at in places:
            if at >= start:
                yield at, either.tags_at(block, at), None, 0

    def _heads_at(
        self,
        block: bytes,
        start: int,
        at: int,
        group: tuple[int, tuple[_Form, ...]],
        ends: dict[int, int],
        canon: bytes | None,
        j: int,
    ) -> int:
        """The forms that start where the canonical text has their start, at ``at`` (``j``
        in ``canon``): each form's own regex, anchored there, gives its end (the longest at
        each start into ``ends``). A form that starts with characters the canonical text
        drops (past ASCII, ``%``, ``\\``) starts up to that many characters before ``at``
        (and its gaps: a marked form's are wider), but not before ``start``, where the
        group's last call left off (two finds of a start may be closer than that, as
        ``\\U00000067\\U00000068`` are); returns the last place tried.

        An ASCII form is one at a start only if the canonical text from there goes on with
        the whole form (a match's bytes, whatever its gaps and case, are the form there): a
        compare in place, where its regex (compiled when first asked for, tens of kilobytes
        for a spaced form) would refuse a start that a log holds by chance (``\\u006f…``,
        the start of many secrets' escaped forms, in a test's output)."""
        dropped, forms = group
        gap = MAX_MARK_GAP if any(form.marked for form in forms) else MAX_GAP
        first = max(start, at - dropped * (4 + gap)) if dropped else at
        last = at - 1 if dropped else at
        if first > last:
            return last
        stop = len(block)
        if canon is None:  # the canonical text from ``first`` as far as a form reaches
            canon = canonical(block[first : at + self.reach])
            j = len(canonical(block[first:at]))
        for s in range(first, last + 1):
            here = j - len(canonical(block[s:at]))  # where ``s`` is in the canonical text
            for form in forms:
                if form.canon and not canon.startswith(form.canon, here):
                    continue
                end = form.search()(block, s, min(stop, s + self.reach))[0][1]
                if end > ends.get(s, -1):
                    ends[s] = end
        return last

    def _matches(
        self, text: bytes, pos: int, stop: int, starts: Searcher | None = None
    ) -> Iterator[tuple[int, int]]:
        """Every match in ``text[pos:stop]`` whose gaps are short enough; overlapping ones
        too (the search goes on from the byte after a match's start): a secret half masked
        is a secret leaked. At each start of a form, the longest match of those forms.
        ``starts``: a search for some forms' starts only (default: every form's)."""
        search = self.search if starts is None else starts
        while search is not None and pos < stop:
            s, e = search(text, pos, stop)[0]
            if s < 0:
                return
            end = self._form_end(text, s, e, stop)
            if end >= 0 and _too_wide(text, s, end) < 0:
                yield s, end
            pos = s + 1

    def _form_end(self, text: bytes, s: int, e: int, stop: int) -> int:
        """The end of the longest form that the start ``text[s:e]`` opens; -1 when none."""
        end = -1
        for form in self._starting(_key(text[s:e])):
            end = max(end, form.search()(text, s, min(stop, s + self.reach))[0][1])
        return end

    def _starting(self, key: str) -> Iterator[_Form]:
        """The forms whose start ``key`` (a find of the starts' regex) or a start of it is;
        every form when it holds a character past ASCII (its cases may fold otherwise)."""
        if not key.isascii():
            for group in self.forms.values():
                yield from group
            return
        for size in range(0, len(key) + 1):  # (a form that opens with marks alone: "")
            yield from self.forms.get(key[:size], ())

    def open_at(self, text: bytes, floor: int) -> int:
        """Where, at or after ``floor``, the text from there to its end is the start of a
        match that more text may finish (a complete match counts too: more whitespace and
        characters could make it another); -1 when nowhere.

        A form of ASCII characters (every form of an ASCII secret) is compared in place:
        the text's end, whitespace out, must end with a start of the form — what the
        form's start-and-whitespace regex matches, without compiling one regex a form
        (16 secrets' 288 such regexes took 58 MB once a long log had asked for each)."""
        pos = max(0, floor, len(text) - self.reach)
        while (wide := _too_wide(text, pos, len(text))) >= 0:  # no match goes on over one
            pos = wide
        size = len(text)
        if pos >= size:
            return -1
        tail = text[pos:]
        stripped, kept, origins = _without_whitespace(tail)
        lowered = stripped.lower()
        found = []
        j = self._plain_opening(lowered, stripped)
        if j >= 0:
            found.append(pos + _origin(kept, origins, j))
        if not self.unplain:
            return min(found, default=-1)
        ascii_tail = tail.isascii()
        end = "".join(tail.decode().split()).lower() if ascii_tail else ""
        unmarked_end = _unmarked(end)
        for form, opening in self.unplain:  # the others: ``_plain_opening``
            if opening.marked:  # its marks out of both (a mark may be one of its characters)
                bare = _unmarked(form)
                may = not bare or (bool(unmarked_end) and _may_open(unmarked_end, bare))
            else:
                may = bool(end) and _may_open(end, form)
            if not ascii_tail or may:
                at = opening.search()(text, pos, size)[0][0]
                if at >= 0:
                    found.append(at)
        return min(found, default=-1)

    def _plain_opening(self, lowered: bytes, stripped: bytes) -> int:
        """The first place in ``stripped`` (a text's end, whitespace out; ``lowered``, the
        same in lower case) from which the rest is a start of an ASCII form; -1 when none.

        One search of the forms' first ``PREFIX`` characters finds the places where one
        may start (each then compared with the forms that start so), and the last places,
        closer to the end than that, are looked up among the forms' shorter starts: the
        cost is the same whatever the number of forms."""
        if not self.openings:
            self.openings.extend(_openings(self.opens))
        folded, exact = self.openings
        found = (_opening(lowered, folded), _opening(stripped, exact))
        return min((j for j in found if j >= 0), default=-1)

    def crossing(self, text: bytes, at: int) -> int:
        """The furthest end of a match that starts before ``at`` and ends after it; -1 when
        no match runs over ``at``."""
        furthest = -1
        for s, e in self._matches(text, max(0, at - self.reach), min(len(text), at + self.reach)):
            if s >= at:
                break
            if e > at:
                furthest = max(furthest, e)
        return furthest
