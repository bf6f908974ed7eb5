"""This node's own secrets in disguise: spaced, folded, reversed, re-cased, re-encoded.

``literals`` finds a secret value as written and in the encodings a tool writes it in. A
step that wants it in the log gets past those by printing it differently: one character
per line (``fold -w1``), spaced (``t o k e n``), reversed (``rev``), upper-cased, rot13,
as base64 or hex wrapped at some width (``base64 -w 76``, ``xxd -p``) and starting at any
byte of a longer blob, as base32, or with every character escaped (``\\u0074``, ``%74``).

So the value is looked for once whitespace is taken out, in each of those transforms: the
forms are worked out once, when the redactor is built, and one RE2 regex matches them all
with whitespace (line breaks included) between two characters — linear time, whatever the
log holds. A match counts when no gap in it is longer than ``MAX_GAP`` bytes (checked on
the match: a regex that counted the bytes of every gap would be too large for RE2's DFA
once a node has a few secrets). A base64 (base32) form is the value encoded at each of
the three (five) byte offsets it may sit at in a longer blob, less the edge characters that
mix in the neighbouring bytes. Text forms are matched in any case (a character past ASCII
in its lower and upper case), base64 as written.

A find may cross lines, so a stream must not cut a window inside one, nor ``parallel`` a
file: ``open_at`` says where an unfinished match starts at the end of a window (the stream
keeps it for the next one) and ``crossing`` where a match that runs over a cut ends. A
match is at most ``reach`` bytes long, so only that much of the text is read for either.
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import re2

from relay.redact.linear import Searcher, searcher
from relay.redact.literals import BORING_VALUES, MIN_SECRET_LEN
from relay.redact.rules import Kind, Span

# Whitespace allowed between two characters: a CRLF and an indent, a space or two.
MAX_GAP = 6
# Longer values (a key file in a variable) keep the exact forms alone: their disguised
# forms would make a match longer than a stream's overlap (32 KiB).
MAX_DISGUISED_LEN = 256
_GAP = rb"\s*"
_TOO_WIDE = re2.compile(rb"\s{%d}" % (MAX_GAP + 1))  # RE2's \s: tab, line breaks, space


def _aligned(raw: bytes, encode: str, bits: int) -> Iterator[str]:
    """``raw`` encoded at each byte offset in a longer blob (``bits`` per character), less
    the characters at either end that also carry the neighbouring bytes' bits."""
    group = 3 if bits == 6 else 5  # bytes per whole group of characters
    for shift in range(group):
        data = b"\0" * shift + raw
        text = (base64.b64encode(data) if encode == "64" else base64.b32encode(data)).decode()
        yield text.rstrip("=")[(8 * shift + bits - 1) // bits : 8 * (shift + len(raw)) // bits]


def _u_escapes(value: str) -> str:
    """Every character as a JSON ``\\uXXXX`` escape (a surrogate pair past the BMP)."""
    units = value.encode("utf-16-be")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))


def disguised_forms(value: str) -> tuple[set[str], set[str]]:
    """The forms of ``value`` to match in any case, and those to match as written; each
    without whitespace (the regex allows it between characters) and long enough to be
    specific."""
    raw = value.encode()
    bare = "".join(value.split())
    rot = codecs.encode(bare, "rot13")
    any_case = {bare, bare[::-1], rot, rot[::-1], raw.hex(), _u_escapes(value)}
    any_case.add("".join(f"%{b:02x}" for b in raw))
    any_case.update(_aligned(raw, "32", 5))
    as_written: set[str] = set()
    for body in _aligned(raw, "64", 6):
        as_written.update({body, body.replace("+", "-").replace("/", "_")})

    def long(forms: set[str]) -> set[str]:
        return {f for f in forms if len(f) >= MIN_SECRET_LEN}

    return long(any_case), long(as_written - any_case)


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


def _longest(form: str) -> int:
    """Bytes in the longest text a form matches (each character's longest case, each gap
    at its widest)."""
    size = sum(max(len(v.encode()) for v in (c, c.lower(), c.upper())) for c in form)
    return size + (len(form) - 1) * MAX_GAP


def _spaced(form: str) -> bytes:
    """``form`` with whitespace between characters."""
    return _GAP.join(_char(char) for char in form)


def _spaced_prefix(form: str) -> bytes:
    """Any non-empty start of ``form``, spaced as ``_spaced`` spaces it."""
    pattern = b""
    for char in reversed(form):
        pattern = _char(char) + (b"(?:" + _GAP + pattern + b")?" if pattern else b"")
    return pattern


def _compile(pattern: bytes) -> Searcher:
    options = re2.Options()
    options.never_capture = True
    options.longest_match = True
    options.max_mem = 64 << 20
    options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
    return searcher(re2.compile(pattern, options))


@dataclass(frozen=True)
class Disguises:
    """Every disguised form of this node's secrets, as one regex over a block's bytes."""

    search: Searcher
    # For each form, a start of it and then only whitespace, to the text's end (one regex
    # a form: RE2 takes seconds to compile them as one alternation).
    opens: tuple[Searcher, ...]
    reach: int  # bytes in the longest match (the most whitespace in every gap)

    @classmethod
    def build(cls, secrets: Iterable[str]) -> Disguises | None:
        """The forms of each secret that ``literals`` masks and that is ``MAX_DISGUISED_LEN``
        characters long at most; None when there are none."""
        whole: list[bytes] = []
        starts: list[bytes] = []
        reach = 0
        for value in sorted(set(secrets)):
            short = len(value) < MIN_SECRET_LEN or value.lower() in BORING_VALUES
            if short or len(value) > MAX_DISGUISED_LEN:
                continue
            any_case, as_written = disguised_forms(value)
            for form, fold in [*((f, True) for f in any_case), *((f, False) for f in as_written)]:
                whole.append(b"(?i:" + _spaced(form) + b")" if fold else _spaced(form))
                start = _spaced_prefix(form) + _GAP + rb"\z"
                starts.append(b"(?i:" + start + b")" if fold else start)
                reach = max(reach, _longest(form))
        if not whole:
            return None
        opens = tuple(_compile(start) for start in starts)
        return cls(_compile(b"|".join(whole)), opens, reach + MAX_GAP)

    def spans(self, block: bytes, start: int = 0) -> Iterator[Span]:
        """Every match at or after ``start``."""
        for s, e in self._matches(block, start, len(block)):
            yield s, e, Kind.OWN_SECRET

    def _matches(self, text: bytes, pos: int, stop: int) -> Iterator[tuple[int, int]]:
        """Every match in ``text[pos:stop]`` whose gaps are short enough; overlapping ones
        too (the search goes on from the byte after a match's start): a secret half masked
        is a secret leaked."""
        while pos < stop:
            s, e = self.search(text, pos, stop)[0]
            if s < 0:
                return
            if _TOO_WIDE.search(text, s, e) is None:
                yield s, e
            pos = s + 1

    def open_at(self, text: bytes, floor: int) -> int:
        """Where, at or after ``floor``, the text from there to its end is the start of a
        match that more text may finish (a complete match counts too: more whitespace and
        characters could make it another); -1 when nowhere."""
        pos = max(0, floor, len(text) - self.reach)
        for wide in _TOO_WIDE.finditer(text, pos):  # no match goes on over a wide gap
            pos = wide.end()
        size = len(text)
        found = [at for search in self.opens if (at := search(text, pos, size)[0][0]) >= 0]
        return min(found, default=-1)

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
