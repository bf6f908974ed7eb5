"""What a webhook round trip costs on the wire: requests, and content-creating requests.

A real `relay hub` (its git the remote, two clones as in `relay demo`), both nodes running
`relay watch --webhook` as processes with an hour between reconciling passes, so only the
hub's deliveries wake them (bench_events' world). Each round trip is `relay task` posted by
the controller, taken, run (a no-op step) and answered by the worker, and taken in by the
controller; the hub counts every API request it answers (its ``/_hub/requests``), from the
moment the previous round trip settled to the moment this one has (no request for a while).

Counted per round trip: every API request (git's smart HTTP apart), the content-creating
ones (POST, PATCH, PUT, DELETE: what the hub charges to GitHub's secondary limit of 80 a
minute and 500 an hour per account), and the passes each node's watcher ran. Then the
same with a third node that no job binds (a stranger's deliveries): what the round trips
cost it, which should be nothing.

Paired: the same round trips with relay as it was before the webhook filter and the
merged writes (``BEFORE``, a commit of this repository; set RELAY_BENCH_BEFORE to
another, or to an empty string to skip it) and as it is, one after the other in one run;
medians. Goals (issue 29): <= 20 requests and <= 6 content-creating requests per round
trip; 0 requests for the node no job binds. From the content-creating figure: how many
round trips an hour one account sustains under GitHub's 500 an hour, and one account per
node (or a GitHub App per node, whose installation has a limit of its own).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.bench_events import SECRET, Deliveries, free_port, start_watcher
from relay.commands import demo as d

RUNS = 5
BEFORE = "aecbba1"  # main before the webhook filter and the merged writes
CONTENT_PER_HOUR = 500  # GitHub's secondary limit per account (GITHUB-FACTS A1.5)
WRITES = ("POST", "PATCH", "PUT", "DELETE")
THIRD = "third-node"  # a node of the repository that no job binds


@dataclass
class Trip:
    """One round trip's cost."""

    requests: int
    writes: int
    passes: dict[str, int]
    third: int = 0  # requests the node no job binds made
    node_writes: dict[str, int] = field(default_factory=dict)  # content-creating, by node
    rows: list[tuple[str, str, int, int]] = field(default_factory=list)


class Counter:
    """The hub's request counters, read and reset through its admin endpoints."""

    def __init__(self, hub: d.Hub) -> None:
        argv = ["hub", "token", "bench-admin", "--admin", "--data", str(hub.data)]
        self.hub, self.admin = hub, d.relay_cmd(argv, env=os.environ).strip()

    def rows(self) -> list[tuple[str, str, int, int]]:
        found = self.hub.api("GET", "/_hub/requests", self.admin)["requests"]
        return [
            (r["method"], r["path"], r["status"], r["count"])
            for r in found
            if ".git/" not in r["path"]
        ]

    def reset(self) -> None:
        self.hub.api("DELETE", "/_hub/requests", self.admin)

    def settled(self, quiet: float = 1.5) -> list[tuple[str, str, int, int]]:
        """The counters once no request came for ``quiet`` seconds."""
        last, since = self.rows(), time.monotonic()
        while time.monotonic() - since < quiet:
            time.sleep(0.1)
            now = self.rows()
            if now != last:
                last, since = now, time.monotonic()
        return last


def passes_since(node: d.Node, since: datetime) -> list[dict[str, Any]]:
    """The node's passes logged since ``since``."""
    log = node.clone / ".git" / "relay" / "passes.jsonl"
    if not log.exists():
        return []
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [p for p in lines if datetime.fromisoformat(p["at"]) >= since]


@contextmanager
def code_at(rev: str | None) -> Iterator[str | None]:
    """Every relay process started inside runs relay's code as of commit ``rev`` (None:
    as it is); yields the commit used, or None when it cannot be had here."""
    if rev is None:
        yield None
        return
    repo = Path(__file__).resolve().parent.parent
    found = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=repo,
                           capture_output=True, text=True, check=False)  # fmt: skip
    if found.returncode != 0:
        yield None
        return
    saved, here = os.environ.get("PYTHONPATH"), os.getcwd()
    with tempfile.TemporaryDirectory(prefix="relay-bench-before-") as tmp:
        archive = subprocess.run(["git", "archive", rev, "relay", "watchers", "schedulers"],
                                 cwd=repo, capture_output=True, check=True)  # fmt: skip
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        os.environ["PYTHONPATH"] = tmp
        os.chdir(tmp)  # `python -m` puts the working directory first on the path
        try:
            yield found.stdout.strip()
        finally:
            os.chdir(here)
            if saved is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = saved


def third_node(root: Path, hub: d.Hub) -> d.Node:
    """A third clone, joined as a node no job binds (admitted by the controller)."""
    url = d.git_url(hub.url, f"{d.OWNER}/{d.REPO}")
    token = hub.token(d.OWNER)
    node = d.Node(THIRD, d.clone_as(url, root, THIRD, token), token)
    return node


def measure(root: Path, *, runs: int = RUNS) -> list[Trip]:
    """``runs`` webhook round trips, each one's cost once the wire settled."""
    with d.running_hub(root / "hub", *d.NO_CONTENT_LIMIT) as hub, ExitStack() as stack:
        demo = d.setup(root, hub, lambda _line: None)
        c, w = demo.controller, demo.worker
        d.init_relay(demo)
        os.environ["RELAY_WEBHOOK_SECRET"] = SECRET  # inherited by join
        third = third_node(root, hub)
        nodes = (c, w, third)
        ports = {n.name: free_port() for n in nodes}
        for n in (w, third, c):
            n.relay("join", "--node", n.name, "--scheduler", "none",
                    "--webhook", f"http://127.0.0.1:{ports[n.name]}/")  # fmt: skip
        for n in (w, third):
            key = n.relay("nodes", "key", "--node", n.name).strip()
            c.relay("nodes", "approve", n.name, "--node", c.name, "--fingerprint", key)
        for n in (w, third):
            n.relay("watch", "--once")  # each takes the roster in before the clock runs
        server = Deliveries()
        import threading

        threading.Thread(target=server.serve_forever, daemon=True).start()
        stack.callback(server.shutdown)
        hub.api("POST", f"/repos/{d.OWNER}/{d.REPO}/hooks", c.token,
                {"config": {"url": server.url, "content_type": "json"},
                 "events": ["issue_comment"]})  # fmt: skip
        for n in nodes:
            proc = start_watcher(n, ports[n.name])
            stack.callback(d.end_process, proc)
        issue = demo.issue = d.open_job(c, title="bench", objective="round trips")
        counter = Counter(hub)
        counter.settled()
        trips = []
        for task in range(1, runs + 1):
            counter.reset()
            since = datetime.now(UTC)
            c.relay("task", str(issue), "--step", "true")
            server.round_trip(task)
            rows = counter.settled()  # read through the admin endpoint: not counted
            if not demo.baton_home():
                raise RuntimeError(f"TASK {task}: the wire settled with the baton away")
            passes = {n.name: len(passes_since(n, since)) for n in nodes}
            third_cost = sum(p["requests"] for p in passes_since(third, since))
            writes = sum(r[3] for r in rows if r[0] in WRITES)
            # each pass logs its own writes; the rest are `relay task`'s, the controller's
            by_node = {n.name: sum(p.get("writes", 0) for p in passes_since(n, since))
                       for n in (c, w)}  # fmt: skip
            by_node[c.name] += writes - sum(by_node.values())
            trips.append(
                Trip(
                    requests=sum(r[3] for r in rows),
                    writes=writes,
                    passes=passes,
                    third=third_cost,
                    node_writes=by_node,
                    rows=rows,
                )
            )
        return trips


def sustained_lines(trips: list[Trip]) -> list[str]:
    """Round trips an hour each way of running the nodes sustains under GitHub's
    content-creating limit (500 an hour, per account or per App installation)."""
    writes = median([t.writes for t in trips])
    split = {n: median([t.node_writes[n] for t in trips]) for n in trips[0].node_writes}
    busiest = max(split.values())
    shown = ", ".join(f"{n} {v:.0f}" for n, v in split.items())
    return [
        f"content-creating requests per round trip by node: {shown}",
        f"round trips an hour under GitHub's {CONTENT_PER_HOUR} content-creating requests an"
        f" hour: one account for every node {sustained(writes, 1)} (all jobs together);"
        f" an account or a GitHub App per node {int(CONTENT_PER_HOUR / busiest)} per"
        " controller-worker pair (its busiest node's share), and as many more as pairs",
    ]


def median(values: list[int]) -> float:
    return float(statistics.median(values))


def sustained(writes: float, accounts: int) -> int:
    """Round trips an hour under GitHub's content limit, writes spread over ``accounts``."""
    return int(CONTENT_PER_HOUR * accounts / writes) if writes else 0


def report(label: str, trips: list[Trip]) -> list[str]:
    requests = median([t.requests for t in trips])
    writes = median([t.writes for t in trips])
    passes = {n: median([t.passes[n] for t in trips]) for n in trips[0].passes}
    third = median([t.third for t in trips])
    return [
        f"{label}: requests per webhook round trip (median of {len(trips)}): {requests:.0f}"
        f"  runs: {', '.join(str(t.requests) for t in trips)}",
        f"{label}: content-creating requests per round trip: {writes:.0f}"
        f"  runs: {', '.join(str(t.writes) for t in trips)}",
        f"{label}: passes per round trip: " + ", ".join(f"{n} {v:.0f}" for n, v in passes.items()),
        f"{label}: requests by the node no job binds: {third:.0f}",
    ]


def requests_of(trip: Trip) -> list[str]:
    """The requests of one round trip, for people; content-creating ones marked."""
    return [
        f"    {m} {p} {status} x{n}{'  (content)' if m in WRITES else ''}"
        for m, p, status, n in trip.rows
    ]


def main() -> None:
    """Measure before and after in temporary directories and print the figures."""
    before = os.environ.get("RELAY_BENCH_BEFORE", BEFORE) or None
    saved = os.environ.get("RELAY_WEBHOOK_SECRET")
    results: dict[str, list[Trip]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="relay-bench-webhook-") as tmp:
            for label, rev in (("before", before), ("after", None)):
                if label == "before" and rev is None:
                    continue
                with code_at(rev) as used:
                    if rev is not None and used is None:
                        print(f"before: commit {rev} is not in this repository; skipped")
                        continue
                    where = Path(tmp) / label
                    where.mkdir()
                    results[label] = measure(where)
                    shutil.rmtree(where, ignore_errors=True)
    finally:
        if saved is None:
            os.environ.pop("RELAY_WEBHOOK_SECRET", None)
        else:
            os.environ["RELAY_WEBHOOK_SECRET"] = saved
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [f"load average (1, 5, 15 min) at the end: {load}"]
    for label, trips in results.items():
        lines += report(label, trips)
        lines.append(f"{label}: the requests of the last round trip:")
        lines += requests_of(trips[-1])
    after = results["after"]
    requests = median([t.requests for t in after])
    writes = median([t.writes for t in after])
    third = median([t.third for t in after])
    lines.append(
        f"goals: <= 20 requests per round trip: {'met' if requests <= 20 else 'NOT met'};"
        f" <= 6 content-creating: {'met' if writes <= 6 else 'NOT met'};"
        f" 0 requests for a node no job binds: {'met' if third == 0 else 'NOT met'}"
    )
    if "before" in results:
        old = median([t.requests for t in results["before"]])
        old_writes = median([t.writes for t in results["before"]])
        lines.append(
            f"after/before: requests {requests / old:.2f}, content-creating"
            f" {writes / old_writes:.2f}"
        )
    lines += sustained_lines(after)
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
