"""``python -m bench [NAME...]``: run every ``bench/bench_*.py`` module's ``main()`` in name
order, or only the ones named (``hub``, ``bench_hub`` and ``bench_hub.py`` all work)."""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent


def available() -> list[str]:
    """The benchmark module names, sorted (``bench_hub``, ``bench_redact``, ...)."""
    return sorted(p.stem for p in HERE.glob("bench_*.py"))


def wanted(names: Sequence[str]) -> list[str]:
    """The modules to run for the names given on the command line (all when none)."""
    known = available()
    if not names:
        return known
    chosen = []
    for name in names:
        stem = Path(name).stem
        stem = stem if stem.startswith("bench_") else f"bench_{stem}"
        if stem not in known:
            raise SystemExit(f"bench: no benchmark {name!r}; choose from {', '.join(known)}")
        chosen.append(stem)
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    """Run the chosen benchmarks one after another, timing each."""
    for stem in wanted(sys.argv[1:] if argv is None else argv):
        print(f"== {stem} ==", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"bench.{stem}").main()
        print(f"== {stem} done in {time.perf_counter() - started:.1f} s ==\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
