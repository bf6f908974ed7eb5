"""No orphans: a pass killed inside a step leaves its step running, and the next pass stops
that step before it reports the task half-done (and says so)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from worlds import World

PY = Path(sys.executable).as_posix()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


@pytest.mark.skipif(os.name == "nt", reason="process groups are POSIX")
def test_a_step_left_running_by_a_killed_pass_is_stopped_and_reported(
    world: World, job: int, tmp_path: Path
) -> None:
    pid_file = tmp_path / "step.pid"
    script = tmp_path / "long.py"
    script.write_text(
        f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n"
    )
    world.controller.call("task", str(job), "--step", f'"{PY}" "{script}"')
    w = world.worker
    proc = subprocess.Popen(w.argv("watch", "--once"), env=w.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(300):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        step = int(pid_file.read_text())
        proc.send_signal(signal.SIGKILL)  # the pass dies; its step's session lives on
        proc.wait(timeout=10)
        assert alive(step)
        out = w.call("watch", "--once")
        assert "TASK 1 answered as half-done" in out
        for _ in range(400):  # a loaded machine takes its time
            if not alive(step):
                break
            time.sleep(0.05)
        assert not alive(step)
        report = world.comments(job)[-1]["body"]
        assert "Half-done" in report and "was still running" in report and "was stopped" in report
    finally:
        if pid_file.exists() and pid_file.read_text():
            pid = int(pid_file.read_text())
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
