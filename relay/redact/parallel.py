"""A large log file redacted on every core: cut into pieces at line starts, one process each.

Redaction is pure and reads no further back than a line's start (key blocks and name/value
pairs aside), so a log cut at a line start redacts the same in pieces as whole, provided
each piece's stream is given the bytes before it as context — what the stream itself keeps
between its windows — and no cut falls inside a private key block, whose state a stream
carries from window to window. ``cut_at`` is that rule, pure; the rest reads the file and
runs the pieces in a process pool, each process building its own redactor from the
``Recipe`` (compiled rules do not cross a process boundary; a forked one reuses the
parent's) and writing each piece's text to a spool file, which is copied out in order as
each is done and deleted: memory stays bounded, and the text crosses no pipe.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from relay.redact.assignments import text_start
from relay.redact.commands import triple_close
from relay.redact.disguises import Disguises
from relay.redact.redactor import Recipe, Redactor
from relay.redact.stream import CONTEXT, Tally

if TYPE_CHECKING:  # the pool's modules load only when a file is redacted in pieces
    from concurrent.futures import Future, ProcessPoolExecutor

PIECE = 4 << 20  # bytes per piece: the last to finish keeps the rest waiting that long
MIN_PARALLEL = 4 * PIECE  # below this a file is redacted in this process
_SEARCH = 64 << 10  # how far around a planned cut to look (longer than any key block)
_READ = 1 << 20
_SAMPLE = 1 << 20  # how much of the file the parent scans before forking (see ``_sample``)
_SAMPLES = 16
_LINE_START = re.compile(rb"\n(?=[^ \t\r\n|])")
_MARKER = re.compile(rb"(?i)-----(begin|end) [a-z0-9 ]{0,40}private key(?: block)?-----")


def cut_at(
    region: bytes,
    target: int,
    needles: tuple[bytes, ...] = (),
    disguises: Disguises | None = None,
) -> int | None:
    """Where, at or after ``target`` in ``region``, a piece may start: the start of a line
    that opens with a character, not a blank (an indented line may go on a YAML block
    scalar begun above it, whose state a stream carries from window to window; so may a
    line indented after a log's prefix, ``_indented_after_prefix``) nor a
    table's ``|`` (a table row is read with the line under it, which says if it is the
    header), outside a secret's triple-quoted string (``commands.triple_close``: the piece
    before must read it to its closing quotes), every private key block (after the END
    line of a block open there) and every
    occurrence of a multi-line ``needle`` (this node's secrets) and every match of
    ``disguises`` (this node's secrets folded or wrapped). None when ``region`` holds no
    such place (a line, or a key, longer than the region, or a match it may cut short).

    A key block longer than the region may still hold the cut: ``redact_file`` redacts the
    piece after it again, from inside the key, when the piece before ends inside one."""
    found = _LINE_START.search(region, max(0, target - 1))
    while found is not None and _indented_after_prefix(region, found.end()):
        found = _LINE_START.search(region, found.end())
    if found is None:
        return None
    cut = found.end()
    closed = triple_close(region, 0, cut)
    if closed > len(region):
        return None  # a secret's triple-quoted string open at the cut closes past the region
    if closed > cut:
        return cut_at(region, closed, needles, disguises)  # after the string's close
    for needle in needles:
        at = region.find(needle, max(0, cut - len(needle) + 1), cut + len(needle))
        if 0 <= at < cut:
            return cut_at(region, at + len(needle), needles, disguises)
    if disguises is not None:
        if cut + disguises.reach > len(region):
            return None  # a match over the cut could run past the region's end
        over = disguises.crossing(region, cut)
        if over > cut:
            return cut_at(region, over, needles, disguises)
    # A key block is open at the cut when the last marker before it is a BEGIN line.
    last = None
    for m in _MARKER.finditer(region, 0, cut):
        last = m
    if last is not None and last.group(1).lower() == b"begin":
        end = _MARKER.search(region, cut)
        while end is not None and end.group(1).lower() != b"end":
            end = _MARKER.search(region, end.end())
        if end is None:
            return None
        return cut_at(region, end.end(), needles, disguises)
    return cut


def _indented_after_prefix(region: bytes, line: int) -> bool:
    """The line from ``line`` is indented, or blank, after a log's prefix (a timestamp,
    ``web_1  | ``), or holds only the prefix, with its blank or without (``web_1  |``):
    it may go on a YAML block scalar begun above it, as an indented or a blank line."""
    end = region.find(b"\n", line)
    end = len(region) if end < 0 else end
    text = text_start(region, line, end)
    return text > line and region[text : text + 1] in _BLANK_OR_END


_BLANK_OR_END = (b" ", b"\t", b"\r", b"\n", b"")


def plan(
    read: Callable[[int, int], bytes],
    size: int,
    piece: int = PIECE,
    needles: tuple[bytes, ...] = (),
    disguises: Disguises | None = None,
) -> list[tuple[int, int]]:
    """The pieces of a file of ``size`` bytes, as ``(start, end)``: about ``piece`` bytes
    each, each starting where ``cut_at`` allows (``read(offset, n)`` reads the file)."""
    cuts = [0]
    target = piece
    while target < size - piece // 2:
        low = max(cuts[-1], target - _SEARCH)
        cut = cut_at(read(low, 2 * _SEARCH), target - low, needles, disguises)
        if cut is not None and low + cut < size:
            cuts.append(low + cut)
            target = low + cut + piece
        else:
            target += piece  # no place to cut here: this piece grows to the next try
    return list(itertools.pairwise([*cuts, size]))


_WORKER: dict[str, object] = {}


def _start(recipe: Recipe, path: str, spool: str) -> None:
    """A pool process: its redactor, its file and where its pieces' text goes, once.

    A forked process inherits the command's signal handlers; a pool process must die of
    SIGTERM at once (a handler that unwinds it could leave the pool's queue lock held, and
    the other processes waiting on it), and leaves Ctrl-C to the parent, which stops it."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    inherited = _WORKER.get("parent")  # a forked process has the parent's, built already
    same = isinstance(inherited, Redactor) and inherited.recipe == recipe
    _WORKER["redactor"] = inherited if same else recipe.build()
    _WORKER["fd"] = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    _WORKER["spool"] = spool


def _redact_piece(start: int, end: int, in_key: bool = False) -> tuple[str, Tally, bool]:
    """Redact ``[start, end)`` of the pool's file, with the bytes before it as context
    (``in_key``: from inside a key block), into a file of the spool (text sent back
    through the pool's pipe would cost the parent a copy and an unpickling per byte);
    return its path, the piece's tally and whether it ended inside a key block."""
    redactor, fd, spool = _WORKER["redactor"], _WORKER["fd"], _WORKER["spool"]
    assert isinstance(redactor, Redactor) and isinstance(fd, int) and isinstance(spool, str)
    before = max(0, start - CONTEXT)
    context = _pread(fd, start - before, before) if start else b""
    stream = redactor.open(context=context, in_key=in_key)
    target = os.path.join(spool, f"{start:016d}{'k' if in_key else ''}")
    with open(target, "wb") as out:
        pos = start
        while pos < end:
            chunk = _pread(fd, min(_READ, end - pos), pos)
            if not chunk:
                break
            pos += len(chunk)
            out.write(stream.feed_bytes(chunk))
        out.write(stream.finish_bytes())
    return target, stream.tally, stream.ended_in_key


def _sample(fd: int, size: int) -> bytes:
    """Whole lines from ``_SAMPLES`` places spread over the file, ``_SAMPLE`` bytes in all:
    what the forked processes will read, for the parent to build the automata's states on."""
    parts = []
    each = _SAMPLE // _SAMPLES
    for k in range(_SAMPLES):
        chunk = _pread(fd, each, k * max(0, size - each) // max(1, _SAMPLES - 1))
        first, last = chunk.find(b"\n") + 1, chunk.rfind(b"\n") + 1
        if 0 < first < last:
            parts.append(chunk[first:last])
    return b"".join(parts)


def cores() -> int:
    """The cores this process may run on (a container's share, not the machine's)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1  # pragma: no cover - macOS and Windows


def _pread(fd: int, n: int, offset: int) -> bytes:
    """``n`` bytes at ``offset`` (fewer at the end of the file), on every platform."""
    if hasattr(os, "pread"):
        return os.pread(fd, n, offset)
    os.lseek(fd, offset, os.SEEK_SET)  # pragma: no cover - Windows has no pread
    return os.read(fd, n)  # pragma: no cover


def redact_file(
    redactor: Redactor,
    path: str,
    size: int,
    write: Callable[[bytes], None],
    *,
    jobs: int,
    piece: int = PIECE,
    method: str | None = None,
) -> Tally:
    """Redact the file at ``path`` on ``jobs`` processes, writing its text in order.
    ``method``: how processes start (the platform's default: fork on Linux, spawn on macOS
    and Windows, where each process builds its redactor from the recipe)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        needles = redactor.multiline_needles
        disguises = redactor.disguises
        pieces = plan(lambda offset, n: _pread(fd, n, offset), size, piece, needles, disguises)
        sample = _sample(fd, size)
    finally:
        os.close(fd)
    jobs = min(jobs, len(pieces))
    total = Tally()
    import multiprocessing
    import tempfile  # here: it loads shutil, bz2 and lzma, which one process never needs
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(method)
    if context.get_start_method() == "fork":
        redactor.warm(sample)  # compiled, and its automata built, once here, not in each
        _WORKER["parent"] = redactor
    # An executor, not a Pool: a process that dies (the kernel's OOM killer) breaks it
    # with an error here, where a Pool would wait for the lost piece for ever.
    try:
        with (
            tempfile.TemporaryDirectory(prefix="relay-redact-") as spool,
            ProcessPoolExecutor(
                jobs,
                mp_context=context,
                initializer=_start,
                initargs=(redactor.recipe, path, spool),
            ) as pool,
        ):
            pending: deque[tuple[tuple[int, int], Future[tuple[str, Tally, bool]]]] = deque()
            in_key = False  # the piece before ended inside a key block
            try:
                for bounds in pieces:
                    pending.append((bounds, pool.submit(_redact_piece, *bounds)))
                    while len(pending) > 2 * jobs:  # the pool runs ahead two pieces a process
                        tally, in_key = _drain(pool, *pending.popleft(), in_key, write)
                        total += tally
                while pending:
                    tally, in_key = _drain(pool, *pending.popleft(), in_key, write)
                    total += tally
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise
    finally:
        _WORKER.pop("parent", None)
    return total


def _drain(
    pool: ProcessPoolExecutor,
    bounds: tuple[int, int],
    result: Future[tuple[str, Tally, bool]],
    in_key: bool,
    write: Callable[[bytes], None],
) -> tuple[Tally, bool]:
    """Write one finished piece's text, then drop its file. When the piece before ended
    inside a key block (one longer than ``cut_at`` looks), this one is redacted again from
    inside it, as one stream would have read it."""
    target, tally, ended = result.result()
    if in_key:
        os.unlink(target)
        target, tally, ended = pool.submit(_redact_piece, *bounds, True).result()
    with open(target, "rb") as done:
        while chunk := done.read(_READ):
            write(chunk)
    os.unlink(target)
    return tally, ended
