"""A YAML block scalar printed in a log whose every line has a prefix (a GitHub Actions raw
log's timestamp, docker compose's ``web_1  | ``, ``kubectl logs --prefix``'s bracket): its
lines are indented after the prefix. What is masked, what is kept, with and without the
prefilter, across a stream's windows and at a parallel piece's cut."""

from __future__ import annotations

import pytest
from redact_samples import FACTS, redacted

from relay.redact import Redactor
from relay.redact.engine import Engine, replace
from relay.redact.parallel import cut_at

V1 = "Xk9mP2vL8qR5wT7zAbQ3"
V2 = "Zq8nR4tY6uI2oP0aSd5F"
_FILL = "".join(
    f"[{i:04d}] Compiling module_{i} ... done in {i % 7}.{i % 10}s\n" for i in range(60)
)
WITH = Engine(FACTS)
WITHOUT = Engine(FACTS, prefilter=False)
TS = "2026-01-02T10:00:00.123456{}Z "


def _both(text: str) -> str:
    """The text redacted with and without the prefilter, which must agree."""
    data = (_FILL + text + _FILL).encode()
    with_, without = (replace(data, e.scan(data).spans).decode() for e in (WITH, WITHOUT))
    assert with_ == without
    assert with_.count("\n") == data.count(b"\n")
    return with_[len(_FILL) : len(with_) - len(_FILL)]


@pytest.mark.parametrize(
    "text",
    [
        f"{TS.format(1)}password: |\n{TS.format(2)}  {V1}\n{TS.format(3)}  {V2}\n"
        f"{TS.format(4)}next: 1\n",
        # blank lines after the prefix (with its blank, or without) inside the block
        f"web_1  | password: |\nweb_1  | \nweb_1  |   {V1}\nweb_1  |\nweb_1  |   {V2}\n"
        "web_1  | done\n",
        f"[pod/api-7d9f/app] token: >-\n[pod/api-7d9f/app]   {V1}\n[pod/api-7d9f/app]   {V2}\n"
        "[pod/api-7d9f/app] ready\n",
        # a source and a timestamp (``docker compose logs -t``); an offset, not ``Z``
        f"web-1  | 2026-01-02T10:00:00+02:00 db_password: |\n"
        f"web-1  | 2026-01-02T10:00:01+02:00   {V1}\nweb-1  | 2026-01-02T10:00:02+02:00   {V2}\n"
        "web-1  | 2026-01-02T10:00:03+02:00 listening\n",
        # nested under a key, with an indentation indicator
        f"{TS.format(1)}db:\n{TS.format(2)}  password: |2\n{TS.format(3)}      {V1}\n"
        f"{TS.format(4)}    {V2}\n{TS.format(5)}  user: ci\n",
    ],
)
def test_a_block_under_a_logs_prefix_is_masked_whole(text: str) -> None:
    out = _both(text)
    assert V1 not in out and V2 not in out
    assert out.splitlines()[0] == text.splitlines()[0]  # the header is kept
    assert out.splitlines()[-1] == text.splitlines()[-1]  # and the line after the block


@pytest.mark.parametrize(
    "text",
    [
        # a shell pipe, a table, a redirection: no key with a block indicator
        f"{TS.format(1)}cat secrets.txt |\n{TS.format(2)}  {V1}\n",
        f"web_1  | | name | value |\nweb_1  |   {V1} |\n",
        f"[pod/api-7d9f/app] echo done >\n[pod/api-7d9f/app]   {V1}\n",
        # a block whose name is no secret's
        f"{TS.format(1)}steps: |\n{TS.format(2)}  {V1}\n",
        # the value a reference
        f"{TS.format(1)}password: |\n{TS.format(2)}  ${{DB_PASSWORD}}\n",
        # the next lines no deeper than the key after the prefix
        f"{TS.format(1)}  password: |\n{TS.format(2)}  {V1}\n",
    ],
)
def test_prefixed_lines_that_are_no_block_are_kept(text: str) -> None:
    assert _both(text) == text


def test_the_block_ends_where_its_lines_stop_having_the_prefix() -> None:
    """Another source's line, a line without a prefix: the block is over (the header's
    prefix with plain indented lines below it is a block as it always was)."""
    out = _both(f"web_1  | password: |\nweb_1  |   {V1}\ndb_1   |   {V2}\n")
    assert V1 not in out and V2 in out
    out = _both(f"{TS.format(1)}password: |\n{TS.format(2)}  {V1}\n  {V2}\nplain line\n")
    assert V1 not in out and V2 in out and out.endswith("plain line\n")
    out = _both(f"[INFO] password: |\n  {V1}\n  {V2}\n[INFO] done\n")
    assert V1 not in out and V2 not in out and out.endswith("[INFO] done\n")


def _streamed(data: bytes, *, block_size: int, step: int) -> str:
    stream = Redactor(block_size=block_size, max_redacted_share=1.0).open(overlap=128)
    out = [stream.feed(data[at : at + step]) for at in range(0, len(data), step)]
    out.append(stream.finish())
    return "".join(out)


@pytest.mark.parametrize("step", [1, 13, 200, 4096])
@pytest.mark.parametrize("lines", [3, 60])
def test_a_prefixed_block_across_a_streams_windows(step: int, lines: int) -> None:
    """Windows of 512 bytes end inside the block's lines (inside a timestamp too): what
    the next window holds of it is dropped, as a whole log's redaction drops it."""
    body = "".join(f"{TS.format(i % 10)}  {V1[: 8 + i % 12]}TAILWORD{i}\n" for i in range(lines))
    text = f"{TS.format(0)}a: 1\n{TS.format(0)}password: |\n{body}{TS.format(9)}b: 2\n"
    data = (_FILL + text).encode()
    whole = Redactor(max_redacted_share=1.0).redact(data)
    assert "TAILWORD" not in whole and whole.endswith("b: 2\n")
    assert _streamed(data, block_size=512, step=step) == whole


def test_a_parallel_piece_does_not_start_inside_a_prefixed_block() -> None:
    """A piece starts at a line that opens with text: after a log's prefix too."""
    block = f"{TS.format(1)}password: |\n" + f"{TS.format(2)}  {V1}\n" * 40
    region = (block + f"{TS.format(3)}done\n").encode()
    cut = cut_at(region, 10)
    assert cut == region.rindex(b"\n", 0, len(region) - 1) + 1
    assert redacted(_FILL + block).count(V1) == 0


@pytest.mark.parametrize("prefix", ["web_1  |", TS.format(1).rstrip(), "[pod/api-7d9f/app]"])
@pytest.mark.parametrize("blank", ["", " "])
def test_a_parallel_piece_does_not_start_at_a_line_of_the_prefix_alone(
    prefix: str, blank: str
) -> None:
    """A line that holds only the log's prefix (its blank lost, or kept) goes on the block
    for the engine, as a blank line: no piece starts there either."""
    block = f"{prefix} password: |\n" + f"{prefix}   {V1}\n" * 20
    rest = f"{prefix}   correct horse battery staple\n{prefix}   tumble oxidize parlor\n"
    region = f"{block}{prefix}{blank}\n{rest}{prefix} next: 1\n".encode()
    cut = cut_at(region, len(block))
    assert cut == region.rindex(b"\n", 0, len(region) - 1) + 1
    whole = redacted(_FILL + block + f"{prefix}{blank}\n" + rest)
    assert "correct horse" not in whole and "tumble" not in whole


@pytest.mark.parametrize("prefix", ["web_1  | ", TS.format(1), "[pod/api-7d9f/app] ", ""])
def test_a_window_edge_at_every_byte_of_a_blocks_first_lines(prefix: str) -> None:
    """One value line of words is no secret, several are: a window that ends after the
    header and its first value line (or inside the prefix or the indentation of the
    second) is cut before the header, so the next window reads the block whole."""
    lines = ["password: |", "  first line of it", "  second line here", "  correct horse"]
    block = "".join(f"{prefix}{line}\n" for line in lines)
    size = 1024
    for shift in range(len(block) + 1):
        fill = "".join(f"{prefix}[{i:04d}] GET /health 200\n" for i in range(40))
        fill = fill[: fill.rindex("\n", 0, size - shift - 60) + 1]
        fill += "x" * (size - shift - len(fill) - 1) + "\n"
        data = (fill + block + f"{prefix}next: 1\n" + fill).encode()
        whole = Redactor(max_redacted_share=1.0).redact(data)
        assert "first line" not in whole and "correct horse" not in whole
        for step in (size, 7):
            assert _streamed(data, block_size=size, step=step) == whole, (shift, step)
