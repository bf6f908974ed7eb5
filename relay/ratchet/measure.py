"""Running what judges a candidate: the acceptance command and the gates (in the clone or
in a fresh worktree), the coverage report, the maker, and the checkers' reviews.

Every command runs through ``relay.edges.steps`` (the platform shell, a timeout that kills
the whole tree, bounded output, no relay token). A command handed a file gets its path as
its last argument and in an environment variable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from relay.edges.steps import StepOutcome, group_alive, kill_group, run_step
from relay.loop.classify import Category, classify_gate, diagnosis
from relay.loop.contract import Gate
from relay.loop.guard import orphan_group
from relay.loop.ratchet import Failed
from relay.loop.records import GateResult

BRIEF_ENV = "RELAY_LOOP_BRIEF"
REVIEW_ENV = "RELAY_LOOP_REVIEW"
MAKER_PID = "maker.pid"  # the running maker's process group, in the loop's work directory


@dataclass(frozen=True)
class Measure:
    """The gates' results on one tree, the first failure, and the line coverage."""

    results: tuple[GateResult, ...]
    failure: Failed | None
    coverage: float | None


def process_start(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), None when it is
    gone or the platform does not say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def maker_record(pgid: int) -> str:
    """What is written down about a running maker: its process group and start time."""
    return f"{pgid} {process_start(pgid) or '-'}\n"


def stop_orphan(record: Path) -> int | None:
    """Stop the maker a killed run left running (its whole group); the group, if any."""
    try:
        text = record.read_text(encoding="utf-8")
    except OSError:
        return None
    pgid = orphan_group(text, process_start(int(text.split()[0])) if text[:1].isdigit() else None)
    if pgid is not None and group_alive(pgid):
        kill_group(pgid, grace=0.5)
    record.unlink(missing_ok=True)
    return pgid


def measure(
    where: Path,
    gates: Sequence[Gate],
    *,
    timeout: float,
    coverage_report: str | None,
    stop_at_failure: bool,
) -> Measure:
    """Run the gates in order in ``where``; the coverage report is read afterwards."""
    report = where / coverage_report if coverage_report else None
    if report is not None:
        report.unlink(missing_ok=True)  # a stale report must not pass for a fresh one
    results: list[GateResult] = []
    failure: Failed | None = None
    for gate in gates:
        done = run_step(gate.command, cwd=where, timeout=timeout)
        results.append(GateResult(gate.name, gate.command, done.ok, done.duration))
        if not done.ok and failure is None:
            failure = gate_failure(gate, done, timeout=timeout)
            if stop_at_failure:
                break
    return Measure(tuple(results), failure, read_coverage(report))


def gate_failure(gate: Gate, done: StepOutcome, *, timeout: float) -> Failed:
    """A failed gate as a classified failure with its diagnosis."""
    category = classify_gate(
        name=gate.name, command=gate.command, output=done.output, timed_out=done.timed_out
    )
    how = f"ran past {timeout:.0f}s" if done.timed_out else f"exited {done.exit_code}"
    return Failed(category, f"{gate.name} (`{gate.command}`) {how}", diagnosis(done.output))


def read_coverage(report: Path | None) -> float | None:
    """Line coverage from coverage.py's JSON report, None when there is none."""
    if report is None:
        return None
    try:
        doc = json.loads(report.read_text(encoding="utf-8"))
        totals = doc["totals"]
        covered, statements = totals["covered_lines"], totals["num_statements"]
        return 100.0 if statements == 0 else round(100.0 * covered / statements, 2)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def coverage_failure(before: float | None, after: float | None) -> Failed | None:
    """A coverage drop (or a report that went missing) as a failure, else None."""
    if before is None:
        return None
    if after is None:
        return Failed(Category.COVERAGE, "the coverage report was not written", "")
    if after < before - 0.005:
        what = f"line coverage fell from {before:.2f}% to {after:.2f}%"
        return Failed(Category.COVERAGE, what, f"{what}; add tests for the lines you added")
    return None
