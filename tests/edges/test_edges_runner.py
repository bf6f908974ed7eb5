"""The task runner for real: shell steps, a timeout that kills a grandchild, capped output."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.edges.steps import RunStatus, run_executor, run_step, run_steps, sweep_detached

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the steps are POSIX sh")


def dead(pid: int) -> bool:
    """True when ``pid`` is gone or a zombie (a zombie runs no code)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if dead(pid):
            return True
        time.sleep(0.05)
    return dead(pid)


def test_steps_run_in_order_with_interleaved_output(tmp_path: Path) -> None:
    outcome = run_steps(
        ["echo one; echo two >&2; echo three", "pwd", "exit 0"], cwd=tmp_path, timeout=10
    )
    assert outcome.status is RunStatus.DONE and outcome.failed_step is None
    first, second, third = outcome.steps
    assert first.output.splitlines() == ["one", "two", "three"]
    assert second.output.strip() == str(tmp_path)
    assert (first.exit_code, first.timed_out, first.truncated_bytes) == (0, False, 0)
    assert third.output == ""


def test_a_failing_step_stops_the_sequence(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    outcome = run_steps(
        ["echo ok", "echo broken >&2; exit 3", f"touch {marker}"], cwd=tmp_path, timeout=10
    )
    assert outcome.status is RunStatus.FAILED
    assert outcome.failed_step == 2
    assert len(outcome.steps) == 2
    assert outcome.steps[1].exit_code == 3 and "broken" in outcome.steps[1].output
    assert not marker.exists(), "the step after the failure must not run"


def test_timeout_kills_the_whole_tree_including_a_grandchild(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    # The step's shell starts a subshell that starts `sleep`: a grandchild that also
    # ignores SIGTERM, so only the group kill can end it.
    step = f"sh -c 'trap \"\" TERM; sleep 300 & echo $! > {pidfile}; wait' ; echo never"
    started = time.monotonic()
    outcome = run_step(step, cwd=tmp_path, timeout=0.5, grace=0.3)
    elapsed = time.monotonic() - started
    assert outcome.timed_out and outcome.exit_code is None
    assert not outcome.ok
    assert elapsed < 5, f"the kill took {elapsed:.1f}s"
    grandchild = int(pidfile.read_text())
    assert wait_dead(grandchild), f"grandchild {grandchild} survived the timeout"
    assert "never" not in outcome.output


def test_a_background_leftover_is_ended_when_its_step_ends(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    outcome = run_step(f"sleep 300 & echo $! > {pidfile}; echo started", cwd=tmp_path, timeout=10)
    assert outcome.ok and outcome.output.strip() == "started"
    assert outcome.duration < 5, "the runner must not wait for the leftover's pipe"
    assert wait_dead(int(pidfile.read_text()))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_leftover_of_the_steps_own_group_is_reaped_not_called_detached() -> None:
    # the moment after the step's group is killed, its `&` job may still be alive in /proc:
    # it is the group's, not a process the step detached, so it is ended without a word
    job = subprocess.Popen(["sleep", "300"], start_new_session=True)
    other = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        assert sweep_detached({other.pid}, keep=set(), group=job.pid) == []
        assert wait_dead(job.pid)
        # one in a group of its own did detach: stopped, and said
        assert sweep_detached(set(), keep=set(), group=job.pid) == [other.pid]
        assert wait_dead(other.pid)
    finally:
        for each in (job, other):
            with contextlib.suppress(OSError):
                os.kill(each.pid, 9)


def test_huge_output_is_capped_to_head_and_tail(tmp_path: Path) -> None:
    # 30 MB of numbered lines on stdout; only 64 KiB may be kept in memory.
    writer = tmp_path / "writer.py"
    writer.write_text(
        "import sys\n"
        "for block in range(20):\n"
        "    lines = range(block * 100_000, (block + 1) * 100_000)\n"
        "    sys.stdout.write(''.join(f'line {i:09d}\\n' for i in lines))\n"
    )
    outcome = run_step(f"{sys.executable} {writer}", cwd=tmp_path, timeout=60, cap=64 * 1024)
    assert outcome.ok
    total = 2_000_000 * len("line 000000000\n")
    line = len("line 000000000\n")
    # the cut falls on line ends: at most one partial line at each edge goes with the rest
    assert total - 64 * 1024 <= outcome.truncated_bytes < total - 64 * 1024 + 2 * line
    assert outcome.output.startswith("line 000000000\nline 000000001\n")
    assert outcome.output.rstrip().endswith("line 001999999")
    assert f"[... {outcome.truncated_bytes} bytes of output omitted ...]" in outcome.output
    assert len(outcome.output.encode()) < 64 * 1024 + 200


def test_steps_do_not_see_relays_token_nor_stdin(tmp_path: Path) -> None:
    env = {**os.environ, "RELAY_TOKEN": "ghp_secret", "OTHER": "kept"}
    outcome = run_step(
        'echo "tok=${RELAY_TOKEN:-none} other=$OTHER"; cat', cwd=tmp_path, timeout=5, env=env
    )
    assert outcome.ok and outcome.output.strip() == "tok=none other=kept"


def test_executor_gets_the_task_as_a_file(tmp_path: Path) -> None:
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\necho "arg: $(cat "$1")"\necho "env: $(cat "$RELAY_TASK_FILE")"\n')
    agent.chmod(0o755)
    task = "### TASK 3\nrun `make test`; it's quoted data, not shell\n"
    outcome = run_executor(str(agent), task_text=task, cwd=tmp_path, timeout=10)
    assert outcome.status is RunStatus.DONE
    out = outcome.steps[0].output
    assert "arg: ### TASK 3" in out and "env: ### TASK 3" in out
    assert "it's quoted data, not shell" in out
    failing = run_executor("false", task_text=task, cwd=tmp_path, timeout=10)
    assert failing.status is RunStatus.FAILED and failing.failed_step == 1


def test_a_secret_straddling_the_cap_is_dropped_whole_not_cut_in_pieces(tmp_path: Path) -> None:
    """Pieces of a cut token are too short for redaction to recognise; whole lines go."""
    token = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"[:36]
    writer = tmp_path / "writer.py"
    writer.write_text(
        "import sys\n"
        f"sys.stdout.write('x' * (32 * 1024 - 10) + ' {token}\\n')\n"
        "sys.stdout.write('filler line\\n' * 20000)\n"
        f"sys.stdout.write('tail ' + '{token}' + ' ' + 'y' * (32 * 1024) + '\\n')\n"
        "sys.stdout.write('last line\\n')\n"
    )
    outcome = run_step(f"{sys.executable} {writer}", cwd=tmp_path, timeout=60, cap=64 * 1024)
    assert outcome.ok
    for piece in (token[:8], token[-12:], "ghp_aBcD", "XyZ0123456789"):
        assert piece not in outcome.output, piece
    assert outcome.output.rstrip().endswith("last line")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a subreaper is Linux's")
def test_a_process_the_step_detaches_with_setsid_is_stopped_when_the_step_ends(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "daemon.pid"
    command = (
        f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 60' > /dev/null 2>&1 &"
        f" while [ ! -s {pid_file} ]; do sleep 0.05; done; echo started"
    )
    outcome = run_step(command, cwd=tmp_path, timeout=30)
    assert outcome.exit_code == 0 and outcome.output.startswith("started")
    daemon = int(pid_file.read_text())
    assert "relay stopped what the step had detached" in outcome.output
    assert str(daemon) in outcome.output
    with pytest.raises(ProcessLookupError):
        os.kill(daemon, 0)


@pytest.fixture
def unstopped() -> Iterator[None]:
    """The process-wide stop is clear before and after (it lasts until a command ends)."""
    from relay.edges.steps import reset_stop

    reset_stop()
    yield
    reset_stop()


def _stop_when(path: Path, *, force: bool = False, again: bool = False) -> threading.Thread:
    """A thread that asks for a stop (Ctrl-C) once ``path`` is written by the step."""
    import signal

    from relay.edges.steps import request_stop

    def go() -> None:
        deadline = time.monotonic() + 30
        while not (path.exists() and path.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        request_stop(signal.SIGINT, force=force)
        if again:
            time.sleep(0.3)
            request_stop(signal.SIGINT, force=True)

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    return thread


def test_a_stop_passes_ctrl_c_to_the_step_and_runs_no_later_step(
    tmp_path: Path, unstopped: None
) -> None:
    pid = tmp_path / "pid"
    asker = _stop_when(pid)
    started = time.monotonic()
    outcome = run_steps(
        [
            "echo one",
            # the shell reports the Ctrl-C it got, then ends as it asks
            f"trap 'echo got-int; exit 130' INT; echo $$ > {pid}; sleep 40 & wait",
            "echo three",
        ],
        cwd=tmp_path,
        timeout=60,
    )
    asker.join()
    assert time.monotonic() - started < 20
    assert outcome.status is RunStatus.STOPPED and outcome.failed_step == 2
    assert [s.stopped for s in outcome.steps] == [False, True]
    assert "got-int" in outcome.steps[1].output  # the signal reached the step itself
    assert wait_dead(int(pid.read_text()))


def test_a_step_that_ignores_the_stop_is_killed_after_the_grace_or_at_once_when_asked_again(
    tmp_path: Path, unstopped: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from relay.edges.steps import reset_stop

    monkeypatch.setenv("RELAY_STOP_GRACE", "1")
    pid = tmp_path / "pid"
    ignoring = f"trap '' INT TERM; echo $$ > {pid}; sleep 40"
    asker = _stop_when(pid)
    started = time.monotonic()
    outcome = run_steps([ignoring, "echo two"], cwd=tmp_path, timeout=60)
    asker.join()
    assert outcome.status is RunStatus.STOPPED and len(outcome.steps) == 1
    assert 1 <= time.monotonic() - started < 20  # it had its grace, then the kill
    assert wait_dead(int(pid.read_text()))

    reset_stop()
    pid.unlink()
    monkeypatch.setenv("RELAY_STOP_GRACE", "120")  # only the second Ctrl-C can end it soon
    asker = _stop_when(pid, again=True)
    started = time.monotonic()
    outcome = run_steps([ignoring], cwd=tmp_path, timeout=60)
    asker.join()
    assert outcome.status is RunStatus.STOPPED and outcome.steps[0].stopped
    assert time.monotonic() - started < 30
    assert wait_dead(int(pid.read_text()))
