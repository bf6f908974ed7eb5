"""launchd (macOS): a per-user LaunchAgent in ``~/Library/LaunchAgents/<label>.plist``,
or, with `relay join --at-boot`, a LaunchDaemon in ``/Library/LaunchDaemons/<label>.plist``.

A LaunchAgent lives in the user's GUI domain (``gui/<uid>``): after a reboot it runs only
once that user logs in, which ``advice`` says at join and in doctor. A LaunchDaemon lives
in the ``system`` domain, so it runs from boot with nobody logged in; its ``UserName`` key
makes launchd run it as the joining user (never as root), with their ``HOME``. Its plist
must belong to root, so writing, loading and removing it needs an administrator: relay
runs exactly those commands through ``sudo`` (which asks for the password) and nothing
else, so the clone and its state stay the user's own. A scheduled pass has no terminal to
ask for a password, so it cannot remove a LaunchDaemon; `relay leave` can.

launchd never starts a second instance of a job still running, and misses (rather than
queues) firings while the Mac sleeps, so ``StartInterval`` with ``RunAtLoad`` is enough.
The plist sets PATH itself because launchd's default PATH is minimal. ``bootstrap``
answers "5: Input/output error" when a label is still draining after ``bootout``, so it
is retried briefly.
"""

from __future__ import annotations

import os
import plistlib
import tempfile
from collections.abc import Callable
from pathlib import Path

from relay.edges.files import write_atomic
from relay.errors import LocalUsageError
from relay.schedulers.base import (
    CommandRunner,
    Completed,
    Scheduler,
    SchedulerKind,
    Verification,
    prepare_logs,
    run_command,
)
from relay.schedulers.entry import Entry

_RETRIES = 4
_IO_ERROR = "Input/output error"
AGENT_REMEDY = "join from a logged-in desktop session (the gui domain), or use --scheduler cron"
DAEMON_REMEDY = (
    "a LaunchDaemon needs an administrator: run `relay join --at-boot` as a user who may"
    " use sudo, or join without --at-boot (passes then wait for a login after a reboot)"
)


class LaunchdScheduler(Scheduler):
    """LaunchAgents in the user's GUI domain (``gui/<uid>``); with ``at_boot``, a
    LaunchDaemon in the ``system`` domain that runs as the user."""

    kind = SchedulerKind.LAUNCHD
    remedy = AGENT_REMEDY
    home_os = "macOS"

    def __init__(
        self,
        *,
        runner: CommandRunner = run_command,
        home: Path | None = None,
        sleep: Callable[[float], None] | None = None,
        at_boot: bool = False,
        uid: int | None = None,
        euid: int | None = None,
        user: str | None = None,
        root: Path = Path("/"),
    ) -> None:
        super().__init__(runner=runner, home=home, sleep=sleep, at_boot=at_boot)
        self.uid = uid if uid is not None else _current_uid()
        self.euid = euid if euid is not None else _current_euid()
        self.user = user or _login_name(self.euid)
        self.root = root  # the system's root; a test's directory in tests

    def fix(self) -> str:
        """A LaunchDaemon's refusal is about administrator rights."""
        return DAEMON_REMEDY if self.at_boot else AGENT_REMEDY

    @property
    def domain(self) -> str:
        """The launchctl domain the job lives in."""
        return "system" if self.at_boot else f"gui/{self.uid}"

    def plist_path(self, entry: Entry) -> Path:
        """Where the job's definition is kept."""
        if self.at_boot:
            return self.root / "Library" / "LaunchDaemons" / f"{entry.label}.plist"
        return self.home / "Library" / "LaunchAgents" / f"{entry.label}.plist"

    def admin(self, argv: list[str]) -> list[str]:
        """``argv`` as an administrator: through sudo unless this already is root."""
        return argv if self.euid == 0 else ["sudo", *argv]

    def unattended_teardown(self) -> bool:
        """A LaunchDaemon is removed only by an administrator, which a pass is not."""
        return not self.at_boot or self.euid == 0

    def advice(self, entry: Entry) -> tuple[str, ...]:
        """Whether passes run after a reboot before anybody logs in."""
        if self.at_boot:
            return (
                f"launchd runs this watcher from boot as {self.user}, with nobody logged in"
                f" (a LaunchDaemon, {self.plist_path(entry)}); removing it needs an"
                " administrator: `relay leave` asks sudo",
            )
        return (
            "warning: launchd runs this watcher only while you are logged in: after a reboot"
            " no pass runs until you log in; `relay join --at-boot` installs a LaunchDaemon"
            " that runs from boot (it needs an administrator)",
        )

    def render(self, entry: Entry) -> dict[str, str]:
        """The plist as XML text (a LaunchDaemon's names its user and their HOME)."""
        _require_posix_paths(entry)
        environment = entry.env
        if self.at_boot:  # launchd gives a daemon no HOME of the user's
            environment.setdefault("HOME", str(self.home))
        job: dict[str, object] = {
            "Label": entry.label,
            "ProgramArguments": list(entry.argv),
            "StartInterval": entry.interval_seconds,
            "RunAtLoad": True,
            "WorkingDirectory": entry.working_dir,
            "EnvironmentVariables": environment,
            "StandardOutPath": entry.stdout_log,
            "StandardErrorPath": entry.stderr_log,
        }
        if self.at_boot:
            if not self.user or self.user == "root":
                raise LocalUsageError(
                    "a LaunchDaemon for relay runs as you, not as root",
                    hint="run `relay join --at-boot` as yourself; relay asks sudo when it must",
                )
            job["UserName"] = self.user
        text = plistlib.dumps(job, fmt=plistlib.FMT_XML, sort_keys=False).decode("utf-8")
        return {f"{entry.label}.plist": text}

    def register(self, entry: Entry) -> None:
        """Write the plist and bootstrap it; an unchanged, loaded job is left alone.

        ``bootout`` ends a running pass of the job (SIGTERM), so it is used only to replace
        a loaded job whose plist changed, never for a label launchd does not have."""
        (text,) = self.render(entry).values()
        data = text.encode("utf-8")
        prepare_logs(entry)
        plist = self.plist_path(entry)
        loaded = self.verify(entry).ok
        if loaded and plist.is_file() and plist.read_bytes() == data:
            return
        self._write(plist, data)
        if loaded:
            self.run(self.admin(["launchctl", "bootout", f"{self.domain}/{entry.label}"]))
        self._bootstrap(plist)

    def _write(self, plist: Path, data: bytes) -> None:
        """Write the plist: the user's own for an agent; root's (0644) for a daemon, through
        ``sudo install`` when this is not root (launchd refuses a daemon plist others own)."""
        if not self.at_boot or self.euid == 0:
            write_atomic(plist, data)
            return
        with tempfile.TemporaryDirectory(prefix="relay-launchd-") as tmp:
            staged = Path(tmp) / plist.name
            staged.write_bytes(data)
            argv = ["install", "-m", "0644", "-o", "root", "-g", "wheel", str(staged), str(plist)]
            answer = self.run(self.admin(argv))
            if answer.returncode != 0:
                raise self.failure("could not install the LaunchDaemon", argv=argv, answer=answer)

    def _bootstrap(self, plist: Path) -> Completed:
        """``launchctl bootstrap`` with a short retry on launchd's transient I/O error."""
        argv = self.admin(["launchctl", "bootstrap", self.domain, str(plist)])
        for attempt in range(_RETRIES):
            answer = self.run(argv)
            if answer.returncode == 0:
                return answer
            if not answer.says(_IO_ERROR) or attempt == _RETRIES - 1:
                break
            self.sleep(0.5 * (attempt + 1))
        what = "LaunchDaemon" if self.at_boot else "LaunchAgent"
        raise self.failure(f"refused the {what}", argv=argv, answer=answer)

    def verify(self, entry: Entry) -> Verification:
        """``launchctl print`` succeeds only for a job launchd has loaded."""
        answer = self.run(["launchctl", "print", f"{self.domain}/{entry.label}"])
        if answer.returncode == 0:
            return self.verification(True, f"launchd has {self.domain}/{entry.label}")
        return self.verification(False, f"launchd does not know {self.domain}/{entry.label}")

    def teardown(self, entry: Entry) -> None:
        """Remove the plist, then boot the job out (absent is fine): a pass of this very
        job gets SIGTERM from the bootout, so nothing is left for after it."""
        self.remove_plist(entry)
        self.run(self.admin(["launchctl", "bootout", f"{self.domain}/{entry.label}"]))

    def remove_plist(self, entry: Entry) -> None:
        """Delete the plist (absent is fine); a daemon's through sudo, which may refuse."""
        plist = self.plist_path(entry)
        if not self.at_boot or self.euid == 0:
            plist.unlink(missing_ok=True)
            return
        argv = self.admin(["rm", "-f", str(plist)])
        answer = self.run(argv)
        if answer.returncode != 0:
            raise self.failure("could not remove the LaunchDaemon", argv=argv, answer=answer)


def _current_euid() -> int:
    """The effective uid (0 when relay itself runs as root)."""
    geteuid = getattr(os, "geteuid", None)
    return int(geteuid()) if geteuid is not None else 0


def _login_name(euid: int) -> str:
    """Whom a LaunchDaemon runs as: the joining user (the one behind sudo, if root)."""
    import getpass

    if euid == 0 and os.environ.get("SUDO_USER"):
        return os.environ["SUDO_USER"]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def _current_uid() -> int:
    """The caller's uid; only POSIX has one, so this is asked when the backend is built."""
    getuid = getattr(os, "getuid", None)
    return int(getuid()) if getuid is not None else 0


def _require_posix_paths(entry: Entry) -> None:
    """launchd needs absolute paths; a relative one would resolve against ``/``."""
    for path in (entry.argv[0], entry.working_dir, entry.stdout_log, entry.stderr_log):
        if not path.startswith("/"):
            raise LocalUsageError(f"launchd needs absolute paths, got {path!r}")
