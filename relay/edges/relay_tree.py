"""relay's own worktree in a clone: where relay commits and where a worker's steps run.

A person's working clone is theirs: uncommitted edits, unpushed commits, another branch
checked out. relay keeps a linked worktree of its own under the clone's git directory
(``.git/relay/worktree``, made with ``git worktree add``; it shares the clone's objects,
remotes and config) and works only there, detached at the remote's commit:

- **publishing** (logs, the node table, the handover): check out the branch's remote tip
  (as a fetch of moments ago, the command's own, left it), apply each edit to the file as
  that commit stores it, commit the results byte for byte (no attribute of the tree, which
  any pusher writes, converts them), push. A push rejected because another node pushed
  first is not
  rebased: the remote is fetched and the edits are applied again on the fresh tip (an edit
  is a function of the file's current text, so two joins each add their row);
- **steps**: check out the commit or branch the TASK names and run there.

relay resets this tree freely (``checkout --force``, ``clean``): nothing in it is anyone's.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from relay.edges.files import private_dir
from relay.edges.git import Clone, CommitInfo, Rejected
from relay.edges.local import git_dir
from relay.errors import ConfigError, Conflict

Edit = Callable[[str | None], str]
PUBLISH_ATTEMPTS = 8
# A publish's first try takes the remote's refs as a fetch this recent left them (the
# command's own, as it started): a push they miss is rejected, and the next try fetches
RECENT_FETCH = 5.0  # seconds


class RelayTree:
    """relay's own worktree of one clone."""

    def __init__(self, clone: Clone) -> None:
        self.clone = clone
        self.path = git_dir(clone.root) / "relay" / "worktree"
        self._tree: Clone | None = None

    def tree(self) -> Clone:
        """The worktree as a clone (created on first use, re-created when broken), with the
        clone's credentials."""
        if self._tree is not None:
            return self._tree
        if not self._linked_here():
            with contextlib.suppress(Exception):
                self.clone.local("worktree", "prune")
            if self.path.exists():
                shutil.rmtree(self.path)
            private_dir(self.path.parent)  # the node's state directory: 0700
            try:
                self.clone.local("worktree", "add", "--detach", "--force", str(self.path), "HEAD")
            except Exception as exc:
                raise ConfigError(
                    f"cannot make relay's worktree at {self.path}: {str(exc).strip()[-200:]}",
                    hint="the clone needs a first commit; commit and push one",
                ) from None
        tree = Clone.open(self.path)
        tree.token, tree.token_scope = self.clone.token, self.clone.token_scope
        self._tree = tree
        return tree

    def _linked_here(self) -> bool:
        """The worktree is this clone's: its ``.git`` file names an administrative folder
        whose own ``gitdir`` names this ``.git`` file back. A clone copied whole (``cp -r``)
        brings the folder of the clone it was copied from, still linked to that clone's
        repository: used as it is, a pass of the copy would fetch into and check out from
        the other clone's objects (read with the files alone: no git process a pass)."""
        dot = self.path / ".git"
        try:
            text = dot.read_text(encoding="utf-8").strip()
            admin = Path(text.removeprefix("gitdir:").strip())
            back = Path((admin / "gitdir").read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return False
        return text.startswith("gitdir:") and back.resolve() == dot.resolve()

    def remote_tip(
        self, branch: str, *, remote: str = "origin", recent: bool = False
    ) -> str | None:
        """Fetch ``remote`` (unless ``recent`` and this process fetched it moments ago); the
        commit its ``branch`` points at, None when it has none."""
        tree = self.tree()
        if not (recent and tree.fetched_within(RECENT_FETCH, remote)):
            tree.fetch(remote)
        return tree.ref_sha(f"refs/remotes/{remote}/{branch}")

    def check_out(self, rev: str) -> Path:
        """Put the tree at ``rev`` (detached), dropping the tracked edits and untracked files
        a run left in it (ignored ones, build caches, stay); its path."""
        tree = self.tree()
        tree.local("checkout", "-q", "--detach", "--force", rev)
        tree.local("clean", "-q", "-fd")
        return self.path

    def on_branch(self, branch: str, tip: str) -> Path:
        """Put the tree on ``branch`` at ``tip`` for a TASK's steps (which may ask which
        branch they are on): the local branch is made or fast-forwarded there when that
        loses nothing; when it holds commits of its own, or the person has it checked out,
        the tree stays detached at ``tip``. :meth:`release` lets the branch go again."""
        self.check_out(tip)
        tree = self.tree()
        try:
            local = tree.local("rev-parse", "--verify", "-q", f"refs/heads/{branch}").strip()
        except Exception:
            local = None
        if local is not None and local != tip:
            try:
                tree.local("merge-base", "--is-ancestor", local, tip)
            except Exception:
                return self.path  # the branch has work of its own: leave it be
        with contextlib.suppress(Exception):  # checked out elsewhere: stay detached
            tree.local("checkout", "-q", "-B", branch, tip)
        return self.path

    def release(self) -> None:
        """Detach the tree, so a branch a TASK ran on may be checked out by the person."""
        if self._tree is not None:
            with contextlib.suppress(Exception):
                self._tree.local("checkout", "-q", "--detach")

    def at_branch(
        self, branch: str, *, base: str | None = None, remote: str = "origin", recent: bool = False
    ) -> str:
        """Fetch and check out ``remote``'s ``branch`` (``base``'s commit when the branch
        does not exist yet: a new data branch starts there); the commit checked out.
        ``recent``: a fetch this process made moments ago stands for the fetch."""
        tip = self.remote_tip(branch, remote=remote, recent=recent)
        if tip is None:
            start = self.remote_tip(base, remote=remote, recent=True) if base else None
            if start is None:
                raise ConfigError(
                    f"the remote has no branch {branch!r}",
                    hint="push it, or name an existing branch",
                )
            tip = start
        self.check_out(tip)
        return tip

    def publish(
        self,
        edits: Mapping[Path, Edit],
        message: str,
        *,
        branch: str,
        base: str | None = None,
        attempts: int = PUBLISH_ATTEMPTS,
        files: Mapping[Path, bytes] | None = None,
    ) -> CommitInfo | None:
        """Apply ``edits`` (paths relative to the repository) to the files as the branch's
        remote tip stores them and commit the results and ``files`` (their bytes) exactly
        as given (:meth:`Clone.commit_bytes`: the tree's attributes convert nothing), then
        push; on a rejected push apply them again on the new tip. None when nothing
        changes. The clone's git lock is held throughout."""
        with self.clone.git_lock:
            for attempt in range(attempts):
                self.at_branch(branch, base=base, recent=attempt == 0)
                tree = self.tree()
                staged: dict[str, bytes] = {}
                for path, edit in edits.items():
                    was = tree.at_head(path.as_posix())
                    old = was.decode("utf-8") if was is not None else None
                    new = edit(old)
                    if new != old:
                        staged[path.as_posix()] = new.encode("utf-8")
                for path, data in (files or {}).items():
                    if tree.at_head(path.as_posix()) != data:
                        staged[path.as_posix()] = data
                if not staged:
                    return None
                info = tree.commit_bytes(staged, message, fetched=True)  # by at_branch
                if info is None:
                    return None
                # the files as the commit has them (only the index had them), so a next
                # task's check for files it left modified does not find these
                tree.local("checkout", "-q", "--detach", "--force", "HEAD")
                try:
                    tree.push_head(branch)
                except Rejected:
                    continue  # another node pushed first: apply the edits on its commit
                return info
        raise Conflict(
            f"publishing to {branch} was rejected {attempts} times because other nodes kept"
            " pushing first; run the command again"
        )
