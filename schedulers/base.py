"""The one interface every OS scheduler backend implements, and the one seam for OS calls.

Ground rules: ``render`` is pure (an entry in, native file texts out); every command a
backend runs goes through a ``CommandRunner`` (``run_command`` for real, a recorder in
tests); every file a backend keeps lives under a root it was given (``home``), so each
backend's tests run on every OS. ``verify`` asks the OS scheduler and never trusts our
own write.
"""

from __future__ import annotations

import codecs
import enum
import locale
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Protocol

from relay.edges.ownpath import own_argv
from relay.errors import RelayError
from relay.schedulers.entry import Entry


class SchedulerKind(enum.StrEnum):
    """The scheduler names written into the node table's scheduler column."""

    LAUNCHD = "launchd"
    TASK_SCHEDULER = "Task Scheduler"
    CRON = "cron"
    SYSTEMD = "systemd"


@dataclass(frozen=True)
class Completed:
    """What one OS command answered."""

    returncode: int
    stdout: str
    stderr: str

    def says(self, text: str) -> bool:
        """True when stdout or stderr contains ``text`` (OS messages are matched as text)."""
        return text in self.stdout or text in self.stderr


class CommandRunner(Protocol):
    """The seam every OS command goes through: argv (+ stdin text) in, ``Completed`` out."""

    def __call__(self, argv: Sequence[str], *, stdin: str | None = None) -> Completed: ...


def run_command(argv: Sequence[str], *, stdin: str | None = None) -> Completed:
    """Run one OS command for real; a missing program answers 127 instead of raising.

    Text goes both ways through ``decode``/``encode``, which keep undecodable bytes, so a
    crontab read and written back stays byte-identical whatever its encoding.
    """
    try:
        proc = subprocess.run(
            own_argv(argv),  # crontab, systemctl...: never one of a clone's folders
            input=None if stdin is None else encode(stdin),
            capture_output=True,
            timeout=60,
            check=False,
        )
    except FileNotFoundError:
        return Completed(127, "", f"{argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return Completed(124, "", f"{argv[0]}: no answer within 60 s")
    return Completed(proc.returncode, decode(proc.stdout or b""), decode(proc.stderr or b""))


def decode(raw: bytes) -> str:
    """An OS command's output as text: UTF-16 when it looks so (some Windows tools answer
    in it), else the locale's encoding with undecodable bytes kept as surrogates."""
    if raw[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return raw.decode("utf-16", errors="replace")
    if len(raw) >= 2 and raw[1] == 0 and raw[0] != 0:  # UTF-16-LE without a BOM
        return raw.decode("utf-16-le", errors="replace")
    return raw.decode(locale.getpreferredencoding(False), errors="surrogateescape")


def encode(text: str) -> bytes:
    """Text for an OS command's stdin: the inverse of ``decode`` for locale text."""
    return text.encode(locale.getpreferredencoding(False), errors="surrogateescape")


class SchedulerError(RelayError):
    """An OS scheduler command failed; carries the command line and what it answered."""

    code = "scheduler"
    exit_status = 1

    def __init__(
        self,
        message: str,
        *,
        argv: Sequence[str] = (),
        answer: Completed | None = None,
        hint: str | None = None,
    ) -> None:
        self.argv = tuple(argv)
        self.answer = answer
        detail = _first_line(answer.stderr or answer.stdout) if answer else ""
        super().__init__(f"{message}: {detail}" if detail else message, hint=hint)


@dataclass(frozen=True)
class Verification:
    """What the OS scheduler said about an entry: present and current, or why not."""

    ok: bool
    scheduler: str
    detail: str
    # The entry is in place, but nothing will run it (no cron daemon): why, and what to do.
    blocked: str = ""


class Scheduler(ABC):
    """One OS scheduler: render an entry, register it, verify it, tear it down."""

    kind: ClassVar[SchedulerKind]
    remedy: ClassVar[str]  # what to do when this scheduler refuses, for SchedulerError's hint
    home_os: ClassVar[str] = ""  # the one OS this scheduler exists on ("" for several)

    def __init__(
        self,
        *,
        runner: CommandRunner = run_command,
        home: Path | None = None,
        sleep: Callable[[float], None] | None = None,
        at_boot: bool = False,
    ) -> None:
        import time

        self.runner = runner
        self.home = home if home is not None else Path.home()
        self.sleep = sleep if sleep is not None else time.sleep
        # `relay join --at-boot`: run from boot with nobody logged in, where that takes more
        # than the default entry (a LaunchDaemon, lingering); the others already do.
        self.at_boot = at_boot

    def describe(self) -> str:
        """The name written into the node table (``launchd``, ``Task Scheduler``, ...)."""
        return self.kind.value

    def advice(self, entry: Entry) -> tuple[str, ...]:
        """Warnings `relay join` and `relay doctor` give about this scheduler: chiefly that
        passes wait for a login after a reboot (a LaunchAgent, a user not lingering)."""
        return ()

    def fix(self) -> str:
        """What to do when this scheduler refuses (``remedy``, unless this entry differs)."""
        return self.remedy

    def unattended_teardown(self) -> bool:
        """Whether a scheduled pass (no terminal, no administrator) can remove the entry."""
        return True

    @abstractmethod
    def render(self, entry: Entry) -> dict[str, str]:
        """Pure: the native definition of ``entry``, as file name -> file text."""

    @abstractmethod
    def register(self, entry: Entry) -> None:
        """Install (or replace) the entry; raises SchedulerError when the OS refuses."""

    @abstractmethod
    def verify(self, entry: Entry) -> Verification:
        """Ask the OS scheduler whether the entry exists as rendered."""

    @abstractmethod
    def teardown(self, entry: Entry) -> None:
        """Remove the entry; removing an absent entry is not an error."""

    def run(self, argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        """Run one command through the seam, whatever it answers."""
        return self.runner(argv, stdin=stdin)

    def check(self, argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        """Run one command through the seam; a non-zero status raises SchedulerError."""
        answer = self.runner(argv, stdin=stdin)
        if answer.returncode != 0:
            raise self.failure(f"`{' '.join(argv[:3])}` failed", argv=argv, answer=answer)
        return answer

    def failure(self, what: str, *, argv: Sequence[str], answer: Completed) -> SchedulerError:
        """A SchedulerError naming this scheduler, what it answered and what to do."""
        hint = self.fix()
        if answer.returncode == 127 and self.home_os:  # the program is not there at all
            hint = f"{self.describe()} exists only on {self.home_os}; choose another --scheduler"
        return SchedulerError(f"{self.describe()}: {what}", argv=argv, answer=answer, hint=hint)

    def verification(self, ok: bool, detail: str, *, blocked: str = "") -> Verification:
        """A Verification stamped with this scheduler's name."""
        return Verification(ok=ok, scheduler=self.describe(), detail=detail, blocked=blocked)


def prepare_logs(entry: Entry) -> None:
    """Create the log directories; schedulers open log files but never make directories.

    Only paths absolute on this machine are touched: a Windows entry rendered on POSIX
    (or the other way round) must never create directories relative to the cwd.
    """
    for log in (entry.stdout_log, entry.stderr_log):
        path = Path(log)
        if path.is_absolute():
            path.parent.mkdir(parents=True, exist_ok=True)


def _first_line(text: str) -> str:
    """The first non-empty line of an OS message, printable (no kept raw bytes)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip().encode("utf-8", "replace").decode("utf-8")
    return ""
