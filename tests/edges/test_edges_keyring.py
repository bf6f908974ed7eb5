"""The OS keyring as a token source for scheduled passes (the optional `keyring` package).

No OS keychain exists on a CI machine, so the test plugs an in-memory backend in through
keyring's own extension point (a KeyringBackend subclass); the lookup code under test is
relay's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail

from relay.edges.github.credentials import (
    KEYRING_SERVICE,
    find_token,
    keyring_token,
    save_keyring_token,
)

API = "http://127.0.0.1:9/"


class MemoryKeyring(KeyringBackend):
    """A keychain that lives in a dict."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.items.pop((service, username), None)


@pytest.fixture
def memory() -> Iterator[MemoryKeyring]:
    before = keyring.get_keyring()
    ring = MemoryKeyring()
    keyring.set_keyring(ring)
    try:
        yield ring
    finally:
        keyring.set_keyring(before)


def test_saved_token_is_found_for_its_api_only(memory: MemoryKeyring, tmp_path: Path) -> None:
    assert save_keyring_token(API, "kr-token-1")
    assert memory.items == {(KEYRING_SERVICE, API): "kr-token-1"}
    found = find_token(api_url=API, env={"PATH": str(tmp_path)}, token_file=tmp_path / "none")
    assert (found.value, found.source) == ("kr-token-1", "the OS keyring")
    assert keyring_token("http://127.0.0.1:10") is None


def test_environment_wins_over_the_keyring(memory: MemoryKeyring, tmp_path: Path) -> None:
    save_keyring_token(API, "kr-token-1")
    found = find_token(api_url=API, env={"RELAY_TOKEN": "env-token", "PATH": str(tmp_path)})
    assert found.value == "env-token"


def test_no_usable_keyring_means_no_keyring_route() -> None:
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        assert keyring_token(API) is None
        assert save_keyring_token(API, "x") is False
    finally:
        keyring.set_keyring(before)
