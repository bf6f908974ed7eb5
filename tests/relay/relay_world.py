"""The world the relay tests act in: a hub repository, a bare remote, clones as nodes.

Every node command runs the real CLI, either as a process (:meth:`Node.run`, the end to
end path) or in-process (:meth:`Node.call`, for fast setup). :meth:`World.frozen` takes a
picture of everything a bad input must leave alone: the issue (body, labels, state,
comments), the hub's refs and the remote's refs.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

CONTROLLER = "mac-studio"
WORKER = "win-desktop"
OWNER = "octo"
STRANGER = "mallory"
GIT_ID = {
    "GIT_AUTHOR_NAME": "seed",
    "GIT_AUTHOR_EMAIL": "seed@relay.invalid",
    "GIT_COMMITTER_NAME": "seed",
    "GIT_COMMITTER_EMAIL": "seed@relay.invalid",
}


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

    def env(self, token: str | None = None, **extra: str) -> dict[str, str]:
        """The environment of this node's commands (the test's env plus its token)."""
        env = {**os.environ, "RELAY_TOKEN": self.token if token is None else token, **extra}
        if not env["RELAY_TOKEN"]:
            del env["RELAY_TOKEN"]
        return env

    def argv(self, *args: str) -> list[str]:
        """`python -m relay.cli ARGS --repo-dir CLONE`."""
        return [sys.executable, "-m", "relay.cli", *args, "--repo-dir", str(self.clone)]

    def run(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run the CLI as a process and wait for it."""
        return subprocess.run(
            self.argv(*args),
            input=stdin,
            env=env or self.env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def ok(self, *args: str, stdin: str | None = None) -> str:
        """Run a verb that must succeed; its stdout."""
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, f"relay {args} -> {done.returncode}: {done.stderr}"
        return done.stdout

    def json(self, *args: str) -> Any:
        """Run a verb with --json; its parsed output."""
        return json.loads(self.ok(*args, "--json"))

    def call(self, *args: str) -> str:
        """Run a verb in-process (fast); its stdout. Fails the test on a non-zero exit."""
        done = self.invoke(*args)
        assert done.returncode == 0, f"relay {args} -> {done.returncode}: {done.stderr}"
        return done.stdout

    def invoke(self, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``relay.cli.main`` in this process with this node's token (or ``token``;
        "" for none), capturing what it prints."""
        from relay.cli import main

        out, err = io.StringIO(), io.StringIO()
        value = self.token if token is None else token
        with self.monkeypatch.context() as m:
            if value:
                m.setenv("RELAY_TOKEN", value)
            else:
                m.delenv("RELAY_TOKEN", raising=False)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main([*args, "--repo-dir", str(self.clone)])
        return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


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
    notes: dict[str, Any] = field(default_factory=dict)

    def api(self, path: str, method: str = "GET", body: Any = None, *, login: str = OWNER) -> Any:
        """Call the hub as ``login`` under /repos/OWNER/NAME."""
        return api(f"{self.hub.url}/repos/{self.repo}{path}", self.tokens(login), method, body)

    def issue(self, number: int) -> dict[str, Any]:
        found: dict[str, Any] = self.api(f"/issues/{number}")
        return found

    def labels(self, number: int) -> set[str]:
        return {label["name"] for label in self.issue(number)["labels"]}

    def comments(self, number: int) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = self.api(f"/issues/{number}/comments?per_page=100")
        return found

    def heads(self, number: int) -> list[str]:
        """The first line of each comment (``### TASK 1``, ``### RESULT 1``, ...)."""
        return [c["body"].split("\n", 1)[0] for c in self.comments(number)]

    def claim_refs(self) -> dict[str, str]:
        rows = self.api("/git/matching-refs/relay/claims/")
        return {r["ref"]: r["object"]["sha"] for r in rows}

    def remote_refs(self) -> str:
        """Every ref of the bare remote with its sha."""
        return git("for-each-ref", "--format=%(refname) %(objectname)", cwd=self.bare)

    def remote_file(self, path: str) -> str:
        return git("show", f"main:{path}", cwd=self.bare)

    def stranger_comment(self, number: int, body: str) -> int:
        """A comment by an account that gives no instructions (a collaborator)."""
        self.tokens(STRANGER)  # the account exists once it has a token
        self.api(f"/collaborators/{STRANGER}", "PUT", {})
        made = self.api(f"/issues/{number}/comments", "POST", {"body": body}, login=STRANGER)
        return int(made["id"])

    def frozen(self, number: int | None = None) -> dict[str, Any]:
        """Everything a failed command must leave as it was."""
        picture: dict[str, Any] = {"remote": self.remote_refs(), "claims": self.claim_refs()}
        if number is not None:
            issue = self.issue(number)
            picture["issue"] = (issue["body"], issue["state"], sorted(self.labels(number)))
            picture["comments"] = [(c["id"], c["body"]) for c in self.comments(number)]
        return picture


def make_remote(root: Path) -> Path:
    """A bare repository whose main has one commit."""
    bare = root / "remote.git"
    git("init", "--bare", "-q", "-b", "main", str(bare), cwd=root)
    seed = root / "seed"
    git("init", "-q", "-b", "main", str(seed), cwd=root)
    (seed / "README.md").write_text("# a project\n")
    git("add", "README.md", cwd=seed)
    git("commit", "-q", "-m", "first", cwd=seed)
    git("push", "-q", str(bare), "main", cwd=seed)
    return bare


def clone_as(bare: Path, root: Path, name: str) -> Path:
    """A working clone for one node with its own git identity."""
    path = root / name
    git("clone", "-q", str(bare), str(path), cwd=root)
    git("config", "user.name", f"relay on {name}", cwd=path)
    git("config", "user.email", f"{name}@relay.invalid", cwd=path)
    return path


def make_world(
    root: Path,
    hub: HubLike,
    tokens: Tokens,
    *,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    private: bool = True,
) -> World:
    """Create the hub repository, the bare remote and the clones."""
    api(f"{hub.url}/user/repos", tokens(OWNER), "POST", {"name": name, "private": private})
    bare = make_remote(root)
    c = Node(CONTROLLER, clone_as(bare, root, CONTROLLER), tokens(OWNER), monkeypatch)
    w = Node(WORKER, clone_as(bare, root, WORKER), tokens(OWNER), monkeypatch)
    return World(hub, f"{OWNER}/{name}", bare, root, c, w, tokens)


def hook_script(path: Path, script: str) -> None:
    """Install an executable git hook (a shell script)."""
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed command (asserting there is exactly one)."""
    assert done.returncode != 0, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("relay: "), lines[0]
    return lines[0]
