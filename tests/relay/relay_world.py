"""Helpers of the relay suite's own; the world itself (hub repository, bare remote, clones
as nodes) is tests/worlds.py, shared with the watcher and event suites."""

from __future__ import annotations

import subprocess
from pathlib import Path


def hook_script(path: Path, script: str) -> None:
    """Install an executable git hook (a shell script)."""
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (asserting there is exactly one)."""
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("relay: "), lines[0]
    return lines[0]
