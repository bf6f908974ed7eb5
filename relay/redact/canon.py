"""One search for every place where this node's own secrets may be, however many there are.

A disguised form may have whitespace between any two of its characters (spaced, folded,
wrapped), and may be in any case. A regex that allows that between the first characters of
each form of each secret grew with the secrets, and so did the time RE2 took to build its
automaton's states as it read a log: 40 secrets' 720 forms made the pass five times slower
than one secret's. So the text is read in a canonical form instead: ASCII letters in lower
case, every whitespace byte and every byte past ASCII taken out, in one ``bytes.translate``
(C, about a gigabyte a second). There every start of a form, every literal, every piece is
a plain string (the same canonical form of its own first bytes), and one alternation of
plain strings costs about the same whatever their number. Each place found there is mapped
back to its byte in the text (rare: a log rarely holds a secret's start by chance) and
checked there as written, gaps, case and edges included (``disguises``): the canonical text
only says where to look, never what is a find.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import re2

from relay.redact.linear import Searcher, searcher
from relay.redact.riders import Rider

_UPPER = bytes(range(ord("A"), ord("Z") + 1))
_LOWER = bytes.maketrans(_UPPER, _UPPER.lower())
# What ``disguises`` reads as whitespace in ASCII, every byte past ASCII (a character's
# case may change its bytes, a Unicode space is some of them), and the marks that a step
# puts between a secret's characters or bytes (``a.b.c``, ``a_b_c``, ``a|b|c``, Python's
# ``['a', 'b']``, ``61:62``, ``%61%62``, ``\x61``, ``&#x61;``): out of the canonical text,
# where those forms are then one string with the form they separate (each is still matched
# as written, where it is found).
_DROP = bytes([*range(0x09, 0x0E), *range(0x1C, 0x21), *range(0x80, 0x100), *b".-:,;%\\&#_|/'\""])
# Each byte as 1 when the canonical text keeps it, 0 when it drops it.
_KEPT = bytes(0 if b in _DROP else 1 for b in range(256))
# What a string found stands for: a kind, and a count its finder reads (``disguises``).
Tag = tuple[int, int]
# Bytes of text whose kept bytes are counted at a time (see ``Canonical.origin``).
_CHUNK = 4096


def canonical(data: bytes) -> bytes:
    """``data`` in lower case, without whitespace or any byte past ASCII."""
    return data.translate(_LOWER, _DROP)


def canonical_from(block: bytes, at: int, want: int) -> bytes:
    """The canonical text of ``block`` from ``at``: ``want`` bytes of it at least, unless the
    block ends first (read in growing stretches: blanks and marks may lie between them)."""
    width = 2 * want
    text = canonical(block[at : at + width])
    while len(text) < want and at + width < len(block):
        width *= 4
        text = canonical(block[at : at + width])
    return text


def lead(data: bytes) -> int:
    """How many bytes at the start of ``data`` the canonical form drops."""
    return len(data) - len(data.lstrip(_DROP))


@dataclass
class Canonical:
    """A block's canonical form from ``start``, and the way back to the block's bytes."""

    block: bytes
    start: int
    stop: int | None = None  # where it ends (None: the block's end)
    text: bytes = b""
    _kept: bytes = b""  # for each byte from ``start``: 1 when the canonical text keeps it
    _ends: list[int] = field(default_factory=list)  # each chunk's end in ``text``

    def __post_init__(self) -> None:
        self.text = canonical(self.block[self.start : self.stop])

    def origin(self, j: int) -> int:
        """The block offset of byte ``j`` of the canonical text: the chunk it is in, and in
        there the place with as many kept bytes before it, by halving. Each step counts
        bytes in C (``bytes.count``): no Python loop over a chunk's bytes."""
        kept = self._kept
        if not kept:  # worked out on the first find only: most blocks have none
            kept = self._kept = self.block[self.start : self.stop].translate(_KEPT)
            chunks = range(0, len(kept), _CHUNK)
            self._ends = list(itertools.accumulate(kept.count(1, c, c + _CHUNK) for c in chunks))
        i = bisect.bisect_right(self._ends, j)
        want = j - (self._ends[i - 1] if i else 0)  # canonical bytes before it in the chunk
        base = i * _CHUNK
        lo, hi = want, min(len(kept), base + _CHUNK) - base - 1  # the first x with more
        while lo < hi:  # than ``want`` kept up to it
            mid = (lo + hi) // 2
            if kept.count(1, base, base + mid + 1) > want:
                hi = mid
            else:
                lo = mid + 1
        return self.start + base + lo


@dataclass(frozen=True)
class CanonSearch:
    """Plain strings to find in canonical text, each with the tags of what starts so."""

    search: Searcher
    tags: dict[bytes, tuple[Tag, ...]]
    sizes: tuple[int, ...]  # the strings' lengths there are

    @classmethod
    def build(cls, anchors: Iterable[tuple[bytes, Tag]]) -> CanonSearch | None:
        """``anchors``: each a canonical string and a tag for it; None when there are none."""
        tags: dict[bytes, list[Tag]] = {}
        for text, tag in anchors:
            if text and tag not in tags.setdefault(text, []):
                tags[text].append(tag)
        if not tags:
            return None
        options = re2.Options()
        options.never_capture = True
        options.max_mem = 32 << 20
        options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
        pattern = b"|".join(re2.escape(text) for text in sorted(tags))
        found = searcher(re2.compile(pattern, options), within=True)
        sizes = tuple(sorted({len(text) for text in tags}))
        return cls(found, {k: tuple(v) for k, v in tags.items()}, sizes)

    def tags_at(self, block: bytes, at: int) -> set[Tag]:
        """The tags of the strings that start at ``at`` in ``block`` as written (where the
        canonical text of the block from there opens with them)."""
        text = canonical_from(block, at, self.sizes[-1])
        found: set[Tag] = set()
        for size in self.sizes:
            found.update(self.tags.get(text[:size], ()))
        return found

    def finds(self, text: bytes) -> Iterator[tuple[int, set[Tag]]]:
        """Each place in ``text`` (canonical) where some string starts, with their tags."""
        pos, stop = 0, len(text)
        while pos < stop:
            j = self.search(text, pos, stop)[0][0]
            if j < 0:
                return
            found: set[Tag] = set()
            for size in self.sizes:
                found.update(self.tags.get(text[j : j + size], ()))
            yield j, found
            pos = j + 1


class CanonRider(Rider):
    """Each place in a block as written where a string of a ``CanonSearch`` starts in the
    canonical text, found by the format table's pass (``riders``) instead of a pass over
    the canonical text: each string spelled out with the bytes the canonical form drops
    between its characters, and its letters in either case. Its automaton grows with the
    strings (as the one that made ``canonical`` worth its copy did): for few, the strings
    of a few secrets, it costs the table's pass less than the copy and a search of it."""

    every = True

    def __init__(self, canon: CanonSearch) -> None:
        self.canon = canon
        gap = b"[" + b"".join(b"\\x%02x" % byte for byte in _DROP) + b"]*"
        self.pattern = b"|".join(gap.join(_either_case(c) for c in text) for text in canon.tags)
        self.first = frozenset(b"".join(text[:1] + text[:1].upper() for text in canon.tags))
        self._twos = frozenset(text[:2] for text in canon.tags)
        # A string of one character (a piece's block of marks and one letter) opens a place
        # whatever byte follows it.
        self._ones = frozenset(text for text in canon.tags if len(text) == 1)
        options = re2.Options()
        options.never_capture = True
        options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
        self._here = searcher(re2.compile(self.pattern, options), anchored=True, within=True)

    def at(self, block: bytes, place: int) -> bool:
        """A string starts here: its spelled-out regex, anchored. Most of the pass's hits
        open with one of the strings' first bytes (letters and digits, in either case): the
        first two bytes, when the second is one the canonical text keeps, are compared with
        the strings' first two (or first, for a string of one) before that."""
        two = block[place : place + 2].lower()
        if len(two) == 2 and _KEPT[two[1]] and two not in self._twos and two[:1] not in self._ones:
            return False
        return self._here(block, place, len(block))[0][0] >= 0

    def places(self, block: bytes, start: int, stop: int, out: list[int]) -> None:
        """The canonical text of the stretch (and past its end as far as a string may go),
        searched as ``Disguises`` searches a block's, each find mapped back."""
        text = Canonical(block, start, stop)
        whole = text.text + canonical_from(block, stop, self.canon.sizes[-1] - 1)
        for j, _ in self.canon.finds(whole):
            if j >= len(text.text):
                return
            out.append(text.origin(j))


def _either_case(byte: int) -> bytes:
    """One byte of a canonical string (lower case) as a regex: its letter in either case."""
    char = bytes([byte])
    if char.isalpha():
        return b"[" + char + char.upper() + b"]"
    return re2.escape(char)
