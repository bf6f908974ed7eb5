"""Helpers for the edge tests: real git commands and a bare remote with two clones."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


def git(cwd: Path, *args: str) -> str:
    """Run git for real and return its stdout."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


@dataclass(frozen=True)
class Remote:
    """A bare repository acting as the remote, and two clones of it (two nodes)."""

    bare: Path
    a: Path
    b: Path


def clone(bare: Path, dest: Path, *, name: str | None) -> Path:
    """Clone ``bare`` into ``dest``, with a git identity unless ``name`` is None."""
    git(bare.parent, "clone", "-q", str(bare), str(dest))
    if name is not None:
        git(dest, "config", "user.name", name)
        git(dest, "config", "user.email", f"{name}@example.invalid")
    return dest


def commit_file(repo: Path, name: str, text: str, message: str) -> str:
    """Write, commit (by plain git) and return the new head sha."""
    (repo / name).write_text(text)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")
