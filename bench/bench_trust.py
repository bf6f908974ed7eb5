"""What trust rooted in the nodes costs an idle pass: reading and checking the roster.

A real `relay hub`, its git as the remote and two clones as in `relay demo` (init, join,
the worker admitted, one open job). An idle `relay watch --once` of the worker, as a
process, is timed (wall and CPU, the median of RUNS); beside it, in the same run and
interleaved with it, the work the roster adds to every pass: `relay.node.trust.establish`
(read the roster where the spine lives, check it against the accepted revision, lay it
over the master section) and the digests a pass computes for the TASKs and claims of a
bound job. The ratio of the two medians is the figure; the goal is at most 5% of an idle
pass.

    python -m bench.bench_trust
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from relay.commands import demo as d

RUNS = 15
GOAL = 0.05


def idle_pass(node: d.Node) -> tuple[float, float]:
    """One idle pass of ``node`` as a process: (wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    argv = [sys.executable, "-m", "relay.cli", "watch", "--once", "--repo-dir", str(node.clone)]
    subprocess.run(argv, env=node.env(), capture_output=True, check=True, timeout=120)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def roster_work(clone: Path, node: str) -> tuple[float, float]:
    """The roster's part of a pass, in-process: (wall seconds, CPU seconds)."""
    from relay.edges.local import NodeState
    from relay.node.spine import read_master
    from relay.node.trust import effective, establish
    from relay.protocol import TaskMsg
    from relay.protocol.messages import task_digest

    state = NodeState.for_clone(clone)
    config = state.load_config()
    task = TaskMsg(issue=1, node="c", task=1, objective="o", steps=("true",))
    cpu, wall = time.process_time(), time.perf_counter()
    file_master = read_master(clone)  # the pass reads it anyway; counted here all the same
    trust = establish(clone, state, config, file_master, node=node)
    assert trust.revision is not None
    effective(file_master, trust, repository=file_master.repository, api_url="x", config=None)
    for _ in range(3):  # a bound job: its TASK, its claim and its RESULT name the digest
        task_digest(task)
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="relay-bench-trust-") as tmp:
        root = Path(tmp)
        with d.running_hub(root / "hub") as hub:
            demo = d.setup(root, hub, lambda _line: None)
            c, w = demo.controller, demo.worker
            d.init_relay(demo)
            w.relay("join", "--node", d.WORKER, "--scheduler", "none")
            c.relay("join", "--node", d.CONTROLLER, "--scheduler", "none")
            key = w.relay("nodes", "key", "--node", d.WORKER).strip()
            c.relay("nodes", "approve", d.WORKER, "--node", d.CONTROLLER, "--fingerprint", key)
            c.relay("job", "open", "--worker", d.WORKER, "--title", "T", "--objective", "O")
            idle_pass(w)  # the first pass reads the thread; later ones are idle
            os.environ["RELAY_TOKEN"] = w.token
            passes, added = [], []
            for _ in range(RUNS):  # interleaved: A, B, A, B ...
                passes.append(idle_pass(w))
                added.append(roster_work(w.clone, d.WORKER))
    load = os.getloadavg()[0]
    for what, index in (("wall", 0), ("CPU", 1)):
        whole = statistics.median(p[index] for p in passes)
        part = statistics.median(a[index] for a in added)
        ratio = part / whole
        met = "met" if ratio <= GOAL else "NOT met"
        spread = max(a[index] for a in added) - min(a[index] for a in added)
        print(
            f"roster and digests per pass ({what}): {part * 1000:.1f} ms (spread"
            f" {spread * 1000:.1f} ms) of an idle pass's {whole * 1000:.0f} ms ="
            f" {ratio:.1%}  [goal <= {GOAL:.0%}: {met}]"
        )
    print(f"median of {RUNS} interleaved runs; load average {load:.2f}")


if __name__ == "__main__":
    main()
