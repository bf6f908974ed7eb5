"""A clone's network commands run where its local ones run: with ``GIT_DIR`` exported (a
hook of a linked worktree, ``git --git-dir`` running an alias, a server-side hook), the
fetch and the push reach the clone relay opened, as GitPython's local commands do; and a
stop of relay mid-fetch leaves no lock of git's behind in the clone."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from edges_helpers import Remote, clone, commit_file, git

import relay.edges.git as git_edge
from relay.edges.git import Clone
from relay.edges.relay_tree import RelayTree

POSIX_PROC = pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")


def _tip(bare: Path, ref: str) -> str | None:
    done = subprocess.run(
        ["git", "--git-dir", str(bare), "rev-parse", "-q", "--verify", ref],
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")},
    )
    return done.stdout.strip() or None


def test_a_publish_with_the_clones_git_dir_exported_pushes_relays_commit(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GIT_DIR`` names the clone's own git directory (absolute, as git gives it to a hook
    of a linked worktree or to an alias run with ``--git-dir``). The person has a commit of
    their own, not pushed: relay's publish pushes relay's commit from its worktree, never
    the person's HEAD."""
    wip = commit_file(remote.a, "wip.txt", "private\n", "the person's unpushed work")
    monkeypatch.setenv("GIT_DIR", str(remote.a / ".git"))
    info = RelayTree(Clone.open_local(remote.a)).publish(
        {Path("log.txt"): lambda _old: "relay's log\n"}, "relay: a log", branch="main"
    )
    monkeypatch.delenv("GIT_DIR")
    assert info is not None
    pushed = _tip(remote.bare, "refs/heads/main")
    assert pushed != wip, "the person's unpushed commit was pushed in place of relay's"
    assert pushed == info.sha


def test_a_push_with_another_repositorys_git_dir_exported_goes_to_the_clones_remote(
    remote: Remote, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GIT_DIR`` names another repository (a dotfiles set-up, a hook of another
    repository that runs relay with ``--repo-dir``): relay opens the clone it was given,
    and its fetch and push reach that clone's remote, not the other repository's."""
    other_bare = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(other_bare))
    other = clone(other_bare, tmp_path / "other", name="carol")
    commit_file(other, "dotfile", "x\n", "dotfiles")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/main")
    later = commit_file(remote.b, "later.txt", "later\n", "later")
    git(remote.b, "push", "-q", "origin", "HEAD:main")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    a = Clone.open_local(remote.a)
    a.fetch()
    a.push_head("relay-data")
    monkeypatch.delenv("GIT_DIR")
    assert git(remote.a, "rev-parse", "refs/remotes/origin/main") == later
    assert _tip(other_bare, "refs/heads/relay-data") is None, "pushed to the other remote"
    assert _tip(remote.bare, "refs/heads/relay-data") == git(remote.a, "rev-parse", "HEAD")


def test_a_relative_git_dir_from_a_subdirectory_still_fetches(
    remote: Remote, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``GIT_DIR=../.git`` exported in a subdirectory of the clone: GitPython opens the
    clone (and runs its local commands with the git directory made absolute); the fetch
    reaches the same clone."""
    later = commit_file(remote.b, "later.txt", "later\n", "later")
    git(remote.b, "push", "-q", "origin", "HEAD:main")
    sub = remote.a / "docs"
    sub.mkdir()
    monkeypatch.chdir(sub)
    monkeypatch.setenv("GIT_DIR", "../.git")
    Clone.open(sub).fetch()
    monkeypatch.delenv("GIT_DIR")
    assert git(remote.a, "rev-parse", "refs/remotes/origin/main") == later


STOPPED_FETCH = """
import sys
from pathlib import Path
from relay.cli import stop_steps_on_signals
from relay.edges.git import Clone
stop_steps_on_signals()  # a SIGTERM ends relay as a scheduler's stop does
clone = Clone.open_local(Path(sys.argv[1]))
clone.fetch()
"""


@POSIX_PROC
def test_a_stop_of_relay_during_a_fetch_leaves_no_lock_in_the_clone(
    remote: Remote, tmp_path: Path
) -> None:
    """A scheduler stops relay (SIGTERM to relay alone, handled as SystemExit) while its
    fetch holds a ref's lock (here: a ``reference-transaction`` hook still running): git
    is given the chance to remove its lock, and the next fetch works. (git killed at once
    leaves ``refs/remotes/origin/main.lock``: every later fetch then fails, 'unable to
    update local ref', until a person removes it. The kill races git's own clean-up after
    its hook died, so the stop is tried a few times.)"""
    marker = f"relay-lock-{os.getpid()}"
    hook = remote.a / ".git" / "hooks" / "reference-transaction"
    lock = remote.a / ".git" / "refs" / "remotes" / "origin" / "main.lock"
    env = {**os.environ, "PYTHONPATH": str(Path(git_edge.__file__).parents[2])}
    try:
        for attempt in range(5):
            commit_file(remote.b, "later.txt", f"{attempt}\n", f"later {attempt}")
            git(remote.b, "push", "-q", "origin", "HEAD:main")
            hook.write_text(
                f'#!/bin/sh\n[ "$1" = prepared ] && exec sh -c "sleep 5" {marker}\nexit 0\n'
            )
            hook.chmod(0o755)
            proc = subprocess.Popen(
                [sys.executable, "-c", STOPPED_FETCH, str(remote.a)],
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env=env,
            )
            try:
                deadline = time.monotonic() + 30
                while not lock.exists() and time.monotonic() < deadline:
                    time.sleep(0.01)
                assert lock.exists(), "the fetch never took the ref's lock"
                os.kill(proc.pid, signal.SIGTERM)  # relay alone, not its group
                proc.wait(timeout=30)
            finally:
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            hook.unlink()
            _end_marked(marker)
            assert not lock.exists(), f"attempt {attempt + 1}: git's lock was left behind"
            subprocess.run(["git", "fetch", "-q"], cwd=remote.a, check=True)
    finally:
        _end_marked(marker)


def _end_marked(marker: str) -> None:
    """Kill what a hook left running (its command line names ``marker``)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if marker.encode() in (entry / "cmdline").read_bytes():
                    os.kill(int(entry.name), signal.SIGKILL)
