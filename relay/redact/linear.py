"""RE2 searches at the speed of the engine: spans straight from the matcher.

The library's match objects are built in Python for each find, which costs more than the
search itself on the many short finds of a log (and the formats' and names' checks want
only the spans). ``searcher`` returns a function that gives every group's span of the first
match in ``text[pos:endpos]`` — ``(-1, -1)`` for a group that did not take part, and for
the whole match when there is none — through the library's compiled matcher where it has
one, and through its public API where it has not.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import re2

Spans = Sequence[tuple[int, int]]
Searcher = Callable[[bytes, int, int], Spans]
NO_MATCH = (-1, -1)


def searcher(
    regex: re2._Regexp[bytes], *, anchored: bool = False, within: bool = False, whole: bool = False
) -> Searcher:
    """The fast search (``anchored``: a match that starts at ``pos``; ``whole``: one that
    spans ``pos`` to ``endpos``, as ``fullmatch``) over ``regex``.

    ``within``: every caller passes ``pos <= endpos <= len(text)``, so the matcher is
    called as it is, with no Python function around it to clamp the end (that function
    cost as much as the call on a log's many short searches). RE2 finds nothing, and logs
    an error, for an end past the text: only a caller that never passes one may ask."""
    raw: Any = getattr(regex, "_regexp", None)
    anchors: Any = getattr(re2, "_Anchor", None)
    if raw is not None and anchors is not None and hasattr(raw, "Match"):
        match = raw.Match
        anchor = anchors.ANCHOR_START if anchored else anchors.UNANCHORED
        if whole:
            anchor = anchors.ANCHOR_BOTH
        if within:
            exact: Searcher = functools.partial(match, anchor)
            return exact

        def fast(text: bytes, pos: int, endpos: int) -> Spans:
            # RE2 refuses an end past the text (the library's wrapper clamps it too)
            spans: Spans = match(anchor, text, pos, min(endpos, len(text)))
            return spans

        return fast
    groups = regex.groups

    def public(text: bytes, pos: int, endpos: int) -> Spans:
        m = (regex.fullmatch if whole else regex.match if anchored else regex.search)(
            text, pos, endpos
        )
        if m is None:
            return [NO_MATCH] * (groups + 1)
        return [m.span(i) for i in range(groups + 1)]

    return public


def latin1_searcher(pattern: bytes, *, max_mem: int | None = None) -> Searcher:
    """RE2's search for ``pattern``, every byte a character (Latin-1: a line that is not
    UTF-8 reads as any other), no groups; ``max_mem``: its automata's budget (RE2's default
    else). Every caller reads within the text."""
    options = re2.Options()
    options.never_capture = True
    if max_mem is not None:
        options.max_mem = max_mem
    options.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]
    return searcher(re2.compile(pattern, options), within=True)


def line_searcher(pattern: bytes) -> Searcher:
    """``latin1_searcher`` for ``pattern`` in any case: for the prefilter's second look at
    one hit line (``prefilter._ranges``), which stays linear whatever a line holds (``re``
    tried a quantified run again from each place of a word on a megabyte's line)."""
    return latin1_searcher(b"(?i:" + pattern + b")")


def past_line(block: bytes, at: int) -> int:
    """Past the line break of the line that holds ``at`` (or the block's end)."""
    stop = block.find(b"\n", at)
    return len(block) if stop < 0 else stop + 1
