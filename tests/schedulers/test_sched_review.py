"""What an independent review found: a PATH cron refuses, a crontab edited by two
processes at once, Windows passes with nowhere to write, a register that fails half way."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from sched_helpers import Recorder, awkward_entry

from relay.errors import LocalUsageError
from relay.schedulers import (
    Completed,
    CronScheduler,
    Entry,
    LaunchdScheduler,
    SchedulerError,
    SystemdScheduler,
    run_command,
)
from relay.schedulers.cron import MAX_COMMAND, marker
from relay.watchers.registration import install

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX paths and executables")


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def crontab_lines() -> list[str]:
    answer = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    return [] if "no crontab for" in answer.stderr else answer.stdout.splitlines()


@POSIX_ONLY
def test_path_is_minimal_however_long_the_inherited_one(tmp_path: Path) -> None:
    git = executable(tmp_path / "tools dir" / "git")
    gh = executable(tmp_path / "gh bin" / "gh")
    crontab = executable(tmp_path / "cron bin" / "crontab")  # a pass may remove its line
    noise = [f"/opt/{'x' * 60}/{n}/bin" for n in range(80)]
    tools = [str(git.parent), str(gh.parent), str(crontab.parent)]
    inherited = ":".join([*noise, *tools, "/usr/bin", "/bin"])
    entry = Entry.create(
        clone=tmp_path,
        node="n",
        state_dir=tmp_path,
        python=Path("/opt/py/bin/python3"),
        environ={"PATH": inherited},
    )
    assert entry.env["PATH"].split(":") == [
        "/opt/py/bin",
        str(git.parent),
        str(gh.parent),
        str(crontab.parent),
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
    ]
    assert len(inherited) > 5000 and len(entry.env["PATH"]) < 300


@POSIX_ONLY
def test_a_long_inherited_path_still_gives_a_line_the_real_crontab_takes(
    real_crontab: None, tmp_path: Path
) -> None:
    noise = ":".join(f"/opt/{'y' * 60}/{n}/bin" for n in range(80))
    entry = Entry.create(
        clone=tmp_path,
        node="n",
        state_dir=tmp_path / "state",
        environ={"PATH": f"{noise}:/usr/bin:/bin"},
    )
    cron = CronScheduler(home=tmp_path)
    cron.register(entry)
    assert cron.verify(entry).ok
    cron.teardown(entry)


@POSIX_ONLY
def test_a_line_over_crons_limit_is_refused_with_what_to_do(
    real_crontab: None, tmp_path: Path
) -> None:
    deep = tmp_path / ("d" * 200) / ("e" * 200) / ("f" * 200)
    deep.mkdir(parents=True)
    entry = Entry.create(clone=deep, node="n", state_dir=deep / "state", environ={})
    with pytest.raises(LocalUsageError, match="cron takes under") as caught:
        CronScheduler(home=tmp_path).render(entry)
    assert caught.value.hint is not None and "shorter path" in caught.value.hint
    # The limit is cron's own: the real crontab refuses such a line.
    line = f"* * * * * /bin/true {'z' * MAX_COMMAND}\n"
    done = subprocess.run(["crontab", "-"], input=line, capture_output=True, text=True)
    assert done.returncode != 0 and "too long" in done.stderr
    assert crontab_lines() == []  # nothing went in


@POSIX_ONLY
def test_two_processes_registering_at_once_keep_both_lines(
    real_crontab: None, tmp_path: Path
) -> None:
    subprocess.run(["crontab", "-"], input="# mine\n", text=True, check=True)

    def slow(argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        """The real crontab, with a pause between reading the table and writing it."""
        answer = run_command(argv, stdin=stdin)
        if list(argv) == ["crontab", "-l"]:
            time.sleep(0.3)
        return answer

    entries = [awkward_entry(tmp_path / name, node=name) for name in ("a", "b")]
    workers = [
        threading.Thread(target=CronScheduler(runner=slow, home=tmp_path).register, args=(e,))
        for e in entries
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    lines = crontab_lines()
    assert lines[0] == "# mine"
    assert all(sum(marker(e) in x for x in lines) == 1 for e in entries), lines
    assert (tmp_path / ".cache" / "relay" / "crontab.lock").is_file()


def test_a_windows_pass_runs_windowless_and_writes_its_own_log(tmp_path: Path) -> None:
    python = executable(tmp_path / "Python 3.12 Zoë" / "python.exe")
    state = tmp_path / "state"
    bare = Entry.create(clone=tmp_path, node="w", state_dir=state, python=python, environ={})
    assert bare.argv[0] == str(python)  # no pythonw.exe beside it: python.exe it is
    assert bare.argv[-2:] == ("--log", bare.stdout_log)
    windowless = executable(python.with_name("pythonw.exe"))
    entry = Entry.create(clone=tmp_path, node="w", state_dir=state, python=python, environ={})
    assert entry.argv[0] == str(windowless)
    assert entry.argv[-2:] == ("--log", str(state.resolve() / "watch.log"))
    posix = Entry.create(clone=tmp_path, node="w", state_dir=state, environ={})
    assert "--log" not in posix.argv and "--scheduled" in posix.argv


def test_a_refused_register_leaves_no_plist_behind(tmp_path: Path) -> None:
    refused = Completed(125, "", "125: Domain does not support specified action")
    recorder = Recorder(
        answers={
            ("launchctl", "print"): [Completed(113, "", "Could not find service")],
            ("launchctl", "bootstrap"): [refused],
        }
    )
    backend = LaunchdScheduler(runner=recorder, home=tmp_path / "Zoë home", uid=501)
    entry = awkward_entry(tmp_path)
    with pytest.raises(SchedulerError, match="Domain does not support"):
        install(backend, entry)
    assert not backend.plist_path(entry).exists()
    assert recorder.calls[-1] == ("launchctl", "bootout", f"gui/501/{entry.label}")


@POSIX_ONLY
def test_a_refused_systemd_register_leaves_no_units_behind(tmp_path: Path) -> None:
    failed = Completed(1, "", "Failed to connect to bus: No medium found")
    recorder = Recorder(answers={("systemctl", "--user", "daemon-reload"): [failed]})
    backend = SystemdScheduler(runner=recorder, home=tmp_path)
    with pytest.raises(SchedulerError, match="No medium found"):
        install(backend, awkward_entry(tmp_path))
    assert list(backend.unit_dir().iterdir()) == []


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="the OS has the program")
@pytest.mark.parametrize(("name", "where"), [("launchd", "macOS"), ("task-scheduler", "Windows")])
def test_a_backend_of_another_os_says_where_it_exists(
    tmp_path: Path, name: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from relay.schedulers import choose

    monkeypatch.setenv("PATH", str(tmp_path))  # neither launchctl nor schtasks here
    backend = choose(override=name, home=tmp_path)
    entry = awkward_entry(tmp_path)
    if name == "task-scheduler":
        from sched_helpers import windows_entry

        entry = windows_entry(clone=r"C:\src\relay")
    with pytest.raises(SchedulerError) as caught:
        install(backend, entry)
    assert caught.value.hint is not None and f"exists only on {where}" in caught.value.hint


@POSIX_ONLY
def test_an_unchanged_enabled_timer_is_not_restarted(tmp_path: Path) -> None:
    up = {
        ("systemctl", "--user", "is-enabled"): [Completed(0, "enabled\n", "")],
        ("systemctl", "--user", "is-active"): [Completed(0, "active\n", "")],
    }
    recorder = Recorder(answers=up)
    backend = SystemdScheduler(runner=recorder, home=tmp_path / "Zoë home")
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    first = len(recorder.calls)
    assert ("systemctl", "--user", "restart", f"{entry.label}.timer") in recorder.calls
    backend.register(entry)  # joining again: asked, and left alone
    assert [c[2] for c in recorder.calls[first:]] == ["is-enabled", "is-active"]
    backend.register(awkward_entry(tmp_path, interval=600))  # changed: written, restarted
    assert recorder.calls[-1] == ("systemctl", "--user", "restart", f"{entry.label}.timer")
