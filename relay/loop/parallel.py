"""Parallel makers, decided purely: which goals are ready to fan out (every dependency kept
on the main line: the barrier), which goals must run alone, in what order finished
candidates are brought onto the main line, how a candidate lands there (as judged, judged
again on the moved baseline, or made again when it no longer applies), and the reducer
that merges parallel reviewers' findings.

Ground rules: the main line's board is the truth. A goal starts only when every goal it
depends on is done there, so a dependent never builds on a candidate that might still be
refused; a candidate reaches the main line only through the same gates, on the baseline
it lands on, never untested.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from relay.loop.classify import Review, Verdict
from relay.loop.goals import Board, Goal, GoalState

# the paths a goal's worktree writes for itself: never part of the candidate it hands back
OWN_BOOKKEEPING_PREFIXES = ("docs/loop/state/",)
OWN_BOOKKEEPING = ("docs/loop/BOARD.md", "docs/loop/handover.md")
REDUCER = (
    "reducer: every reviewer's findings are merged; a blocking finding from any reviewer"
    " blocks; findings are ranked by how many reviewers raised them, then by the reviewers'"
    " order"
)


def fans_out(goal: Goal) -> bool:
    """Whether a goal may be worked beside others in its own worktree: an optimisation
    goal (its metric measures the machine) and a goal verified on another node (its job is
    the goal's own) run alone on the main line."""
    return not goal.optimises and goal.verify_on is None


def in_group(goals: Sequence[Goal], group: str | None) -> tuple[Goal, ...]:
    """The goals ``--group`` works (all of them without one)."""
    return tuple(goals) if group is None else tuple(g for g in goals if g.group == group)


def unknown_group(goals: Sequence[Goal], group: str | None) -> str:
    """Why ``--group`` names nothing to work ("" when GOALS.md has the group)."""
    if group is None or any(g.group == group for g in goals):
        return ""
    known = sorted({g.group for g in goals if g.group})
    listed = f"its groups: {', '.join(known)}" if known else "it has no groups"
    return f"there is no group {group} in GOALS.md ({listed}); add `- Group: {group}` to a goal"


@dataclass(frozen=True)
class Ready:
    """What to start now: goals to fan out, or one goal to run alone on the main line
    (``alone``), with why nothing more starts."""

    start: tuple[Goal, ...]
    alone: Goal | None = None
    waiting: tuple[str, ...] = ()  # goals held at the barrier: "G5 waits on G3"


def ready_goals(
    goals: Sequence[Goal],
    board: Board,
    *,
    running: Iterable[str],
    skip: Iterable[str] = (),
    slots: int,
    group: str | None = None,
) -> Ready:
    """The goals to start with ``slots`` makers free: open goals, in GOALS.md order (fewer
    failed passes first), whose every dependency is done on the main line's board, that
    are not running nor set aside. A goal that must run alone starts only when nothing
    else runs."""
    busy, skipped = set(running), set(skip)
    pool = in_group(goals, group)
    rows = {g.id: board.row_of(g) for g in goals}
    order = {g.id: i for i, g in enumerate(goals)}
    ready: list[Goal] = []
    waiting: list[str] = []
    for goal in sorted(pool, key=lambda g: (rows[g.id].failed_passes, order[g.id])):
        row = rows[goal.id]
        if goal.id in busy or goal.id in skipped:
            continue
        if row.state not in (GoalState.OPEN, GoalState.IN_PROGRESS):
            continue
        pending = [d for d in goal.depends if d not in rows or rows[d].state is not GoalState.DONE]
        if pending:
            waiting.append(f"{goal.id} waits on {', '.join(pending)}")
            continue
        ready.append(goal)
    alone = next((g for g in ready if not fans_out(g)), None)
    if alone is not None:
        return Ready((), alone if not busy else None, tuple(waiting))
    return Ready(tuple(ready[: max(0, slots)]), None, tuple(waiting))


def waits_on(goal: Goal, goals: Sequence[Goal], board: Board) -> list[str]:
    """The goals ``goal`` depends on that are not done on the board (the barrier)."""
    rows = {g.id: board.row_of(g) for g in goals}
    return [d for d in goal.depends if d not in rows or rows[d].state is not GoalState.DONE]


def landing_order(finished: Iterable[str], goals: Sequence[Goal]) -> list[str]:
    """The finished candidates in the order they are brought onto the main line: a goal
    after every goal it depends on, otherwise in GOALS.md order."""
    done = set(finished)
    by_id = {g.id: g for g in goals}
    order: list[str] = []
    placed: set[str] = set()

    def place(goal_id: str, path: tuple[str, ...] = ()) -> None:
        if goal_id in placed or goal_id in path or goal_id not in done:
            return
        goal = by_id.get(goal_id)
        for dep in goal.depends if goal else ():
            place(dep, (*path, goal_id))
        placed.add(goal_id)
        order.append(goal_id)

    for goal in goals:
        place(goal.id)
    order += sorted(done - placed)
    return order


class Landing(enum.StrEnum):
    """How a kept candidate is brought onto the main line."""

    JUDGED = "judged"  # the main line is still its base: it lands through the gates there
    REJUDGE = "re-judge"  # the main line moved and it still applies: judged again there
    REMAKE = "re-make"  # it no longer applies: the goal is made again on the new baseline


def landing(*, base: str, head: str, applies: bool) -> Landing:
    """How a candidate made from ``base`` lands on a main line at ``head``."""
    if not applies:
        return Landing.REMAKE
    return Landing.JUDGED if base == head else Landing.REJUDGE


def candidate_paths(paths: Iterable[str]) -> list[str]:
    """A worktree's changed paths less what the worktree wrote for itself (its board,
    handover and state): the goal's own change, which the main line judges."""
    return sorted(
        p
        for p in paths
        if p not in OWN_BOOKKEEPING and not any(p.startswith(x) for x in OWN_BOOKKEEPING_PREFIXES)
    )


def assign_nodes(
    goals: Sequence[str], nodes: Sequence[str], busy: Iterable[str] = ()
) -> dict[str, str]:
    """Which node makes which goal: each goal, in order, to one free node (the nodes in the
    roster's order, those not ``busy``); a goal with no free node left is not assigned and
    waits for one."""
    free = [n for n in dict.fromkeys(nodes) if n not in set(busy)]
    return dict(zip(goals, free, strict=False))


def node_makers(asked: int, nodes: Sequence[str]) -> int:
    """How many goals fan out at once when the makers are nodes: no more than the nodes,
    since each node works one goal at a time."""
    return max(1, min(asked, len(set(nodes)))) if nodes else max(1, asked)


def makers_for(asked: int | None, contract_makers: int | None) -> int:
    """How many makers work at once: ``--parallel`` when given, else the contract's
    "Concurrent makers", else one."""
    value = asked if asked is not None else (contract_makers or 1)
    return max(1, value)


# --- the reducer ---


@dataclass(frozen=True)
class Finding:
    """One finding after the reducer: its text, who raised it, and whether it blocks."""

    text: str
    raised_by: tuple[str, ...]
    blocking: bool


@dataclass(frozen=True)
class Reduced:
    """The panel's merged answer: blocked or not, which reviewers blocked, the findings
    ranked (blocking first, then by how many raised them, then by reviewer order)."""

    blocked: bool
    blockers: tuple[str, ...]
    findings: tuple[Finding, ...]

    def lines(self) -> list[str]:
        """The findings as the failure's diagnosis lists them."""
        return [
            f"- {'[blocking] ' if f.blocking else ''}{f.text} ({', '.join(f.raised_by)})"
            for f in self.findings
        ]


def reduce_reviews(reviews: Sequence[tuple[str, Review]]) -> Reduced:
    """Merge parallel reviewers' answers: any block (or no verdict) blocks; the same
    finding from several reviewers is one finding naming them all."""
    blockers = tuple(who for who, r in reviews if r.verdict is not Verdict.APPROVE)
    merged: dict[str, tuple[str, list[str], bool, int]] = {}
    for position, (who, review) in enumerate(reviews):
        blocks = review.verdict is not Verdict.APPROVE
        texts = review.findings or ((review.discarded or "no findings given",) if blocks else ())
        for text in texts:
            shown = " ".join(text.split())
            key = shown.lower()
            shown, names, blocking, first = merged.get(key, (shown, [], False, position))
            if who not in names:
                names.append(who)
            merged[key] = (shown, names, blocking or blocks, first)  # as first raised
    ranked = sorted(merged.values(), key=lambda m: (not m[2], -len(m[1]), m[3]))
    findings = tuple(Finding(text, tuple(names), b) for text, names, b, _ in ranked)
    return Reduced(bool(blockers), blockers, findings)


# --- a group's whole change ---


def taken_back_subject(group: str) -> str:
    """The subject of the commit that takes a blocked group's change back."""
    return f"loop: group {group} taken back (the checker panel blocks its whole change)"


@dataclass(frozen=True)
class GroupChange:
    """A group's whole change on the main line: the commit before its first kept goal
    and the kept commits of its goals, oldest first."""

    base: str
    kept: tuple[str, ...]


def group_change(
    history: Sequence[tuple[str, str, str]], goals: Sequence[Goal], group: str
) -> GroupChange | None:
    """The group's whole change from the main line's history (``history``: first-parent,
    newest first, each commit's sha, first parent and subject), however many runs kept its
    goals: back from HEAD to the last time the group was taken back, the kept commits of
    its goals (subject ``ID: title``, so a reused id with another title is not one); None
    when none was kept."""
    subjects = {f"{g.id}: {g.title}" for g in goals}
    kept: list[str] = []
    base = ""
    for sha, parent, subject in history:
        if subject == taken_back_subject(group):
            break
        if subject in subjects:
            kept.append(sha)
            base = parent
    if not kept or not base:
        return None
    return GroupChange(base=base, kept=tuple(reversed(kept)))
