"""Fixtures for the hub's conformance suite: two users with tokens, PyGithub clients, and a
raw HTTP caller for what the clients hide (status codes, headers); the helpers themselves
live in ``hubcalls``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import github
import pytest
from hubcalls import Answer, call, push_commit, pygithub


@pytest.fixture(scope="session")
def alice(hub: Any) -> str:
    """Alice's token on the session hub."""
    return str(hub.token("alice"))


@pytest.fixture(scope="session")
def bob(hub: Any) -> str:
    """Bob's token on the session hub."""
    return str(hub.token("bob"))


@pytest.fixture
def api(hub: Any) -> Callable[..., Answer]:
    """``api(token, method, path, body=None, headers=None) -> Answer`` on the session hub."""

    def caller(
        token: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> Answer:
        return call(hub.url, token, method, path, body, headers)

    return caller


@pytest.fixture
def http() -> Callable[..., Answer]:
    """``http(url, token, method, path, body=None, headers=None) -> Answer`` on any hub."""
    return call


@pytest.fixture
def client() -> Callable[..., github.Github]:
    """``client(url, token, **kwargs) -> github.Github`` without retries."""
    return pygithub


@pytest.fixture
def gh(hub: Any, alice: str) -> github.Github:
    """PyGithub as alice."""
    return pygithub(hub.url, alice)


@pytest.fixture
def repo(gh: github.Github, unique: str) -> Any:
    """A fresh public repository of alice's."""
    return gh.get_user().create_repo(f"repo-{unique}")


@pytest.fixture
def pushed(hub: Any, alice: str, tmp_path: Path) -> Callable[[str], str]:
    """``pushed("alice/name") -> sha``: push a real commit to main of alice's repository on
    the session hub, so that its refs are its git's from then on."""
    return lambda full: push_commit(hub.url, alice, full, tmp_path / "pushes")
