"""The world the watcher tests act in: a hub repository, a bare remote, two clones.

Commands under test run as real processes (:meth:`Node.run`); setup that is not under
test (init, opening a job, posting a TASK) runs the same CLI in-process (:meth:`Node.call`)
because it is faster. The crontab helpers read and write the real table and run one of
its lines exactly as cron does: ``/bin/sh -c`` with cron's minimal environment.
"""

from __future__ import annotations

import contextlib
import getpass
import io
import json
import os
import re
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import pytest

from relay.protocol import parse_master

CONTROLLER = "mac-studio"
WORKER = "win-desktop"
OWNER = "octo"
GIT_ID = {
    "GIT_AUTHOR_NAME": "seed",
    "GIT_AUTHOR_EMAIL": "seed@relay.invalid",
    "GIT_COMMITTER_NAME": "seed",
    "GIT_COMMITTER_EMAIL": "seed@relay.invalid",
}
OURS = re.compile(r" # relay:relay-watch-\S+$")
CRON_FIELDS = re.compile(r"^\s*(?:\S+\s+){5}(?P<command>.*)$")


class HubLike(Protocol):
    """What the tests need of the hub fixture (tests/conftest.py's HubProcess)."""

    url: str

    def token(self, login: str, *, admin: bool = False) -> str: ...


class Tokens:
    """Tokens by login, made once per session."""

    def __init__(self, hub: HubLike) -> None:
        self.hub = hub
        self.made: dict[str, str] = {}

    def __call__(self, login: str) -> str:
        if login not in self.made:
            self.made[login] = self.hub.token(login)
        return self.made[login]


def git(*args: str, cwd: Path) -> str:
    """Run git with a fixed identity; fail the test on error."""
    env = {**os.environ, **GIT_ID}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, f"git {args}: {done.stderr}"
    return done.stdout


def api(url: str, token: str, method: str = "GET", body: Any = None) -> Any:
    """One API call with the standard library (another client than relay's)."""
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"token {token}", "Accept": "application/vnd.github+json"}
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:
        text = answer.read().decode()
    return json.loads(text) if text else None


@dataclass
class Node:
    """One clone acting as one node, with its token."""

    name: str
    clone: Path
    token: str
    monkeypatch: pytest.MonkeyPatch

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of this node's commands: the test's, its token, ``extra``."""
        env = {**os.environ, "RELAY_TOKEN": self.token, **extra}
        return {name: value for name, value in env.items() if value}

    def run(
        self, *args: str, env: dict[str, str] | None = None, as_node: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """`python -m relay.cli ARGS --repo-dir CLONE [--node NAME]` as a process."""
        argv = [sys.executable, "-m", "relay.cli", *args, "--repo-dir", str(self.clone)]
        argv += ["--node", self.name] if as_node else []
        return subprocess.run(
            argv, env=env or self.env(), capture_output=True, text=True, timeout=90, check=False
        )

    def ok(self, *args: str, env: dict[str, str] | None = None, as_node: bool = True) -> str:
        """Run a verb that must succeed; its stdout."""
        done = self.run(*args, env=env, as_node=as_node)
        assert done.returncode == 0, f"relay {args} -> {done.returncode}: {done.stderr}"
        return done.stdout

    def call(self, *args: str) -> str:
        """Run a verb in-process (fast setup); its stdout. Fails the test on a non-zero exit."""
        from relay.cli import main

        out, err = io.StringIO(), io.StringIO()
        with self.monkeypatch.context() as m:
            m.setenv("RELAY_TOKEN", self.token)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main([*args, "--repo-dir", str(self.clone)])
        assert status == 0, f"relay {args} -> {status}: {err.getvalue()}"
        return out.getvalue()


@dataclass
class World:
    """The hub repository, its bare remote and the two nodes."""

    hub: HubLike
    repo: str
    bare: Path
    root: Path
    controller: Node
    worker: Node
    tokens: Tokens

    def init(self) -> None:
        """`relay init` by the controller (labels, master section, its row)."""
        self.controller.call(
            "init", "--yes", "--node", CONTROLLER, "--repo", self.repo, "--api", self.hub.url
        )

    def api(self, path: str, method: str = "GET", body: Any = None) -> Any:
        """Call the hub as the owner under /repos/OWNER/NAME."""
        return api(f"{self.hub.url}/repos/{self.repo}{path}", self.tokens(OWNER), method, body)

    def comments(self, number: int) -> list[str]:
        """The bodies of a job's comments, oldest first."""
        return [c["body"] for c in self.api(f"/issues/{number}/comments?per_page=100")]

    def open_job(self) -> int:
        """An open job: the controller controls, the worker works."""
        out = self.controller.call(
            "job", "open", "--worker", WORKER, "--title", "Build fails", "--objective", "Why?"
        )
        return int(out.split("#", 1)[1].split(":", 1)[0])

    def remote_head(self) -> str:
        """The sha of main in the bare remote (what every node pulls)."""
        return git("rev-parse", "main", cwd=self.bare).strip()

    def column(self, node: str) -> str:
        """The scheduler column of ``node`` in the node table pushed to the remote."""
        text = git("show", "main:docs/loop/LOOP.md", cwd=self.bare)
        row = parse_master(text).node(node)
        assert row is not None, f"{node} is not in the pushed node table"
        return row.scheduler


def make_world(
    tmp_path: Path, hub: HubLike, tokens: Tokens, *, name: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    """A private repository on the hub, a bare remote with one commit, and two clones."""
    token = tokens(OWNER)
    api(f"{hub.url}/user/repos", token, "POST", {"name": name, "private": True})
    bare = tmp_path / "remote.git"
    git("init", "--bare", "-q", "-b", "main", str(bare), cwd=tmp_path)
    seed = tmp_path / "seed"
    git("init", "-q", "-b", "main", str(seed), cwd=tmp_path)
    (seed / "README.md").write_text("# a project\n")
    git("add", "README.md", cwd=seed)
    git("commit", "-q", "-m", "first", cwd=seed)
    git("push", "-q", str(bare), "main", cwd=seed)
    nodes = []
    for node in (CONTROLLER, WORKER):
        clone = tmp_path / node
        git("clone", "-q", str(bare), str(clone), cwd=tmp_path)
        git("config", "user.name", f"relay on {node}", cwd=clone)
        git("config", "user.email", f"{node}@relay.invalid", cwd=clone)
        nodes.append(Node(node, clone, token, monkeypatch))
    return World(hub, f"{OWNER}/{name}", bare, tmp_path, nodes[0], nodes[1], tokens)


def read_crontab() -> str:
    """The invoking user's crontab as text ("" when there is none)."""
    done = subprocess.run(["crontab", "-l"], capture_output=True, text=True, check=False)
    if "no crontab for" in done.stderr and not done.stdout.strip():
        return ""
    assert done.returncode == 0, done.stderr
    return done.stdout


def write_crontab(text: str) -> None:
    """Replace the invoking user's crontab (the fixture restores the original)."""
    subprocess.run(["crontab", "-"], input=text, text=True, check=True, capture_output=True)


def relay_lines(table: str) -> list[str]:
    """The lines relay owns in a crontab (tagged with its marker)."""
    return [line for line in table.splitlines() if OURS.search(line)]


def line_for(table: str, node: str) -> str:
    """The one crontab line of ``node``'s watcher."""
    mine = re.compile(rf" --node {re.escape(node)}[;\s]")
    found = [line for line in relay_lines(table) if mine.search(line)]
    assert len(found) == 1, f"expected one line for {node} in:\n{table}"
    return found[0]


def as_cron(line: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Run a crontab line the way cron does: the command after the five time fields,
    ``\\%`` read as ``%``, through ``/bin/sh -c`` in HOME with cron's minimal environment."""
    match = CRON_FIELDS.match(line)
    assert match is not None, f"not a cron job line: {line!r}"
    command = match["command"].replace("\\%", "%")
    env = {"HOME": str(home), "LOGNAME": getpass.getuser(), "SHELL": "/bin/sh"}
    env["PATH"] = "/usr/bin:/bin"
    return subprocess.run(
        ["/bin/sh", "-c", command], cwd=home, env=env, capture_output=True, text=True, timeout=90
    )
