"""cron: one line in the user's crontab, tagged with a marker and replaced in place.

``crontab -`` replaces the whole table, so every other line is read back and written
unchanged. The PATH (and the few other variables an entry keeps) is set on the line
itself as a prefix assignment: an ``NAME=value`` line in the crontab would change every
job below it, including the user's own. cron turns an unescaped ``%`` into a newline, so
each is written ``\\%``. The marker comment sits at the end of the line, where ``/bin/sh``
ignores it.

The schedule comes from the interval rounded to a step cron can express evenly: minutes
that divide an hour (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60), then hours that divide a
day (1, 2, 3, 4, 6, 8, 12, 24), the nearest one winning and ties going to the shorter.
So 300 s gives ``*/5``, 420 s gives ``*/6`` and 2400 s gives ``*/30``.

A crontab is only a table: nothing runs it unless a cron daemon does, and WSL and most
containers start none. ``verify`` therefore asks (``pgrep``, through the command seam; on
macOS whether launchd has cron's job) and reports an entry no daemon will run as
``blocked``, so `relay join` never calls it working and `relay doctor` fails on it.

Two relay processes editing the table at once would each write back what they read, so
the read-modify-write runs under a per-user ``flock``. cron refuses a command of
``MAX_COMMAND`` characters or more, so ``render`` refuses it first, saying what to do.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

from relay.errors import LocalUsageError
from relay.schedulers.base import Scheduler, SchedulerKind, Verification, prepare_logs
from relay.schedulers.entry import Entry

_MINUTE_STEPS = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60)
_HOUR_STEPS = (1, 2, 3, 4, 6, 8, 12, 24)
_NO_CRONTAB = "no crontab for"
# cron refuses a job line whose command is this long or longer ("command too long").
MAX_COMMAND = 1000
# The names cron daemons run under: Vixie/Debian cron, cronie and busybox crond, fcron, dcron.
DAEMON_NAMES = "cron|crond|fcron|dcron"
NO_DAEMON = (
    "no cron daemon is running here (WSL and containers start none), so nothing runs the"
    " entry: start cron (`sudo service cron start`, or your system's way), or run"
    " `relay watch` in a terminal"
)


def cron_schedule(seconds: int) -> str:
    """The five cron fields closest to firing every ``seconds`` (see the module doc)."""
    minutes = max(1, round(seconds / 60))
    if minutes < 60:
        step = _nearest(_MINUTE_STEPS, minutes)
        if step < 60:
            return "* * * * *" if step == 1 else f"*/{step} * * * *"
    hours = _nearest(_HOUR_STEPS, max(1, round(minutes / 60)))
    if hours == 24:
        return "0 0 * * *"
    return "0 * * * *" if hours == 1 else f"0 */{hours} * * *"


def marker(entry: Entry) -> str:
    """The comment that identifies this clone+node's line (the label hashes both)."""
    return f"# relay:{entry.label}"


class CronScheduler(Scheduler):
    """The invoking user's crontab, edited through ``crontab -l`` and ``crontab -``."""

    kind = SchedulerKind.CRON
    remedy = "check that `crontab -l` works for you (cron installed, you not in cron.deny)"

    def render(self, entry: Entry) -> dict[str, str]:
        """The one crontab line for ``entry``, marker included."""
        for word in (*entry.argv, entry.working_dir, entry.stdout_log, entry.stderr_log):
            if "\\%" in word:
                raise LocalUsageError(f"cron cannot express a backslash before % in {word!r}")
        env = " ".join(f"{name}={shlex.quote(value)}" for name, value in entry.environment)
        command = " ".join(shlex.quote(word) for word in entry.argv)
        body = (
            f"{{ cd {shlex.quote(entry.working_dir)} && {env} {command}; }}"
            f" >>{shlex.quote(entry.stdout_log)} 2>>{shlex.quote(entry.stderr_log)}"
        )
        command = f"{body.replace('%', chr(92) + '%')} {marker(entry)}"
        if len(command) >= MAX_COMMAND:
            raise LocalUsageError(
                f"the cron line would be {len(command)} characters; cron takes under {MAX_COMMAND}",
                hint="move the clone to a shorter path, or choose --scheduler systemd",
            )
        return {"crontab": f"{cron_schedule(entry.interval_seconds)} {command}"}

    def read(self) -> list[str]:
        """The user's crontab lines; "no crontab for" counts as empty whatever the status."""
        answer = self.run(["crontab", "-l"])
        if _NO_CRONTAB in answer.stderr and not answer.stdout.strip():
            return []  # stderr only: a user's own line may well say "no crontab for"
        if answer.returncode != 0:
            raise self.failure("cannot read the crontab", argv=["crontab", "-l"], answer=answer)
        return _lines(answer.stdout)

    def write(self, lines: list[str]) -> None:
        """Replace the whole crontab (cron wants the last line to end with a newline)."""
        self.check(["crontab", "-"], stdin="".join(f"{line}\n" for line in lines))

    def lock_path(self) -> Path:
        """The per-user lock around the read-modify-write of the crontab."""
        return self.home / ".cache" / "relay" / "crontab.lock"

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the per-user crontab lock: two relay processes editing the table at once
        would each write back what they read, and one line would be lost."""
        if os.name == "nt":  # no crontab there; nothing to serialise
            yield
            return
        import fcntl

        path = self.lock_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def register(self, entry: Entry) -> None:
        """Put the line in place of any earlier line of ours, else at the end."""
        line = self.render(entry)["crontab"]
        prepare_logs(entry)
        with self.locked():
            self._replace(entry, line)

    def _replace(self, entry: Entry, line: str) -> None:
        """The read-modify-write of ``register``, under the lock."""
        lines = self.read()
        updated: list[str] = []
        for old in lines:
            if not _is_ours(old, entry):
                updated.append(old)
            elif line not in updated:
                updated.append(line)
        if line not in updated:
            updated.append(line)
        if updated != lines:
            self.write(updated)

    def verify(self, entry: Entry) -> Verification:
        """Read the crontab back: exactly one line of ours, as rendered."""
        line = self.render(entry)["crontab"]
        mine = [old for old in self.read() if _is_ours(old, entry)]
        if mine == [line]:
            held = f"the crontab holds {marker(entry)}"
            running = self.daemon_running()
            if running is None:
                return self.verification(True, f"{held} (relay could not tell whether cron runs)")
            return self.verification(True, held, blocked="" if running else NO_DAEMON)
        if not mine:
            return self.verification(False, f"the crontab has no line {marker(entry)}")
        return self.verification(False, f"the crontab's {marker(entry)} line differs; join again")

    def daemon_argv(self) -> list[str]:
        """The command that asks whether a cron daemon runs: launchd's cron job on macOS
        (launchd starts cron when a table needs it), else a process of a cron's name."""
        if sys.platform == "darwin":
            return ["launchctl", "print", "system/com.vix.cron"]
        return ["pgrep", "-x", DAEMON_NAMES]

    def daemon_running(self) -> bool | None:
        """True when a cron daemon runs, False when none does, None when relay cannot tell
        (no pgrep); asked through the seam, so tests answer it as the machine they need."""
        answer = self.run(self.daemon_argv())
        if answer.returncode == 0:
            return True
        if answer.returncode == 1 or (sys.platform == "darwin" and answer.returncode != 127):
            return False
        return None

    def teardown(self, entry: Entry) -> None:
        """Drop our line and keep every other one; no write when there is nothing to drop.
        When nothing else is left the table was relay's alone: remove it (``crontab -r``)
        rather than leave an empty table where there was none."""
        with self.locked():
            lines = self.read()
            kept = [old for old in lines if not _is_ours(old, entry)]
            if kept == lines:
                return
            if kept:
                self.write(kept)
            else:
                self.check(["crontab", "-r"])


def _is_ours(line: str, entry: Entry) -> bool:
    """True for the line this entry owns (markers are unique per clone and node)."""
    return line.rstrip().endswith(f" {marker(entry)}")


def _lines(table: str) -> list[str]:
    """The crontab's lines, split on newlines only: ``str.splitlines`` would also split on
    form feeds and the like, and the user's lines must be written back byte for byte."""
    lines = table.split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _nearest(steps: tuple[int, ...], wanted: int) -> int:
    """The step closest to ``wanted``; a tie goes to the shorter step."""
    return min(steps, key=lambda step: (abs(step - wanted), step))
