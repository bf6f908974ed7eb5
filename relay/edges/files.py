"""Files written whole and files kept private: the one door for both.

``write_atomic`` writes a temp file in the same directory, fsyncs it and ``os.replace``s
it over the target, so a crash leaves the old file or the new one, never half of either.
``read_private`` reads a file that holds a secret (a token, a webhook secret) and refuses
one that others may read, as ssh does with a private key. The node's state, the ETag
cache and the scheduler backends' definitions (plists, unit files) all go through here.

``write_private`` writes a secret (the token file, a node's signing key, the webhook
secret): mode 0600 on POSIX; on Windows, where the mode bits mean nothing, the file's ACL
is cut down to its owner with ``icacls`` (inherited entries removed, full control for
this account alone) before it takes the file's name, so the secret is never readable by
others, not even for a moment. icacls goes through ``AclRunner``, so the command line is
recorded and checked on any OS.

``write_state`` writes a file of the node's own state (``.git/relay/``): 0600 in
directories only this account may enter (0700), a wider directory left by an older relay
tightened on the next write, so another local account can neither read the node's claims
and caches nor hold its pass lock.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from relay.errors import ConfigError

# The seam for the ACL command: argv in, (status, what it said) out.
AclRunner = Callable[[Sequence[str]], tuple[int, str]]


def write_atomic(
    path: Path, data: bytes, *, mode: int = 0o644, prepare: Callable[[Path], None] | None = None
) -> None:
    """Replace ``path`` with ``data`` (created with ``mode``) through a synced temp file;
    ``prepare`` gets the temp file before it takes the name (an ACL, say)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if prepare is not None:
            prepare(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def private_dir(path: Path, *, top: Path | None = None) -> None:
    """Make ``path`` — and each directory from ``top`` (default: ``path`` alone) down to
    it — one only this account may enter: created 0700, a wider one tightened. On
    Windows the mode bits mean nothing: directories are made as they always were."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if os.name == "nt":
        return
    top = top or path
    for folder in (path, *path.parents):
        if not folder.is_relative_to(top):
            break
        if stat.S_IMODE(folder.stat().st_mode) != 0o700:
            os.chmod(folder, 0o700)


def write_state(path: Path, data: bytes, *, top: Path | None = None) -> None:
    """Write a file of the node's state: 0600, in directories from ``top`` (default: its
    own) down to it that only this account may enter."""
    private_dir(path.parent, top=top)
    write_atomic(path, data, mode=0o600)


def private_file(path: Path, *, top: Path | None = None) -> None:
    """Create ``path`` empty if it is missing (a lock file), 0600 in private directories;
    an existing one is tightened, its content kept."""
    private_dir(path.parent, top=top)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        if os.name != "nt" and stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


def write_private(
    path: Path,
    data: bytes,
    *,
    platform: str | None = None,
    runner: AclRunner | None = None,
    user: str | None = None,
) -> None:
    """Write a secret readable by this account only: 0600, and on Windows an owner-only
    ACL; ConfigError (and nothing written) when the ACL cannot be set."""
    windows = (platform or sys.platform) == "win32"

    def restrict(tmp: Path) -> None:
        restrict_to_owner(tmp, runner=runner, user=user, shown=path)

    if not windows:
        private_dir(path.parent)
    write_atomic(path, data, mode=0o600, prepare=restrict if windows else None)


def owner_account(environ: dict[str, str] | None = None) -> str:
    """This Windows account as icacls names it: DOMAIN\\user (or just the user)."""
    import getpass

    env = dict(os.environ) if environ is None else environ
    user = env.get("USERNAME") or getpass.getuser()
    domain = env.get("USERDOMAIN", "")
    return f"{domain}\\{user}" if domain else user


def icacls_argv(path: Path, user: str) -> list[str]:
    """Owner-only: drop the inherited entries, then replace every grant with full control
    for ``user`` alone."""
    return ["icacls", str(path), "/inheritance:r", "/grant:r", f"{user}:(F)"]


def restrict_to_owner(
    path: Path, *, runner: AclRunner | None = None, user: str | None = None, shown: Path
) -> None:
    """Cut ``path``'s ACL down to this account; ConfigError saying what to run if not."""
    argv = icacls_argv(path, user or owner_account())
    status, said = (runner or _run_acl)(argv)
    if status != 0:
        first = next((line.strip() for line in said.splitlines() if line.strip()), "")
        raise ConfigError(
            f"could not restrict {shown} to this account (icacls: {first or status})",
            hint=f'check that icacls works here: icacls "{shown}" /inheritance:r'
            f' /grant:r "{argv[-1]}"',
        )


def _run_acl(argv: Sequence[str]) -> tuple[int, str]:
    """Run icacls for real."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return 127, str(err)
    return done.returncode, (done.stderr or done.stdout)


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
