"""Blocks that the format table's pass with riders once read otherwise than the searches
it stands for (``riders``): each test holds the engine, or the pass, to the same block read
without riders."""

from __future__ import annotations

from relay.redact import MachineFacts
from relay.redact.disguises import Disguises
from relay.redact.engine import Engine
from relay.redact.formats import SCANNER, FormatScanner
from relay.redact.labelled import LABEL_RIDER
from relay.redact.prefilter import PAIR_RIDER
from relay.redact.rules import Kind

ALONE = FormatScanner()  # the table's pass with no rider
# A token-shaped secret whose third aligned block of six (``-----x``) is one character in
# the canonical text: the canonical search has the string ``x``, found at every ``x``.
DASHED = "Ab3dE5gH7jK9-----xYz4Qw8"


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
