"""This node's own secret in the encodings a review found a step may print it in: UTF-16LE
(PowerShell's ``-EncodedCommand``) in hex or base64, one character escaped alone, and a
private key longer than the disguised forms' limit reversed, in rot13, spaced out, or with
every character escaped (``\\uXXXX``, ``%XX``), and in a hex dump (``xxd``, ``hexdump -C``)."""

from __future__ import annotations

import base64
import codecs
from collections.abc import Callable

import pytest

from relay.redact import MachineFacts, Redactor

OWN = "Relay-n0de-S3cret-7Qx9Lm2Vb8"
SLASHED = 'Kx9/mQ2v+Lp8Zr4Tw7Yb"q'
_BODY = base64.b64encode(bytes(range(256)) * 2).decode()
PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    + "\n".join(_BODY[i : i + 64] for i in range(0, len(_BODY), 64))
    + "\n-----END PRIVATE KEY-----\n"
)
REDACTOR = Redactor(MachineFacts(secrets=(OWN, SLASHED, PEM)), max_redacted_share=1.0)


def redacted(text: str) -> str:
    """The text redacted with this node's secrets; the line count is kept."""
    out = REDACTOR.redact(text)
    assert out.count("\n") == text.count("\n")
    return out


def _powershell(command: str) -> str:
    return base64.b64encode(command.encode("utf-16-le")).decode()


@pytest.mark.parametrize(
    ("text", "inner"),
    [
        (OWN.encode("utf-16-le").hex() + "\n", OWN.encode("utf-16-le").hex()),
        (f"powershell -EncodedCommand {_powershell(OWN)}\n", _powershell(OWN)[4:-4]),
        (SLASHED.replace("/", "\\/") + "\n", "mQ2v+Lp8Zr4Tw7Yb"),
        ("echo " + SLASHED.replace('"', '\\"') + "\n", "mQ2v+Lp8Zr4Tw7Yb"),
        (repr(OWN.encode()) + "\n", OWN),
    ],
)
def test_own_secret_in_another_encoding_goes(text: str, inner: str) -> None:
    out = redacted(text)
    assert inner not in out and "own-secret" in out


def _pieces(text: str, size: int = 12) -> set[str]:
    """Every run of ``size`` characters of ``text`` with no whitespace in it."""
    return {text[i : i + size] for i in range(len(text) - size + 1)} - {""}


@pytest.mark.parametrize(
    "shown",
    [
        PEM[::-1],
        codecs.encode(PEM, "rot13"),
        " ".join(PEM),
        "".join(f"\\u{ord(c):04x}" for c in PEM),
        "".join(f"%{b:02x}" for b in PEM.encode()),
        "".join(f"%{b:02X}" for b in PEM.encode()),
        repr(PEM.encode()),
    ],
)
def test_a_long_private_key_in_a_transform_goes(shown: str) -> None:
    out = redacted(shown + "\n")
    body = shown.split("KEY", 1)[1] if "KEY" in shown else shown
    leaked = [p for p in _pieces(body[40:-40]) if p in out and not p.isspace()]
    assert not leaked, leaked[:3]


def _xxd(data: bytes) -> str:
    """``data`` as ``xxd`` prints it: offset, eight groups of two bytes, the text."""
    rows = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        groups = " ".join(row[i : i + 2].hex() for i in range(0, len(row), 2))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        rows.append(f"{at:08x}: {groups:<39}  {text}\n")
    return "".join(rows)


def _hexdump_c(data: bytes) -> str:
    """``data`` as ``hexdump -C`` prints it: offset, sixteen bytes, the text between bars."""
    rows = []
    for at in range(0, len(data), 16):
        row = data[at : at + 16]
        left = " ".join(f"{b:02x}" for b in row[:8])
        right = " ".join(f"{b:02x}" for b in row[8:])
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        rows.append(f"{at:08x}  {left:<23}  {right:<23}  |{text}|\n")
    return "".join(rows) + f"{len(data):08x}\n"


@pytest.mark.parametrize("dump", [_xxd, _hexdump_c])
@pytest.mark.parametrize(
    "data",
    [f"token={OWN}\n".encode(), OWN.encode(), PEM.encode(), b"x" * 7 + PEM.encode()[100:400]],
)
def test_own_secret_in_a_hex_dump_goes(dump: Callable[[bytes], str], data: bytes) -> None:
    shown = dump(data)
    out = redacted(f"$ xxd secret.bin\n{shown}done\n")
    rows = [line[10:20] for line in shown.splitlines() if len(line) > 20]  # hex, past the offset
    assert rows and not [row for row in rows if row in out]
    assert out.startswith("$ xxd secret.bin\n") and out.endswith("done\n")


def test_a_hex_dump_without_a_secret_stays() -> None:
    shown = _xxd(b"an ordinary file of plain text, nothing secret in it\n")
    assert redacted(shown) == shown


SHORT = "Kx9mQ2vLp8Zr4Tw7"  # sixteen: its halves and thirds are shorter than any piece
SHORT_REDACTOR = Redactor(MachineFacts(secrets=(SHORT,)), max_redacted_share=1.0)


@pytest.mark.parametrize(
    "text",
    [
        f"first half: {SHORT[:8]}\nsecond half: {SHORT[8:]}\n",
        f"part 1/3: {SHORT[:6]}\npart 2/3: {SHORT[6:12]}\npart 3/3: {SHORT[12:]}\n",
        f'chunk 2 of 2 = "{SHORT[7:]}"\n',
    ],
)
def test_own_secret_in_labelled_pieces_goes(text: str) -> None:
    out = SHORT_REDACTOR.redact(text)
    assert out.count("\n") == text.count("\n")
    pieces = [p for p in (SHORT[:8], SHORT[8:], SHORT[:6], SHORT[6:12], SHORT[7:]) if p in text]
    assert not [p for p in pieces if p in out]


@pytest.mark.parametrize(
    "text",
    ["the second half: of the match\n", f"part 1: {SHORT[:4]}\n", "chunk = 4096\n"],
)
def test_a_label_without_a_piece_of_a_secret_stays(text: str) -> None:
    assert SHORT_REDACTOR.redact(text) == text
