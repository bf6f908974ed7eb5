"""Relay at GitHub's latency: every API request 100 ms slower, beside the same at loopback.

A real `relay hub` (its ``latency`` fault on every API request, set through the admin
endpoint; git and webhook deliveries are not slowed), its git as the remote, two clones
set up as `relay demo` sets them up, every command a real process. Measured at loopback
and at 100 ms:

- the idle pass (`relay watch --once` as a process) with 1, 10 and 100 open jobs bound to
  the node: wall time (median) and the requests the pass counted;
- the polling round trip: `relay task` started -> the controller notified (the baton back
  home), both nodes running `relay watch --interval 1`;
- the writes one round trip makes (TASK -> claim -> RESULT -> controller notified),
  counted by the hub;
- the webhook round trip (bench_events' definition: the TASK's delivery -> the RESULT's).

Goals (issue 12): idle pass with 100 open jobs <= 0.5 s and 1 request at 100 ms; webhook
round trip <= 1.5 s at 100 ms; at most 6 writes per round trip (issue 29).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

from bench import bench_events
from relay.commands import demo as d

LATENCY = 0.1
JOB_COUNTS = (1, 10, 100)
IDLE_RUNS = 5
TRIPS = 3
WEBHOOK_RUNS = 5
WRITES = ("POST", "PATCH", "PUT", "DELETE")


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


class Bench:
    """One hub, one repository, the two nodes, and the hub's admin endpoints."""

    def __init__(self, hub: d.Hub, demo: d.Demo) -> None:
        self.hub, self.demo = hub, demo
        argv = ["hub", "token", "bench-admin", "--admin", "--data", str(hub.data)]
        self.admin = d.relay_cmd(argv, env={**d.os.environ}).strip()
        self.repo = f"/repos/{d.OWNER}/{d.REPO}"

    def latency(self, seconds: float) -> None:
        if seconds:
            self.hub.api("POST", "/_hub/faults", self.admin, {"spec": f"latency={seconds}"})
        else:
            self.hub.api("DELETE", "/_hub/faults", self.admin)

    def writes(self) -> int:
        rows = self.hub.api("GET", "/_hub/requests", self.admin)["requests"]
        return sum(r["count"] for r in rows if r["method"] in WRITES and ".git/" not in r["path"])

    def open_jobs(self, total: int) -> None:
        """Open jobs until ``total`` are open: the first through `relay job open`, the
        others as copies of it made through the API (fast; the same body and labels)."""
        c = self.demo.controller
        if not self.demo.issue:
            self.demo.issue = d.open_job(c, title="bench job 1", objective="Stay idle.")
        first = self.hub.api("GET", f"{self.repo}/issues/{self.demo.issue}", c.token)
        labels = [label["name"] for label in first["labels"]]
        listed = self.hub.api("GET", f"{self.repo}/issues?state=open&per_page=100", c.token)
        for n in range(len(listed), total):
            body = {"title": f"bench job {n + 1}", "body": first["body"], "labels": labels}
            self.hub.api("POST", f"{self.repo}/issues", c.token, body)


def wall(argv: list[str], env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, json.loads(done.stdout)["data"]


def idle(node: d.Node) -> tuple[float, int]:
    """Median wall time of an idle `relay watch --once`, and the requests of the last one."""
    argv = [sys.executable, "-m", "relay.cli", "watch", "--once", "--json"]
    argv += ["--repo-dir", str(node.clone)]
    wall(argv, node.env())  # reads what changed since the last pass
    passes = [wall(argv, node.env()) for _ in range(IDLE_RUNS)]
    return statistics.median(p[0] for p in passes), int(passes[-1][1]["requests"])


def polling_trips(bench: Bench, issue: int) -> tuple[list[float], int]:
    """Round trips with both nodes watching every second; the writes of the last one."""
    demo = bench.demo
    c, w = demo.controller, demo.worker
    seconds, writes = [], 0
    with d.watching((c, w)):
        for _ in range(TRIPS):
            d.wait_for(demo.baton_home, timeout=60)
            time.sleep(1.2)  # let the controller's watcher take the last RESULT in
            before = bench.writes()
            started = time.perf_counter()
            c.relay("task", str(issue), "--step", "true")
            task = sum(1 for x in demo.comments() if x["body"].startswith("### TASK"))
            d.wait_for(partial(demo.has_result, task), timeout=60, poll=0.02)
            d.wait_for(demo.baton_home, timeout=60, poll=0.02)
            seconds.append(time.perf_counter() - started)
            # the controller's notification (body PATCH) lands after the baton: wait for
            # the count to settle (a watcher every second, each request slower at latency)
            writes, stable = bench.writes() - before, 0
            while stable < 3:
                time.sleep(0.5)
                now = bench.writes() - before
                stable = stable + 1 if now == writes else 0
                writes = now
    return seconds, writes


def measure(root: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {"idle": {}, "trips": {}, "writes": {}, "webhook": {}}
    with d.running_hub(root / "hub", "--content-limit", "0/0") as hub:
        demo = d.setup(root, hub, lambda _line: None)
        d.set_up_relay(demo)
        bench = Bench(hub, demo)
        for count in JOB_COUNTS:
            bench.open_jobs(count)
            for latency in (0.0, LATENCY):
                bench.latency(latency)
                figures["idle"][(count, latency)] = idle(demo.worker)
        bench.latency(0.0)
        trip_job = d.open_job(demo.controller, title="round trips", objective="Measure.")
        demo.issue = trip_job
        for latency in (0.0, LATENCY):
            bench.latency(latency)
            seconds, writes = polling_trips(bench, trip_job)
            figures["trips"][latency] = seconds
            figures["writes"][latency] = writes
    for latency in (0.0, LATENCY):
        where = root / f"webhook-{int(latency * 1000)}ms"
        where.mkdir()
        found = bench_events.measure(where, runs=WEBHOOK_RUNS, latency=latency, turn=False)
        figures["webhook"][latency] = found.seconds
    return figures


def label(latency: float) -> str:
    return f"{latency * 1000:.0f} ms" if latency else "loopback"


def report(figures: dict[str, Any]) -> list[str]:
    lines = []
    for (count, latency), (seconds, requests) in figures["idle"].items():
        line = (
            f"idle pass, {count:>3} open job(s), {label(latency):>8}:"
            f" {seconds:.3f} s, {requests} request(s)"
        )
        if count == 100 and latency:
            met = seconds <= 0.5 and requests == 1
            line += f"  [goal <= 0.5 s and 1 request: {verdict(met)}]"
        lines.append(line)
    for latency, seconds in figures["trips"].items():
        lines.append(
            f"polling round trip (task -> controller notified, watchers every 1 s),"
            f" {label(latency):>8}: median {statistics.median(seconds):.2f} s"
            f"  runs: {', '.join(f'{s:.2f}' for s in seconds)}"
        )
    for latency, writes in figures["writes"].items():
        lines.append(
            f"writes per round trip, {label(latency):>8}: {writes}"
            f"  [goal <= 6: {verdict(writes <= 6)}]"
        )
    for latency, seconds in figures["webhook"].items():
        median = statistics.median(seconds)
        line = (
            f"webhook round trip (TASK delivery -> RESULT delivery), {label(latency):>8}:"
            f" median {median:.3f} s  runs: {', '.join(f'{s:.3f}' for s in seconds)}"
        )
        if latency:
            line += f"  [goal <= 1.5 s: {verdict(median <= 1.5)}]"
        lines.append(line)
    return lines


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="relay-bench-latency-") as tmp:
        figures = measure(Path(tmp))
    print("\n".join(report(figures)), flush=True)


if __name__ == "__main__":
    main()
