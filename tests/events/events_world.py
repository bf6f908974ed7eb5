"""`relay watch --webhook` as real processes, and signed deliveries sent by hand.

A watcher runs with ``--reconcile`` set to an hour: its one reconciling pass happens at
start (the test waits for it), so anything it does later can only have been caused by a
delivery.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worlds import stop_process

from relay.edges.local import NodeState

NO_POLLING = "3600"


def free_port() -> int:
    """A port free on loopback now (the watcher binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sign(secret: str, body: bytes) -> str:
    """GitHub's X-Hub-Signature-256 value."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def deliver(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST one delivery; the status the receiver answered."""
    sent = {"Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/test", **headers}
    request = urllib.request.Request(url, data=body, headers=sent, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def wait_until(check: Callable[[], Any], *, timeout: float = 30.0, what: str = "") -> Any:
    """Poll the test's own view (never the nodes') until ``check()`` is truthy."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what or check}")


def passes(clone: Path) -> int:
    """How many passes a node has logged (its heartbeat file)."""
    return len(NodeState.for_clone(clone).passes())


@dataclass
class WatchProcess:
    """One `relay watch --webhook` process and what it printed."""

    clone: Path
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    url: str = ""

    def read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def stop(self) -> None:
        stop_process(self.proc)


@dataclass
class Watchers:
    """The watcher processes a test started."""

    started: list[WatchProcess] = field(default_factory=list)

    def start(
        self, clone: Path, *, node: str, port: int, env: dict[str, str], log: Path
    ) -> WatchProcess:
        """Start the watcher, wait for its URL and for its first (reconciling) pass."""
        argv = [sys.executable, "-m", "relay.cli", "watch", "--webhook", "--listen"]
        argv += [f"127.0.0.1:{port}", "--reconcile", NO_POLLING]
        argv += ["--repo-dir", str(clone), "--node", node]
        before = passes(clone)
        with log.open("a") as err:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        watch = WatchProcess(clone, proc)
        self.started.append(watch)
        threading.Thread(target=watch.read, daemon=True).start()
        found = wait_until(
            lambda: [ln for ln in watch.lines if "receiving webhooks at" in ln] or proc.poll(),
            what=f"the watcher of {node} (log: {log})",
        )
        assert proc.poll() is None, log.read_text()
        watch.url = found[0].rsplit(" ", 1)[1]
        wait_until(lambda: passes(clone) > before, what=f"{node}'s reconciling pass")
        return watch

    def stop_all(self) -> None:
        for watch in self.started:
            watch.stop()


def node_env(token: str, **extra: str) -> dict[str, str]:
    """A node process's environment: the test's, its token and ``extra``."""
    return {**os.environ, "RELAY_TOKEN": token, **extra}


def issue_payload(issue: dict[str, Any], repo: str) -> bytes:
    """An issue_comment delivery about ``issue`` (as the API returned it): its author
    edited a comment, which the receiver always passes on (an edit may be tampering)."""
    data = {
        "action": "edited",
        "issue": issue,
        "comment": {"id": 1, "body": "hi", "user": issue["user"]},
        "repository": {"full_name": repo},
        "sender": issue["user"],
    }
    return json.dumps(data).encode()
