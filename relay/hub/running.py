"""One hub per data folder, and where the running hubs are.

A hub holds an exclusive lock on ``DATA/hub.pid`` for as long as it runs, so the lock,
not the file's mere presence, says whether a hub serves the folder: a second hub is
refused with the running one's pid and URL, and a file left by a hub that was killed (its
pid gone, or reused by another program) holds no lock and is replaced. The hub writes its
pid there, its record (pid, URL, data folder) beside it in ``hub.json`` and in a per-user
registry, and removes all three when it stops, so that ``relay hub token`` can find the
data folder of the hub ``RELAY_API_URL`` names.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from relay.errors import LocalUsageError

PID_FILE = "hub.pid"
RECORD_FILE = "hub.json"
_LOCK_OFFSET = 1 << 20  # Windows locks bytes: one far past the pid, which stays readable


@dataclass(frozen=True)
class HubRecord:
    """A running hub: its process, where it serves and the folder it serves from."""

    pid: int
    url: str
    data: Path


def registry_dir() -> Path:
    """Where each running hub leaves its record for this user (beside the default data)."""
    from relay.hub.server import default_data_dir

    return default_data_dir().parent / "hubs"


def _try_lock(fd: int) -> bool:
    """Take the exclusive lock on the open pid file without waiting; False if held."""
    if sys.platform == "win32":
        import msvcrt

        os.lseek(fd, _LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def _read_record(data_dir: Path) -> HubRecord | None:
    """The record a hub left in ``data_dir``, None if absent or unreadable."""
    try:
        found = json.loads((data_dir / RECORD_FILE).read_text())
        return HubRecord(int(found["pid"]), str(found["url"]), Path(str(found["data"])))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def serving(data_dir: Path) -> HubRecord | None:
    """The hub that serves ``data_dir`` now, None when none does (no pid file, or one
    whose hub is gone: nobody holds its lock)."""
    try:
        fd = os.open(data_dir / PID_FILE, os.O_RDWR)
    except OSError:
        return None
    try:
        if _try_lock(fd):
            return None  # a stale file: the lock dies with its process
    finally:
        os.close(fd)  # closing drops a lock this probe took
    record = _read_record(data_dir)
    if record is not None:
        return record
    try:  # a hub that holds the lock but has not said where it serves yet
        pid = int((data_dir / PID_FILE).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        pid = 0
    return HubRecord(pid, "starting, no URL yet", data_dir)


def refusal(running: HubRecord) -> LocalUsageError:
    """The one-line error for a second hub on a folder one already serves."""
    stop = f"taskkill /PID {running.pid} /F" if os.name == "nt" else f"kill {running.pid}"
    return LocalUsageError(
        f"a hub already serves {running.data} (pid {running.pid}, {running.url})",
        hint=f"use that one, stop it (`{stop}`) or pass another --data",
    )


class Claim:
    """This process's hold on a data folder: taken before the hub opens its store, published
    once it serves, released when it stops."""

    def __init__(self, data_dir: Path, fd: int) -> None:
        self.data_dir = data_dir
        self._fd: int | None = fd
        self._registered: Path | None = None

    def publish(self, url: str) -> None:
        """Say where this hub serves: the pid file, the record beside it, the registry."""
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.write(self._fd, f"{os.getpid()}\n".encode())
        record = json.dumps({"pid": os.getpid(), "url": url, "data": str(self.data_dir)})
        (self.data_dir / RECORD_FILE).write_text(record + "\n")
        with contextlib.suppress(OSError):  # a read-only home: found only through --data
            registry = registry_dir()
            registry.mkdir(parents=True, exist_ok=True)
            entry = registry / f"{os.getpid()}.json"
            entry.write_text(record + "\n")
            self._registered = entry

    def release(self) -> None:
        """Remove what :meth:`publish` wrote and drop the lock (idempotent)."""
        if self._fd is None:
            return
        for path in (self._registered, self.data_dir / RECORD_FILE, self.data_dir / PID_FILE):
            if path is not None:
                with contextlib.suppress(OSError):
                    path.unlink()
        os.close(self._fd)
        self._fd = None


def claim(data_dir: Path) -> Claim:
    """Take ``data_dir`` for this hub, or refuse: one hub per data folder."""
    path = data_dir / PID_FILE
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        return _claim(data_dir, path)
    except OSError as err:
        raise LocalUsageError(
            f"cannot take {path}: {err.strerror or err}",
            hint="pass a --data folder you can write",
        ) from None


def _claim(data_dir: Path, path: Path) -> Claim:
    for _ in range(10):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_lock(fd):
            os.close(fd)
            running = serving(data_dir)
            if running is None:  # it stopped between the two looks: try again
                continue
            raise refusal(running)
        try:  # a hub that stopped meanwhile unlinked the file this descriptor opened
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except OSError:
            same = False
        if same:
            with contextlib.suppress(OSError):  # a killed hub's record is stale
                (data_dir / RECORD_FILE).unlink()
            return Claim(data_dir, fd)
        os.close(fd)
    raise LocalUsageError(
        f"cannot take {path}: hubs keep starting and stopping on {data_dir}",
        hint="stop the other hubs on this --data and try again",
    )


def _same_server(a: str, b: str) -> bool:
    """Whether two base URLs name one server (localhost and 127.0.0.1 alike)."""
    loopback = {"localhost", "127.0.0.1", "::1"}

    def key(url: str) -> tuple[str, int | None]:
        parts = urlsplit(url.strip().rstrip("/"))
        host = parts.hostname or ""
        return ("loopback" if host in loopback else host, parts.port)

    return key(a) == key(b)


def running_hubs() -> list[HubRecord]:
    """The hubs of this user that run now, from the registry (entries of stopped ones are
    ignored: their data folder's lock is free)."""
    found = []
    try:
        entries = sorted(registry_dir().glob("*.json"))
    except OSError:
        return []
    for entry in entries:
        try:
            said = json.loads(entry.read_text())
            data = Path(str(said["data"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
        live = serving(data)
        if live is not None and live.pid == said.get("pid"):
            found.append(live)
    return found


def hub_for(api_url: str) -> HubRecord | None:
    """The running hub that serves ``api_url``, if it is one of this user's."""
    return next((hub for hub in running_hubs() if _same_server(hub.url, api_url)), None)
