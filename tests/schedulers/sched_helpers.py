"""A recording CommandRunner (the OS seam's test double) and entries with awkward paths."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from relay.schedulers import Completed, Entry, label_for

OK = Completed(0, "", "")


@dataclass
class Recorder:
    """Stands in for launchctl/schtasks/systemctl: records argv, answers from a script.

    ``answers`` maps an argv prefix to the answers given in turn (the last one repeats);
    anything unscripted answers success. ``peek`` sees each argv while the command "runs".
    """

    answers: dict[tuple[str, ...], list[Completed]] = field(default_factory=dict)
    peek: Callable[[tuple[str, ...]], None] | None = None
    calls: list[tuple[str, ...]] = field(default_factory=list)
    stdins: list[str | None] = field(default_factory=list)

    def __call__(self, argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        words = tuple(argv)
        self.calls.append(words)
        self.stdins.append(stdin)
        if self.peek is not None:
            self.peek(words)
        for prefix, queue in self.answers.items():
            if words[: len(prefix)] == prefix:
                return queue.pop(0) if len(queue) > 1 else queue[0]
        return OK


def awkward_entry(
    root: Path, *, node: str = "mac-mini", python: str | None = None, interval: int = 300
) -> Entry:
    """An entry whose clone path has spaces, non-ASCII characters, % and a quote.

    On POSIX it comes from ``Entry.create`` with real directories under ``root``; on
    Windows, whose paths the POSIX backends cannot take, it is built by hand with POSIX
    paths that exist nowhere, so the launchd, cron and systemd tests still run there.
    """
    if os.name == "nt":
        return _posix_entry(root, node=node, python=python, interval=interval)
    clone = root / "My Clones" / "relé 项目 100% it's"
    clone.mkdir(parents=True, exist_ok=True)
    environ = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    return Entry.create(
        clone=clone,
        node=node,
        state_dir=root / "state dir",
        python=Path(python) if python else None,
        interval_seconds=interval,
        environ=environ,
    )


def _posix_entry(root: Path, *, node: str, python: str | None, interval: int) -> Entry:
    """What ``awkward_entry`` gives on POSIX, for a machine whose paths are not POSIX."""
    home = PurePosixPath("/home/zoë") / root.name
    clone = str(home / "My Clones" / "relé 项目 100% it's")
    program = python or "/usr/local/bin/python3"
    argv = (program, "-m", "relay.cli", "watch", "--once", "--repo-dir", clone, "--node", node)
    dirs = (str(PurePosixPath(program).parent), "/usr/local/bin", "/usr/bin", "/bin")
    path = ":".join(dict.fromkeys(dirs))
    return Entry(
        label=label_for(clone=root, node=node),
        argv=argv,
        working_dir=clone,
        stdout_log=str(home / "state dir" / "watch.log"),
        stderr_log=str(home / "state dir" / "watch.err.log"),
        interval_seconds=interval,
        environment=(("PATH", path), ("LANG", "C.UTF-8")),
        description=f"relay watcher for node {node} in {clone}",
    )


def windows_entry(*, clone: str, node: str = "win-box", interval: int = 300) -> Entry:
    """A Windows entry built by hand, so it renders the same on any OS."""
    python = r"C:\Program Files\Python 3.12\python.exe"
    return Entry(
        label=f"relay-watch-{node}-0123456789ab",
        argv=(python, "-m", "relay.cli", "watch", "--once", "--repo-dir", clone, "--node", node),
        working_dir=clone,
        stdout_log=r"C:\Users\Zoë\AppData\Local\relay\watch.log",
        stderr_log=r"C:\Users\Zoë\AppData\Local\relay\watch.err.log",
        interval_seconds=interval,
        environment=(("PATH", r"C:\Program Files\Python 3.12;C:\Windows\system32"),),
        description=f"relay watcher for node {node}",
    )


@dataclass
class FakeLaunchd:
    """launchctl as launchd documents it, for one gui domain: ``bootstrap`` loads a plist's
    label, ``print`` succeeds only for a loaded label, ``bootout`` unloads it and sends
    SIGTERM to the job's running process (recorded in ``terminated``)."""

    loaded: set[str] = field(default_factory=set)
    running: set[str] = field(default_factory=set)
    terminated: list[str] = field(default_factory=list)
    calls: list[tuple[str, ...]] = field(default_factory=list)

    def __call__(self, argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        import plistlib

        words = tuple(argv)
        self.calls.append(words)
        verb, target = words[1], words[-1]
        label = target.rsplit("/", 1)[-1]
        if verb == "bootstrap":
            label = plistlib.loads(Path(target).read_bytes())["Label"]
            if label in self.loaded:
                return Completed(5, "", "Bootstrap failed: 5: Input/output error\n")
            self.loaded.add(label)
            return OK
        if label not in self.loaded:
            return Completed(113, "", f"Could not find service {label!r}\n")
        if verb == "bootout":
            self.loaded.discard(label)
            if label in self.running:
                self.terminated.append(label)
        return OK


def standin_bin(tmp_path: Path) -> Path:
    """The directory of this test's stand-in programs (first on the PATH)."""
    return tmp_path / "cron-standin" / "bin"


def standin_script(path: Path, body: str) -> None:
    """A small shell program at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def cron_daemon(tmp_path: Path, *, running: bool) -> None:
    """Make the stand-in ``pgrep`` answer as a machine with (or without) a cron daemon."""
    answer = "echo 4242; exit 0" if running else "exit 1"
    standin_script(standin_bin(tmp_path) / "pgrep", answer)
