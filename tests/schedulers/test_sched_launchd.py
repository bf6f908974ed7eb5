"""launchd: the plist parsed back with plistlib, the launchctl command lines as recorded."""

from __future__ import annotations

import os
import plistlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from sched_helpers import FakeLaunchd, Recorder, awkward_entry

from schedulers import Completed, Entry, LaunchdScheduler, SchedulerError

IO_ERROR = Completed(5, "", "Bootstrap failed: 5: Input/output error\n")
PRINT = ("launchctl", "print")
NOT_LOADED = Completed(113, "", "Could not find service in domain for port\n")


def test_plist_has_every_key_with_absolute_paths(tmp_path: Path) -> None:
    entry = awkward_entry(tmp_path)
    backend = LaunchdScheduler(home=tmp_path, uid=501)
    ((name, text),) = backend.render(entry).items()
    job = plistlib.loads(text.encode("utf-8"))
    assert name == f"{entry.label}.plist"
    assert job["Label"] == entry.label
    assert job["ProgramArguments"] == list(entry.argv)
    assert all(p.startswith("/") for p in (job["ProgramArguments"][0], job["WorkingDirectory"]))
    assert "relé 项目 100% it's" in job["ProgramArguments"][7]
    assert job["StartInterval"] == 300
    assert job["RunAtLoad"] is True
    assert job["WorkingDirectory"] == entry.working_dir
    assert job["EnvironmentVariables"]["PATH"] == entry.env["PATH"]
    assert job["StandardOutPath"] == entry.stdout_log
    assert job["StandardErrorPath"] == entry.stderr_log


def test_register_writes_the_agent_and_boots_it_in_the_gui_domain(tmp_path: Path) -> None:
    recorder = Recorder(answers={("launchctl", "print"): [NOT_LOADED]})
    home = tmp_path / "Zoë's Home 项目"  # the plist's path has spaces and non-ASCII too
    backend = LaunchdScheduler(runner=recorder, home=home, uid=501)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    plist = home / "Library" / "LaunchAgents" / f"{entry.label}.plist"
    assert plistlib.loads(plist.read_bytes())["Label"] == entry.label
    assert recorder.calls == [  # never a bootout of a label launchd does not have
        ("launchctl", "print", f"gui/501/{entry.label}"),
        ("launchctl", "bootstrap", "gui/501", str(plist)),
    ]
    if os.name != "nt":  # the POSIX log path of a Windows run is nobody's directory
        assert Path(entry.stdout_log).parent.is_dir()


def test_bootstrap_retries_on_input_output_error(tmp_path: Path) -> None:
    recorder = Recorder(
        answers={
            ("launchctl", "bootstrap"): [IO_ERROR, IO_ERROR, Completed(0, "", "")],
            ("launchctl", "print"): [NOT_LOADED],
        }
    )
    slept: list[float] = []
    backend = LaunchdScheduler(runner=recorder, home=tmp_path, uid=501, sleep=slept.append)
    backend.register(awkward_entry(tmp_path))
    assert [c[1] for c in recorder.calls] == ["print", "bootstrap", "bootstrap", "bootstrap"]
    assert len(slept) == 2


def test_bootstrap_gives_up_after_a_few_tries_and_at_once_on_other_errors(tmp_path: Path) -> None:
    stuck = Recorder(answers={("launchctl", "bootstrap"): [IO_ERROR], PRINT: [NOT_LOADED]})
    backend = LaunchdScheduler(runner=stuck, home=tmp_path, uid=501, sleep=lambda _: None)
    with pytest.raises(SchedulerError, match="Input/output error"):
        backend.register(awkward_entry(tmp_path))
    assert [c[1] for c in stuck.calls].count("bootstrap") == 4
    refused = Completed(125, "", "125: Domain does not support specified action")
    denied = Recorder(answers={("launchctl", "bootstrap"): [refused], PRINT: [NOT_LOADED]})
    backend = LaunchdScheduler(runner=denied, home=tmp_path, uid=501, sleep=lambda _: None)
    with pytest.raises(SchedulerError, match="Domain does not support"):
        backend.register(awkward_entry(tmp_path))
    assert [c[1] for c in denied.calls].count("bootstrap") == 1


def test_verify_asks_launchctl_print(tmp_path: Path) -> None:
    entry = awkward_entry(tmp_path)
    missing = Recorder(
        answers={("launchctl", "print"): [Completed(113, "", "Could not find service")]}
    )
    assert not LaunchdScheduler(runner=missing, home=tmp_path, uid=501).verify(entry).ok
    present = Recorder(
        answers={("launchctl", "print"): [Completed(0, "state = not running\n", "")]}
    )
    result = LaunchdScheduler(runner=present, home=tmp_path, uid=501).verify(entry)
    assert result.ok and result.scheduler == "launchd"
    assert present.calls == [("launchctl", "print", f"gui/501/{entry.label}")]


def test_teardown_boots_out_and_removes_the_plist(tmp_path: Path, recorder: Recorder) -> None:
    backend = LaunchdScheduler(runner=recorder, home=tmp_path, uid=501)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    backend.teardown(entry)
    assert recorder.calls[-1] == ("launchctl", "bootout", f"gui/501/{entry.label}")
    assert not backend.plist_path(entry).exists()
    backend.teardown(entry)  # twice is fine


@pytest.mark.skipif(sys.platform != "darwin", reason="the real launchctl exists only on macOS")
def test_real_launchctl_round_trip(tmp_path: Path) -> None:
    base = awkward_entry(tmp_path, node=f"ci-{tmp_path.name[-8:]}")
    entry = Entry(
        label=base.label,
        argv=("/usr/bin/true",),
        working_dir=base.working_dir,
        stdout_log=base.stdout_log,
        stderr_log=base.stderr_log,
        interval_seconds=3600,
        environment=base.environment,
    )
    backend = LaunchdScheduler(home=tmp_path)  # the plist stays under tmp_path
    try:
        backend.register(entry)
        assert backend.verify(entry).ok
        backend.register(entry)  # again: bootout, then bootstrap of the same label
        assert backend.verify(entry).ok
    finally:
        backend.teardown(entry)
    deadline = time.monotonic() + 10  # bootout may return before launchd has let go
    while backend.verify(entry).ok and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not backend.verify(entry).ok
    assert not backend.plist_path(entry).exists()


def test_an_unchanged_loaded_job_is_left_alone_and_a_changed_one_replaced(
    tmp_path: Path,
) -> None:
    launchd = FakeLaunchd()
    backend = LaunchdScheduler(runner=launchd, home=tmp_path / "Zoë's Home", uid=501)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    launchd.running.add(entry.label)  # a pass of the job runs now
    backend.register(entry)  # joining again: nothing to change, nothing killed
    assert launchd.terminated == [] and [c[1] for c in launchd.calls] == [
        "print",
        "bootstrap",
        "print",
    ]
    longer = awkward_entry(tmp_path, interval=600)
    backend.register(longer)  # a changed plist replaces the loaded job
    assert [c[1] for c in launchd.calls[3:]] == ["print", "bootout", "bootstrap"]
    assert plistlib.loads(backend.plist_path(entry).read_bytes())["StartInterval"] == 600
    assert backend.verify(longer).ok


def test_teardown_removes_the_plist_before_the_bootout_that_ends_the_pass(
    tmp_path: Path,
) -> None:
    launchd = FakeLaunchd()
    backend = LaunchdScheduler(runner=launchd, home=tmp_path, uid=501)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    launchd.running.add(entry.label)
    plist = backend.plist_path(entry)
    seen: list[bool] = []
    original = launchd.__call__

    def watching(argv: Sequence[str], *, stdin: str | None = None) -> Completed:
        if argv[1] == "bootout":
            seen.append(plist.exists())
        return original(argv, stdin=stdin)

    LaunchdScheduler(runner=watching, home=tmp_path, uid=501).teardown(entry)
    assert seen == [False] and launchd.terminated == [entry.label]
    assert not backend.verify(entry).ok
