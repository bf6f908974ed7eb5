"""This node's secret printed in labelled pieces: ``first half: Relay-n0`` then ``second
half: de-S3cret``, ``part 2/3: …``, ``chunk 1 = …``.

A piece shorter than the pieces ``disguises`` looks for anywhere (twelve characters) is
masked where a label says it is a piece: the word after ``half``, ``part``, ``piece`` or
``chunk`` (a number, ``of``, ``/`` between) and a colon or ``=``, when it is a run of
``MIN_SECRET_LEN`` characters or more of one of this node's secrets. Ordinary text holds
such a label and such a run of a secret together by no chance.

Each label's word is found by a substring search of the lowered text (memory speed), and
what follows it is matched there, failing at its first character in ordinary text
(``partition(``): linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from relay.redact.literals import MIN_SECRET_LEN

_LABELS = (b"half", b"part", b"piece", b"chunk")
# What follows a label's word: a number (``2``, ``2/3``, ``2 of 3``), ``:`` or ``=``, the piece.
_AFTER_LABEL = re.compile(
    rb"[ \t]*(?:[0-9]{1,2}(?:[ \t]*(?:/|of)[ \t]*[0-9]{1,2})?)?[ \t]*[:=][ \t]*[\"']?"
    rb"([^\s\"']{1,256})"
)


@dataclass(frozen=True)
class Labelled:
    """This node's secrets, for the pieces a label names."""

    secrets: tuple[bytes, ...]

    @classmethod
    def build(cls, secrets: Iterable[str]) -> Labelled | None:
        raws = tuple(sorted({s.encode() for s in secrets if len(s) >= 2 * MIN_SECRET_LEN}))
        return cls(raws) if raws else None

    def spans(self, text: bytes, start: int = 0) -> Iterator[tuple[int, int]]:
        """Each labelled piece at or after ``start`` that is a run of a secret."""
        lowered = text.lower()
        for word in _LABELS:
            at = lowered.find(word, start)
            while at >= 0:
                m = _AFTER_LABEL.match(text, at + len(word))
                if m is not None:
                    s, e = m.span(1)
                    piece = text[s:e]
                    if len(piece) >= MIN_SECRET_LEN and any(piece in r for r in self.secrets):
                        yield s, e
                at = lowered.find(word, at + len(word))
