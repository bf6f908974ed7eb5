"""This node's own secret in the encodings a review found a step may print it in: UTF-16LE
(PowerShell's ``-EncodedCommand``) in hex or base64, one character escaped alone, and a
private key longer than the disguised forms' limit reversed, in rot13, spaced out, or with
every character escaped (``\\uXXXX``, ``%XX``)."""

from __future__ import annotations

import base64
import codecs

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
