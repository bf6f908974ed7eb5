"""Streaming redaction with bounded memory: feed chunks, get redacted text, then a report.

Theory of operation. Input bytes collect in a buffer; once a window (``block_size``) is full
(or on ``flush``), the engine scans it and the text is emitted up to a cut: the last line
end in the window — no rule matches across a line end, key blocks aside — or, on a line
longer than the window, the window end less ``overlap``. Every rule's match is shorter than
the overlap, so a secret that starts before the cut ends inside the window and is replaced
whole, and one that starts after it is seen whole in the next window — a chunk boundary
never hides a secret. The last bytes already emitted are kept as context and scanned again,
so that boundaries and look-backs see the true neighbours and a match whose lead-in
(``TOKEN=``) was emitted still replaces its value. A private key block may be longer than
any window: from its BEGIN line the stream is in a key state that drops everything (keeping
the line breaks) until the END line. A named value that runs past the window's end (longer
than the overlap, or a YAML block scalar's lines) is dropped in the next window as far as
it goes on: to the quote that opened it, or over the block's indented lines; a block whose
header is in the window is left whole to the next one instead, which reads it from there.

The report says whether the output is fit to publish: not when the input looks binary (NUL
bytes, or more than ``MAX_UNDECODABLE`` of it is not UTF-8 text — every U+FFFD counts,
whether the decoder here made it or a caller that decoded with ``errors="replace"`` did, so
NUL-free binary output cannot pass as text), nor when redaction replaced more than
``max_redacted_share`` of a log of at least ``MIN_SHARE_INPUT`` bytes — such a log is
summarised, not committed. A smaller log (a few lines, one of them a home path) is judged by
what is left in it, not by its share: it cannot hide much, and its redacted text is safe.
"""

from __future__ import annotations

import codecs
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

from relay.redact.assignments import (
    VALUE_END,
    block_header,
    block_indent,
    block_lines,
    block_lines_mid,
    line_prefix,
    text_start,
)
from relay.redact.commands import open_triple
from relay.redact.engine import B64_KEY_LINES, Engine, key_block_end, replace
from relay.redact.formats import B64_KEY
from relay.redact.rules import Kind, Span
from relay.redact.tokens import END_KEY, END_KEY_MAX

# Half a megabyte: a window's copies (joined, lowered, replaced) are in memory at once, and a
# megabyte's put the redactor past 64 MB on a long log (66 MB; 64 MB so, at the same speed).
BLOCK_SIZE = 1 << 19
OVERLAP = 32 << 10  # longer than the longest match any rule can make
# What a value longer than a window is made of, as far as it goes on into the next one: a
# bare one's characters; a quoted one's, to the quote that opened it (``VALUE_END``); a
# block scalar's lines (``block_lines``).
_VALUE_RUN = VALUE_END["v"]
# The rest of a key in base64 whose lines ran past a window (see ``engine.B64_KEY_LINES``).
_B64_KEY_MORE = re.compile(rb"(?:\r?\n)?[A-Za-z0-9+/]*={0,2}" + B64_KEY_LINES.pattern)
# A value's end is not yet known when the window ends on what may be the first half of an
# escape or of a doubled quote (``\``, ``"``), or inside a blank line of a block scalar.
_OPEN_TAIL = re.compile(rb'\\*+["\']?')
_OPEN_TAIL_MAX = 96
# Longer than any rule's lead-in before the span it replaces (key=, ://user:, and the head
# of an HCL variable block, which is read for 512 bytes to its default).
CONTEXT = 1024
MAX_UNDECODABLE = 0.01
MIN_UNDECODABLE = 3  # a stray U+FFFD or two in a short log is mojibake, not binary
MIN_SHARE_INPUT = 2 << 10  # below this many bytes in, the share rule does not apply
_REPLACEMENT = "\ufffd"


@dataclass(frozen=True)
class RedactionReport:
    """What redaction did to one log, and whether the result may be published."""

    counts: dict[str, int] = field(default_factory=dict)
    bytes_in: int = 0
    bytes_out: int = 0
    redacted_bytes: int = 0
    safe: bool = True
    reason: str = ""

    @property
    def share(self) -> float:
        """The share of the input that was replaced."""
        return self.redacted_bytes / self.bytes_in if self.bytes_in else 0.0

    def summary(self) -> str:
        """One line for people: counts by kind, sizes, and the verdict."""
        kinds = ", ".join(f"{k}={n}" for k, n in sorted(self.counts.items())) or "nothing"
        verdict = "safe" if self.safe else f"NOT safe: {self.reason}"
        return (
            f"redacted {kinds}; {self.bytes_in} bytes in, {self.bytes_out} out, "
            f"{self.share:.2%} replaced; {verdict}"
        )


@dataclass(frozen=True)
class Tally:
    """What a stream counted: the report's raw material. Tallies of the consecutive pieces
    of one log add up to the tally of the whole (``parallel`` redacts pieces apart)."""

    counts: Counter[str] = field(default_factory=Counter)
    bytes_in: int = 0
    bytes_out: int = 0
    redacted: int = 0
    undecodable: int = 0
    nul: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.counts + other.counts,
            self.bytes_in + other.bytes_in,
            self.bytes_out + other.bytes_out,
            self.redacted + other.redacted,
            self.undecodable + other.undecodable,
            self.nul + other.nul,
        )

    def report(self, max_share: float) -> RedactionReport:
        """The counts, and whether the output may be published (see the module docstring)."""
        reason = ""
        size = self.bytes_in
        if self.nul or self.undecodable > max(MAX_UNDECODABLE * size, MIN_UNDECODABLE):
            reason = "the input looks binary (NUL bytes or not UTF-8 text)"
        elif size >= MIN_SHARE_INPUT and self.redacted / size > max_share:
            reason = (
                f"redaction replaced {self.redacted / size:.0%} of the log, "
                f"more than the {max_share:.0%} allowed"
            )
        return RedactionReport(
            dict(self.counts), size, self.bytes_out, self.redacted, safe=not reason, reason=reason
        )


class StreamRedactor:
    """Feed it chunks of a log; it returns the redacted text as soon as it is safe to."""

    def __init__(
        self,
        engine: Engine,
        *,
        max_redacted_share: float,
        block_size: int = BLOCK_SIZE,
        overlap: int = OVERLAP,
        context: bytes = b"",
        in_key: bool = False,
    ) -> None:
        """``context``: the log's bytes right before the first chunk, when the stream starts
        at a line of a longer log (they are read as the first window's neighbours, never
        emitted); ``in_key``: the log is inside a private key block there."""
        self._engine = engine
        self._max_share = max_redacted_share
        self._overlap = overlap
        self._block = max(block_size, 2 * overlap)
        self._buf = bytearray()
        self._pos = 0  # how much of the buffer has been emitted
        self._ctx = context[-CONTEXT:]
        self._in_key = in_key
        self._key_left = 0  # how far an open key's END may still close it (``KEY_REACH``)
        self.ended_in_key = False  # the input ended inside a key block (read after finish)
        # Multi-line values of this node's secrets: a cut must not fall inside one.
        self._multiline = tuple(n for n in engine.multiline_needles if len(n) < self._block // 2)
        # How a secret's value that ran past the last window's end goes on (None: it did not).
        self._cont: _Open | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._counts: Counter[str] = Counter()
        self._in = self._out = self._redacted = self._undecodable = self._nul = 0

    def feed(self, chunk: bytes | str) -> str:
        """Take the next piece of the log; return whatever redacted text is ready."""
        return self._decode(self._feed(chunk), final=False)

    def flush(self) -> str:
        """Emit every complete line buffered so far (for interactive input)."""
        return self._decode(self._flush(), final=False)

    def finish(self) -> str:
        """The rest of the redacted text, once the input has ended."""
        return self._decode(self._finish(), final=True)

    def feed_bytes(self, chunk: bytes) -> bytes:
        """``feed``, as the UTF-8 bytes a file or a pipe takes: an ASCII text (most logs)
        is passed on as it is, not decoded and encoded again (the same bytes, counted the
        same)."""
        return self._encoded(self._feed(chunk), final=False)

    def flush_bytes(self) -> bytes:
        """``flush``, as UTF-8 bytes (see ``feed_bytes``)."""
        return self._encoded(self._flush(), final=False)

    def finish_bytes(self) -> bytes:
        """``finish``, as UTF-8 bytes (see ``feed_bytes``)."""
        return self._encoded(self._finish(), final=True)

    def _feed(self, chunk: bytes | str) -> bytes:
        data = chunk.encode() if isinstance(chunk, str) else chunk
        self._in += len(data)
        if b"\0" in data:  # memchr; counting every chunk would be a full extra pass
            self._nul += data.count(0)
        self._buf += data
        out = []
        while len(self._buf) - self._pos >= self._block:
            out.append(self._round(final=False))
        del self._buf[: self._pos]  # once per feed, so a huge chunk costs no quadratic copy
        self._pos = 0
        return b"".join(out)

    def _flush(self) -> bytes:
        if self._buf.rfind(b"\n", self._pos) < 0 and not self._in_key:
            return b""
        out = self._round(final=False, eager=True)
        del self._buf[: self._pos]
        self._pos = 0
        return out

    def _finish(self) -> bytes:
        return self._round(final=True) if len(self._buf) > self._pos or self._in_key else b""

    @property
    def tally(self) -> Tally:
        """What this stream counted so far."""
        return Tally(
            Counter(self._counts), self._in, self._out, self._redacted, self._undecodable, self._nul
        )

    @property
    def report(self) -> RedactionReport:
        """Counts so far, and whether the output may be published."""
        return self.tally.report(self._max_share)

    def _encoded(self, data: bytes, *, final: bool) -> bytes:
        """``data`` as valid UTF-8: as it is when it is ASCII and no character is half
        read; else through the decoder, as ``_decode`` reads it, and encoded again."""
        if data.isascii() and not self._decoder.getstate()[0]:
            self._out += len(data)
            return data
        return self._decode(data, final=final).encode()

    def _decode(self, data: bytes, *, final: bool) -> str:
        text = self._decoder.decode(data, final)
        if _REPLACEMENT in text:
            self._undecodable += text.count(_REPLACEMENT)
        self._out += len(data) if text.isascii() else len(text.encode())
        return text

    def _round(self, *, final: bool, eager: bool = False) -> bytes:
        """Scan one window and emit it up to the cut; keep the rest for the next window."""
        with memoryview(self._buf) as view:  # one copy of the window, not three
            window = b"".join((self._ctx, view[self._pos : self._pos + self._block]))
        start = len(self._ctx)
        head = b""
        if self._in_key:
            head, start = self._skip_key(window, start, final=final)
            if self._in_key:
                return self._consume(window, start, head)
        if self._cont is not None:
            breaks, start = self._skip_value(window, start, final=final)
            head += breaks
            if self._cont is not None:
                return self._consume(window, start, head)
        # Scan from the context on: a match may begin there (``TOKEN=``) and replace text after.
        scan = self._engine.scan(window, 0, final=final)
        cut = len(window) if final else self._cut(window, start, eager=eager)
        spans = [s for s in scan.spans if s[0] < cut and s[1] > start]
        emit_end = max([cut, *(e for _, e, _ in spans)])
        if eager and not final and scan.open_key_at is not None and scan.key_left:
            # a key's BEGIN line whose END may yet come within its reach, in a window not
            # full (a pipe passing lines on): held back, from its line, until more text says
            hold = max(start, window.rfind(b"\n", start, scan.open_key_at) + 1)
            spans = [s for s in spans if s[1] <= hold]
            return self._consume(window, hold, head + self._apply(window, spans, start, hold))
        if spans and scan.open_key_at is not None and spans[-1][0] == scan.open_key_at:
            self._in_key = not final
            self.ended_in_key = final
            stop = len(window) if final else _key_cut(window, spans[-1][0] + 1)
            # (the next window starts at the cut: the reach counts from there)
            self._key_left = scan.key_left + len(window) - stop if scan.key_left else 0
            spans[-1] = (spans[-1][0], stop, spans[-1][2])
            emit_end = stop
        elif spans and not final:
            # The value may go on in the next window: drop the rest of it there.
            self._cont = _continuation(window, spans[-1])
            cont = self._cont
            head_at = _block_head(window, spans[-1][0], cont.prefix) if cont and cont.indent else -1
            if head_at > start and not any(a < head_at < b for a, b, _ in spans):
                # A block scalar open at the window's end whose header is in it: the next
                # window starts at the header and reads the block whole, so that the choice
                # (a value, or ``${DB_PASSWORD}`` on every line) is the one a whole log gets.
                self._cont = None
                spans = [span for span in spans if span[1] <= head_at]
                emit_end = head_at
            elif self._cont is not None:
                emit_end = spans[-1][1]
        return self._consume(window, emit_end, head + self._apply(window, spans, start, emit_end))

    def _cut(self, window: bytes, start: int, *, eager: bool) -> int:
        """After the last line end; on a line longer than the window, the overlap's edge.
        Never inside what may be the first lines of a multi-line secret of this node's, nor
        of one disguised (folded, wrapped): the next window reads it whole."""
        line_end = window.rfind(b"\n", start)
        if line_end >= start:
            cut = _before_partial(window, start, line_end + 1, self._multiline, eager=eager)
            cut = _before_block(window, start, cut, eager=eager)
            cut = _before_triple(window, start, cut, eager=eager)
        else:
            cut = start if eager else max(start, len(window) - self._overlap)
        return self._before_disguised(window, start, cut, eager=eager)

    def _before_disguised(self, window: bytes, start: int, cut: int, *, eager: bool) -> int:
        """``cut``, or the start of the line where an unfinished disguised secret of this
        node's begins at the window's end; within a line longer than most of a window
        (which must move on), that secret's first byte."""
        disguises = self._engine.disguises
        if disguises is None:
            return cut
        at = disguises.open_at(window, start)
        if not 0 <= at < cut:
            return cut
        line = window.rfind(b"\n", start, at) + 1
        if line > start or eager:
            return max(line, start)
        return at if at > start else cut

    def _apply(self, window: bytes, spans: list[Span], start: int, end: int) -> bytes:
        clipped = [(max(s, start), e, k) for s, e, k in spans if e > start]
        for s, e, kind in clipped:
            self._counts[kind] += 1
            self._redacted += e - s
        return replace(window, clipped, start, end)

    def _skip_key(self, window: bytes, start: int, *, final: bool) -> tuple[bytes, int]:
        """Inside a key block: drop bytes up to its END marker while it may come within
        ``KEY_REACH`` of the BEGIN line, then over its body's lines (``key_block_end``),
        keeping the line breaks."""
        at = start
        if self._key_left > 0:
            reach = start + self._key_left
            end = END_KEY.search(window, start, min(reach, len(window)))
            if end is not None:
                self._in_key, self._key_left = False, 0
                self._redacted += end.end() - start
                return b"\n" * window.count(b"\n", start, end.end()), end.end()
            if reach >= len(window) and not final:  # the reach goes on past this window
                stop = _key_cut(window, start)
                self._key_left = reach - stop
                self._redacted += stop - start
                return b"\n" * window.count(b"\n", start, stop), stop
            self._key_left = 0  # past the reach, or the log's end: the body's lines alone
            if reach < len(window):  # (from the line after the reach's end)
                at = window.find(b"\n", reach - 1) + 1 or len(window)
        body = key_block_end(window, at)
        stop = max(body.end, start)  # (no body line at all: it ended with the last window)
        if body.open:
            stop = len(window) if final else _key_cut(window, start)
            self.ended_in_key = final
        else:
            self._in_key = False
        if final:
            self._in_key = False
        self._redacted += stop - start
        return b"\n" * window.count(b"\n", start, stop), stop

    def _skip_value(self, window: bytes, start: int, *, final: bool) -> tuple[bytes, int]:
        """Inside a value longer than a window: drop it up to its end (its placeholder is
        out), keeping the line breaks of a block scalar's lines."""
        assert self._cont is not None
        found = self._cont.pattern.match(window, start)
        stop = found.end() if found else start
        self._cont = None if final else _still_open(window, stop, self._cont)
        self._redacted += stop - start
        return b"\n" * window.count(b"\n", start, stop), stop

    def _consume(self, window: bytes, end: int, out: bytes) -> bytes:
        """Drop the emitted input from the buffer and keep its tail as context."""
        self._pos += end - len(self._ctx)
        self._ctx = window[max(0, end - CONTEXT) : end]
        return out


def _before_partial(
    window: bytes, start: int, cut: int, needles: tuple[bytes, ...], *, eager: bool
) -> int:
    """``cut``, or an earlier line start: before the text that ends at ``cut`` with what may
    be the first lines of a needle (its rest in the next window, which then reads it whole).
    When that text begins at ``start``, an eager flush emits nothing yet; a full window is
    cut where it was (it must move on, and the needle's rest is past a window's half)."""
    best = cut
    for needle in needles:
        at = window.find(needle[:1], max(start, cut - len(needle) + 1), cut)
        while at >= 0:
            if needle.startswith(window[at:cut]):
                line = max(start, window.rfind(b"\n", start, at) + 1)
                if line > start or eager:
                    best = min(best, line)
                break
            at = window.find(needle[:1], at + 1, cut)
    return best


_BLOCK_HEAD_LINES = 40  # lines back from a cut to a block's header (``_HEADER_END``'s 16 blank)


def _before_block(window: bytes, start: int, cut: int, *, eager: bool) -> int:
    """``cut``, or the start of a block scalar's header line (``password: |``) when the
    text before ``cut`` ends with that header and at most its first value line, past blank
    lines (with a log's prefix or without: ``web_1  |``, a timestamp, a bracket): one line
    of a block may be judged unlike its lines together (a line of words is no secret, two
    are), so the next window starts at the header and reads the block whole. When the
    header opens the window, an eager flush emits nothing yet; a full window is cut where
    it was (it must move on)."""
    end = cut - 1  # the line break that ends the line before the cut
    values = 0
    for _ in range(_BLOCK_HEAD_LINES):
        if end < start:
            return cut
        line = window.rfind(b"\n", 0, end) + 1
        if line < start:
            return cut  # the line began in the text emitted before
        text = text_start(window, line, end)
        rest = window[text:end]
        if not rest.strip():
            pass  # a blank line, or one of the prefix alone
        elif block_header(window, text, end):
            return line if line > start or eager else cut
        elif values or rest[:1] not in (b" ", b"\t"):
            return cut  # not a block's first value line
        else:
            values = 1
        end = line - 1
    return cut


def _before_triple(window: bytes, start: int, cut: int, *, eager: bool) -> int:
    """``cut``, or the start of the line where a secret's triple-quoted string opens that
    is not closed before ``cut`` (``commands.open_triple``): the next window reads it
    whole. When it opens the window, an eager flush emits nothing yet; a full window is cut
    where it was (it must move on)."""
    line = open_triple(window, start, cut)
    if line < 0:
        return cut
    return line if line > start or eager else cut


class _Open(NamedTuple):
    """A value that ran past a window's end: how it goes on, and a block scalar's indent
    and the log's prefix before it on each line (``assignments.log_prefix``)."""

    pattern: re.Pattern[bytes]
    indent: int = 0  # 0: a quoted or a bare value
    prefix: bytes = b""


def _continuation(window: bytes, span: Span) -> _Open | None:
    """How the value that ``span`` ends may go on past the window's end, or None if its end
    is in the window. A named secret goes on as it was quoted (``"…"``, ``'…'``, ``\\"…\\"``)
    or as a block scalar's lines; any other find, as a bare run of token characters."""
    start, end, kind = span
    if kind == B64_KEY:  # a key in base64 whose wrapped lines may go on in the next window
        return _still_open(window, end, _Open(_B64_KEY_MORE))
    if kind != Kind.SECRET:
        return _Open(_VALUE_RUN) if end == len(window) else None
    found = block_indent(window, start)
    if found is not None:
        indent, prefix = found
        return _still_open(window, end, _Open(block_lines(indent, prefix), indent, prefix))
    quote = window[start - 1 : start]
    if quote == b"'":
        pattern = VALUE_END["sq"]
    elif quote == b'"':
        before = window[max(0, start - 4) : start - 1]
        slashes = len(before) - len(before.rstrip(b"\\"))
        pattern = VALUE_END[f"eq{slashes}" if slashes else "dq"]
    else:
        pattern = _VALUE_RUN
    return _still_open(window, end, _Open(pattern))


def _block_head(window: bytes, first: int, prefix: bytes = b"") -> int:
    """Where the header line of the block scalar whose value starts at ``first`` begins
    (past the lines that hold nothing but the log's prefix ``prefix``, when it has one)."""
    lead = line_prefix(prefix) if prefix else None
    end = window.rfind(b"\n", 0, first)  # the line break above the first value line
    while end > 0:
        above = window.rfind(b"\n", 0, end) + 1
        opened = None if lead is None else lead.match(window, above, end)
        if window[above if opened is None else opened.end() : end].strip():
            return above
        end = above - 1
    return 0


def _key_cut(window: bytes, floor: int) -> int:
    """Where a window ends inside a key block: at the start of its last line, unfinished,
    which the next window reads whole (an END marker in it, or a line that is no key's);
    within a line longer than the window, short of an END marker's length from its end."""
    line = window.rfind(b"\n", floor) + 1
    return line if line > floor else max(floor, len(window) - END_KEY_MAX)


def _still_open(window: bytes, stop: int, value: _Open) -> _Open | None:
    """How ``value`` goes on when what follows ``stop`` does not yet say it ended there."""
    tail = len(window) - stop
    if tail > _OPEN_TAIL_MAX:
        return None
    if value.pattern is _B64_KEY_MORE:  # open while the window ends with a line of it
        return value if window[stop:] in (b"", b"\n", b"\r\n") else None
    if value.indent:
        indent, prefix = value.indent, value.prefix
        if tail == 0 and stop and window[stop - 1] != 10:  # "\n": inside a line of it
            return _Open(block_lines_mid(indent, prefix), indent, prefix)
        rest = window[stop:]
        if rest.strip(b" \t") and not (prefix and b"\n" not in rest):
            return None  # a line less indented: the block ended
        # (a line cut short under a log's prefix may be one of it: the next window, which
        # starts at that line, reads it whole with the block's lines)
        return _Open(block_lines(indent, prefix), indent, prefix)
    return value if _OPEN_TAIL.fullmatch(window, stop) else None
