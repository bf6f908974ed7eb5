"""Reading a step for destruction: the worst 1,000-character steps the tests know (deep
nesting, runs of quotes and substitutions) against an ordinary step of the same length,
each read for every shell. The reader must stay linear: a TASK's step is read on every
node before it runs, so a step built to be slow would stall every pass.

Reports, per step, the median of 15 reads (all four shells) and the ratio to the
ordinary step's median, with the machine's load.

Run: ``python -m bench.bench_classify`` (or ``python -m bench``).
"""

from __future__ import annotations

import os
import statistics
import time

from relay.protocol.destructive import classify

WORST = [
    "eval " * 200,
    "sh -c " * 166,
    "$(" * 500,
    "`" * 1000,
    "'" + "rm -rf " * 142,
    "a|" * 500,
    "find -exec " * 100,
    "sudo " * 200,
    '"' * 999 + "x",
    "^" * 1000,
    "powershell -c " * 71,
    'python -c "' + "os.system('rm -f x'); " * 45,
    "perl -e '" + "system(" * 140,
    "node -e '" + "'" * 990,
    "curl x | " * 110 + "sh",
    "$(printf rm) " * 76,
    "$(" * 333 + "a)" * 333,
    "sed -i " * 140,
]
ORDINARY = ("python -m pytest tests/unit -q --maxfail=1 && make lint && echo done; " * 20)[:1000]
SHELLS = (None, "sh", "cmd", "powershell")


def read_time(step: str, rounds: int = 15) -> float:
    """The median seconds to read ``step`` for every shell (uncached)."""
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        for shell in SHELLS:
            classify.__wrapped__(step[:1000], shell=shell)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    """Print each worst step's median read time and its ratio to an ordinary step's."""
    print(f"load before: {os.getloadavg()[0]:.2f}")
    base = read_time(ORDINARY)
    print(f"ordinary 1,000-character step: {base * 1000:.2f} ms (median of 15, four shells)")
    worst = 0.0
    for step in WORST:
        took = read_time(step)
        worst = max(worst, took)
        print(f"  {step[:24]!r:30} {took * 1000:8.2f} ms  {took / base:6.1f}x ordinary")
    print(f"slowest: {worst * 1000:.2f} ms ({worst / base:.1f}x an ordinary step)")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
