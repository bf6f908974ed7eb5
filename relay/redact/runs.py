"""This node's long secrets (a private key file in a variable), found by pieces, not whole.

A long secret is printed in ways its exact forms miss: a key's body re-wrapped at another
width (``fold``), with CRLF line ends, indented in a YAML block, or as the base64 or hex of
the key file wrapped by ``base64`` or ``xxd`` itself. So each of those forms (whitespace
taken out) is looked for by its aligned pieces of ``GRAM`` characters: they join the own
secrets' one search (``canon``), and where a piece is found the run is stretched along the
form both ways, over whitespace in the text (at most ``MAX_GAP`` bytes at a time), and
masked however long it is (a piece alone is 96 bits of the key). Any run of ``2 * GRAM -
1`` characters holds a whole aligned piece, so a body wrapped at 31 columns or more is
masked whole: a run stretched over line breaks is one find however the text wraps it.

Each find is stretched once (the search goes on from its end), and a stretch reads no more
bytes than the form is long and the text's whitespace in it: linear in the text. The
pieces are exact bytes: no regex of a form's length is ever built (a 2048-bit key's thirty
encodings, spelt out in one regex, made RE2 run out of memory and fall back to a search
fifteen times slower).
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Iterable
from dataclasses import dataclass

# Characters of a form in one piece: 16 of base64 are 96 bits, no log holds them by chance.
GRAM = 16
# Past this many characters a secret is long: its forms are found by pieces.
LONG = 256
# Whitespace bytes skipped inside a run (a line break and an indent).
MAX_GAP = 6
_SPACE = frozenset(b" \t\r\n\x0b\x0c")


def long_forms(value: str) -> set[bytes]:
    """The forms of a long secret that a tool wraps, whitespace out: as written (a key's
    body re-wrapped; CRLF line ends are whitespace too), in hex (``xxd -p``) in either
    case and in base64 at each of the three byte offsets it may
    sit at in a longer blob (``base64`` wraps at 76 columns). Its other encodings (URL,
    JSON, XML) are written on one line: ``literals`` finds them whole."""
    raw = value.encode()
    bare = b"".join(raw.split())
    forms = {bare, raw.hex().encode(), raw.hex().upper().encode()}
    # reversed (``rev``, ``tac``), rot13, every character escaped (``\uXXXX``, ``%XX``)
    forms |= {bare[::-1], codecs.encode(bare.decode(), "rot13").encode()}
    forms.add("".join(f"\\u{c:04x}" for c in value.encode("utf-16-be")[::2]).encode())
    forms.add("".join(f"\\u{ord(c):04x}" for c in value).encode())
    forms |= {"".join(f"%{b:{case}}" for b in raw).encode() for case in ("02x", "02X")}
    wide = value.encode("utf-16-le")  # PowerShell's ``-EncodedCommand``
    forms.add(wide.hex().encode())
    for data in (raw, wide):
        for shift in range(3):
            encoded = base64.b64encode(b"\0" * shift + data).rstrip(b"=")
            # Less the characters that mix in the padding or the neighbouring bytes.
            forms.add(encoded[(shift * 8 + 5) // 6 : (8 * (shift + len(data))) // 6])
    return forms


@dataclass(frozen=True)
class Runs:
    """The aligned pieces of every form of this node's long secrets, and where each is."""

    forms: tuple[bytes, ...]
    at: dict[bytes, tuple[tuple[int, int], ...]]  # a piece: (form, offset in it) each

    @classmethod
    def build(cls, secrets: Iterable[str]) -> Runs | None:
        """The pieces of the forms of each secret longer than ``LONG``; None when none is."""
        forms = sorted({f for v in set(secrets) if len(v) > LONG for f in long_forms(v)})
        at: dict[bytes, list[tuple[int, int]]] = {}
        for i, form in enumerate(forms):
            for k in range(0, len(form) - GRAM + 1, GRAM):
                if form[k : k + GRAM].isascii():  # as the canonical search reads it
                    at.setdefault(form[k : k + GRAM], []).append((i, k))
        if not at:
            return None
        return cls(tuple(forms), {g: tuple(v) for g, v in at.items()})

    def run_at(self, text: bytes, s: int) -> tuple[int, int] | None:
        """The longest run through the piece at ``s``, as ``(start, end)`` in ``text``;
        None when no piece starts there."""
        end = s + GRAM
        starts = self.at.get(text[s:end])
        if starts is None:  # the piece spaced out (``fold -w1``, ``sed 's/./& /g'``)
            gram, end = _spaced_gram(text, s)
            starts = self.at.get(gram)
            if starts is None:
                return None
        return max(
            (_stretch(text, s, end, self.forms[i], k) for i, k in starts),
            key=lambda r: r[1] - r[0],
        )


def _spaced_gram(text: bytes, s: int) -> tuple[bytes, int]:
    """The ``GRAM`` bytes from ``s`` on with whitespace taken out (at most ``MAX_GAP`` bytes
    of it at a time), and where they end; fewer when a wider gap or the text's end comes
    first."""
    out = bytearray()
    i, size = s, len(text)
    if i < size and text[i] in _SPACE:
        return b"", s  # a run starts at a character, never at a gap
    while len(out) < GRAM and i < size:
        gap = i
        while i < size and text[i] in _SPACE and i - gap < MAX_GAP:
            i += 1
        if i >= size or text[i] in _SPACE:
            break
        out.append(text[i])
        i += 1
    return bytes(out), i


def _stretch(text: bytes, s: int, first_end: int, form: bytes, k: int) -> tuple[int, int]:
    """The run through ``text[s:first_end]`` = ``form[k:]``'s first piece (whitespace in
    it taken out), as far as both agree either way, whitespace in the text skipped (never
    at the run's ends)."""
    hi, j = first_end, k + GRAM
    i = hi
    size = len(text)
    while j < len(form) and i < size:
        if text[i] == form[j]:
            i, j = i + 1, j + 1
            hi = i
            continue
        gap = i
        while i < size and text[i] in _SPACE and i - gap < MAX_GAP:
            i += 1
        if i == gap or i >= size or text[i] != form[j]:
            break
    lo, j = s, k
    i = lo - 1
    while j > 0 and i >= 0:
        if text[i] == form[j - 1]:
            lo, j = i, j - 1
            i -= 1
            continue
        gap = i
        while i >= 0 and text[i] in _SPACE and gap - i < MAX_GAP:
            i -= 1
        if i == gap or i < 0 or text[i] != form[j - 1]:
            break
    return lo, hi
