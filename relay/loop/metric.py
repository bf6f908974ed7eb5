"""Optimisation goals, decided purely: the number a metric command printed, the median of
its runs, whether a result moved past the threshold in the right direction, the idea a
maker stated, and ``docs/loop/EXPERIMENTS.md``, the append-only ledger of every attempt.

Ground rules: a number is read only from the metric's own last line, measured by relay
(what a maker claims is never taken on faith); an idea the ledger shows was discarded is
refused, compared after normalising case, spacing and punctuation.
"""

from __future__ import annotations

import fnmatch
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from relay.errors import SpineFileError
from relay.loop.markdown import row, table_rows
from relay.loop.records import EXPERIMENTS_NAME as EXPERIMENTS_NAME

EXPERIMENTS_HEAD = """\
# Experiments

Every attempt at an optimisation goal, newest last: the idea the maker stated, the metric
at the baseline and after (relay's own measurements, medians of the same runs), whether
the change was kept, reverted or refused, and why. Append-only: relay adds rows and never
rewrites one. An idea shown here as reverted or refused is refused if it is tried again.

"""
COLUMNS = ("n", "goal", "idea", "baseline", "result", "outcome", "why", "at")
KEPT, REVERTED, REFUSED = "kept", "reverted", "refused"
IDEA_PREFIX = "IDEA:"
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def metric_value(output: str) -> float | None:
    """The number a metric command printed as its last non-empty line, or None."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    if not lines or not _NUMBER.fullmatch(lines[-1]):
        return None
    return float(lines[-1])


def median(values: Sequence[float]) -> float:
    """The median of the runs (the middle one, or the mean of the middle two)."""
    import statistics  # here: its numbers (decimal, fractions) are no other step's

    if not values:
        raise ValueError("no runs to take the median of")
    return float(statistics.median(values))


@dataclass(frozen=True)
class Movement:
    """Whether a result beat the baseline by the threshold, and how people read it."""

    improved: bool
    change_pct: float
    text: str


def movement(baseline: float, result: float, *, direction: str, threshold: float) -> Movement:
    """Whether ``result`` moved past ``threshold`` percent of ``baseline`` in ``direction``
    (``up`` or ``down``). A zero baseline can only be beaten by moving off zero the right way."""
    if direction not in ("up", "down"):
        raise ValueError(f"direction {direction!r} is not up or down")
    sign = 1.0 if direction == "up" else -1.0
    delta = result - baseline
    if baseline == 0:
        pct = float("inf") * (1 if delta > 0 else -1) if delta else 0.0
    else:
        pct = 100.0 * delta / abs(baseline)
    gain = sign * pct
    improved = gain > 0 and gain >= threshold
    shown = "n/a" if abs(pct) == float("inf") else f"{pct:+.2f}%"
    want = f"{'+' if sign > 0 else '-'}{threshold:g}%"
    text = f"{fmt(baseline)} -> {fmt(result)} ({shown}; needed {want} {direction})"
    return Movement(improved, pct, text)


def spread_pct(values: Sequence[float], against: float) -> float:
    """The range of one arm's runs (highest less lowest) as a percent of ``against``."""
    if len(values) < 2:
        return 0.0
    width = max(values) - min(values)
    if against == 0:
        return 0.0 if width == 0 else float("inf")
    return 100.0 * width / abs(against)


def compare_runs(
    baseline: Sequence[float], candidate: Sequence[float], *, direction: str, threshold: float
) -> Movement:
    """Whether the candidate's runs beat the baseline's, both measured interleaved (A/B/A/B)
    on the same machine: the medians must move past the threshold in ``direction`` and by
    more than the measured noise, the wider of the two arms' ranges. With one run each the
    noise is not measured and the threshold alone decides."""
    base, cand = median(baseline), median(candidate)
    moved = movement(base, cand, direction=direction, threshold=threshold)
    noise = max(spread_pct(baseline, base), spread_pct(candidate, base))
    gain = (1.0 if direction == "up" else -1.0) * moved.change_pct
    beats_noise = gain > noise
    runs = min(len(baseline), len(candidate))
    if runs < 2:
        said = "noise not measured (1 run each)"
    else:
        said = (
            f"noise {noise:.2f}% over {runs} interleaved runs each; baseline"
            f" {fmt(min(baseline))}..{fmt(max(baseline))}, candidate"
            f" {fmt(min(candidate))}..{fmt(max(candidate))}"
        )
    text = f"{moved.text}; {said}"
    if moved.improved and not beats_noise:
        text += "; the change is within the noise"
    return Movement(moved.improved and beats_noise, moved.change_pct, text)


def fmt(value: float) -> str:
    """A measured number as people read it."""
    return f"{value:.6g}"


def stated_idea(output: str) -> str | None:
    """The maker's idea: the last line of its output that starts ``IDEA:`` (the brief
    says so), or None when it stated none."""
    found = None
    for line in output.splitlines():
        text = line.strip()
        if text.upper().startswith(IDEA_PREFIX):
            found = " ".join(text[len(IDEA_PREFIX) :].split()) or found  # an empty one says nothing
    return found or None


def metric_touched(command: str, globs: Sequence[str], changes: Sequence[str]) -> list[str]:
    """The changed paths that are the metric's own: a file (or a file under a directory) the
    metric command names, or one the goal's ``Metric files`` globs match. A maker may not
    change what measures it: relay measures with the baseline's copy of these."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    named = {w.removeprefix("./").rstrip("/") for w in words if w and not w.startswith("-")}
    named.discard("")
    own = []
    for path in changes:
        if (
            path in named
            or any(path.startswith(n + "/") for n in named)
            or any(fnmatch.fnmatchcase(path, g.removeprefix("./")) for g in globs)
        ):
            own.append(path)
    return sorted(own)


def normalise(idea: str) -> str:
    """An idea for comparison: lower case, punctuation gone, spacing collapsed."""
    words = re.sub(r"[^\w\s]|_", " ", idea.casefold())
    return " ".join(words.split())


# --- the ledger ---


@dataclass(frozen=True)
class Experiment:
    """One row of EXPERIMENTS.md."""

    number: int
    goal: str
    idea: str
    baseline: str
    result: str
    outcome: str
    why: str
    at: str = ""


def discarded(idea: str, ledger: Sequence[Experiment], *, goal: str) -> Experiment | None:
    """The row that shows ``idea`` was already discarded (reverted or refused) for this
    goal, or None. Kept ideas are not refused: what worked may be built on."""
    key = normalise(idea)
    if not key:
        return None
    for entry in ledger:
        if entry.goal == goal and entry.outcome != KEPT and normalise(entry.idea) == key:
            return entry
    return None


def parse_experiments(
    text: str, *, name: str = EXPERIMENTS_NAME
) -> tuple[str, tuple[Experiment, ...]]:
    """The text before the table and its rows."""
    head, found = table_rows(text, COLUMNS, name=name)
    rows = []
    for number, cells in found:
        if len(cells) != len(COLUMNS) or not cells[0].isdigit():
            raise SpineFileError(name, number, f"a row has {len(COLUMNS)} cells, numbered")
        rows.append(Experiment(int(cells[0]), *cells[1:]))
    return head, tuple(rows)


def render_experiments(head: str, rows: Sequence[Experiment]) -> str:
    """EXPERIMENTS.md's text."""
    table = [row(list(COLUMNS)), "| " + " | ".join("---" for _ in COLUMNS) + " |"]
    table += [
        row(
            [
                str(e.number),
                e.goal,
                e.idea,
                e.baseline,
                e.result,
                e.outcome,
                e.why,
                e.at,
            ]
        )
        for e in rows
    ]
    return head + "\n".join(table) + "\n"


def append(text: str | None, entry: Experiment) -> tuple[str, Experiment]:
    """The ledger with ``entry`` appended (numbered one past the last), and the entry."""
    head, rows = parse_experiments(text if text is not None else EXPERIMENTS_HEAD)
    numbered = replace(entry, number=max((e.number for e in rows), default=0) + 1)
    return render_experiments(head, (*rows, numbered)), numbered


def ledger_lines(rows: Sequence[Experiment], *, goal: str, last: int = 20) -> list[str]:
    """The goal's newest ledger rows for the maker's brief."""
    mine = [e for e in rows if e.goal == goal][-last:]
    return [f"- {e.idea} — {e.baseline} -> {e.result}: {e.outcome} ({e.why})" for e in mine]
