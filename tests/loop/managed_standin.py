"""The stand-in of the Managed Agents API as the tests run it: one process a module
(`python -m relay.hub.agents_standin`), scripted per test through its test-only window,
and read back with the official SDK."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from relay.loop import managed as m

KEY = "sk-test-standin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Standin:
    """The stand-in process (one for the module), and the SDK client a test reads it with."""

    def __init__(self, url: str) -> None:
        self.url = url

    def client(self) -> Any:
        import anthropic

        return anthropic.Anthropic(base_url=self.url, api_key=KEY)

    def _call(self, path: str, body: Any = None) -> Any:
        ask = urllib.request.Request(
            f"{self.url}{path}",
            data=None if body is None else json.dumps(body).encode(),
            headers={"anthropic-beta": m.BETA, "x-api-key": KEY},
        )
        with urllib.request.urlopen(ask, timeout=10) as answer:
            return json.loads(answer.read())

    def script(self, turns: list[list[dict[str, Any]]]) -> None:
        """The agents' turns in the sessions created from now on."""
        self._call("/_standin/script", {"turns": turns})

    def sent(self, kind: str, session: str) -> list[dict[str, Any]]:
        """The events of ``kind`` relay sent to ``session`` (the stand-in's test window)."""
        found: list[dict[str, Any]] = self._call("/_standin/requests")
        return [
            e for r in found if r["session"] == session for e in r["events"] if e["type"] == kind
        ]


@pytest.fixture(scope="module")
def standin_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standin]:
    port = free_port()
    argv = [sys.executable, "-m", "relay.hub.agents_standin", "--port", str(port)]
    proc = subprocess.Popen(
        [*argv, "--api-key", KEY], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening")
        yield Standin(f"http://127.0.0.1:{port}")
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture
def standin(
    standin_process: Standin, monkeypatch: pytest.MonkeyPatch
) -> Callable[[list[list[dict[str, Any]]]], Standin]:
    """``standin(turns)`` scripts the agents' turns and points relay at the stand-in
    (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY)."""

    def start(turns: list[list[dict[str, Any]]]) -> Standin:
        standin_process.script(turns)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", standin_process.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        return standin_process

    return start
