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

from relay.errors import LocalUsageError
from relay.schedulers import Completed, Entry, LaunchdScheduler, SchedulerError

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
    assert "relé 项目 100% it's" in job["ProgramArguments"][8]
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


def daemon(recorder: Recorder, tmp_path: Path, *, euid: int = 501) -> LaunchdScheduler:
    """A --at-boot backend whose system root is a test directory."""
    return LaunchdScheduler(
        runner=recorder,
        home=tmp_path / "Users" / "zoë",
        uid=501,
        euid=euid,
        user="zoë",
        root=tmp_path / "system root",
        at_boot=True,
    )


def test_at_boot_plist_is_a_launch_daemon_that_runs_as_the_user(tmp_path: Path) -> None:
    backend = daemon(Recorder(), tmp_path)
    entry = awkward_entry(tmp_path)
    job = plistlib.loads(backend.render(entry)[f"{entry.label}.plist"].encode("utf-8"))
    assert job["UserName"] == "zoë"  # never root
    assert job["EnvironmentVariables"]["HOME"] == str(tmp_path / "Users" / "zoë")
    assert job["EnvironmentVariables"]["PATH"] == entry.env["PATH"]
    assert job["ProgramArguments"] == list(entry.argv) and job["RunAtLoad"] is True
    assert job["StartInterval"] == 300 and job["Label"] == entry.label
    path = backend.plist_path(entry)
    assert path == tmp_path / "system root" / "Library" / "LaunchDaemons" / f"{entry.label}.plist"
    assert backend.domain == "system" and not backend.unattended_teardown()
    (said,) = backend.advice(entry)
    assert "from boot as zoë" in said and "administrator" in said
    with pytest.raises(LocalUsageError, match="not as root"):
        LaunchdScheduler(home=tmp_path, user="root", euid=0, at_boot=True).render(entry)


def test_at_boot_installs_and_boots_through_sudo_into_the_system_domain(tmp_path: Path) -> None:
    staged: list[bytes] = []

    def peek(argv: tuple[str, ...]) -> None:
        if argv[:2] == ("sudo", "install"):
            staged.append(Path(argv[-2]).read_bytes())

    recorder = Recorder(answers={PRINT: [NOT_LOADED]}, peek=peek)
    backend = daemon(recorder, tmp_path)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    plist = str(backend.plist_path(entry))
    assert recorder.calls[0] == ("launchctl", "print", f"system/{entry.label}")
    assert recorder.calls[1][:8] == ("sudo", "install", "-m", "0644", "-o", "root", "-g", "wheel")
    assert recorder.calls[1][-1] == plist
    assert recorder.calls[2] == ("sudo", "launchctl", "bootstrap", "system", plist)
    assert len(recorder.calls) == 3
    assert plistlib.loads(staged[0])["UserName"] == "zoë"
    assert staged[0].decode("utf-8") == backend.render(entry)[f"{entry.label}.plist"]
    backend.teardown(entry)
    assert recorder.calls[3:] == [
        ("sudo", "rm", "-f", plist),
        ("sudo", "launchctl", "bootout", f"system/{entry.label}"),
    ]


def test_at_boot_as_root_needs_no_sudo(tmp_path: Path) -> None:
    recorder = Recorder(answers={PRINT: [NOT_LOADED]})
    backend = daemon(recorder, tmp_path, euid=0)
    entry = awkward_entry(tmp_path)
    backend.register(entry)
    plist = backend.plist_path(entry)
    assert plistlib.loads(plist.read_bytes())["UserName"] == "zoë"
    assert recorder.calls[-1] == ("launchctl", "bootstrap", "system", str(plist))
    assert not any(c[0] == "sudo" for c in recorder.calls) and backend.unattended_teardown()
    backend.teardown(entry)
    assert not plist.exists()


def test_at_boot_without_an_administrator_says_so(tmp_path: Path) -> None:
    refused = Completed(1, "", "zoë is not in the sudoers file.\n")
    recorder = Recorder(answers={PRINT: [NOT_LOADED], ("sudo", "install"): [refused]})
    backend = daemon(recorder, tmp_path)
    with pytest.raises(SchedulerError, match="sudoers") as caught:
        backend.register(awkward_entry(tmp_path))
    assert "needs an administrator" in (caught.value.hint or "")
    assert not any("bootstrap" in c for c in recorder.calls)
    gone = Recorder(answers={("sudo", "rm"): [Completed(1, "", "sudo: a password is required\n")]})
    with pytest.raises(SchedulerError, match="password is required"):
        daemon(gone, tmp_path).teardown(awkward_entry(tmp_path))


def test_a_launch_agent_warns_that_passes_wait_for_a_login(tmp_path: Path) -> None:
    backend = LaunchdScheduler(runner=Recorder(), home=tmp_path, uid=501)
    (said,) = backend.advice(awkward_entry(tmp_path))
    assert said.startswith("warning:") and "until you log in" in said and "--at-boot" in said
    assert backend.unattended_teardown()
