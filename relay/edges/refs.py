"""The branch checked out and the remote's branches, read from a clone's own files.

A pass asks these often; a git process for each answer cost more than the pass's own work.
Only where the files say for certain what git would: anywhere else the caller asks git.
"""

from __future__ import annotations

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
_GIT_ENV = ("GIT_DIR", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_REF_STORAGE")
_REMOTE = "refs/remotes/origin/"


def read_refs(root: Path) -> Refs | None:
    """The branch checked out and the remote's branches, read from ``.git`` (a directory,
    or a worktree's or submodule's ``gitdir:`` file) as git stores them: ``HEAD``, loose
    refs and ``packed-refs``. None where that is not certain to be git's answer (another
    ref storage, a name git would shorten otherwise, a file it cannot read): the caller
    asks git then."""
    import os

    if any(os.environ.get(name) for name in _GIT_ENV):
        return None
    try:
        dirs = _git_dirs(root)
        if dirs is None:
            return None
        git_dir, common = dirs
        if (common / "reftable").exists():
            return None
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


def _packed_refs(common: Path) -> set[str]:
    """The ref names ``packed-refs`` holds."""
    try:
        text = (common / "packed-refs").read_text(encoding="utf-8")
    except FileNotFoundError:
        return set()
    names = set()
    for line in text.splitlines():
        if line and line[0] not in "#^":
            _, _, name = line.partition(" ")
            names.add(name.strip())
    return names


def _loose_refs(common: Path, prefix: str) -> list[str]:
    """The loose refs under ``prefix``, named from there (``main``, ``feature/x``)."""
    import os

    base = common / prefix
    found = []
    for folder, _, files in os.walk(base):
        for name in files:
            if not name.endswith(".lock"):
                found.append(os.path.relpath(os.path.join(folder, name), base).replace(os.sep, "/"))
    return found
