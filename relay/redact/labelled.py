"""This node's secret printed in labelled pieces: ``first half: Relay-n0`` then ``second
half: de-S3cret``, ``part 2/3: …``, ``chunk 1 = …``.

A piece shorter than the pieces ``disguises`` looks for anywhere (twelve characters) is
masked where a label says it is a piece: the word after ``half``, ``part``, ``piece``,
``chunk``, ``prefix`` or ``suffix`` (a number, ``of``, ``/`` between) and a colon or ``=``,
when it is a run of ``MIN_SECRET_LEN`` characters or more of one of this node's secrets.
Ordinary text holds such a label and such a run of a secret together by no chance.

One RE2 pass over the text says where the first label's word with a colon or ``=`` after
it is, if any (none in nearly every window of a log: a lowered copy and a substring search
for each word read a build log's every byte five times, a third of the time of its
redaction when this node has a secret). From there each word is found by a substring search
of the lowered text, and what follows it is matched there, failing at its first character
in ordinary text (``partition(``): linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import re2

from relay.redact.linear import searcher
from relay.redact.literals import MIN_SECRET_LEN
from relay.redact.riders import Rider

_LABELS = (b"half", b"part", b"piece", b"chunk", b"prefix", b"suffix")
# What follows a label's word: a number (``2``, ``2/3``, ``2 of 3``), ``:`` or ``=``, the piece.
_AFTER_LABEL = re.compile(
    rb"[ \t]*(?:[0-9]{1,2}(?:[ \t]*(?:/|of)[ \t]*[0-9]{1,2})?)?[ \t]*[:=][ \t]*[\"']?"
    rb"([^\s\"']{1,256})"
)


def _label_search() -> re2._Regexp[bytes]:
    """Each place where a label's word starts, in any case, that ``_AFTER_LABEL`` may go on
    from: the characters of its number (``2``, ``2/3``, ``2 of 3``), then ``:`` or ``=``."""
    options = re2.Options()
    options.never_capture = True
    options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
    words = b"|".join(_LABELS)
    return re2.compile(b"(?i:" + words + rb")[ \t0-9/of]*[:=]", options)


_LABEL = _label_search()
_LABEL_AT = searcher(_LABEL, within=True)
_LABEL_HERE = searcher(_LABEL, anchored=True, within=True)


class LabelRider(Rider):
    """The first place where a label may be, found by the format table's pass (``riders``)
    for ``Labelled.spans``: its search, one literal-led alternative more in that pass."""

    pattern = _LABEL.pattern
    first = frozenset(b"".join(_LABELS) + b"".join(_LABELS).upper())
    every = False

    def at(self, block: bytes, place: int) -> bool:
        """The label's regex, anchored."""
        return _LABEL_HERE(block, place, len(block))[0][0] >= 0

    def places(self, block: bytes, start: int, stop: int, out: list[int]) -> None:
        """The first place in the stretch: each word's places there, in order, each held to
        the regex until one is a label's."""
        low = block[start : stop + max(map(len, _LABELS)) - 1].lower()
        found = set()
        for word in _LABELS:
            at = low.find(word)
            while 0 <= at < stop - start:
                found.add(start + at)
                at = low.find(word, at + 1)
        for place in sorted(found):
            if self.at(block, place):
                out.append(place)
                return


LABEL_RIDER = LabelRider()


@dataclass(frozen=True)
class Labelled:
    """This node's secrets, for the pieces a label names."""

    secrets: tuple[bytes, ...]

    @classmethod
    def build(cls, secrets: Iterable[str]) -> Labelled | None:
        raws = tuple(sorted({s.encode() for s in secrets if len(s) >= 2 * MIN_SECRET_LEN}))
        return cls(raws) if raws else None

    def spans(
        self, text: bytes, start: int = 0, first: int | None = None
    ) -> Iterator[tuple[int, int]]:
        """Each labelled piece at or after ``start`` that is a run of a secret. ``first``:
        the first place at or after ``start`` where a label may be (-1: nowhere), when the
        format table's pass found it (``LABEL_RIDER``)."""
        if first is None:
            first = _LABEL_AT(text, start, len(text))[0][0]
        if first < 0:
            return  # no label before a colon or ``=`` (a log's every window, nearly)
        # From the first place a label may be: each word by a substring search, which
        # costs a text of nothing but labels less than a search from each one to the next.
        lowered = text.lower()
        for word in _LABELS:
            at = lowered.find(word, first)
            while at >= 0:
                m = _AFTER_LABEL.match(text, at + len(word))
                if m is not None:
                    s, e = m.span(1)
                    piece = text[s:e]
                    if len(piece) >= MIN_SECRET_LEN and any(piece in r for r in self.secrets):
                        yield s, e
                at = lowered.find(word, at + len(word))
