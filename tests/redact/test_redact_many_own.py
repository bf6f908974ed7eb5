"""Sixteen of this node's own secrets at once: ``relay redact`` (a real process, the
secrets in secret-named environment variables) masks each in several disguises, and RE2
says nothing on stderr (no "DFA out of memory": the forms no longer share one regex);
forty over a long log, neither."""

from __future__ import annotations

import base64
import codecs
import os
import random
import string
import subprocess
import sys
from pathlib import Path

from test_redact_disguises import wrap


def relay_command(*args: str) -> list[str]:
    """argv running the `relay` CLI with this interpreter (as the suites' conftest does; a
    module of its own here, since `conftest` names another file when suites run together)."""
    return [sys.executable, "-m", "relay.cli", *args]


COUNT = 16


def _secrets() -> dict[str, str]:
    rng = random.Random(28)
    alphabet = string.ascii_letters + string.digits
    return {f"MANY_{i}_TOKEN": "".join(rng.choices(alphabet, k=36)) for i in range(COUNT)}


def _disguises(secret: str) -> dict[str, str]:
    """The secret as a step may print it, each alone on its lines."""
    raw = secret.encode()
    return {
        "plain": secret,
        "reversed": secret[::-1],
        "upper": secret.upper(),
        "rot13": codecs.encode(secret, "rot13"),
        "spaced": " ".join(secret),
        "folded": "\n".join(secret),
        "base64-wrapped": wrap(base64.b64encode(b"xy" + raw).decode(), 20, 7),
        "hex-wrapped": wrap(raw.hex(), 16, 3),
        "u-escapes": "".join(f"\\u{ord(c):04x}" for c in secret),
        "percent": "".join(f"%{b:02X}" for b in raw),
    }


def test_sixteen_own_secrets_each_masked_in_every_disguise_and_stderr_stays_empty(
    tmp_path: Path,
) -> None:
    secrets = _secrets()
    lines: list[str] = []
    for value in secrets.values():
        for name, shown in _disguises(value).items():
            lines += [f"step printed {name}:", shown, "done"]
            # ordinary output around them (a log mostly masked would be refused)
            lines += [
                f"[{n:04d}] compiling module_{n}.c ... ok in 0.{n % 97:02d}s" for n in range(12)
            ]
    log = tmp_path / "step.log"
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.log"
    env = {**os.environ, **secrets}
    done = subprocess.run(
        relay_command("redact", "-j", "1", str(log), "-o", str(out)),
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    flat = "".join(out.read_text().split())
    for value in secrets.values():
        for name, shown in _disguises(value).items():
            body = "".join(shown.split())
            if name == "base64-wrapped":  # the edge characters carry the neighbours' bits
                body = body[4:-2]
            assert body not in flat, (name, value)
    assert flat.count("[redacted:own-secret]") >= COUNT * 10


def test_forty_own_secrets_over_a_long_log_leave_stderr_empty(tmp_path: Path) -> None:
    """Forty secrets' forms (over a thousand) in every search ``relay redact`` makes over a
    long log, a window's end included (where an unfinished form is looked for): each has
    room for its automaton, so RE2 never logs "DFA out of memory" and falls back."""
    rng = random.Random(40)
    alphabet = string.ascii_letters + string.digits
    secrets = {f"MANY_{i}_TOKEN": "".join(rng.choices(alphabet, k=36)) for i in range(40)}
    printed = list(secrets.values())
    lines = []
    for n in range(60_000):
        # a hex digest, an id and base64 now and then: text like the forms' starts
        lines.append(f"[{n:05d}] step {rng.getrandbits(128):032x} id={rng.getrandbits(40):x}")
        if n % 1000 == 0:
            lines.append(f"token {printed[n // 1000 % 40]} used")
    log = tmp_path / "long.log"
    log.write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        relay_command("redact", "-j", "1", str(log)),
        env={**os.environ, **secrets},
        capture_output=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    assert b"[redacted:own-secret]" in done.stdout
    assert not any(value.encode() in done.stdout for value in printed)


CROSSING = """
import random, string, sys
from relay.redact.disguises import Disguises
rng = random.Random(40)
alphabet = string.ascii_letters + string.digits
secrets = ["".join(rng.choices(alphabet, k=36)) for _ in range(40)]
forms = Disguises.build(secrets)
text = "".join(f"[{n:05d}] step {rng.getrandbits(128):032x}\\n" for n in range(2000)).encode()
cut = text.index(b"\\n", len(text) // 2) + 1
assert forms.crossing(text, cut) == -1
spaced = " ".join(secrets[7]).encode()
assert forms.crossing(text[:cut] + spaced + text[cut:], cut + 20) >= cut + 20
"""


def test_where_a_log_is_cut_into_pieces_forty_secrets_leave_stderr_empty() -> None:
    """Cutting a long log into pieces asks whether a disguised form runs over the cut, with
    one search for every form's start: for forty secrets its automaton outgrows its budget
    and RE2 searches without it (as exactly), saying nothing on stderr about it."""
    done = subprocess.run(
        [sys.executable, "-c", CROSSING], capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
