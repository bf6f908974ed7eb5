"""The branch checked out and the remote's branches, read from a clone's own files.

A pass asks these often; a git process for each answer cost more than the pass's own work.
Only where the files say for certain what git would: anywhere else the caller asks git.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Refs:
    """What ``git symbolic-ref --short HEAD`` and ``git for-each-ref refs/remotes/origin/``
    would say: the branch checked out ('' when detached) and the remote's branch names."""

    head: str
    remote: tuple[str, ...]  # sorted, as for-each-ref lists them
    born: bool = True  # the branch checked out has a commit (git names an unborn one too)


# Environment variables with which git reads another repository or another view of its
# refs than the files at the clone's root say: git itself answers then.
_GIT_ENV = (
    "GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE",
    "GIT_REF_STORAGE",
)  # fmt: skip
_REMOTE = "refs/remotes/origin/"


def read_refs(root: Path) -> Refs | None:
    """The branch checked out and the remote's branches, read from ``.git`` (a directory,
    or a worktree's or submodule's ``gitdir:`` file) as git stores them: ``HEAD``, loose
    refs and ``packed-refs``. None where that is not certain to be git's answer (another
    ref storage, a name git would shorten otherwise, a file it cannot read): the caller
    asks git then."""
    dirs = _file_dirs(root)
    if dirs is None:
        return None
    git_dir, common = dirs
    try:
        packed = _packed_refs(common)
        remote = set(_loose_refs(common, _REMOTE)) | {
            name[len(_REMOTE) :] for name in packed if name.startswith(_REMOTE)
        }
        head_text = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not head_text.startswith("ref:"):
        head = ""  # detached
    else:
        target = head_text[4:].strip()
        if not target.startswith("refs/heads/"):
            return None
        head = target[len("refs/heads/") :]
        # --short names a branch so only when no other ref reads as the same short name
        others = (f"refs/{head}", f"refs/tags/{head}", f"refs/remotes/{head}",
                  f"refs/remotes/{head}/HEAD")  # fmt: skip
        if any(name in packed or (common / name).is_file() for name in others):
            return None
        if (git_dir / head).exists() or (common / head).exists():  # a name git reads first
            return None
    born = not head or target in packed or (common / target).is_file()
    return Refs(head=head, remote=tuple(sorted(remote, key=lambda n: n.encode())), born=born)


def _file_dirs(root: Path) -> tuple[Path, Path] | None:
    """The clone's git and common directories where its refs are certain to be files git
    reads as they are (no variable of git's points elsewhere, no reftable); else None."""
    if any(os.environ.get(name) for name in _GIT_ENV):
        return None
    try:
        dirs = _git_dirs(root)
        if dirs is None or (dirs[1] / "reftable").exists():
            return None
    except (OSError, UnicodeDecodeError):
        return None
    return dirs


def _git_dirs(root: Path) -> tuple[Path, Path] | None:
    """The clone's git directory (HEAD's) and its common directory (the refs')."""
    dot = root / ".git"
    if dot.is_dir():
        git_dir = dot
    elif dot.is_file():
        line = dot.read_text(encoding="utf-8").strip()
        if not line.startswith("gitdir:"):
            return None
        git_dir = root / line[len("gitdir:") :].strip()  # an absolute path stays absolute
    else:
        return None
    common = git_dir
    pointer = git_dir / "commondir"
    if pointer.is_file():
        common = git_dir / pointer.read_text(encoding="utf-8").strip()
    return git_dir, common


def _packed_refs(common: Path) -> dict[str, str]:
    """The refs ``packed-refs`` holds: the object id each name points at."""
    try:
        text = (common / "packed-refs").read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    names = {}
    for line in text.splitlines():
        if line and line[0] not in "#^":
            sha, _, name = line.partition(" ")
            names[name.strip()] = sha
    return names


# A ref name read here: under refs/heads/ or refs/remotes/, in plain characters, none of
# the forms git refuses or reads otherwise (``..``, a component starting with a dot or
# ending in ``.lock``); any other name is left to git.
_PLAIN_REF = re.compile(r"refs/(?:heads|remotes)(?:/(?!\.)[\w+-][\w.+-]*)+")
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def ref_object(root: Path, name: str) -> tuple[Path, str] | None:
    """The object id the full ref ``name`` (``refs/remotes/origin/HEAD``) points at, as
    ``git rev-parse --verify name`` would say, read from the clone's files (a loose ref,
    a symbolic one followed, else ``packed-refs``), with the common git directory holding
    it. None where that is not certain to be git's answer, or the ref does not exist:
    the caller asks git then."""
    dirs = _file_dirs(root)
    if dirs is None:
        return None
    common = dirs[1]
    try:
        for _ in range(5):  # symbolic refs followed, as git does, a few deep
            if not _plain_ref(name):
                return None
            loose = common / name
            if loose.is_symlink():
                return None  # git's older symbolic refs: git follows those itself
            if loose.is_file():
                text = loose.read_text(encoding="utf-8").strip()
                if text.startswith("ref:"):
                    name = text[4:].strip()
                    continue
            elif loose.exists():
                return None  # a folder: git says no such ref, or reads it otherwise
            else:
                text = _packed_refs(common).get(name, "")
            return (common, text) if _OBJECT_ID.fullmatch(text) else None
    except (OSError, UnicodeDecodeError):
        return None
    return None


def head_object(root: Path) -> str | None:
    """The commit ``git rev-parse HEAD`` would name, read from the clone's files: a detached
    HEAD's, else its branch's (:func:`ref_object`). None where that is not certain."""
    dirs = _file_dirs(root)
    if dirs is None:
        return None
    try:
        text = (dirs[0] / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("ref:"):
        found = ref_object(root, text[4:].strip())
        return found[1] if found is not None else None
    return text if _OBJECT_ID.fullmatch(text) else None


def _plain_ref(name: str) -> bool:
    """Whether ``name`` is a ref this module reads (see ``_PLAIN_REF``)."""
    return bool(_PLAIN_REF.fullmatch(name)) and not any(
        part.endswith((".lock", ".")) for part in name.split("/")
    )


def _loose_refs(common: Path, prefix: str) -> list[str]:
    """The loose refs under ``prefix``, named from there (``main``, ``feature/x``)."""
    base = common / prefix
    found = []
    for folder, _, files in os.walk(base):
        for name in files:
            if not name.endswith(".lock"):
                found.append(os.path.relpath(os.path.join(folder, name), base).replace(os.sep, "/"))
    return found
