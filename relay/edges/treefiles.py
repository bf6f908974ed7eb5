"""A work tree's files as relay reads them on the host: never through a link.

A kept change can hold links (a maker wrote them); a link, or a folder on the way that is
a link, can lead anywhere on the host, and whatever relay reads through it may end up in
the spine, a brief or a commit. So every read of a tree's file by path goes through
:func:`read_tree_file`: the tree's top is opened as given (the person chose it), then
each folder below and the file itself without following a link; a link, a FIFO, a
device, a missing file, or one larger than the cap reads as None.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath

TREE_FILE_CAP = 16 * 1024 * 1024  # a project file relay reads whole; a bigger one is skipped

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_FILE = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
_GONE = (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENXIO, errno.EACCES, errno.EISDIR)


def read_tree_file(top: Path, path: str, cap: int = TREE_FILE_CAP) -> bytes | None:
    """The bytes of ``path`` (relative, as git names it) under ``top`` when it is a regular
    file reached without a link; None otherwise (missing, a link, a file under a link, not
    a regular file, or over ``cap`` bytes)."""
    parts = PurePosixPath(path).parts
    if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
        return None
    opened: list[int] = []
    try:
        fd = os.open(top, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        opened.append(fd)
        for part in parts[:-1]:
            fd = os.open(part, _DIR, dir_fd=fd)
            opened.append(fd)
        fd = os.open(parts[-1], _FILE, dir_fd=fd)
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
