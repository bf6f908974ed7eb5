"""The goals (GOALS.md's ``## Backlog``) and their state (BOARD.md's ``## Goals`` table).

Ground rules: GOALS.md says what each goal is, BOARD.md how it stands; a goal with no row
on the board is open and untried. Both files keep every byte outside the part relay owns,
and that part renders back exactly as a canonical file reads (round-trip tested). The
next goal is chosen purely from the two: the one in progress first (a resumed run), then
the first open goal, in file order, whose dependencies are done.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from relay.errors import SpineFileError
from relay.loop.markdown import (
    Section,
    body_lines,
    code_span,
    find,
    is_rule_row,
    parse_code_span,
    row,
    sections,
    split_row,
)

GOALS_NAME = "docs/loop/GOALS.md"
BOARD_NAME = "docs/loop/BOARD.md"
BACKLOG = "Backlog"
BOARD_SECTION = "Goals"
GOAL_ID = re.compile(r"G[1-9][0-9]*")
BACKLOG_INTRO = (
    "Worked by `relay loop run` in this order (independent goals several at once with\n"
    "`--parallel N`, a goal only after every goal it depends on), each done when its\n"
    "acceptance command passes and every gate holds. `relay loop goal add` appends here;\n"
    "edit by hand between runs if you like, keeping each goal's shape.\n"
)
BOARD_INTRO = (
    "Each goal of GOALS.md as `relay loop` left it: open, in progress, done or blocked, with\n"
    "its attempts, its last verdict and its notes.\n"
)
BOARD_HEAD = ("goal", "title", "state", "attempts", "failed passes", "last verdict", "notes")


class GoalState(enum.StrEnum):
    """Where a goal stands; the values are the words on the board."""

    OPEN = "open"
    IN_PROGRESS = "in progress"
    DONE = "done"
    BLOCKED = "blocked"


@dataclass(frozen=True)
class Goal:
    """One thin goal: what, how it is checked, what must be done first."""

    id: str
    title: str
    accept: str
    depends: tuple[str, ...] = ()
    security: bool = False
    metric: str | None = None  # an optimisation goal: a command whose last line is a number
    direction: str = "up"  # which way the metric must move: up or down
    threshold: float = 0.0  # by at least this many percent of the baseline
    runs: int | None = None  # measured this many times (None: the contract's `Metric runs:`)
    metric_files: tuple[str, ...] = ()  # globs of the files the metric reads: no maker may edit
    verify_on: str | None = None  # the node that must verify the goal through a relay job
    finding: str | None = None  # what triage found, so that it is enqueued only once
    may_edit_tests: bool = False  # may change the baseline's tests (not only add new ones)
    paths: tuple[str, ...] = ()  # the paths the goal declares it works on
    group: str | None = None  # the group `relay loop run --group` works as one

    @property
    def optimises(self) -> bool:
        """Whether the goal's criterion is a metric rather than an acceptance command."""
        return self.metric is not None


@dataclass(frozen=True)
class GoalsFile:
    """GOALS.md: the text before the backlog, the backlog's intro, the goals, the text after."""

    before: str
    intro: str
    goals: tuple[Goal, ...]
    after: str = ""

    def get(self, goal_id: str) -> Goal | None:
        return next((g for g in self.goals if g.id == goal_id), None)


@dataclass(frozen=True)
class BoardRow:
    """A goal's line on the board."""

    goal: str
    title: str
    state: GoalState = GoalState.OPEN
    attempts: int = 0
    failed_passes: int = 0
    verdict: str = ""
    notes: str = ""


@dataclass(frozen=True)
class Board:
    """BOARD.md: the text around the goals table and its rows."""

    before: str
    rows: tuple[BoardRow, ...]
    after: str = ""

    def row_of(self, goal: Goal) -> BoardRow:
        found = next((r for r in self.rows if r.goal == goal.id), None)
        return found or BoardRow(goal=goal.id, title=goal.title)

    def with_row(self, new: BoardRow) -> Board:
        """The board with ``new`` in place of the goal's row (appended when it has none)."""
        if any(r.goal == new.goal for r in self.rows):
            rows = tuple(new if r.goal == new.goal else r for r in self.rows)
        else:
            rows = (*self.rows, new)
        return replace(self, rows=rows)


# --- GOALS.md ---


def parse_goals(text: str, *, name: str = GOALS_NAME) -> GoalsFile:
    """GOALS.md as a model; SpineFileError names the line relay cannot read."""
    parts = sections(text)
    at = find(parts, BACKLOG)
    if at is None:
        return GoalsFile(before=text, intro="", goals=())
    before = "".join(p.text for p in parts[:at])
    after = "".join(p.text for p in parts[at + 1 :])
    intro, goals = _backlog(parts[at], name)
    return GoalsFile(before=before, intro=intro, goals=goals, after=after)


def _backlog(part: Section, name: str) -> tuple[str, tuple[Goal, ...]]:
    lines = body_lines(part)
    starts = [i for i, (_, line) in enumerate(lines) if line.startswith("### ")]
    first = starts[0] if starts else len(lines)
    intro = "\n".join(line for _, line in lines[:first]).strip("\n")
    goals: list[Goal] = []
    for pos, start in enumerate(starts):
        end = starts[pos + 1] if pos + 1 < len(starts) else len(lines)
        goal = _goal(lines[start:end], name)
        if any(g.id == goal.id for g in goals):
            raise SpineFileError(name, lines[start][0], f"goal {goal.id} appears twice")
        goals.append(goal)
    return (intro + "\n" if intro else ""), tuple(goals)


def _goal(lines: list[tuple[int, str]], name: str) -> Goal:
    number, heading = lines[0]
    match = re.fullmatch(r"### (G[1-9][0-9]*): (.+)", heading.rstrip())
    if match is None:
        raise SpineFileError(name, number, "a goal's heading reads `### G<n>: title`")
    fields: dict[str, tuple[int, str]] = {}
    for line_no, line in lines[1:]:
        if not line.strip():
            continue
        item = re.fullmatch(rf"- ({'|'.join(GOAL_FIELDS)}): (.*)", line.rstrip())
        if item is None:
            said = ", ".join(f"`- {f}:`" for f in GOAL_FIELDS)
            raise SpineFileError(name, line_no, f"a goal's lines are {said}")
        fields[item.group(1)] = (line_no, item.group(2).strip())
    metric = _command(fields.get("Metric"), name, "the metric command")
    if "Accept" not in fields and metric is None:
        raise SpineFileError(
            name, number, f"goal {match.group(1)} has no `- Accept:` command (or `- Metric:`)"
        )
    accept = _command(fields.get("Accept"), name, "the acceptance command") or ""
    return Goal(
        id=match.group(1),
        title=match.group(2).strip(),
        accept=accept,
        depends=_depends(fields.get("Depends on"), name),
        security=_yes(fields.get("Security-critical"), name),
        may_edit_tests=_yes(fields.get("May edit tests"), name, "May edit tests"),
        metric=metric,
        direction=_direction(fields.get("Direction"), name),
        threshold=_number(fields.get("Threshold"), name, "Threshold", percent=True),
        runs=int(_number(fields["Runs"], name, "Runs")) if "Runs" in fields else None,
        metric_files=tuple(
            (_command(fields.get("Metric files"), name, "the metric's files") or "").split()
        ),
        verify_on=_word(fields.get("Verify on")),
        finding=_word(fields.get("Finding")),
        paths=tuple((_command(fields.get("Paths"), name, "the goal's paths") or "").split()),
        group=_word(fields.get("Group")),
    )


GOAL_FIELDS = (
    "Accept",
    "Metric",
    "Direction",
    "Threshold",
    "Runs",
    "Metric files",
    "Verify on",
    "Depends on",
    "Security-critical",
    "Finding",
    "May edit tests",
    "Paths",
    "Group",
)


def _command(field: tuple[int, str] | None, name: str, what: str) -> str | None:
    if field is None:
        return None
    value = parse_code_span(field[1])
    if not value or not value.strip():
        raise SpineFileError(name, field[0], f"{what} goes in backticks")
    return value


def _direction(field: tuple[int, str] | None, name: str) -> str:
    if field is None:
        return "up"
    if field[1] not in ("up", "down"):
        raise SpineFileError(name, field[0], "`- Direction:` is up or down")
    return field[1]


def _number(
    field: tuple[int, str] | None,
    name: str,
    label: str,
    *,
    percent: bool = False,
    default: float = 0.0,
) -> float:
    if field is None:
        return default
    text = field[1].removesuffix("%") if percent else field[1]
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value < 0 or (not percent and (value < 1 or value != int(value))):
        kind = "a percentage (5%)" if percent else "a whole number of at least 1"
        raise SpineFileError(name, field[0], f"`- {label}:` is {kind}")
    return value


def _word(field: tuple[int, str] | None) -> str | None:
    if field is None or not field[1]:
        return None
    return parse_code_span(field[1]) or field[1]


def _depends(field: tuple[int, str] | None, name: str) -> tuple[str, ...]:
    if field is None:
        return ()
    ids = tuple(w.strip() for w in field[1].split(",") if w.strip())
    bad = [i for i in ids if not GOAL_ID.fullmatch(i)]
    if bad:
        raise SpineFileError(name, field[0], f"{bad[0]!r} is not a goal id (G1, G2, ...)")
    return ids


def _yes(field: tuple[int, str] | None, name: str, label: str = "Security-critical") -> bool:
    if field is None:
        return False
    if field[1] not in ("yes", "no"):
        raise SpineFileError(name, field[0], f"`- {label}:` is yes or no")
    return field[1] == "yes"


def render_goal(goal: Goal) -> str:
    """One goal's block."""
    lines = [f"### {goal.id}: {' '.join(goal.title.split())}", ""]
    if goal.accept or goal.metric is None:
        lines.append(f"- Accept: {code_span(goal.accept)}")
    if goal.metric is not None:
        lines += [
            f"- Metric: {code_span(goal.metric)}",
            f"- Direction: {goal.direction}",
            f"- Threshold: {goal.threshold:g}%",
            *([f"- Runs: {goal.runs}"] if goal.runs is not None else []),
        ]
        if goal.metric_files:
            lines.append(f"- Metric files: {code_span(' '.join(goal.metric_files))}")
    if goal.verify_on:
        lines.append(f"- Verify on: {goal.verify_on}")
    if goal.finding:
        lines.append(f"- Finding: {code_span(goal.finding)}")
    if goal.paths:
        lines.append(f"- Paths: {code_span(' '.join(goal.paths))}")
    if goal.depends:
        lines.append(f"- Depends on: {', '.join(goal.depends)}")
    if goal.group:
        lines.append(f"- Group: {goal.group}")
    if goal.security:
        lines.append("- Security-critical: yes")
    if goal.may_edit_tests:
        lines.append("- May edit tests: yes")
    return "\n".join(lines) + "\n"


def render_goals(doc: GoalsFile) -> str:
    """GOALS.md's text."""
    blocks = [f"## {BACKLOG}\n", *([doc.intro] if doc.intro else []), *map(render_goal, doc.goals)]
    before = doc.before.rstrip("\n") + "\n\n" if doc.before.strip() else ""
    return before + "\n".join(blocks) + ("\n" + doc.after if doc.after else "")


def next_id(doc: GoalsFile) -> str:
    """The id a new goal gets: one past the highest."""
    return f"G{max((int(g.id[1:]) for g in doc.goals), default=0) + 1}"


# --- BOARD.md ---


def parse_board(text: str, *, name: str = BOARD_NAME) -> Board:
    """BOARD.md's goals table as a model; SpineFileError names a row relay cannot read."""
    parts = sections(text)
    at = find(parts, BOARD_SECTION)
    if at is None:
        return Board(before=text, rows=())
    before = "".join(p.text for p in parts[:at])
    after = "".join(p.text for p in parts[at + 1 :])
    rows: list[BoardRow] = []
    for number, line in body_lines(parts[at]):
        cells = split_row(line)
        if cells is None or is_rule_row(cells) or cells == list(BOARD_HEAD):
            continue
        rows.append(_board_row(cells, number, name))
    return Board(before=before, rows=tuple(rows), after=after)


def _board_row(cells: list[str], number: int, name: str) -> BoardRow:
    if len(cells) != len(BOARD_HEAD):
        raise SpineFileError(name, number, f"a goal's row has {len(BOARD_HEAD)} cells")
    goal, title, state, attempts, passes, verdict, notes = cells
    if not GOAL_ID.fullmatch(goal):
        raise SpineFileError(name, number, f"{goal!r} is not a goal id (G1, G2, ...)")
    try:
        as_state = GoalState(state)
    except ValueError:
        raise SpineFileError(
            name, number, f"{state!r} is not a state (open, in progress, done, blocked)"
        ) from None
    if not (attempts.isdigit() and passes.isdigit()):
        raise SpineFileError(name, number, "attempts and failed passes are whole numbers")
    return BoardRow(goal, title, as_state, int(attempts), int(passes), verdict, notes)


def render_board(board: Board) -> str:
    """BOARD.md's text."""
    table = [row(list(BOARD_HEAD)), "| " + " | ".join("---" for _ in BOARD_HEAD) + " |"]
    table += [
        row(
            [
                r.goal,
                r.title,
                r.state.value,
                str(r.attempts),
                str(r.failed_passes),
                r.verdict,
                r.notes,
            ]
        )
        for r in board.rows
    ]
    before = board.before.rstrip("\n") + "\n\n" if board.before.strip() else ""
    section = f"## {BOARD_SECTION}\n\n{BOARD_INTRO}\n" + "\n".join(table) + "\n"
    return before + section + ("\n" + board.after if board.after else "")


# --- what comes next ---


@dataclass(frozen=True)
class Next:
    """The goal to work next, or None with the reason there is none."""

    goal: Goal | None
    reason: str
    resumed: bool = False


def next_goal(
    goals: Sequence[Goal],
    board: Board,
    *,
    skip: Iterable[str] = (),
    prefer_fresh: bool = True,
    only: str | None = None,
) -> Next:
    """The next unblocked goal in dependency order, or why there is none.

    ``skip`` names goals this run has set aside (a pass failed); among the rest, goals
    with fewer failed passes come first, so a run goes on to other goals before coming back.
    ``only`` limits the choice to one goal (``--goal``); its dependencies are still read
    from the whole board.
    """
    rows = {g.id: board.row_of(g) for g in goals}
    pool = [g for g in goals if only is None or g.id == only]
    for goal in pool:
        if rows[goal.id].state is GoalState.IN_PROGRESS:
            return Next(goal, f"{goal.id} was in progress; resuming it", resumed=True)
    skipped = set(skip)
    ready = [g for g in pool if _ready(g, rows) and g.id not in skipped]
    if ready:
        order = {g.id: i for i, g in enumerate(goals)}
        key = (lambda g: (rows[g.id].failed_passes, order[g.id])) if prefer_fresh else None
        chosen = sorted(ready, key=key)[0] if key else ready[0]
        return Next(chosen, f"{chosen.id} is the next unblocked goal")
    return Next(None, why_none(pool, rows, skipped))


def plan_order(
    goals: Sequence[Goal], board: Board, *, only: str | None = None
) -> tuple[list[Goal], list[Goal]]:
    """The goals in the order a run works them (:func:`next_goal`, again and again, as if
    each were done when worked), and the goals it would not reach (blocked, waiting on a
    blocked goal, or in a cycle). The dry run prints this; the run makes the same choices."""
    order: list[Goal] = []
    while True:
        chosen = next_goal(goals, board, only=only)
        if chosen.goal is None:
            break
        order.append(chosen.goal)
        board = board.with_row(replace(board.row_of(chosen.goal), state=GoalState.DONE))
    left = [
        g
        for g in goals
        if (only is None or g.id == only)
        and g not in order
        and board.row_of(g).state is not GoalState.DONE
    ]
    return order, left


def _ready(goal: Goal, rows: Mapping[str, BoardRow]) -> bool:
    if rows[goal.id].state is not GoalState.OPEN:
        return False
    return all(d in rows and rows[d].state is GoalState.DONE for d in goal.depends)


def why_none(goals: Sequence[Goal], rows: Mapping[str, BoardRow], skipped: set[str]) -> str:
    """The reason no goal is ready: none at all, all done, a cycle (named), or blockers."""
    if not goals:
        return "there are no goals; add one with `relay loop goal add TITLE --accept CMD`"
    pending = [g for g in goals if rows[g.id].state is not GoalState.DONE]
    if not pending:
        return "all goals are done"
    cycle = find_cycle(goals, rows)
    if cycle:
        return f"{' -> '.join(cycle)} depend on each other (a cycle); break it in GOALS.md"
    reasons = []
    for goal in pending:
        row_ = rows[goal.id]
        missing = [d for d in goal.depends if d not in rows]
        waiting = [d for d in goal.depends if d in rows and rows[d].state is not GoalState.DONE]
        if row_.state is GoalState.BLOCKED:
            reasons.append(f"{goal.id} is blocked ({row_.notes or 'no blocker noted'})")
        elif missing:
            reasons.append(f"{goal.id} depends on {', '.join(missing)}, which is not a goal")
        elif waiting:
            reasons.append(f"{goal.id} waits on {', '.join(waiting)}")
        elif goal.id in skipped:
            reasons.append(f"{goal.id} failed a pass in this run")
    return "the rest are blocked: " + "; ".join(reasons)


def find_cycle(goals: Sequence[Goal], rows: Mapping[str, BoardRow]) -> list[str] | None:
    """A dependency cycle among goals not done, as ids with the first repeated at the end."""
    deps = {g.id: [d for d in g.depends if d in rows] for g in goals}
    done = {g.id for g in goals if rows[g.id].state is GoalState.DONE}
    finished: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in finished or node in done:
            return None
        for dep in deps.get(node, []):
            found = visit(dep, [*path, node])
            if found:
                return found
        finished.add(node)
        return None

    for goal in goals:
        found = visit(goal.id, [])
        if found:
            return found
    return None
