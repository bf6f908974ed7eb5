"""Searches that ride on the format table's one pass over a block.

An RE2 pass over a block costs about the same for every byte whatever it looks for (the
automaton reads each byte once), and a log is read by several: the format table's anchors
(``formats``), the prefilter's supersets, this node's disguised secrets. A search whose
matches open with a literal — the prefilter's pair word (``value``), a label's word
(``part 2:``), the start of one of this node's secrets with blanks or marks between its
characters — is one more alternative of the table's anchor regex instead of a pass of its
own: measured on a 100 MB build log, the table's pass costs the same with them, where
each read the log again (0.15 CPU-s each).

The table's pass (``FormatScanner.finds``) hands each hit where a rider matches to that
rider's list of places, in order; where the pass skips bytes after a hit (the rest of a
token it found, of a flooded line), it asks each rider for its places there
(``Rider.places``), so that a rider's list holds every place its own search would give,
exactly. The pass knows nothing else of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2


class Rider:
    """A search that the table's pass runs along with its anchors (see the module)."""

    pattern: bytes  # an alternative of the pass's regex (Latin-1): each match opens a place
    first: frozenset[int]  # the bytes a place may open with
    every: bool = True  # every place, or the first one only (then the list holds one)

    def at(self, block: bytes, place: int) -> bool:
        """Whether a place opens at ``place`` (a hit of the pass whose byte is in ``first``):
        exactly where the rider's pattern matches there, no more and no less (a hit it
        refused would count against its line's budget as one of the table's)."""
        raise NotImplementedError

    def places(self, block: bytes, start: int, stop: int, out: list[int]) -> None:
        """Add each place in ``[start, stop)`` to ``out``, in order (the first one only unless
        ``every``): the bytes the pass skipped there."""
        raise NotImplementedError


# A rider and the list its places go to, as ``FormatScanner.finds`` takes them.
Riding = Sequence[tuple[Rider, list[int]]]


class WordRider(Rider):
    """Each place where a word (ASCII) starts, in any case."""

    def __init__(self, word: bytes) -> None:
        self.word = word.lower()
        self.pattern = b"(?i:" + re2.escape(self.word) + b")"
        self.first = frozenset((self.word[0], word.upper()[0]))

    def at(self, block: bytes, place: int) -> bool:
        """A compare in place."""
        return block[place : place + len(self.word)].lower() == self.word

    def places(self, block: bytes, start: int, stop: int, out: list[int]) -> None:
        """A substring search of the stretch, lowered."""
        if stop <= start:
            return
        word = self.word
        low = block[start : stop + len(word) - 1].lower()
        at = low.find(word)
        while at >= 0:
            out.append(start + at)
            at = low.find(word, at + 1)
