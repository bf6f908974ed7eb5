"""This node's own secrets printed in disguise are masked: spaced, folded, reversed,
re-cased, rot13, wrapped base64, base32 or hex at any offset, ``\\uXXXX`` and ``%XX``.

Each case prints the secret in one transform, wraps it at a width and a starting column,
and puts it alone on a line or inside other log text. The output, with its whitespace
taken out, must be the text around the secret, the placeholder, and of the transformed
text only what does not encode the secret alone (the edge characters of a base64 or
base32 blob that also carry the neighbouring bytes).
"""

from __future__ import annotations

import base64
import codecs
import dataclasses
import json
import random
import re
import string
from collections.abc import Callable
from typing import NamedTuple

import pytest
from format_samples import clean_lines
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from relay.redact import MachineFacts, Redactor
from relay.redact.disguises import MAX_GAP, MIN_PIECE, Disguises, _too_wide, with_bodies
from relay.redact.literals import BORING_VALUES, LiteralScanner, build_literals

TOKEN = "rly.Zq7Tk9Lm2Xw4Rb8Vn1Cd5"
TRICKY = 'n0de/Own+se"cret=4a7f'
WIDE = "pässwörd-Æ9🔑xZ"  # past ASCII: cases of their own, a surrogate pair in JSON
PLACEHOLDER = "[redacted:own-secret]"


class Printed(NamedTuple):
    """A secret as a step printed it, and the part of it that must be masked."""

    text: str
    lo: int  # the masked part: text[lo:hi] (the secret's bits and nothing else)
    hi: int


def _blob(secret: str, before: int, after: int) -> bytes:
    """The secret's bytes inside a longer blob, ``before`` and ``after`` bytes around it."""
    rng = random.Random(before * 7 + after)
    return rng.randbytes(before) + secret.encode() + rng.randbytes(after)


def _b64(secret: str, before: int = 0, after: int = 0) -> Printed:
    text = base64.b64encode(_blob(secret, before, after)).decode()
    return Printed(text, -(-8 * before // 6), 8 * (before + len(secret.encode())) // 6)


def _b32(secret: str, before: int = 0, after: int = 0) -> Printed:
    text = base64.b32encode(_blob(secret, before, after)).decode()
    return Printed(text, -(-8 * before // 5), 8 * (before + len(secret.encode())) // 5)


def _hex(secret: str, before: int = 0, after: int = 0) -> Printed:
    text = _blob(secret, before, after).hex()
    return Printed(text, 2 * before, 2 * (before + len(secret.encode())))


def _utf16(text: str) -> list[int]:
    """The UTF-16 code units of ``text`` (a JSON ``\\u`` escape writes a surrogate pair)."""
    units = text.encode("utf-16-be")
    return [int.from_bytes(units[i : i + 2], "big") for i in range(0, len(units), 2)]


def _whole(transform: Callable[[str], str]) -> Callable[[str], Printed]:
    def printed(secret: str) -> Printed:
        text = transform(secret)
        return Printed(text, 0, len(text))

    return printed


TRANSFORMS: dict[str, Callable[[str], Printed]] = {
    "plain": _whole(lambda s: s),
    "reversed": _whole(lambda s: s[::-1]),
    "upper": _whole(str.upper),
    "lower": _whole(str.lower),
    "swapped-case": _whole(str.swapcase),
    "rot13": _whole(lambda s: codecs.encode(s, "rot13")),
    "reversed-upper": _whole(lambda s: s[::-1].upper()),
    "u-escapes": _whole(lambda s: "".join(f"\\u{u:04x}" for u in _utf16(s))),
    "u-escapes-upper": _whole(lambda s: "".join(f"\\u{u:04X}" for u in _utf16(s))),
    "percent-every-byte": _whole(lambda s: "".join(f"%{b:02X}" for b in s.encode())),
    "percent-every-byte-lower": _whole(lambda s: "".join(f"%{b:02x}" for b in s.encode())),
    "hex": lambda s: _hex(s),
    "hex-upper": lambda s: Printed(s.encode().hex().upper(), 0, 2 * len(s.encode())),
    "hex-in-a-dump": lambda s: _hex(s, 5, 9),
    "base64": lambda s: _b64(s),
    "base64-offset-1": lambda s: _b64(s, 1, 4),
    "base64-offset-2": lambda s: _b64(s, 2, 3),
    "base64-in-a-blob": lambda s: _b64(s, 31, 17),
    "base32": lambda s: _b32(s),
    "base32-offset-1": lambda s: _b32(s, 1, 2),
    "base32-offset-2": lambda s: _b32(s, 2, 5),
    "base32-offset-3": lambda s: _b32(s, 3, 1),
    "base32-offset-4": lambda s: _b32(s, 4, 4),
    "dotted": _whole(".".join),
    "dashed": _whole("-".join),
    "commas": _whole(",".join),
    "comma-spaced": _whole(", ".join),
    "pipes": _whole("|".join),
    "underscores": _whole("_".join),
    "slashes": _whole("/".join),
    "reversed-commas": _whole(lambda s: ",".join(s[::-1])),
    # the items of Python's and JSON's list of the characters (none needing an escape)
    "python-list": _whole(lambda s: "', '".join(s)),
    "json-list": _whole(lambda s: '", "'.join(s)),
    "hex-colons": _whole(lambda s: ":".join(f"{b:02x}" for b in s.encode())),
    "hex-escapes": _whole(lambda s: "".join(f"\\x{b:02x}" for b in s.encode())),
    "hex-escapes-upper": _whole(lambda s: "".join(f"\\x{b:02X}" for b in s.encode())),
    "hex-c-array": _whole(lambda s: ", ".join(f"0x{b:02x}" for b in s.encode())),
    "html-decimal": _whole(lambda s: "".join(f"&#{ord(c)};" for c in s)),
    "html-hex": _whole(lambda s: "".join(f"&#x{ord(c):x};" for c in s)),
    "base64-of-reversed": lambda s: _b64(s[::-1]),
    "base64-of-reversed-offset-2": lambda s: _b64(s[::-1], 2, 3),
}


def wrap(text: str, width: int, column: int = 0, sep: str = "\n") -> str:
    """``text`` in lines of ``width`` characters, the first starting at ``column``."""
    first = max(1, width - column)
    lines = [text[:first]] + [text[i : i + width] for i in range(first, len(text), width)]
    return sep.join(line for line in lines if line)


def squeezed(text: str) -> str:
    return "".join(text.split())


def assert_masked(redactor: Redactor, printed: Printed, shown: str, lead: str, trail: str) -> None:
    """``lead + shown + trail`` redacted: the text around kept, the secret's part gone."""
    text = f"{lead}{shown}{trail}\n"
    out = redactor.redact(text)
    assert out.count("\n") == text.count("\n")  # line numbers stay true
    flat, body = squeezed(out), printed.text
    head, found, tail = flat.partition(PLACEHOLDER)
    assert found, out
    lead_, trail_ = squeezed(lead), squeezed(trail)
    assert head.startswith(lead_) and tail.endswith(trail_), out
    kept_before, kept_after = head[len(lead_) :], tail[: len(tail) - len(trail_)]
    assert body.startswith(kept_before) and len(kept_before) <= printed.lo, out
    assert body.endswith(kept_after) and len(body) - len(kept_after) >= printed.hi, out
    assert body[printed.lo : printed.hi] not in flat


REDACTOR = Redactor(MachineFacts(secrets=(TOKEN, TRICKY, WIDE)))
PLACES = [("", ""), ("deploy step 3 printed <", "> and went on; exit 0"), ("before\n", "\nafter")]


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@pytest.mark.parametrize("secret", [TOKEN, TRICKY, WIDE])
def test_the_secret_in_one_transform_alone_and_in_log_text(name: str, secret: str) -> None:
    printed = TRANSFORMS[name](secret)
    for lead, trail in PLACES:
        assert_masked(REDACTOR, printed, printed.text, lead, trail)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_the_transform_wrapped_at_several_widths_and_columns(name: str) -> None:
    """``base64 -w 76``, ``xxd -p`` (60), a terminal's 80, a narrow column; CRLF too."""
    for secret in (TOKEN, TRICKY, WIDE):
        printed = TRANSFORMS[name](secret)
        for width, column, sep in [(76, 0, "\n"), (60, 17, "\n"), (8, 3, "\r\n"), (5, 4, "\n")]:
            shown = wrap(printed.text, width, column, sep)
            for lead, trail in PLACES:
                assert_masked(REDACTOR, printed, shown, lead, trail)


@pytest.mark.parametrize(
    "sep",
    [" ", "\n", "\r\n", "  ", "\n   ", "\t"],
    ids=["space", "lf", "crlf", "two", "indent", "tab"],
)
def test_the_secret_spaced_or_one_character_per_line(sep: str) -> None:
    for name in ("plain", "reversed", "upper", "rot13", "hex"):
        printed = TRANSFORMS[name](TOKEN)
        assert_masked(REDACTOR, printed, sep.join(printed.text), "got: <", ">")


def test_whitespace_past_the_gap_ends_the_match() -> None:
    """The gap is bounded (a match is never longer than a stream keeps back): characters
    further apart than that are ordinary text."""
    far = (" " * (MAX_GAP + 1)).join(TOKEN)
    assert REDACTOR.redact(far) == far


PRINTABLE = string.ascii_letters + string.digits + string.punctuation


@settings(max_examples=150, deadline=None)
@given(
    secret=st.text(PRINTABLE, min_size=6, max_size=40).filter(
        lambda s: s.lower() not in BORING_VALUES
    ),
    name=st.sampled_from(sorted(TRANSFORMS)),
    width=st.integers(1, 90),
    column=st.integers(0, 89),
    sep=st.sampled_from(["\n", "\r\n", " ", "\n  "]),
    place=st.sampled_from(PLACES),
)  # fmt: skip
def test_a_random_secret_in_a_random_transform_never_survives(
    secret: str, name: str, width: int, column: int, sep: str, place: tuple[str, str]
) -> None:
    printed = TRANSFORMS[name](secret)
    shown = wrap(printed.text, width, column % width, sep)
    # whitespace past the gap ends a match (test_whitespace_past_the_gap_ends_the_match):
    # a C array's ", " wrapped a character a line under a two-space indent has a gap of 7
    assume(max(map(len, re.findall(r"\s+", shown)), default=0) <= MAX_GAP)
    out = Redactor(MachineFacts(secrets=(secret,))).redact(f"{place[0]}{shown}{place[1]}\n")
    assert squeezed(printed.text)[printed.lo : printed.hi] not in squeezed(out)
    assert PLACEHOLDER in out


def test_ordinary_log_text_is_left_alone() -> None:
    text = clean_lines(random.Random(5), 200_000)
    assert REDACTOR.redact(text) == text


def test_other_base64_and_hex_blobs_are_left_alone() -> None:
    rng = random.Random(6)
    for _ in range(50):
        blob = rng.randbytes(rng.randrange(20, 3000))
        for text in (base64.b64encode(blob).decode(), blob.hex(), base64.b32encode(blob).decode()):
            wrapped = wrap(text, 76) + "\n"
            assert REDACTOR.redact(wrapped) == wrapped


def test_words_that_share_a_start_with_the_secret_are_left_alone() -> None:
    """A disguise is masked whole: its start, or the secret less a character, is text; a
    plain piece only from ``MIN_PIECE`` characters on, and only as a word of its own."""
    for text in (
        TOKEN[: MIN_PIECE - 1],
        TOKEN[-MIN_PIECE + 1 :],
        "x" + TOKEN[3:20] + "y",  # inside a longer word
        " ".join(TOKEN[:-1]),
        "\n".join(TOKEN[:12]) + "\nxyz",
        TOKEN[:-1].upper() + "!",
        base64.b64encode(TOKEN[:-3].encode()).decode(),
        TOKEN[:-1][::-1],
    ):
        assert REDACTOR.redact(f"see {text} here\n") == f"see {text} here\n"


def test_short_and_boring_values_have_no_disguises() -> None:
    assert Disguises.build(["abc12", "enabled", "Disabled"]) is None
    built = Disguises.build([TOKEN])
    assert built is not None and built.reach >= len(TOKEN) * 6


def test_a_match_over_a_point_is_found_and_an_unfinished_one_at_the_end() -> None:
    built = Disguises.build([TOKEN])
    assert built is not None
    folded = ("log line\n" + "\n".join(TOKEN) + "\nnext line\n").encode()
    start = folded.index(b"\n") + 1
    at = folded.index(b"\n", start + 5) + 1  # a line start inside the folded secret
    assert built.crossing(folded, at) == folded.index(b"\nnext")
    assert built.crossing(folded, start) == -1  # the match starts there: nothing crosses
    half = folded[: folded.index(TOKEN[10].encode(), start) + 1] + b"\n"
    assert built.open_at(half, 0) == start
    assert built.open_at(b"log line\nnothing of it\n", 0) == -1


def test_no_match_goes_on_over_a_wide_gap() -> None:
    built = Disguises.build([TOKEN])
    assert built is not None
    start = "log\n" + "\n".join(TOKEN[:9])
    assert built.open_at(f"{start}\n".encode(), 0) == 4
    assert built.open_at(f"{start}{chr(10) * (MAX_GAP + 1)}".encode(), 0) == -1


_GAPS = [" ", "\n", "\t", "\r\n", "\u00a0", "\u2003", "\u3000", "\x1c", "\x0b", "  \n "]


def _regex_open_at(built: Disguises, text: bytes, floor: int) -> int:
    """``open_at`` as each form's own regex says it: a start of the form, whitespace
    between its characters, then only whitespace to the text's end."""
    pos = max(0, floor, len(text) - built.reach)
    while (wide := _too_wide(text, pos, len(text))) >= 0:
        pos = wide
    found = [o.search()(text, pos, len(text))[0][0] for _, o in built.opens]
    return min((at for at in found if at >= 0), default=-1)


def test_an_unfinished_match_at_the_end_is_where_each_forms_regex_says() -> None:
    """The ASCII forms are compared in place, not through a regex each: at every end of
    every form, re-cased, spaced with any whitespace, after noise and with a stray byte
    after it, the answer is the regexes' own (a secret past ASCII goes through them)."""
    built = Disguises.build([TOKEN, GH_TOKEN, WIDE])
    assert built is not None
    rng = random.Random(28)
    forms = [o.form for _, o in built.opens]
    hits = 0
    for _ in range(1500):
        form = rng.choice(forms)
        head = form[: rng.randint(1, len(form))]
        if rng.random() < 0.5:
            head = "".join(c.upper() if rng.random() < 0.5 else c for c in head)
        parts = [c + (rng.choice(_GAPS) if rng.random() < 0.3 else "") for c in head]
        noise = "".join(rng.choice("abXY09 \n\u00e9-") for _ in range(rng.randint(0, 40)))
        text = (noise + "".join(parts) + rng.choice(["", "", " ", "\n", "\u3000"])).encode()
        if rng.random() < 0.2:
            text += bytes([rng.randrange(256)])
        floor = rng.randint(0, len(text))
        expected = _regex_open_at(built, text, floor)
        assert built.open_at(text, floor) == expected, (text, floor)
        hits += expected >= 0
    assert hits > 300  # most cases end inside a form's start


def test_a_flushed_stream_keeps_back_only_what_may_be_the_start_of_the_secret() -> None:
    """A pipe's lines are passed on as they come, but the first lines of a folded secret
    wait for the rest (each alone is no secret; together they are), and a line that only
    looks like the start of one is passed on with the next line."""
    stream = REDACTOR.open()
    out = stream.feed("compiling\n" + "\n".join(TOKEN[:9]) + "\n") + stream.flush()
    assert out == "compiling\n"
    out += stream.feed("\n".join(TOKEN[9:]) + "\nall done!\n") + stream.flush()
    assert out == "compiling\n" + PLACEHOLDER + "\n" * len(TOKEN) + "all done!\n"
    stream = REDACTOR.open()
    assert stream.feed("got r\n") + stream.flush() == ""  # "r": the secret's first letter
    assert stream.feed("ok\n") + stream.flush() == "got r\nok\n"


GH_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN2pQ4rS6tU8vW0xY2zA4"
SPACES = "\u00a0\u2003\u3000\u202f\u2028\x0b\x1c"  # whitespace to str.isspace, past " "


@pytest.mark.parametrize("space", list(SPACES), ids=[f"U+{ord(c):04X}" for c in SPACES])
def test_the_secret_spaced_with_any_unicode_whitespace(space: str) -> None:
    printed = TRANSFORMS["plain"](TOKEN)
    text = f"got: <{space.join(TOKEN)}>\n"
    out = REDACTOR.redact(text)
    assert out == f"got: <{PLACEHOLDER}>\n" or PLACEHOLDER in out, out
    assert printed.text not in "".join(ch for ch in out if not ch.isspace())


def test_unicode_whitespace_past_the_gap_ends_the_match() -> None:
    """The gap is counted in bytes: four NO-BREAK SPACEs (eight bytes) are too wide."""
    far = ("\u00a0" * 4).join(TOKEN)
    assert REDACTOR.redact(far) == far


def own(secret: str) -> Redactor:
    """The redactor every log goes through, with ``secret`` as this node's token."""
    from relay.node.redaction import build_redactor

    return build_redactor(None, secret)


# the reviewed ways a step printed the node's own token past the transforms above
GH_DISGUISED = {
    "nbsp-spaced": "\u00a0".join(GH_TOKEN),
    "without-prefix": GH_TOKEN[4:],
    "without-prefix-spaced": " ".join(GH_TOKEN[4:]),
    "folded-with-prefix": f"part1: {GH_TOKEN[:20]}\npart2: {GH_TOKEN[20:]}",
    "in-thirds": f"a={GH_TOKEN[:13]} b={GH_TOKEN[13:26]} c={GH_TOKEN[26:]}",
    "U-escapes": "".join(f"\\U{ord(c):08x}" for c in GH_TOKEN),
    "reversed-hex": GH_TOKEN[::-1].encode().hex(),
    "hex-reversed": GH_TOKEN.encode().hex()[::-1],
}


@pytest.mark.parametrize("name", sorted(GH_DISGUISED))
def test_the_nodes_own_token_in_the_reviewed_disguises(name: str) -> None:
    out = own(GH_TOKEN).redact(f"step says:\n{GH_DISGUISED[name]}\ndone\n")
    assert out.startswith("step says:\n") and out.endswith("\ndone\n"), out
    flat = "".join(ch for ch in out if not ch.isspace())
    pieces = {GH_TOKEN[i : i + 10] for i in range(len(GH_TOKEN) - 10)}
    forms = pieces | {p[::-1].encode().hex() for p in pieces}
    forms |= {"".join(f"\\U{ord(c):08x}" for c in p) for p in pieces}
    assert not [p for p in forms if p in flat], out


def test_a_tokens_secret_part_is_a_secret_of_its_own() -> None:
    assert with_bodies(["ghp_abcdefgh12", "github_pat_11AB_cd3"]) == (
        "11AB_cd3",
        "abcdefgh12",
        "ghp_abcdefgh12",
        "github_pat_11AB_cd3",
    )
    assert with_bodies(["ghs_abc", "plainvalue"]) == ("ghs_abc", "plainvalue")  # too short


def test_pieces_are_left_alone_when_short_wordlike_or_inside_a_word() -> None:
    """Pieces: ``MIN_PIECE`` characters at least, a letter and a digit among them, a word
    of their own; and only of a token-shaped secret (a URL's pieces are any log's words)."""
    redactor = own(GH_TOKEN)
    for text in (
        f"short {GH_TOKEN[5 : 5 + MIN_PIECE - 1]} piece",
        f"commit 9f{GH_TOKEN[8:24]}c0ffee in a hash",
        f"{GH_TOKEN[:4]} is GitHub's prefix",
    ):
        assert redactor.redact(text + "\n") == text + "\n"
    url = "https://sentry.example.com/12345678"
    assert own(url).redact("see https://sentry.example.com/9\n") == (
        "see https://sentry.example.com/9\n"
    )
    text = clean_lines(random.Random(7), 100_000)
    assert redactor.redact(text) == text


def test_one_search_for_starts_and_pieces_finds_what_two_find() -> None:
    """A few secrets' forms' starts and pieces are found in one pass over a block; every
    find is the one that a pass for each makes, overlapping and adjacent ones included."""
    disguises = Disguises.build(with_bodies([GH_TOKEN, TOKEN]))
    assert disguises is not None and disguises.either is not None
    apart = dataclasses.replace(disguises, either=None)
    rng = random.Random(11)
    parts = [*GH_DISGUISED.values(), GH_TOKEN, TOKEN, GH_TOKEN[3:20], TOKEN[::-1], "x y"]
    for _ in range(40):
        text = " | ".join(rng.choice(parts) for _ in range(rng.randrange(1, 8)))
        text = clean_lines(rng, 2_000) + text + GH_TOKEN[5:30] + TOKEN.upper() + "\n"
        block = text.encode()
        assert sorted(disguises.spans(block)) == sorted(apart.spans(block)), text
    assert sorted(disguises.spans(block, 1000)) == sorted(apart.spans(block, 1000))


def test_a_secret_past_ascii_in_every_transform_side_by_side_logs_nothing(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Where a secret past ASCII starts, every form of every secret is tried (its cases
    may fold otherwise), the largest too (``\\U0000…`` ten characters for each one, a gap
    between each two): each form's automaton gets room for its states, so RE2 never runs
    out of memory, logs it on stderr and falls back to its slower engine."""
    redactor = Redactor(MachineFacts(secrets=(TOKEN, WIDE)))  # fresh: no automaton built
    shown = [TRANSFORMS[name](WIDE).text for name in sorted(TRANSFORMS)]
    text = "printed: " + " | ".join(shown) + "\n" + "\n".join(" ".join(s) for s in shown) + "\n"
    out = redactor.redact(text)
    for printed in shown:
        assert "".join(printed.split()) not in "".join(out.split())
    assert "out of memory" not in capfd.readouterr().err


def test_the_disguises_pass_finds_every_literal_the_literals_own_search_finds() -> None:
    """This node's secrets as written and encoded, its user, home and host are found in
    the disguises' one pass over a block: the same spans, overlapping, glued to a word and
    in another case included, as the literals' own search and the disguises' apart."""
    facts = MachineFacts(
        user="alice", home="/home/alice", hosts=("build-07",), secrets=(TRICKY, GH_TOKEN)
    )
    scanner = LiteralScanner(build_literals(facts))
    joined = Disguises.build(with_bodies(facts.secrets), also=scanner.literals)
    apart = Disguises.build(with_bodies(facts.secrets))
    assert joined is not None and apart is not None and not joined.unanchored
    needles = [lit.needle.decode() for lit in scanner.literals]
    rng = random.Random(28)
    for _ in range(60):
        picks = [rng.choice(needles) for _ in range(rng.randrange(1, 6))]
        picks = [p.upper() if rng.random() < 0.3 else p for p in picks]
        glue = rng.choice(["", " ", "x", "/", "\n", "="])
        text = clean_lines(rng, 1_500) + glue.join(picks) + glue + picks[0][:5] + "\n"
        block = text.encode()
        for start in (0, len(block) // 2):
            found = set(joined.spans(block, start, scanner.at))
            want = set(apart.spans(block, start)) | set(scanner.spans(block, block.lower(), start))
            assert found == want, text


@pytest.mark.parametrize("name", ["plain", "upper", "reversed", "swapped-case", "dotted"])
def test_a_secret_with_no_ascii_letter_is_masked_in_its_disguises(name: str) -> None:
    """A secret the canonical search keeps too little of (every letter past ASCII) is looked
    for in the block as written instead: masked spaced and folded as any other."""
    secret = "пароль-секрет-ключ"
    printed = TRANSFORMS[name](secret)
    for shown in (printed.text, " ".join(printed.text), wrap(printed.text, 3)):
        assert_masked(own(secret), printed, shown, "got: <", ">")


def test_lists_and_csv_lines_that_are_not_the_secret_are_left_alone() -> None:
    """A marked form is the secret's own characters in order with a mark or none between
    any two: a list of other characters, the secret less one and a CSV line are text; words
    joined by marks that spell a secret with none (``hunter_pass_42`` for
    ``hunterpass42``) are that secret in groups (``fold -w4 | paste -sd-`` prints one so)."""
    redactor = Redactor(MachineFacts(secrets=(TOKEN, "hunterpass42")))
    for text in (
        str(list(string.ascii_lowercase)),
        json.dumps(list(string.digits + string.ascii_uppercase)),
        str(list(TOKEN[:-1])),
        ", ".join(TOKEN[1:]),
        "|".join(TOKEN[::2]),
        "_".join(TOKEN[:-1]) + "_x",
        "id,name,r,l,y,Z,q,7\n1,rly,Zq7Tk9,Lm2Xw4,Rb8Vn1,Cd4",
        "h,u,n,t,e,r,p,a,s,s,4",
    ):
        assert redactor.redact(text + "\n") == text + "\n"
    grouped = redactor.redact("hunter_pass_42 hunter-pass-42 hunter.pass.42\n")
    assert grouped == " ".join(["[redacted:own-secret]"] * 3) + "\n"
    rows = "".join(
        f"{i},{','.join(random.Random(i).choices('abcdef0123', k=12))}\n" for i in range(2000)
    )
    assert redactor.redact(rows) == rows


def test_a_marked_secret_over_a_cut_is_kept_back_and_found_across_it() -> None:
    """A list of the secret's characters cut anywhere (a stream's window, a file's piece):
    the start is an unfinished match, and the whole crosses the cut."""
    built = Disguises.build([TOKEN])
    assert built is not None
    for shown in (str(list(TOKEN)), ", ".join(TOKEN), "_".join(TOKEN[::-1])):
        text = f"log line\nprinted {shown}\nnext line\n".encode()
        edge = 2 if shown.startswith("[") else 0  # ``['`` and ``']`` are no part of it
        start = text.index(shown.encode()) + edge
        end = text.index(shown.encode()) + len(shown) - edge
        for cut in range(start + 1, end, 7):
            assert built.open_at(text[:cut], 0) == start, (shown, cut)
            assert built.crossing(text, cut) == end, (shown, cut)
        assert built.open_at(text[:end] + b"', '", 0) == start
        assert built.open_at(b"log line\n['a', 'b', 'c', '", 0) == -1


def test_a_c_array_wrapped_a_character_a_line_is_masked_within_the_gap() -> None:
    """The widest gap a wrapped C array makes within the bound: ``0x41,`` then the space
    alone on its line, under a one-space indent (5 blank characters between two of it)."""
    printed = TRANSFORMS["hex-c-array"](TOKEN)
    shown = wrap(printed.text, 1, 0, "\n ")
    assert max(map(len, re.findall(r"\s+", shown))) == 5
    out = Redactor(MachineFacts(secrets=(TOKEN,))).redact(f"{shown}\n")
    assert squeezed(printed.text)[printed.lo : printed.hi] not in squeezed(out)
    assert PLACEHOLDER in out
