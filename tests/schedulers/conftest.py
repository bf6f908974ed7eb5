"""Fixtures for the scheduler tests: a recorder for OS commands, and the real crontab.

Every test runs with its own temporary directory as the working directory and as the
temporary-file root, so nothing a backend writes can land anywhere else. The real-crontab
tests change the invoking user's crontab (root's on a developer machine), so the table is
saved first and restored exactly afterwards, under a lock that other relay tests touching
the crontab can share.
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
from sched_helpers import Recorder


@pytest.fixture(autouse=True)
def _cwd_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the checkout out of reach of anything relative, and temporary files in tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@pytest.fixture
def recorder() -> Recorder:
    """A fresh recording CommandRunner."""
    return Recorder()


@pytest.fixture
def real_crontab(tmp_path: Path) -> Iterator[None]:
    """Save the user's crontab byte for byte, hand the test the real one, restore it after.

    The lock is an flock on the crontab program itself (opened read-only), so the tests
    that share it write no file of their own; the saved table is also kept in tmp_path.
    """
    if not sys.platform.startswith("linux"):
        pytest.skip("the real-crontab tests run on Linux (macOS's crontab needs disk access)")
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
