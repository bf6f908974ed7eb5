"""Searches that ride on the format table's pass give what their own searches give.

The pass over a block finds, with the table's anchors, the places of its riders: the
prefilter's pair word, the first place of a label (``part 2/3:``), and the places where
this node's secret may start in a disguise (the canonical strings, spelled out with the
blanks and marks between their characters). Where the pass skips bytes (a token found, a
flooded line), each rider searches them itself. Whatever the block, the riders' places must
be those of their own searches, and the table's finds those of the pass without riders.
"""

from __future__ import annotations

import base64
import random

import re2
from format_samples import clean_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from relay.redact import MachineFacts
from relay.redact.canon import Canonical
from relay.redact.disguises import MOST_RIDING, Disguises
from relay.redact.engine import Engine
from relay.redact.formats import SCANNER, FormatScanner
from relay.redact.labelled import _LABEL_AT, LABEL_RIDER
from relay.redact.prefilter import PAIR_RIDER
from relay.redact.rules import Kind

SECRETS = ("Zq7Tk9Lm2Xw4Rb8Vn1Cd5pQ0", "rly-N0de.S3cret:9f8e7d6c5b4a")  # a node's few
ALONE = FormatScanner()  # the table's pass with no rider
_LATIN1 = re2.Options()
_LATIN1.encoding = re2.Options.Encoding.LATIN1  # type: ignore[attr-defined]


def _forms(secret: str, rng: random.Random) -> str:
    """The secret in one of the disguises a step may print it in, or a piece of it."""
    raw = secret.encode()
    pick = rng.randrange(8)
    if pick == 0:
        return " ".join(secret)
    if pick == 1:
        return "\n".join(secret[i : i + 5] for i in range(0, len(secret), 5))
    if pick == 2:
        return secret[::-1].upper()
    if pick == 3:
        return base64.b64encode(rng.randbytes(rng.randrange(3)) + raw).decode()
    if pick == 4:
        return ":".join(f"{b:02x}" for b in raw)
    if pick == 5:
        return secret[: rng.randrange(min(6, len(secret)), len(secret) + 1)]
    if pick == 6:
        return "-".join(secret.swapcase())
    return secret


def _line(rng: random.Random, secret: str) -> str:
    """A line that holds a rider's place, often where the pass skips bytes."""
    form = _forms(secret, rng)
    half = secret[: len(secret) // 2]
    return rng.choice(
        (
            f"token: {form}",
            f"ghp_{form[:20]} then {form}",  # glued to an anchor, inside a token
            "ghp_xxxx " * 70 + form,  # a flooded line: the pass skips its rest
            f"first half: {half} and part 2/2 = {secret[len(half) :]}",
            f"ghp_a1B2partx3: {half}",  # a label inside a token the table finds
            "ghp_xxxx " * 70 + f"chunk 1 of 2: {half}",
            f"xoxb-value-{rng.randrange(99)} PART:{half} value {form}",
            f"{form}\t{form[::-1]}",
        )
    )


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32), hits=st.integers(0, 30), count=st.integers(1, 2))
def test_the_riders_places_are_their_own_searches_places(seed: int, hits: int, count: int) -> None:
    rng = random.Random(seed)
    secrets = SECRETS[:count]
    built = Disguises.build(secrets)
    assert built is not None and built.rider is not None and built.either is not None
    lines = clean_lines(rng, rng.randrange(200, 3000)).splitlines()
    for _ in range(hits):
        lines.insert(rng.randrange(len(lines) + 1), _line(rng, rng.choice(secrets)))
    block = ("\n".join(lines) + "\n").encode()
    words: list[int] = []
    labels: list[int] = []
    places: list[int] = []
    riding = [(PAIR_RIDER, words), (LABEL_RIDER, labels), (built.rider, places)]
    assert list(SCANNER.finds(block, 0, riding)) == list(ALONE.finds(block, 0))
    text = Canonical(block, 0)
    assert places == [text.origin(j) for j, _ in built.either.finds(text.text)]
    first = _LABEL_AT(block, 0, len(block))[0][0]
    assert labels == ([first] if first >= 0 else [])
    given_places = list(built.spans(block, 0, places=places, labels=labels))
    assert given_places == list(built.spans(block, 0))


def test_a_node_with_few_secrets_rides_and_with_many_reads_the_canonical_text() -> None:
    few = Disguises.build(SECRETS)
    rng = random.Random(3)
    many = Disguises.build(
        "".join(rng.choice("abcdefghijkLMNOPQRSTUV0123456789") for _ in range(36))
        for _ in range(16)
    )
    assert few is not None and few.either is not None and few.rider is not None
    assert len(few.either.tags) <= MOST_RIDING
    assert many is not None and many.either is not None and many.rider is None
    assert len(many.either.tags) > MOST_RIDING


def test_a_block_is_read_the_same_with_the_riders_and_without() -> None:
    """The engine (which rides when the prefilter reads the block) against the same facts
    with no prefilter (no table pass over the block first: each search of its own)."""
    rng = random.Random(11)
    lines = clean_lines(rng, 60_000).splitlines()
    for _ in range(200):
        lines.insert(rng.randrange(len(lines) + 1), _line(rng, rng.choice(SECRETS)))
    block = ("\n".join(lines) + "\n").encode()
    facts = MachineFacts(secrets=SECRETS)
    riding = Engine(facts).scan(block).spans
    alone = Engine(facts, prefilter=False).scan(block).spans
    assert riding == alone
    assert sum(1 for span in riding if span[2] == Kind.OWN_SECRET) >= 150


# Secrets of the shapes a node holds and of the odd ones: token-shaped ones (whose pieces
# are looked for too) with runs of marks (``-----x`` is one canonical character), and ones
# with blanks and characters past ASCII.
_SECRETS = st.one_of(
    st.text("aZx9_-.:/+=%&# é", min_size=12, max_size=40),
    st.text("aZx9_-./+=", min_size=12, max_size=40),
    st.lists(st.sampled_from(["-----x", "Ab3dE5", "....e.", "Zq9", "-", "7"]), min_size=3).map(
        "".join
    ),
)


@settings(max_examples=200, deadline=None)
@given(secret=_SECRETS, seed=st.integers(0, 2**32))
def test_a_rider_refuses_exactly_where_its_pattern_does_not_match(secret: str, seed: int) -> None:
    """For any secret that rides: each place the pass hits with a rider's first byte is
    taken by the rider exactly where its pattern matches there, and the places found are
    the canonical search's."""
    built = Disguises.build((secret,))
    if built is None or built.rider is None or built.either is None:
        return
    rng = random.Random(seed)
    pieces = [_forms(secret, rng) for _ in range(6)] + clean_lines(rng, 400).split()
    rng.shuffle(pieces)
    block = " ".join(pieces).encode()
    rider = built.rider
    whole = re2.compile(rider.pattern, _LATIN1)
    for at in range(len(block)):
        if block[at] in rider.first:
            matched = whole.match(block, at) is not None
            assert rider.at(block, at) == matched, (block[at : at + 12], matched)
    places: list[int] = []
    assert list(SCANNER.finds(block, 0, [(rider, places)])) == list(ALONE.finds(block, 0))
    text = Canonical(block, 0)
    assert places == [text.origin(j) for j, _ in built.either.finds(text.text)]
