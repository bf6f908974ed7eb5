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

from relay import demo as d

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
    last = json.loads(passes[-1][1])
    return {
        "idle_pass_s": statistics.median(p[0] for p in passes),
        "python_pass_s": statistics.median(bare),
        "requests": last["requests"],
        "not_modified": last["not_modified"],
    }


def round_trips(demo: d.Demo) -> list[float]:
    """TASK posted -> RESULT posted with both watchers passing every second."""
    c, w = demo.controller, demo.worker
    opened = json.loads(
        c.relay(
            "job",
            "open",
            "--worker",
            d.WORKER,
            "--json",
            "--title",
            "bench",
            "--objective",
            "round trips",
        )
    )
    demo.issue = int(opened["issue"])
    loops = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "relay.cli",
                "watch",
                "--interval",
                "1",
                "--repo-dir",
                str(n.clone),
            ],
            env=n.env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for n in (c, w)
    ]
    seconds = []
    try:
        for task in range(1, ROUND_TRIPS + 1):
            d.wait_for(partial(baton_home, demo), timeout=60)
            c.relay("task", str(demo.issue), "--step", "true")
            seconds.append(d.wait_for(partial(demo.has_result, task), timeout=60, poll=0.02))
    finally:
        for proc in loops:
            proc.terminate()
            proc.wait(timeout=10)
    return seconds


def baton_home(demo: d.Demo) -> bool:
    """Whether the baton is back at the controller (the last result was taken in)."""
    issue = demo.hub.api(
        "GET", f"/repos/{d.OWNER}/{d.REPO}/issues/{demo.issue}", demo.controller.token
    )
    return any(label["name"] == "awaiting:controller" for label in issue["labels"])


def main() -> None:
    """Set up a hub and two nodes, then measure."""
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        root = Path(tmp)
        with d.running_hub(root / "hub") as hub:
            demo = d.setup(root, hub, lambda _line: None)
            c, w = demo.controller, demo.worker
            c.relay(
                "init",
                "--yes",
                "--node",
                d.CONTROLLER,
                "--repo",
                f"{d.OWNER}/{d.REPO}",
                "--api",
                hub.url,
            )
            w.relay("join", "--node", d.WORKER, "--scheduler", "none")
            c.relay("join", "--node", d.CONTROLLER, "--scheduler", "none")
            trips = round_trips(demo)
            figures = idle(w)
    ratio = figures["idle_pass_s"] / figures["python_pass_s"]
    print(
        f"idle `relay watch --once` (median of {IDLE_RUNS}): {figures['idle_pass_s']:.3f} s"
        f"  [goal <= 0.35 s]"
    )
    print(
        f"`python -c pass` (median of {IDLE_RUNS}):         {figures['python_pass_s']:.3f} s"
        f"  (idle pass = {ratio:.1f}x)"
    )
    print(
        f"requests in a repeated idle pass: {figures['requests']:.0f},"
        f" answered 304: {figures['not_modified']:.0f}"
    )
    print(
        f"round trip TASK -> RESULT, no-op step, watchers every 1 s"
        f" (median of {len(trips)}): {statistics.median(trips):.2f} s  [goal <= 2 s]"
        f"  runs: {', '.join(f'{t:.2f}' for t in trips)}"
    )


if __name__ == "__main__":
    main()
