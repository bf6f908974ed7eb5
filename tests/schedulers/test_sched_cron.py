"""cron against the real `crontab`: register, verify, re-register, tear down, neighbours kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sched_helpers import Recorder, awkward_entry, cron_daemon

from relay.schedulers import Completed, CronScheduler, Entry, SchedulerError
from relay.schedulers.cron import cron_schedule, marker

# A user's own crontab: variables, comments, a blank line, a job with an escaped %.
USER_TABLE = [
    "# my own jobs",
    'MAILTO=""',
    "SHELL=/bin/bash",
    "",
    "17 3 * * * /usr/bin/backup --tag \\%Y-\\%m >/dev/null 2>&1",
    "@reboot /usr/bin/true # relay:someone-else",
]


# The same kind of table as raw bytes, with what text handling tends to damage: a Latin-1
# byte, a form feed, trailing blanks, a line that mentions "no crontab". (A carriage return
# is left out: Debian's `crontab -l` itself shows it as the two characters `\r`.)
USER_BYTES = (
    b"# caf\xe9 (Latin-1), a form feed \x0c and trailing blanks   \n"
    b'MAILTO=""\n'
    b"\n"
    b"# Zo\xc3\xab's jobs, in UTF-8\n"
    b"*/7 * * * * /usr/bin/printf 'no crontab for anyone \\%s' >/dev/null # relay:other\n"
)


def crontab_bytes() -> bytes:
    answer = subprocess.run(["crontab", "-l"], capture_output=True, check=False)
    return b"" if b"no crontab for" in answer.stderr else answer.stdout


def crontab_lines() -> list[str]:
    answer = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return [] if "no crontab for" in answer.stderr else answer.stdout.splitlines()


def install(lines: list[str]) -> None:
    subprocess.run(["crontab", "-"], input="".join(f"{x}\n" for x in lines), text=True, check=True)


@pytest.mark.parametrize(
    ("seconds", "schedule"),
    [
        (60, "* * * * *"),
        (300, "*/5 * * * *"),
        (420, "*/6 * * * *"),
        (480, "*/6 * * * *"),
        (900, "*/15 * * * *"),
        (2400, "*/30 * * * *"),
        (2700, "*/30 * * * *"),
        (3600, "0 * * * *"),
        (5400, "0 */2 * * *"),
        (18000, "0 */4 * * *"),
        (86400, "0 0 * * *"),
    ],
)
def test_intervals_round_to_steps_cron_repeats_evenly(seconds: int, schedule: str) -> None:
    assert cron_schedule(seconds) == schedule


def test_line_escapes_percent_sets_path_and_logs(tmp_path: Path) -> None:
    entry = awkward_entry(tmp_path)
    (line,) = CronScheduler(home=tmp_path).render(entry).values()
    assert line.startswith("*/5 * * * * ")
    assert line.endswith(f" {marker(entry)}")
    assert "100\\% it" in line and "100% " not in line
    assert f"PATH={entry.env['PATH']} " in line
    assert f">>'{entry.stdout_log}' 2>>'{entry.stderr_log}'" in line
    assert "\n" not in line


@pytest.mark.skipif(os.name == "nt", reason="cron lines are run by /bin/sh")
def test_rendered_line_runs_under_sh_as_cron_would(tmp_path: Path) -> None:
    """Run the line's command the way cron does (\\% back to %, then /bin/sh -c)."""
    script = tmp_path / "bin dir" / "shów argv.py"
    script.parent.mkdir()
    script.write_text(
        "import json, os, sys\nprint(json.dumps([sys.argv[1:], os.getcwd(), os.environ['PATH']]))\n"
    )
    base = awkward_entry(tmp_path)
    odd_args = ("50% off", "it's", "$HOME", "`id`", "a\\b", "é")
    entry = Entry(
        label=base.label,
        argv=(sys.executable, str(script), *odd_args),
        working_dir=base.working_dir,
        stdout_log=base.stdout_log,
        stderr_log=base.stderr_log,
        environment=base.environment,
    )
    (line,) = CronScheduler(home=tmp_path).render(entry).values()
    command = line.split(" ", 5)[5].replace("\\%", "%")
    Path(entry.stdout_log).parent.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh"}
    subprocess.run(["/bin/sh", "-c", command], env=env, check=True)
    argv, cwd, path = json.loads(Path(entry.stdout_log).read_text())
    assert argv == list(odd_args)
    assert os.path.samefile(cwd, entry.working_dir)
    assert path == entry.env["PATH"]


def test_register_verify_reregister_teardown_on_the_real_crontab(
    real_crontab: None, tmp_path: Path
) -> None:
    install(USER_TABLE)
    cron = CronScheduler(home=tmp_path)
    entry = awkward_entry(tmp_path)
    assert not cron.verify(entry).ok
    cron.register(entry)
    assert cron.verify(entry).ok and cron.verify(entry).scheduler == "cron"
    cron.register(entry)
    lines = crontab_lines()
    assert sum(marker(entry) in x for x in lines) == 1
    assert lines[: len(USER_TABLE)] == USER_TABLE
    assert Path(entry.stdout_log).parent.is_dir()
    cron.teardown(entry)
    assert crontab_lines() == USER_TABLE
    assert not cron.verify(entry).ok
    cron.teardown(entry)
    assert crontab_lines() == USER_TABLE


def test_other_lines_stay_byte_identical_through_every_step(
    real_crontab: None, tmp_path: Path
) -> None:
    subprocess.run(["crontab", "-"], input=USER_BYTES, check=True)
    assert crontab_bytes() == USER_BYTES  # the table went in as it is
    cron = CronScheduler(home=tmp_path)
    entry = awkward_entry(tmp_path)
    ours = cron.render(entry)["crontab"].encode("utf-8") + b"\n"
    cron.register(entry)
    assert crontab_bytes() == USER_BYTES + ours
    assert cron.verify(entry).ok
    cron.register(entry)
    assert crontab_bytes() == USER_BYTES + ours
    cron.teardown(entry)
    assert crontab_bytes() == USER_BYTES
    assert not cron.verify(entry).ok


def test_two_clones_keep_two_lines_and_replacement_stays_in_place(
    real_crontab: None, tmp_path: Path
) -> None:
    install(USER_TABLE)
    cron = CronScheduler(home=tmp_path)
    first, second = awkward_entry(tmp_path / "a"), awkward_entry(tmp_path / "b")
    cron.register(first)
    cron.register(second)
    install([*crontab_lines(), "@daily /usr/bin/true"])
    slower = Entry(**{**first.__dict__, "interval_seconds": 900})
    cron.register(slower)
    lines = crontab_lines()
    assert lines[len(USER_TABLE)].startswith("*/15 ") and marker(first) in lines[len(USER_TABLE)]
    assert cron.verify(slower).ok and cron.verify(second).ok
    assert not cron.verify(first).ok  # the old interval is no longer what the crontab holds
    cron.teardown(slower)
    assert cron.verify(second).ok
    assert [x for x in crontab_lines() if marker(second) not in x] == [
        *USER_TABLE,
        "@daily /usr/bin/true",
    ]


def test_empty_crontab_register_then_teardown(real_crontab: None, tmp_path: Path) -> None:
    subprocess.run(["crontab", "-r"], capture_output=True, check=False)
    cron = CronScheduler(home=tmp_path)
    entry = awkward_entry(tmp_path)
    cron.teardown(entry)  # nothing to remove, no crontab: no error, no write
    cron.register(entry)
    assert len(crontab_lines()) == 1 and cron.verify(entry).ok
    cron.teardown(entry)
    assert crontab_lines() == []
    left = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    assert "no crontab for" in left.stderr and left.returncode != 0, "an empty table was left"


def test_no_crontab_counts_as_empty_whatever_the_status(tmp_path: Path) -> None:
    """busybox answers "no crontab for" with status 0, Vixie and cronie with 1."""
    for status in (0, 1):
        recorder = Recorder(
            answers={("crontab", "-l"): [Completed(status, "", "no crontab for zoë\n")]}
        )
        cron = CronScheduler(runner=recorder, home=tmp_path)
        entry = awkward_entry(tmp_path)
        cron.register(entry)
        assert recorder.calls[-1] == ("crontab", "-")
        assert recorder.stdins[-1] == cron.render(entry)["crontab"] + "\n"


def test_an_unreadable_crontab_is_an_error_not_an_empty_table(tmp_path: Path) -> None:
    recorder = Recorder(
        answers={("crontab", "-l"): [Completed(1, "", "crontab: permission denied")]}
    )
    cron = CronScheduler(runner=recorder, home=tmp_path)
    with pytest.raises(SchedulerError, match="permission denied"):
        cron.register(awkward_entry(tmp_path))
    assert ("crontab", "-") not in recorder.calls


def test_a_user_line_saying_no_crontab_is_not_an_empty_table(tmp_path: Path) -> None:
    """Only crontab's own message on stderr means "empty"; a job may print the words."""
    table = "@daily echo 'no crontab for you' # mine\n"
    recorder = Recorder(answers={("crontab", "-l"): [Completed(0, table, "")]})
    cron = CronScheduler(runner=recorder, home=tmp_path)
    entry = awkward_entry(tmp_path)
    cron.register(entry)
    assert recorder.stdins[-1] == table + cron.render(entry)["crontab"] + "\n"


PGREP = ("pgrep", "-x", "cron|crond|fcron|dcron")


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS asks launchd for cron's job")
@pytest.mark.parametrize(
    ("answer", "blocked", "unsure"),
    [
        (Completed(0, "812\n", ""), False, False),
        (Completed(1, "", ""), True, False),  # pgrep found no process of those names
        (Completed(127, "", "pgrep: command not found"), False, True),
    ],
)
def test_cron_without_daemon_is_in_place_but_blocked(
    tmp_path: Path, answer: Completed, blocked: bool, unsure: bool
) -> None:
    entry = awkward_entry(tmp_path)
    line = CronScheduler(home=tmp_path).render(entry)["crontab"]
    recorder = Recorder(
        answers={("crontab", "-l"): [Completed(0, line + "\n", "")], ("pgrep",): [answer]}
    )
    found = CronScheduler(runner=recorder, home=tmp_path).verify(entry)
    assert found.ok  # the line is there, as rendered
    assert bool(found.blocked) is blocked
    if blocked:
        assert "no cron daemon is running" in found.blocked and "relay watch" in found.blocked
    assert ("could not tell" in found.detail) is unsure
    assert recorder.calls == [("crontab", "-l"), PGREP]


def test_cron_without_daemon_on_the_crontab_process(real_crontab: None, tmp_path: Path) -> None:
    cron_daemon(tmp_path, running=False)  # a container or WSL: the table, and nobody reading it
    cron = CronScheduler(home=tmp_path)
    entry = awkward_entry(tmp_path)
    cron.register(entry)
    found = cron.verify(entry)
    assert found.ok and "no cron daemon is running" in found.blocked
    assert sum(marker(entry) in x for x in crontab_lines()) == 1  # kept, for when cron starts
    cron_daemon(tmp_path, running=True)
    assert cron.verify(entry).blocked == ""
    cron.teardown(entry)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")
def test_the_daemon_probe_agrees_with_the_process_table(tmp_path: Path) -> None:
    """The real pgrep, asked as relay asks it, against the names in /proc."""
    names = set()
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            names.add(comm.read_text().strip())
        except OSError:
            continue  # the process ended meanwhile
    expected = bool(names & {"cron", "crond", "fcron", "dcron"})
    assert CronScheduler(home=tmp_path).daemon_running() is expected
