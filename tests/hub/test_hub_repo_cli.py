"""`relay hub repo create|list` against a real hub over its API, `GET /user/repos`, GitHub's
``auto_init`` first commit, and `relay hub --detach`: what the offline quickstart needs."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

HubProcess = Any  # the session hub fixture of tests/conftest.py


def relay_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "relay.cli", *args]


def relay(hub: HubProcess, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RELAY_", "GH_", "GITHUB_"))}
    env.update(RELAY_API_URL=hub.url, RELAY_TOKEN=token)
    return subprocess.run(relay_command(*args), env=env, capture_output=True, text=True)


def envelope(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_create_then_list_then_clone_the_first_commit(
    hub: HubProcess, unique: str, tmp_path: Path
) -> None:
    token = hub.token(unique)
    made = relay(hub, token, "hub", "repo", "create", f"{unique}/proj", "--private", "--json")
    assert made.returncode == 0, made.stderr
    data = envelope(made)["data"]
    assert data == {
        "repo": f"{unique}/proj",
        "created": True,
        "git": f"{hub.url}/{unique}/proj.git",
    }
    listed = envelope(relay(hub, token, "hub", "repo", "list", "--json"))["data"]["repos"]
    assert listed == [{"repo": f"{unique}/proj", "private": True, "git": data["git"]}]
    header = f"http.extraHeader=Authorization: Bearer {token}"
    clone = tmp_path / "clone"
    subprocess.run(["git", "-c", header, "clone", "-q", data["git"], str(clone)], check=True)
    log = subprocess.run(
        ["git", "log", "--format=%s %an"], cwd=clone, capture_output=True, text=True, check=True
    )
    assert log.stdout == f"Initial commit {unique}\n"
    assert (clone / "README.md").read_text() == "# proj\n"


def test_empty_repository_and_exist_ok(hub: HubProcess, unique: str) -> None:
    token = hub.token(unique)
    assert relay(hub, token, "hub", "repo", "create", f"{unique}/bare", "--empty").returncode == 0
    again = relay(hub, token, "hub", "repo", "create", f"{unique}/bare")
    assert again.returncode == 2
    assert again.stderr.splitlines() == [
        f"relay: {unique}/bare already exists — pick another name, or pass --exist-ok"
    ]
    ok = relay(hub, token, "hub", "repo", "create", f"{unique}/bare", "--exist-ok", "--json")
    assert ok.returncode == 0 and envelope(ok)["data"]["created"] is False


def test_another_accounts_repository_is_refused_with_what_to_do(
    hub: HubProcess, unique: str
) -> None:
    done = relay(hub, hub.token(unique), "hub", "repo", "create", "someone-else/proj")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"relay: the token is {unique}'s, so it can create {unique}/proj but not"
        " someone-else/proj — use a token of someone-else (`relay hub token someone-else`)"
    ]
    listed = envelope(relay(hub, hub.token(unique), "hub", "repo", "list", "--json"))
    assert listed["data"]["repos"] == []


def test_a_hub_that_is_down_is_named(tmp_path: Path, unique: str) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RELAY_", "GH_", "GITHUB_"))}
    env.update(RELAY_API_URL=f"http://127.0.0.1:{port}", RELAY_TOKEN="x" * 40)
    done = subprocess.run(
        relay_command("hub", "repo", "list"), env=env, capture_output=True, text=True
    )
    assert done.returncode == 4, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


def test_detach_returns_once_serving_and_leaves_its_pid(tmp_path: Path) -> None:
    data = tmp_path / "data"
    argv = relay_command("hub", "--port", "0", "--data", str(data), "--detach", "--json")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    info = envelope(done)["data"]
    pid = int((data / "hub.pid").read_text())
    try:
        assert info["pid"] == pid
        token = subprocess.run(
            relay_command("hub", "token", "alice", "--data", str(data)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        env.update(RELAY_API_URL=info["url"], RELAY_TOKEN=token)
        listed = subprocess.run(
            relay_command("hub", "repo", "list"), env=env, capture_output=True, text=True
        )
        assert listed.stdout == "no repositories\n", listed.stderr
        # a second hub on the same port fails as one line, with nothing left running
        port = info["url"].rsplit(":", 1)[1]
        second = [sys.executable, "-m", "relay.cli", "hub", "--port", port, "--detach"]
        clash = subprocess.run(
            [*second, "--data", str(tmp_path / "other")], capture_output=True, text=True
        )
        assert clash.returncode != 0
        assert len(clash.stderr.splitlines()) == 1, clash.stderr
        assert not (tmp_path / "other" / "hub.pid").exists()
    finally:
        os.kill(pid, signal.SIGTERM)
