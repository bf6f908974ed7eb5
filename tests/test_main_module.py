"""`python -m relay` (on Windows `py -m relay`) is the same CLI as the `relay` script."""

from __future__ import annotations

import subprocess
import sys


def test_python_dash_m_relay_runs_the_cli() -> None:
    via_module = subprocess.run(
        [sys.executable, "-m", "relay", "--version"], capture_output=True, text=True, check=True
    )
    via_cli = subprocess.run(
        [sys.executable, "-m", "relay.cli", "--version"], capture_output=True, text=True, check=True
    )
    assert via_module.stdout == via_cli.stdout and "relay" in via_module.stdout
    unknown = subprocess.run(
        [sys.executable, "-m", "relay", "no-such-verb"], capture_output=True, text=True
    )
    assert unknown.returncode != 0 and "no-such-verb" in unknown.stderr
