"""The work tree as the loop works it: what a goal changed, a candidate commit made without
moving the branch, a fresh worktree of it, and putting back exactly what a goal changed.

Ground rules: a goal's changes are the tracked paths that differ from HEAD and the
untracked, unignored files that were not there when the goal began; only those are ever
reverted, so a person's own untracked files survive. The candidate commit is written
through a private index, so the branch and the real index do not move until the change
is kept.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from relay.edges.git import Clone


class WorkTree:
    """A clone's work tree, for the loop."""

    def __init__(self, clone: Clone) -> None:
        self.clone = clone
        self.root = clone.root

    @classmethod
    def open(cls, path: Path) -> WorkTree:
        """The work tree of the clone holding ``path``; ConfigError when there is none."""
        return cls(Clone.open(path))

    def head(self) -> str:
        """The commit checked out."""
        return self.clone.head_sha()

    def has_commits(self) -> bool:
        """Whether the branch has a commit at all."""
        try:
            self.clone.local("rev-parse", "--verify", "-q", "HEAD")
        except Exception:
            return False
        return True

    def untracked(self) -> list[str]:
        """Untracked files git does not ignore."""
        out = self.clone.local("ls-files", "--others", "--exclude-standard", "-z")
        return sorted(p for p in out.split("\0") if p)

    def tracked_changes(self) -> list[str]:
        """Tracked paths whose index or work tree differs from HEAD (deleted ones too)."""
        out = self.clone.local("diff", "--name-only", "--no-renames", "-z", "HEAD")
        return sorted(p for p in out.split("\0") if p)

    def changes(self, untracked_at_start: Sequence[str]) -> list[str]:
        """What the goal changed: tracked paths off HEAD and files it created."""
        keep = set(untracked_at_start)
        created = [p for p in self.untracked() if p not in keep]
        return sorted({*self.tracked_changes(), *created})

    def in_head(self, path: str) -> bool:
        """Whether ``path`` is a file of HEAD."""
        try:
            self.clone.local("cat-file", "-e", f"HEAD:{path}")
        except Exception:
            return False
        return True

    def revert(self, paths: Sequence[str]) -> None:
        """Put ``paths`` back as HEAD has them: restore what HEAD holds, delete the rest
        (and the directories that deleting left empty)."""
        known = [p for p in paths if self.in_head(p)]
        created = [p for p in paths if p not in known]
        if known:
            self.clone.local("restore", "--source=HEAD", "--staged", "--worktree", "--", *known)
        if created:
            self.clone.local("rm", "--cached", "-q", "--ignore-unmatch", "-r", "--", *created)
        for path in created:
            full = self.root / path
            if full.is_dir() and not full.is_symlink():
                shutil.rmtree(full)
            else:
                full.unlink(missing_ok=True)
            self._prune_empty(full.parent)

    def _prune_empty(self, directory: Path) -> None:
        root = self.root.resolve()
        while directory.resolve() != root and directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()
            directory = directory.parent

    def undo_commits_since(self, base: str) -> bool:
        """If something committed on top of ``base`` (a maker must not), move the branch back
        keeping the changes in the tree; whether it did."""
        if self.head() == base:
            return False
        self.clone.local("reset", "--soft", base)
        self.clone.local("reset", "-q")
        return True

    def candidate(self, paths: Sequence[str], message: str) -> str:
        """A commit of HEAD plus ``paths`` as the tree has them, off the branch."""
        with tempfile.TemporaryDirectory(prefix="relay-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.clone.local("read-tree", "HEAD", env=env)
            if paths:
                self.clone.local("add", "-A", "--", *paths, env=env)
            tree = self.clone.local("write-tree", env=env).strip()
        return self.clone.local(
            "commit-tree", tree, "-p", "HEAD", "-m", message, identity=True
        ).strip()

    def tree_of(self, commit: str) -> str:
        """The tree object ``commit`` records."""
        return self.clone.local("rev-parse", f"{commit}^{{tree}}").strip()

    def diff(self, commit: str) -> str:
        """The diff from HEAD to ``commit``."""
        return self.clone.local("diff", "--no-color", "HEAD", commit)

    def changed_in(self, commit: str) -> list[str]:
        """The paths ``commit`` changes against HEAD."""
        out = self.clone.local("diff", "--name-only", "--no-renames", "-z", "HEAD", commit)
        return sorted(p for p in out.split("\0") if p)

    def show(self, commit: str, path: str) -> str | None:
        """A file's text at ``commit``, or None when it has no such file."""
        try:
            return self.clone.local("show", f"{commit}:{path}")
        except Exception:
            return None

    @contextlib.contextmanager
    def fresh(self, commit: str) -> Iterator[Path]:
        """A fresh worktree of ``commit`` outside the clone, removed afterwards."""
        parent = Path(tempfile.mkdtemp(prefix="relay-verify-"))
        where = parent / "tree"
        self.clone.local("worktree", "add", "--detach", "-q", str(where), commit)
        try:
            yield where
        finally:
            with contextlib.suppress(Exception):
                self.clone.local("worktree", "remove", "--force", str(where))
            shutil.rmtree(parent, ignore_errors=True)
            with contextlib.suppress(Exception):
                self.clone.local("worktree", "prune")

    def commit(self, paths: Sequence[str], message: str) -> str | None:
        """Commit exactly ``paths`` (new, changed or deleted); the sha, None if unchanged."""
        if not paths:
            return None
        present = [p for p in paths if (self.root / p).exists() or self.in_head(p)]
        info = self.clone.commit(present, message) if present else None
        return None if info is None else info.sha

    def push(self) -> None:
        """Push the branch (only when the contract authorises it)."""
        self.clone.push()
