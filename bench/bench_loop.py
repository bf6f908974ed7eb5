"""What `relay loop` costs beside the gates, and how much the interleaved metric resists a
loaded machine.

1. Overhead per iteration. A small real project (pytest and ruff as its gates) in a
   temporary git repository; each goal adds a function and its test. The gates run by hand
   are timed (the median of RUNS); then `relay loop run --max-iterations 1` works one goal
   at a time, as a process. The gate logs the run keeps say how often it ran the gate set
   (baseline, candidate, the fresh re-run); the loop's own overhead is the iteration's wall
   time less those gate runs at the hand-run median (and less the maker, which is a
   one-line script). Medians over GOALS iterations.
2. The interleaved metric on a loaded machine. The metric is a CPU-bound program's own
   time. Two busy processes switch on and off (the load drifts while it is measured). A
   candidate that changes nothing and one that is really ~15% slower are each measured
   twice: baseline first then candidate (the old way) and interleaved A/B/A/B
   (`relay.loop.metric.compare_runs`, what relay keeps by). Printed: each verdict, its
   noise and what a sequential measurement would have claimed.

    python -m bench.bench_loop
"""

from __future__ import annotations

import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from relay.loop.metric import compare_runs

RUNS = 7
GOALS = 5
METRIC_RUNS = 7
PY = sys.executable
GATES = (f"{PY} -m pytest -q -p no:cacheprovider", f"{PY} -m ruff check --no-cache --isolated .")


def sh(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)


def project(root: Path) -> None:
    """The calc project, committed, with the loop set up on its two gates."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src/calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "tests/test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    (root / ".gitignore").write_text("__pycache__/\n")
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.name", "Bench"),
        ("config", "user.email", "bench@example.invalid"),
        ("add", "-A"),
        ("commit", "-qm", "calc"),
    ):
        sh("git", *args, cwd=root)
    init = ["loop", "init", "--yes", *(w for g in GATES for w in ("--gate", g))]
    done = relay(*init, cwd=root)
    assert done.returncode == 0, done.stderr


def relay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return sh(PY, "-m", "relay.cli", *args, "--repo-dir", str(cwd), cwd=cwd)


def maker(where: Path) -> str:
    """A maker that adds the function its goal names (f<n>) with a test, and says why."""
    script = where / "maker.py"
    script.write_text(
        "import os, pathlib, re, sys\n"
        "brief = pathlib.Path(sys.argv[-1]).read_text()\n"
        "n = re.search(r'Add f(\\d+)', brief).group(1)\n"
        "src = pathlib.Path('src/calc.py')\n"
        "src.write_text(src.read_text() + f'\\n\\ndef f{n}(x):\\n    return x + {n}\\n')\n"
        "pathlib.Path(f'tests/test_f{n}.py').write_text(\n"
        "    f'from calc import f{n}\\n\\n\\ndef test_f{n}():\\n    assert f{n}(0) == {n}\\n')\n"
        "why = os.environ.get('RELAY_LOOP_EXPLAIN')\n"
        "if why:\n"
        "    pathlib.Path(why).write_text(f'added f{n} and its test\\n')\n"
    )
    return f"{PY} {script}"


def share(folder: Path) -> None:
    """Share ``folder`` (the maker's script and what it writes) with the maker's box, as a
    person shares one (RELAY_SANDBOX_SHARE): each box has a /tmp of its own, so a script
    under the temporary folder is otherwise out of its sight. A root relay's box is
    BOX_ID's, and refuses a share it cannot write."""
    os.environ["RELAY_SANDBOX_SHARE"] = str(folder)
    if os.getuid() == 0:
        from relay.ratchet.sandbox import BOX_ID

        for each in (folder, *folder.iterdir()):
            os.chown(each, BOX_ID, BOX_ID)


def hand_gates(root: Path) -> float:
    """Seconds to run the gate set by hand once."""
    started = time.perf_counter()
    for gate in GATES:
        subprocess.run(gate, shell=True, cwd=root, capture_output=True, check=False)
    return time.perf_counter() - started


def overhead() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-loop-") as tmp:
        root = Path(tmp) / "calc"
        root.mkdir()
        project(root)
        shared = Path(tmp) / "maker"
        shared.mkdir()
        command = maker(shared)
        share(shared)
        by_hand = statistics.median(hand_gates(root) for _ in range(RUNS))
        walls, gate_sets = [], []
        for n in range(1, GOALS + 1):
            accept = f"{PY} -m pytest -q -p no:cacheprovider tests/test_f{n}.py"
            added = relay("loop", "goal", "add", f"Add f{n}", "--accept", accept, cwd=root)
            assert added.returncode == 0, added.stderr
            logs = root / "docs/loop/state/gates"
            before = set(logs.rglob("*.log")) if logs.exists() else set()
            started = time.perf_counter()
            ran = relay("loop", "run", "--maker", command, "--max-iterations", "1", "--json",
                        cwd=root)  # fmt: skip
            walls.append(time.perf_counter() - started)
            kept = json.loads(ran.stdout)["data"]["kept"]
            assert kept, ran.stdout + ran.stderr
            new = [p for p in set(logs.rglob("*.log")) - before if "accept" not in p.name]
            gate_sets.append(len(new) / len(GATES))
        wall, sets = statistics.median(walls), statistics.median(gate_sets)
        own = wall - sets * by_hand
        print(f"gates by hand: median {by_hand:.2f} s ({RUNS} runs, {len(GATES)} gates)")
        print(f"loop iteration: median {wall:.2f} s over {GOALS} kept goals;"
              f" it ran the gate set {sets:g} times")  # fmt: skip
        print(
            f"loop's own overhead per iteration (worktree, commits, spine, verification"
            f" bookkeeping): {own:.2f} s = {own / by_hand:.1f}x one hand run of the gates"
        )


def busy(stop: float) -> None:
    """Load that drifts: on and off in uneven stretches until ``stop``."""
    on = True
    while time.time() < stop:
        until = time.time() + (0.7 if on else 0.4)
        while time.time() < until:
            if on:
                sum(range(10_000))
            else:
                time.sleep(0.05)
        on = not on


METRIC = (
    "import time, sys\n"
    "slow = float(sys.argv[1])\n"
    "t = time.perf_counter()\n"
    "x = 0\n"
    "for i in range(int(2_000_000 * slow)):\n"
    "    x += i\n"
    "print(round((time.perf_counter() - t) * 1000, 3))\n"
)


def metric(slow: float) -> float:
    done = subprocess.run([PY, "-c", METRIC, str(slow)], capture_output=True, text=True)
    return float(done.stdout.strip())


def noise() -> None:
    stop = time.time() + 600
    load = [multiprocessing.Process(target=busy, args=(stop,)) for _ in range(2)]
    for p in load:
        p.start()
    try:
        for name, slow in (("no change", 1.0), ("really ~15% slower", 1.15)):
            sequential_a = [metric(1.0) for _ in range(METRIC_RUNS)]
            sequential_b = [metric(slow) for _ in range(METRIC_RUNS)]
            a, b = [], []
            for _ in range(METRIC_RUNS):
                a.append(metric(1.0))
                b.append(metric(slow))
            seq = compare_runs(sequential_a, sequential_b, direction="down", threshold=5.0)
            mixed = compare_runs(a, b, direction="down", threshold=5.0)
            print(f"{name}: sequential says {seq.change_pct:+.1f}% (kept: {seq.improved});"
                  f" interleaved says {mixed.change_pct:+.1f}% (kept: {mixed.improved})"
                  f" — {mixed.text}")  # fmt: skip
    finally:
        for p in load:
            p.terminate()
            p.join()


def main() -> None:
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")
    overhead()
    noise()


if __name__ == "__main__":
    main()
