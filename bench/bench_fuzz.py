"""Fuzz every parser a pass runs on what anyone can write: 10,000 hypothesis examples a
parser (``RELAY_BENCH_FUZZ_EXAMPLES`` to change), each must give data or an allowed error.
Prints examples, seconds and unexpected failures (goal: 0) per parser."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relay.protocol.fuzz_targets import ALLOWED, TARGETS, garbage_kinds

GARBAGE = st.one_of(
    st.text(max_size=400),
    st.lists(st.sampled_from(garbage_kinds()) | st.text(max_size=8), max_size=40).map("".join),
)


def fuzz(name: str, examples: int) -> tuple[int, list[str]]:
    """Run one parser on ``examples`` inputs; the count run and the unexpected failures."""
    seen: list[str] = []
    ran = [0]

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(text=GARBAGE)
    def one(text: str) -> None:
        ran[0] += 1
        try:
            TARGETS[name](text)
        except ALLOWED[name]:
            pass
        except Exception as err:  # what the bench counts: anything else is a bug
            seen.append(f"{type(err).__name__}: {str(err)[:80]} <- {text[:60]!r}")

    one()
    return ran[0], seen


def main() -> None:
    examples = int(os.environ.get("RELAY_BENCH_FUZZ_EXAMPLES", "10000"))
    total_bad = 0
    for name in sorted(TARGETS):
        started = time.perf_counter()
        ran, bad = fuzz(name, examples)
        seconds = time.perf_counter() - started
        total_bad += len(bad)
        print(f"{name:>14}: {ran:,} examples in {seconds:.1f} s, unexpected failures: {len(bad)}")
        for line in bad[:3]:
            print(f"{'':>16}{line}")
    goal = "met" if total_bad == 0 else "NOT met"
    print(f"unexpected failures in all parsers: {total_bad}  [goal 0: {goal}]")
    interleavings()


def interleavings() -> None:
    """The protocol's interleavings state machine at the full size (`make test` runs 80)."""
    count = os.environ.get("RELAY_BENCH_INTERLEAVINGS", "1000")
    test = Path(__file__).resolve().parent.parent / "tests/protocol/test_protocol_interleavings.py"
    started = time.perf_counter()
    argv = [sys.executable, "-m", "pytest", "-q", str(test)]
    done = subprocess.run(argv, env={**os.environ, "RELAY_INTERLEAVINGS": count}, check=False)
    seconds = time.perf_counter() - started
    verdict = "pass" if done.returncode == 0 else "FAIL"
    print(f"protocol interleavings: {count} examples in {seconds:.1f} s: {verdict}")
