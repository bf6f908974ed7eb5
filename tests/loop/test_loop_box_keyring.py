"""A box has a session keyring of its own: the keys a person's login left in theirs
(pam_keyinit's session keyring, a Kerberos or CIFS login's key) are not read from a box,
nor listed by name (its /proc/keys is empty), and a key a box adds is gone with it, never
planted in the person's.

A real box, run by a process that joins a fresh session keyring of its own first (the
test's keyring, not the one this test runs under), through keyctl(2) itself."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from test_loop_box_removed import said_by_a_person

from relay.ratchet.sandbox import NAMESPACES, level

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
# what a box's code tries: find and read the person's keys (by search, by their serials
# as a scan of every serial would find them, by linking the person's user keyring into its
# own session keyring to possess it), list what it may see, plant keys
INSIDE = (
    KEYS
    + """
import json, sys
serials = [int(s) for s in sys.argv[1:]]
found = keyctl(10, -3, b"user", b"relay-test-login", 0)  # KEYCTL_SEARCH the session's
said = {"found": found, "read": None, "keys": open("/proc/keys").read()}
buf = ctypes.create_string_buffer(256)
said["described"] = [keyctl(6, key, buf, 256) for key in serials]  # KEYCTL_DESCRIBE
said["linked"] = keyctl(8, -4, -3)  # KEYCTL_LINK the user keyring into the session's
for key in [found, *serials, *(int(l.split()[0], 16) for l in said["keys"].splitlines())]:
    got = read(key) if key > 0 else None
    if got and SECRET.encode() in got:
        said["read"] = got.decode()
said["planted"] = [add("relay-test-planted", "from the box", ring) for ring in (-3, -4)]
print(json.dumps(said))
""".replace("SECRET", repr(SECRET))
)
# the person (the test's user, or an ordinary one): a fresh session keyring and the user's
# keyring each holding a login's key, then a real box made by relay as that person, then
# a look
OUTSIDE = (
    KEYS
    + """
import json, shlex, shutil, subprocess, sys, tempfile
from pathlib import Path
from relay.ratchet.sandbox import NAMESPACES, Sandbox

assert keyctl(1, b"relay-test-session") > 0  # KEYCTL_JOIN_SESSION_KEYRING
assert keyctl(8, -4, -3) == 0  # the user keyring linked from it, as a login's is
keys = [add("relay-test-login", SECRET, ring) for ring in (-3, -4)]
before = {ring: held(ring) for ring in (-3, -4)}
folder = Path(tempfile.mkdtemp(prefix="relay-test-keys-"))
(folder / "tree").mkdir()
box = Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
env = {"PATH": "/usr/bin:/bin", "HOME": str(box.home)}
inside = " ".join(shlex.quote(w) for w in [sys.executable, "-I", "-S", "-c", sys.argv[1]])
command = box.wrap(inside + " " + " ".join(map(str, keys)), env)
done = subprocess.run(["/bin/sh", "-c", command], cwd=box.tree, env=env,
                      capture_output=True, text=True)
shutil.rmtree(folder, ignore_errors=True)
after = {ring: held(ring) for ring in (-3, -4)}
print(json.dumps({"keys": keys, "box": done.stdout, "err": done.stderr, "rc": done.returncode,
                  "unchanged": before == after, "still": [read(k).decode() for k in keys]}))
for key in keys:
    keyctl(3, key)  # KEYCTL_REVOKE: the user keyring outlives this process
""".replace("SECRET", repr(SECRET))
)


def keys_around_a_box(ordinary: bool) -> dict[str, Any]:
    """What the person saw of a real box run among their keys: as this test's user, or as
    an ordinary user of the host (nobody, where this test is root)."""
    said: dict[str, Any] = said_by_a_person(OUTSIDE, INSIDE, ordinary=ordinary)
    return said


@needs_namespaces
@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="keyctl's number")
@pytest.mark.parametrize("ordinary", [False, True], ids=["this-user", "ordinary-user"])
def test_a_box_neither_reads_nor_plants_a_key_of_the_persons(ordinary: bool) -> None:
    """Nothing of a key reaches the box: not by search, not by the serials (as a scan of
    every serial would find them), not by linking the person's user keyring into its own
    session keyring (which would make it their keys' possessor), nor by /proc/keys; and it
    adds none (the seccomp filter refuses keyctl, add_key and request_key: EPERM)."""
    said = keys_around_a_box(ordinary)
    assert all(k > 0 for k in said["keys"]) and said["still"] == [SECRET, SECRET], said
    assert said["rc"] == 0, said["err"]
    inside = json.loads(said["box"])
    assert inside["keys"] == "", "the box listed the keys its user may view"
    assert inside["found"] < 0, "the box found the person's session key"
    assert all(d < 0 for d in inside["described"]), "the box described the person's keys"
    assert inside["linked"] < 0, "the box linked the person's user keyring"
    assert inside["read"] is None, "the box read the person's key"
    assert SECRET not in said["box"]
    assert inside["planted"] == [-1, -1], "the box added a key (EPERM expected)"
    assert said["unchanged"], "a key the box added is in the person's keyrings"
