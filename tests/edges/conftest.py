"""Fixtures for the edge tests: real git repositories (a bare remote and two clones)."""

from __future__ import annotations

from pathlib import Path

import pytest
from edges_helpers import Remote, clone, commit_file, git


@pytest.fixture
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the machine's git config (identity, hooks) out of the test's git commands."""
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GIT_COMMITTER_EMAIL", raising=False)
    return empty


@pytest.fixture
def remote(tmp_path: Path, isolated_git: Path) -> Remote:
    """A bare ``main`` with one commit, cloned twice (alice and bob)."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    a = clone(bare, tmp_path / "a", name="alice")
    git(a, "symbolic-ref", "HEAD", "refs/heads/main")
    commit_file(a, "README.md", "hello\n", "first")
    git(a, "push", "-q", "origin", "HEAD:refs/heads/main")
    git(a, "branch", "-q", "--set-upstream-to=origin/main")
    b = clone(bare, tmp_path / "b", name="bob")
    return Remote(bare=bare, a=a, b=b)
