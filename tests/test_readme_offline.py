"""The README's offline walk-through, run as a newcomer would copy it: every block fenced as
```` ```sh offline-quickstart ````, in order, in one shell, in an empty folder. The one
change is the hub's port (8080 in the README), replaced by a free one so that the test
cannot collide with anything else on the machine; every other word runs as it stands, so
the README cannot drift from what works."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
FENCE = re.compile(r"^```sh offline-quickstart\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def quickstart_blocks(text: str) -> list[str]:
    """The marked blocks of the README, in order."""
    return FENCE.findall(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_readme_marks_a_walk_through_that_opens_a_job_and_watches_it() -> None:
    script = "\n".join(quickstart_blocks(README.read_text()))
    for step in ("relay hub repo create", "git ", "relay init", "relay join", "relay job open"):
        assert step in script, step
    assert "relay watch --once" in script
    assert "--repo " not in script  # init finds OWNER/NAME in the hub remote
    assert "8080" in script


SYSTEM_PATH = os.pathsep.join(("/usr/local/bin", "/usr/bin", "/bin"))


def after_make_demo(clone: Path) -> None:
    """A relay clone as `make demo` leaves it, for this test: a `relay` in ``.venv/bin``
    only, running this interpreter on the relay these tests import (the code under test,
    wherever the reader's walk takes the shell)."""
    import relay

    bin_dir = clone / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    source = Path(relay.__file__).resolve().parent.parent
    (bin_dir / "relay").write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="{source}${{PYTHONPATH:+:$PYTHONPATH}}"'
        f' exec "{sys.executable}" -m relay "$@"\n'
    )
    (bin_dir / "relay").chmod(0o755)


def gone(pid: int) -> bool:
    """Whether the process has ended (a zombie nobody reaped has ended too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    return False


def test_the_readme_offline_section_runs_as_written(tmp_path: Path) -> None:
    """Pasted in the clone after `make demo`, with only the system's directories on PATH:
    relay is found only because the README says where, and the hub it started is stopped
    at the end (no process left, no pid file left)."""
    port = free_port()
    script = "\n".join(quickstart_blocks(README.read_text())).replace("8080", str(port))
    (tmp_path / "walk.sh").write_text("set -eux\n" + script)
    clone = tmp_path / "relay"
    after_make_demo(clone)
    work = tmp_path / "relay-walk"  # where the README's first block walks to
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GITHUB_TOKEN", "GH_TOKEN", "RELAY_TOKEN", "RELAY_API_URL", "VIRTUAL_ENV")
        and not k.startswith(("GIT_", "RELAY_"))
    }
    env["HOME"] = str(tmp_path / "home")  # no one's git config, keyring or relay state
    env["PATH"] = SYSTEM_PATH  # nothing of this machine's: what the README adds, it adds
    proc = subprocess.Popen(
        ["bash", str(tmp_path / "walk.sh")],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    pid_file = work / "hub-data" / "hub.pid"
    started = re.search(r"in the background \(pid (\d+)", out)
    hub_pid = int(started.group(1)) if started else None
    left_running = False
    if hub_pid is not None:  # the README's `kill` returns at once: give the hub its moment
        deadline = time.monotonic() + 10
        while not gone(hub_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        left_running = not gone(hub_pid)
        if left_running:  # a failed walk-through leaves its hub: stop it
            with contextlib.suppress(ProcessLookupError):
                os.kill(hub_pid, signal.SIGKILL)
    assert "command not found" not in out, out[-4000:]
    assert proc.returncode == 0, out[-4000:]
    assert hub_pid is not None and not left_running, "the walk-through left its hub running"
    assert not pid_file.exists(), "the stopped hub left hub.pid behind"
    assert "alice/project created" in out
    assert "relay is set up in alice/project" in out
    assert "opened job #1: laptop controls, desktop works" in out
    assert "#1: RESULT 1 posted (done" in out
    assert "#1 RESULT 1: done" in out
    assert "baton awaiting:controller" in out
    for node in ("laptop", "desktop"):  # no token kept in the clones: relay brings its own
        config = (work / node / ".git" / "config").read_text().lower()
        assert "extraheader" not in config
        assert f"url = http://127.0.0.1:{port}/alice/project.git" in config
