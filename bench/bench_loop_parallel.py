"""Parallel makers: the wall time of five independent goals worked with `relay loop run
--parallel 1` against `--parallel 3`, in one run.

A small real project in a temporary git repository, one cheap gate, five goals that do not
depend on each other; the maker is a script that sleeps a fixed time (standing for an
agent's think time) and then writes the goal's file. The same five goals are worked twice,
each time in a fresh copy: one maker at a time, then three at once, each goal in its own
worktree and landed on the main line through the gates. Printed: both wall times and
their ratio.

    python -m bench.bench_loop_parallel
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOALS = 5
SLEEP = 4.0  # seconds each maker takes
PY = sys.executable
GATE = f"{PY} -c pass"


def sh(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)


def relay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return sh(PY, "-m", "relay.cli", *args, cwd=cwd)


def project(root: Path) -> None:
    """A repository with the loop set up on one cheap gate and five independent goals."""
    root.mkdir(parents=True)
    (root / "README.md").write_text("bench\n")
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.name", "Bench"),
        ("config", "user.email", "bench@example.invalid"),
        ("add", "-A"),
        ("commit", "-q", "-m", "the project"),
    ):
        sh("git", *args, cwd=root)
    done = relay("loop", "init", "--yes", "--gate", GATE, cwd=root)
    if done.returncode != 0:
        raise SystemExit(f"bench: relay loop init failed: {done.stderr}")
    for n in range(1, GOALS + 1):
        accept = f"{PY} -c \"import pathlib, sys; sys.exit(not pathlib.Path('g{n}.txt').exists())\""
        relay("loop", "goal", "add", f"Write g{n}", "--accept", accept, cwd=root)


def maker(where: Path) -> str:
    """A maker that takes SLEEP seconds, then writes its goal's file and says why."""
    script = where / "maker.py"
    script.write_text(
        "import os, pathlib, re, sys, time\n"
        "brief = pathlib.Path(sys.argv[-1]).read_text()\n"
        "n = re.search(r'^# G([0-9]+):', brief, re.M).group(1)\n"
        f"time.sleep({SLEEP})\n"
        "pathlib.Path(f'g{n}.txt').write_text(n + '\\n')\n"
        "pathlib.Path(os.environ['RELAY_LOOP_EXPLAIN']).write_text(f'wrote g{n}.txt\\n')\n"
    )
    return f"{PY} {script}"


def timed(root: Path, command: str, parallel: int) -> float:
    started = time.perf_counter()
    done = relay("loop", "run", "--maker", command, "--parallel", str(parallel), "--json", cwd=root)
    wall = time.perf_counter() - started
    kept = json.loads(done.stdout)["data"].get("kept", []) if done.stdout else []
    if len(kept) != GOALS:
        raise SystemExit(f"bench: --parallel {parallel} kept {len(kept)} goals: {done.stderr}")
    return wall


def main() -> None:
    os.environ.setdefault("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    with tempfile.TemporaryDirectory(prefix="bench-parallel-") as tmp:
        command = maker(Path(tmp))
        walls = {}
        for parallel in (1, 3):
            root = Path(tmp) / f"p{parallel}"
            project(root)
            walls[parallel] = timed(root, command, parallel)
            print(
                f"--parallel {parallel}: {GOALS} goals kept in {walls[parallel]:.1f} s", flush=True
            )
        ratio = walls[1] / walls[3]
        print(
            f"five independent goals, makers of {SLEEP:.0f} s each: --parallel 3 takes"
            f" {walls[3]:.1f} s against {walls[1]:.1f} s one at a time ({ratio:.2f}x faster;"
            f" the makers alone would give {GOALS * SLEEP / (2 * SLEEP):.1f}x)"
        )


if __name__ == "__main__":
    main()
