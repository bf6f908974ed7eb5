"""A work tree's files as relay reads them on the host: never out of the tree.

A kept change can hold links (a maker wrote them), and a person's clone can too
(``CLAUDE.md -> AGENTS.md``); a link, or a folder on the way that is a link, can lead
anywhere on the host, and whatever relay reads through it may end up in the spine, a brief
or a commit. So every read of a tree's file by path goes through :func:`read_tree_file`:
the tree's top is opened as given (the person chose it), then each component below it,
one at a time relative to the folder already held, with ``O_NOFOLLOW``: the kernel follows
no link. A link met on the way is read (its text) and resolved by relay itself against the
folders it holds, so a link is followed only while every step stays under the top, out of
its ``.git``, in a bounded number of hops, and the walk ends at a regular file; a link
leaving the top, one into ``.git``, a loop, a FIFO, a device, a missing file or one larger
than the cap reads as None. A link swapped meanwhile changes nothing: no component is ever
looked up again from the top by name.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

TREE_FILE_CAP = 16 * 1024 * 1024  # a project file relay reads whole; a bigger one is skipped
LINK_HOPS = 40  # links followed in one read at most, as the kernel's own bound (ELOOP)

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_FILE = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
_GONE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENXIO, errno.EACCES, errno.EISDIR)
_LINKED = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)  # what O_NOFOLLOW says of a link


class _Refused(Exception):
    """The read leaves the tree, enters its ``.git``, loops, or ends at no regular file."""


def _link_text(name: str, folder: int) -> str | None:
    """The text of the link ``name`` in ``folder``, None when it is no link (any more)."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError as err:
        if err.errno in (errno.EINVAL, errno.ENOENT, errno.ENOTDIR):
            return None
        raise


def _open_in(top: int, parts: list[str]) -> int:
    """The regular file ``parts`` names under the folder ``top``, opened (the caller closes
    it) with every link on the way resolved by relay within ``top``: each folder held open,
    ``..`` taken back to the folder held before it (never the kernel's ``..``)."""
    held = [top]  # the folders from the top down to where the walk is, each held open
    names: list[str] = []  # their names below the top
    todo = list(parts)
    hops = 0
    try:
        while todo:
            part = todo.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if not names:
                    raise _Refused
                os.close(held.pop())
                names.pop()
                continue
            if hops and not names and part == ".git":
                raise _Refused  # a link into the repository's own files
            last = not todo
            try:
                fd = os.open(part, _FILE if last else _DIR, dir_fd=held[-1])
            except OSError as err:
                if err.errno not in _LINKED:
                    raise
                target = _link_text(part, held[-1])
                if target is None or os.path.isabs(target):
                    raise _Refused from None
                hops += 1
                if hops > LINK_HOPS:
                    raise _Refused from None
                todo[:0] = PurePosixPath(target).parts
                continue
            if last:
                return fd
            held.append(fd)
            names.append(part)
        raise _Refused  # the walk ended at the top itself
    finally:
        for fd in held[1:]:
            os.close(fd)


def read_tree_file(top: Path, path: str, cap: int = TREE_FILE_CAP) -> bytes | None:
    """The bytes of ``path`` (relative, as git names it) under ``top`` when it is a regular
    file there, reached through links only where each stays under ``top`` and out of its
    ``.git``; None otherwise (missing, a link leading out, into .git or round in a loop,
    not a regular file, or over ``cap`` bytes)."""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
        return None
    opened: list[int] = []
    try:
        root = os.open(top, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        opened.append(root)
        fd = _open_in(root, list(parts))
        opened.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        chunks, size = [], 0
        while size <= cap:
            got = os.read(fd, min(1 << 20, cap + 1 - size))
            if not got:
                break
            chunks.append(got)
            size += len(got)
        return None if size > cap else b"".join(chunks)
    except _Refused:
        return None
    except OSError as err:
        if err.errno in _GONE:
            return None
        raise
    finally:
        for each in opened:
            os.close(each)


def read_tree_text(top: Path, path: str, *, errors: str = "strict") -> str | None:
    """:func:`read_tree_file` as UTF-8 text; None also when it is not UTF-8 (with
    ``errors="strict"``)."""
    data = read_tree_file(top, path)
    if data is None:
        return None
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError:
        return None
