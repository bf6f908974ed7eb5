"""The ratchet's decisions: after each attempt, what to do next; after each failed pass,
what to learn; and what the maker, the checkers and the verifier are handed.

Ground rules: a change is kept only on a pass; a transient failure costs no attempt and no
strike; a failed attempt is retried with its diagnosis (self-heal) on the broken tree
until two attempts in a row have built on a broken one, then the goal's baseline is put
back and the maker told to take another angle; when the retries are spent the goal's
changes are reverted, and after three failed passes the goal is blocked. Everything here
is a function of what was observed; the driver in ``relay.ratchet`` does the acting.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Protocol

from relay.errors import LocalUsageError
from relay.loop.classify import Category, is_finding
from relay.loop.goals import Board, GoalState
from relay.loop.programs import shared_program
from relay.loop.records import Failure, GateResult, Rule

BLOCK_AFTER_PASSES = 3
REWIND_AFTER = 2  # failed attempts in a row that built on a broken one
MAX_TRANSIENT = 6


# --- one goal's attempts ---


@dataclass(frozen=True)
class Progress:
    """Where a goal's current pass stands."""

    failed: int = 0  # failed attempts in this pass
    on_broken: int = 0  # failed attempts in a row that built on a broken tree
    broken: bool = False  # whether the tree holds a failed attempt's changes
    transient: int = 0  # transient failures in a row


@dataclass(frozen=True)
class Passed:
    """Every gate, checker and the verifier passed."""


@dataclass(frozen=True)
class Failed:
    """An attempt failed: its category, what failed (one line) and the diagnosis."""

    category: Category
    what: str
    diagnosis: str


@dataclass(frozen=True)
class Transient:
    """The maker was interrupted (rate limited, overloaded): no attempt is spent."""

    what: str


@dataclass(frozen=True)
class Stopped:
    """A person stopped the maker (`relay loop interrupt`): no attempt is spent."""

    what: str


@dataclass(frozen=True)
class Wall:
    """The maker hit a usage or rate limit whose reset time its output names."""

    until: datetime
    what: str


@dataclass(frozen=True)
class Declined:
    """The goal goes to a person: the maker says it cannot do it (exit 3, or its reason
    file), or relay holds a candidate no gate can judge (``said`` says which): why."""

    reason: str
    said: str = "the maker cannot do this"


Outcome = Passed | Failed | Transient | Wall | Declined | Stopped


@dataclass(frozen=True)
class Keep:
    """Commit the goal's changes; the goal is done."""


@dataclass(frozen=True)
class Backoff:
    """Wait, then run the same step again."""

    seconds: float
    progress: Progress


@dataclass(frozen=True)
class Escalate:
    """Stop the run: a person is needed."""

    reason: str


@dataclass(frozen=True)
class Retry:
    """Run the maker again with the diagnosis; on ``rewind``, from the goal's baseline."""

    progress: Progress
    rewind: bool


@dataclass(frozen=True)
class EndPass:
    """The retries are spent: revert the goal's changes; block it if ``block``."""

    block: bool


@dataclass(frozen=True)
class Suspend:
    """Stop now and resume at ``until`` (a one-shot scheduler entry); nothing is spent."""

    until: datetime
    what: str


@dataclass(frozen=True)
class HandOff:
    """The goal goes to a person with the maker's reason: its changes are put back, it is
    blocked with no strike, and the run goes on with the other goals."""

    reason: str
    said: str = "the maker cannot do this"


@dataclass(frozen=True)
class Reopen:
    """A person stopped the maker: the goal's changes are put back and it is open again,
    with no strike and no attempt counted; the run goes on and takes it up from the spine."""

    what: str


Decision = Keep | Backoff | Escalate | Retry | EndPass | Suspend | HandOff | Reopen


def after_attempt(
    progress: Progress,
    outcome: Outcome,
    *,
    retries: int,
    failed_passes: int,
    backoff: float,
) -> Decision:
    """What to do after an attempt ended with ``outcome``."""
    if isinstance(outcome, Passed):
        return Keep()
    if isinstance(outcome, Wall):
        return Suspend(outcome.until, outcome.what)
    if isinstance(outcome, Declined):
        return HandOff(outcome.reason, outcome.said)
    if isinstance(outcome, Stopped):
        return Reopen(outcome.what)
    if isinstance(outcome, Transient):
        tries = progress.transient + 1
        if tries >= MAX_TRANSIENT:
            return Escalate(f"the maker failed transiently {tries} times in a row ({outcome.what})")
        return Backoff(backoff * 2 ** (tries - 1), replace(progress, transient=tries))
    failed = progress.failed + 1
    on_broken = progress.on_broken + 1 if progress.broken else 0
    if failed > retries:
        return EndPass(block=failed_passes + 1 >= BLOCK_AFTER_PASSES)
    if on_broken >= REWIND_AFTER:
        return Retry(Progress(failed=failed), rewind=True)
    return Retry(Progress(failed=failed, on_broken=on_broken, broken=True), rewind=False)


# --- learning ---

_RULES: dict[Category, tuple[str, str]] = {
    Category.LINT: (
        "Lint and format before finishing",
        "Run {command} yourself and fix every finding before you finish.",
    ),
    Category.TYPE: (
        "Type-check before finishing",
        "Run {command} yourself and fix every type error before you finish.",
    ),
    Category.TEST: (
        "Keep every test passing",
        "Run {command} before you finish; never leave a test failing, and never delete or"
        " weaken one to pass.",
    ),
    Category.IMPORT: (
        "Import only what exists",
        "Every module you import must exist in the tree; run {command} from a fresh checkout.",
    ),
    Category.PROTECTED: (
        "Leave the protected paths alone",
        "Never edit a protected path ({what}); change only the mutable paths.",
    ),
    Category.COVERAGE: (
        "Test every line you add",
        "Add tests with every change so that line coverage does not drop ({what}).",
    ),
    Category.CHECKER: (
        "Answer the checkers' findings",
        "Address what the checkers found before you finish ({what}).",
    ),
    Category.CRASH: (
        "Finish cleanly",
        "Exit with status 0 after editing the tree; do not leave the work half done ({what}).",
    ),
    Category.TIMEOUT: (
        "Stay within the time limit",
        "Do less per attempt: finish within the maker timeout ({what}).",
    ),
    Category.METRIC: (
        "Measure before finishing",
        "Run the metric yourself, before and after, and state a new idea each time ({what}).",
    ),
    Category.VERIFY: (
        "Build for the verifying node",
        "The change must pass on the node that verifies it, not only here ({what}).",
    ),
    Category.UNEXPLAINED: (
        "Explain every change",
        "Before you finish, write what you changed and why to the file the brief names.",
    ),
}


def _rule_for(
    failure: Failure, rules: Sequence[Rule], *, iteration: int, pattern: str
) -> Rule | None:
    """The rule ``failure``'s category teaches, credited to its goal and attempt."""
    try:
        title, text = _RULES[Category(failure.category)]
    except (ValueError, KeyError):
        return None
    lines = failure.diagnosis.strip().splitlines()
    first = next((line for line in lines if is_finding(line)), lines[0] if lines else "")
    if first.strip():
        pattern += f" — {first.strip()[:160]}"
    commands = re.findall(r"`([^`]+)`", failure.what)
    command = f"`{commands[0]}`" if commands else "every gate"
    return Rule(
        number=max((r.number for r in rules), default=0) + 1,
        title=title,
        iteration=iteration,
        goal=failure.goal,
        category=failure.category,
        pattern=pattern,
        rule=text.format(what=failure.what, command=command),
        attempt=failure.attempt,
    )


def learn(
    failures: Sequence[Failure], rules: Sequence[Rule], *, goal: str, iteration: int
) -> Rule | None:
    """A rule for a category that has failed twice and has no rule yet (the goal's own
    failures first), or None. The rule is credited to the goal and attempt whose failure
    taught it, whichever goal's pass learned it."""
    known = {r.category for r in rules}
    mine = [f for f in failures if f.goal == goal]
    for failure in [*reversed(mine), *reversed(failures)]:
        same = [f for f in failures if f.category == failure.category]
        if len(same) < 2 or failure.category in known:
            continue
        pattern = (
            f"{failure.category} failed {len(same)} times, last in {failure.goal}"
            f" attempt {failure.attempt}: {failure.what}"
        )
        rule = _rule_for(failure, rules, iteration=iteration, pattern=pattern)
        if rule is not None:
            return rule
    return None


def learn_from_heal(
    last: Failure | None, rules: Sequence[Rule], *, goal: str, healed_by: int, iteration: int
) -> Rule | None:
    """A self-heal that worked teaches too: attempt ``healed_by`` of ``goal`` was kept after
    being handed ``last``'s diagnosis, so ``last``'s category gets its rule (once), credited
    to the attempt that failed. A failure that was only timed out or crashed teaches
    nothing about the code."""
    if last is None or last.goal != goal or last.attempt >= healed_by:
        return None
    if last.category in {r.category for r in rules}:
        return None
    if last.category in (Category.TIMEOUT, Category.CRASH):
        return None
    pattern = (
        f"{last.category} failed in {last.goal} attempt {last.attempt}: {last.what};"
        f" attempt {healed_by} healed it with the diagnosis"
    )
    return _rule_for(last, rules, iteration=iteration, pattern=pattern)


# --- what a failed attempt leaves for the next one ---

_HEAL: dict[str, str] = {
    Category.LINT: "fix each finding above, then run the lint gate before finishing",
    Category.TYPE: "fix each type error above, then run the type checker before finishing",
    Category.TEST: "make the failing check pass by changing the code, never by weakening a test",
    Category.IMPORT: "import only modules that exist in the tree",
    Category.PROTECTED: "make the change without touching the protected path",
    Category.COVERAGE: "add tests for the lines the change added",
    Category.CHECKER: "answer each of the checkers' findings",
    Category.CRASH: "finish with exit status 0 and the tree edited",
    Category.TIMEOUT: "do less in one attempt",
    Category.METRIC: "try an idea the ledger does not show",
    Category.VERIFY: "make the change pass on the verifying node",
    Category.UNEXPLAINED: "write what changed and why to the file the brief names",
}


def next_hypothesis(category: str, decision: Decision, *, attempt: int) -> str:
    """What the run tries next after attempt ``attempt`` failed in ``category``, in one
    sentence (for handover.md)."""
    heal = _HEAL.get(category, "heal the failure above")
    if isinstance(decision, Retry) and decision.rewind:
        return (
            f"attempt {attempt + 1} starts again from the goal's baseline and takes another"
            f" angle (two attempts in a row built on a broken tree); it should {heal}."
        )
    if isinstance(decision, Retry):
        return f"attempt {attempt + 1} heals this on the same tree, handed the diagnosis: {heal}."
    if isinstance(decision, EndPass) and decision.block:
        return "none: the goal is blocked after its failed passes; a person decides what next."
    return (
        "the goal's changes are reverted and the goal is set aside for this run; the next"
        f" pass starts from its baseline with what was learned: {heal}."
    )


# --- who judges, and why a run stops ---


class Panel(Protocol):
    """The commands of a run: the maker, the checkers and the verifier."""

    @property
    def maker(self) -> str: ...
    @property
    def checkers(self) -> tuple[str, ...]: ...
    @property
    def verifier(self) -> str | None: ...
    @property
    def red_team(self) -> tuple[str, ...]: ...


def refuse_bad_panel(options: Panel, *, root: str = "") -> None:
    """The maker never judges its own work: refuse it as a checker, the verifier or the red
    team, however its program is spelt or wrapped (``timeout 60 sh tools/m.sh`` runs
    ``./tools/m.sh``; ``claude -p`` is the ``claude`` adapter); ``root`` is the clone's
    absolute path."""
    grading = [("checker", c) for c in options.checkers]
    grading += [("verifier", options.verifier or "")]
    grading += [("red-team", c) for c in options.red_team]
    for flag, command in grading:
        program = shared_program(command, options.maker, root=root)
        if program is not None:
            raise LocalUsageError(
                f"the --{flag} `{command}` runs the maker's program ({program}): the maker"
                " cannot be a checker, the verifier or the red team",
                hint=f"give --{flag} a different command (someone else judges the work)",
            )


def only_goal_reason(goal: str | None, board: Board, reason: str) -> str:
    """Why a run limited to one goal (``--goal``) stops: that goal's state, not the rest's."""
    if goal is None:
        return reason
    state = next((r.state for r in board.rows if r.goal == goal), GoalState.OPEN)
    return f"{goal} is {state.value} (the run was limited to it by --goal)"


# --- the run's end ---


def stop_reason(*, iterations: int, budget: int, elapsed: float, wall_clock: float) -> str | None:
    """Why the budget stops the run now, or None."""
    if iterations >= budget:
        return f"the iteration budget is spent ({iterations} of {budget})"
    if elapsed >= wall_clock:
        return f"the wall-clock budget is spent ({elapsed:.0f}s of {wall_clock:.0f}s)"
    return None


@dataclass(frozen=True)
class Kept:
    """A change the run kept."""

    goal: str
    title: str
    commit: str
    gates: str
    coverage: str


@dataclass(frozen=True)
class Report:
    """What a run did, for the person who reads it in the morning."""

    objective: str
    iterations: int
    budget: int
    stopped: str
    kept: tuple[Kept, ...] = ()
    reverted: tuple[str, ...] = ()
    blocked: tuple[tuple[str, str], ...] = ()
    questions: tuple[str, ...] = field(default_factory=tuple)
    gate_logs: str = ""  # the folder of this run's gate output, relative to the clone
    transcripts: str = ""  # the folder of this run's role transcripts, relative to the clone

    def lines(self) -> list[str]:
        """The report as lines of markdown."""
        out = [
            f"Objective: {self.objective}",
            f"Iterations: {self.iterations} of {self.budget}",
            "Kept:",
            *(
                [
                    f"- {k.goal} {k.title} ({k.commit[:10]}): {k.gates}; coverage {k.coverage}"
                    for k in self.kept
                ]
                or ["- (nothing)"]
            ),
            "Reverted attempts:",
            *([f"- {r}" for r in self.reverted] or ["- (none)"]),
            "Blocked goals:",
            *([f"- {g}: {why}" for g, why in self.blocked] or ["- (none)"]),
            "Open questions:",
            *([f"- {q}" for q in self.questions] or ["- (none)"]),
            f"Stopped: {self.stopped}",
        ]
        if self.gate_logs:  # handover.md sits in docs/loop/: the link is relative to it
            link = self.gate_logs.removeprefix("docs/loop/")
            out.append(f"Gate logs: [{link}/]({link}/)")
        if self.transcripts:
            link = self.transcripts.removeprefix("docs/loop/")
            out.append(f"Transcripts: [{link}/]({link}/)")
        return out

    def entry(self, when: str) -> str:
        """The report as a handover.md entry."""
        return f"\n## Loop run report ({when})\n\n" + "\n".join(self.lines()) + "\n"

    def data(self) -> dict[str, object]:
        """The report for ``--json``."""
        return {
            "objective": self.objective,
            "iterations": self.iterations,
            "budget": self.budget,
            "kept": [k.__dict__ for k in self.kept],
            "reverted": list(self.reverted),
            "blocked": [{"goal": g, "blocker": why} for g, why in self.blocked],
            "questions": list(self.questions),
            "stopped": self.stopped,
            "gate_logs": self.gate_logs or None,
            "transcripts": self.transcripts or None,
        }


def coverage_delta(before: float | None, after: float | None) -> str:
    """A coverage change as people read it."""
    if after is None:
        return "not measured"
    if before is None:
        return f"{after:.2f}%"
    return f"{before:.2f}% -> {after:.2f}% ({after - before:+.2f})"


def gates_delta(before: Sequence[GateResult], after: Sequence[GateResult]) -> str:
    """How many gates (the acceptance command included) pass, before and after."""
    was = sum(r.passed for r in before)
    now = sum(r.passed for r in after)
    return f"{now}/{len(after)} gates pass (was {was}/{len(before)})"
