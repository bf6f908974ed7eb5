"""Every parser a pass runs on what anyone can write, fed garbage: it answers with data or
a RemoteProtocolError (the master section: an error its people can act on), nothing else.
A small size here; `make bench` runs 10,000 examples a parser (bench/bench_fuzz.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relay.protocol.fuzz_targets import ALLOWED, TARGETS, garbage_kinds

GARBAGE = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(garbage_kinds()) | st.text(max_size=8), max_size=30).map("".join),
)


@pytest.mark.parametrize("name", sorted(TARGETS))
@settings(max_examples=150, deadline=None)
@given(text=GARBAGE)
def test_garbage_gives_data_or_a_protocol_error(name: str, text: str) -> None:
    try:
        TARGETS[name](text)
    except ALLOWED[name]:
        pass
