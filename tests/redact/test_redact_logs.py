"""The data plane's pure half: capped logs, excerpts, fences."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from relay.protocol.logs import cap_log, clean_line, excerpt, first_error
from relay.protocol.wire import fenced


def numbered(n: int) -> str:
    return "".join(f"line {i}\n" for i in range(n))


def test_short_log_is_kept_whole() -> None:
    assert cap_log("a\nb\n", limit=100) == "a\nb\n"


def test_long_log_keeps_head_and_tail_and_says_what_was_cut() -> None:
    text = numbered(10_000)
    capped = cap_log(text, limit=2_000)
    assert len(capped) < 2_200
    assert capped.startswith("line 0\nline 1\n")
    assert capped.endswith("line 9999\n")
    marker = next(line for line in capped.splitlines() if "relay cut" in line)
    cut_lines = int(marker.split("cut ")[1].split(" lines")[0].replace(",", ""))
    kept = [line for line in capped.splitlines() if line.startswith("line ")]
    assert cut_lines + len(kept) == 10_000


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=3000), st.integers(min_value=200, max_value=5000))
def test_cap_never_exceeds_limit_by_more_than_a_marker(lines: int, limit: int) -> None:
    capped = cap_log(numbered(lines), limit=limit)
    assert len(capped) <= limit + 120
    assert capped == numbered(lines) or "relay cut" in capped


def test_excerpt_of_a_success_is_the_tail() -> None:
    assert excerpt(numbered(100) + "\n\n", failed=False) == [f"line {i}" for i in range(70, 100)]


def test_excerpt_of_a_failure_is_around_the_first_error() -> None:
    lines = [f"ok {i}" for i in range(200)]
    lines[120] = "src/x.c:3:1: error: expected ';'"
    lines[150] = "FAILED tests/test_x.py::test_y"
    picked = excerpt("\n".join(lines), failed=True)
    assert len(picked) == 30
    assert picked[8] == "src/x.c:3:1: error: expected ';'"
    assert first_error(lines) == 120


def test_failure_without_error_lines_falls_back_to_the_tail() -> None:
    assert excerpt(numbered(50), failed=True)[-1] == "line 49"


def test_lines_are_capped_and_cleaned() -> None:
    line = clean_line("\x1b[31mred\x1b[0m\tand " + "x" * 500, width=40)
    assert line.startswith("red    and x") and line.endswith("…") and len(line) == 40
    assert "<!--" not in clean_line("<!-- relay:message {} -->")


@given(st.text(alphabet="`~ a#<!->=\n\r", max_size=80))
def test_nothing_inside_the_fence_can_close_it_or_pass_for_a_block(text: str) -> None:
    block = fenced(text)
    lines = block.split("\n")
    fence = lines[0].removesuffix("text")
    assert set(fence) == {"`"} and len(fence) >= 3 and lines[-1] == fence
    closing = re.compile(rf"^ {{0,3}}`{{{len(fence)},}}[ \t]*$")  # CommonMark: as long, or more
    assert not any(closing.match(line) for line in lines[1:-1])
    assert "<!--" not in block and "-->" not in block
    # what is shown is the text as it is (markdown unescapes nothing in a fence), line for
    # line, only its comment delimiters broken
    shown = text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    shown = shown.replace("<!--", "<\\!--").replace("-->", "--\\>")
    assert lines[1:-1] == (shown.split("\n") if shown else [])
