"""Relay's own speed: an idle `relay watch --once` as a whole process, and the round trip.

Both run the real CLI as separate processes against a real `relay hub` with real clones,
set up exactly as `relay demo` sets them up. Figures are medians of several runs; the
idle pass is put beside `python -c pass` measured in the same run, and its requests are
counted by the pass itself (the heartbeat) to show that a repeated idle pass is answered
by 304s only.

Goals (issue 3): idle pass <= 0.35 s wall with every request a 304; round trip <= 2 s.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from relay.commands import demo as d

IDLE_RUNS = 15
ROUND_TRIPS = 5


def wall(argv: Sequence[str], env: dict[str, str]) -> tuple[float, str]:
    """Seconds one process takes from start to exit, and what it printed."""
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout


def idle(node: d.Node) -> dict[str, float]:
    """Median wall time of an idle pass, python -c pass, and the requests of the last pass."""
    env = node.env()
    argv = [sys.executable, "-m", "relay.cli", "watch", "--once", "--json"]
    argv += ["--repo-dir", str(node.clone)]
    wall(argv, env)  # first pass fills the ETag cache
    passes = [wall(argv, env) for _ in range(IDLE_RUNS)]
    bare = [wall([sys.executable, "-c", "pass"], env)[0] for _ in range(IDLE_RUNS)]
    last = json.loads(passes[-1][1])["data"]
    return {
        "idle_pass_s": statistics.median(p[0] for p in passes),
        "python_pass_s": statistics.median(bare),
        "requests": last["requests"],
        "not_modified": last["not_modified"],
    }


def round_trips(demo: d.Demo) -> list[float]:
    """TASK posted -> RESULT posted with both watchers passing every second."""
    c, w = demo.controller, demo.worker
    demo.issue = d.open_job(c, title="bench", objective="round trips")
    seconds = []
    with d.watching((c, w)):
        for task in range(1, ROUND_TRIPS + 1):
            d.wait_for(demo.baton_home, timeout=60)
            c.relay("task", str(demo.issue), "--step", "true")
            seconds.append(d.wait_for(partial(demo.has_result, task), timeout=60, poll=0.02))
    return seconds


def verdict(met: bool) -> str:
    """Say plainly whether a goal was reached in this run."""
    return "met" if met else "NOT met"


def main() -> None:
    """Set up a hub and two nodes, then measure."""
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        root = Path(tmp)
        with d.running_hub(root / "hub", *d.NO_CONTENT_LIMIT) as hub:
            demo = d.setup(root, hub, lambda _line: None)
            d.set_up_relay(demo)
            trips = round_trips(demo)
            figures = idle(demo.worker)
    ratio = figures["idle_pass_s"] / figures["python_pass_s"]
    print(
        f"idle `relay watch --once` (median of {IDLE_RUNS}): {figures['idle_pass_s']:.3f} s"
        f"  [goal <= 0.35 s: {verdict(figures['idle_pass_s'] <= 0.35)}]"
    )
    print(
        f"`python -c pass` (median of {IDLE_RUNS}):         {figures['python_pass_s']:.3f} s"
        f"  (idle pass = {ratio:.1f}x)"
    )
    print(
        f"requests in a repeated idle pass: {figures['requests']:.0f},"
        f" answered 304: {figures['not_modified']:.0f}"
        f"  [goal: all 304: {verdict(figures['requests'] == figures['not_modified'])}]"
    )
    print(
        f"round trip TASK -> RESULT, no-op step, watchers every 1 s"
        f" (median of {len(trips)}): {statistics.median(trips):.2f} s"
        f"  [goal <= 2 s: {verdict(statistics.median(trips) <= 2.0)}]"
        f"  runs: {', '.join(f'{t:.2f}' for t in trips)}"
    )


if __name__ == "__main__":
    main()
