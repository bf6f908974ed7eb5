"""Files written whole and files kept private: the one door for both.

``write_atomic`` writes a temp file in the same directory, fsyncs it and ``os.replace``s
it over the target, so a crash leaves the old file or the new one, never half of either.
``read_private`` reads a file that holds a secret (a token, a webhook secret) and refuses
one that others may read, as ssh does with a private key. The node's state, the ETag
cache and the scheduler backends' definitions (plists, unit files) all go through here.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from relay.errors import ConfigError


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` (created with ``mode``) through a synced temp file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_private(path: Path, *, what: str, empty_ok: bool = False) -> str | None:
    """The stripped text of a private file, None when it does not exist (or, with
    ``empty_ok``, holds nothing).

    Raises ConfigError when others may read it (POSIX; on Windows the profile's ACL
    applies) or when it is empty."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    mode = stat.S_IMODE(info.st_mode)
    if os.name != "nt" and mode & 0o077:
        raise ConfigError(
            f"{what} {path} is readable by others (mode {oct(mode)}); run: chmod 600 {path}"
        )
    value = path.read_text(encoding="utf-8").strip()
    if not value and empty_ok:
        return None
    if not value:
        raise ConfigError(f"{what} {path} is empty; write a value into it or delete it")
    return value
