"""relay's own worktree belongs to its clone: a clone copied whole (``cp -r``), the worktree
folder of the clone it was copied from inside it, gets a worktree of its own on its first
pass, so that it never fetches into nor checks out from the other clone's objects. Against
real clones of a real remote."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from edges_helpers import Remote, commit_file, git

from relay.edges.git import Clone
from relay.edges.relay_tree import RelayTree


def _common_dir(worktree: Path) -> Path:
    return Path(git(worktree, "rev-parse", "--path-format=absolute", "--git-common-dir"))


def test_a_copied_clones_relay_worktree_is_its_own(remote: Remote, tmp_path: Path) -> None:
    original = RelayTree(Clone.open(remote.a))
    first = original.at_branch("main")
    assert _common_dir(original.path) == (remote.a / ".git").resolve()
    copy = tmp_path / "copy"
    shutil.copytree(remote.a, copy, symlinks=True)
    # the other clone moves on: a commit its copy's remote has and the original has not fetched
    tip = commit_file(remote.b, "later.txt", "later\n", "later")
    git(remote.b, "push", "-q", "origin", "HEAD:main")
    copied = RelayTree(Clone.open(copy))
    assert copied.at_branch("main") == tip
    assert _common_dir(copied.path) == (copy / ".git").resolve()
    assert (copied.path / "later.txt").read_text() == "later\n"
    # the original's worktree and objects are untouched by the copy's pass
    assert git(original.path, "rev-parse", "HEAD") == first
    missing = subprocess.run(["git", "cat-file", "-e", tip], cwd=remote.a, check=False)
    assert missing.returncode != 0
