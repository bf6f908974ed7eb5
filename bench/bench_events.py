"""The event-driven round trip: TASK posted to RESULT posted, both nodes on webhooks.

A real `relay hub`, its git as the remote and two clones as in `relay demo`; each node runs
`relay watch --webhook` as a process with an hour between reconciling passes, so only
the hub's deliveries wake them. The bench itself listens to the hub's deliveries too (a
webhook of its own), so it learns of the RESULT the moment the hub does, without polling.
The clock starts when the TASK comment's delivery arrives and stops when the RESULT
comment's delivery arrives (one clock, one receiver); the step is a no-op (`true`).

Goal (issue 6): <= 0.5 s median, against 60 s and more for polling watchers.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from relay.commands import demo as d

RUNS = 7
SECRET = "bench webhook secret"


class Deliveries(ThreadingHTTPServer):
    """The bench's own webhook receiver: when each RESULT's delivery arrived."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: dict[tuple[str, int], float] = {}
        self.arrived = threading.Condition()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"

    def round_trip(self, task: int, timeout: float = 60.0) -> float:
        """Seconds between the deliveries of TASK ``task`` and of its RESULT."""
        keys = (("TASK", task), ("RESULT", task))
        with self.arrived:
            if not self.arrived.wait_for(lambda: all(k in self.seen for k in keys), timeout):
                raise TimeoutError(f"TASK {task} or its RESULT never arrived")
            return self.seen[keys[1]] - self.seen[keys[0]]


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        at = time.perf_counter()
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(204)
        self.end_headers()
        if self.headers.get("X-GitHub-Event") != "issue_comment":
            return
        data = json.loads(body)
        head = data["comment"]["body"].split("\n", 1)[0]
        kind = head.split()[1:2] if head.startswith("### ") else []
        if data["action"] == "created" and kind in (["TASK"], ["RESULT"]):
            server: Any = self.server
            with server.arrived:
                server.seen[(kind[0], int(head.split()[2]))] = at
                server.arrived.notify_all()

    def log_message(self, format: str, *args: Any) -> None:
        return


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_watcher(node: d.Node, port: int) -> subprocess.Popen[str]:
    """`relay watch --webhook` for one node; returns once it listens and has reconciled."""
    argv = [sys.executable, "-m", "relay.cli", "watch", "--webhook", "--listen"]
    argv += [f"127.0.0.1:{port}", "--reconcile", "3600", "--repo-dir", str(node.clone)]
    env = {**node.env(), "RELAY_WEBHOOK_SECRET": SECRET}
    quiet = subprocess.DEVNULL
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=quiet, text=True)
    assert proc.stdout is not None
    while "receiving webhooks at" not in proc.stdout.readline():
        if proc.poll() is not None:
            raise RuntimeError(f"the watcher of {node.name} exited")
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    log = node.clone / ".git" / "relay" / "passes.jsonl"
    d.wait_for(log.exists, timeout=30, poll=0.01)
    return proc


@dataclass
class Figures:
    """The round trips through webhooks, and one warm worker turn taken apart."""

    seconds: list[float]
    turn: float = 0.0
    phases: dict[str, list[float]] = field(default_factory=dict)


def set_latency(hub: d.Hub, seconds: float) -> None:
    """Make the hub add ``seconds`` to every API request (its latency fault), as the way to
    GitHub does; git and webhook deliveries are not slowed."""
    admin = d.relay_cmd(["hub", "token", "bench-admin", "--admin", "--data", str(hub.data)],
                        env=os.environ).strip()  # fmt: skip
    spec = f"latency={seconds}" if seconds else ""
    hub.api("POST" if spec else "DELETE", "/_hub/faults", admin, {"spec": spec} if spec else None)


def measure(root: Path, *, runs: int = RUNS, latency: float = 0.0, turn: bool = True) -> Figures:
    """Seconds from each TASK's delivery to its RESULT's delivery (every API request
    ``latency`` seconds slower); then, with ``turn``, the worker's watcher stopped, two
    worker turns in this process, the second one's phases timed."""
    # no secondary limit: seven round trips and the setup write more than GitHub's 80 a
    # minute for one account, and the turn taken apart would time a Retry-After wait
    with d.running_hub(root / "hub", *d.NO_CONTENT_LIMIT) as hub, ExitStack() as stack:
        demo = d.setup(root, hub, lambda _line: None)
        if latency:
            set_latency(hub, latency)
        c, w = demo.controller, demo.worker
        d.init_relay(demo)
        os.environ["RELAY_WEBHOOK_SECRET"] = SECRET  # inherited by join
        ports = {n.name: free_port() for n in (c, w)}
        for n in (w, c):
            n.relay("join", "--node", n.name, "--scheduler", "none",
                    "--webhook", f"http://127.0.0.1:{ports[n.name]}/")  # fmt: skip
        key = w.relay("nodes", "key", "--node", w.name).strip()
        c.relay("nodes", "approve", w.name, "--node", c.name, "--fingerprint", key)
        server = Deliveries()
        threading.Thread(target=server.serve_forever, daemon=True).start()
        stack.callback(server.shutdown)
        hub.api("POST", f"/repos/{d.OWNER}/{d.REPO}/hooks", c.token,
                {"config": {"url": server.url, "content_type": "json"},
                 "events": ["issue_comment"]})  # fmt: skip
        procs = {}
        for n in (c, w):
            procs[n.name] = proc = start_watcher(n, ports[n.name])
            stack.callback(stop, proc)
        issue = demo.issue = d.open_job(c, title="bench", objective="round trips")
        figures = Figures(seconds=[])
        for task in range(1, runs + 1):
            c.relay("task", str(issue), "--step", "true")
            figures.seconds.append(server.round_trip(task))
            d.wait_for(demo.baton_home, timeout=30, poll=0.02)
        if not turn:
            return figures
        stop(procs[w.name])
        worker_turn(demo)  # warms what a long-running watcher has warm
        figures.turn, figures.phases = worker_turn(demo)
        return figures


def stop(proc: subprocess.Popen[str]) -> None:
    """SIGTERM a watcher and wait for it: a pass it is in the middle of (a push on a loaded
    machine) may take its grace; one that outlasts 60 s is killed."""
    proc.terminate()
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# The worker turn's phases: what each wraps, as (owner, attribute, label).
PHASES = (
    ("relay.edges.git:Clone", "pull_rebase", "git pull --rebase"),
    ("relay.edges.relay_tree:RelayTree", "publish", "git commit + push (log)"),
    ("relay.edges.github.session:ApiSession", "_get", "API GET"),
    ("relay.edges.github.session:ApiSession", "_get_all", "API GET (lists)"),
    ("relay.edges.github.session:ApiSession", "_send", "API POST/PATCH/PUT"),
    ("relay.node.execute", "run_task", "run the steps"),
    ("relay.node.redaction", "redactor_for", "build the redactor"),
)


@contextmanager
def timed_phases() -> Iterator[dict[str, list[float]]]:
    """Wrap each phase's function to add up its wall time (restored on exit)."""
    import asyncio
    import functools
    import importlib

    spent: dict[str, list[float]] = {label: [] for _, _, label in PHASES}
    saved = []
    for where, name, label in PHASES:
        module, _, cls = where.partition(":")
        owner = (
            getattr(importlib.import_module(module), cls)
            if cls
            else importlib.import_module(module)
        )
        original = getattr(owner, name)
        saved.append((owner, name, original))

        def wrap(fn: Any, label: str = label) -> Any:
            if asyncio.iscoroutinefunction(fn):

                async def timed_async(*a: Any, **k: Any) -> Any:
                    started = time.perf_counter()
                    try:
                        return await fn(*a, **k)
                    finally:
                        spent[label].append(time.perf_counter() - started)

                return functools.wraps(fn)(timed_async)

            def timed(*a: Any, **k: Any) -> Any:
                started = time.perf_counter()
                try:
                    return fn(*a, **k)
                finally:
                    spent[label].append(time.perf_counter() - started)

            return functools.wraps(fn)(timed)

        setattr(owner, name, wrap(original))
    try:
        yield spent
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


def worker_turn(demo: d.Demo) -> tuple[float, dict[str, list[float]]]:
    """One worker turn on the demo's job in this process (its watcher stopped), phases timed."""
    import asyncio

    from relay.node.context import open_node
    from relay.watchers.once import run_pass

    issue = demo.issue
    demo.controller.relay("task", str(issue), "--step", "true")
    saved = os.environ.get("RELAY_TOKEN")
    os.environ["RELAY_TOKEN"] = demo.worker.token
    try:
        ctx = open_node(repo_dir=demo.worker.clone, node=d.WORKER, api=demo.hub.url)
        ctx.clone  # noqa: B018 (opened once, as a long-running watcher has it)
        with timed_phases() as spent:
            started = time.perf_counter()
            asyncio.run(run_pass(ctx, issue=issue))
            total = time.perf_counter() - started
    finally:
        os.environ.pop("RELAY_TOKEN") if saved is None else os.environ.update(RELAY_TOKEN=saved)
    d.wait_for(demo.baton_home, timeout=30, poll=0.02)
    return total, spent


def breakdown(total: float, spent: dict[str, list[float]]) -> str:
    """The phases of a turn as lines for people."""
    lines = [f"worker turn in-process (warm): {total:.3f} s"]
    for label, runs in spent.items():
        if runs:
            lines.append(f"  {label:<26} {sum(runs):.3f} s in {len(runs)} call(s)")
    rest = total - sum(sum(r) for r in spent.values())
    lines.append(f"  {'everything else':<26} {rest:.3f} s")
    return "\n".join(lines)


def report(figures: Figures) -> str:
    """The figures as lines for people."""
    seconds = figures.seconds
    runs = ", ".join(f"{s:.3f}" for s in seconds)
    head = (
        f"round trip TASK -> RESULT, no-op step, both nodes on webhooks (median of"
        f" {len(seconds)}): {statistics.median(seconds):.3f} s"
        f"  [goal <= 0.5 s: {'met' if statistics.median(seconds) <= 0.5 else 'NOT met'}]"
        f"  runs: {runs}"
    )
    return head + "\n" + breakdown(figures.turn, figures.phases)


def main(root: Path | None = None) -> None:
    """Measure in ``root`` (a temporary directory by default) and print the figures."""
    saved = os.environ.get("RELAY_WEBHOOK_SECRET")
    try:
        if root is not None:
            print(report(measure(root)), flush=True)
            return
        with tempfile.TemporaryDirectory(prefix="relay-bench-events-") as tmp:
            print(report(measure(Path(tmp))), flush=True)
    finally:
        if saved is None:
            os.environ.pop("RELAY_WEBHOOK_SECRET", None)
        else:
            os.environ["RELAY_WEBHOOK_SECRET"] = saved


if __name__ == "__main__":
    main()
