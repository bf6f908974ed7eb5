"""What the tests of a root relay's boxes share: the mark that skips them where relay is
not root, a real box in a folder of its own, a command run in it, and a command run by an
ordinary user of the host (nobody)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from relay.ratchet import sandbox
from relay.ratchet.sandbox import NAMESPACES, Sandbox, level

needs_root_boxes = pytest.mark.skipif(
    level() != NAMESPACES or not sandbox._as_root(),
    reason="relay is not root here (or cannot make namespaces): its boxes run as itself",
)


@contextmanager
def box_in(prefix: str) -> Iterator[Sandbox]:
    """A box with a tree, a HOME and a temporary folder, removed after."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    for name in ("tree", "home", "tmp"):
        (folder / name).mkdir()
    try:
        yield Sandbox(folder, folder / "tree", folder / "home", (), NAMESPACES)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def person_share(prefix: str) -> Iterator[Path]:
    """A person's share, given to the boxes' shared user as relay's refusal says, in a
    folder every local user passes through (on a disk, where set-user-ID programs run)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    folder.chmod(0o755)
    shared = folder / "share"
    shared.mkdir()
    os.chown(shared, sandbox.BOX_ID, sandbox.BOX_ID)
    try:
        yield shared
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(box: Sandbox, command: str, **more: str) -> subprocess.CompletedProcess[str]:
    """``command`` run in ``box`` as a gate is, with its HOME and temporary folder (and
    the variables ``more``), to its end."""
    running = start(box, command, **more)
    out, err = running.communicate(timeout=60)
    return subprocess.CompletedProcess(running.args, running.returncode, out, err)


def start(box: Sandbox, command: str, **more: str) -> subprocess.Popen[str]:
    """``command`` started in ``box`` as :func:`run` runs it, left running."""
    env = {"PATH": os.environ["PATH"], "HOME": str(box.home), "TMPDIR": str(box.tmp), **more}
    return subprocess.Popen(
        ["/bin/sh", "-c", box.wrap(command, env)],
        cwd=box.tree,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def as_nobody(*argv: str) -> str:
    """What ``argv`` prints run by an ordinary user of the host (nobody)."""
    done = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout
