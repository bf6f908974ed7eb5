"""Fixtures for the durable-watcher tests: a clean environment, the real crontab, a world.

The crontab fixture (``real_crontab``) is the scheduler suite's own, which tests/conftest.py
loads for every suite: the stand-in table unless CI or RELAY_TEST_CRONTAB=1 asks for the
user's own.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from worlds import GITCONFIG, HubLike, Tokens, World, make_world


@pytest.fixture(scope="session")
def hub(git_hub: HubLike) -> HubLike:
    """This suite's hub is the ``--strict-git`` one: its remotes are the hub's git."""
    return git_hub


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing relative, temporary or home-directory-shaped can land outside tmp_path, and
    no token, API URL, node or scheduler choice leaks in from the machine."""
    for name in (
        "RELAY_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "RELAY_API_URL",
        "RELAY_NODE",
        "RELAY_SCHEDULER",
        "XDG_CONFIG_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    for sub in ("home", "tmp"):
        (tmp_path / sub).mkdir()
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(GITCONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture(scope="session")
def tokens(hub: object) -> Tokens:
    """One token per login for the whole session (making one costs a process)."""
    return Tokens(hub)  # type: ignore[arg-type]


@pytest.fixture
def world(
    tmp_path: Path, hub: object, tokens: Tokens, unique: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    """A hub repository with its git as the remote and two clones, set up by `relay init`,
    the worker admitted to the roster (its own `relay join` is what the tests run)."""
    made = make_world(
        tmp_path,
        hub,  # type: ignore[arg-type]
        tokens,
        name=f"watch-{unique}",
        monkeypatch=monkeypatch,
        as_node=True,
        timeout=90,
    )
    made.init()
    made.admit(made.worker)
    return made
