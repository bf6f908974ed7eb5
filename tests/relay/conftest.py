"""Fixtures for the relay verbs: a real hub, its git as the remote, clones acting as nodes.

``blank`` is a repository on the session's hub, its git as the remote and two clones, nothing
set up; ``world`` is the same after `relay init` (controller) and `relay join` (both);
``job`` adds an open job. Setup runs the CLI in-process (fast); the tests run the verbs
under test as real processes through :meth:`Node.run`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from worlds import GITCONFIG, HubLike, Tokens, World, make_world


@pytest.fixture(scope="session")
def hub(git_hub: HubLike) -> HubLike:
    """This suite's hub is the ``--strict-git`` one: its remotes are the hub's git."""
    return git_hub


@pytest.fixture(scope="session")
def tokens(hub: HubLike) -> Tokens:
    """One token per login for the whole session (making one costs a process)."""
    return Tokens(hub)


@pytest.fixture(autouse=True)
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No token, API URL, node name or machine git config leaks in from the host."""
    for name in ("RELAY_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "RELAY_API_URL", "RELAY_NODE"):
        monkeypatch.delenv(name, raising=False)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(GITCONFIG)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    yield


@pytest.fixture
def blank(
    tmp_path: Path, hub: HubLike, tokens: Tokens, unique: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    """A private repository, its git and two clones; relay not set up."""
    return make_world(tmp_path, hub, tokens, name=f"relay-{unique}", monkeypatch=monkeypatch)


@pytest.fixture
def world(blank: World) -> World:
    """`relay init` by the controller, then both nodes joined."""
    blank.init()
    blank.join_both()
    return blank


@pytest.fixture
def job(world: World) -> int:
    """An open job: the controller controls, the worker works."""
    return world.open_job()
