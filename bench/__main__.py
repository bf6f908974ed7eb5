"""``python -m bench [NAME...] [--FLAG...]``: run every ``bench/bench_*.py`` module's
``main()`` in name order, or only the ones named (``hub``, ``bench_hub`` and ``bench_hub.py``
all work). Flags (``--misses``) are left in ``sys.argv`` for the modules to read; a module
whose ``main()`` returns a non-zero number (a goal missed) makes the run exit non-zero."""

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
    """Run the chosen benchmarks one after another, timing each; 1 if any missed a goal."""
    args = sys.argv[1:] if argv is None else argv
    missed = []
    for stem in wanted([a for a in args if not a.startswith("-")]):
        print(f"== {stem} ==", flush=True)
        started = time.perf_counter()
        code = importlib.import_module(f"bench.{stem}").main()
        print(f"== {stem} done in {time.perf_counter() - started:.1f} s ==\n", flush=True)
        if isinstance(code, int) and code != 0:
            missed.append(stem)
    if missed:
        print(f"bench: goals missed by {', '.join(missed)}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
