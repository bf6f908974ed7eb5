"""A long own secret — a 2048-bit private key in ``RELAY_APP_PRIVATE_KEY`` — is masked in
every form a step may print it in, by ``relay redact`` as a real process, and RE2 writes
nothing to stderr ("DFA out of memory" was printed 176 times once the key's thirty exact
encodings shared one regex, and the search ran fifteen times slower).

The key is made from a seed (its bytes need not be a real key's: redaction reads text).
A form is masked when no run of ``WINDOW`` of its characters (whitespace out) is left in
the output (whitespace out): a piece of a key is as much a leak as the key."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import urllib.parse
from pathlib import Path

from test_redact_disguises import wrap

from relay.redact import MachineFacts, Redactor

WINDOW = 24
BEGIN, END = "-----BEGIN PRIVATE KEY-----", "-----END PRIVATE KEY-----"


def relay_command(*args: str) -> list[str]:
    """argv running the `relay` CLI with this interpreter (see ``test_redact_many_own``)."""
    return [sys.executable, "-m", "relay.cli", *args]


def _key() -> str:
    """A PEM block the size of a 2048-bit PKCS#8 key: 1,218 bytes of body in 64 columns."""
    body = base64.b64encode(random.Random(2048).randbytes(1218)).decode()
    return "\n".join([BEGIN, wrap(body, 64), END]) + "\n"


KEY = _key()
BODY = "".join(KEY.strip().splitlines()[1:-1])


def _printed() -> dict[str, tuple[str, str]]:
    """Each way a step may print the key: (what the log shows, what must not survive)."""
    raw = KEY.encode()
    b64 = base64.b64encode(raw).decode()
    hexed = raw.hex()
    return {
        "as written": (KEY, BODY),
        "crlf": (KEY.replace("\n", "\r\n"), BODY),
        "indented in yaml": ("key: |\n" + "".join(f"  {ln}\n" for ln in KEY.splitlines()), BODY),
        "body on one line": (BODY, BODY),
        "re-wrapped at 76": (wrap(BODY, 76), BODY),
        "re-wrapped at 40": (wrap(BODY, 40), BODY),
        "re-wrapped at 31": (wrap(BODY, 31, 5), BODY),
        "json": (json.dumps({"private_key": KEY}), BODY),
        "json in json": (json.dumps(json.dumps(KEY)), BODY),
        "url-quoted": ("key=" + urllib.parse.quote(KEY, safe=""), urllib.parse.quote(BODY, "")),
        "base64 wrapped": (wrap(b64, 76), b64[:-4]),
        "base64 on one line": (b64, b64[:-4]),
        "base64 in a blob": (base64.b64encode(b"ab" + raw + b"cd").decode(), b64[4:-8]),
        "hex wrapped": (wrap(hexed, 60), hexed),
        "hex upper": (hexed.upper(), hexed.upper()),
        "one body line": (f"line: {KEY.splitlines()[5]}", KEY.splitlines()[5]),
    }


def _left(needle: str, text: str) -> str | None:
    """A run of ``WINDOW`` characters of ``needle`` still in ``text``, or None."""
    for i in range(0, len(needle) - WINDOW + 1, WINDOW // 3):
        if needle[i : i + WINDOW] in text:
            return needle[i : i + WINDOW]
    return None


def _flat(text: str) -> str:
    return "".join(text.split())


def test_a_private_key_own_secret_is_masked_in_every_form_and_stderr_stays_empty(
    tmp_path: Path,
) -> None:
    printed = _printed()
    lines: list[str] = []
    for name, (shown, _) in printed.items():
        lines += [f"step printed the key {name}:", shown, "done"]
        lines += [f"[{n:04d}] linking unit_{n}.o ... ok in 0.{n % 97:02d}s" for n in range(250)]
    log = tmp_path / "step.log"
    log.write_text("\n".join(lines) + "\n", newline="")
    out = tmp_path / "out.log"
    done = subprocess.run(
        relay_command("redact", "-j", "1", str(log), "-o", str(out)),
        env={**os.environ, "RELAY_APP_PRIVATE_KEY": KEY},
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    flat = _flat(out.read_text())
    for name, (_, secret) in printed.items():
        assert _left(_flat(secret), flat) is None, name
    assert "linking unit_249.o ... ok" in out.read_text()  # the rest of the log is kept


def test_each_form_of_a_private_key_alone_in_a_log_is_masked() -> None:
    """Each form on its own, in ordinary text: no other form's find covers it."""
    redactor = Redactor(MachineFacts(secrets=(KEY,)), max_redacted_share=1.0)
    for name, (shown, secret) in _printed().items():
        out = redactor.redact(f"before the key\n{shown}\nafter the key\n")
        assert _left(_flat(secret), _flat(out)) is None, name
        assert out.startswith("before the key\n") and out.endswith("after the key\n"), name


def test_pieces_of_a_private_key_do_not_touch_text_that_only_looks_like_one() -> None:
    """Another key's body, base64 and hex of other data are not this key: left as they are
    (another key's block is masked as a key by its markers, not as this node's secret)."""
    redactor = Redactor(MachineFacts(secrets=(KEY,)), max_redacted_share=1.0)
    rng = random.Random(7)
    other = base64.b64encode(rng.randbytes(1218)).decode()
    text = "\n".join(
        [wrap(other, 64), rng.randbytes(600).hex(), base64.b64encode(rng.randbytes(300)).decode()]
    )
    text += "\n" + BEGIN[:11] + " is how a key starts\n"
    assert redactor.redact(text) == text
