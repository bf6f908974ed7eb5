"""Loading relay's pytest plugin (``pytest_guard.py``) into a gate's pytest: a copy of it
under a random module name in a read-only folder outside the judged tree, named with
``-p`` before anything else pytest loads, its settings (the key that signs its verdicts,
the canary's name and token) in a one-shot 0600 file whose path alone is in the
environment (the plugin reads and removes it at load, before any of the project's code
runs; relay removes one no pytest claimed), and its verdicts written to a folder no one
can list. The file lies in that folder, which the gate's process can write to by name (in
a box, the box's own folder, which it sees at the same path) but never list.

The verdicts are judged by :func:`relay.loop.tamper.tampered` (pure).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from relay.loop.tamper import GuardKeys

ENV = "RELAY_PYTEST_GUARD"  # the path of the plugin's settings file (it removes both at load)
SOURCE = Path(__file__).with_name("pytest_guard.py")
VERDICT_CAP = 64 * 1024  # what relay reads of one verdict file


@dataclass(frozen=True)
class PytestGuard:
    """One gate run's plugin: its folder (outside the tree), the read-only folder its
    module lies in, the folder its verdicts go to, the one-shot file its settings are
    handed over in, and the secrets it was handed."""

    folder: Path
    plugin_dir: Path
    verdicts: Path
    settings: Path
    module: str
    name: str
    canary: str
    keys: GuardKeys

    def env(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with the plugin loaded first by any pytest that reads it (a program
        that is no pytest ignores all three): the path of its settings, never the
        settings themselves."""
        opts = env.get("PYTEST_ADDOPTS", "")
        env["PYTEST_ADDOPTS"] = f"-p {self.module} {opts}".strip()
        paths = [env.get("PYTHONPATH", ""), str(self.plugin_dir)]
        env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
        env[ENV] = str(self.settings)
        return env

    def written(self) -> list[str]:
        """The verdict files the run's pytest processes wrote (regular files only), read
        through the verdict folder itself: a link the run left in its place is refused,
        never followed (nothing outside relay's folder is listed or chmodded)."""
        from relay.ratchet.sandbox import read_regular

        try:
            names = sorted(
                name
                for name in _own_listing(self.folder, self.verdicts.name)
                if name.startswith(f"{self.name}-") and name.endswith(".json")
            )
        except OSError:
            return []
        found = []
        for name in names:
            data = read_regular(self.verdicts / name, VERDICT_CAP)
            found.append(data.decode("utf-8", errors="replace"))
        return found


_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_PATH = getattr(os, "O_PATH", 0) | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _own_dir(folder: Path, name: str, mode: int) -> int:
    """An open descriptor of ``folder/name``, a real folder (neither it nor ``folder`` a
    link: OSError then), set to ``mode`` first (it may be unreadable until then): through
    an O_PATH descriptor of it where there is one, never through a path a link can
    replace."""
    top = os.open(folder, _DIR)
    try:
        if hasattr(os, "O_PATH") and Path("/proc/self/fd").is_dir():
            held = os.open(name, _PATH, dir_fd=top)
            try:
                os.chmod(f"/proc/self/fd/{held}", mode)  # the folder held, not a name
            finally:
                os.close(held)
        else:
            if not stat.S_ISDIR(os.stat(name, dir_fd=top, follow_symlinks=False).st_mode):
                raise NotADirectoryError(name)
            os.chmod(name, mode, dir_fd=top)
        return os.open(name, _DIR, dir_fd=top)
    finally:
        os.close(top)


def _own_listing(folder: Path, name: str) -> list[str]:
    """The names in ``folder/name`` (made listable first), never through a link."""
    fd = _own_dir(folder, name, 0o700)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def pytest_guard(parent: Path | None) -> Iterator[PytestGuard]:
    """A fresh plugin for one run of a gate, under ``parent`` (the box's folder; the
    temporary folder when None); removed afterwards (its settings file with its verdicts,
    whether a pytest claimed it or not)."""
    folder = Path(tempfile.mkdtemp(prefix="relay-guard-", dir=parent))
    plugin_dir, verdicts = folder / "plugin", folder / "out"
    module = f"_relay_guard_{secrets.token_hex(6)}"
    try:
        plugin_dir.mkdir()
        verdicts.mkdir(mode=0o700)
        path = plugin_dir / f"{module}.py"
        path.write_text(uncovered(SOURCE.read_text(encoding="utf-8")), encoding="utf-8")
        path.chmod(0o444)
        plugin_dir.chmod(0o555)
        guard = PytestGuard(
            folder,
            plugin_dir,
            verdicts,
            verdicts / f"settings-{secrets.token_hex(16)}",  # no verdict's name
            module,
            name=secrets.token_hex(8),
            canary=f"test_{secrets.token_hex(6)}",
            keys=GuardKeys(key=secrets.token_hex(32), token=secrets.token_hex(16)),
        )
        _write_settings(guard)
        verdicts.chmod(0o300)  # written to by name, never listed, by the gate's process
        yield guard
    finally:
        for each in (plugin_dir, verdicts):
            with contextlib.suppress(OSError):
                os.close(_own_dir(folder, each.name, 0o700))  # a link there: left alone
        # in a box, the plugin stays until the box goes: a later gate of the same box
        # (`coverage json` after `coverage run -m pytest`) reads the source of what ran;
        # rmtree never follows a link
        gone = verdicts if parent is not None else folder
        if not folder.is_symlink() and not gone.is_symlink():
            shutil.rmtree(gone, ignore_errors=True)


def _write_settings(guard: PytestGuard) -> None:
    """The plugin's settings, in a new 0600 file of relay's (never through a link)."""
    body = json.dumps(
        {
            "folder": str(guard.verdicts),
            "name": guard.name,
            "key": guard.keys.key,
            "token": guard.keys.token,
            "canary": guard.canary,
        }
    ).encode()
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(guard.settings, flags, 0o600)
    try:
        view = memoryview(body)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def uncovered(source: str) -> str:
    """The plugin's source as one block coverage leaves out (``# pragma: no cover``): a
    gate's ``coverage run -m pytest`` measures the project, never relay's plugin."""
    future = "from __future__ import annotations\n"
    head, found, body = source.partition(future)
    if not found:
        head, body = "", source
    lines = body.splitlines(keepends=True)
    block = "".join("    " + line if line.strip() else line for line in lines)
    kept = future.rstrip("\n") + "  # pragma: no cover\n" if found else ""
    return head + kept + "if True:  # pragma: no cover\n" + block
