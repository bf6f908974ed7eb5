"""The judged box folders a killed relay left in the temporary folder go when the next
judged box is made: those whose owner record names a run that is over (its pid gone, or
now another process's), never a live run's, never through a link. Real processes, one
killed with SIGKILL."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from relay.ratchet.sandbox import JUDGED_PREFIX, OWNER_FILE, judged, owner_gone

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from relay.ratchet.sandbox import judged\n"
    "with judged(Path(sys.argv[1]), sys.argv[2], hidden=()) as box:\n"
    "    print(box.folder, flush=True)\n"
    "    time.sleep(600)\n"
)


def a_repo(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("a\n")

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "a")
    return root, git("rev-parse", "HEAD")


def holding(root: Path, commit: str) -> tuple[subprocess.Popen[str], Path]:
    """A relay process inside a judged box: the process, its box folder."""
    held = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root), commit], stdout=subprocess.PIPE, text=True
    )
    assert held.stdout is not None
    return held, Path(held.stdout.readline().strip())


def test_a_killed_runs_box_folder_goes_and_a_live_runs_stays(tmp_path: Path) -> None:
    root, commit = a_repo(tmp_path)
    killed, dead = holding(root, commit)
    live, kept = holding(root, commit)
    temp = Path(tempfile.gettempdir()).resolve()
    # a link named as a box folder, to a folder with a dead run's record: never followed
    target = tmp_path / "target"
    target.mkdir()
    link = temp / f"{JUDGED_PREFIX}link-{os.getpid()}"
    # a folder whose record is a link to a dead run's record: not a record of relay's
    linked = Path(tempfile.mkdtemp(prefix=f"{JUDGED_PREFIX}linked-"))
    try:
        assert dead.is_dir() and kept.is_dir() and dead.parent == temp
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert dead.is_dir()  # a killed run removes nothing
        (target / OWNER_FILE).write_text((dead / OWNER_FILE).read_text())
        link.symlink_to(target)
        (linked / OWNER_FILE).symlink_to(target / OWNER_FILE)
        with judged(root, commit, hidden=()) as box:
            assert box.folder.is_dir()
            assert not dead.exists()
            assert kept.is_dir() and (kept / "tree" / "a.txt").is_file()
            assert link.is_symlink() and (target / OWNER_FILE).is_file()
            assert linked.is_dir()
    finally:
        for each in (killed, live):
            each.kill()
            each.wait()
        link.unlink(missing_ok=True)
        for each in (dead, kept, linked):
            shutil.rmtree(each, ignore_errors=True)


@pytest.mark.parametrize(
    ("record", "boot", "started", "gone"),
    [
        ("41 900 b1\n", "b1", "900", False),  # the run itself, alive
        ("41 900 b1\n", "b1", None, True),  # no process of that pid
        ("41 900 b1\n", "b1", "1200", True),  # that pid is another process's now
        ("41 900 b1\n", "b2", "900", True),  # a record of another boot
        ("41 - -\n", "b1", "5", False),  # where nothing tells the process apart: alive
        ("", "b1", None, False),  # no record of relay's: left alone
        ("not a record", "b1", None, False),
    ],
)
def test_a_box_folders_run_is_over_by_its_pid_start_and_boot(
    record: str, boot: str, started: str | None, gone: bool
) -> None:
    assert owner_gone(record, boot=boot, started=started) is gone
