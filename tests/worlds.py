"""The world the end-to-end suites act in: a hub repository, its git, clones as nodes.

Shared by tests/relay, tests/watchers_e2e and tests/events (pytest puts tests/ on the path
because tests/ has a conftest.py and no __init__.py). The remote is the repository's git on
the hub (``<hub>/<owner>/<name>.git`` over smart HTTP, the token as git's password); it
and the clones are made by relay.commands.demo's own helpers, so the demo and the tests
stand on the same ground. The clones keep no credentials: relay hands its token to git
(``RELAY_TOKEN``), and test code that pushes passes :meth:`World.git_auth`. ``World.bare``
is the hub's own bare directory of the repository, read (and given hooks) as GitHub's
storage would be.

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
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

from relay.commands.demo import (
    CONTROLLER,
    OWNER,
    STRANGER,
    WORKER,
    api,
    clone_as,
    git,
    git_auth,
    git_url,
    make_remote,
)
from relay.protocol import parse_master

ENVELOPE_KEYS = {"version", "command", "ok", "exit_code", "data", "errors"}
# The git configuration of the suites' machines (GIT_CONFIG_GLOBAL): none of the machine's,
# and none of git's housekeeping (``git maintenance run --auto``, a process after each fetch,
# commit and merge), which in repositories of a few dozen objects never has work to do
GITCONFIG = "[maintenance]\n\tauto = false\n[gc]\n\tauto = 0\n"


def envelope_of(text: str) -> dict[str, Any]:
    """A verb's `--json` output: one envelope, whatever the verb and however it ended."""
    doc = json.loads(text)
    assert isinstance(doc, dict) and set(doc) == ENVELOPE_KEYS and doc["version"] == 1, doc
    assert doc["ok"] is (doc["exit_code"] == 0 and not doc["errors"])
    return doc


def data_of(text: str) -> Any:
    """The data of a verb's `--json` envelope."""
    return envelope_of(text)["data"]


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM, then kill if it lingers past ten seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class HubLike(Protocol):
    """What the tests need of the hub fixture (tests/conftest.py's HubProcess)."""

    url: str
    data_dir: Path

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


@dataclass
class Node:
    """One clone acting as one node, with its token.

    ``as_node`` adds ``--node NAME`` to every process's argv unless a call says otherwise
    (the watcher suite runs verbs as a named node); ``timeout`` bounds each process."""

    name: str
    clone: Path
    token: str
    monkeypatch: pytest.MonkeyPatch
    as_node: bool = False
    timeout: float = 60

    def env(self, token: str | None = None, **extra: str) -> dict[str, str]:
        """The environment of this node's commands: the test's, its token (or ``token``),
        ``extra``; a variable whose value is empty is left out ("" for no token)."""
        env = {**os.environ, "RELAY_TOKEN": self.token if token is None else token, **extra}
        return {name: value for name, value in env.items() if value}

    def argv(self, *args: str, as_node: bool | None = None) -> list[str]:
        """`python -m relay.cli ARGS --repo-dir CLONE [--node NAME]`."""
        argv = [sys.executable, "-m", "relay.cli", *args, "--repo-dir", str(self.clone)]
        named = self.as_node if as_node is None else as_node
        return argv + (["--node", self.name] if named else [])

    def run(
        self,
        *args: str,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
        as_node: bool | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run the CLI as a process and wait for it."""
        return subprocess.run(
            self.argv(*args, as_node=as_node),
            input=stdin,
            env=env or self.env(),
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )

    def ok(
        self,
        *args: str,
        stdin: str | None = None,
        env: dict[str, str] | None = None,
        as_node: bool | None = None,
    ) -> str:
        """Run a verb that must succeed; its stdout."""
        done = self.run(*args, stdin=stdin, env=env, as_node=as_node)
        assert done.returncode == 0, (
            f"relay {args} -> {done.returncode}: {done.stderr} {done.stdout[-2000:]}"
        )
        return done.stdout

    def json(self, *args: str) -> Any:
        """Run a verb with --json; its parsed output."""
        return data_of(self.ok(*args, "--json"))

    def watch_until(self, stop: Any, env: dict[str, str], interval: str = "2") -> None:
        """The node's foreground `relay watch --interval` (a pass every ``interval`` seconds)
        until ``stop`` (a threading.Event) is set; a watch that ends (no open job binds the
        node any more) is started again. One process's start-up serves many passes."""
        while not stop.is_set():
            proc = subprocess.Popen(
                self.argv("watch", "--interval", interval),
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            while proc.poll() is None and not stop.wait(0.5):
                pass
            if proc.poll() is None:
                stop_process(proc)
            stop.wait(float(interval))

    def call(self, *args: str, **extra: str) -> str:
        """Run a verb in-process (fast); its stdout. Fails the test on a non-zero exit."""
        done = self.invoke(*args, **extra)
        assert done.returncode == 0, (
            f"relay {args} -> {done.returncode}: {done.stderr} {done.stdout[-2000:]}"
        )
        return done.stdout

    def invoke(
        self, *args: str, token: str | None = None, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        """Run ``relay.cli.main`` in this process with this node's token (or ``token``;
        "" for none) and the variables ``extra`` ("" unsets one), capturing what it prints.
        A process costs its start-up (half a CPU-second): tests about what a verb does, not
        about the process, run it here; each verb keeps tests that run it as a process."""
        from relay.cli import main

        out, err = io.StringIO(), io.StringIO()
        value = self.token if token is None else token
        with self.monkeypatch.context() as m:
            for name, setting in {"RELAY_TOKEN": value, **extra}.items():
                if setting:
                    m.setenv(name, setting)
                else:
                    m.delenv(name, raising=False)
            handler = signal.getsignal(signal.SIGTERM)  # main() sets its own: put it back
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    status = main([*args, "--repo-dir", str(self.clone)])
            finally:
                with contextlib.suppress(ValueError):  # not the main thread
                    signal.signal(signal.SIGTERM, handler)
        return subprocess.CompletedProcess(list(args), status, out.getvalue(), err.getvalue())


@dataclass
class World:
    """The hub repository, its git (``url``; ``bare`` is its directory) and the two nodes."""

    hub: HubLike
    repo: str
    bare: Path
    root: Path
    controller: Node
    worker: Node
    tokens: Tokens
    url: str = ""
    notes: dict[str, Any] = field(default_factory=dict)

    def git_auth(self, login: str = OWNER) -> dict[str, str]:
        """The environment that lets test code's git talk to the hub as ``login``."""
        return git_auth(self.url, self.tokens(login))

    def clone(self, name: str, login: str = OWNER, *, keep_credentials: bool = False) -> Path:
        """Another clone of the repository (under the world's root), as ``login``; with
        ``keep_credentials`` its git config keeps the token (for git run by hooks)."""
        path = clone_as(self.url, self.root, name, self.tokens(login))
        if keep_credentials:
            auth = self.git_auth(login)
            git("config", auth["GIT_CONFIG_KEY_0"], auth["GIT_CONFIG_VALUE_0"], cwd=path)
        return path

    def init(self) -> None:
        """`relay init` by the controller (labels, master section, its row)."""
        self.controller.call(
            "init", "--yes", "--node", CONTROLLER, "--repo", self.repo, "--api", self.hub.url
        )

    def join_both(self) -> None:
        """`relay join` by the worker (a request to join the roster), then the controller
        (no scheduler), which admits the worker as the roster's admin."""
        self.worker.call("join", "--node", WORKER, "--scheduler", "none")
        self.controller.call("join", "--node", CONTROLLER, "--scheduler", "none")
        key = self.worker.call("nodes", "key", "--node", WORKER).strip()  # read out to it
        self.controller.call("nodes", "approve", WORKER, "--node", CONTROLLER, "--fingerprint", key)

    def admit(self, node: Node) -> None:
        """The roster's admin admits ``node`` before it runs relay at all: its key is made in
        its state and its request to join committed (what its `relay join` would do), then
        the controller approves it. Its own `relay join` then finds it a member."""
        from datetime import UTC, datetime

        from relay.edges.local import NodeState
        from relay.protocol import Account
        from relay.protocol.roster import JoinRequest, fingerprint, request_path, sign_request
        from relay.protocol.signatures import public_key_of

        state = NodeState.for_clone(node.clone)
        key = state.signing_key(node.name) or state.new_signing_key(node.name)
        me = api(f"{self.hub.url}/user", node.token)
        request = JoinRequest(
            name=node.name,
            repository=self.repo,
            accounts=(Account(id=me["id"], login=me["login"]),),
            key=public_key_of(key),
            os="Linux",
            at=datetime.now(UTC),
        )
        where = self.clone(f"admit-{node.name}")
        path = where / request_path(node.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(sign_request(request, private_key=key))
        git("add", "-A", cwd=where)
        git("commit", "-qm", f"relay: {node.name} joins (asks the roster's admins)", cwd=where)
        git("push", "-q", "origin", "HEAD:main", cwd=where, auth=self.git_auth())
        shown = fingerprint(public_key_of(key))
        self.controller.call(
            "nodes", "approve", node.name, "--node", CONTROLLER, "--fingerprint", shown
        )

    def open_job(
        self, *, worker: str = WORKER, title: str = "Build fails", objective: str = "Find why."
    ) -> int:
        """An open job the controller controls and ``worker`` works; its number."""
        out = self.controller.call(
            "job", "open", "--worker", worker, "--title", title, "--objective", objective
        )
        return int(out.split("#", 1)[1].split(":", 1)[0])

    def signed(self, node: Node, body: str, *, issue: int | None = None) -> str:
        """``body`` signed with ``node``'s key, as that node would post it (a job body for
        its ``issue``)."""
        from relay.edges.local import NodeState
        from relay.protocol.signatures import sign_body

        key = NodeState.for_clone(node.clone).signing_key(node.name)
        assert key is not None, f"{node.name} has no signing key (has it joined?)"
        return sign_body(body, repo=self.repo, private_key=key, issue=issue)

    def api(self, path: str, method: str = "GET", body: Any = None, *, login: str = OWNER) -> Any:
        """Call the hub as ``login`` under /repos/OWNER/NAME."""
        return api(f"{self.hub.url}/repos/{self.repo}{path}", self.tokens(login), method, body)

    def made_labels(self) -> list[dict[str, Any]]:
        """The repository's labels other than the nine GitHub gives every new one."""
        return [label for label in self.api("/labels?per_page=100") if not label["default"]]

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

    def remote_head(self) -> str:
        """The sha of main in the bare remote (what every node pulls)."""
        return git("rev-parse", "main", cwd=self.bare).strip()

    def remote_file(self, path: str) -> str:
        return git("show", f"main:{path}", cwd=self.bare)

    def column(self, node: str) -> str:
        """The scheduler column of ``node`` in the node table pushed to the remote."""
        row = parse_master(self.remote_file("docs/loop/LOOP.md")).node(node)
        assert row is not None, f"{node} is not in the pushed node table"
        return row.scheduler

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


def make_world(
    root: Path,
    hub: HubLike,
    tokens: Tokens,
    *,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    private: bool = True,
    as_node: bool = False,
    timeout: float = 60,
) -> World:
    """Create the hub repository, push its first commit and make the clones (``as_node``
    and ``timeout`` are the nodes', see :class:`Node`)."""
    body = {"name": name, "private": private}
    made = api(f"{hub.url}/user/repos", tokens(OWNER), "POST", body)
    repo = f"{OWNER}/{name}"
    url = git_url(hub.url, repo)
    make_remote(root, url, tokens(OWNER))
    bare = hub.data_dir / "git" / f"{made['id']}.git"
    assert bare.is_dir(), bare
    nodes = [
        Node(n, clone_as(url, root, n, tokens(OWNER)), tokens(OWNER), monkeypatch, as_node, timeout)
        for n in (CONTROLLER, WORKER)
    ]
    return World(hub, repo, bare, root, nodes[0], nodes[1], tokens, url=url)


def key_of(node: Node, name: str | None = None) -> str:
    """The fingerprint of the key ``node``'s clone holds (what its `relay join` printed, read
    out to the admin who runs `relay nodes approve NAME --fingerprint`)."""
    from relay.edges.local import NodeState
    from relay.protocol.roster import fingerprint
    from relay.protocol.signatures import public_key_of

    key = NodeState.for_clone(node.clone).signing_key(name or node.name)
    assert key is not None, f"{node.clone} holds no key for {name or node.name}"
    return fingerprint(public_key_of(key))


def loop_world(
    root: Path, hub: HubLike, tokens: Tokens, *, name: str, monkeypatch: pytest.MonkeyPatch
) -> World:
    """A world for the loop's suites: no token or node from this shell, git with no global or
    system configuration, pytest without the plugins installed around it."""
    for var in ("RELAY_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", "RELAY_API_URL", "RELAY_NODE"):
        monkeypatch.delenv(var, raising=False)
    empty = root / "gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return make_world(root, hub, tokens, name=name, monkeypatch=monkeypatch)
