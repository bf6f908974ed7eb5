"""Surviving a usage limit without a person: a maker that says when its limit resets makes
`relay loop run` register a one-shot resume and stop; a real crontab process holds the line
(the stand-in's table unless CI or RELAY_TEST_CRONTAB=1 asks for the user's own),
`relay loop status` and the doctor's check show it, and the line fired as cron fires it
finishes the run and removes itself. A second firing is a silent no-op. The other
schedulers' one-shot and daily entries are rendered and registered through a recording
seam (launchctl and schtasks do not exist here), as the watchers' tests do."""

from __future__ import annotations

import codecs
import os
import plistlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from loop_project import CALC_MUL, TEST_MUL, make_project

from relay.commands.loop_unattended import resume_checks
from relay.loop.goals import GoalState, parse_board
from relay.loop.resume import resume_time
from relay.schedulers import Completed, Entry, LaunchdScheduler, SystemdScheduler, TaskScheduler
from relay.schedulers.oneshot import When, timed

MARK = "# relay:relay-resume-"


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the entries' scripts go under it


def crontab() -> list[str]:
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return done.stdout.splitlines() if done.returncode == 0 else []


def script_of(line: str) -> str:
    """The script a relay cron line runs (``/bin/sh "$HOME"/...``), as it is on disk."""
    word = line.split(" ", 5)[5].split(" # relay:")[0].removeprefix("/bin/sh ")
    return Path(word.replace('"$HOME"', os.environ["HOME"])).read_text(encoding="utf-8")


def test_a_persons_crontab_is_touched_only_when_asked(tmp_path: Path, real_crontab: None) -> None:
    """`make test` on a person's machine drives the stand-in, never their own table."""
    asked = bool(os.environ.get("CI")) or os.environ.get("RELAY_TEST_CRONTAB") == "1"
    program = shutil.which("crontab")
    assert program is not None
    assert Path(program).is_relative_to(tmp_path) != asked, program


def test_a_usage_limit_registers_a_resume_that_finishes_the_run(
    tmp_path: Path, real_crontab: None
) -> None:
    project = make_project(tmp_path)
    subprocess.run(["crontab", "-"], input="# a line of the user's own\n", text=True, check=True)
    reset = (datetime.now(UTC) + timedelta(minutes=30)).replace(microsecond=0)
    said = f"RELAY_LOOP_RESET_AT={reset:%Y-%m-%dT%H:%M:%S}+00:00"
    maker = project.script(
        "maker",
        f"""
        n = count("maker")
        if n == 1:
            print("usage limit reached")
            print({said!r})
            sys.exit(75)
        put("src/calc.py", {CALC_MUL!r})
        put("tests/test_mul.py", {TEST_MUL!r})
        """,
    )
    ran = project.loop("run", "--maker", maker, "--scheduler", "cron", "--max-iterations", "5")
    assert ran.status == 0, ran
    assert ran.data["stopped"].startswith("paused: the maker hit a usage limit (exit 75) until ")
    assert "resume registered with cron for" in ran.data["stopped"]
    assert ran.data["kept"] == [] and ran.data["iterations"] == 0 and project.clean()
    lines = crontab()
    assert lines[0] == "# a line of the user's own"
    [line] = [x for x in lines if MARK in x]
    at = resume_time(reset).astimezone()
    assert line.split(" ", 5)[:5] == [str(at.minute), str(at.hour), str(at.day), str(at.month), "*"]
    assert line.split(" ", 5)[5].startswith('/bin/sh "$HOME"/.cache/relay/cron/relay-resume-')
    script = script_of(line)
    assert (
        "loop run --maker" in script
        and "--max-iterations 5 --scheduler cron --verify-wait 30m --resume --repo-dir" in script
    )
    assert "--env-file" in script and "export PATH=" in script and "PATH=" not in line
    assert "\ncrontab -l 2>/dev/null | grep -vF -- '# relay:relay-resume-" in script
    row = parse_board(project.read("docs/loop/BOARD.md")).rows[0]
    assert row.state is GoalState.IN_PROGRESS and row.notes.startswith("paused: ")
    handover = project.read("docs/loop/handover.md")
    assert "Stopped: paused: " in handover
    # what was in flight was committed before the maker ran
    marked = project.git("log", "--format=%H", "--grep", "^loop: G1 in progress$").split()[0]
    started = project.git("show", f"{marked}:docs/loop/handover.md")
    assert "## G1 Multiply started (" in started and "Working G1 from " in started
    status = project.loop("status").data["resume"]
    assert status["scheduler"] == "cron" and status["problems"] == []
    assert status["at"] == resume_time(reset).isoformat()
    [(name, state, detail, _)] = resume_checks(project.root)
    assert (name, state) == ("loop resume", "ok") and detail.startswith("cron resumes the run")

    # fire the line as cron would: /bin/sh -c with cron's environment, \% unescaped
    command = line.split(" ", 5)[5].replace("\\%", "%")
    cron = ["env", "-i", f"HOME={os.environ['HOME']}", "LOGNAME=cron", "SHELL=/bin/sh"]
    argv = [*cron, "PATH=/usr/bin:/bin", "/bin/sh", "-c", command]
    fired = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert fired.returncode == 0, fired.stderr
    assert crontab() == ["# a line of the user's own"]  # the entry removed itself
    row = parse_board(project.read("docs/loop/BOARD.md")).rows[0]
    assert row.state is GoalState.DONE and project.calls("maker") == 2
    assert "G1: Multiply" in project.subjects() and project.clean()
    assert project.loop("status").data["resume"] is None
    assert resume_checks(project.root)[0][1] == "skip"

    # fired again (a duplicate, a late firing): state first, nothing to do, nothing said
    before = project.subjects()
    again = project.loop("run", "--maker", maker, "--resume", "--scheduler", "cron")
    assert again.status == 0 and again.data["resumed"] is False
    assert project.subjects() == before and project.calls("maker") == 2


def test_a_resume_whose_entry_vanished_fails_the_doctor_check(
    tmp_path: Path, real_crontab: None
) -> None:
    project = make_project(tmp_path)
    reset = datetime.now(UTC) + timedelta(hours=2)
    maker = project.script(
        "maker",
        "print('HTTP 429 Too Many Requests')\n"
        f"print('RELAY_LOOP_RESET_AT={reset:%Y-%m-%dT%H:%M:%S}Z')\nsys.exit(75)\n",
    )
    ran = project.loop("run", "--maker", maker, "--scheduler", "cron")
    assert ran.data["stopped"].startswith("paused:"), ran
    subprocess.run(["crontab", "-r"], check=True)  # someone cleared the table
    [(_, state, detail, fix)] = resume_checks(project.root)
    assert state == "fail" and "is not registered" in detail and "--resume" in fix
    assert reset - timedelta(minutes=5) < datetime.fromisoformat(
        project.loop("status").data["resume"]["at"]
    )


@dataclass
class Recorder:
    """Stands in for launchctl, schtasks and systemctl: records each command line; ``peek``
    sees it while it "runs" (to read a file that exists only then)."""

    answers: dict[str, Completed] = field(default_factory=dict)
    calls: list[tuple[str, ...]] = field(default_factory=list)
    files: list[bytes] = field(default_factory=list)

    def __call__(self, argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        words = tuple(argv)
        self.calls.append(words)
        if "/XML" in words and words[1] == "/Create":
            self.files.append(Path(words[words.index("/XML") + 1]).read_bytes())
        for prefix, answer in self.answers.items():
            if " ".join(words).startswith(prefix):
                return answer
        return Completed(0, "", "")


AT = datetime(2026, 12, 3, 5, 1, tzinfo=UTC)


def posix_entry(tmp_path: Path) -> Entry:
    return Entry(
        label="relay-resume-abc123",
        argv=("/usr/bin/python3", "-m", "relay.cli", "loop", "run", "--maker", "m", "--resume"),
        working_dir=str(tmp_path),
        stdout_log=str(tmp_path / "logs" / "out.log"),
        stderr_log=str(tmp_path / "logs" / "err.log"),
    )


def test_launchd_gets_a_calendar_entry_for_the_resume(tmp_path: Path) -> None:
    record = Recorder()
    backend = timed(LaunchdScheduler(runner=record, home=tmp_path, uid=501), When(at=AT))
    entry = posix_entry(tmp_path)
    backend.register(entry)
    plist = plistlib.loads(
        (tmp_path / "Library/LaunchAgents/relay-resume-abc123.plist").read_bytes()
    )
    local = AT.astimezone()
    assert plist["StartCalendarInterval"] == {
        "Month": local.month,
        "Day": local.day,
        "Hour": local.hour,
        "Minute": local.minute,
    }
    assert "StartInterval" not in plist and "RunAtLoad" not in plist
    assert plist["ProgramArguments"][-1] == "--resume"
    assert (
        "launchctl",
        "bootstrap",
        "gui/501",
        str(tmp_path / "Library/LaunchAgents/relay-resume-abc123.plist"),
    ) in record.calls
    backend.teardown(entry)
    assert record.calls[-1] == ("launchctl", "bootout", "gui/501/relay-resume-abc123")
    assert not (tmp_path / "Library/LaunchAgents/relay-resume-abc123.plist").exists()
    daily = timed(LaunchdScheduler(runner=record, home=tmp_path, uid=501), When(daily=(3, 0)))
    (text,) = daily.render(entry).values()
    assert plistlib.loads(text.encode())["StartCalendarInterval"] == {"Hour": 3, "Minute": 0}


def windows_entry() -> Entry:
    return Entry(
        label="relay-resume-abc123",
        argv=("C:\\Python\\pythonw.exe", "-m", "relay.cli", "loop", "run", "--resume"),
        working_dir="C:\\work\\clone",
        stdout_log="C:\\work\\clone\\.git\\relay\\loop\\out.log",
        stderr_log="C:\\work\\clone\\.git\\relay\\loop\\err.log",
    )


def test_task_scheduler_gets_a_once_trigger_that_deletes_itself(tmp_path: Path) -> None:
    record = Recorder(answers={"schtasks /Query": Completed(1, "", "not found")})
    backend = timed(TaskScheduler(runner=record, home=tmp_path), When(at=AT))
    backend.register(windows_entry())
    create = next(c for c in record.calls if c[1] == "/Create")
    assert create[:4] == ("schtasks", "/Create", "/TN", "relay-resume-abc123")
    raw = record.files[0]
    assert raw.startswith(codecs.BOM_UTF16_LE)
    task = ET.fromstring(raw[2:].decode("utf-16-le").split("\n", 1)[1])
    ns = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}
    trigger = task.find("t:Triggers/t:TimeTrigger", ns)
    assert trigger is not None and trigger.find("t:Repetition", ns) is None
    assert trigger.findtext("t:StartBoundary", namespaces=ns) == "2026-12-03T05:01:00Z"
    assert trigger.findtext("t:EndBoundary", namespaces=ns) == "2026-12-03T06:01:00Z"
    assert task.findtext("t:Settings/t:DeleteExpiredTaskAfter", namespaces=ns) == "PT0S"
    assert task.findtext("t:Actions/t:Exec/t:Arguments", namespaces=ns).endswith("--resume")
    daily = timed(TaskScheduler(runner=record, home=tmp_path), When(daily=(2, 30)))
    (text,) = daily.render(windows_entry()).values()
    day = ET.fromstring(text.split("\n", 1)[1]).find("t:Triggers/t:CalendarTrigger", ns)
    assert day is not None
    assert day.findtext("t:StartBoundary", namespaces=ns) == "2000-01-01T02:30:00"
    assert day.findtext("t:ScheduleByDay/t:DaysInterval", namespaces=ns) == "1"


def test_systemd_gets_a_transient_timer_for_the_resume(tmp_path: Path) -> None:
    record = Recorder(answers={"systemctl --user is-active": Completed(0, "active\n", "")})
    backend = timed(SystemdScheduler(runner=record, home=tmp_path), When(at=AT))
    entry = posix_entry(tmp_path)
    backend.register(entry)
    run = next(c for c in record.calls if c[0] == "systemd-run")
    assert "--on-calendar=2026-12-03 05:01:00 UTC" in run
    assert "--unit=relay-resume-abc123" in run and "--timer-property=RemainAfterElapse=no" in run
    assert run[run.index("--") + 1 :] == entry.argv
    assert backend.verify(entry).ok
    backend.teardown(entry)
    assert (
        "systemctl",
        "--user",
        "stop",
        "relay-resume-abc123.timer",
        "relay-resume-abc123.service",
    ) in record.calls
    daily = timed(SystemdScheduler(runner=record, home=tmp_path), When(daily=(3, 15)))
    units = daily.render(entry)
    assert "OnCalendar=*-*-* 03:15:00\n" in units["relay-resume-abc123.timer"]


def test_the_schedule_runs_triage_and_a_bounded_run_daily(
    tmp_path: Path, real_crontab: None
) -> None:
    project = make_project(tmp_path)
    refused = project.loop("schedule", "--at", "02:30", "--scheduler", "cron")
    assert refused.status == 2 and "AGENT-COMMAND" in refused.errors[0]["message"]
    assert crontab() == []
    maker = project.script(
        "maker", f"put('src/calc.py', {CALC_MUL!r})\nput('tests/test_mul.py', {TEST_MUL!r})\n"
    )
    contract = project.read("docs/loop/CONTRACT.md")
    run_line = next(x for x in contract.splitlines() if x.startswith("`relay loop run"))
    project.write(
        "docs/loop/CONTRACT.md",
        contract.replace(run_line, f"`` relay loop run --maker '{maker.replace(chr(39), '')}' ``"),
    )
    project.git("commit", "-qam", "the run command the schedule uses")
    bad = project.loop("schedule", "--at", "25:00", "--scheduler", "cron")
    assert bad.status == 2 and "not a time of day" in bad.errors[0]["message"]
    ran = project.loop("schedule", "--at", "02:30", "--max-iterations", "3", "--scheduler", "cron")
    assert ran.status == 0, ran
    [line] = crontab()
    script = script_of(line)
    assert line.startswith("30 2 * * * ") and "loop scheduled --repo-dir" in script
    assert "--max-iterations 3" in script and "grep -vF" not in script  # daily: it stays
    again = project.loop(
        "schedule", "--at", "02:30", "--max-iterations", "3", "--scheduler", "cron"
    )
    assert again.status == 0 and crontab() == [line]  # registered once
    # what the line runs: triage, then the contract's maker, bounded
    command = line.split(" ", 5)[5].replace("\\%", "%")
    fired = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=300)
    assert fired.returncode == 0, fired.stderr
    assert "G1: Multiply" in project.subjects() and project.clean()
    assert crontab() == [line]
    removed = project.loop("schedule", "--remove", "--scheduler", "cron")
    assert removed.status == 0 and removed.data["removed"] is True and crontab() == []
    assert removed.data["had"] is True, removed  # it was there: "removed", not "no schedule"
    assert list((Path(os.environ["HOME"]) / ".cache/relay/cron").glob("*.sh")) == []
    again = project.loop("schedule", "--remove", "--scheduler", "cron")
    assert again.status == 0 and again.data["had"] is False


def test_a_reset_time_in_another_zone_is_shown_in_utc(tmp_path: Path, real_crontab: None) -> None:
    """A reset said at +09:00 is the same instant in UTC on the report and the board (not
    its Tokyo wall-clock time with a Z after it)."""
    from datetime import timezone

    project = make_project(tmp_path)
    tokyo = timezone(timedelta(hours=9))
    reset = (datetime.now(UTC) + timedelta(minutes=30)).replace(microsecond=0).astimezone(tokyo)
    said = f"RELAY_LOOP_RESET_AT={reset.isoformat()}"
    assert said.endswith("+09:00")
    maker = project.script("maker", f"print({said!r})\nsys.exit(75)\n")
    ran = project.loop("run", "--maker", maker, "--scheduler", "cron")
    assert ran.status == 0, ran
    in_utc = f"{reset.astimezone(UTC):%Y-%m-%d %H:%M:%S}Z"
    assert f"until {in_utc}" in ran.data["stopped"], ran.data["stopped"]
    row = parse_board(project.read("docs/loop/BOARD.md")).rows[0]
    assert row.notes.endswith(f"resets {in_utc}"), row.notes


def test_the_loop_loads_the_date_and_zone_readers_only_for_an_output_that_names_one() -> None:
    """`relay loop run` imports the reset-time reader with the agents' adapters; email's
    date parser and the time zone database load only when a maker's output names a
    date or a zone (every iteration would pay for them otherwise), and then read it."""
    script = (
        "import sys\n"
        "import relay.commands.loop\n"
        "from datetime import UTC, datetime\n"
        "from relay.loop import resume\n"
        "before = sorted(m for m in ('email.utils', 'zoneinfo') if m in sys.modules)\n"
        "now = datetime(2026, 1, 1, tzinfo=UTC)\n"
        "said = resume._retry_after('Retry-After: Thu, 01 Jan 2026 05:00:00 GMT', now)\n"
        "zone = resume.named_zone('Europe/Paris', UTC)\n"
        "print(before, said.isoformat(), str(zone), 'email.utils' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == ["[]", "2026-01-01T05:00:00+00:00", "Europe/Paris", "True"]
