"""Entries that fire at a time of day rather than every few minutes: the one-shot resume
`relay loop run` registers when a maker hits a usage limit, and the daily run
`relay loop schedule --at HH:MM` registers.

Each backend is the watcher's own, with the schedule rendered differently:

- launchd: ``StartCalendarInterval`` (month, day, hour and minute for a one-shot; hour and
  minute daily), no ``RunAtLoad``;
- Task Scheduler: a ``TimeTrigger`` with no repetition (schtasks' ``ONCE``) that expires an
  hour later and is deleted once expired (``DeleteExpiredTaskAfter``); daily, a
  ``CalendarTrigger`` every day;
- systemd: a one-shot is a transient timer (``systemd-run --user --on-calendar``), which
  the user manager forgets once it has fired; daily, the watcher's units with
  ``OnCalendar=*-*-* HH:MM:00``;
- cron: a line pinned to minute, hour, day and month that removes itself from the
  crontab after it runs; daily, ``M H * * *``.

Ground rules: the same seam, the same verification by asking the OS and the same
teardown as watchers; a one-shot also removes itself, and the command it runs removes
its entry first thing, whatever happens next.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from relay import RELAY_MODULE
from relay.errors import LocalUsageError
from relay.schedulers.base import Scheduler, Verification, prepare_logs
from relay.schedulers.cron import MAX_COMMAND, CronScheduler, marker
from relay.schedulers.entry import Entry, safe_environment
from relay.schedulers.launchd import LaunchdScheduler
from relay.schedulers.systemd import SystemdScheduler, plain_path, plain_text
from relay.schedulers.taskscheduler import NAMESPACE, TaskScheduler, _el

RESUME_PREFIX = "relay-resume"
DAILY_PREFIX = "relay-loop"


@dataclass(frozen=True)
class When:
    """When a timed entry fires: once at ``at`` (an aware time), or every day at
    ``daily`` (hour, minute, the machine's local time)."""

    at: datetime | None = None
    daily: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if (self.at is None) == (self.daily is None):
            raise LocalUsageError("a timed entry fires once (at) or daily, not both or neither")
        if self.at is not None and self.at.tzinfo is None:
            raise LocalUsageError("a one-shot time needs a time zone")
        if self.daily is not None:
            hour, minute = self.daily
            if not (0 <= hour <= 23 and 0 <= minute <= 59):
                raise LocalUsageError(f"{hour:02d}:{minute:02d} is not a time of day")

    def local(self) -> datetime:
        """The one-shot time in the machine's local time (what cron and launchd count in)."""
        assert self.at is not None
        return self.at.astimezone()

    def describe(self) -> str:
        if self.at is not None:
            return f"once at {self.at.astimezone(UTC).strftime('%Y-%m-%d %H:%M')} UTC"
        assert self.daily is not None
        return f"daily at {self.daily[0]:02d}:{self.daily[1]:02d}"


def parse_hhmm(text: str) -> tuple[int, int]:
    """``HH:MM`` as (hour, minute); LocalUsageError naming what is wrong."""
    match = re.fullmatch(r"(\d{1,2}):(\d{2})", text.strip())
    if match is None or int(match.group(1)) > 23 or int(match.group(2)) > 59:
        raise LocalUsageError(f"--at {text!r} is not a time of day", hint="give it as HH:MM")
    return int(match.group(1)), int(match.group(2))


def timed_label(prefix: str, clone: Path) -> str:
    """A label unique per clone for a timed entry of one kind."""
    digest = hashlib.sha256(str(clone).encode()).hexdigest()[:12]
    return f"{prefix}-{digest}"


def timed_entry(
    *,
    prefix: str,
    clone: Path,
    args: Sequence[str],
    state_dir: Path,
    description: str,
    python: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Entry:
    """The entry that runs ``python -P -m relay.cli ARGS`` in ``clone`` (logs in
    ``state_dir``); of a PYTHONPATH, only the folder relay is found through now is kept,
    so the entry runs this very relay, never the clone's own ``relay/``, and never
    imports another module from the project's folders (its ``src/keyring``, kept from
    a maker): the gates get the project's PYTHONPATH from the env file, relay does not."""
    clone, state_dir = clone.resolve(), state_dir.resolve()
    interpreter = str(Path(python or sys.executable).absolute())
    source = os.environ if environ is None else environ
    # absolute, no empty word: either would put the entry's working directory (the clone)
    # back on sys.path, which the interpreter's ``-P`` keeps off
    words = [os.path.abspath(p) for p in source.get("PYTHONPATH", "").split(os.pathsep) if p]
    kept = [p for p in words if Path(p).resolve() == relay_folder()]
    own = (("PYTHONPATH", os.pathsep.join(dict.fromkeys(kept))),) if kept else ()
    return Entry(
        label=timed_label(prefix, clone),
        argv=(interpreter, *RELAY_MODULE, *args),
        working_dir=str(clone),
        stdout_log=str(state_dir / f"{prefix}.log"),
        stderr_log=str(state_dir / f"{prefix}.err.log"),
        environment=(*safe_environment(source, interpreter=interpreter), *own),
        description=description,
    )


def relay_folder() -> Path:
    """The folder the running relay package is imported from (the one holding
    ``relay/``)."""
    import relay

    return Path(relay.__file__).resolve().parent.parent


# --- cron ---


class CronTimed(CronScheduler):
    """A crontab line pinned to a time; a one-shot removes its own line after it runs.

    The line only names a script (``~/.cache/relay/cron/LABEL.sh``, written beside it,
    read by ``/bin/sh``) that holds the rest: the clone, the environment, the command
    and its logs. So the line stays short whatever the paths and never carries the
    environment inline; ``verify`` checks both, ``teardown`` removes both."""

    def __init__(self, when: When, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.when = when

    def script_path(self, entry: Entry) -> Path:
        """Where the entry's script lives."""
        return self.home / ".cache" / "relay" / "cron" / f"{entry.label}.sh"

    def _script_word(self, entry: Entry) -> str:
        """The script as the line names it: under ``$HOME`` when it is there (cron sets
        HOME), so the line's length does not grow with the home folder's."""
        path = self.script_path(entry)
        home = os.environ.get("HOME")
        if home and path.is_relative_to(home):
            return '"$HOME"/' + shlex.quote(str(path.relative_to(home)))
        return shlex.quote(str(path))

    def render(self, entry: Entry) -> dict[str, str]:
        tag = marker(entry)
        exports = "".join(f"export {n}={shlex.quote(v)}\n" for n, v in entry.environment)
        command = " ".join(shlex.quote(word) for word in entry.argv)
        script = (
            f"#!/bin/sh\n# {tag}: {entry.description}\n"
            f"cd {shlex.quote(entry.working_dir)} || exit 1\n{exports}"
            f"{command} >>{shlex.quote(entry.stdout_log)} 2>>{shlex.quote(entry.stderr_log)}\n"
        )
        if self.when.at is not None:
            at = self.when.local()
            schedule = f"{at.minute} {at.hour} {at.day} {at.month} *"
            script += (
                f"crontab -l 2>/dev/null | grep -vF -- {shlex.quote(tag)} | crontab -\n"
                'rm -f -- "$0"\n'
            )
        else:
            assert self.when.daily is not None
            schedule = f"{self.when.daily[1]} {self.when.daily[0]} * * *"
        body = f"/bin/sh {self._script_word(entry)}".replace("%", chr(92) + "%")
        line = f"{schedule} {body} {tag}"
        if len(line.split(" ", 5)[5]) >= MAX_COMMAND:
            raise LocalUsageError(
                f"the cron line would be {len(line)} characters; cron takes under {MAX_COMMAND}",
                hint="set HOME to a shorter folder, or choose --scheduler systemd",
            )
        return {"crontab": line, "script": script}

    def register(self, entry: Entry) -> None:
        from relay.edges.files import write_state

        script = self.render(entry)["script"]
        write_state(self.script_path(entry), script.encode("utf-8"))
        super().register(entry)

    def verify(self, entry: Entry) -> Verification:
        found = super().verify(entry)
        if not found.ok:
            return found
        try:
            held = self.script_path(entry).read_text(encoding="utf-8")
        except OSError:
            held = None
        if held != self.render(entry)["script"]:
            said = f"the script {self.script_path(entry)} the line runs is missing or differs"
            return self.verification(False, said)
        return found

    def teardown(self, entry: Entry) -> None:
        super().teardown(entry)
        self.script_path(entry).unlink(missing_ok=True)


# --- launchd ---


class LaunchdTimed(LaunchdScheduler):
    """A LaunchAgent started by ``StartCalendarInterval``."""

    def __init__(self, when: When, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.when = when

    def render(self, entry: Entry) -> dict[str, str]:
        ((name, text),) = super().render(entry).items()
        job = plistlib.loads(text.encode("utf-8"))
        job.pop("StartInterval", None)
        job.pop("RunAtLoad", None)
        if self.when.at is not None:
            at = self.when.local()
            calendar = {"Month": at.month, "Day": at.day, "Hour": at.hour, "Minute": at.minute}
        else:
            assert self.when.daily is not None
            calendar = {"Hour": self.when.daily[0], "Minute": self.when.daily[1]}
        job["StartCalendarInterval"] = calendar
        out = plistlib.dumps(job, fmt=plistlib.FMT_XML, sort_keys=False).decode("utf-8")
        return {name: out}


# --- Task Scheduler ---


class TaskTimed(TaskScheduler):
    """A task with a ``ONCE`` time trigger that deletes itself once expired, or a daily one."""

    def __init__(self, when: When, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.when = when

    def _render(self, entry: Entry, logon: str) -> dict[str, str]:
        """The watcher's task XML (its logon, S4U or the fallback) with the trigger swapped:
        every rendering goes through here, the S4U fallback's too."""
        ((name, text),) = super()._render(entry, logon).items()
        ET.register_namespace("", NAMESPACE)
        task = ET.fromstring(text.split("\n", 1)[1])
        q = f"{{{NAMESPACE}}}"
        triggers = task.find(f"{q}Triggers")
        assert triggers is not None
        for old in list(triggers):
            triggers.remove(old)
        if self.when.at is not None:
            at = self.when.at.astimezone(UTC)
            trigger = _el(triggers, "TimeTrigger")
            _el(trigger, "StartBoundary", text=at.strftime("%Y-%m-%dT%H:%M:%SZ"))
            end = at + timedelta(hours=1)
            _el(trigger, "EndBoundary", text=end.strftime("%Y-%m-%dT%H:%M:%SZ"))
            _el(trigger, "Enabled", text="true")
            settings = task.find(f"{q}Settings")
            assert settings is not None
            _el(settings, "DeleteExpiredTaskAfter", text="PT0S")
        else:
            assert self.when.daily is not None
            hour, minute = self.when.daily
            trigger = _el(triggers, "CalendarTrigger")
            _el(trigger, "StartBoundary", text=f"2000-01-01T{hour:02d}:{minute:02d}:00")
            _el(trigger, "Enabled", text="true")
            _el(_el(trigger, "ScheduleByDay"), "DaysInterval", text="1")
        body = ET.tostring(task, encoding="unicode")
        return {name: f'<?xml version="1.0" encoding="UTF-16"?>\n{body}\n'}


# --- systemd ---


class SystemdTimed(SystemdScheduler):
    """A transient timer for a one-shot (gone once fired); the watcher's units, on a
    calendar, for a daily run."""

    def __init__(self, when: When, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.when = when

    def run_argv(self, entry: Entry) -> list[str]:
        """The ``systemd-run`` command line of a one-shot."""
        assert self.when.at is not None
        at = self.when.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        argv = [
            "systemd-run",
            "--user",
            f"--unit={entry.label}",
            f"--description={plain_text(entry.description)}",
            f"--on-calendar={at}",
            "--timer-property=AccuracySec=1s",
            "--timer-property=RemainAfterElapse=no",
            f"--working-directory={plain_path(entry.working_dir)}",
            f"--property=StandardOutput=append:{plain_path(entry.stdout_log)}",
            f"--property=StandardError=append:{plain_path(entry.stderr_log)}",
        ]
        argv += [f"--setenv={k}={v}" for k, v in entry.environment]
        return [*argv, "--", *entry.argv]

    def render(self, entry: Entry) -> dict[str, str]:
        if self.when.at is not None:
            return {"systemd-run": " ".join(shlex.quote(w) for w in self.run_argv(entry))}
        units = super().render(entry)
        assert self.when.daily is not None
        hour, minute = self.when.daily
        units[f"{entry.label}.timer"] = (
            f"[Unit]\nDescription=Run {entry.label}.service daily at {hour:02d}:{minute:02d}\n\n"
            f"[Timer]\nOnCalendar=*-*-* {hour:02d}:{minute:02d}:00\n"
            f"AccuracySec=1s\nUnit={entry.label}.service\n\n"
            "[Install]\nWantedBy=timers.target\n"
        )
        return units

    def register(self, entry: Entry) -> None:
        if self.when.at is None:
            super().register(entry)
            return
        prepare_logs(entry)
        self.teardown(entry)  # a transient unit of the same name would refuse the new one
        self.check(self.run_argv(entry))

    def verify(self, entry: Entry) -> Verification:
        if self.when.at is None:
            return super().verify(entry)
        timer = f"{entry.label}.timer"
        active = self.run(["systemctl", "--user", "is-active", timer]).stdout.strip()
        if active == "active":
            return self.verification(True, f"systemd has the transient {timer} waiting")
        return self.verification(False, f"systemd reports {timer} {active or 'unknown'}")

    def teardown(self, entry: Entry) -> None:
        if self.when.at is None:
            super().teardown(entry)
            return
        self.run(["systemctl", "--user", "stop", f"{entry.label}.timer", f"{entry.label}.service"])
        self.run(["systemctl", "--user", "reset-failed", f"{entry.label}.service"])


_TIMED: dict[type[Scheduler], Any] = {
    CronScheduler: CronTimed,
    LaunchdScheduler: LaunchdTimed,
    TaskScheduler: TaskTimed,
    SystemdScheduler: SystemdTimed,
}


def timed(backend: Scheduler, when: When) -> Scheduler:
    """The timed flavour of ``backend`` (the one ``schedulers.choose`` picked), with the
    same seam, home and sleep."""
    for base, flavour in _TIMED.items():
        if isinstance(backend, base):
            extra = {"uid": backend.uid} if isinstance(backend, LaunchdScheduler) else {}
            made: Scheduler = flavour(
                when, runner=backend.runner, home=backend.home, sleep=backend.sleep, **extra
            )
            return made
    raise LocalUsageError(f"{backend.describe()} cannot run an entry at a time of day")
