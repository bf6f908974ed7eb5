"""A kept loop iteration against the gates run by hand, paired (issue 29's goal: one kept
iteration costs at most 1.5x the gates by hand plus the maker's own time).

A small real project (the calc project of ``bench_loop``: pytest and ruff as its gates) in
a temporary git repository. Each pair runs, back to back and in alternating order:

- the gates by hand: the same commands, one after the other, in the project's clone;
- one ``relay loop run --max-iterations 1`` as a process, on a goal of its own, worked by a
  trivial maker (it adds one function to ``src/calc.py`` and writes its account) that
  records its own wall time, subtracted from the iteration's.

The ratio of each pair is (iteration - maker) / by hand; printed are both arms' medians,
the ratios' median and spread, the machine's load before and after, and, from one more
iteration run apart (not timed), how many git processes an iteration starts and how many
times it ran the gate set.

    python -m bench loop_ratio
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_loop import GATES, PY, project, relay

RUNS = 5
GOAL = 1.5  # issue 29: a kept iteration <= 1.5x the gates by hand plus the maker's time


def maker(where: Path, times: Path) -> str:
    """A maker that adds the function its goal names (f<n>) and says why, appending its
    own wall time (seconds, from its first line to its last) to ``times``."""
    script = where / "maker.py"
    script.write_text(
        "import time\n"
        "started = time.time()\n"
        "import os, pathlib, re, sys\n"
        "brief = pathlib.Path(sys.argv[-1]).read_text()\n"
        "n = re.search(r'Add f(\\d+)', brief).group(1)\n"
        "src = pathlib.Path('src/calc.py')\n"
        "src.write_text(src.read_text() + f'\\n\\ndef f{n}(x):\\n    return x + {n}\\n')\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text(f'added f{n}\\n')\n"
        f"with open({str(times)!r}, 'a') as out:\n"
        "    out.write(f'{time.time() - started}\\n')\n"
    )
    return f"{PY} {script}"


def by_hand(root: Path) -> float:
    """Seconds to run the gate set by hand once (each must pass: the project is green)."""
    started = time.perf_counter()
    for gate in GATES:
        done = subprocess.run(gate, shell=True, cwd=root, capture_output=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"bench: the gate {gate!r} fails by hand: {done.stdout[-400:]!r}")
    return time.perf_counter() - started


def add_goal(root: Path, n: int) -> None:
    accept = (
        f"{PY} -c \"import sys; sys.path.insert(0, 'src'); import calc;"
        f" sys.exit(not hasattr(calc, 'f{n}'))\""
    )
    added = relay("loop", "goal", "add", f"Add f{n}", "--accept", accept, cwd=root)
    if added.returncode != 0:
        raise SystemExit(f"bench: relay loop goal add failed: {added.stderr}")


def iteration(root: Path, command: str, env: dict[str, str] | None = None) -> float:
    """Seconds for one `relay loop run --max-iterations 1` that keeps its goal."""
    argv = [PY, "-m", "relay.cli", "loop", "run", "--maker", command]
    argv += ["--max-iterations", "1", "--json", "--repo-dir", str(root)]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - started
    kept = json.loads(done.stdout)["data"].get("kept") if done.stdout else None
    if not kept:
        raise SystemExit(f"bench: the iteration kept nothing: {done.stdout[-600:]}{done.stderr}")
    return wall


def gate_logs(root: Path) -> set[Path]:
    logs = root / "docs/loop/state/gates"
    return set(logs.rglob("*.log")) if logs.exists() else set()


def anatomy(root: Path, command: str, n: int, trace: Path) -> tuple[int, float, int]:
    """One more iteration, run apart with git's trace on: the git processes it started,
    the gate sets it ran (its gate logs, the goal's acceptance command aside) and its
    acceptance runs."""
    add_goal(root, n)
    before = gate_logs(root)
    iteration(root, command, env={**os.environ, "GIT_TRACE2_EVENT": str(trace)})
    new = gate_logs(root) - before
    gates = [p for p in new if "accept" not in p.name]
    starts = sum(1 for line in trace.read_text().splitlines() if '"event":"start"' in line)
    return starts, len(gates) / len(GATES), len(new) - len(gates)


def main() -> None:
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bench-loop-ratio-") as tmp:
        root = Path(tmp) / "calc"
        root.mkdir()
        project(root)
        times = Path(tmp) / "maker-times"
        command = maker(Path(tmp), times)
        hand, loop, makers, ratios = [], [], [], []
        for i in range(RUNS):
            n = i + 1
            add_goal(root, n)
            if i % 2 == 0:
                h = by_hand(root)
                w = iteration(root, command)
            else:
                w = iteration(root, command)
                h = by_hand(root)
            m = float(times.read_text().split()[-1])
            hand.append(h)
            loop.append(w)
            makers.append(m)
            ratios.append((w - m) / h)
            print(f"pair {n}: by hand {h:.2f} s, iteration {w:.2f} s (maker {m:.2f} s):"
                  f" {(w - m) / h:.2f}x", flush=True)  # fmt: skip
        starts, sets, accepts = anatomy(root, command, RUNS + 1, Path(tmp) / "trace.json")
        loads.append(os.getloadavg()[0])
    ratios.sort()
    print(f"machine: {os.cpu_count()} cores, load average {loads[0]:.2f} before,"
          f" {loads[1]:.2f} after; {RUNS} pairs, order alternating")  # fmt: skip
    print(f"gates by hand ({len(GATES)} gates): median {statistics.median(hand):.2f} s;"
          f" kept iteration: median {statistics.median(loop):.2f} s, of which the maker"
          f" {statistics.median(makers):.2f} s")  # fmt: skip
    ratio = statistics.median(ratios)
    print(f"kept iteration less the maker, over the gates by hand: median {ratio:.2f}x"
          f" (spread {ratios[0]:.2f}-{ratios[-1]:.2f})")  # fmt: skip
    own = statistics.median(w - m - h for w, m, h in zip(loop, makers, hand, strict=True))
    print(f"the loop's own time beside one run of the gates and the maker: median {own:.2f} s")
    print(f"one iteration's anatomy: {starts} git processes, the gate set run {sets:g}"
          f" time(s), the acceptance command {accepts} time(s)")  # fmt: skip
    verdict = "met" if ratio <= GOAL else "NOT met"
    print(f"goal: a kept iteration <= {GOAL}x the gates by hand plus the maker: {verdict}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
