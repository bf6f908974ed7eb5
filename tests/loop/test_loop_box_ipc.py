"""A box has SysV IPC and a host name of its own: a shared-memory segment or message queue
the person made (a database's, a desktop's) is neither listed, read nor written from a box,
and a box that sets its host name changes nothing outside it."""

from __future__ import annotations

import ctypes
import json
import os
import shlex
import shutil
import socket
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
KEY = 0x52454C41  # the segment's key, the one a box looks for
IPC_CREAT, IPC_RMID = 0o1000, 0
# what runs in the box: look the person's segment up by its key, list every segment, try to
# set the host name
INSIDE = f"""
import ctypes, json, os, socket
libc = ctypes.CDLL(None, use_errno=True)
found = libc.shmget({KEY}, 0, 0)
seen = open("/proc/sysvipc/shm").read().split("\\n")[1:]
try:
    socket.sethostname("relay-box-named")
    named = True
except OSError:
    named = False
listed = [line for line in seen if line.strip()]
ipc = os.readlink("/proc/self/ns/ipc")
print(json.dumps({{"found": found, "listed": listed, "named": named, "ipc": ipc}}))
"""


@pytest.fixture
def box() -> Iterator[Sandbox]:
    folder = Path(tempfile.mkdtemp(prefix="relay-test-ipc-"))
    (folder / "tree").mkdir()
    try:
        yield Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def segment() -> Iterator[int]:
    """A 0600 segment of the person's, made for the test and removed after it."""
    libc = ctypes.CDLL(None, use_errno=True)
    made = libc.shmget(KEY, 4096, IPC_CREAT | 0o600)
    if made < 0:
        pytest.skip(f"this machine makes no SysV segment (errno {ctypes.get_errno()})")
    try:
        yield made
    finally:
        libc.shmctl(made, IPC_RMID, None)


@needs_namespaces
def test_a_box_neither_finds_nor_lists_the_persons_shared_memory(
    box: Sandbox, segment: int
) -> None:
    host_name = socket.gethostname()
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home)}
    command = box.wrap(f"{sys.executable} -I -S -c {shlex.quote(INSIDE)}", env)
    done = subprocess.run(
        ["/bin/sh", "-c", command], cwd=box.tree, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path("/proc/sysvipc/shm").read_text().count(str(segment)) >= 1  # it is there
    assert said["found"] < 0, "the box found the person's segment by its key"
    assert said["listed"] == [], "the box lists the machine's segments"
    assert said["ipc"] != os.readlink("/proc/self/ns/ipc")
    assert socket.gethostname() == host_name, "a box renamed the machine"
