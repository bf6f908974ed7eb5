"""`relay redact` in a clone: the master section's patterns as the remote has them, read
with git only where the remote has a branch to read them from.

The refs are read from the repository's own files (``relay.edges.refs.read_refs``); each
test compares what that says with what git itself says, on real clones of a real origin
(loose and packed refs, nested branch names, a worktree, a detached HEAD).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from relay.edges.refs import read_refs as _read_refs
from relay.node.spine import LOOP_PATH
from relay.protocol import Master, Scope
from relay.protocol.master import render_master

ROOT = Path(__file__).resolve().parents[2]
GIT = shutil.which("git") or "git"


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [GIT, "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"},
    )  # fmt: skip
    return done.stdout


def what_git_says(clone: Path) -> tuple[str, tuple[str, ...]]:
    """The checked-out branch and the remote's branches, as the git commands say."""
    head = subprocess.run(
        [GIT, "symbolic-ref", "-q", "--short", "HEAD"],
        cwd=clone, capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    listed = git(clone, "for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin/")
    return head, tuple(listed.split())


def origin_with_spine(tmp_path: Path, pattern: str) -> Path:
    """A bare origin whose main branch's LOOP.md has a master section redacting
    ``pattern``, and three more branches (one nested)."""
    work = tmp_path / "seed"
    work.mkdir()
    git(work, "init", "-q")
    master = Master(repository="octo/app", scope=Scope(redact=(pattern,)))
    (work / LOOP_PATH).parent.mkdir(parents=True)
    (work / LOOP_PATH).write_text(f"# Loop\n\n{render_master(master)}")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "spine")
    for branch in ("feature/deep/x", "zeta", "Alpha"):
        git(work, "branch", branch)
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(origin))
    return origin


def counting_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` is the real one, started through a script that notes
    each start in a file first (so a test can say how many a command started)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    starts = tmp_path / "git-starts"
    script = bin_dir / "git"
    script.write_text(f'#!/bin/sh\necho "$*" >> {starts}\nexec {GIT} "$@"\n')
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}  # fmt: skip
    for name in ("GIT_DIR", "GIT_COMMON_DIR", "GIT_NAMESPACE"):
        env.pop(name, None)
    return env, starts


def redact_in(clone: Path, env: dict[str, str], text: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "relay.cli", "redact"],
        input=text.encode(), cwd=clone, env=env, capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.decode()


def test_refs_read_from_files_are_what_git_says(tmp_path: Path) -> None:
    origin = origin_with_spine(tmp_path, "corp-[0-9]+")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    refs = _read_refs(clone)
    assert refs is not None and (refs.head, refs.remote) == what_git_says(clone)
    assert refs.remote == ("Alpha", "HEAD", "feature/deep/x", "main", "zeta")

    git(clone, "pack-refs", "--all")  # every ref in packed-refs now, a new one loose
    git(clone, "update-ref", "refs/remotes/origin/loose-one", "HEAD")
    git(clone, "checkout", "-q", "-b", "topic")
    refs = _read_refs(clone)
    assert refs is not None and (refs.head, refs.remote) == what_git_says(clone)
    assert "loose-one" in refs.remote and "zeta" in refs.remote and refs.head == "topic"

    git(clone, "checkout", "-q", "--detach")
    refs = _read_refs(clone)
    assert refs is not None and (refs.head, refs.remote) == what_git_says(clone)
    assert refs.head == ""

    tree = tmp_path / "tree"  # a worktree: HEAD of its own, the refs of the clone
    git(clone, "worktree", "add", "-q", "-b", "other", str(tree))
    refs = _read_refs(tree)
    assert refs is not None and (refs.head, refs.remote) == what_git_says(tree)
    assert refs.head == "other"


def test_the_branch_a_pass_reads_from_files_is_what_git_says(tmp_path: Path) -> None:
    """``Clone.current_branch`` reads the files where they say what ``git rev-parse
    --abbrev-ref HEAD`` would (a packed branch, a loose one, a detached HEAD); an unborn
    branch is git's to answer (it fails: HEAD names no commit)."""
    import git as gitpython

    from relay.edges.git import Clone

    origin = origin_with_spine(tmp_path, "corp-[0-9]+")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "pack-refs", "--all")
    for step, expected in ((("checkout", "-q", "main"), "main"),
                           (("checkout", "-q", "-b", "topic"), "topic"),
                           (("checkout", "-q", "--detach"), "HEAD")):  # fmt: skip
        git(clone, *step)
        assert git(clone, "rev-parse", "--abbrev-ref", "HEAD").strip() == expected
        said = Clone.open(clone).current_branch()
        assert said == (None if expected == "HEAD" else expected)
    git(clone, "checkout", "-q", "--orphan", "fresh")
    refs = _read_refs(clone)
    assert refs is not None and refs.head == "fresh" and not refs.born
    with pytest.raises(gitpython.GitCommandError):
        Clone.open(clone).current_branch()


def test_a_branch_name_git_would_shorten_otherwise_is_left_to_git(tmp_path: Path) -> None:
    origin = origin_with_spine(tmp_path, "corp-[0-9]+")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "tag", "main")  # `git symbolic-ref --short` says heads/main now
    assert what_git_says(clone)[0] == "heads/main"
    assert _read_refs(clone) is None


def test_the_remote_section_is_read_with_git_and_none_is_started_without_a_remote(
    tmp_path: Path,
) -> None:
    env, starts = counting_git(tmp_path)
    origin = origin_with_spine(tmp_path, "corp-[0-9]+")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    # the working file says otherwise: the remote's section is the one that counts
    (clone / LOOP_PATH).write_text("# Loop\n\nnothing here\n")
    assert redact_in(clone, env, "ticket corp-4242 done\n") == "ticket [redacted:scope-1] done\n"
    # one process: the spine's files at origin/HEAD's commit (read from the clone's refs)
    assert starts.read_text().splitlines() == ["cat-file --batch"]

    starts.unlink()
    alone = tmp_path / "alone"  # a clone with no remote: its own file, and no git at all
    git(tmp_path, "clone", "-q", str(origin), str(alone))
    git(alone, "remote", "remove", "origin")
    assert redact_in(alone, env, "ticket corp-4242 done\n") == "ticket [redacted:scope-1] done\n"
    assert not starts.exists()
