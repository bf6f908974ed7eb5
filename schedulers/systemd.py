"""systemd user timers: ``<label>.service`` (oneshot) and ``<label>.timer``.

The timer pairs ``OnActiveSec`` with ``OnUnitActiveSec``: the latter alone never fires
the first time. ``AccuracySec=1s`` because the default minute of slack is a surprise. A
timer never starts a second instance of a service still running, so passes never
overlap. The service lifts oneshot's 90 s start timeout, since the pass enforces its own
timeouts. User timers run without a login session only when lingering is enabled, which
``needs_linger`` finds out so that `relay join` and `relay doctor` can say so; with
`relay join --at-boot` relay asks logind for lingering itself (``loginctl enable-linger``,
which logind grants a user for themselves unless its policy says otherwise).

Quoting follows systemd.service(5) and systemd.unit(5): each ExecStart word is
double-quoted with C-style escapes and ``%`` (specifiers) written ``%%``; in the arguments
``$`` (variable expansion) is written ``$$``, while the program's own path takes ``$``
literally and may not hold quotes or backslashes at all, so such a program is started
through ``/usr/bin/env``. Settings that take a plain path only escape ``%``.
"""

from __future__ import annotations

import getpass
import os
import re
from pathlib import Path

from relay.edges.files import write_atomic
from relay.errors import LocalUsageError
from relay.schedulers.base import Scheduler, SchedulerKind, Verification, prepare_logs
from relay.schedulers.entry import Entry

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\t": "\\t", "%": "%%"}
# systemd refuses a program path with quotes, backslashes or control characters.
_UNSAFE_PROGRAM = re.compile(r"[\"'\\\x00-\x1f\x7f]")
ENV_PROGRAM = "/usr/bin/env"


def quote_exec_word(word: str, *, expands_variables: bool = True) -> str:
    """One ExecStart argument, double-quoted; without variable expansion, an Environment
    word or the program's path (which systemd does not expand)."""
    escapes = {**_ESCAPES, "$": "$$"} if expands_variables else _ESCAPES
    return '"' + "".join(escapes.get(ch, ch) for ch in word) + '"'


def exec_start(argv: tuple[str, ...]) -> str:
    """The ExecStart value: the program path (as systemd takes it), then the arguments."""
    program, *args = argv
    if not program.startswith("/"):
        raise LocalUsageError(f"systemd needs an absolute program path, got {program!r}")
    if _UNSAFE_PROGRAM.search(program):
        if "=" in program:  # env would take it for a variable assignment
            raise LocalUsageError(f"systemd cannot start the program {program!r}")
        program, args = ENV_PROGRAM, [program, *args]
    words = [quote_exec_word(program, expands_variables=False)]
    return " ".join(words + [quote_exec_word(word) for word in args])


def plain_path(path: str) -> str:
    """A path for settings that take one unquoted path: only specifiers need escaping."""
    if not path.startswith("/"):
        raise LocalUsageError(f"systemd needs an absolute path, got {path!r}")
    if path != path.rstrip() or path.endswith("\\"):
        # A unit file strips trailing blanks and joins a line ending in a backslash.
        raise LocalUsageError(
            f"systemd cannot express the path {path!r}",
            hint="use a path that does not end in a space or a backslash",
        )
    return path.replace("%", "%%")


def plain_text(text: str) -> str:
    """A free-text setting (Description): specifiers escaped, no line continuation."""
    return text.rstrip(" \t\\").replace("%", "%%")


class SystemdScheduler(Scheduler):
    """Units in ``$XDG_CONFIG_HOME/systemd/user`` (``~/.config/systemd/user``)."""

    kind = SchedulerKind.SYSTEMD
    remedy = "check `systemctl --user status` (a user manager must run), or use --scheduler cron"

    def unit_dir(self) -> Path:
        """Where user units live (XDG_CONFIG_HOME is honoured only for the real home)."""
        config = os.environ.get("XDG_CONFIG_HOME")
        if config and self.home == Path.home():
            return Path(config) / "systemd" / "user"
        return self.home / ".config" / "systemd" / "user"

    def render(self, entry: Entry) -> dict[str, str]:
        """The service and timer unit files."""
        env = " ".join(
            quote_exec_word(f"{k}={v}", expands_variables=False) for k, v in entry.environment
        )
        service = (
            f"[Unit]\nDescription={plain_text(entry.description)}\n\n"
            "[Service]\nType=oneshot\nTimeoutStartSec=infinity\n"
            f"ExecStart={exec_start(entry.argv)}\n"
            f"WorkingDirectory={plain_path(entry.working_dir)}\n"
            + (f"Environment={env}\n" if env else "")
            + f"StandardOutput=append:{plain_path(entry.stdout_log)}\n"
            f"StandardError=append:{plain_path(entry.stderr_log)}\n"
        )
        timer = (
            f"[Unit]\nDescription=Run {entry.label}.service every {entry.interval_seconds}s\n\n"
            f"[Timer]\nOnActiveSec=15s\nOnUnitActiveSec={entry.interval_seconds}s\n"
            f"AccuracySec=1s\nUnit={entry.label}.service\n\n"
            "[Install]\nWantedBy=timers.target\n"
        )
        return {f"{entry.label}.service": service, f"{entry.label}.timer": timer}

    def register(self, entry: Entry) -> None:
        """Write both units, reload, enable and (re)start the timer; unchanged units of an
        enabled, active timer are left alone."""
        prepare_logs(entry)
        units = {
            self.unit_dir() / name: text.encode("utf-8")
            for name, text in self.render(entry).items()
        }
        same = all(path.is_file() and path.read_bytes() == data for path, data in units.items())
        if same and self.verify(entry).ok:
            return
        for path, data in units.items():
            write_atomic(path, data)
        timer = f"{entry.label}.timer"
        self.check(["systemctl", "--user", "daemon-reload"])
        self.check(["systemctl", "--user", "enable", "--now", timer])
        # enable --now leaves an already running timer on its old schedule.
        self.check(["systemctl", "--user", "restart", timer])
        if self.at_boot and self.needs_linger():
            self.run(["loginctl", "enable-linger", _user()])  # advice reports what came of it

    def verify(self, entry: Entry) -> Verification:
        """The user manager must report the timer both enabled and active."""
        timer = f"{entry.label}.timer"
        enabled = self.run(["systemctl", "--user", "is-enabled", timer]).stdout.strip()
        active = self.run(["systemctl", "--user", "is-active", timer]).stdout.strip()
        if enabled == "enabled" and active == "active":
            return self.verification(True, f"systemd has {timer} enabled and active")
        return self.verification(
            False, f"systemd reports {timer} {enabled or 'unknown'}/{active or 'unknown'}"
        )

    def teardown(self, entry: Entry) -> None:
        """Disable and stop the timer (absent is fine), remove both units, reload."""
        self.run(["systemctl", "--user", "disable", "--now", f"{entry.label}.timer"])
        for suffix in (".service", ".timer"):  # by name: an entry that no longer renders
            (self.unit_dir() / f"{entry.label}{suffix}").unlink(missing_ok=True)
        self.run(["systemctl", "--user", "daemon-reload"])

    def needs_linger(self, user: str | None = None) -> bool:
        """True unless logind says the user lingers (so timers run with nobody logged in)."""
        who = user or _user()
        answer = self.run(["loginctl", "show-user", who, "-p", "Linger"])
        return answer.returncode != 0 or answer.stdout.strip() != "Linger=yes"

    def advice(self, entry: Entry) -> tuple[str, ...]:
        """Tell the user to enable lingering when their timers would stop at logout."""
        if not self.needs_linger():
            return ()
        asked = (
            f"; logind refused `loginctl enable-linger`: ask an administrator to run"
            f" `sudo loginctl enable-linger {_user()}`"
            if self.at_boot
            else " (or join with --at-boot)"
        )
        return (
            "warning: systemd runs user timers only while you are logged in: after a reboot"
            " no pass runs until you log in; run `loginctl enable-linger` to keep the watcher"
            f" running with nobody logged in{asked}",
        )


def _user() -> str:
    """The login name logind knows this user by."""
    return getpass.getuser()
