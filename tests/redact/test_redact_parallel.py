"""A large file redacted in pieces on several processes says exactly what one stream says.

The pieces start at line starts outside key blocks (``cut_at``, pure), each stream reads
the bytes before its piece as context, and the pool is real: processes of their own,
each with a redactor built from the recipe.
"""

from __future__ import annotations

import base64
import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from format_samples import clean_lines
from redact_samples import FACTS, OWN_SECRET, key_block

from relay.redact import MachineFacts, RedactionReport, Redactor
from relay.redact.parallel import MIN_PARALLEL, PIECE, cut_at, plan, redact_file
from relay.redact.stream import Tally

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "ghp_" + "Zq7" * 12
KEY = key_block(b"split", "RSA PRIVATE KEY")


def test_a_cut_is_the_next_line_start() -> None:
    region = b"one\ntwo three\nfour\n"
    assert cut_at(region, 0) == 4
    assert cut_at(region, 4) == 4  # already a line start
    assert cut_at(region, 6) == 14
    assert cut_at(b"no line end in sight", 3) is None


def test_a_cut_never_falls_inside_an_indented_block() -> None:
    """A YAML block scalar's lines are indented, blank lines among them: a piece may start
    only at a line that opens with a character."""
    region = b"token: |\n  abc\n\n  def\nnext: 1\n"
    assert cut_at(region, 9) == region.index(b"next")
    assert cut_at(b"a\n  b\n\n  c\n", 1) is None
    table = b"intro\n| Token | Scope |\n|---|---|\n| a | b |\nafter\n"
    assert cut_at(table, 6) == table.index(b"after")  # never between a header and its rule


def test_a_cut_never_falls_inside_a_key_block() -> None:
    region = f"before\n{KEY}\nafter\nmore\n".encode()
    inside = region.index(b"\n", region.index(b"BEGIN")) + 5
    after = region.index(b"after")
    assert cut_at(region, inside) == after  # past the END line
    assert cut_at(region, after) == after
    unfinished = f"before\n{KEY.rsplit(chr(10), 1)[0]}\n".encode()
    assert cut_at(unfinished, len(b"before\n") + 40) is None  # its END is not in the region


def test_the_pieces_cover_the_file_and_start_at_lines() -> None:
    rng = random.Random(3)
    data = clean_lines(rng, 400_000).encode()
    pieces = plan(lambda at, n: data[at : at + n], len(data), piece=50_000)
    assert pieces[0][0] == 0 and pieces[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(pieces))
    assert len(pieces) > 4
    assert all(data[start - 1 : start] == b"\n" for start, _ in pieces[1:])


class BothWays(NamedTuple):
    """One text redacted in pieces on a pool of two, and by one stream."""

    pool: str
    stream: str
    tally: Tally
    report: RedactionReport
    pieces: int  # how many pieces the pool wrote


def _both_ways(tmp_path: Path, redactor: Redactor, text: str, **options: Any) -> BothWays:
    """``text`` written to a file, redacted by a pool (``options`` to ``redact_file``) and
    by one stream."""
    path = tmp_path / "big.log"
    path.write_text(text)
    whole = redactor.open()
    expected = whole.feed(text) + whole.finish()
    written: list[bytes] = []
    size = path.stat().st_size
    tally = redact_file(redactor, str(path), size, written.append, jobs=2, **options)
    return BothWays(b"".join(written).decode(), expected, tally, whole.report, len(written))


def _log(rng: random.Random, size: int) -> tuple[str, list[str]]:
    """A log with secrets everywhere, key blocks and named values among them."""
    parts, secrets = [], []
    while sum(map(len, parts)) < size:
        parts.append(clean_lines(rng, rng.randrange(200, 6000)))
        value = "".join(rng.choice("abcdefXYZ0123456789") for _ in range(24))
        pick = rng.randrange(5)
        if pick == 0:
            parts.append(KEY + "\n")
            secrets.append(KEY.split("\n")[3])
        elif pick == 1:
            parts.append(f"export API_TOKEN={value}\n")
            secrets.append(value)
        elif pick == 2:
            parts.append(f"using {TOKEN} at {value}\n")
            secrets.append(TOKEN)
        elif pick == 3:
            parts.append(f"echo {OWN_SECRET}\n")
            secrets.append(OWN_SECRET)
        else:  # a block scalar longer than the stream's context, blank lines in it
            lines = [f"  {value}{i:03d}" + "\n" * (1 + (i % 7 == 0)) for i in range(80)]
            parts.append("password: |\n" + "".join(lines) + "done: true\n")
            secrets += [f"{value}{i:03d}" for i in range(80)]
    return "".join(parts), secrets


@pytest.mark.parametrize(("piece", "method"), [(20_000, "fork"), (65_536, "spawn")])
def test_pieces_on_a_pool_say_what_one_stream_says(tmp_path: Path, piece: int, method: str) -> None:
    """Forked processes reuse the parent's redactor; spawned ones (macOS and Windows by
    default) build theirs from the recipe: both say what one stream says."""
    rng = random.Random(piece)
    text, secrets = _log(rng, 600_000)
    run = _both_ways(tmp_path, Redactor(FACTS), text, piece=piece, method=method)
    assert run.pieces > 5  # it did go in pieces
    assert run.pool == run.stream
    assert run.tally.report(0.25) == run.report
    assert not [s for s in secrets if s in run.stream]


def test_relay_redact_uses_every_core_on_a_large_file(tmp_path: Path) -> None:
    """`relay redact -j 2` on a file past the threshold: the same bytes as `-j 1`, and a
    key block laid across the first planned cut is redacted whole."""
    rng = random.Random(11)
    text, secrets = _log(rng, 200_000)
    filler = clean_lines(rng, 1 << 20)
    body = text
    while len(body) < MIN_PARALLEL + (1 << 20):
        body += filler
    cut = PIECE  # the first planned cut
    line = body.rfind("\n", 0, cut - 200) + 1
    body = body[:line] + KEY + "\n" + body[line:]
    path = tmp_path / "big.log"
    path.write_text(body)
    # this node's own secret, as relay learns it: a secret-named variable's value
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "DEPLOY_TOKEN": OWN_SECRET}
    runs = {}
    for jobs in ("1", "2"):
        command = [sys.executable, "-m", "relay.cli", "redact", "-j", jobs, "--report", str(path)]
        done = subprocess.run(
            command, capture_output=True, env=env, timeout=300, check=False, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        runs[jobs] = done
    assert runs["1"].stdout == runs["2"].stdout
    assert runs["1"].stderr == runs["2"].stderr  # the same counts and verdict
    out = runs["2"].stdout.decode()
    assert all(chunk not in out for chunk in KEY.split("\n")[1:-1])
    # the secrets are all in the log at the top (the filler after it holds none): looked for
    # there, not in every megabyte (a search of the whole output per secret took 20 s)
    assert len(out) > len(body) // 2
    assert not [s for s in secrets if s in out[: 2 * len(text)]]


def test_jobs_must_be_a_number_of_processes(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "relay.cli", "redact", "-j", "0", os.devnull]
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, env=env, timeout=60, check=False)
    assert done.returncode != 0
    assert b"--jobs" in done.stderr and b"number of processes" in done.stderr
    assert len(done.stderr.decode().strip().splitlines()) == 1


def _pgp_block(lines: int) -> str:
    """A PGP private key block of ``lines`` base64 lines (about 65 bytes each)."""
    rng = random.Random(lines)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    body = ["".join(rng.choice(alphabet) for _ in range(64)) for _ in range(lines)]
    head, tail = "-----BEGIN PGP PRIVATE KEY BLOCK-----", "-----END PGP PRIVATE KEY BLOCK-----"
    return "\n".join([head, "", *body, "=Ab3d", tail]) + "\n"


def test_a_key_block_longer_than_the_look_around_is_read_from_inside(tmp_path: Path) -> None:
    """A key of 200 KB over a cut: ``cut_at`` cannot see its BEGIN line, so the piece
    after it is redacted again from inside the key, as one stream reads it."""
    rng = random.Random(8)
    key = _pgp_block(3000)
    text = clean_lines(rng, 150_000) + key + clean_lines(rng, 300_000)
    run = _both_ways(tmp_path, Redactor(FACTS), text, piece=100_000)
    assert run.pool == run.stream
    assert not [line for line in key.splitlines()[2:-2] if line in run.pool]


def test_a_multi_line_own_secret_is_never_cut_in_two(tmp_path: Path) -> None:
    """This node's secret may hold line breaks (a credentials file in a variable): no
    piece boundary, and no window of a stream flushed line by line, falls inside it."""
    rng = random.Random(9)
    lines = ["".join(rng.choice("ABCDEFabcdef0123456789") for _ in range(64)) for _ in range(40)]
    secret = "\n".join(lines)
    facts = MachineFacts(secrets=(secret,))
    redactor = Redactor(facts)
    text = "".join(
        clean_lines(rng, rng.randrange(1000, 30_000)) + f"creds: {secret}\n" for _ in range(20)
    )
    run = _both_ways(tmp_path, redactor, text, piece=20_000)
    assert not [line for line in lines if line in run.stream]
    assert run.pool == run.stream
    data = text.encode()
    for step in (700, 4096):  # a pipe's small reads, each flushed as it comes
        stream = redactor.open()
        pieces = []
        for at in range(0, len(data), step):
            pieces += [stream.feed(data[at : at + step]), stream.flush()]
        out = "".join(pieces) + stream.finish()
        assert not [line for line in lines if line in out], step


def _disguised(rng: random.Random, secret: str) -> tuple[str, str]:
    """The secret folded one character per line, or wrapped as base64 at some offset in a
    longer blob; and what must not survive of it (whitespace taken out)."""
    if rng.random() < 0.5:
        return "\n".join(secret), secret
    before = rng.randrange(3)
    blob = base64.b64encode(b"\0" * before + secret.encode()).decode()
    body = blob[(8 * before + 5) // 6 : 8 * (before + len(secret)) // 6]
    width = rng.choice((5, 9, 13))
    return "\n".join(blob[i : i + width] for i in range(0, len(blob), width)), body


def test_a_disguised_own_secret_is_never_cut_in_two(tmp_path: Path) -> None:
    """Folded or wrapped, this node's secret crosses lines: no piece boundary, and no window
    of a stream flushed as a pipe's reads come, falls inside it."""
    rng = random.Random(10)
    secret = "rly.Zq7Tk9Lm2Xw4Rb8Vn1Cd5"
    redactor = Redactor(MachineFacts(secrets=(secret,)))
    parts, gone = [], []
    for _ in range(60):
        shown, core = _disguised(rng, secret)
        parts += [clean_lines(rng, rng.randrange(20, 300)), f"{shown}\n"]
        gone.append(core)
    text = "".join(parts)
    data = text.encode()
    # Cut by lines alone, some pieces would start inside a secret: the test can fail.
    finds = list(redactor.disguises.spans(data)) if redactor.disguises else []
    by_lines = plan(lambda at, n: data[at : at + n], len(data), 500)
    assert [c for c, _ in by_lines if any(s < c < e for s, e, _ in finds)]
    run = _both_ways(tmp_path, redactor, text, piece=500)
    assert run.pieces > 20
    assert run.pool == run.stream
    flat = "".join(run.stream.split())
    assert not [core for core in gone if core in flat]
    for step in (3, 700, 4096):  # a pipe's small reads, each flushed as it comes
        stream = redactor.open()
        pieces = []
        for at in range(0, len(data), step):
            pieces += [stream.feed(data[at : at + step]), stream.flush()]
        assert "".join(pieces) + stream.finish() == run.stream, step


def test_a_cut_never_falls_inside_a_folded_own_secret() -> None:
    secret = "rly.Zq7Tk9Lm2Xw4Rb8Vn1Cd5"
    disguises = Redactor(MachineFacts(secrets=(secret,))).disguises
    region = ("one\n" + "\n".join(secret) + "\nafter\n" + "x\n" * 1000).encode()
    inside = region.index(b"\n", 10) + 1
    assert cut_at(region, inside) == inside  # a line start, as far as lines go
    assert cut_at(region, inside, (), disguises) == region.index(b"after")
    assert cut_at(region[:200], inside, (), disguises) is None  # the match may go on past it


def test_a_multi_line_own_secret_is_masked_line_by_line_too() -> None:
    """A downloaded Actions log prefixes every line with a time, and Windows ends lines
    with CRLF: each line of a multi-line secret is masked on its own, as the runner does."""
    lines = ["MIIEvAIBADANBgkqhkiG9w0BAQEFAASC", "pkcs8BodyLineTwoWithEnoughChars", "{"]
    redactor = Redactor(MachineFacts(secrets=("\n".join(lines),)))
    stamped = "".join(f"2024-01-01T00:00:00.1234567Z {line}\n" for line in lines)
    out = redactor.redact(stamped)
    assert lines[0] not in out and lines[1] not in out
    assert out.endswith("Z {\n")  # too short a line to mask: ordinary text has it
    crlf = redactor.redact("\r\n".join(lines) + "\r\n")
    assert crlf.startswith("[redacted:own-secret]") and crlf.count("\n") == 3  # lines kept
    assert lines[0] not in crlf and lines[1] not in crlf


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the pool in /proc")
def test_a_pool_process_that_dies_is_an_error_not_a_hang(tmp_path: Path) -> None:
    """The kernel may kill a pool process (out of memory): `relay redact -j 2` says so in
    one line and exits non-zero, instead of waiting for its piece for ever."""
    rng = random.Random(12)
    line = clean_lines(rng, 1 << 20)
    path = tmp_path / "big.log"
    path.write_text(line * 60)
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "relay.cli", "redact", "-j", "2", str(path)]
    with subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tmp_path
    ) as run:
        workers: list[int] = []
        deadline = time.monotonic() + 60
        while not workers and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
            workers = [pid for pid in _children(run.pid)]
        assert workers, "the pool never started"
        os.kill(workers[0], signal.SIGKILL)
        _, err = run.communicate(timeout=120)
    assert run.returncode != 0
    message = err.decode().strip()
    assert "ended before its piece was done" in message and len(message.splitlines()) == 1


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux's /proc)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path("/proc", name, "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if stat[1] == str(pid):
                out.append(int(name))
    return out


def test_the_warming_sample_is_whole_lines_from_across_the_file(tmp_path: Path) -> None:
    """The parent builds the automata on lines from the whole file, never on half a line."""
    from relay.redact.parallel import _SAMPLE, _sample

    lines = [f"line {n:07d} of the log\n".encode() for n in range(400_000)]
    path = tmp_path / "big.log"
    path.write_bytes(b"".join(lines))
    fd = os.open(path, os.O_RDONLY)
    try:
        sample = _sample(fd, path.stat().st_size)
    finally:
        os.close(fd)
    assert 0 < len(sample) <= _SAMPLE
    kept = sample.splitlines(keepends=True)
    every = set(lines)
    assert all(line in every for line in kept)
    numbers = [int(line.split()[1]) for line in kept]
    assert numbers[0] < 10_000 and numbers[-1] > 390_000  # the start and the end both
    tiny = tmp_path / "tiny.log"
    tiny.write_bytes(b"no line end")
    fd = os.open(tiny, os.O_RDONLY)
    try:
        assert _sample(fd, tiny.stat().st_size) == b""
    finally:
        os.close(fd)
