"""Two relay processes in one clone take turns at git: pulls and pushes are serialised."""

from __future__ import annotations

import subprocess
import sys
import time

from edges_helpers import Remote

from relay.edges.git import Clone
from relay.edges.local import git_dir

HOLD = 1.5


def test_a_pull_waits_while_another_process_holds_the_clones_git_lock(remote: Remote) -> None:
    lock = git_dir(remote.a) / "relay" / "git.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from filelock import FileLock\n"
            f"with FileLock({str(lock)!r}):\n"
            "    print('held', flush=True); time.sleep(float(sys.argv[1]))",
            str(HOLD),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        Clone.open(remote.a).pull_rebase()
        waited = time.monotonic() - started
    finally:
        holder.wait(timeout=10)
    assert waited >= HOLD * 0.5, f"the pull did not wait for the lock ({waited:.2f}s)"


def test_the_lock_is_reentrant_so_a_push_can_pull_inside_it(remote: Remote) -> None:
    clone = Clone.open(remote.a)
    with clone.git_lock:
        clone.pull_rebase()  # would deadlock if the lock were not re-entrant
    assert not clone.git_lock.is_locked
