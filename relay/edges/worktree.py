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
import errno
import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from relay.edges import lineends
from relay.edges.git import NO_HOUSEKEEPING, Clone, GitFailed, known_dirs
from relay.edges.ownpath import program
from relay.edges.refs import head_object
from relay.errors import ConfigError

# every git command relay runs here runs no hook and no fsmonitor: a maker (or the code of
# its candidate, run by the gates) could have installed one
NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=")
# a commit of relay's here starts no housekeeping of git's (``NO_HOUSEKEEPING``, a process
# each commit): relay packs the clone's loose objects itself (:meth:`WorkTree.pack_loose`,
# when the judge counts many)
GIT_META = ("hooks", "info", "config")

_WORKTREES = threading.RLock()
_SHA = re.compile(r"[0-9a-f]{40}")
_COMMON: dict[Path, Path] = {}  # a clone's common git directory, by work tree (per process)
_SHOWN_CAP = 256  # files' texts kept per work tree, by commit and path
_ENCODING = sys.getfilesystemencoding()  # how git's output is read (as GitPython reads it)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_FILE = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)


def _a_folder(tree: Path) -> Path:
    """A maker's tree, read as the folder it is: never through a link put in its place
    (code run in its box can swap the tree for one to any host folder)."""
    if tree.is_symlink() or not tree.is_dir():
        raise ConfigError(
            f"{tree} is not a folder (a link or a file was put in its place): nothing was taken"
        )
    return tree


# the largest file a candidate may hold: GitHub refuses a bigger one in a push, and a
# maker's sparse file of gigabytes costs its box nothing but relay's hashing minutes
# (FILE_CAP_ENV sets another)
CANDIDATE_FILE_CAP = 100 * 1024 * 1024
FILE_CAP_ENV = "RELAY_CANDIDATE_FILE_MAX"
# the most a candidate's new and resized files may hold in all: each file under the cap,
# a maker's tree of thousands of them would still go into the person's .git/objects
# (TOTAL_CAP_ENV sets another)
CANDIDATE_TOTAL_CAP = 512 * 1024 * 1024
TOTAL_CAP_ENV = "RELAY_CANDIDATE_TOTAL_MAX"
_SIZE = re.compile(r"([1-9][0-9]*)([kmg]?)")


def byte_bound(name: str, default: int) -> int:
    """The bound the variable ``name`` sets in bytes (``200m``, ``2g``, ``65536k``, plain
    bytes), ``default`` when it is unset; a value that is no size is refused in one line."""
    given = os.environ.get(name, "").strip().lower()
    if not given:
        return default
    found = _SIZE.fullmatch(given)
    if found is None:
        raise ConfigError(
            f"{name}={given!r} is not a size: give one such as 200m or 2g"
            f" (the default is {shown_size(default)})"
        )
    return int(found[1]) << {"": 0, "k": 10, "m": 20, "g": 30}[found[2]]


def file_cap() -> int:
    """The largest file a candidate may hold (:data:`CANDIDATE_FILE_CAP`, or
    :data:`FILE_CAP_ENV`'s)."""
    return byte_bound(FILE_CAP_ENV, CANDIDATE_FILE_CAP)


def shown_size(size: int) -> str:
    """``size`` bytes as a person reads it (GiB, MiB, KiB or bytes)."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift:
            return f"{size / (1 << shift):.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


class _TooMuch(Exception):
    """A maker's tree whose new and resized files are over :data:`CANDIDATE_TOTAL_CAP` in
    all: nothing of it was hashed (the paths counted, and why, in one line)."""

    def __init__(self, paths: list[str], why: str) -> None:
        super().__init__(why)
        self.paths, self.why = paths, why


def _kind(top: Path, path: str) -> str:
    """What ``path`` is under ``top``, no link followed on the way: "file", "big" (a file
    over :data:`CANDIDATE_FILE_CAP`), "link", "dir", "other" (a FIFO, a device), or "gone"
    (missing, or under a link or a file: git sees no such path there)."""
    try:
        with _parent(top, path) as fd:
            if fd is None:
                return "gone"
            seen = os.stat(PurePosixPath(path).name, dir_fd=fd, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return "gone"
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "gone"
        raise
    mode = seen.st_mode
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISREG(mode):
        return "big" if seen.st_size > file_cap() else "file"
    return "dir" if stat.S_ISDIR(mode) else "other"


def _kinds(top: Path, paths: Sequence[str]) -> dict[str, str]:
    """:func:`_kind` of each of ``paths``, each folder on the way looked at once (a maker's
    tree holds thousands of files; its box has ended, so nothing moves meanwhile)."""
    under = os.path.join(top, "")
    folders: dict[str, bool] = {"": True}  # a folder: whether it is one, no link on the way
    cap = file_cap()

    def mode(path: str) -> int:
        """The file's type bits: 0 when it is missing, a socket's (read as "other") when
        it cannot be looked at (under a folder the maker left mode 000), -1 for a file over
        :data:`CANDIDATE_FILE_CAP`."""
        try:
            seen = os.lstat(under + path)
            if stat.S_ISREG(seen.st_mode) and seen.st_size > cap:
                return -1
            return stat.S_IFMT(seen.st_mode)
        except (FileNotFoundError, NotADirectoryError):
            return 0
        except OSError:
            return stat.S_IFSOCK

    def folder(name: str) -> bool:
        known = folders.get(name)
        if known is None:
            known = folder(os.path.dirname(name)) and stat.S_ISDIR(mode(name))
            folders[name] = known
        return known

    kinds = {stat.S_IFLNK: "link", stat.S_IFREG: "file", stat.S_IFDIR: "dir", 0: "gone", -1: "big"}
    return {
        path: kinds.get(mode(path), "other") if folder(os.path.dirname(path)) else "gone"
        for path in paths
    }


def _lands(top: Path, path: str) -> tuple[str, ...] | None:
    """Where ``path`` under ``top`` leads with every link on the way followed, each read
    within ``top`` (a link through another link is judged where it really leads, not by
    its text): the parts below ``top`` (none for ``top`` itself), or None when it leaves
    ``top`` (an absolute link, a ``..`` above it, or links that never end)."""
    done: list[str] = []
    todo = list(PurePosixPath(path).parts)
    hops = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not done:
                return None
            done.pop()
            continue
        here = "/".join([*done, part])
        if _kind(top, here) != "link":  # a folder, a file, or nothing yet: taken as named
            done.append(part)
            continue
        hops += 1
        if hops > 40:  # as the kernel gives up (ELOOP)
            return None
        with _parent(top, here) as fd:
            if fd is None:
                return None
            target = os.readlink(part, dir_fd=fd)
        if os.path.isabs(target):
            return None
        todo[:0] = PurePosixPath(target).parts
    return tuple(done)


def _unreadable_git_file(tree: Path, skip: Sequence[str]) -> str | None:
    """The first ``.gitignore`` or ``.gitattributes`` under ``tree`` (but ``skip`` and
    ``.git``) that is neither a regular file nor a link: a FIFO there blocks the git
    command that opens it (listing the untracked files, reading attributes) for ever.
    No link is followed on the way."""
    left_out = set(skip)
    for top, dirs, files in os.walk(tree):
        here = Path(top).relative_to(tree).as_posix()
        at = "" if here == "." else f"{here}/"
        dirs[:] = [d for d in dirs if d != ".git" and f"{at}{d}" not in left_out]
        for name in (".gitignore", ".gitattributes"):
            if name in files:
                mode = os.lstat(os.path.join(top, name)).st_mode
                if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                    return f"{at}{name}"
    return None


def _blob_id(data: bytes, width: int) -> str:
    """The id git gives a blob of ``data`` (sha-1, or sha-256 where ids are ``width`` 64)."""
    made = hashlib.sha256() if width == 64 else hashlib.sha1()
    made.update(b"blob %d\0" % len(data))
    made.update(data)
    return made.hexdigest()


def _plain(path: str) -> bool:
    """Whether ``path`` names a place in a tree as it is: relative, no magic, no ``.`` or
    ``..``, no empty part (a folder's may end with ``/``)."""
    parts = path.removesuffix("/").split("/")
    return (
        not path.startswith(":")
        and "\\" not in path
        and "" not in parts
        and not ({".", ".."} & set(parts))
    )


def _quoted(path: str) -> str:
    """``path`` as one line of ``hash-object --stdin-paths`` (C-quoted when it holds a
    newline or starts with a quote, which that line would otherwise mean)."""
    if "\n" not in path and not path.startswith('"'):
        return path
    inner = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{inner}"'


def _false(value: str | None) -> bool:
    """Whether git reads ``value`` as a boolean false (``git config --bool``: "false", "no",
    "off", an empty value or a number that is 0, with or without a k, m or g); a key with
    no value (None) is true, and a value that is no boolean is not false."""
    if value is None:
        return False
    said = value.strip().lower()
    if said in ("false", "no", "off", ""):
        return True
    number = said[:-1] if said[-1:] in ("k", "m", "g") else said
    return bool(re.fullmatch(r"[-+]?(0+|0x0+)", number))


IGNORED = "Ignoring path "  # how git's update-index names a path it will not hold


def _fed(
    where: Path,
    args: Sequence[str],
    stdin: str,
    env: dict[str, str],
    warned: list[str] | None = None,
) -> str:
    """One local git command (hooks off) fed ``stdin``; its output (and its warnings in
    ``warned``: git says some things only on its error stream, and succeeds). ConfigError
    when it fails, with git's own line."""
    done = subprocess.run(
        [program("git"), *NO_HOOKS, *args],
        cwd=where,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["no message"])[-1]
        verb = next((a for a in args if a in ("hash-object", "update-index", "check-attr")), "git")
        raise ConfigError(f"git {verb} failed on {where}: {said}")
    if warned is not None:
        warned.extend(done.stderr.splitlines())
    return done.stdout


def _open_parent(top: Path, path: str) -> int | None:
    fd = os.open(top, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in PurePosixPath(path).parts[:-1]:
            try:
                inner = os.open(part, _DIR, dir_fd=fd)
            except OSError as err:
                if err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
                    raise
                os.close(fd)
                return None
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _parent(top: Path, path: str) -> Iterator[int | None]:
    """The folder holding ``path`` under ``top``, opened one component at a time without
    following a link; None when it is missing or a link or a file (nothing of the tree is
    there)."""
    fd = _open_parent(top, path)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


@dataclass(frozen=True)
class Taken:
    """A maker's tree as a candidate (:meth:`WorkTree.take`): the paths it changes, the
    tree object of the base with them, and why it cannot be taken (None when it can)."""

    paths: list[str]
    tree: str
    refused: str | None


class WorkTree:
    """A clone's work tree, for the loop."""

    def __init__(self, clone: Clone) -> None:
        self.clone = clone
        self.root = clone.root
        self._listings: dict[str, str] = {}
        self._shown: dict[tuple[str, str], str | None] = {}  # (commit, path): its text
        self._changed: dict[tuple[str, str], list[str]] = {}  # (HEAD, commit): the paths
        # (base, tree object) of a take: the paths between them, which a commit of that
        # tree on that base changes (git's diff of the two, which the take asked already)
        self._taken: dict[tuple[str, str], list[str]] = {}
        # paths of the last tree taken that git's index refused to hold ("Ignoring path")
        self._dropped: set[str] = set()

    def git(self, *args: str, env: dict[str, str] | None = None, identity: bool = False) -> str:
        """One local git command, with hooks off. Worktree commands run one at a time in
        this process: two ``git worktree add`` at once can pick the same admin directory
        (parallel makers add several)."""
        if args and args[0] == "worktree":
            with _WORKTREES:
                return self.clone.local(*NO_HOOKS, *args, env=env, identity=identity)
        return self.clone.local(*NO_HOOKS, *args, env=env, identity=identity)

    @classmethod
    def open(cls, path: Path) -> WorkTree:
        """The work tree of the clone holding ``path``; ConfigError when there is none (its
        local git commands run without GitPython: :meth:`Clone.open_local`)."""
        return cls(Clone.open_local(path))

    def head(self) -> str:
        """The commit checked out: read from the git directory's files where they are
        plain (HEAD naming a branch whose ref is a file, or is in packed-refs), else asked
        of git."""
        return head_object(self.root) or self.clone.head_sha()

    def _pinned(self, commit: str) -> str | None:
        """``commit`` as a full sha when it names one for ever (a full sha, or HEAD as it
        is now), None otherwise: what a read of it may be kept by."""
        if _SHA.fullmatch(commit):
            return commit
        return head_object(self.root) if commit == "HEAD" else None

    def has_commits(self) -> bool:
        """Whether the branch has a commit at all."""
        try:
            self.git("rev-parse", "--verify", "-q", "HEAD")
        except Exception:
            return False
        return True

    def untracked(self) -> list[str]:
        """Untracked files git does not ignore."""
        out = self.git("ls-files", "--others", "--exclude-standard", "-z")
        return sorted(p for p in out.split("\0") if p)

    def tracked_changes(self) -> list[str]:
        """Tracked paths whose index or work tree differs from HEAD (deleted ones too)."""
        out = self.git("diff", "--name-only", "--no-renames", "-z", "HEAD")
        return sorted(p for p in out.split("\0") if p)

    def changes(self, untracked_at_start: Sequence[str]) -> list[str]:
        """What the goal changed: tracked paths off HEAD and files it created."""
        keep = set(untracked_at_start)
        created = [p for p in self.untracked() if p not in keep]
        return sorted({*self.tracked_changes(), *created})

    def _holds_files(self, path: str) -> bool:
        """Whether ``path`` is a file, or a directory with a file somewhere under it (git
        tracks no empty directory: naming one to commit fails)."""
        where = self.root / path
        if not where.is_dir() or where.is_symlink():
            return where.exists() or where.is_symlink()
        return any(not p.is_dir() or p.is_symlink() for p in where.rglob("*"))

    def in_head(self, path: str) -> bool:
        """Whether ``path`` is a file (or folder) of HEAD: read in HEAD's listing when relay
        has it already, else asked of git."""
        head = self._pinned("HEAD")
        listed = self._listings.get(head) if head is not None else None
        if listed is not None and path.strip("/") not in ("", "."):
            names = [e.partition("\t")[2] for e in listed.split("\0") if e]
            folder = path.rstrip("/") + "/"
            return path in names or any(n.startswith(folder) for n in names)
        try:
            self.git("cat-file", "-e", f"HEAD:{path}")
        except Exception:
            return False
        return True

    def revert(self, paths: Sequence[str]) -> None:
        """Put ``paths`` back as HEAD has them: restore what HEAD holds, delete the rest
        (and the directories that deleting left empty)."""
        known = [p for p in paths if self.in_head(p)]
        created = [p for p in paths if p not in known]
        if known:
            self.git("restore", "--source=HEAD", "--staged", "--worktree", "--", *known)
        if created:
            self.git("rm", "--cached", "-q", "--ignore-unmatch", "-r", "--", *created)
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
        self.git("reset", "--soft", base)
        self.git("reset", "-q")
        return True

    def candidate(self, paths: Sequence[str], message: str) -> str:
        """A commit of HEAD plus ``paths`` as the tree has them, off the branch."""
        with tempfile.TemporaryDirectory(prefix="relay-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", "HEAD", env=env)
            if paths:
                self.git("add", "-A", "--", *paths, env=env)
            tree = self.git("write-tree", env=env).strip()
        return self.git("commit-tree", tree, "-p", "HEAD", "-m", message, identity=True).strip()

    def loose_objects(self, cap: int) -> int:
        """How many loose objects the clone holds, counted up to just past ``cap``."""
        count = 0
        try:
            with os.scandir(self.common_dir() / "objects") as folders:
                for folder in folders:
                    if len(folder.name) == 2 and folder.is_dir(follow_symlinks=False):
                        with os.scandir(folder.path) as files:
                            count += sum(1 for _ in files)
                    if count > cap:
                        break
        except OSError:
            return 0
        return count

    def pack_loose(self) -> None:
        """The clone's reachable loose objects packed (``git repack -d``: one new pack,
        their loose copies removed; nothing else of the repository changes: ``-n``, no
        server information written into the git directory's info folder, which relay
        holds unchanged around every attempt). Never while a worktree is being added: its
        HEAD names no object yet, and git's repack, reading every HEAD, stops on it; a
        packing that fails all the same is skipped (it only saves reads; the next tries)."""
        with _WORKTREES, contextlib.suppress(ConfigError, GitFailed):
            self.git("repack", "-d", "-n", "-q")

    def common_dir(self) -> Path:
        """The clone's common git directory, absolute (asked of git once a process: a
        clone's git directory does not move under a run)."""
        common = _COMMON.get(self.root)
        if common is None:
            known = known_dirs(self.root)  # git's answer when the clone was found
            said = known.common if known is not None else None
            common = Path(
                said if said is not None else self.git("rev-parse", "--git-common-dir").strip()
            )
            common = common if common.is_absolute() else (self.root / common)
            _COMMON[self.root] = common
        return common

    def ls_tree(self, commit: str) -> str:
        """``git ls-tree -r -z`` of ``commit``: one git process per commit object (a full
        sha names the same tree for ever; HEAD is read as the sha it is now)."""
        pinned = self._pinned(commit)
        got = self._listings.get(pinned or commit)
        if got is not None:
            return got
        out = self.git("ls-tree", "-r", "-z", pinned or commit)
        if pinned is not None:
            if len(self._listings) > 64:
                self._listings.clear()
            self._listings[pinned] = out
        return out

    def _entries(self, commit: str) -> list[tuple[str, str, str]]:
        """Every file of ``commit`` (a submodule's commit too): its mode, object and path."""
        found = []
        for entry in self.ls_tree(commit).split("\0"):
            meta, _, path = entry.partition("\t")  # "mode type object\tpath"
            if path:
                mode, _, rest = meta.partition(" ")
                found.append((mode, rest.partition(" ")[2], path))
        return found

    def listing(self, commit: str) -> list[tuple[str, str]]:
        """Every file of ``commit`` with its mode ("100644", "120000" for a link...)."""
        found = []
        for entry in self.ls_tree(commit).split("\0"):
            if entry:
                meta, _, path = entry.partition("\t")
                found.append((path, meta.split(" ", 1)[0]))
        return found

    def state(self, skip: Sequence[str] = ()) -> str:
        """The work tree as a person sees it, in one git process when nothing is changed:
        HEAD, the branch, and each changed or new path (but ``skip``, the person's own
        untracked files) with what its file holds now. Equal states are the same tree."""
        out = self.git(
            "--no-optional-locks", "status", "--porcelain=v2", "--branch", "-z",
            "--untracked-files=all", "--ignored=no", "--no-renames",
        )  # fmt: skip
        mine = set(skip)
        fields = {"1": 8, "u": 10, "?": 1}  # the fields before the path, by kind of entry
        lines, changed = [], []
        for entry in out.split("\0"):
            if not entry:
                continue
            path = entry.split(" ", fields[entry[0]])[-1] if entry[0] in fields else ""
            if entry[0] == "?" and path in mine:
                continue
            lines.append(entry)
            full = self.root / path
            if path and full.is_symlink():
                lines.append(f"-> {os.readlink(full)}")
            elif path and full.is_file():
                changed.append(path)
        if changed:
            lines.append(self.git("hash-object", "--no-filters", "--", *changed))
        return "\0".join(lines)

    def taken_from(self, tree: Path, base: str, skip: Sequence[str] = ()) -> tuple[list[str], str]:
        """The paths whose files under ``tree`` (a maker's clone) differ from ``base``, but
        ``skip``, and the tree object of ``base`` with those paths as ``tree`` has them.
        Hashed with this clone's own git directory and a private index, each file's bytes
        as they are (:meth:`_hash_raw`): the maker's git directory and configuration are
        never read and no filter runs, so nothing it set (an fsmonitor, a hook, attributes
        naming a filter of the person's) runs in relay; its commits are folded, since only
        the files count. A ``skip`` entry is skipped with all it holds (the sandbox's
        mount points of, or links to, the person's environments)."""
        _a_folder(tree)
        self._dropped = set()
        own = ("-C", str(tree), "--git-dir", str(self.common_dir()), "--work-tree", str(tree))
        off = ("-c", "core.fsmonitor=", "-c", "core.untrackedCache=false")
        # git refuses an exclusion that names a path its ignore files already leave out
        # (a project's own `.venv/` shown at its place), so only the others are named
        ignored: set[str] = set()
        if skip:
            named = [f":(top,literal){name}" for name in skip]
            out = self.git(
                *off,
                *own,
                "ls-files",
                "-z",
                "-o",
                "-i",
                "--exclude-standard",
                "--directory",
                "--",
                *named,
            )
            ignored = {p.rstrip("/") for p in out.split("\0") if p}
        left_out = [name for name in skip if name not in ignored]
        with tempfile.TemporaryDirectory(prefix="relay-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git(*off, *own, "read-tree", base, env=env)
            nested = self._hash_raw(tree, base, env, left_out)
            made = self.git(*off, *own, "write-tree", env=env).strip()
        out = self.git("diff", "--no-ext-diff", "--name-only", "--no-renames", "-z", base, made)
        inside = tuple(f"{name}/" for name in skip)
        listed = [p for p in out.split("\0") if p]
        paths = sorted(p for p in listed if p not in skip and not p.startswith(inside))
        if len(paths) < len(listed):  # what a skip entry changed is no part of the tree
            made = self._tree_with(base, made, paths)
        elif (pinned := self._pinned(base)) is not None:
            if len(self._taken) > 64:
                self._taken.clear()
            self._taken[(pinned, made)] = sorted(listed)
        # a nested repository is named too (the take refuses it: see :meth:`refusal`)
        paths += sorted(p for p in nested if p not in skip and not p.startswith(inside))
        return paths, made

    def take(self, tree: Path, base: str, skip: Sequence[str] = ()) -> Taken:
        """A maker's tree (or the clone a node's maker left) as a candidate: the paths it
        changes against ``base`` and the tree object of them (:meth:`taken_from`), and why
        it cannot be taken (:meth:`refusal`). Every path from a maker's files to a candidate
        goes through here, so each is refused alike."""
        odd = _unreadable_git_file(_a_folder(tree), skip)
        if odd is not None:  # git would block opening it: nothing of the tree is asked of git
            why = f"`{odd}` is neither a file, a link nor a folder in the candidate"
            return Taken([odd], self.tree_of(base), why)
        try:
            paths, made = self.taken_from(tree, base, skip)
        except _TooMuch as over:  # nothing of it hashed into the clone
            return Taken(over.paths, self.tree_of(base), over.why)
        return Taken(paths, made, self.refusal(tree, paths))

    def _tree_with(self, base: str, source: str, paths: Sequence[str]) -> str:
        """The tree object of ``base`` with ``paths`` as the tree-ish ``source`` has them
        (removed where it has none)."""
        with tempfile.TemporaryDirectory(prefix="relay-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", base, env=env)
            if paths:
                self.git("reset", "-q", source, "--", *paths, env=env)
            return self.git("write-tree", env=env).strip()

    def _hash_raw(
        self, tree: Path, base: str, env: dict[str, str], left_out: Sequence[str]
    ) -> list[str]:
        """Put what ``tree`` holds but ``left_out`` (names at its top, each with all it
        holds) under ``tree`` (a maker's clone) into the private
        index ``env`` names (read from ``base``) as git would store it, with no filter
        driver run: hashed by ``hash-object --no-filters``, so no filter the person's git
        configures (git-lfs's clean, any ``filter.<x>.clean``) runs on the maker's files on
        the host, whatever attributes its tree declares. git's own conversions, which run
        no program, are done in-process first (:mod:`relay.edges.lineends`: end of line by
        ``core.autocrlf`` and the ``text``/``eol`` attributes, ``ident``), and with
        ``core.fileMode=false`` an executable bit is taken from ``base``, as ``git add``
        does. A link is stored as its text; a path gone, under a link or a folder now is
        removed; a FIFO or device is removed (the take then refuses it); a submodule is
        left as ``base`` has it. The untracked nested repositories met (git would store
        each as a gitlink) are returned, not stored."""
        own = ("-C", str(tree), "--git-dir", str(self.common_dir()), "--work-tree", str(tree))
        off = ("-c", "core.fsmonitor=", "-c", "core.untrackedCache=false")
        pathspec = [":/", *(f":(top,literal,exclude){name}" for name in left_out)]
        others = self.git(
            *off, *own, "ls-files", "-z", "--others", "--exclude-standard", "--", *pathspec,
            env=env,
        )  # fmt: skip
        names: dict[str, None] = {}  # in order, once each
        tracked: dict[str, tuple[str, str]] = {}  # path: (mode, sha) as base has it
        nested: list[str] = []
        zero = ""
        # the private index holds base as read-tree wrote it: its entries are base's
        # listing (one git process a commit, kept), less what is left out
        for kind, sha, name in self._entries(base):
            if any(name == x or name.startswith(f"{x}/") for x in left_out):
                continue
            if kind != "160000":  # a submodule stays as base has it
                names[name] = None
                tracked[name] = (kind, sha)
                zero = "0" * len(sha)
        for name in others.split("\0"):
            if name.endswith("/"):  # "x/": a nested repository (git add: a gitlink)
                nested.append(name.rstrip("/"))
            elif name:
                names[name] = None
        kinds = _kinds(tree, list(names))
        files = [name for name, kind in kinds.items() if kind == "file"]
        seen = {name: os.lstat(os.path.join(tree, name)) for name in files}
        self._within_total({name: st.st_size for name, st in seen.items()}, tracked)
        crlf, exec_bits = self._core_settings()
        converts = self._conversions(tree, env, files, crlf)
        with tempfile.TemporaryDirectory(prefix="relay-links-") as texts:
            hashed: list[tuple[str, str]] = []  # (path, mode), in the order hashed
            feed: list[str] = []
            for name, kind in kinds.items():
                if kind == "file":
                    mode = seen[name].st_mode
                    was = tracked.get(name, ("", ""))
                    if exec_bits:
                        kept = "100755" if mode & stat.S_IXUSR else "100644"
                    else:  # git add keeps the index's bit where it trusts none
                        kept = was[0] if was[0] in ("100644", "100755") else "100644"
                    hashed.append((name, kept))
                    how = converts.get(name)
                    made = None if how is None else self._converted(tree, name, how, was[1])
                    if made is None:
                        feed.append(_quoted(name))
                    else:
                        text = Path(texts) / str(len(feed))
                        text.write_bytes(made)
                        feed.append(str(text))
                elif kind == "link":
                    with _parent(tree, name) as fd:
                        assert fd is not None
                        target = os.readlink(PurePosixPath(name).name, dir_fd=fd)
                    text = Path(texts) / str(len(feed))
                    text.write_bytes(os.fsencode(target))
                    hashed.append((name, "120000"))
                    feed.append(str(text))
            shas: list[str] = []
            if feed:
                feed_in = "\n".join(feed) + "\n"
                hashing = ("hash-object", "-w", "--no-filters", "--stdin-paths")
                shas = _fed(tree, [*own, *hashing], feed_in, env).split()
        if len(shas) != len(feed):
            raise ConfigError(f"relay could not hash the maker's files under {tree}")
        gone = [name for name, kind in kinds.items() if kind not in ("file", "link")]
        info = [f"0 {zero}\t{name}" for name in gone if name in tracked]
        info += [f"{mode} {sha}\t{name}" for (name, mode), sha in zip(hashed, shas, strict=True)]
        warned: list[str] = []
        if info:
            feed_info = "\0".join(info) + "\0"
            _fed(tree, [*own, "update-index", "-z", "--index-info"], feed_info, env, warned)
        # a path git will not hold (a `.git` by another name, a linked .gitmodules): it
        # says so and leaves it out; named, so that the take refuses it (see refusal)
        self._dropped = {w.removeprefix(IGNORED) for w in warned if w.startswith(IGNORED)}
        return nested + sorted(self._dropped)

    def _within_total(self, sizes: dict[str, int], tracked: dict[str, tuple[str, str]]) -> None:
        """Refuse (:class:`_TooMuch`) a maker's tree whose files (``sizes``: each one's
        size, by path) new to the base or of another size than there hold over
        :data:`CANDIDATE_TOTAL_CAP` in all, before any is hashed into the clone. Cheap: the
        base's sizes are asked of git only when the whole tree is over the bound (a file
        changed at the same size counts nothing: it adds at most what the base holds)."""
        cap = byte_bound(TOTAL_CAP_ENV, CANDIDATE_TOTAL_CAP)
        if sum(sizes.values()) <= cap:
            return
        known = [name for name in sizes if name in tracked]
        was: dict[str, int] = {}
        if known:
            asked = "".join(f"{tracked[name][1]}\n" for name in known)
            said = _fed(self.root, ["cat-file", "--batch-check=%(objectsize)"], asked, {})
            was = {n: int(w) for n, w in zip(known, said.splitlines(), strict=False) if w.isdigit()}
        counted = {n: size for n, size in sizes.items() if was.get(n) != size}
        total = sum(counted.values())
        if total <= cap:
            return
        largest = max(counted, key=lambda n: counted[n])
        raise _TooMuch(
            sorted(counted),
            f"the candidate adds or resizes {len(counted)} files of {shown_size(total)} in"
            f" all (the largest `{largest}`, {shown_size(counted[largest])}), over the"
            f" {shown_size(cap)} relay takes from a maker's tree: none was hashed into the"
            " repository; list what is not to be committed in .gitignore, or raise the bound"
            f" with {TOTAL_CAP_ENV}=SIZE (such as 2g)",
        )

    def _core_settings(self) -> tuple[str, bool]:
        """This clone's ``core.autocrlf`` ("true", "input" or "false", as
        :func:`relay.edges.lineends.autocrlf` reads ``git config --get``'s answer) and
        whether it trusts the executable bit (``core.fileMode`` as ``git config --bool``
        reads it: unset, unreadable or not a boolean leaves it trusted), asked of git
        together: the last value of each counts, as ``--get`` takes it."""
        try:
            said = self.git("config", "-z", "--get-regexp", r"^core\.(autocrlf|filemode)$")
        except Exception:
            said = ""
        values: dict[str, str | None] = {}  # None: a key with no value (true)
        for entry in said.split("\0"):
            key, newline, value = entry.partition("\n")
            if key:
                values[key] = value if newline else None
        crlf = lineends.autocrlf(values.get("core.autocrlf") or "")
        return crlf, "core.filemode" not in values or not _false(values["core.filemode"])

    def _conversions(
        self, tree: Path, env: dict[str, str], files: Sequence[str], crlf: str
    ) -> dict[str, tuple[lineends.Action, bool]]:
        """The files among ``files`` (under ``tree``) that git's own conversions could
        change as ``git add`` stores them: the end-of-line action and whether ``ident``
        applies, by path. The attributes are read as git add in ``tree`` reads them, its
        ``.gitattributes`` with this clone's own configuration (``check-attr`` runs
        nothing; ``crlf``: its ``core.autocrlf``)."""
        if not files:
            return {}
        own = ("-C", str(tree), "--git-dir", str(self.common_dir()), "--work-tree", str(tree))
        asked = ["check-attr", "-z", "--stdin", *lineends.ATTRIBUTES]
        said = _fed(tree, [*own, *asked], "\0".join(files) + "\0", env).split("\0")
        attrs: dict[str, dict[str, str]] = {}
        for at in range(0, len(said) - 2, 3):
            attrs.setdefault(said[at], {})[said[at + 1]] = said[at + 2]
        found = {}
        for name in files:
            given = attrs.get(name, {})
            how = lineends.action(given, crlf)
            ident = given.get("ident") == "set"
            if how is not lineends.Action.NONE or ident:
                found[name] = (how, ident)
        return found

    def _converted(
        self, tree: Path, name: str, how: tuple[lineends.Action, bool], was: str
    ) -> bytes | None:
        """The file ``name`` under ``tree`` as git's own conversions store it, None when
        they leave it as it is (read through no link; ``was``: the blob base has there)."""
        with _parent(tree, name) as fd:
            assert fd is not None
            opened = os.open(PurePosixPath(name).name, _FILE, dir_fd=fd)
        with os.fdopen(opened, "rb") as file:
            data = file.read(file_cap() + 1)
        action, ident = how
        if not (action is not lineends.Action.NONE and b"\r\n" in data) and not (
            ident and b"$Id" in data
        ):
            return None  # nothing a conversion would change
        if was and _blob_id(data, len(was)) == was:
            return None  # the base's own bytes: unchanged, as git's status sees it
        index_crlf = False
        if action is lineends.Action.AUTO and was and b"\r\n" in data:
            index_crlf = lineends.holds_crlf(self._blob(was))
        made = lineends.to_git(data, action, index_crlf=index_crlf, ident=ident)
        return None if made == data else made

    def _blob(self, sha: str) -> bytes:
        """The bytes of the blob ``sha`` of this clone."""
        return subprocess.run(
            [program("git"), *NO_HOOKS, "cat-file", "blob", sha],
            cwd=self.root,
            capture_output=True,
            check=True,
        ).stdout

    def commit_tree(self, tree: str, parent: str, message: str) -> str:
        """A commit of the tree object ``tree`` on ``parent``, off every branch (what it
        changes against ``parent`` is known already when a take made ``tree`` on it)."""
        made = self.git("commit-tree", tree, "-p", parent, "-m", message, identity=True).strip()
        base = self._pinned(parent)
        known = self._taken.get((base, tree)) if base is not None else None
        if base is not None and known is not None and _SHA.fullmatch(made):
            self._keep_changed((base, made), known)
        return made

    def refusal(self, source: Path, paths: Sequence[str]) -> str | None:
        """Why ``paths`` under ``source`` (a maker's clone) could not be taken into this
        tree as they are, or None; nothing is written. Never through a link, on either
        side: a path whose folder here is a link (or not a folder) the candidate does not
        replace, a link in the candidate that leads out of the tree (or into ``.git``), a
        folder it replaces that still holds files the candidate does not account for, a
        file the clone's own attributes put through a filter (git-lfs's, any other: relay
        hashed the maker's bytes raw, where the person's git would store what the filter
        makes of them, and it runs no filter on a maker's bytes)."""
        kinds = {p: _kind(source, p) for p in paths}
        for path in paths:
            if path in self._dropped:
                return (
                    f"`{path}` is a path git will not hold in a repository (a `.git` by another"
                    " name, or a linked .gitmodules): it would be left out in silence; rename"
                    " it, or leave it out"
                )
        for path, kind in kinds.items():
            if kind == "dir" and _kind(source, f"{path}/.git") != "gone":
                return (
                    f"`{path}` is a git repository of its own: relay records no gitlink to a"
                    " commit that only the maker's box held (copy its files in without .git)"
                )
        filtered = self._filtered([p for p, kind in kinds.items() if kind == "file"])
        if filtered is not None:
            path, attribute, value = filtered
            if attribute == "filter":
                return (
                    f"`{path}` goes through this clone's `filter={value}` (its .gitattributes):"
                    " relay runs no filter on a maker's files, so it cannot store it as git would"
                )
            return (
                f"`{path}` is re-encoded by this clone's `{attribute}={value}` (its"
                " .gitattributes): relay does not re-encode a maker's files, so it cannot store"
                " it as git would"
            )
        wanted = set(paths)
        for path, kind in kinds.items():
            why = self._refusal(source, path, kind, wanted)
            if why is not None:
                return why
        return None

    def _filtered(self, paths: Sequence[str]) -> tuple[str, str, str] | None:
        """The first of ``paths`` (files the candidate holds: git filters no removal and no
        link) whose ``filter`` attribute, as this clone's own attributes set it, names a
        driver (or whose ``working-tree-encoding`` names an encoding, which relay does not
        convert), with the attribute and its value; None when none does (``git check-attr``
        reads attributes and runs nothing)."""
        if not paths:
            return None
        asked = ["check-attr", "-z", "--stdin", "filter", "working-tree-encoding"]
        said = _fed(self.root, asked, "\0".join(paths) + "\0", {})
        fields = said.split("\0")
        for at in range(0, len(fields) - 2, 3):
            path, attribute, value = fields[at : at + 3]
            if value not in ("unspecified", "unset", "set", ""):
                return path, attribute, value
        return None

    def carried(self, work: str, onto: str, message: str) -> str | None:
        """``work`` (a candidate commit) carried onto ``onto``: a commit whose parent is
        ``onto`` and whose tree is ``onto``'s with the paths ``work`` changed against its
        own parent as ``work`` has them. None when ``onto`` changed one of those paths too
        (a person's commit meanwhile): the work is not laid over theirs."""
        base = f"{work}^"
        if self.git("rev-parse", base) == self.git("rev-parse", onto):
            return work
        out = self.git("diff", "--name-only", "--no-renames", "-z", base, work)
        paths = [p for p in out.split("\0") if p]
        if paths and self.git("diff", "--name-only", "--no-renames", base, onto, "--", *paths):
            return None
        return self._with_paths(onto, work, paths, message, parent=onto)

    def but(self, commit: str, paths: Sequence[str], message: str) -> str:
        """``commit`` with ``paths`` as HEAD has them (put back), a new commit off the
        branch whose parent is HEAD."""
        return self._with_paths(commit, "HEAD", paths, message, parent="HEAD")

    def _with_paths(
        self, base: str, source: str, paths: Sequence[str], message: str, *, parent: str
    ) -> str:
        """A commit of ``base``'s tree with ``paths`` as ``source`` has them (removed where
        it has none), made through a private index; its parent ``parent``."""
        with tempfile.TemporaryDirectory(prefix="relay-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git("read-tree", base, env=env)
            if paths:
                self.git("reset", "-q", source, "--", *paths, env=env)
            tree = self.git("write-tree", env=env).strip()
        return self.git("commit-tree", tree, "-p", parent, "-m", message, identity=True).strip()

    def bring(self, commit: str, paths: Sequence[str]) -> None:
        """Make ``paths`` in the work tree and index what ``commit`` (a kept candidate)
        holds: written by git (never through a link the tree holds), removed where the
        commit has none. The person's tree holds no candidate before it is kept."""
        if not paths:
            return
        there = self._files_under(commit, paths)
        gone = [p for p in paths if p not in there]
        if gone:
            self.git("rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", *gone)
            for path in gone:
                full = self.root / path
                if full.is_symlink() or full.is_file():
                    full.unlink()
                elif full.is_dir():
                    shutil.rmtree(full)
                self._prune_empty(full.parent)
        if there:
            self.git("checkout", commit, "--", *there)

    def _files_under(self, commit: str, paths: Sequence[str]) -> list[str]:
        """The files of ``commit`` that ``paths`` name, themselves or within them, sorted
        (``git ls-tree -r --name-only``'s answer, whose paths are literal): taken from the
        commit's listing when a full sha names it (:meth:`ls_tree`, read once a commit)
        and every path is a plain one of the tree's, else asked of git."""
        pinned = self._pinned(commit)
        if pinned is None or not all(_plain(p) for p in paths):
            out = self.git("ls-tree", "-r", "--name-only", "-z", commit, "--", *paths)
            return sorted(p for p in out.split("\0") if p)
        named = {p.rstrip("/") for p in paths}
        return sorted(
            f
            for f in self.files_at(pinned)
            if f in named or any(str(up) in named for up in PurePosixPath(f).parents)
        )

    def tree_of(self, commit: str) -> str:
        """The tree object ``commit`` records."""
        return self.git("rev-parse", f"{commit}^{{tree}}").strip()

    def diff(self, commit: str) -> str:
        """The diff from HEAD to ``commit``."""
        return self.git("diff", "--no-color", "HEAD", commit)

    def changed_in(self, commit: str) -> list[str]:
        """The paths ``commit`` changes against HEAD (asked of git once for a commit and
        the HEAD it is compared with)."""
        head, pinned = self._pinned("HEAD"), self._pinned(commit)
        key = (head, pinned) if head is not None and pinned is not None else None
        if key is not None and key in self._changed:
            return list(self._changed[key])
        out = self.git("diff", "--name-only", "--no-renames", "-z", head or "HEAD", commit)
        paths = sorted(p for p in out.split("\0") if p)
        if key is not None:
            self._keep_changed(key, paths)
        return paths

    def _keep_changed(self, key: tuple[str, str], paths: Sequence[str]) -> None:
        """Keep the paths a commit changes against another (both full shas)."""
        if len(self._changed) > 64:
            self._changed.clear()
        self._changed[key] = list(paths)

    def show(self, commit: str, path: str) -> str | None:
        """A file's text at ``commit``, or None when it has no such file (asked of git once
        for a commit and path: a full sha names the same file for ever)."""
        pinned = self._pinned(commit)
        key = (pinned, path) if pinned is not None else None
        if key is not None and key in self._shown:
            return self._shown[key]
        try:
            text: str | None = self.git("show", f"{pinned or commit}:{path}")
        except Exception:
            text = None
        if key is not None:
            if len(self._shown) >= _SHOWN_CAP:
                self._shown.clear()
            self._shown[key] = text
        return text

    def show_all(self, wanted: Iterable[tuple[str, str]]) -> None:
        """Files' texts (commit, path) read ahead in one git process (``cat-file
        --batch``), kept as :meth:`show` keeps them, so that reading several costs one
        process, not one each. Only what :meth:`show` would keep is read: a full sha's
        regular file or link, or its absence; anything else (a folder, a path a batch
        line cannot carry) is left to :meth:`show`."""
        asked: dict[tuple[str, str], None] = {}
        for commit, path in wanted:
            pinned = self._pinned(commit)
            if pinned is None or (pinned, path) in self._shown or {"\n", "\r"} & set(path):
                continue  # (git reads a batch line up to its end, less a CR before it)
            asked[(pinned, path)] = None
        if len(asked) < 2:  # one file is one process either way
            return
        lines = "".join(f"{sha}:{path}\n" for sha, path in asked)
        done = subprocess.run(
            [program("git"), *NO_HOOKS, "cat-file", "--batch"],
            cwd=self.root,
            input=lines.encode(_ENCODING, "surrogateescape"),
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            return  # each is asked of git alone, as before
        if len(self._shown) + len(asked) > _SHOWN_CAP:
            self._shown.clear()
        out, at = done.stdout, 0
        for key in asked:
            end = out.find(b"\n", at)
            if end < 0:
                return
            header = out[at:end].decode(_ENCODING, "surrogateescape")
            at = end + 1
            if header.endswith(" missing"):
                self._shown[key] = None
                continue
            kind, _, size = header.rpartition(" ")
            if not size.isdigit() or kind.count(" ") != 1:
                return  # not the shape asked for: the rest is read alone
            body = out[at : at + int(size)]
            at += int(size) + 1  # the contents, then a newline
            if kind.endswith(" blob"):
                self._shown[key] = body.decode(_ENCODING, "surrogateescape")

    @contextlib.contextmanager
    def fresh(self, commit: str) -> Iterator[Path]:
        """A fresh worktree of ``commit`` outside the clone, removed afterwards."""
        parent = Path(tempfile.mkdtemp(prefix="relay-verify-"))
        where = parent / "tree"
        self.git("worktree", "add", "--detach", "-q", str(where), commit)
        try:
            yield where
        finally:
            with contextlib.suppress(Exception):
                self.git("worktree", "remove", "--force", str(where))
            shutil.rmtree(parent, ignore_errors=True)
            with contextlib.suppress(Exception):
                self.git("worktree", "prune")

    def _refusal(self, source: Path, path: str, kind: str, wanted: set[str]) -> str | None:
        """Why ``path`` cannot be taken from ``source`` as it is (``kind``), or None."""
        if kind == "other":
            return f"`{path}` is neither a file, a link nor a folder in the candidate"
        if kind == "big":
            with _parent(source, path) as fd:
                assert fd is not None
                size = os.stat(PurePosixPath(path).name, dir_fd=fd, follow_symlinks=False).st_size
            return (
                f"`{path}` is {shown_size(size)}, over the {shown_size(file_cap())} a file of"
                " a candidate may be (GitHub refuses a bigger one in a push): it was not hashed"
                f" into the repository; if it belongs there, raise the bound with"
                f" {FILE_CAP_ENV}=SIZE (such as 200m)"
            )
        if kind == "link":
            with _parent(source, path) as src:
                assert src is not None
                target = os.readlink(PurePosixPath(path).name, dir_fd=src)
            lands = _lands(source, path)
            if lands is None or lands[:1] == (".git",):
                return f"`{path}` is a link to `{target}`, out of the tree or into .git"
        parts = PurePosixPath(path).parts
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            try:
                mode = os.lstat(self.root / folder).st_mode
            except FileNotFoundError:
                break
            if stat.S_ISDIR(mode):
                continue
            if folder in wanted:  # the take removes it first (the candidate has a folder)
                break
            what = "a link" if stat.S_ISLNK(mode) else "not a folder"
            return f"`{folder}` is {what} in the clone: relay writes nothing through it"
        here = self.root / path
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return None
        if stat.S_ISDIR(mode) and kind in ("file", "link"):
            for top, dirs, files in os.walk(here):
                for each in (*files, *(d for d in dirs if (Path(top) / d).is_symlink())):
                    rel = (Path(top) / each).relative_to(self.root).as_posix()
                    if rel not in wanted:
                        return f"`{path}` replaces a folder that still holds `{rel}`"
        return None

    def commit(self, paths: Sequence[str], message: str) -> str | None:
        """Commit exactly ``paths`` (new, changed or deleted) with no hook run; the sha,
        None if unchanged."""
        present = [p for p in paths if self._holds_files(p) or self.in_head(p)]
        if not present:
            return None
        committing = ("commit", "--no-verify", "-q", "-m", message, "--only", "--", *present)
        with self.clone.git_lock:
            # files git tracks (changed or deleted) are committed by commit alone, as add
            # would have staged them; a new file or a folder (whose new files commit alone
            # would leave out) is added first. Where commit finds nothing to commit (it
            # fails), git is asked whether anything changed: nothing is None
            if not any((self.root / p).is_dir() for p in present):
                with contextlib.suppress(GitFailed):
                    self.git(*NO_HOUSEKEEPING, *committing, identity=True)
                    return self.head()
            self.git("add", "-A", "--force", "--", *present)
            try:
                self.git(*NO_HOUSEKEEPING, *committing, identity=True)
            except GitFailed:
                if not self.git("diff", "--cached", "--name-only", "--", *present).strip():
                    return None
                raise
        return self.head()

    def branch(self) -> str | None:
        """The checked-out branch's full ref, None on a detached HEAD."""
        try:
            return self.git("symbolic-ref", "-q", "HEAD").strip() or None
        except Exception:
            return None

    def switch_back(self, ref: str | None, sha: str) -> None:
        """Check out ``ref`` again (or ``sha`` detached), discarding what the tree holds;
        other branches are left as they are."""
        target = ref.removeprefix("refs/heads/") if ref else sha
        self.git("checkout", "-q", "-f", *([] if ref else ["--detach"]), target)

    def restore_to(self, commit: str, paths: Sequence[str]) -> None:
        """Put ``paths`` back as ``commit`` (a snapshot of the tree) holds them: restore what
        it has, delete the rest; the index of those paths goes back to HEAD."""
        if not paths:
            return
        out = self.git("ls-tree", "-r", "--name-only", "-z", commit, "--", *paths)
        there = {p for p in out.split("\0") if p}
        gone = [p for p in paths if p not in there]
        for path in gone:
            full = self.root / path
            if full.is_dir() and not full.is_symlink():
                shutil.rmtree(full)
            else:
                full.unlink(missing_ok=True)
            self._prune_empty(full.parent)
        if there:
            self.git("restore", f"--source={commit}", "--worktree", "--", *sorted(there))
        with contextlib.suppress(Exception):
            self.git("reset", "-q", "--", *paths)

    def git_meta(self) -> dict[str, bytes]:
        """The clone's hooks, info files and config (by path in the git directory): what a
        maker could change to act through git itself."""
        common = self.common_dir()
        found: dict[str, bytes] = {}
        for name in GIT_META:
            top = common / name
            files = [top] if top.is_file() else sorted(top.rglob("*")) if top.is_dir() else []
            for path in files:
                if path.is_file():
                    found[path.relative_to(common).as_posix()] = path.read_bytes()
        return found

    def put_git_meta(self, snapshot: dict[str, bytes]) -> None:
        """Put the hooks, info files and config back as ``snapshot`` has them."""
        common = self.common_dir()
        for rel in set(self.git_meta()) - set(snapshot):
            (common / rel).unlink(missing_ok=True)
        for rel, data in snapshot.items():
            path = common / rel
            if not path.is_file() or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)

    def refs(self) -> dict[str, str]:
        """Every ref of the clone but the remote-tracking ones (a fetch moves those), and
        the commit it names."""
        out = self.git("for-each-ref", "--format=%(refname) %(objectname)")
        pairs = (line.split(" ", 1) for line in out.splitlines() if " " in line)
        return {name: sha for name, sha in pairs if not name.startswith("refs/remotes/")}

    def put_refs(self, snapshot: dict[str, str], names: Sequence[str]) -> None:
        """Put the refs ``names`` back as ``snapshot`` has them (deleted when it has none)."""
        for name in names:
            if name in snapshot:
                self.git("update-ref", "--no-deref", name, snapshot[name])
            else:
                with contextlib.suppress(Exception):
                    self.git("update-ref", "--no-deref", "-d", name)

    def import_lines(self, commit: str) -> list[tuple[str, str]]:
        """(path, line) for each line of ``commit``'s Python files that starts an import
        (``import x``, ``from x import y``), found by one ``git grep``."""
        try:
            out = self.git(
                "grep", "-I", "--null", "--no-color", "-E",
                "-e", r"^[[:space:]]*(import|from)[[:space:]]", commit, "--", "*.py", "*.pyi",
            )  # fmt: skip
        except Exception:  # no line matches (git grep exits 1)
            return []
        found = []
        for row in out.splitlines():
            where, _, line = row.partition("\0")
            found.append((where.removeprefix(f"{commit}:"), line))
        return found

    def files_at(self, commit: str) -> list[str]:
        """Every file of ``commit``."""
        return [path for path, _ in self.listing(commit)]

    def overlay(self, where: Path, commit: str, paths: Sequence[str]) -> None:
        """Write ``paths`` as ``commit`` holds them into the tree at ``where``."""
        inside = where.resolve()
        for path in paths:
            data = self.git("show", f"{commit}:{path}")
            target = where / path
            target.parent.mkdir(parents=True, exist_ok=True)
            # the tree's code ran before: a link it left must not lead relay's write out
            if not target.parent.resolve().is_relative_to(inside):
                raise ValueError(f"{path} leads out of {where}")
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.is_dir():
                shutil.rmtree(target)
            target.write_text(data, encoding="utf-8")

    def push(self) -> None:
        """Push the branch (only when the contract authorises it)."""
        self.clone.push()
