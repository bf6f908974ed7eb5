"""This node's secrets in a hex dump as ``xxd`` and ``hexdump -C`` print one: an offset, the
bytes in hex groups, the text beside them.

No form of a secret matches there: every sixteen bytes the offset of the next row and the
row's text cut into the hex. So the rows are read back into bytes, and the secret is looked
for in those: where the dump holds it whole, or a piece of ``MIN_PIECE`` bytes of it (a
dump that a stream's window cut, or a long secret's part), every row that holds a byte of
it is masked whole, hex and text. A row is a line, so no find crosses one.

A block with no row pays one RE2 search, for a literal; the rows are read in Python only
where it finds one, each once: linear in the text. A window of a stream that starts past a
dump's first megabyte finds its rows only from the next dump on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import re2

from relay.redact.literals import MIN_SECRET_LEN

# An ``xxd`` row (``00000010: 2d53 3363 …  -S3c…``: at most eight groups of two bytes) or a
# ``hexdump -C`` one (``00000010  2d 53 33 63 …  |-S3c…|``): the offset, then the hex.
_ROW = re.compile(
    rb"[ \t]*[0-9a-f]{7,8}(?:: (?P<xxd>(?:[0-9a-f]{4} ){0,7}(?:[0-9a-f]{4}|[0-9a-f]{2}))"
    rb"|  (?P<hd>(?:[0-9a-f]{2} {1,2}){0,15}[0-9a-f]{2}))"
)
# A dump's first row: its offset opens with ``000`` (below 1 MiB), which RE2 skips to at
# memory speed; the rows after it are followed line by line, whatever their offsets.
_FIRST_ROW = re2.compile(rb"000[0-9a-f]{4,5}(?:: | {2})[0-9a-f]{2}")
# A piece of a secret this long is no chance: the same as a token's pieces (``disguises``).
MIN_PIECE = 12


@dataclass(frozen=True)
class _Row:
    start: int  # the line's first byte in the text
    end: int  # its end (its line break not included)
    data: bytes


@dataclass(frozen=True)
class Dumps:
    """Each secret's pieces of ``MIN_PIECE`` bytes (the whole of a shorter one)."""

    grams: dict[bytes, tuple[bytes, ...]]  # a piece: the secrets that hold it
    size: int  # bytes in a piece (the shortest secret's length, at most ``MIN_PIECE``)

    @classmethod
    def build(cls, secrets: Iterable[str]) -> Dumps | None:
        raws = sorted({s.encode() for s in secrets if len(s) >= MIN_SECRET_LEN})
        if not raws:
            return None
        size = min(MIN_PIECE, *map(len, raws))
        grams: dict[bytes, list[bytes]] = {}
        for raw in raws:
            for k in range(len(raw) - size + 1):
                grams.setdefault(raw[k : k + size], []).append(raw)
        return cls({g: tuple(v) for g, v in grams.items()}, size)

    def spans(self, text: bytes, start: int = 0) -> Iterator[tuple[int, int]]:
        """Every row of a dump at or after ``start`` that holds a byte of a secret."""
        if _FIRST_ROW.search(text, start) is None:
            return
        for rows in _dumps(text, start):
            yield from self._masked(rows)

    def _masked(self, rows: list[_Row]) -> Iterator[tuple[int, int]]:
        data = b"".join(r.data for r in rows)
        hit = bytearray(len(data))  # 1 where a secret's byte is
        k = 0
        while k + self.size <= len(data):
            found = self.grams.get(data[k : k + self.size])
            if found is None:
                k += 1
                continue
            end = max(_stretch(data, k, raw, self.size) for raw in found)
            hit[k:end] = b"\1" * (end - k)
            k = max(k + 1, end - self.size + 1)  # each byte stretched over once
        at = 0
        for row in rows:
            if any(hit[at : at + len(row.data)]):
                yield row.start, row.end
            at += len(row.data)


def _stretch(data: bytes, k: int, raw: bytes, size: int) -> int:
    """How far from ``k`` the dump's bytes run on as a piece of ``raw`` does."""
    gram = data[k : k + size]
    best = k + size
    at = raw.find(gram)
    while at >= 0:
        n = size
        while at + n < len(raw) and k + n < len(data) and raw[at + n] == data[k + n]:
            n += 1
        best = max(best, k + n)
        at = raw.find(gram, at + 1)
    return best


def _dumps(text: bytes, start: int) -> Iterator[list[_Row]]:
    """The runs of consecutive dump rows at or after ``start``, each read once."""
    pos = start
    while (found := _FIRST_ROW.search(text, pos)) is not None:
        line = max(text.rfind(b"\n", 0, found.start()) + 1, start)
        rows: list[_Row] = []
        while line < len(text) and (row := _row_at(text, line)) is not None:
            rows.append(row)
            line = row.end + 1
        if rows:
            yield rows
        pos = max(line, found.end())


def _row_at(text: bytes, line: int) -> _Row | None:
    """The dump row that the line at ``line`` is, or None (an indent may come first)."""
    m = _ROW.match(text, line)
    if m is None:
        return None
    end = text.find(b"\n", m.end())
    end = len(text) if end < 0 else end
    hexes = m.group("xxd") or m.group("hd")
    return _Row(line, end, bytes.fromhex(hexes.replace(b" ", b"").decode()))
