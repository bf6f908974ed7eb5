"""Start-up: what a command costs before it does anything, beside `python -c pass`.

Goals (issue 29), as whole processes on this interpreter with the package's bytecode
written first (as an installed relay has it):

- an idle `relay watch --once` (the lock, one conditional GET answered 304) <= 10x the CPU
  of `python -c pass`;
- `relay --version` and `relay --help` <= 3x;
- every other verb <= 0.15 s from its start to its first request (an API connection, or a
  git command that talks to the remote).

CPU is the child's user + system time (``resource.getrusage(RUSAGE_CHILDREN)``). Each
figure is paired A/B: the command and `python -c pass` run back to back, in alternating
order, and each pair gives a ratio; the report gives both medians, the median ratio and
its spread (the pairs' 10th-90th percentile), and the machine's load before and after, so
a figure taken on a busy machine says so. The verbs' start-up is wall time from the spawn
to the first request, recorded in the process by an audit hook (``socket.connect``,
``subprocess.Popen`` of a git that fetches, pulls or pushes). All against a real
`relay hub` with two clones set up as `relay demo` sets them up.

Run: ``python -m bench.bench_startup`` (or ``python -m bench`` for every benchmark).
"""

from __future__ import annotations

import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import relay
from relay.commands import demo as d

PAIRS = 15  # A/B pairs per CPU figure
VERB_RUNS = 5  # runs per verb's start-up
PASS = (sys.executable, "-c", "pass")

# The verbs' probe: an audit hook notes the wall-clock time of the first request (a socket
# connect, or a git that talks to the remote) and writes it when the process ends.
FIRST_REQUEST = """
import atexit, os, sys, time
first = []
NETWORK_GIT = {"fetch", "pull", "push", "ls-remote", "clone"}
def hook(event, args):
    if first:
        return
    if event == "socket.connect" or (
        event == "subprocess.Popen" and NETWORK_GIT & set(map(str, args[1] or ()))
    ):
        spent = os.times()  # this process's CPU, and that of the git commands it waited for
        cpu = spent.user + spent.system + spent.children_user + spent.children_system
        first.append(f"{time.time()!r} {cpu!r}")
sys.addaudithook(hook)
def report():
    with open(os.environ["STARTUP_FIRST_REQUEST"], "w") as out:
        out.write(first[0] if first else "")
atexit.register(report)
from relay.cli import main
sys.exit(main(sys.argv[1:]))
"""


def relay_argv() -> list[str]:
    """The `relay` script beside this interpreter (as installed), else `python -m relay.cli`."""
    script = Path(sys.executable).with_name("relay")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "relay.cli"]


def cpu(argv: Sequence[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) one process takes; it must succeed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(list(argv), env=env, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))]


def paired(argv: Sequence[str], env: dict[str, str], pairs: int = PAIRS) -> dict[str, float]:
    """``argv`` against `python -c pass`, ``pairs`` times in alternating order."""
    a_runs, b_runs, ratios = [], [], []
    for n in range(pairs):
        if n % 2:
            b = cpu(argv, env)
            a = cpu(PASS, env)
        else:
            a = cpu(PASS, env)
            b = cpu(argv, env)
        a_runs.append(a)
        b_runs.append(b)
        ratios.append(b / a if a > 0 else float("inf"))
    return {
        "pass_s": statistics.median(a_runs),
        "cmd_s": statistics.median(b_runs),
        "ratio": statistics.median(ratios),
        "low": percentile(ratios, 0.1),
        "high": percentile(ratios, 0.9),
    }


def first_request(
    argv: Sequence[str], env: dict[str, str], scratch: Path
) -> tuple[float, float] | None:
    """Seconds from the spawn of ``relay ARGV`` to its first request, and the CPU seconds
    it (and the git commands it ran) spent by then; None: it made none."""
    out = scratch / "first-request"
    out.unlink(missing_ok=True)
    started = time.time()
    subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST, *argv],
        env={**env, "STARTUP_FIRST_REQUEST": str(out)},
        capture_output=True,
        check=False,
        timeout=300,
    )
    text = out.read_text() if out.is_file() else ""
    if not text:
        return None
    at, spent = map(float, text.split())
    return at - started, spent


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes) and its cores."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def verdict(met: bool) -> str:
    return "met" if met else "NOT met"


def say_ratio(name: str, figures: dict[str, float], goal: float) -> None:
    print(
        f"{name:<26} {figures['cmd_s'] * 1000:7.1f} ms CPU vs python -c pass"
        f" {figures['pass_s'] * 1000:5.1f} ms: {figures['ratio']:5.1f}x"
        f" (pairs {figures['low']:.1f}-{figures['high']:.1f})"
        f"  [goal <= {goal:g}x: {verdict(figures['ratio'] <= goal)}]",
        flush=True,
    )


def verbs(demo: d.Demo, issue: int) -> list[tuple[str, d.Node, list[str], Callable[[], None]]]:
    """Each verb measured, the node that runs it, its words, and what puts things back
    between runs (nothing, for those that only read)."""
    c, w = demo.controller, demo.worker

    def nothing() -> None:
        return None

    def baton_home() -> None:  # the worker answers, so the controller may post again
        w.relay("watch", "--once")
        c.relay("watch", "--once")

    n = str(issue)
    return [
        ("status", c, ["status"], nothing),
        ("result", c, ["result", n], nothing),
        ("nodes", c, ["nodes"], nothing),
        ("doctor", w, ["doctor"], nothing),
        ("hypothesis", c, ["hypothesis", n, "the cache is stale"], nothing),
        ("strike", c, ["strike", n], nothing),
        ("task", c, ["task", n, "--step", "true"], baton_home),
        ("watch --once (full)", w, ["watch", "--once", "--verbose"], nothing),
        ("job open", c, ["job", "open", "--worker", d.WORKER, "--title", "b", "--objective", "b"],
         nothing),
        ("resolve", c, ["resolve", n, "--summary", "done"], nothing),
    ]  # fmt: skip


def main() -> None:
    """Set up a hub and two nodes, then measure."""
    compileall.compile_dir(Path(relay.__file__).parent, quiet=1)  # as an installed relay
    print(load(), "(before)", flush=True)
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as tmp:
        root = Path(tmp)
        with d.running_hub(root / "hub", *d.NO_CONTENT_LIMIT) as hub:
            demo = d.setup(root, hub, lambda _line: None)
            d.set_up_relay(demo)
            issue = d.open_job(demo.controller, title="bench", objective="start-up")
            w = demo.worker
            idle = [*relay_argv(), "watch", "--once", "--repo-dir", str(w.clone)]
            for _ in range(3):  # an idle pass after an idle one is the one measured
                subprocess.run(idle, env=w.env(), capture_output=True, check=True)
            say_ratio("idle `relay watch --once`", paired(idle, w.env()), 10)
            record = json.loads((w.clone / ".git/relay/passes.jsonl").read_text().splitlines()[-1])
            print(
                f"{'':<26} its pass: {record['requests']} request,"
                f" {record['not_modified']} answered 304",
                flush=True,
            )
            for flag in ("--version", "--help"):
                say_ratio(f"`relay {flag}`", paired([*relay_argv(), flag], w.env()), 3)
            print(
                f"start-up to the first request, wall (CPU) seconds, median of {VERB_RUNS}"
                " (goal <= 0.15 s):"
            )
            for name, node, words, reset in verbs(demo, issue):
                walls, cpus = [], []
                for _ in range(VERB_RUNS):
                    found = first_request([*words, "--repo-dir", str(node.clone)], node.env(), root)
                    if found is not None:
                        walls.append(found[0])
                        cpus.append(found[1])
                    reset()
                if not walls:
                    print(f"  {name:<24} made no request", flush=True)
                    continue
                median = statistics.median(walls)
                print(
                    f"  {name:<24} {median:.3f} s ({statistics.median(cpus):.3f} s CPU)"
                    f"  runs {min(walls):.3f}-{max(walls):.3f}  [{verdict(median <= 0.15)}]",
                    flush=True,
                )
    print(load(), "(after)", flush=True)


if __name__ == "__main__":
    main()
