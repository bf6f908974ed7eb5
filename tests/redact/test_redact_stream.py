"""Properties: no planted secret survives, whatever the chunking; clean text is untouched."""

from __future__ import annotations

import itertools
import string

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from redact_samples import FACTS, MAKERS

from relay.redact import Redactor

OVERLAP = 256  # small windows, so that cuts fall everywhere; every sample line is shorter
REDACTOR = Redactor(FACTS, block_size=2 * OVERLAP, max_redacted_share=1.0)
FILLER = st.text(alphabet=string.ascii_letters + string.digits + " .,;:-_/=()\n", max_size=400)
LEFT = st.sampled_from(["\n", " ", " (", "\t[", ' "', " '", " <", "\n  "])
RIGHT = st.sampled_from(["\n", " ", ") ", "] ", '" ', "' ", "> ", ", "])
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def planted(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    """Random text with secrets of random formats at random places; what must vanish."""
    parts: list[str] = [draw(FILLER)]
    secrets: list[str] = []
    for name in draw(st.lists(st.sampled_from(sorted(MAKERS)), min_size=1, max_size=6)):
        text, must_vanish = MAKERS[name](draw(st.binary(min_size=8, max_size=8)))
        parts += [draw(LEFT), text, draw(RIGHT), draw(FILLER)]
        secrets += must_vanish
    return "".join(parts).encode(), secrets


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` split at the given offsets (taken modulo its length)."""
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def run(chunks: list[bytes], flushes: list[bool]) -> str:
    stream = REDACTOR.open(overlap=OVERLAP)
    out = []
    for chunk, flush in zip(chunks, flushes + [False] * len(chunks), strict=False):
        out.append(stream.feed(chunk))
        if flush:
            out.append(stream.flush())
    out.append(stream.finish())
    return "".join(out)


@SETTINGS
@given(planted(), st.lists(st.integers(min_value=0), max_size=20), st.lists(st.booleans()))
def test_no_secret_survives_any_chunking(
    case: tuple[bytes, list[str]], cuts: list[int], flushes: list[bool]
) -> None:
    data, secrets = case
    out = run(chunked(data, cuts), flushes)
    for secret in secrets:
        assert secret not in out


# Found by the test below: a stray quote after a value (``"…""``) read the value on over the
# next lines' text, joined into one line here, whose ``registry.example.org`` made it look
# like a template's and kept it (not a window's cut: a whole text did the same).
DOUBLED_QUOTE = (
    b'\n"password": "NVIXuQdGnGRwttUp"" \n'
    b"docker login -u ci -p OSEA3eUzT6jxjMhC7b80Wmf7 registry.example.org\n",
    ["NVIXuQdGnGRwttUp", "OSEA3eUzT6jxjMhC7b80Wmf7"],
)


@SETTINGS
@given(planted(), st.integers(min_value=3 * OVERLAP, max_value=6 * OVERLAP))
@example(DOUBLED_QUOTE, 3 * OVERLAP)
def test_secrets_on_one_huge_line_are_caught(case: tuple[bytes, list[str]], pad: int) -> None:
    """No line end for many windows: the stream must cut inside the line, safely."""
    data, secrets = case
    flat = data.replace(b"\n", b" ; ")  # "; " ends a "key: value" as a line end would
    out = run(chunked(b"x " * (pad // 2) + flat + b" y" * pad, [pad, pad + 7, 5 * pad]), [])
    for secret in secrets:
        if "\n" not in secret:
            assert secret not in out


@SETTINGS
@given(st.lists(st.sampled_from(sorted(MAKERS)), min_size=1, max_size=4), st.data())
def test_chunking_does_not_change_the_output(names: list[str], data: st.DataObject) -> None:
    text = "\n".join(MAKERS[n](n.encode() * 2)[0] for n in names) + "\n"
    whole = REDACTOR.redact(text)
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(text)), max_size=30))
    assert run(chunked(text.encode(), cuts), []) == whole


HEX = "0123456789abcdef"
# Words that make what follows them a secret ("bearer <hex>"): not part of plain text.
SECRET_WORDS = ("bearer", "token", "secret", "pass", "pwd", "key", "auth", "cookie", "credential")
CLEAN_WORDS = (
    *("build", "passed", "failed", "warning", "compiling", "linking", "src/main.c:12:4:"),
    *("tests/test_api.py::test_x", "PASSED", "FAILED", "[", "45%]", "error:", "note:"),
    *("make[2]:", "npm", "WARN", "ok", "in", "3.2s", "at", "Object.<anonymous>"),
    *("/usr/lib/python3.11/site-packages/app/core.py", "/srv/ci/build/out.o", "std::vector<int>"),
    *("Foo::bar()", "-Wall", "-O2", "--verbose", "key=value", "count=3", "ratio=0.75"),
)


# Four-part versions the way build logs print them; none may become <ip>.
PRODUCTS = ("firefox", "cmake", ".NET SDK", "libfoo", "setuptools>=", "foo-", "pkg==", "Firefox/")


@st.composite
def four_part_version(draw: st.DrawFn) -> str:
    product = draw(st.sampled_from(PRODUCTS))
    parts = draw(st.lists(st.integers(min_value=0, max_value=255), min_size=4, max_size=4))
    if parts[0] in (10, 100, 169, 172, 192):
        parts[0] += 1  # private ranges are addresses whatever precedes them (see network)
    gap = "" if product[-1] in "=-/" else " "
    return product + gap + ".".join(map(str, parts))


@st.composite
def clean_token(draw: st.DrawFn) -> str:
    kind = draw(st.integers(min_value=0, max_value=8))
    n = draw(st.integers(min_value=0, max_value=99))
    if kind == 8:
        return draw(four_part_version())
    if kind == 0:
        return draw(st.sampled_from(CLEAN_WORDS))
    if kind == 1:
        return "".join(draw(st.lists(st.sampled_from(HEX), min_size=40, max_size=40)))
    if kind == 2:
        h = "".join(draw(st.lists(st.sampled_from(HEX), min_size=32, max_size=32)))
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    if kind == 3:
        return f"v{n}.{n % 7}.{n % 3}" if n % 2 else f"{n}.{n % 7}.{n % 5}-rc{n % 4}"
    if kind == 4:
        return f"version {n}.{n % 9}.{n % 5}.{n % 3}"
    if kind == 5:
        return f"2026-11-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:{n % 60:02d}.{n:03d}Z"
    if kind == 6:
        return f"python3.{n % 13} /opt/app/lib{n}/mod.py:{n}"
    word = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8)
    return draw(word.filter(lambda w: not any(k in w for k in SECRET_WORDS)))


@SETTINGS
@given(st.lists(st.tuples(clean_token(), st.sampled_from([" ", "\n", ", ", "\t"])), max_size=80))
def test_clean_text_comes_through_unchanged(pieces: list[tuple[str, str]]) -> None:
    text = "".join(a + b for a, b in pieces)
    assert REDACTOR.redact(text) == text


def test_stream_api_yields_pieces_and_a_final_report() -> None:
    token = "ghp_" + "Zq7" * 12
    chunks: list[bytes | str] = [
        b"start\n",
        f"use {token[:10]}".encode(),
        f"{token[10:]} now\n".encode(),
        "é\n",
    ]
    stream = Redactor(FACTS).stream(chunks)
    assert "".join(stream) == "start\nuse [redacted:github-token] now\né\n"
    assert stream.report.counts == {"github-token": 1}
    assert stream.report.bytes_in == sum(
        len(c.encode() if isinstance(c, str) else c) for c in chunks
    )


def test_the_bytes_a_stream_gives_are_its_text_encoded_and_counted_alike() -> None:
    """``feed_bytes`` and ``finish_bytes`` (what ``relay redact`` writes) give the text that
    ``feed`` and ``finish`` give, as UTF-8, with the same report: an ASCII window passed on
    as it is; characters split by a window's cut (a line longer than a window is cut
    inside it) and bytes that are no UTF-8 at all read by the decoder as text."""
    cut = OVERLAP  # a long line is cut inside it, about here
    lines = [
        b"plain ascii line\n",
        "caf\u00e9 \u2603 ok\n".encode(),
        b"\xff\xfe not utf-8\n",
        b"token=ghp_" + b"a1B2c3D4" * 5 + b"\n",
        b"a" * cut + "\u00e9".encode() * cut + b"\n",  # characters over a cut
    ]
    for size in (1 << 20, 4096, 7):
        data = b"".join(lines)
        as_text, as_bytes = REDACTOR.open(), REDACTOR.open()
        text, raw = [], []
        for at in range(0, len(data), size):
            text += [as_text.feed(data[at : at + size]), as_text.flush()]
            raw += [as_bytes.feed_bytes(data[at : at + size]), as_bytes.flush_bytes()]
        text.append(as_text.finish())
        raw.append(as_bytes.finish_bytes())
        assert b"".join(raw) == "".join(text).encode(), size
        assert as_bytes.tally == as_text.tally


def test_ascii_after_half_a_character_goes_through_the_decoder() -> None:
    """Text cut after a character's lead byte (a window cut inside a long line): the ASCII
    that comes next is decoded after it, as ``feed`` decodes it (the lead byte becomes a
    replacement character there, not at the end of the text)."""
    as_text, as_bytes = REDACTOR.open(), REDACTOR.open()
    pieces = [b"abc\xc3", b"xyz\n", b"more\n"]
    text = "".join(as_text._decode(p, final=False) for p in pieces)
    raw = b"".join(as_bytes._encoded(p, final=False) for p in pieces)
    assert raw == text.encode() == "abc\ufffdxyz\nmore\n".encode()
    assert as_bytes.tally == as_text.tally
