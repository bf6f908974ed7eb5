"""launchd (macOS): a per-user LaunchAgent in ``~/Library/LaunchAgents/<label>.plist``.

launchd never starts a second instance of a job still running, and misses (rather than
queues) firings while the Mac sleeps, so ``StartInterval`` with ``RunAtLoad`` is enough.
The plist sets PATH itself because launchd's default PATH is minimal. ``bootstrap``
answers "5: Input/output error" when a label is still draining after ``bootout``, so it
is retried briefly.
"""

from __future__ import annotations

import os
import plistlib
from collections.abc import Callable
from pathlib import Path

from relay.edges.files import write_atomic
from relay.errors import LocalUsageError
from schedulers.base import (
    CommandRunner,
    Completed,
    Scheduler,
    SchedulerKind,
    Verification,
    prepare_logs,
    run_command,
)
from schedulers.entry import Entry

_RETRIES = 4
_IO_ERROR = "Input/output error"


class LaunchdScheduler(Scheduler):
    """LaunchAgents in the logged-in user's GUI domain (``gui/<uid>``)."""

    kind = SchedulerKind.LAUNCHD
    remedy = "join from a logged-in desktop session (the gui domain), or use --scheduler cron"
    home_os = "macOS"

    def __init__(
        self,
        *,
        runner: CommandRunner = run_command,
        home: Path | None = None,
        sleep: Callable[[float], None] | None = None,
        uid: int | None = None,
    ) -> None:
        super().__init__(runner=runner, home=home, sleep=sleep)
        self.uid = uid if uid is not None else _current_uid()

    @property
    def domain(self) -> str:
        """The launchctl domain the agent lives in."""
        return f"gui/{self.uid}"

    def plist_path(self, entry: Entry) -> Path:
        """Where the LaunchAgent definition is kept."""
        return self.home / "Library" / "LaunchAgents" / f"{entry.label}.plist"

    def render(self, entry: Entry) -> dict[str, str]:
        """The LaunchAgent plist as XML text."""
        _require_posix_paths(entry)
        job = {
            "Label": entry.label,
            "ProgramArguments": list(entry.argv),
            "StartInterval": entry.interval_seconds,
            "RunAtLoad": True,
            "WorkingDirectory": entry.working_dir,
            "EnvironmentVariables": entry.env,
            "StandardOutPath": entry.stdout_log,
            "StandardErrorPath": entry.stderr_log,
        }
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
        write_atomic(plist, data)
        if loaded:
            self.run(["launchctl", "bootout", f"{self.domain}/{entry.label}"])
        self._bootstrap(plist)

    def _bootstrap(self, plist: Path) -> Completed:
        """``launchctl bootstrap`` with a short retry on launchd's transient I/O error."""
        argv = ["launchctl", "bootstrap", self.domain, str(plist)]
        for attempt in range(_RETRIES):
            answer = self.run(argv)
            if answer.returncode == 0:
                return answer
            if not answer.says(_IO_ERROR) or attempt == _RETRIES - 1:
                break
            self.sleep(0.5 * (attempt + 1))
        raise self.failure("refused the LaunchAgent", argv=argv, answer=answer)

    def verify(self, entry: Entry) -> Verification:
        """``launchctl print`` succeeds only for a job launchd has loaded."""
        answer = self.run(["launchctl", "print", f"{self.domain}/{entry.label}"])
        if answer.returncode == 0:
            return self.verification(True, f"launchd has {self.domain}/{entry.label}")
        return self.verification(False, f"launchd does not know {self.domain}/{entry.label}")

    def teardown(self, entry: Entry) -> None:
        """Remove the plist, then boot the job out (absent is fine): a pass of this very
        job gets SIGTERM from the bootout, so nothing is left for after it."""
        self.plist_path(entry).unlink(missing_ok=True)
        self.run(["launchctl", "bootout", f"{self.domain}/{entry.label}"])


def _current_uid() -> int:
    """The caller's uid; only POSIX has one, so this is asked when the backend is built."""
    getuid = getattr(os, "getuid", None)
    return int(getuid()) if getuid is not None else 0


def _require_posix_paths(entry: Entry) -> None:
    """launchd needs absolute paths; a relative one would resolve against ``/``."""
    for path in (entry.argv[0], entry.working_dir, entry.stdout_log, entry.stderr_log):
        if not path.startswith("/"):
            raise LocalUsageError(f"launchd needs absolute paths, got {path!r}")
