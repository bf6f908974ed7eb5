"""Pick the scheduler backend once: an explicit name, then RELAY_SCHEDULER, then the OS.

launchd on macOS, Task Scheduler on Windows, systemd where a user manager answers, cron
everywhere else. The environment is read when ``choose`` runs, never at import.
``none`` (no watcher) is the caller's to honour: ``declined`` says whether it was asked.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from relay.errors import LocalUsageError
from relay.schedulers.base import CommandRunner, Scheduler, SchedulerKind, run_command
from relay.schedulers.cron import CronScheduler
from relay.schedulers.launchd import LaunchdScheduler
from relay.schedulers.systemd import SystemdScheduler
from relay.schedulers.taskscheduler import TaskScheduler

ENV_VAR = "RELAY_SCHEDULER"
# The names `--scheduler` and RELAY_SCHEDULER accept (`none` is the caller's to handle).
CHOICES: tuple[str, ...] = ("launchd", "task-scheduler", "cron", "systemd")
NONE = "none"  # declines a watcher; see ``declined``
_BACKENDS: dict[SchedulerKind, type[Scheduler]] = {
    SchedulerKind.LAUNCHD: LaunchdScheduler,
    SchedulerKind.TASK_SCHEDULER: TaskScheduler,
    SchedulerKind.CRON: CronScheduler,
    SchedulerKind.SYSTEMD: SystemdScheduler,
}
_ALIASES = {
    "launchd": SchedulerKind.LAUNCHD,
    "taskscheduler": SchedulerKind.TASK_SCHEDULER,
    "schtasks": SchedulerKind.TASK_SCHEDULER,
    "cron": SchedulerKind.CRON,
    "crontab": SchedulerKind.CRON,
    "systemd": SchedulerKind.SYSTEMD,
}
# `systemctl --user is-system-running` states in which a user manager is there to answer.
_MANAGER_UP = frozenset({"initializing", "starting", "running", "degraded", "maintenance"})


def parse_kind(name: str) -> SchedulerKind:
    """A scheduler name as typed (any case, spaces, hyphens); raises LocalUsageError."""
    key = name.strip().lower().replace(" ", "").replace("-", "").replace("_", "")
    if key == NONE:
        raise LocalUsageError(
            "scheduler 'none' registers nothing", hint="check `declined()` before `choose()`"
        )
    if key not in _ALIASES:
        raise LocalUsageError(
            f"unknown scheduler {name!r}", hint=f"choose one of {', '.join(CHOICES)} or none"
        )
    return _ALIASES[key]


def choose(
    *,
    platform: str | None = None,
    override: str | None = None,
    environ: Mapping[str, str] | None = None,
    runner: CommandRunner = run_command,
    home: Path | None = None,
    sleep: Callable[[float], None] | None = None,
    at_boot: bool = False,
) -> Scheduler:
    """The backend for this machine: ``override``, else $RELAY_SCHEDULER, else the OS's;
    ``at_boot`` asks for an entry that runs from boot (`relay join --at-boot`)."""
    name = requested(override=override, environ=environ)
    kind = parse_kind(name) if name else detect(platform or sys.platform, runner=runner)
    return _BACKENDS[kind](runner=runner, home=home, sleep=sleep, at_boot=at_boot)


def requested(*, override: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The scheduler asked for by ``--scheduler``, else by $RELAY_SCHEDULER, else ""."""
    env = os.environ if environ is None else environ
    return (override or "").strip() or env.get(ENV_VAR, "").strip()


def declined(*, override: str | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """True when the user asked for no watcher (``--scheduler none`` or the variable)."""
    return requested(override=override, environ=environ).lower() == NONE


def detect(platform: str, *, runner: CommandRunner = run_command) -> SchedulerKind:
    """The OS's own scheduler; on Linux and BSD systemd only if a user manager answers."""
    if platform == "darwin":
        return SchedulerKind.LAUNCHD
    if platform in ("win32", "cygwin"):
        return SchedulerKind.TASK_SCHEDULER
    answer = runner(["systemctl", "--user", "is-system-running"])
    if answer.stdout.strip() in _MANAGER_UP:
        return SchedulerKind.SYSTEMD
    return SchedulerKind.CRON
