"""Fixtures for the event-driven nodes: the shared world of tests/worlds.py (a hub
repository, its git on the hub as the remote, two clones set up by `relay init` and
`relay join`), and `relay watch --webhook` processes that receive the hub's deliveries.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from events_world import Watchers
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
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No token, API URL, node, secret or machine git config leaks in from the host."""
    for name in (
        "RELAY_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "RELAY_API_URL", "RELAY_NODE",
        "RELAY_WEBHOOK_SECRET", "RELAY_APP_ID", "RELAY_APP_INSTALLATION_ID",
        "RELAY_APP_PRIVATE_KEY", "RELAY_APP_PRIVATE_KEY_FILE", "RELAY_SCHEDULER",
    ):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(GITCONFIG)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def world(
    tmp_path: Path, hub: HubLike, tokens: Tokens, unique: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    """`relay init` by the controller, then both nodes joined (no scheduler)."""
    made = make_world(tmp_path, hub, tokens, name=f"events-{unique}", monkeypatch=monkeypatch)
    made.init()
    made.join_both()
    return made


@pytest.fixture
def watchers() -> Iterator[Watchers]:
    """Start `relay watch --webhook` processes; all are stopped at the end of the test."""
    made = Watchers()
    yield made
    made.stop_all()
