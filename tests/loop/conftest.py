"""Every loop test runs with a HOME of its own: the scheduler's scripts
(``~/.cache/relay/cron``), its lock and any git or agent configuration a test writes stay
in the test's temporary folder, never the person's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    return home
