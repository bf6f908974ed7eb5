"""`relay loop run`: the ratchet, goal by goal, until the goals are done, the budget is
spent or an escalation fires.

Ground rules: the repository is left better or exactly as it was. A kept change is one
commit holding the goal's changes and the spine's record of them, so a run killed at any
point is never applied twice; every other commit relay makes touches only the spine's
bookkeeping (BOARD.md, docs/loop/state/, handover.md). A killed run is resumed from the
board (the goal in progress) and the baseline file (what was untracked when it began):
what the dead run left in the tree is put back, and the goal starts again at no cost.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from relay.edges.statefile import git_dir
from relay.edges.worktree import WorkTree
from relay.errors import ConfigError, ContractError, LocalUsageError, RelayError
from relay.loop.checks import checks_delta, unknown
from relay.loop.classify import Category
from relay.loop.contract import Contract, check, seconds
from relay.loop.goals import (
    BOARD_NAME,
    Board,
    BoardRow,
    Goal,
    GoalState,
    next_goal,
    parse_board,
    render_board,
)
from relay.loop.markdown import sections
from relay.loop.ratchet import (
    Backoff,
    Decision,
    Declined,
    EndPass,
    Escalate,
    Failed,
    HandOff,
    Keep,
    Kept,
    Outcome,
    Passed,
    Progress,
    Reopen,
    Report,
    Retry,
    Suspend,
    after_attempt,
    coverage_delta,
    gates_delta,
    learn,
    learn_from_heal,
    next_hypothesis,
    only_goal_reason,
    refuse_bad_panel,
    stop_reason,
)
from relay.loop.records import (
    BASELINE_NAME,
    EXPERIMENTS_NAME,
    FAILURES_NAME,
    HANDOVER_NAME,
    LOG_NAME,
    RULES_NAME,
    Baseline,
    Failure,
    Iteration,
    failed_entry,
    goal_entry,
    kept_entry,
    parse_log,
    render_baseline,
    render_failures,
    render_log,
    render_rules,
)
from relay.loop.revise import (
    LOOP_FILE,
    WORKS_HERE,
    audit_path,
    outside_works_here,
    proposals,
    render_audit,
    security_verdict,
    with_entries,
)
from relay.loop.risks import critical_areas
from relay.loop.threads import THREADS_DIR
from relay.ratchet.files import Spine
from relay.ratchet.judge import Judge, Options
from relay.ratchet.measure import (
    MAKER_PID,
    Measure,
    Seen,
    keep_transcripts,
    stop_orphan,
)
from relay.ratchet.roles import TRANSCRIPTS, check_commands, role_commands
from relay.ratchet.threads import ThreadStore

if TYPE_CHECKING:
    from relay.loop.jobs import Answer, Job

RUN_LOCK = "run.lock"
NOTHING_TO_RESUME = "resume: nothing left to do"

BOOKKEEPING = (
    BOARD_NAME,
    BASELINE_NAME,
    LOG_NAME,
    FAILURES_NAME,
    RULES_NAME,
    HANDOVER_NAME,
    EXPERIMENTS_NAME,
    THREADS_DIR,  # the roles' threads, copied in with every bookkeeping commit
)


def is_bookkeeping(path: str) -> bool:
    """Whether relay writes ``path`` for its own records (never a goal's change)."""
    return path in BOOKKEEPING or path.startswith(THREADS_DIR + "/")


class RemoteVerifier(Protocol):
    """Verification on another node through the relay (the commands layer's, injected):
    push the candidate to a branch, open or reuse the goal's job, post the TASK, wait
    for the RESULT; and resolve the job with the goal."""

    def open(self, goal: Goal) -> int: ...
    def verify(self, goal: Goal, *, job: int, commit: str, branch: str) -> Answer: ...
    def resolve(self, job: int, summary: str) -> None: ...


class Suspender(Protocol):
    """Registers the one-shot resume (the commands layer's, injected); what it registered."""

    def __call__(self, until: datetime, reason: str) -> str: ...


@dataclass
class RunState:
    """What this run has done so far."""

    started: float
    iterations: int = 0
    kept: list[Kept] = field(default_factory=list)
    reverted: list[str] = field(default_factory=list)
    blocked: list[tuple[str, str]] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)
    set_aside: set[str] = field(default_factory=set)
    escalated: bool = False
    paused: bool = False


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")


@contextlib.contextmanager
def _stopped_by_term() -> Iterator[None]:
    """A SIGTERM ends the run as Ctrl-C does, so that its maker is stopped on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    old = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def contract_ready(spine: Spine) -> Contract:
    """The contract, refused (naming the field) when it is not fit to run under."""
    contract = spine.contract()
    problems = check(contract, exists=spine.exists(contract))
    if problems:
        said = "; ".join(f"{p.field}: {p.message}" for p in problems)
        raise ContractError(
            f"docs/loop/CONTRACT.md is not fit to run under: {said}",
            hint="fix those fields by hand, then run `relay loop check`",
        )
    return contract


class Ratchet:
    """One run of the loop over one clone."""

    def __init__(
        self,
        root: Path,
        options: Options,
        *,
        say: Callable[[str], None],
        remote: RemoteVerifier | None = None,
        suspend: Suspender | None = None,
    ) -> None:
        self.remote = remote
        self.suspend = suspend
        self.tree = WorkTree.open(root)
        self.root = self.tree.root
        self.spine = Spine(self.root)
        self.options = options
        self.say = say
        self.contract = contract_ready(self.spine)
        roles = role_commands(options.maker, options.checkers, options.verifier, options.red_team)
        # no maker command: the maker is another node (a parallel run's own maker)
        check_commands([r for r in roles if r != ("maker", "")], cwd=self.root)
        budget = self.contract.budget
        self.budget = options.max_iterations or budget.iterations or 0
        self.wall = options.wall_clock or seconds(budget.wall_clock or "") or float("inf")
        self.retries = self._retries(budget.retries)
        self.backoff = seconds(budget.backoff) or 0.0
        self.judge = Judge(
            tree=self.tree,
            spine=self.spine,
            contract=self.contract,
            options=options,
            work=git_dir(self.root) / "relay" / "loop",
            maker_timeout=seconds(budget.maker_timeout) or 1800.0,
            gate_timeout=seconds(budget.gate_timeout) or 600.0,
            checker_timeout=seconds(budget.checker_timeout) or 600.0,
        )
        self.state = RunState(started=time.monotonic())
        self.may_push = True  # a goal's own worktree (parallel makers) never pushes
        # goals whose next pass re-judges a candidate made within its turns: that pass
        # spends none (a sequential run would have judged it once)
        self.turns_waived: set[str] = set()
        # the roles as LOOP.md names them now (a run that takes them from the roster): read
        # again before every iteration; None where they are fixed for the run
        self.roster_roles: Callable[[Options], Options] | None = None
        refuse_bad_panel(options, root=str(self.root))
        ThreadStore.of(self.root).reconcile(self.root)  # the spine's threads are the source

    # --- the run ---

    def run(self, loop: Callable[[], str] | None = None) -> Report:
        """Work the goals until done, out of budget or escalated; end with the report. One
        run at a time per clone; a maker still running when relay is stopped is stopped.
        ``loop`` works the goals (one at a time when not given; parallel makers give theirs)."""
        from relay.ratchet.measure import gate_log, transcripts_seen

        with self._one_run(), _stopped_by_term(), gate_log(self.root, "run") as log:
            self.gate_log = log
            self.transcripts_before: Seen = transcripts_seen(self.judge.work / TRANSCRIPTS)
            try:
                return self._run(loop or self._loop)
            finally:
                stop_orphan(self.judge.work / MAKER_PID)

    @contextlib.contextmanager
    def _one_run(self) -> Iterator[None]:
        from filelock import FileLock, Timeout

        self.judge.work.mkdir(parents=True, exist_ok=True)
        lock = FileLock(self.judge.work / RUN_LOCK, timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise ConfigError(
                "another `relay loop run` is in progress on this clone",
                hint="wait for it to end (or stop it), then run again",
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _run(self, loop: Callable[[], str]) -> Report:
        stopped_maker = stop_orphan(self.judge.work / MAKER_PID)
        if stopped_maker is not None:
            self.say(f"stopped the maker a stopped run left running (group {stopped_maker})")
        self._recover()
        if self.options.resume and self._nothing_to_do():
            return Report(self.contract.objective, 0, self.budget, NOTHING_TO_RESUME)
        self._write_bounds()
        stopped = loop()
        transcripts = keep_transcripts(
            self.judge.work / TRANSCRIPTS,
            self.root,
            self.gate_log.run,
            before=self.transcripts_before,
        )
        report = Report(
            objective=self.contract.objective,
            iterations=self.state.iterations,
            budget=self.budget,
            stopped=stopped,
            kept=tuple(self.state.kept),
            reverted=tuple(self.state.reverted),
            blocked=tuple(self.state.blocked),
            questions=tuple(self.state.questions),
            gate_logs=self.gate_log.folder if self.gate_log.written else "",
            transcripts=transcripts,
        )
        self.spine.write(HANDOVER_NAME, self.spine.handover() + report.entry(now_text()))
        self.tree.commit([HANDOVER_NAME], f"loop: run report ({stopped})")
        return report

    def _nothing_to_do(self) -> bool:
        """Whether a resume finds every goal settled (a second firing, a finished run)."""
        goals = self.spine.goals().goals
        return next_goal(goals, self.spine.board(), only=self.options.goal).goal is None

    def _recover(self) -> None:
        """A run killed mid-goal leaves HEAD's board with the goal in progress, and may leave
        bookkeeping it never committed: put that back, so the board is HEAD's and the goal
        is resumed from there (a person's uncommitted edits to the board are refused later
        as any dirty tree is, never discarded: they cannot coexist with a goal in progress)."""
        at_head = self.tree.show("HEAD", BOARD_NAME)
        if at_head is None:
            return
        if not any(r.state is GoalState.IN_PROGRESS for r in parse_board(at_head).rows):
            return
        dirty = [p for p in self.tree.tracked_changes() if is_bookkeeping(p)]
        if dirty:
            self.tree.revert(dirty)
            self.say(f"put back the bookkeeping a stopped run left ({', '.join(dirty)})")

    def _retries(self, contract: int | None) -> int:
        """Retries per goal: the roster's maker limit (``Limits: retries N``) when it sets
        one for the maker this run runs, else the contract's."""
        from relay.ratchet.roles import roster_settings

        maker = self.options.maker
        mine = roster_settings(self.root, "maker", maker) if maker else None
        if mine is not None and mine.retries is not None:
            return mine.retries
        return contract or 0

    def _turns_spent(self, goal: Goal) -> str | None:
        """Why a role of the roster has no turn left on ``goal`` (its ``Limits: turns N``),
        counted from the role's thread; None when each role this run runs has one left."""
        from relay.loop.roster import LOOP_NAME, MAKER, parse_roster, settings_for, turns_spent

        try:
            roster = parse_roster(self.spine.read(LOOP_NAME))
        except RelayError:
            return None  # a roster relay cannot read is refused before any role runs
        if not any(r.limits.turns is not None for r in roster.roles):
            return None
        if goal.id in self.turns_waived:
            self.turns_waived.discard(goal.id)
            return None
        running = list(self.options.checker_names)
        maker = self.options.maker
        if maker and settings_for(roster, MAKER, maker) is not None:
            running.append(MAKER)
        store = ThreadStore.of(self.root)
        asked = {
            name: sum(1 for e in store.read(name, goal.id).entries if e.kind == "asked")
            for name in running
        }
        return turns_spent(roster, asked, goal=goal.id, running=running)

    def out_of_turns(self, goal: Goal, row: BoardRow, why: str) -> None:
        """A role has used its turns on the goal: the goal is blocked for a person with
        the reason, set aside for the run, and the run goes on with the other goals."""
        self.state.questions.append(f"{goal.id}: {why}")
        self.state.blocked.append((goal.id, why))
        self.state.set_aside.add(goal.id)
        self.say(f"{goal.id}: {why}")
        self._mark(row, state=GoalState.BLOCKED, note=why, message=f"loop: {goal.id} out of turns")

    def _reread(self) -> None:
        """The contract and LOOP.md's roles as they stand now, every iteration: a person's
        edit between iterations (a gate, a budget, a protected path, a role's program)
        counts from the next one."""
        self._reread_roles()
        contract = contract_ready(self.spine)
        if contract == self.contract:
            return
        self.contract = contract
        budget = contract.budget
        self.budget = self.options.max_iterations or budget.iterations or 0
        self.wall = self.options.wall_clock or seconds(budget.wall_clock or "") or float("inf")
        self.retries = self._retries(budget.retries)
        self.backoff = seconds(budget.backoff) or 0.0
        self.judge = replace(
            self.judge,
            contract=contract,
            maker_timeout=seconds(budget.maker_timeout) or 1800.0,
            gate_timeout=seconds(budget.gate_timeout) or 600.0,
            checker_timeout=seconds(budget.checker_timeout) or 600.0,
        )
        self.say("the contract changed; this iteration runs under the new one")
        self._write_bounds()

    def _reread_roles(self) -> None:
        """The roster's roles, when this run took its roles from it: a changed role whose
        command resolves runs from this iteration; one that cannot run (or a roster relay
        cannot read) is said, and the roles the run had go on."""
        if self.roster_roles is None:
            return
        try:
            options = self.roster_roles(self.options)
            if options == self.options:
                return
            roles = role_commands(
                options.maker, options.checkers, options.verifier, options.red_team
            )
            check_commands(roles, cwd=self.root)
            refuse_bad_panel(options, root=str(self.root))
        except RelayError as err:
            self.say(
                f"LOOP.md's roles changed but cannot be taken ({err.message}); the run"
                " keeps the roles it had"
            )
            return
        self.options = options
        self.judge = replace(self.judge, options=options)
        self.retries = self._retries(self.contract.budget.retries)
        self.say("LOOP.md's roles changed; this iteration runs under them")
        self._write_bounds()

    def _write_bounds(self) -> None:
        """Every bound this run applies, on BOARD.md (committed when it changed; a board a
        person is editing is left alone, and the run refuses the dirty tree as ever)."""
        from relay.loop.runenv import run_bounds, with_bounds

        text = self.spine.read(BOARD_NAME) or ""
        o = self.options
        from relay.ratchet.sandbox import bounds_said, box_users, level

        bounds = run_bounds(
            self.contract,
            max_iterations=o.max_iterations,
            wall_clock=o.wall_clock,
            boundary=level(),
            boxes=bounds_said(),
            box_users=box_users(),
            roles=self._roles_said(),
            goal_runs=[
                (g.id, g.runs)
                for g in self.spine.goals().goals
                if g.metric is not None and g.runs is not None
            ],
        )
        new = with_bounds(text, bounds)
        # git is asked whether a person is editing the board only when there is a change
        if new != text and BOARD_NAME not in self.tree.tracked_changes():
            self.spine.write(BOARD_NAME, new)
            self.tree.commit([BOARD_NAME], "loop: the bounds of this run on the board")

    def _roles_said(self) -> tuple[str, str]:
        """Which roles the run applies, and whether an edit to LOOP.md's reaches it."""
        o = self.options
        said = f"maker `{o.maker}`" if o.maker else "maker on a node"
        said += "".join(f"; checker `{c}`" for c in o.checkers)
        said += f"; verifier `{o.verifier}`" if o.verifier else ""
        said += "".join(f"; red team `{c}`" for c in o.red_team)
        if self.roster_roles is not None:
            return said, "LOOP.md's ## Roles, read again before every iteration"
        return said, (
            "fixed for the run: given on the command line, or a parallel or node run (an"
            " edit to LOOP.md's ## Roles counts from the next run)"
        )

    def _loop(self) -> str:
        while True:
            self._reread()
            reason = self._budget_spent()
            if reason:
                return reason
            goals = self.spine.goals().goals
            only = self.options.goal
            if only and not any(g.id == only for g in goals):
                raise LocalUsageError(f"there is no goal {only} in GOALS.md")
            board = self.spine.board()
            chosen = next_goal(goals, board, skip=self.state.set_aside, only=only)
            if chosen.goal is None:
                return only_goal_reason(self.options.goal, board, chosen.reason)
            stop = self._goal(chosen.goal, board.row_of(chosen.goal), resumed=chosen.resumed)
            if stop:
                return stop

    def _budget_spent(self) -> str | None:
        return stop_reason(
            iterations=self.state.iterations,
            budget=self.budget,
            elapsed=time.monotonic() - self.state.started,
            wall_clock=self.wall,
        )

    # --- one goal ---

    def _goal(self, goal: Goal, row: BoardRow, *, resumed: bool) -> str | None:
        """Work one goal through one pass; a reason when the run must stop. The boxes made
        ahead for it and not taken are removed as the pass ends."""
        try:
            return self._goal_pass(goal, row, resumed=resumed)
        finally:
            self.judge.ahead.drop()

    def _goal_pass(self, goal: Goal, row: BoardRow, *, resumed: bool) -> str | None:
        goal, because = self.declared_security(goal)
        if goal.security and not self.options.checkers:
            why = (
                f"{goal.id} is security-critical{because} and there is no checker panel (--checker)"
            )
            self.state.questions.append(why)
            self.state.escalated = True
            return f"escalation: {why}"
        if goal.security and not self.options.red_team:
            why = f"{goal.id} is security-critical{because} and there is no red team (--red-team)"
            self.state.questions.append(why)
            self.state.escalated = True
            return f"escalation: {why}"
        missing: list[str] = []
        if goal.verify_on:  # the jobs' module loads for a goal verified elsewhere only
            from relay.loop.jobs import unauthorised

            missing = unauthorised(self.contract.authorised)
        if missing:
            said = " and ".join(f"`{m}`" for m in missing)
            why = (
                f"{goal.id} must be verified on {goal.verify_on}, but the contract does not"
                f" authorise {said}"
            )
            self.state.questions.append(why)
            self.state.escalated = True
            return f"escalation: {why}"
        if goal.optimises:
            from relay.ratchet.optimise import optimise

            return optimise(self, goal, row, resumed=resumed)
        kept_untracked = self._settle(goal, resumed=resumed)
        self.judge.pack_loose()  # before any box is made (the boxes' packs are made from it)
        # the maker's box and the judged one made while the baseline's acceptance runs
        self.judge.make_ahead(self.tree.head(), goal)
        base = self.judge.baseline(goal)  # in sandboxed clones of HEAD, kept per tree
        blind = unknown(base.checks[1:])
        if blind:
            said = "; ".join(c.said() for c in blind)
            why = f"the baseline's gates cannot be compared ({said})"
            self.state.questions.append(f"{goal.id}: {why}; make them run, then run again")
            self.state.escalated = True
            self._mark(row, state=GoalState.OPEN, note=why, message=f"loop: {goal.id} not started")
            return f"escalation: {why}"
        red = [c.said() for c in base.checks[1:] if not c.passed]
        if red:
            self.say(
                f"{goal.id}: the baseline is red ({'; '.join(red)}); a change is kept when no"
                " gate gets worse"
            )
        if base.results[0].passed:
            self._mark(
                row,
                state=GoalState.DONE,
                note="already met at the baseline",
                message=f"loop: {goal.id} already met",
            )
            return None
        untracked = self.tree.untracked() if kept_untracked is None else kept_untracked
        baseline = Baseline(
            goal=goal.id,
            commit=self.tree.head(),
            at=now_text(),
            coverage=base.coverage,
            untracked=tuple(untracked),
            gates=base.results,
        )
        self.spine.write(BASELINE_NAME, render_baseline(baseline))
        self.started_note(goal, baseline.commit)
        row = self._mark(
            row, state=GoalState.IN_PROGRESS, note="", message=f"loop: {goal.id} in progress"
        )
        try:
            return self._attempts(goal, row, baseline, base)
        except (KeyboardInterrupt, SystemExit):  # Ctrl-C, or SIGTERM (_stopped_by_term)
            self._put_back_stopped(goal, baseline)
            raise

    def _put_back_stopped(self, goal: Goal, baseline: Baseline) -> None:
        """A run stopped mid-attempt: the maker is stopped, the attempt's changes and any
        uncommitted bookkeeping are put back, so the tree is HEAD's, whose board shows the
        goal in progress and whose handover says how it resumes."""
        stop_orphan(self.judge.work / MAKER_PID)
        self._revert_goal(baseline)
        dirty = [p for p in self.tree.tracked_changes() if is_bookkeeping(p)]
        if dirty:
            self.tree.revert(dirty)
        self.say(f"{goal.id}: stopped; its attempt was put back (`relay loop run` resumes it)")

    def declared_security(self, goal: Goal) -> tuple[Goal, str]:
        """The goal, security-critical when the paths it declares fall in an area LOOP.md
        lists (or a contract's security-critical path), decided before its maker runs; and
        why, as words to put after "security-critical" ("" when it was marked so)."""
        if goal.security or not goal.paths:
            return goal, ""
        why = critical_areas(
            goal.paths, self.spine.read(LOOP_FILE) or "", self.contract.security_critical
        )
        if not why:
            return goal, ""
        self.say(f"{goal.id} is security-critical before its maker runs: {'; '.join(why)}")
        return replace(goal, security=True), f" ({'; '.join(why)})"

    def started_note(self, goal: Goal, commit: str) -> None:
        """handover.md says what is in flight before anything long runs, so that a killed
        run loses at most the step in flight."""
        what = (
            f"Working {goal.id} from {commit[:10]}. If this run stops, `relay loop run` (or a"
            " scheduled `--resume`) picks the goal up from BOARD.md, where it is in progress."
        )
        entry = goal_entry(goal=goal.id, title=f"{goal.title} started", what=what, when=now_text())
        self.spine.write(HANDOVER_NAME, self.spine.handover() + entry)

    def _settle(self, goal: Goal, *, resumed: bool) -> list[str] | None:
        """On a resume, put back what a stopped run left and return the untracked files that
        were there before the goal; on a fresh start, refuse a dirty tree (None)."""
        if not resumed:
            dirty = self.tree.tracked_changes()
            if dirty:
                raise ConfigError(
                    f"the work tree has uncommitted changes ({', '.join(dirty[:3])})",
                    hint="commit or stash them, then run `relay loop run` again",
                )
            return None
        base = self.spine.baseline()
        untracked = list(base.untracked) if base.goal == goal.id else self.tree.untracked()
        left = self.tree.changes(untracked)
        if left:
            self.tree.revert(left)
            self.say(f"{goal.id}: resumed; put back {len(left)} path(s) a stopped run left")
        return untracked

    def _revert_goal(self, baseline: Baseline) -> None:
        """Drop the goal's work so far (relay's commit of it, never in the person's clone)
        and put back anything of the goal's the tree holds (a kept change a stop cut short
        before its commit). Again until nothing is left: restoring a .gitignore can reveal
        files it had hidden behind it."""
        self.judge.held.commit = None
        for _ in range(3):
            changes = self._goal_changes(baseline)
            if not changes:
                return
            self.tree.revert(changes)

    def _bring_kept(self, baseline: Baseline) -> list[str]:
        """The kept candidate brought into the person's tree and index (the first time
        it holds anything of the goal's), for the commit that keeps it; its paths."""
        made = self.judge.held.commit
        if made is None:
            return self._goal_changes(baseline)
        paths = [p for p in self.tree.changed_in(made) if not is_bookkeeping(p)]
        self.tree.bring(made, paths)
        self.judge.held.commit = None
        return paths

    def _goal_changes(self, baseline: Baseline) -> list[str]:
        """The goal's changes, without the bookkeeping relay itself is about to commit."""
        return [p for p in self.tree.changes(baseline.untracked) if not is_bookkeeping(p)]

    def _attempts(self, goal: Goal, row: BoardRow, baseline: Baseline, base: Measure) -> str | None:
        progress = Progress()
        first = row.attempts + 1  # this pass's first attempt
        last: Failure | None = None
        rewind = False
        while True:
            self._reread()
            reason = self._budget_spent()
            if reason:
                self._revert_goal(baseline)
                self._mark(
                    row,
                    state=GoalState.OPEN,
                    note=f"stopped: {reason}",
                    message=f"loop: {goal.id} stopped",
                )
                return reason
            spent = self._turns_spent(goal)
            if spent is not None:
                self._revert_goal(baseline)
                self.out_of_turns(goal, row, spent)
                return None
            attempt = row.attempts + 1
            left = self.wall - (time.monotonic() - self.state.started)
            outcome, evidence = self.judge.attempt(
                goal, attempt, baseline, base, last, rewind, limit=left
            )
            if isinstance(outcome, Passed) and goal.verify_on:
                checked = self._remote(goal, baseline)
                if isinstance(checked, str):
                    self._revert_goal(baseline)
                    return self.escalate(goal, row, checked)
                outcome = checked
            decision = after_attempt(
                progress,
                outcome,
                retries=self.retries,
                failed_passes=row.failed_passes,
                backoff=self.backoff,
            )
            if isinstance(decision, Suspend):
                self._revert_goal(baseline)
                return self.pause(goal, row, decision)
            if isinstance(decision, Backoff):
                self.say(f"{goal.id}: transient failure; retrying in {decision.seconds:.1f}s")
                time.sleep(decision.seconds)
                progress = decision.progress
                continue
            if isinstance(decision, Escalate):
                self._revert_goal(baseline)
                return self.escalate(goal, row, decision.reason)
            if isinstance(decision, HandOff):
                self._revert_goal(baseline)
                self.hand_off(goal, row, decision.reason, said=decision.said)
                return None
            if isinstance(decision, Reopen):
                self._revert_goal(baseline)
                self.say(f"{goal.id}: {decision.what}; open again, no attempt counted")
                self._mark(
                    row,
                    state=GoalState.OPEN,
                    note=f"interrupted: {decision.what}",
                    message=f"loop: {goal.id} interrupted",
                )
                return None
            self.state.iterations += 1
            iteration = self._next_iteration()
            if isinstance(decision, Keep):
                self._keep(
                    goal, row, attempt, iteration, baseline, base, evidence, first=first, last=last
                )
                return None
            assert isinstance(outcome, Failed)
            last = self._record_failure(goal, attempt, iteration, outcome, baseline)
            self.handover_failure(last, decision, tried=self.judge.explanation(goal, attempt))
            row = replace(row, attempts=attempt, verdict=outcome.category, notes=outcome.what)
            if isinstance(decision, Retry):
                rewind = decision.rewind
                progress = decision.progress
                if rewind:
                    self._revert_goal(baseline)
                row = self._mark(
                    row,
                    state=GoalState.IN_PROGRESS,
                    note=outcome.what,
                    message=f"loop: {goal.id} attempt {attempt} failed ({outcome.category})",
                )
                continue
            assert isinstance(decision, EndPass)
            self._end_pass(goal, row, attempt, iteration, outcome, baseline, decision)
            return None

    def escalate(self, goal: Goal, row: BoardRow, reason: str) -> str:
        """The run stops for a person: the goal goes back to open with the reason on the
        board and in the questions; the run's stop reason."""
        self.state.escalated = True
        self.state.questions.append(f"{goal.id}: {reason}")
        self._mark(row, state=GoalState.OPEN, note=reason, message=f"loop: {goal.id} escalated")
        return f"escalation: {reason}"

    def hand_off(
        self, goal: Goal, row: BoardRow, reason: str, *, said: str = "the maker cannot do this"
    ) -> None:
        """The maker says it cannot do the goal (or relay holds what no gate can judge):
        the goal is blocked with its reason for a person, no attempt or pass is counted
        against it, and the run goes on."""
        why = f"{said}: {reason}"
        self.state.questions.append(f"{goal.id}: {why}")
        self.state.blocked.append((goal.id, why))
        self.state.set_aside.add(goal.id)
        self.say(f"{goal.id}: {why}")
        self._mark(row, state=GoalState.BLOCKED, note=why, message=f"loop: {goal.id} handed over")

    def pause(self, goal: Goal, row: BoardRow, decision: Suspend) -> str:
        """A usage limit with a reset time: the goal stays in progress, the resume is
        registered, and the run stops (the board and handover are current first)."""
        until = decision.until.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
        if self.suspend is None:
            why = f"{decision.what} until {until}, and no scheduler can resume the run"
            self.state.escalated = True
            self.state.questions.append(f"{goal.id}: {why}")
            self._mark(
                row, state=GoalState.IN_PROGRESS, note=why, message=f"loop: {goal.id} paused"
            )
            return f"escalation: {why}"
        note = f"paused: {decision.what}; resets {until}"
        self._mark(row, state=GoalState.IN_PROGRESS, note=note, message=f"loop: {goal.id} paused")
        registered = self.suspend(decision.until, f"{goal.id}: {decision.what}")
        self.state.paused = True
        self.say(f"{goal.id}: {decision.what}; {registered}")
        return f"paused: {decision.what} until {until}; {registered}"

    def _remote(self, goal: Goal, baseline: Baseline) -> Outcome | str:
        """Verify the candidate on ``goal.verify_on`` through a relay job: an outcome (the
        worker ran nothing: held for a person, no strike), or the reason a person is needed
        before anything is asked (not authorised, no relay)."""
        from relay.loop.jobs import (
            Answer,
            Job,
            branch_for,
            judged,
            not_run,
            open_job,
            parse_jobs,
            unauthorised,
        )

        node = goal.verify_on or ""
        missing = unauthorised(self.contract.authorised)
        if missing:
            said = " and ".join(f"`{m}`" for m in missing)
            return (
                f"{goal.id} must be verified on {node}, but the contract does not authorise {said}"
            )
        if self.remote is None:
            return f"{goal.id} must be verified on {node}, but this run has no relay to ask"
        commit = self.judge.held.commit  # the candidate that passed here
        assert commit is not None
        branch = branch_for(goal)
        self.tree.commit(list(BOOKKEEPING), f"loop: {goal.id} goes to {node} for verification")
        try:
            known = open_job(parse_jobs(self.spine.read(BOARD_NAME) or ""), goal)
            issue = known.issue if known else self.remote.open(goal)
            if known is None:
                self._record_job(Job(goal.id, node, issue, branch))
            self.say(f"{goal.id}: verifying on {node} through job #{issue} ({branch})")
            answer = self.remote.verify(goal, job=issue, commit=commit, branch=branch)
        except RelayError as err:
            answer = Answer(0, 0, "failed", f"the relay could not verify the change: {err}")
        held = not_run(answer, node=node)
        if held is not None:  # nothing ran: not the maker's attempt, a person's question
            self.say(f"{goal.id}: {held}")
            return Declined(held, said="held for a person")
        passed, what, why = judged(answer, node=node, commit=commit)
        self.say(f"{goal.id}: {what}")
        return Passed() if passed else Failed(Category.VERIFY, what, why or what)

    def _record_job(self, job: Job) -> None:
        from relay.loop.jobs import with_job

        self.spine.write(BOARD_NAME, with_job(self.spine.read(BOARD_NAME) or "", job))
        self.tree.commit(
            [BOARD_NAME], f"loop: {job.goal} is verified on {job.node} by job #{job.issue}"
        )

    def _resolve_job(self, goal: Goal, summary: str) -> None:
        """The goal's verification job is resolved with the goal (done or blocked)."""
        from relay.loop.jobs import open_job, parse_jobs, with_job

        known = open_job(parse_jobs(self.spine.read(BOARD_NAME) or ""), goal)
        if known is None or self.remote is None:
            return
        try:
            self.remote.resolve(known.issue, summary)
        except RelayError as err:
            self.state.questions.append(f"{goal.id}: job #{known.issue} was not resolved: {err}")
            return
        text = with_job(self.spine.read(BOARD_NAME) or "", replace(known, state="resolved"))
        self.spine.write(BOARD_NAME, text)
        self.tree.commit([BOARD_NAME], f"loop: job #{known.issue} resolved with {goal.id}")

    def _audit(self, goal: Goal, changes: list[str], after: Measure) -> list[str]:
        """The audit artifact of a security-critical change, written beside it; its path."""
        ballots = list(self.judge.ballots)
        if not ballots:
            return []
        from relay.loop.briefs import gate_lines

        text = render_audit(
            goal=goal.id,
            title=goal.title,
            invariant=goal.accept or goal.title,
            changes=changes,
            gates=gate_lines(after.results),
            ballots=ballots,
            verdict=security_verdict(ballots),
            when=now_text(),
        )
        path = audit_path(goal.id)
        self.spine.write(path, text)
        self.judge.ballots.clear()
        return [path]

    def revise(self) -> None:
        """Propose each learned rule that has prevented a repeat for ``## What works
        here``; each goes in through the checker panel, or not at all."""
        _, rules = self.spine.rules()
        found = proposals(
            rules,
            parse_log(self.spine.read(LOG_NAME) or "")[1],
            self.spine.failures()[1],
            works_here=self._works_here(),
            done={r.goal for r in self.spine.board().rows if r.state is GoalState.DONE},
        )
        for proposal in found:
            old = self.spine.read(LOOP_FILE)
            if old is None:
                return
            new = with_entries(old, [proposal.entry()])
            if outside_works_here(old, new) is not None:  # never anything but that section
                return
            if not self.options.checkers:
                self.state.questions.append(
                    f"R{proposal.rule.number} could join `## {WORKS_HERE}`;"
                    " there is no checker panel to judge it"
                )
                return
            self.spine.write(LOOP_FILE, new)
            candidate = self.tree.candidate([LOOP_FILE], "What works here (candidate)")
            goal = Goal(f"R{proposal.rule.number}", f"{WORKS_HERE}: {proposal.rule.title}", "")
            blocked = self.judge._panel(goal, candidate, Measure((), None, None))
            if blocked is not None:
                self.tree.revert([LOOP_FILE])
                self.say(f"R{proposal.rule.number} stays out of {WORKS_HERE}: {blocked.what}")
                continue
            self.tree.commit(
                [LOOP_FILE],
                f"loop: {WORKS_HERE} gains R{proposal.rule.number} ({proposal.rule.title})",
            )
            self.say(f"R{proposal.rule.number} joins {WORKS_HERE}")

    def _works_here(self) -> str:
        text = self.spine.read(LOOP_FILE) or ""
        part = next((p for p in sections(text) if (p.heading or "") == WORKS_HERE), None)
        return part.text if part else ""

    # --- keeping, failing, recording ---

    def _keep(
        self,
        goal: Goal,
        row: BoardRow,
        attempt: int,
        iteration: int,
        baseline: Baseline,
        base: Measure,
        fresh: Measure | None,
        *,
        first: int,
        last: Failure | None,
    ) -> None:
        after = fresh or base
        gates = gates_delta(base.results, after.results)
        mended = checks_delta(base.checks, after.checks)
        if mended:
            gates += f"; {mended}"
        if goal.may_edit_tests and self.judge.edited_tests:
            edited = ", ".join(self.judge.edited_tests[:5])
            gates += f"; baseline tests changed under --may-edit-tests: {edited}"
        cover = coverage_delta(base.coverage, after.coverage)
        changes = self._bring_kept(baseline)
        explained = self.judge.explanation(goal, attempt)
        self.spine.write(
            HANDOVER_NAME,
            self.spine.handover()
            + kept_entry(
                goal=goal.id,
                title=goal.title,
                accept=goal.accept,
                attempt=attempt,
                first=first,
                iteration=iteration,
                gates=gates,
                coverage=cover,
                explanation=explained,
                when=now_text(),
            ),
        )
        head, rules = self.spine.rules()
        healed = learn_from_heal(last, rules, goal=goal.id, healed_by=attempt, iteration=iteration)
        if healed is not None:
            self.spine.write(RULES_NAME, render_rules(head, (*rules, healed)))
            self.say(f"learned R{healed.number} from a self-heal: {healed.rule}")
        self._log(
            Iteration(
                iteration, goal.id, attempt, "kept", "", baseline.commit[:10], cover, now_text()
            )
        )
        self.spine.write(
            BASELINE_NAME,
            render_baseline(replace(baseline, coverage=after.coverage, gates=after.results)),
        )
        audit = self._audit(goal, changes, after)
        done = replace(row, state=GoalState.DONE, attempts=attempt, verdict="kept", notes=gates)
        self._write_board(done)
        message = (
            f"{goal.id}: {goal.title}\n\n{explained}\n\n"
            f"Kept by relay loop on attempt {attempt}: {gates}; line coverage {cover}."
        )
        sha = self.tree.commit([*changes, *audit, *BOOKKEEPING], message) or ""
        self.state.kept.append(Kept(goal.id, goal.title, sha, gates, cover))
        self.say(f"{goal.id}: kept as {sha[:10]} ({gates})")
        # pushed before the job is resolved: the closure lands on top of the kept commit
        # (both touch handover.md), and the job's BOARD.md row after it
        pushed = self._push_kept(goal)
        if goal.verify_on:
            self._resolve_job(goal, f"{goal.id} kept as {sha[:10]}: {gates}")
            if pushed:
                self._push_kept(goal)
        self.revise()

    def _push_kept(self, goal: Goal) -> bool:
        """Push what was kept when the contract authorises it; whether it went."""
        if "push" not in self.contract.authorised or not self.may_push:
            return False
        try:
            self.tree.push()
        except RelayError as err:  # the change stays kept locally; a person pushes it
            self.state.questions.append(f"{goal.id} was kept but not pushed: {err}")
            return False
        return True

    def handover_failure(self, failure: Failure, decision: Decision, *, tried: str) -> None:
        """handover.md gains the failed attempt: its diagnosis, what the maker said it
        tried, and the next hypothesis (committed with the failure's bookkeeping)."""
        hypothesis = next_hypothesis(failure.category, decision, attempt=failure.attempt)
        entry = failed_entry(failure, tried=tried, hypothesis=hypothesis, when=now_text())
        self.spine.write(HANDOVER_NAME, self.spine.handover() + entry)

    def _record_failure(
        self, goal: Goal, attempt: int, iteration: int, outcome: Failed, baseline: Baseline
    ) -> Failure:
        head, entries = self.spine.failures()
        failure = Failure(
            number=max((f.number for f in entries), default=0) + 1,
            goal=goal.id,
            attempt=attempt,
            iteration=iteration,
            category=outcome.category,
            what=outcome.what,
            diagnosis=outcome.diagnosis,
        )
        self.spine.write(FAILURES_NAME, render_failures(head, (*entries, failure)))
        self._log(
            Iteration(
                iteration,
                goal.id,
                attempt,
                "failed",
                outcome.category,
                baseline.commit[:10],
                "",
                now_text(),
            )
        )
        self.say(f"{goal.id}: attempt {attempt} failed: {outcome.category}: {outcome.what}")
        return failure

    def _end_pass(
        self,
        goal: Goal,
        row: BoardRow,
        attempt: int,
        iteration: int,
        outcome: Failed,
        baseline: Baseline,
        decision: EndPass,
    ) -> None:
        self._revert_goal(baseline)
        head, rules = self.spine.rules()
        rule = learn(self.spine.failures()[1], rules, goal=goal.id, iteration=iteration)
        if rule is not None:
            self.spine.write(RULES_NAME, render_rules(head, (*rules, rule)))
            self.say(f"learned R{rule.number}: {rule.rule}")
        passes = row.failed_passes + 1
        self.state.reverted.append(
            f"{goal.id} pass {passes}: reverted after attempt {attempt}"
            f" ({outcome.category}: {outcome.what})"
        )
        state = GoalState.BLOCKED if decision.block else GoalState.OPEN
        note = f"{outcome.category}: {outcome.what}"
        if decision.block:
            self.state.blocked.append((goal.id, note))
        self.state.set_aside.add(goal.id)
        self._mark(
            replace(row, failed_passes=passes),
            state=state,
            note=note,
            message=f"loop: {goal.id} pass {passes} failed, reverted ({outcome.category})",
        )
        if decision.block and goal.verify_on:
            self._resolve_job(goal, f"{goal.id} blocked: {note}")
        return None

    def _mark(self, row: BoardRow, *, state: GoalState, note: str, message: str) -> BoardRow:
        new = replace(row, state=state, notes=note or row.notes)
        self._write_board(new)
        self.tree.commit(list(BOOKKEEPING), message)
        return new

    def _write_board(self, row: BoardRow) -> None:
        board: Board = self.spine.board()
        self.spine.write(BOARD_NAME, render_board(board.with_row(row)))
        ThreadStore.of(self.root).copy_into(self.root)  # committed with the board

    def _log(self, entry: Iteration) -> None:
        head, rows = self.spine.log()
        self.spine.write(LOG_NAME, render_log(head, (*rows, entry)))

    def _next_iteration(self) -> int:
        return max((r.iteration for r in self.spine.log()[1]), default=0) + 1
