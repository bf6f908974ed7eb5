"""Fixtures for the scheduler tests: a recorder for OS commands, and a crontab.

Every test runs with its own temporary directory as the working directory and as the
temporary-file root, so nothing a backend writes can land anywhere else.

The crontab tests run a real ``crontab`` process on a real file-backed table. Only in CI
(``CI`` set) or with ``RELAY_TEST_CRONTAB=1`` is it the real one, which changes the
invoking user's table: it is saved first and restored exactly afterwards, under a lock
that other relay tests touching the crontab can share. Otherwise a stand-in ``crontab``
(``standin_crontab.py``, with this test's own table) goes first on the PATH, so a
person's `make test` never touches their crontab. Either way no cron daemon runs in a
test (nor in most CI containers), so a stand-in ``pgrep`` on the PATH answers relay's
daemon probe as a machine with cron running; ``no_cron_daemon`` makes it answer none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sched_helpers import Recorder, cron_daemon, standin_bin, standin_script


@pytest.fixture(autouse=True)
def _cwd_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the checkout out of reach of anything relative, and temporary files in tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.fixture
def recorder() -> Recorder:
    """A fresh recording CommandRunner."""
    return Recorder()


def use_real_crontab() -> bool:
    """Whether the crontab tests drive the user's real table (CI, or asked for)."""
    return bool(os.environ.get("CI")) or os.environ.get("RELAY_TEST_CRONTAB") == "1"


@pytest.fixture
def real_crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A real ``crontab`` process for the test: the user's own (saved byte for byte and
    restored after) in CI or with RELAY_TEST_CRONTAB=1, else the stand-in with a table of
    this test's own. A cron daemon is said to run (see the module doc)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the real-crontab tests run on Linux (macOS's crontab needs disk access)")
    bin_dir = standin_bin(tmp_path)
    cron_daemon(tmp_path, running=True)
    if not use_real_crontab():
        here = Path(__file__).resolve().with_name("standin_crontab.py")
        table = tmp_path / "cron-standin" / "table"
        standin_script(bin_dir / "crontab", f'exec "{sys.executable}" "{here}" "{table}" "$@"')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    if not use_real_crontab():
        yield
        return
    program = shutil.which("crontab")
    if program is None:
        pytest.fail(
            "crontab is missing: install Debian's cron package (`apt-get install -y cron`); "
            "`crontab` works without the cron daemon"
        )
    import fcntl

    fd = os.open(program, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        saved = _save_crontab(tmp_path / "crontab.saved")
        try:
            yield
        finally:
            _restore_crontab(saved)
    finally:
        os.close(fd)  # closing releases the lock


def _save_crontab(copy: Path) -> bytes | None:
    """The crontab's exact bytes (None when there is none), also written to ``copy``."""
    answer = subprocess.run(["crontab", "-l"], capture_output=True, check=False)
    if b"no crontab for" in answer.stderr and not answer.stdout.strip():
        return None
    if answer.returncode != 0:
        pytest.fail(f"cannot back up the crontab: {answer.stderr.decode(errors='replace')}")
    copy.write_bytes(answer.stdout)
    return answer.stdout


def _restore_crontab(saved: bytes | None) -> None:
    """Put the saved table back (or none at all) and check that it is back exactly."""
    if saved is None:
        subprocess.run(["crontab", "-r"], capture_output=True, check=False)
    else:
        subprocess.run(["crontab", "-"], input=saved, capture_output=True, check=True)
    now = subprocess.run(["crontab", "-l"], capture_output=True, check=False).stdout
    assert now == (saved or b""), "the crontab was not restored exactly"
