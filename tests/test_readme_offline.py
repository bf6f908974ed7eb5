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


def test_the_readme_offline_section_runs_as_written(tmp_path: Path) -> None:
    port = free_port()
    script = "\n".join(quickstart_blocks(README.read_text())).replace("8080", str(port))
    (tmp_path / "walk.sh").write_text("set -eux\n" + script)
    work = tmp_path / "work"
    work.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GITHUB_TOKEN", "GH_TOKEN", "RELAY_TOKEN", "RELAY_API_URL")
        and not k.startswith(("GIT_", "RELAY_"))
    }
    env["HOME"] = str(tmp_path / "home")  # no one's git config, keyring or relay state
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    proc = subprocess.Popen(
        ["bash", str(tmp_path / "walk.sh")],
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=150)
    finally:
        pid_file = work / "hub-data" / "hub.pid"
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        if pid_file.exists():  # a failed walk-through leaves its hub: stop it
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    assert proc.returncode == 0, out[-4000:]
    assert "alice/project created" in out
    assert "relay is set up in alice/project" in out
    assert "opened job #1: laptop controls, desktop works" in out
    assert "#1: RESULT 1 posted (done" in out
    assert "#1 RESULT 1: done" in out
    assert "baton awaiting:controller" in out
    for clone in ("laptop", "desktop"):  # no token kept in the clones: relay brings its own
        config = (work / clone / ".git" / "config").read_text().lower()
        assert "extraheader" not in config
        assert f"url = http://127.0.0.1:{port}/alice/project.git" in config
