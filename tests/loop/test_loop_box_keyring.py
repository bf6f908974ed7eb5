"""A box has a session keyring of its own: the keys a person's login left in theirs
(pam_keyinit's session keyring, a Kerberos or CIFS login's key) are not read from a box,
nor listed by name (its /proc/keys is empty), and a key a box adds is gone with it, never
planted in the person's.

A real box, run by a process that joins a fresh session keyring of its own first (the
test's keyring, not the one this test runs under), through keyctl(2) itself."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.ratchet.sandbox import NAMESPACES, Sandbox, level

needs_namespaces = pytest.mark.skipif(
    level() != NAMESPACES, reason="this machine cannot make user and mount namespaces"
)

SECRET = "relay-test-login-secret"
# keyctl(2) by ctypes, as the person's login tools and a box's code reach it
KEYS = """\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": (250, 248), "aarch64": (219, 217)}[os.uname().machine]


def keyctl(*args):
    return libc.syscall(ctypes.c_long(NR[0]), *args)


def add(desc, value, ring):
    v = value.encode()
    got = libc.syscall(ctypes.c_long(NR[1]), b"user", desc.encode(), v, len(v), ring)
    return got if got > 0 else -ctypes.get_errno()


def read(key):
    buf = ctypes.create_string_buffer(4096)
    n = keyctl(11, key, buf, 4096)  # KEYCTL_READ
    return buf.raw[: min(n, 4096)] if n >= 0 else None


def held(ring):  # the keys a keyring links (KEYCTL_READ of a keyring: their ids)
    raw = read(ring) or b""
    return sorted(int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4))
"""
# what a box's code tries: find and read the person's key, list what it may see, plant keys
INSIDE = (
    KEYS
    + """
import json
found = keyctl(10, -3, b"user", b"relay-test-login", 0)  # KEYCTL_SEARCH the session's
said = {"found": found, "read": None, "keys": open("/proc/keys").read()}
for key in [found, *(int(l.split()[0], 16) for l in said["keys"].splitlines())]:
    got = read(key) if key > 0 else None
    if got and SECRET.encode() in got:
        said["read"] = got.decode()
said["planted"] = [add("relay-test-planted", "from the box", ring) for ring in (-3, -4)]
print(json.dumps(said))
""".replace("SECRET", repr(SECRET))
)
# the person: a fresh session keyring holding a login's key, then the box, then a look
OUTSIDE = (
    KEYS
    + """
import json, subprocess, sys
assert keyctl(1, b"relay-test-session") > 0  # KEYCTL_JOIN_SESSION_KEYRING
key = add("relay-test-login", SECRET, -3)
before = {ring: held(ring) for ring in (-3, -4)}
done = subprocess.run(["/bin/sh", "-c", sys.argv[1]], capture_output=True, text=True)
after = {ring: held(ring) for ring in (-3, -4)}
print(json.dumps({"key": key, "box": done.stdout, "err": done.stderr, "rc": done.returncode,
                  "unchanged": before == after, "still": read(key).decode()}))
""".replace("SECRET", repr(SECRET))
)


@pytest.fixture
def box() -> Iterator[Sandbox]:
    folder = Path(tempfile.mkdtemp(prefix="relay-test-keys-"))
    (folder / "tree").mkdir()
    try:
        yield Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@needs_namespaces
@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="keyctl's number")
def test_a_box_neither_reads_nor_plants_a_key_in_the_persons_session_keyring(
    box: Sandbox,
) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    command = box.wrap(f"{sys.executable} -I -S -c {shlex.quote(INSIDE)}", env)
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", OUTSIDE, command],
        cwd=box.tree, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    said = json.loads(done.stdout)
    assert said["key"] > 0 and said["still"] == SECRET, said
    assert said["rc"] == 0, said["err"]
    inside = json.loads(said["box"])
    assert inside["keys"] == "", "the box listed the keys its user may view"
    assert inside["found"] < 0, "the box found the person's session key"
    assert inside["read"] is None, "the box read the person's session key"
    assert SECRET not in said["box"]
    assert inside["planted"][0] > 0, "a box's own session keyring takes a key"
    assert said["unchanged"], "a key the box added is in the person's keyrings"
