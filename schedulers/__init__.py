"""How a watcher survives reboots: one interface, one backend per OS scheduler.

``choose()`` picks the backend (launchd, Task Scheduler, systemd user timers, cron);
``Entry.create()`` builds the spec of one watcher for a clone and node; the backend
renders it purely, registers it, verifies it by asking the OS, and tears it down. Every
OS command goes through one ``CommandRunner``, so tests can record it on any OS.
"""

from __future__ import annotations

from relay.schedulers.base import (
    CommandRunner,
    Completed,
    Scheduler,
    SchedulerError,
    SchedulerKind,
    Verification,
    run_command,
)
from relay.schedulers.choose import (
    CHOICES,
    ENV_VAR,
    NONE,
    choose,
    declined,
    detect,
    parse_kind,
    requested,
)
from relay.schedulers.cron import CronScheduler
from relay.schedulers.entry import (
    DEFAULT_INTERVAL,
    Entry,
    default_argv,
    entry_nonce,
    label_for,
    new_nonce,
)
from relay.schedulers.launchd import LaunchdScheduler
from relay.schedulers.systemd import SystemdScheduler
from relay.schedulers.taskscheduler import TaskScheduler

__all__ = [
    "CHOICES",
    "DEFAULT_INTERVAL",
    "ENV_VAR",
    "NONE",
    "CommandRunner",
    "Completed",
    "CronScheduler",
    "Entry",
    "LaunchdScheduler",
    "Scheduler",
    "SchedulerError",
    "SchedulerKind",
    "SystemdScheduler",
    "TaskScheduler",
    "Verification",
    "choose",
    "declined",
    "default_argv",
    "detect",
    "entry_nonce",
    "label_for",
    "new_nonce",
    "parse_kind",
    "requested",
    "run_command",
]
