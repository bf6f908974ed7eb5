"""Every loop test runs with a HOME of its own: the scheduler's scripts
(``~/.cache/relay/cron``), its lock and any git or agent configuration a test writes stay
in the test's temporary folder, never the person's."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from relay.ratchet.sandbox import BOX_ID


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    return home


@pytest.fixture(autouse=True)
def _shared_with_boxes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's scripts and stand-in executables (``scripts/``, ``bin/``) are shared with
    every box, judges' too, as a person shares a folder (``RELAY_SANDBOX_SHARE``,
    ``RELAY_SANDBOX_SHARE_JUDGES``): a scripted maker
    counts its calls there; nothing else outside its box is writable or, in the machine's
    temporary folder, even there."""
    shared = [tmp_path / "scripts", tmp_path / "bin"]
    for folder in shared:  # made writable by the boxes' user, as a person is told to
        folder.mkdir(exist_ok=True)
        if os.getuid() == 0:
            os.chown(folder, BOX_ID, -1)
    monkeypatch.setenv("RELAY_SANDBOX_SHARE", os.pathsep.join(map(str, shared)))
    # what judges a candidate sees them too: the tests' probes report through them (a
    # judged box sees no other share: test_loop_shared_gate)
    monkeypatch.setenv("RELAY_SANDBOX_SHARE_JUDGES", os.pathsep.join(map(str, shared)))


@pytest.fixture(autouse=True)
def _quick_pytest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gates' pytest (and any pytest a maker starts) loads no plugin installed around
    it: the projects of these tests use none, and the suite's own (hypothesis above all)
    would double each gate's start-up. relay's guard is named with ``-p`` and still loads;
    a test about the person's plugins sets the variable back itself."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")


@pytest.fixture
def outside_temp() -> Iterator[Path]:
    """A folder outside the machine's temporary folders (beside this checkout), where a
    person's HOME or clone usually is: in a box the private /tmp does not cover it, so
    only the box's read-only rule and its hidden paths keep it the person's."""
    base = Path(__file__).resolve().parents[3]
    temps = [Path(t).resolve() for t in ("/tmp", "/var/tmp", "/dev/shm", tempfile.gettempdir())]
    if not os.access(base, os.W_OK) or any(base.is_relative_to(t) for t in temps):
        pytest.skip(f"no writable folder outside the temporary folders here ({base})")
    where = Path(tempfile.mkdtemp(prefix=".relay-box-test-", dir=base))
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)
