"""The node's state under .git/relay (config, claims, caches, pass log, locks, outbox,
keys, token) is this account's alone: files 0600 in 0700 directories, so another local
account can neither read it nor hold the node's pass lock; what an older relay left
wider is tightened on the next write."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from worlds import WORKER, World

from relay.edges.local import NodeState

PY = Path(sys.executable).as_posix()
posix = pytest.mark.skipif(os.name == "nt", reason="mode bits; Windows keeps its ACLs")


def modes(root: Path) -> dict[str, int]:
    """Every path under the state directory but relay's own worktree (a checkout), with
    its permission bits."""
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        rel = path.relative_to(root).as_posix()
        if rel == "worktree" or rel.startswith("worktree/"):
            continue
        found[rel] = stat.S_IMODE(path.lstat().st_mode)
    return found


def wide_open(root: Path) -> None:
    """What an older relay left: directories 0755, files 0644 (but the secrets: those
    it kept 0600 already, and a pass refuses a wider one)."""
    for path in [root, *root.rglob("*")]:
        parts = path.relative_to(root).parts
        if "worktree" in parts or path.name == "token" or path.suffix == ".ed25519":
            continue
        os.chmod(path, 0o755 if path.is_dir() else 0o644)


def run_a_task(world: World, job: int) -> NodeState:
    world.controller.call("task", str(job), "--step", f'"{PY}" -c "print(42)"')
    world.worker.ok("watch", "--once", "--node", WORKER)
    return NodeState.for_clone(world.worker.clone)


@posix
def test_every_state_file_is_private_and_wider_modes_are_tightened(world: World, job: int) -> None:
    state = run_a_task(world, job)
    state.save_token(world.worker.token)
    state.save_outbox(issue=job, task=9, body="kept")
    found = modes(state.root)
    for name in ("config.json", "claims.json", "passes.jsonl", "etag-cache.json", "token"):
        assert name in found, sorted(found)
    assert any(n.startswith("locks/") for n in found) and any(n.startswith("keys/") for n in found)
    wrong = {
        n: oct(m) for n, m in found.items() if m != (0o700 if (state.root / n).is_dir() else 0o600)
    }
    assert not wrong, wrong

    wide_open(state.root)
    state.clear_outbox(issue=job, task=9)
    world.controller.call("task", str(job), "--step", f'"{PY}" -c "print(43)"')
    world.worker.ok("watch", "--once", "--node", WORKER)
    again = modes(state.root)
    for name in (".", "locks", "outbox", "config.json", "passes.jsonl", "claims.json"):
        expected = 0o700 if (state.root / name).is_dir() else 0o600
        if name == "config.json":
            continue  # not rewritten by a pass: the directory shuts it away
        assert again[name] == expected, (name, oct(again[name]))
    assert any(n.startswith("locks/") and m == 0o600 for n, m in again.items())


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_another_account_can_neither_read_the_state_nor_hold_the_pass_lock(
    world: World, job: int
) -> None:
    """As another account (nobody), with the way to the clone open: the pass lock cannot
    be opened, so not held, nor the claims read."""
    state = run_a_task(world, job)
    lock = next((state.root / "locks").glob("*.lock"))
    clone = world.worker.clone
    way = [clone / ".git", clone, *clone.parents]
    opened = [p for p in way if p.is_relative_to(Path("/tmp")) and p != Path("/tmp")]
    before = {p: stat.S_IMODE(p.stat().st_mode) for p in opened}
    try:
        for path in opened:  # the way to the clone is open: only the state is shut
            os.chmod(path, before[path] | 0o005)
        said = [as_nobody(lock, hold=True), as_nobody(state.root / "claims.json")]
    finally:
        for path, mode in before.items():
            os.chmod(path, mode)
    assert said == ["PermissionError", "PermissionError"], said


def as_nobody(path: Path, *, hold: bool = False) -> str:
    """In a child process that is another account (nobody): read ``path``, or take the
    lock on it; what happened, in a word."""
    import fcntl

    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        word = "done"
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            with path.open("rb") as handle:
                if hold:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                else:
                    handle.read()
        except OSError as err:
            word = type(err).__name__
        os.write(write, word.encode())
        os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read, "rb") as pipe:
        return pipe.read().decode()
