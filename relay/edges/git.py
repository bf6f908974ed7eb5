"""The git edge: the clone relay works in, through GitPython.

Ground rules: relay never stashes, resets, rebases or force-pushes a person's work. A
person's clone is only fetched and fast-forwarded when git allows it with their edits in
place (:meth:`Clone.refresh`); relay's own commits happen in its own worktree. Clones
that are relay's alone (the build loop's) pull with ``--rebase --no-autostash`` (a dirty
one is refused with a clear message, a conflicting rebase is aborted), commit only the
paths written and push without force; a rejected push is rebased and retried a bounded
number of times. Network commands never prompt for credentials.

Credentials: over http(s), the token relay acts with reaches git through the environment,
scoped to the clone's own origin (``credential_env``): the node's token (any of its
routes, a GitHub App's installation token included) when a node context opened the clone
and the origin is on its API's host, else ``RELAY_TOKEN``. Git's own credential helpers
still apply when relay has no token; ssh and path remotes get none.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from relay.edges.ownpath import own_argv, program
from relay.errors import ConfigError, Conflict, RelayError, RemoteUnavailable

FALLBACK_NAME = "relay"
FALLBACK_EMAIL = "relay@localhost"
PUSH_ATTEMPTS = 5
NETWORK_TIMEOUT = 120.0  # seconds for one pull/push/fetch
# When this process last fetched each repository's remote whole (its git directory, the
# remote's name; a monotonic time): a publish a moment after a command's own fetch takes the
# refs that fetch left as the remote's, since a push they miss is rejected and the publish
# then fetches before it tries again (one fetch per command, not one per step of it)
_FETCHED: dict[tuple[Path, str], float] = {}
# What each repository's config gave this process (the origin's URL, relay's data
# branch), by its git directory and what was read: when (a monotonic time), the config
# files' bytes then, the value. A command's clones and relay's worktree read each once
# (Clone._read_once)
_CONFIG_READS: dict[tuple[Path, str], tuple[float, bytes, str | None]] = {}
RECENT_CONFIG = 5.0  # seconds
_NO_PROMPT = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
# A command after which git starts no housekeeping of its own (``git maintenance run
# --auto``, a process each time): given to the merge and the commit a fetch of the same
# command came just before, whose own ``maintenance run --auto`` keeps the clone as git
# keeps it (the objects they add are counted by the next pass's fetch)
NO_HOUSEKEEPING = ("-c", "maintenance.auto=false", "-c", "gc.auto=0")
_REJECTED = ("[rejected]", "non-fast-forward", "fetch first", "stale info",
             "cannot lock ref", "failed to update ref", "incorrect old value")  # fmt: skip
# (the last three: another push moved the branch while the server took this one)
_NEEDS_CREDENTIALS = ("could not read Username", "Authentication failed", "terminal prompts")
F = TypeVar("F", bound=Callable[..., Any])
_SCP_LIKE = re.compile(r"^(?:[\w.+-]+@)?(?P<host>[\w.-]+):(?P<path>[^/\\].*)$")


def credential_env(
    environ: Mapping[str, str] | None = None,
    *,
    token: str | None = None,
    url: str | None = None,
) -> dict[str, str]:
    """Git settings that authenticate HTTPS git with a token, passed through the environment
    (never the command line, where other users could read it).

    With ``token`` and ``url``, the header goes only to remotes under ``url`` (git's
    ``http.<url>.extraHeader``). Otherwise ``RELAY_GIT_TOKEN``, or inside GitHub Actions
    ``GITHUB_TOKEN`` (the relay-node workflow checks out without persisting credentials, as
    it should), goes to every remote.
    """
    env = os.environ if environ is None else environ
    key = "http.extraheader"
    if token and url:
        key = f"http.{url}.extraheader"
    else:
        token = env.get("RELAY_GIT_TOKEN") or (
            env.get("GITHUB_TOKEN") if env.get("GITHUB_ACTIONS") == "true" else None
        )
    if not token:
        return {}
    import base64

    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    count = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    return {
        "GIT_CONFIG_COUNT": str(count + 1),
        f"GIT_CONFIG_KEY_{count}": key,
        f"GIT_CONFIG_VALUE_{count}": f"AUTHORIZATION: basic {basic}",
    }


def origin_prefix(url: str) -> str | None:
    """``scheme://host[:port]/`` of an http(s) remote URL (no user, no path); None for any
    other kind of remote (a path, ssh, scp-like), which gets no token from relay."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}/"


def _env_token() -> str | None:
    return os.environ.get("RELAY_TOKEN") or None


@dataclass(frozen=True)
class RepoSlug:
    """A repository's ``owner/name`` as the API spells it."""

    owner: str
    name: str

    def __str__(self) -> str:
        return f"{self.owner}/{self.name}"

    @classmethod
    def parse(cls, text: str) -> RepoSlug:
        """Parse ``OWNER/NAME``; ConfigError if it is not that shape."""
        parts = text.strip().split("/")
        if len(parts) != 2 or not all(re.fullmatch(r"[\w.-]+", p) for p in parts):
            raise ConfigError(f"{text!r} is not OWNER/NAME; pass --repo OWNER/NAME")
        return cls(parts[0], parts[1])


@dataclass(frozen=True)
class CommitInfo:
    """A commit relay made; ``fallback_identity`` says no git identity was configured."""

    sha: str
    fallback_identity: bool


def parse_remote_url(url: str) -> RepoSlug | None:
    """owner/name from an https, ssh or scp-like remote URL; None for local paths."""
    url = url.strip()
    if "://" in url:
        scheme, _, rest = url.partition("://")
        if scheme == "file":
            return None
        path = rest.split("/", 1)[1] if "/" in rest else ""
    elif (match := _SCP_LIKE.match(url)) and not re.fullmatch(r"[A-Za-z]", match["host"]):
        path = match["path"]  # a one-letter host is a Windows drive (C:\...), not scp
    else:
        return None
    parts = [p for p in path.split("/") if p]
    if len(parts) != 2:
        return None
    owner, name = parts[0], parts[1].removesuffix(".git")
    return RepoSlug(owner, name) if owner and name else None


def _serialised(method: F) -> F:
    """Hold the clone's git lock for the call: two relay processes in one clone (a verb and
    a scheduled pass) must not pull or push at the same time. Re-entrant per Clone."""

    @functools.wraps(method)
    def locked(self: Clone, *args: Any, **kwargs: Any) -> Any:
        with self.git_lock:
            return method(self, *args, **kwargs)

    return cast(F, locked)


class Clone:
    """A working clone; every operation runs git in it through GitPython."""

    def __init__(self, repo: Any) -> None:
        self.repo = repo
        self.root = Path(repo.working_tree_dir)
        self._git_lock: Any = None
        # what git sends over http(s): the token (asked at each network command) and the
        # host it is for (None: the origin's, whatever it is; elsewhere RELAY_TOKEN goes)
        self.token: Callable[[], str | None] = _env_token
        self.token_scope: str | None = None
        self._origin: str | None = None
        # the host the last network command went to, and whether it carried a token
        self._host: tuple[str, bool] | None = None
        self._identity: dict[str, str] | None = None  # user.name and .email, read once

    @property
    def git_lock(self) -> Any:
        """The clone's lock file for git writes (waits up to the network timeout)."""
        if self._git_lock is None:
            from filelock import FileLock

            from relay.edges.files import private_file
            from relay.edges.statefile import git_dir

            path = git_dir(self.root) / "relay" / "git.lock"
            private_file(path)  # 0600 in the node's 0700 state: no other account holds it
            self._git_lock = FileLock(path, timeout=NETWORK_TIMEOUT * 2, mode=0o600)
        return self._git_lock

    @classmethod
    def open(cls, path: Path) -> Clone:
        """Open the clone containing ``path``; ConfigError when there is none."""
        import git

        try:
            repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise ConfigError(f"{path} is not inside a git clone; run relay in a clone") from exc
        if repo.bare:
            raise ConfigError(f"{path} is a bare repository; run relay in a working clone")
        return cls(repo)

    @classmethod
    def open_local(cls, path: Path) -> Clone:
        """The clone containing ``path``, its commands run as plain git processes, without
        loading GitPython (tenths of a CPU-second an iteration of the build loop, with the
        processes it starts to learn git's version; some 40 ms of a verb that fetches
        first): the network's too, bounded as GitPython bounds them. Anything but a plain
        work tree is opened as :meth:`open` opens it (and refused as it refuses it)."""
        if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
            return cls.open(path)  # (git would take the folder named for the tree's top)
        top = _TOPS.get(path)
        if top is None:
            try:
                top = _learn_dirs(path)
                if top is None:
                    done = subprocess.run(
                        own_argv(["git", "rev-parse", "--show-toplevel"]),
                        cwd=path,
                        capture_output=True,
                        env={**os.environ, **_PLAIN, **_NO_PROMPT},
                        check=False,
                    )
                    said = done.stdout.decode(_ENCODING, "surrogateescape").strip()
                    top = Path(said) if done.returncode == 0 and said else None
            except OSError:  # no git (said by GitPython's import), or no such folder
                return cls.open(path)
            if top is None:
                return cls.open(path)
            _TOPS[path] = top
        return cls(LocalRepo(top))

    def _git(self, *args: str, network: bool = False) -> str:
        """Run one git command; network commands get a timeout, never prompt and carry the
        token for the origin."""
        if network:  # one way for every clone: bounded, and its helpers go with it
            # (GitPython's own environment for the repository first: the absolute GIT_DIR
            # it sets when one is exported, else git would work in another repository)
            env = {**self.repo.git.environment(), **_NO_PROMPT, **self._credentials()}
            return _LocalGit(self.root).execute(
                ["git", *args], env=env, kill_after_timeout=NETWORK_TIMEOUT
            )
        return str(self.repo.git.execute(["git", *args], env=_NO_PROMPT))

    def local(
        self, *args: str, env: Mapping[str, str] | None = None, identity: bool = False
    ) -> str:
        """Run one local git command (never the network, never a prompt) with ``env`` on top
        of the environment, for the edges that work the tree itself (``worktree.py``);
        ``identity`` supplies relay's fallback name for commands that write commits."""
        extra: dict[str, Any] = {"env": {**_NO_PROMPT, **(env or {})}}
        extra["strip_newline_in_stdout"] = False
        who = self._identity_args() if identity else []
        return str(self.repo.git.execute(["git", *who, *args], **extra))

    def _credentials(self) -> dict[str, str]:
        """The git environment that authenticates this clone's network commands."""
        self._host = None
        explicit = credential_env()
        if explicit:
            return explicit
        if self._origin is None:
            # whatever it says, the token goes only to the host it names, git to the URL
            # in the config
            self._origin = self._read_once("origin", self.remote_url) or ""
        prefix = origin_prefix(self._origin)
        if prefix is None:
            return {}
        scoped = not self.token_scope or prefix == origin_prefix(self.token_scope)
        token = self.token() if scoped else _env_token()
        self._host = (prefix.rstrip("/"), bool(token))
        return credential_env(token=token, url=prefix) if token else {}

    def _read_once(self, name: str, read: Callable[[], str | None]) -> str | None:
        """What ``read()`` (a read of the config: ``name`` says which) gave this process
        moments ago for this repository with its config files byte for byte as they are
        now, and git's configuration variables of the environment as they are (a command's
        clones and worktree, each opened on its own, share them; `git remote set-url` or
        `git config` changes them, and it is read again), else what it gives now."""
        from relay.edges.statefile import git_dir

        common = self.common_dir()
        try:
            own = git_dir(self.root) / "config.worktree"
            config = (
                (common / "config").read_bytes()
                + b"\0"
                + (own.read_bytes() if own.is_file() else b"")
                + repr(sorted((k, v) for k, v in os.environ.items() if "CONFIG" in k)).encode()
            )
        except OSError:
            return read()
        at, seen, value = _CONFIG_READS.get((common, name), (0.0, b"", None))
        if seen != config or time.monotonic() - at >= RECENT_CONFIG:
            value = read()
            _CONFIG_READS[(common, name)] = (time.monotonic(), config, value)
        return value

    def remote_url(self, remote: str = "origin") -> str | None:
        """The fetch URL of ``remote``, or None when it is not configured."""
        try:
            return self._git("remote", "get-url", remote).strip()
        except _git_error() as exc:
            if "No such remote" in str(exc):
                return None
            raise

    def remote_slug(self, remote: str = "origin") -> RepoSlug | None:
        """owner/name of the remote, or None when it is missing or a local path."""
        url = self.remote_url(remote)
        return None if url is None else parse_remote_url(url)

    def head_sha(self) -> str:
        """The commit checked out now (from the clone's files where they say what git
        would: a pass asks after each commit)."""
        from relay.edges.refs import head_object

        return head_object(self.root) or self._git("rev-parse", "HEAD").strip()

    def ref_sha(self, name: str) -> str | None:
        """The commit the full ref ``name`` points at (from the clone's files where they
        say what git would), None when there is no such ref."""
        from relay.edges.refs import ref_object

        found = ref_object(self.root, name)
        if found is not None:
            return found[1]
        try:
            return self._git("rev-parse", "--verify", "-q", name).strip() or None
        except _git_error():
            return None

    def current_branch(self) -> str | None:
        """The checked-out branch, or None on a detached HEAD (from the clone's files where
        they say what git would, as a pass asks this several times)."""
        from relay.edges.refs import read_refs

        refs = read_refs(self.root)
        if refs is not None and refs.born:
            return refs.head or None
        name = self._git("rev-parse", "--abbrev-ref", "HEAD").strip()
        return None if name == "HEAD" else name

    def dirty_paths(self) -> list[str]:
        """Tracked paths with uncommitted changes (untracked files are not counted)."""
        out = self._git("status", "--porcelain", "--untracked-files=no")
        return [line[3:] for line in out.splitlines() if line.strip()]

    def fetch(self, remote: str = "origin") -> None:
        """Fetch ``remote``; RemoteUnavailable when it cannot be reached."""
        self._network("fetch", "--prune", remote)
        _FETCHED[(self.common_dir(), remote)] = time.monotonic()

    def fetched_within(self, seconds: float, remote: str = "origin") -> bool:
        """Whether this process fetched ``remote`` whole into this repository (this clone or
        a worktree of it) less than ``seconds`` ago."""
        at = _FETCHED.get((self.common_dir(), remote))
        return at is not None and time.monotonic() - at < seconds

    def common_dir(self) -> Path:
        """The git directory this clone shares with its worktrees (where the remote's refs
        are kept), read from the files git leaves, not from git."""
        from relay.edges.statefile import git_dir

        own = git_dir(self.root)
        shared = own / "commondir"
        if not shared.is_file():
            return own.resolve()
        return (own / shared.read_text(encoding="utf-8").strip()).resolve()

    @_serialised
    def refresh(self, remote: str = "origin") -> bool:
        """Fetch ``remote`` (every branch: commands read the spine at its tip, or at relay's
        data branch), then move the person's branch forward only by a fast-forward git
        allows with their edits in place. Never rebases, stashes or refuses: a clone with
        commits of its own, or edits the move would touch, stays as it is. Whether it moved.
        """
        self.fetch(remote)
        branch = self.current_branch()
        if branch is None:
            return False
        upstream = f"refs/remotes/{remote}/{branch}"
        from relay.edges.refs import head_object, ref_object

        here, found = head_object(self.root), ref_object(self.root, upstream)
        try:  # else one process for both; it fails when the remote has no such branch
            if here is not None and found is not None:
                there = found[1]
            else:
                here, there = self._git("rev-parse", "HEAD", upstream).split()
            if here == there:
                return False
            self._git("merge-base", "--is-ancestor", "HEAD", upstream)
            self._git(*NO_HOUSEKEEPING, "merge", "--ff-only", "-q", upstream)  # fetched just now
        except _git_error():
            return False
        return True

    @_serialised
    def pull_rebase(self, remote: str = "origin", branch: str | None = None) -> None:
        """Bring the branch up to date by rebasing onto the remote, never stashing.

        Raises ConfigError on a dirty clone, Conflict on a conflicting rebase (aborted).
        """
        branch = branch or self._branch_or_fail()
        data = self.data_branch()
        if data and data != branch:  # relay's own branch: its tracking ref is what relay reads
            with contextlib.suppress(RemoteUnavailable, ConfigError):
                self._network("fetch", remote, f"+refs/heads/{data}:refs/remotes/{remote}/{data}")
        dirty = self.dirty_paths()
        if dirty:
            self._fast_forward_dirty(remote, branch, dirty)
            return
        try:
            self._network("pull", "--rebase", "--no-autostash", remote, branch)
        except Conflict:
            self._abort_rebase()
            raise

    def _fast_forward_dirty(self, remote: str, branch: str, dirty: list[str]) -> None:
        """Bring a clone with uncommitted edits up to date without touching them: only a
        fast-forward (no local commits) whose files the edits leave alone; git itself
        refuses to overwrite an edited file. ConfigError saying why otherwise."""
        refuse = (
            f"the clone at {self.root} has uncommitted changes ({', '.join(dirty[:3])})"
            " and {why}; relay will not stash them: commit them or use a clone of its own"
        )
        self._network("fetch", remote, branch)
        upstream = f"refs/remotes/{remote}/{branch}"
        try:
            self._git("merge-base", "--is-ancestor", "HEAD", upstream)
        except _git_error():
            raise ConfigError(refuse.format(why="commits the remote does not have")) from None
        try:
            self._git("merge", "--ff-only", "-q", upstream)
        except _git_error():
            raise ConfigError(refuse.format(why="the remote changed the same files")) from None

    def data_branch(self) -> str | None:
        """The branch relay commits to when it is not the checked-out one, as this clone
        recorded it from the master section (``relay.dataBranch`` in its git config)."""
        return self._read_once("relay.dataBranch", lambda: self._config("relay.dataBranch"))

    def record_data_branch(self, branch: str | None) -> None:
        """Remember relay's data branch in this clone's config (None: forget it)."""
        if branch:
            self._git("config", "relay.dataBranch", branch)
        elif self.data_branch():
            self._git("config", "--unset", "relay.dataBranch")

    def fast_forward(self, branch: str, remote: str = "origin") -> bool:
        """Move this clone to what relay just pushed to ``branch`` when it is on that
        branch and a fast-forward leaves a person's edits alone; False when it stays.
        (The publish before it fetched: git's housekeeping ran then.)"""
        if self.current_branch() != branch:
            return False
        try:
            with self.git_lock:
                upstream = f"refs/remotes/{remote}/{branch}"
                self._git(*NO_HOUSEKEEPING, "merge", "--ff-only", "-q", upstream)
        except _git_error():
            return False
        return True

    def push_head(self, branch: str, remote: str = "origin") -> None:
        """Push HEAD (a detached one too) to ``branch`` once; Rejected when another push
        came first."""
        self._network("push", remote, f"HEAD:refs/heads/{branch}")

    @_serialised
    def commit(
        self, paths: Sequence[Path | str], message: str, *, fetched: bool = False
    ) -> CommitInfo | None:
        """Commit exactly ``paths`` (added if new, even when ignored); None when unchanged.
        ``fetched``: the command fetched moments ago, and that fetch's housekeeping of git's
        stands for the commit's (see ``NO_HOUSEKEEPING``)."""
        rel = [self._relative(Path(p)) for p in paths]
        self._git("add", "--force", "--", *rel)  # a log is committed even if *.log is ignored
        if not self._git("diff", "--cached", "--name-only", "--", *rel).strip():
            return None
        identity = self._identity_args()
        quiet = NO_HOUSEKEEPING if fetched else ()
        self._git(*quiet, *identity, "commit", "-m", message, "--only", "--", *rel)
        return CommitInfo(sha=self.head_sha(), fallback_identity=bool(identity))

    def at_head(self, path: str) -> bytes | None:
        """The bytes of the file ``path`` as HEAD's commit stores it (no conversion of the
        tree's attributes applied); None when HEAD has no such file."""
        done = subprocess.run(
            [program("git"), "cat-file", "blob", f"HEAD:{path}"],
            cwd=self.root, env={**os.environ, **_NO_PROMPT}, capture_output=True, check=False,
        )  # fmt: skip
        return done.stdout if done.returncode == 0 else None

    def commit_bytes(
        self, files: Mapping[str, bytes], message: str, *, fetched: bool = False
    ) -> CommitInfo | None:
        """Commit ``files`` (repository path: bytes) on HEAD exactly as given: each is
        hashed from memory with ``hash-object --no-filters`` and put in the index, so no
        attribute a pusher commits (an end-of-line conversion, a working-tree encoding, a
        filter) changes what relay wrote, and nothing is written through the working tree
        (a folder on the way that is a link leads nowhere). The index must be HEAD's (a
        forced checkout leaves it so). None when nothing changes; OSError when a file or
        folder of the commit is in the way (nothing is committed)."""
        entries: list[str] = []
        for path, data in files.items():
            hashed = subprocess.run(
                [program("git"), "hash-object", "-w", "--no-filters", "--stdin"], cwd=self.root,
                env={**os.environ, **_NO_PROMPT}, input=data, capture_output=True, check=True,
            )  # fmt: skip
            entries += ["--cacheinfo", f"100644,{hashed.stdout.decode().strip()},{path}"]
        try:
            self._git("update-index", "--add", *entries)
        except _git_error() as exc:  # a file where a folder goes, or a folder where a file
            raise OSError(
                errno.EEXIST, f"a file or folder is in the way of {', '.join(files)}"
            ) from exc
        if not self._git("diff", "--cached", "--name-only").strip():
            return None
        identity = self._identity_args()
        quiet = NO_HOUSEKEEPING if fetched else ()
        self._git(*quiet, *identity, "commit", "-q", "--no-verify", "-m", message)
        return CommitInfo(sha=self.head_sha(), fallback_identity=bool(identity))

    @_serialised
    def push(
        self, remote: str = "origin", branch: str | None = None, *, attempts: int = PUSH_ATTEMPTS
    ) -> int:
        """Push the branch; on a rejected push pull --rebase and retry. Returns attempts used.

        Raises Conflict after ``attempts`` rejections and RemoteUnavailable when unreachable.
        """
        branch = branch or self._branch_or_fail()
        for attempt in range(1, attempts + 1):
            try:
                self._network("push", remote, f"HEAD:refs/heads/{branch}")
                return attempt
            except _Rejected:
                if attempt < attempts:
                    self.pull_rebase(remote, branch)
        raise Conflict(
            f"push to {remote}/{branch} was rejected {attempts} times because other nodes"
            " kept pushing first; run the command again"
        )

    @_serialised
    def commit_and_push(
        self, paths: Sequence[Path | str], message: str, *, remote: str = "origin"
    ) -> CommitInfo | None:
        """Commit ``paths`` and push them (retrying rejected pushes); None if unchanged.

        The sha returned is the pushed one, which differs from the local commit's when the
        push had to be rebased.
        """
        info = self.commit(paths, message)
        if info is None:
            return None
        self.push(remote)
        return CommitInfo(sha=self.head_sha(), fallback_identity=info.fallback_identity)

    def unpushed_subjects(self, remote: str = "origin") -> list[str]:
        """The subjects of the commits HEAD has and the remote's branch (as last fetched)
        does not, newest first."""
        branch = self._branch_or_fail()
        out = self._git("log", "--format=%s", f"refs/remotes/{remote}/{branch}..HEAD")
        return [line for line in out.splitlines() if line]

    def remote_has_commit(self, sha: str, remote: str = "origin") -> bool:
        """Whether a remote-tracking branch of ``remote`` (as last fetched) contains ``sha``."""
        try:
            out = self._git(
                "for-each-ref", "--contains", sha, "--format=%(refname)", f"refs/remotes/{remote}"
            )
        except _git_error():
            return False  # an unknown sha: the remote cannot have it as far as we know
        return bool(out.strip())

    @_serialised
    def commit_and_push_or_undo(
        self, paths: Sequence[Path | str], message: str, *, remote: str = "origin"
    ) -> CommitInfo | None:
        """Commit and push ``paths``; when the push fails, undo the commit and its edits.

        A commit left behind unpushed would be published later by an unrelated push, and
        would make a re-run believe its change is already out. ``reset --keep`` reverts
        only the files that commit changed. Re-raises the push's error.
        """
        head = self.head_sha()
        try:
            return self.commit_and_push(paths, message, remote=remote)
        except (Conflict, RemoteUnavailable, ConfigError):
            with contextlib.suppress(*_git_error()):
                self._git("reset", "-q", "--keep", head)
            raise

    def remote_sha(self, remote: str = "origin", branch: str | None = None) -> str:
        """The commit the remote's branch points at, as last fetched (a commit the remote
        has, unlike HEAD, which may hold a person's unpushed work)."""
        branch = branch or self._branch_or_fail()
        return self._git("rev-parse", f"refs/remotes/{remote}/{branch}").strip()

    @_serialised
    def checkout(self, branch: str, remote: str = "origin") -> None:
        """Fetch, then check out ``branch`` (created from ``remote``'s when only that exists)."""
        if self.dirty_paths():
            raise ConfigError(f"cannot check out {branch}: the clone at {self.root} is dirty")
        self.fetch(remote)
        try:
            self._git("checkout", branch)
        except _git_error() as exc:
            raise ConfigError(
                f"cannot check out branch {branch!r}: not found locally or on {remote}"
            ) from exc

    # --- helpers ---

    def _relative(self, path: Path) -> str:
        full = path if path.is_absolute() else self.root / path
        try:
            return full.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError as exc:
            raise ConfigError(f"{path} is outside the clone at {self.root}") from exc

    def _branch_or_fail(self) -> str:
        branch = self.current_branch()
        if branch is None:
            raise ConfigError(f"the clone at {self.root} is on a detached HEAD; check out a branch")
        return branch

    def _identity_args(self) -> list[str]:
        """``-c`` options for the parts of the git identity that are not configured."""
        args: list[str] = []
        wanted = (
            ("user.name", "GIT_AUTHOR_NAME", FALLBACK_NAME),
            ("user.email", "GIT_AUTHOR_EMAIL", FALLBACK_EMAIL),
        )
        if all(os.environ.get(env_name) for _, env_name, _ in wanted):
            return args
        if self._identity is None:  # one git process for both keys, once per clone
            self._identity = self._identity_config()
        configured = self._identity
        for key, env_name, fallback in wanted:
            if os.environ.get(env_name) or configured.get(key):
                continue
            args += ["-c", f"{key}={fallback}"]
        return args

    def _identity_config(self) -> dict[str, str]:
        """The configured ``user.name`` and ``user.email`` (the last value of each), read
        once for a command's clones (:meth:`_read_once`)."""

        def read() -> str | None:
            try:
                return self._git("config", "--get-regexp", r"^user\.(name|email)$")
            except _git_error():
                return None

        out = self._read_once("identity", read) or ""
        found: dict[str, str] = {}
        for line in out.splitlines():
            key, _, value = line.partition(" ")
            if value.strip():
                found[key.lower()] = value.strip()
        return found

    def _config(self, key: str) -> str | None:
        try:
            return self._git("config", "--get", key).strip() or None
        except _git_error():
            return None

    def _network(self, *args: str) -> None:
        """Run a command that talks to the remote and sort its failures into relay errors."""
        try:
            self._git(*args, network=True)
        except _git_error() as exc:
            if self._host and any(mark in str(exc) for mark in _NEEDS_CREDENTIALS):
                raise _credentials_refused(*self._host) from exc
            if self._host and self._host[1] and _not_found(str(exc)):
                raise self._no_access() from exc
            raise _classify(args[0], exc) from exc

    def _no_access(self) -> ConfigError:
        """A 404 from the remote to a request that carried a token: the repository exists
        for others, or not at all; either way this token cannot see it (GitHub answers a
        private repository's outsiders with the same 404)."""
        slug = parse_remote_url(self._origin or "")
        name = str(slug) if slug is not None else (_no_userinfo(self._origin) or "the remote")
        return ConfigError(
            f"the token has no access to {name}",
            hint=f"use a token of an account that can read {name} (RELAY_TOKEN), or check"
            " the remote's name (`git remote -v`)",
        )

    def _abort_rebase(self) -> None:
        with contextlib.suppress(*_git_error()):
            self._git("rebase", "--abort")


class Rejected(Exception):
    """A push the remote refused because it does not fast-forward."""


_Rejected = Rejected


def _no_userinfo(url: str | None) -> str | None:
    """``url`` without the user and password it may carry (``https://u:TOKEN@host/…``):
    what an error may say of a remote."""
    if not url or "@" not in url:
        return url
    parts = urlsplit(url)
    if not parts.scheme or parts.hostname is None:
        return url.rpartition("@")[2]  # scp-like ``user@host:path``: the host and path
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=host).geturl()


def _credentials_refused(host: str, sent: bool) -> ConfigError:
    """Git's 401 said as the API's is: no token (how to give one) or a token refused."""
    from relay.edges.github.credentials import MISSING_TOKEN
    from relay.edges.github.errors import rejected_token

    return rejected_token(host) if sent else ConfigError(MISSING_TOKEN.format(url=host))


_TOPS: dict[Path, Path] = {}  # the work tree a folder is in, asked of git once a process


@dataclass(frozen=True)
class GitDirs:
    """A work tree's git directories as git answered for it, in the process that found
    the work tree: ``--git-common-dir`` as git prints it from the work tree (None when it
    was asked from a folder inside, whose relative answer says nothing of the tree's),
    and the absolute ``--git-common-dir`` and ``--git-dir``."""

    common: str | None
    absolute_common: Path
    git_dir: Path


_DIRS: dict[Path, GitDirs] = {}  # by work tree, learned with it (per process)


def _learn_dirs(path: Path) -> Path | None:
    """The work tree holding ``path``, its git directories learned in the same git
    process (:func:`known_dirs`); None where git cannot say all of them in one answer (an
    older git, a path with a line break, anything but a work tree): asked apart then."""
    done = subprocess.run(
        own_argv(["git", "rev-parse", "--show-toplevel", "--git-common-dir",
                  "--path-format=absolute", "--git-common-dir", "--git-dir"]),
        cwd=path,
        capture_output=True,
        env={**os.environ, **_PLAIN, **_NO_PROMPT},
        check=False,
    )  # fmt: skip
    said = done.stdout.decode(_ENCODING, "surrogateescape").removesuffix("\n").split("\n")
    if done.returncode != 0 or len(said) != 4 or not all(said):
        return None
    top = Path(said[0])
    common = said[1] if os.path.isabs(said[1]) or Path(path) == top else None
    _DIRS[top] = GitDirs(common, Path(said[2]), Path(said[3]))
    return top


def known_dirs(top: Path) -> GitDirs | None:
    """The git directories of the work tree ``top`` where this process learned them when
    it found the tree (:meth:`Clone.open_local`): a run asks git once, not once a module."""
    return _DIRS.get(top)


_PLAIN = {"LANGUAGE": "C", "LC_ALL": "C"}  # git's messages in English, as GitPython asks
_ENCODING = sys.getfilesystemencoding()


class GitFailed(Exception):
    """A git command run without GitPython (:class:`LocalRepo`) that exited non-zero, with
    the fields and the text of GitPython's ``GitCommandError``, which the edges read."""

    def __init__(self, command: Sequence[str], status: int, stderr: str, stdout: str) -> None:
        self.command = list(command)
        self.status = status
        self.stderr = f"\n  stderr: '{stderr}'" if stderr else ""
        self.stdout = f"\n  stdout: '{stdout}'" if stdout else ""
        super().__init__(
            f"Cmd('git') failed due to: exit code({status})\n  cmdline: {' '.join(self.command)}"
            f"{self.stdout}{self.stderr}"
        )


class _LocalGit:
    """GitPython's ``repo.git.execute`` for local commands, as a plain subprocess run the
    way GitPython runs it (in the work tree, git's messages in English, stdin closed, the
    output decoded as GitPython decodes it)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def environment(self) -> dict[str, str]:
        """What GitPython's ``environment()`` gives: nothing set on top of the process's."""
        return {}

    def execute(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        strip_newline_in_stdout: bool = True,
        kill_after_timeout: float | None = None,
    ) -> str:
        """``kill_after_timeout``: a network command's bound; past it git and the helpers
        it started (``git-remote-https``, which holds the connection and git's pipes) are
        killed, and the failure says so as GitPython's does. git stays in relay's process
        group, as GitPython runs it: a Ctrl-C, or a stop of relay's group, reaches it."""
        with subprocess.Popen(
            own_argv(command),  # never a program of a clone's folder on the PATH
            cwd=self.root,
            env={**os.environ, **_PLAIN, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as proc:
            job = _contained(proc) if kill_after_timeout is not None else None
            try:
                stdout, stderr = proc.communicate(timeout=kill_after_timeout)
            except subprocess.TimeoutExpired:
                _kill_tree(proc, job)
                job = None  # (released: the tree is gone with it)
                try:  # (a helper not killed with git may hold its pipes: not waited for)
                    stdout, _ = proc.communicate(timeout=5)
                except subprocess.TimeoutExpired:
                    stdout = b""
                    proc.stdout = proc.stderr = None  # (nor closed, while a reader waits)
                said = f'Timeout: the command "{" ".join(command)}" did not complete in'
                stderr = f"{said} {kill_after_timeout:g} secs.".encode()
            except BaseException:  # relay stops here (Ctrl-C): git and its helpers with it
                _kill_tree(proc, job)
                raise
            _released(job)
        out = stdout.decode(_ENCODING, "surrogateescape")
        if strip_newline_in_stdout and out.endswith("\n"):
            out = out[:-1]
        if proc.returncode != 0:
            err = stderr.decode(_ENCODING, "surrogateescape").removesuffix("\n")
            raise GitFailed(command, proc.returncode, err, out)
        return out


def _contained(proc: subprocess.Popen[bytes]) -> int | None:
    """On Windows, ``proc`` in a kill-on-close Job Object (the tree ends with its handle:
    Windows has no process tree to walk); elsewhere None."""
    if sys.platform != "win32":
        return None
    from relay.edges.winjob import contain

    return contain(proc)


def _released(job: int | None) -> None:
    """Close a Job Object's handle (whatever is still in it ends)."""
    if job is not None:
        from relay.edges.winjob import release

        release(job)


_GRACE = 2.0  # seconds git has, once asked to stop, to remove its lock files


def _kill_tree(proc: subprocess.Popen[bytes], job: int | None = None) -> None:
    """End git and the processes it started, theirs too. Each is found first, while its
    parent still names it (held by a pidfd where the system has them); then git is asked
    to stop (SIGTERM: it removes the lock files it holds, a ref's, the index's, which
    would otherwise fail every later fetch) and given ``_GRACE`` to; then whatever is left
    of them is killed."""
    found = _descendants(proc) if job is None else []
    with contextlib.suppress(OSError):
        proc.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(_GRACE)
    _released(job)
    for pid, handle in reversed(found):
        with contextlib.suppress(OSError):
            if handle is None:
                os.kill(pid, signal.SIGKILL)
            else:
                signal.pidfd_send_signal(handle, signal.SIGKILL)
        if handle is not None:
            os.close(handle)
    with contextlib.suppress(OSError):
        proc.kill()


def _descendants(proc: subprocess.Popen[bytes]) -> list[tuple[int, int | None]]:
    """The processes ``proc`` started and theirs, each with a pidfd where the system has
    them; none once ``proc`` is reaped (its number may be another's by then)."""
    if sys.platform == "win32" or proc.returncode is not None:
        return []
    from relay.edges.steps import descendants  # (only when a command is ended early)

    found: list[tuple[int, int | None]] = []
    for pid in descendants(proc.pid):
        try:
            handle = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
        except ProcessLookupError:
            continue  # gone already
        except OSError:
            handle = None
        found.append((pid, handle))
    return found


class LocalRepo:
    """What :class:`Clone` reads of a GitPython ``Repo``, for a clone opened with
    :meth:`Clone.open_local`: every command, the network's too, run as a plain process."""

    bare = False

    def __init__(self, root: Path) -> None:
        self.working_tree_dir = str(root)
        self.git = _LocalGit(root)


def _git_error() -> tuple[type[Exception], ...]:
    """What a failed git command raises: :class:`GitFailed`, and GitPython's error once
    GitPython is loaded (nothing raises it before; asking does not load it)."""
    if "git" not in sys.modules:
        return (GitFailed,)
    import git

    return (git.GitCommandError, GitFailed)


GIT_MISSING = "git is not installed or not on the PATH"
GIT_MISSING_HINT = "install git (git-scm.com; apt-get install git, brew install git) and run again"


def as_relay_error(exc: BaseException) -> RelayError | None:
    """The one place where GitPython's and git's own failures become relay's one-line
    errors (None for anything else): git missing from the PATH (GitPython refuses to
    import, a subprocess finds no ``git``), and a git command that failed where no edge
    expected it to."""
    if isinstance(exc, ImportError) and "git executable" in str(exc):
        return ConfigError(GIT_MISSING, hint=GIT_MISSING_HINT)
    if isinstance(exc, FileNotFoundError) and Path(str(exc.filename or "")).name in (
        "git",
        "git.exe",
    ):
        return ConfigError(GIT_MISSING, hint=GIT_MISSING_HINT)
    if not isinstance(exc, GitFailed) and (
        type(exc).__name__ != "GitCommandError" or "git" not in sys.modules
    ):
        return None
    if not isinstance(exc, _git_error()):
        return None
    said = str(getattr(exc, "stderr", "") or "").strip().strip("'").strip()
    command = " ".join(str(w) for w in (getattr(exc, "command", None) or [])[:3])
    if "ambiguous argument 'HEAD'" in said or ("unknown revision" in said and "HEAD" in command):
        return ConfigError(
            "the clone has no commit yet",
            hint="commit something (a README) and push it, then run relay again",
        )
    first = said.splitlines()[0].removeprefix("stderr: ").strip("'") if said else ""
    return ConfigError(f"`{command}` failed: {first or 'git gave no reason'}")


def _not_found(said: str) -> bool:
    """Whether git said the remote answered 404 (``repository '...' not found``)."""
    return bool(re.search(r"repository '[^']*' not found|Repository not found", said))


def _classify(verb: str, exc: Exception) -> Exception:
    """Map a failed git network command to relay's errors by what git said."""
    said = str(exc)
    if re.search(r"Timeout: the command .* did not complete in", said):
        return RemoteUnavailable(
            f"git {verb}: the remote gave no answer within {NETWORK_TIMEOUT:g} s",
            hint="check this machine's network and the remote's URL (`git remote -v`),"
            " then run again",
        )
    host = re.search(r"Could not resolve host: ([^\s']+)", said)
    if host:
        return RemoteUnavailable(
            f"git {verb}: cannot resolve {host.group(1)}",
            hint="check the remote's URL (`git remote -v`) and this machine's network",
        )
    lines = [ln.strip().strip("'") for ln in said.splitlines()]
    first = next(
        (ln for ln in lines if ln.startswith(("fatal:", "error:", "remote:"))),
        lines[-1] if lines else "no message",
    )
    if verb == "push" and any(mark in said for mark in _REJECTED):
        return _Rejected(first)
    if verb == "push" and "GH006" in said:
        branch = re.search(r"refs/heads/(\S+?)\.?\s", said)
        name = branch.group(1) if branch else "the branch"
        return ConfigError(
            f"git push: {name} is a protected branch and refuses relay's commits",
            hint="give relay a branch of its own: `relay init --data-branch relay-data`",
        )
    if "CONFLICT" in said or "could not apply" in said:
        return Conflict(
            f"git {verb} --rebase hit a conflict with the remote; the rebase was aborted and"
            " the clone is as it was: merge by hand, then run relay again"
        )
    if "couldn't find remote ref" in said:
        return ConfigError(f"git {verb}: the remote has no such branch ({first}); push it first")
    unreachable = ("Could not read from remote", "unable to access", "does not appear to be")
    if any(mark in said for mark in unreachable):
        return RemoteUnavailable(f"git {verb} cannot reach the remote ({first}); check the remote")
    return RemoteUnavailable(f"git {verb} failed: {first}")
