"""Windows Task Scheduler: a task XML registered with ``schtasks /Create /XML``.

Never ``/TR``: its command line is capped near 261 characters, which real clone paths
break. The XML says what the defaults get wrong for a watcher: batteries must not stop
it, a missed run is caught up (``StartWhenAvailable``), and a run still going makes the
next one be skipped (``IgnoreNew``). The task runs as the joining user whether they are
logged on or not, with no password stored (``S4U``, schtasks' "Do not store password"):
after a night's Windows Update reboot passes go on with nobody logged in. Such a logon
has no network credentials and no unlocked credential store, so the Windows Credential
Manager (the keyring, gh's own token) is out of reach: a pass finds its token in the
node's token file (`relay join --save-token`), which ``advice`` says. Where Windows
refuses an S4U task (an account without the "Log on as a batch job" right), the task is
registered to run while the user is logged on (``InteractiveToken``) instead, and
``advice`` warns that passes then wait for a login.

Task Scheduler has no environment element (the task inherits the user's environment)
and expands ``%NAME%`` in the command, arguments and working directory with no escape,
so paths holding ``%...%`` are refused.
"""

from __future__ import annotations

import codecs
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path, PureWindowsPath

from relay.errors import LocalUsageError
from relay.schedulers.base import (
    CommandRunner,
    Scheduler,
    SchedulerError,
    SchedulerKind,
    Verification,
    _first_line,
    prepare_logs,
    run_command,
)
from relay.schedulers.entry import Entry

NAMESPACE = "http://schemas.microsoft.com/windows/2004/02/mit/task"
_EXPANDED = re.compile(r"%[^%]+%")
# Long past, so the repetition is already running when the task is registered.
_START_BOUNDARY = "2000-01-01T00:00:00"
# "Run whether user is logged on or not" with "Do not store password": no password kept.
LOGON_TYPE = "S4U"
INTERACTIVE = "InteractiveToken"  # only while the user is logged on: the fallback


def quote_windows_arg(arg: str) -> str:
    """Quote one argument so the Microsoft C runtime's parser gives it back unchanged."""
    if arg and not re.search(r'[\s"]', arg):
        return arg
    out: list[str] = []
    slashes = 0
    for ch in arg:
        if ch == "\\":
            slashes += 1
            continue
        # Backslashes are literal unless a quote follows; then each one must be doubled.
        out.append("\\" * (2 * slashes + 1) + ch if ch == '"' else "\\" * slashes + ch)
        slashes = 0
    return '"' + "".join(out) + "\\" * (2 * slashes) + '"'


def windows_command_line(args: tuple[str, ...]) -> str:
    """Join arguments into one command line for ``CommandLineToArgvW``-style parsing."""
    return " ".join(quote_windows_arg(a) for a in args)


def iso_interval(seconds: int) -> str:
    """The repetition interval as an ISO 8601 duration in whole minutes (PT5M)."""
    return f"PT{max(1, round(seconds / 60))}M"


def windows_user(environ: Mapping[str, str] | None = None) -> str:
    """The joining account as Task Scheduler names it (``DOMAIN\\user``), "" when unknown."""
    env = os.environ if environ is None else environ
    user, domain = env.get("USERNAME", ""), env.get("USERDOMAIN", "")
    return f"{domain}\\{user}" if user and domain else user


class TaskScheduler(Scheduler):
    """Tasks in the root folder of the user's Task Scheduler library."""

    kind = SchedulerKind.TASK_SCHEDULER
    remedy = (
        "check that `schtasks /Query` works for your account (a task that runs with nobody"
        ' logged on may need the "Log on as a batch job" right), then run `relay join` again'
    )
    home_os = "Windows"

    def __init__(
        self,
        *,
        runner: CommandRunner = run_command,
        home: Path | None = None,
        sleep: Callable[[float], None] | None = None,
        at_boot: bool = False,
        user: str | None = None,
    ) -> None:
        super().__init__(runner=runner, home=home, sleep=sleep, at_boot=at_boot)
        self.user = windows_user() if user is None else user
        self.found_logon = ""  # the registered task's logon type, as verify last read it
        self.refused = ""  # why Windows refused the S4U task, when it did

    def advice(self, entry: Entry) -> tuple[str, ...]:
        """Where a pass with nobody logged on finds its token (not the Credential Manager);
        or, for a task that runs only while the user is logged on, that passes wait."""
        if self.found_logon == INTERACTIVE:
            why = f" (Windows refused to run it logged off: {self.refused})" if self.refused else ""
            return (
                "warning: Task Scheduler runs this watcher only while you are logged on: after"
                f" a reboot no pass runs until you log on{why}; an administrator can grant"
                ' your account "Log on as a batch job", then run `relay join` again',
            )
        return (
            "Task Scheduler runs this watcher whether you are logged on or not (S4U, no"
            " password stored); such a pass cannot open the Windows Credential Manager, so"
            " keep its token in the node's token file: `relay join --save-token`",
        )

    def render(self, entry: Entry) -> dict[str, str]:
        """The task XML (declared UTF-16; ``register`` writes it so, with a BOM)."""
        return self._render(entry, LOGON_TYPE)

    def _render(self, entry: Entry, logon: str) -> dict[str, str]:
        """The task XML with the given logon type."""
        _require_windows_paths(entry)
        ET.register_namespace("", NAMESPACE)
        task = _el(None, "Task", version="1.2")
        info = _el(task, "RegistrationInfo")
        _el(info, "Description", text=entry.description)
        _el(info, "URI", text=f"\\{entry.label}")
        trigger = _el(_el(task, "Triggers"), "TimeTrigger")
        repetition = _el(trigger, "Repetition")
        _el(repetition, "Interval", text=iso_interval(entry.interval_seconds))
        _el(repetition, "StopAtDurationEnd", text="false")
        _el(trigger, "StartBoundary", text=_START_BOUNDARY)
        _el(trigger, "Enabled", text="true")
        principal = _el(_el(task, "Principals"), "Principal", id="Author")
        if self.user:
            _el(principal, "UserId", text=self.user)
        _el(principal, "LogonType", text=logon)
        _el(principal, "RunLevel", text="LeastPrivilege")
        _settings(_el(task, "Settings"))
        execute = _el(_el(task, "Actions", Context="Author"), "Exec")
        _el(execute, "Command", text=_command(entry.argv[0]))
        _el(execute, "Arguments", text=windows_command_line(entry.argv[1:]))
        _el(execute, "WorkingDirectory", text=entry.working_dir)
        body = ET.tostring(task, encoding="unicode")
        return {f"{entry.label}.xml": f'<?xml version="1.0" encoding="UTF-16"?>\n{body}\n'}

    def register(self, entry: Entry) -> None:
        """Write the XML as UTF-16 with a BOM and create (or overwrite) the task; a task
        that already runs this entry is left alone (``/F`` would replace it mid-pass). An
        S4U task Windows refuses becomes an interactive one (or the one in place stays)."""
        prepare_logs(entry)
        current = self.verify(entry)
        if current.ok and self.found_logon == LOGON_TYPE:
            return
        try:
            self._create(entry, LOGON_TYPE)
        except SchedulerError as err:
            if err.answer is None or err.answer.returncode == 127:
                raise
            self.refused = _first_line(err.answer.stderr or err.answer.stdout) or err.message
            if not current.ok:
                self._create(entry, INTERACTIVE)

    def _create(self, entry: Entry, logon: str) -> None:
        """``schtasks /Create /XML`` of the entry's task with ``logon``."""
        ((name, text),) = self._render(entry, logon).items()
        with tempfile.TemporaryDirectory(prefix="relay-task-") as tmp:
            path = Path(tmp) / name
            path.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
            self.check(["schtasks", "/Create", "/TN", entry.label, "/XML", str(path), "/F"])

    def verify(self, entry: Entry) -> Verification:
        """Ask schtasks for the task's XML and compare its action and interval with ours."""
        answer = self.run(["schtasks", "/Query", "/TN", entry.label, "/XML"])
        if answer.returncode != 0:
            return self.verification(False, f"Task Scheduler has no task {entry.label}")
        try:
            task = ET.fromstring(answer.stdout.strip())
        except ET.ParseError:
            return self.verification(False, f"schtasks answered unreadable XML for {entry.label}")
        found = _essentials(task)
        self.found_logon = _logon(task)
        (text,) = self.render(entry).values()
        if found != _essentials(ET.fromstring(text)):
            return self.verification(False, f"task {entry.label} differs; run `relay join` again")
        return self.verification(True, f"Task Scheduler has {entry.label}")

    def teardown(self, entry: Entry) -> None:
        """Delete the task; an absent task is fine, a task that stays is an error."""
        argv = ["schtasks", "/Delete", "/TN", entry.label, "/F"]
        answer = self.run(argv)
        if answer.returncode != 0 and self.verify(entry).ok:
            raise self.failure("kept the task", argv=argv, answer=answer)


def _settings(settings: ET.Element) -> None:
    """The settings whose schema defaults are wrong for a watcher."""
    for tag, value in (
        ("MultipleInstancesPolicy", "IgnoreNew"),
        ("DisallowStartIfOnBatteries", "false"),
        ("StopIfGoingOnBatteries", "false"),
        ("StartWhenAvailable", "true"),
        ("ExecutionTimeLimit", "PT0S"),  # the pass enforces its own timeouts
        ("Enabled", "true"),
    ):
        _el(settings, tag, text=value)


def _essentials(task: ET.Element) -> tuple[str, ...]:
    """What must match for a registered task to count as ours: action and interval (the
    logon type is read apart: an interactive task is ours too, and is warned about).

    Only the ASCII skeleton is compared: schtasks may answer in the console's code page,
    which mangles non-ASCII characters in a way that depends on the machine.
    """
    ns = {"t": NAMESPACE}
    paths = (
        "Actions/t:Exec/t:Command",
        "Actions/t:Exec/t:Arguments",
        "Actions/t:Exec/t:WorkingDirectory",
        "Triggers/t:TimeTrigger/t:Repetition/t:Interval",
    )
    texts = (task.findtext(f"t:{p}", default="", namespaces=ns) for p in paths)
    return tuple(t.encode("ascii", "ignore").decode() for t in texts)


def _logon(task: ET.Element) -> str:
    """The registered task's logon type ("" when it names none)."""
    found = task.findtext("t:Principals/t:Principal/t:LogonType", namespaces={"t": NAMESPACE})
    return (found or "").strip()


def _el(
    parent: ET.Element | None, tag: str, *, text: str | None = None, **attrib: str
) -> ET.Element:
    """One namespaced element, appended to ``parent`` when there is one."""
    qualified = f"{{{NAMESPACE}}}{tag}"
    if parent is None:
        node = ET.Element(qualified, attrib)
    else:
        node = ET.SubElement(parent, qualified, attrib)
    node.text = text
    return node


def _command(program: str) -> str:
    """The program path, quoted when it holds spaces (Windows paths never hold quotes)."""
    return f'"{program}"' if re.search(r"\s", program) else program


def _require_windows_paths(entry: Entry) -> None:
    """Absolute Windows paths, and nothing Task Scheduler would expand as ``%NAME%``."""
    for path in (entry.argv[0], entry.working_dir):
        if not PureWindowsPath(path).is_absolute():
            raise LocalUsageError(f"Task Scheduler needs absolute paths, got {path!r}")
    for word in (*entry.argv, entry.working_dir):
        if found := _EXPANDED.search(word):
            raise LocalUsageError(
                f"Task Scheduler would expand {found.group()} in {word!r}",
                hint="move the clone or state to a path without %...%",
            )
