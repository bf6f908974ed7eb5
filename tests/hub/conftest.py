"""Fixtures for the hub's conformance suite: two users with tokens, PyGithub clients, and a
raw HTTP caller for what the clients hide (status codes, headers)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import github
import pytest


@dataclass(frozen=True)
class Answer:
    """A raw HTTP answer."""

    status: int
    headers: dict[str, str]
    body: Any


def call(
    url: str,
    token: str,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> Answer:
    """One request with the stdlib, returning the answer whatever its status."""
    data = None if body is None else json.dumps(body).encode()
    sent = {"Authorization": f"token {token}", "Accept": "application/vnd.github+json"}
    req = urllib.request.Request(f"{url}{path}", data, {**sent, **(headers or {})}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, head, raw = resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        status, head, raw = err.code, dict(err.headers), err.read()
    lowered = {k.lower(): v for k, v in head.items()}
    return Answer(status, lowered, json.loads(raw) if raw else None)


def pygithub(url: str, token: str, **kwargs: Any) -> github.Github:
    """A PyGithub client on the hub, without its retries (tests want to see each answer) and
    without its pauses between writes (the hub has no secondary limit unless told to)."""
    pauses = {"seconds_between_requests": None, "seconds_between_writes": None}
    return github.Github(
        base_url=url, auth=github.Auth.Token(token), retry=None, **{**pauses, **kwargs}
    )


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
