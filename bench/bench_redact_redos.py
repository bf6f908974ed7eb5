"""ReDoS benchmark: a pathological 10 MB line for every pattern, against an ordinary 10 MB log.

Each family (``tests/redact/pathological.py``: the prefix of every row of the format table
and the lead-in of every hand-written rule, repeated with no line break) is streamed through
the redactor, timed in CPU time (a shared machine's wall clock measures the neighbours), and
compared with 10 MB of the realistic corpus. A backtracking pattern shows up as a ratio that
grows with the size; a linear one stays flat. The worst families are printed, and the ratio
of the worst one at two sizes says whether it grows.

Lines that are each a find (``DENSE``: a list of addresses, a table of secret rows) are
timed apart: linear, but at the per-find rate, so their ratio is reported, not held to 2x.

Run: ``python -m bench redact_redos`` (``RELAY_BENCH_REDOS_MB`` sets the size).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.redact_corpus import FACTS, write_corpus

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "redact"))
from pathological import DENSE, families, line

SIZE_MB = int(os.environ.get("RELAY_BENCH_REDOS_MB", "10"))
SEED = 20261201
CHUNK = 1 << 20
GOAL_RATIO = 2.0  # "the same time": within twice an ordinary log of the same size


def cpu_seconds(data: bytes) -> float:
    """CPU time to stream ``data`` through a fresh redactor stream."""
    from relay.redact import Redactor

    stream = Redactor(FACTS, max_redacted_share=1.0).open()
    started = time.process_time()
    for at in range(0, len(data), CHUNK):
        stream.feed(data[at : at + CHUNK])
    stream.finish()
    return time.process_time() - started


def run(size_mb: int = SIZE_MB) -> dict[str, Any]:
    """Time every family against the ordinary log; return the ratios, worst first."""
    size = size_mb << 20
    with tempfile.TemporaryDirectory(prefix="relay-bench-redos-") as tmp:
        path = Path(tmp) / "ordinary.log"
        write_corpus(path, size=size, seed=SEED)
        ordinary = path.read_bytes()[:size]
    cpu_seconds(ordinary)  # warm the regex caches, as a long run would have them
    base = statistics.median(cpu_seconds(ordinary) for _ in range(3))
    ratios = {name: cpu_seconds(line(unit, size)) / base for name, unit in families().items()}
    worst = sorted(ratios.items(), key=lambda kv: -kv[1])
    # The worst family again at a quarter of the size: a linear cost keeps its ratio.
    name, ratio = worst[0]
    quarter = size // 4
    small_base = cpu_seconds(ordinary[:quarter])
    small_ratio = cpu_seconds(line(families()[name], quarter)) / small_base
    # Lines that are each a find: linear at the per-find rate (the ratio stays at any size).
    dense = {name: cpu_seconds(line(unit, size)) / base for name, unit in DENSE.items()}
    dense_worst = max(dense, key=dense.__getitem__)
    dense_small = cpu_seconds(line(DENSE[dense_worst], quarter)) / small_base
    return {
        "dense": sorted(((n, round(r, 1)) for n, r in dense.items()), key=lambda kv: -kv[1]),
        "dense_worst_ratio_at_quarter_size": round(dense_small, 1),
        "size_mb": size_mb,
        "families": len(ratios),
        "ordinary_cpu_s": round(base, 3),
        "ordinary_mb_per_cpu_s": round(size / 1e6 / base, 1),
        "worst": [(n, round(r, 2)) for n, r in worst[:10]],
        "worst_ratio": round(ratio, 2),
        "worst_ratio_at_quarter_size": round(small_ratio, 2),
        "median_ratio": round(statistics.median(ratios.values()), 2),
        "within_goal": sum(r <= GOAL_RATIO for r in ratios.values()),
    }


def main() -> None:
    """Run the ReDoS benchmark and print its figures and verdicts."""
    figures = run()
    print("bench_redact_redos:", json.dumps(figures, indent=2))
    goals = {
        f"every pathological line within {GOAL_RATIO:g}x an ordinary log": figures["within_goal"]
        == figures["families"],
        "no family grows superlinearly (worst ratio at 1/4 size is not smaller by 2x)": figures[
            "worst_ratio"
        ]
        < 2 * max(figures["worst_ratio_at_quarter_size"], 1.0),
        "lines that are each a find cost the same per byte at any size (linear)": figures["dense"][
            0
        ][1]
        < 2 * max(figures["dense_worst_ratio_at_quarter_size"], 1.0),
    }
    for goal, met in goals.items():
        print(f"  {'met' if met else 'MISSED'}: {goal}")


if __name__ == "__main__":
    main()
