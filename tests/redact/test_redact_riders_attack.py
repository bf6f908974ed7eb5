"""Blocks that the format table's pass with riders once read otherwise than the searches
it stands for (``riders``): each test holds the engine, or the pass, to the same block read
without riders."""

from __future__ import annotations

import gc
import random

import re2
from format_samples import clean_lines

from relay.redact import MachineFacts
from relay.redact.disguises import Disguises
from relay.redact.engine import Engine
from relay.redact.formats import _MOST_RIDINGS, SCANNER, FormatScanner
from relay.redact.labelled import LABEL_RIDER
from relay.redact.prefilter import PAIR_RIDER
from relay.redact.rules import Kind

ALONE = FormatScanner()  # the table's pass with no rider
# A token-shaped secret whose third aligned block of six (``-----x``) is one character in
# the canonical text: the canonical search has the string ``x``, found at every ``x``.
DASHED = "Ab3dE5gH7jK9-----xYz4Qw8"


def clean_block() -> bytes:
    return clean_lines(random.Random(7), 20_000).encode()


def _own(spans: tuple[tuple[int, int, str], ...]) -> list[tuple[int, int]]:
    return [(s, e) for s, e, kind in spans if kind == Kind.OWN_SECRET]


def test_a_piece_whose_only_whole_block_is_one_canonical_character_is_masked() -> None:
    """``7jK9-----xYz4`` holds one whole aligned block, ``-----x``: the rider must give the
    place of its ``x`` though a byte the canonical text keeps follows it."""
    block = b"line: 7jK9-----xYz4 end\n"
    facts = MachineFacts(secrets=(DASHED,))
    riding = Engine(facts).scan(block).spans
    assert _own(riding) == [(6, 19)]
    assert riding == Engine(facts, prefilter=False).scan(block).spans


def test_a_one_character_string_s_hits_are_no_near_matches_of_the_table() -> None:
    """Each ``x`` the pass hits for that string is a rider's place, not a hit of the
    table's: counted as one, a line of them was masked whole as a token flood."""
    built = Disguises.build((DASHED,))
    assert built is not None and built.rider is not None and built.either is not None
    assert b"x" in built.either.tags
    block = b" ".join(b"x" + bytes([c]) for c in b"abcdefghijklmnopqrstuvwxyz" * 3) + b"\n"
    places: list[int] = []
    riding = [(PAIR_RIDER, []), (LABEL_RIDER, []), (built.rider, places)]
    assert list(SCANNER.finds(block, 0, riding)) == list(ALONE.finds(block, 0)) == []
    assert places == [i for i in range(len(block)) if block[i : i + 1] == b"x"]
    facts = MachineFacts(secrets=(DASHED,))
    assert Engine(facts).scan(block).spans == ()


def test_the_passes_of_engines_gone_are_freed() -> None:
    """The table keeps the passes with riders of a few engines (``_MOST_RIDINGS``); one it
    drops must be gone, not kept by the regex library's own cache of compiled patterns
    (128 of them: a process that made an engine for each of many sets of secrets kept
    every pass's automaton, megabytes each, 8 MB more a set on a 3 MB log)."""
    block = clean_block()
    for n in range(_MOST_RIDINGS + 4):
        secret = f"Zq7Tk9Lm2Xw4Rb8Vn1Cd5pQ{n:02d}"
        engine = Engine(MachineFacts(secrets=(secret,)))
        engine.warm()
        assert _own(engine.scan(block + secret.encode()).spans)
    del engine
    gc.collect()
    head = SCANNER.search.pattern + b"|"
    kept = [o for o in gc.get_objects() if isinstance(o, re2._Regexp)]
    passes = [o for o in kept if isinstance(o.pattern, bytes) and o.pattern.startswith(head)]
    assert len(passes) <= _MOST_RIDINGS  # of the 12 made, those the table may still use
    assert len(SCANNER._riding) <= _MOST_RIDINGS + 1
