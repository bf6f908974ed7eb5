"""Working an optimisation goal: the baseline measured first, then each attempt in the
maker's sandboxed clone (discarded after: it is the revert), the maker's idea checked
against the ledger, the gates and the metric re-measured by relay in sandboxed clones of
the baseline and the candidate (the candidate's code never runs in the person's clone),
and the change brought into the clone as one commit only when the metric moved past the
threshold in the right direction and every gate still passes.

Ground rules: the same metric command and the same fixed budget (the contract's trial
wall clock) for the baseline and every attempt, the median of the goal's runs counting;
every attempt is a row of EXPERIMENTS.md, kept, reverted or refused.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from relay.edges.steps import StepOutcome, run_step
from relay.loop.agents import Signal, maker_failed
from relay.loop.briefs import BriefFacts, render_optimise_brief, render_review
from relay.loop.checks import moved_line, unexplained, unknown
from relay.loop.classify import Category, Verdict, diagnosis
from relay.loop.contract import Contract, seconds, touched
from relay.loop.goals import BoardRow, Goal, GoalState
from relay.loop.guard import (
    PYTEST_CONFIGS,
    config_pythonpath,
    gate_definition_touched,
    gate_scripts,
    project_hooks_touched,
    runs_the_tree,
    spine_touched,
)
from relay.loop.metric import (
    EXPERIMENTS_NAME,
    KEPT,
    REFUSED,
    REVERTED,
    Experiment,
    append,
    compare_runs,
    discarded,
    fmt,
    ledger_lines,
    median,
    metric_touched,
    metric_value,
    parse_experiments,
    stated_idea,
)
from relay.loop.ratchet import (
    Backoff,
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
    Retry,
    Suspend,
    Transient,
    Wall,
    after_attempt,
    coverage_delta,
    gates_delta,
)
from relay.loop.reach import held_reason
from relay.loop.records import (
    BASELINE_NAME,
    HANDOVER_NAME,
    Baseline,
    Failure,
    Iteration,
    kept_entry,
    render_baseline,
)
from relay.loop.revise import LOOP_FILE, is_security_critical, loop_md_touched
from relay.ratchet.judge import GitState, installed_names, maker_branch_of, reaching
from relay.ratchet.measure import (
    BRIEF_ENV,
    REVIEW_ENV,
    Measure,
    boxed_env,
    coverage_failure,
    measure,
    moves,
    tracked_files,
    tree_state,
)
from relay.ratchet.roles import review, run_role
from relay.ratchet.sandbox import ATTEMPT_RECORD, Sandbox, read_regular, standalone

if TYPE_CHECKING:
    from relay.ratchet.engine import Ratchet

IDEA_NONE = "(no idea stated)"


def _run_metric(goal: Goal, box: Sandbox, work: Path, *, trial: float) -> StepOutcome:
    """One run of the goal's metric in ``box`` (a sandboxed clone), behind its boundary."""
    assert goal.metric is not None
    env = boxed_env(box, work)
    return run_step(box.wrap(goal.metric, env), cwd=box.tree, timeout=trial, env=env)


def metric_runs(goal: Goal, contract: Contract) -> int:
    """How many runs of its metric each arm of ``goal`` takes: the goal's own `Runs:`
    (`--runs`), else the contract's `Metric runs:` (relay's default when it names none)."""
    return goal.runs if goal.runs is not None else contract.budget.runs()


def measure_metric(
    box: Sandbox, goal: Goal, *, runs: int, trial: float, work: Path
) -> tuple[float | None, str]:
    """The median of ``runs`` runs of the goal's metric in ``box`` (None with why when a
    run failed or printed no number)."""
    values = []
    assert goal.metric is not None
    for run in range(1, runs + 1):
        done = _run_metric(goal, box, work, trial=trial)
        value = metric_value(done.output) if done.ok else None
        if value is None:
            return None, f"run {run} of `{goal.metric}` {_no_value(done)}"
        values.append(value)
    return median(values), ""


def interleaved(
    before: Sandbox, after: Sandbox, goal: Goal, *, runs: int, trial: float, work: Path
) -> tuple[tuple[list[float], list[float]] | None, str]:
    """The metric run ``runs`` times in the baseline's tree and the
    candidate's, alternately (A/B/A/B...), so that a machine that slows down or speeds up
    meanwhile weighs on both alike; the two arms' values, or None with why."""
    assert goal.metric is not None
    arms: tuple[list[float], list[float]] = ([], [])
    # each run from an empty scratch HOME and temporary folder, and the tree looked at
    # before and after: a candidate's run that leaves itself a cache in its tree (warm
    # later runs, measured faster) does what no baseline's run does
    files = (tracked_files(before.tree), tracked_files(after.tree))
    seen: list[frozenset[str]] = []
    for run in range(1, runs + 1):
        for arm, box, who in ((0, before, "the baseline"), (1, after, "the candidate")):
            box.fresh_scratch()
            was = tree_state(box.tree, files[arm])
            done = _run_metric(goal, box, work, trial=trial)
            marks = moves(box.tree, files[arm], was)
            if arm == 0:
                seen.append(marks)
            moved = unexplained(marks, was, seen) if arm == 1 else []
            if moved:
                return None, f"run {run} of `{goal.metric}` on {who}: {moved_line(moved)}"
            value = metric_value(done.output) if done.ok else None
            if value is None:
                return None, f"run {run} of `{goal.metric}` on {who} {_no_value(done)}"
            arms[arm].append(value)
    return arms, ""


def _no_value(done: StepOutcome) -> str:
    """Why a run of the metric gave no number."""
    if done.ok:
        return "printed no number as its last line"
    return "ran past the trial wall clock" if done.timed_out else f"exited {done.exit_code}"


class Attempt:
    """One attempt's result: the outcome, the idea, what was measured, the candidate."""

    def __init__(self, outcome: Outcome, idea: str, result: str = "-") -> None:
        self.outcome = outcome
        self.idea = idea
        self.result = result
        self.commit: str | None = None
        self.changes: list[str] = []
        self.after: Measure | None = None
        self.moved = ""


def optimise(run: Ratchet, goal: Goal, row: BoardRow, *, resumed: bool) -> str | None:
    """Work one optimisation goal through one pass; a reason when the run must stop."""
    run._settle(goal, resumed=resumed)
    trial = seconds(run.contract.budget.trial) or 600.0
    runs = metric_runs(goal, run.contract)
    work = run.judge.work
    with run.judge.boxed(run.tree.head()) as box:  # the baseline, in a sandboxed clone
        base = measure(
            box.tree,
            run.contract.gates,
            timeout=run.judge.gate_timeout,
            coverage_report=run.contract.coverage_report,
            stop_at_failure=False,
            box=box,
            work=work,
        )
        blind = unknown(base.checks)
        value, why = (
            (None, "") if blind else measure_metric(box, goal, runs=runs, trial=trial, work=work)
        )
    if blind or value is None:
        said = "; ".join(c.said() for c in blind)
        why = f"the baseline's gates cannot be compared ({said})" if blind else why
        run.state.questions.append(f"{goal.id}: {why}; fix it first")
        run.state.escalated = True
        run._mark(row, state=GoalState.OPEN, note=why, message=f"loop: {goal.id} not started")
        return f"escalation: {why}"
    baseline = Baseline(
        goal=goal.id, commit=run.tree.head(), at=_now(), coverage=base.coverage, gates=base.results
    )
    run.spine.write(BASELINE_NAME, render_baseline(baseline))
    run.started_note(goal, baseline.commit)
    row = run._mark(
        replace(row, verdict=f"baseline {fmt(value)}"),
        state=GoalState.IN_PROGRESS,
        note=f"baseline {fmt(value)}",
        message=f"loop: {goal.id} in progress (baseline {fmt(value)})",
    )
    progress = Progress()
    last: Failure | None = None
    refused: str | None = None
    while True:
        reason = run._budget_spent()
        if reason:
            run._mark(
                row,
                state=GoalState.OPEN,
                note=f"stopped: {reason}",
                message=f"loop: {goal.id} stopped",
            )
            return reason
        number = row.attempts + 1
        tried = _attempt(run, goal, number, value, base, last, refused, runs=runs, trial=trial)
        refused = None
        decision = after_attempt(
            progress,
            tried.outcome,
            retries=run.retries,
            failed_passes=row.failed_passes,
            backoff=run.backoff,
        )
        if isinstance(decision, Suspend):
            return run.pause(goal, row, decision)
        if isinstance(decision, Backoff):
            run.say(f"{goal.id}: transient failure; retrying in {decision.seconds:.1f}s")
            time.sleep(decision.seconds)
            progress = decision.progress
            continue
        if isinstance(decision, Escalate):
            return run.escalate(goal, row, decision.reason)
        if isinstance(decision, HandOff):
            run.hand_off(goal, row, decision.reason, said=decision.said)
            return None
        run.state.iterations += 1
        iteration = run._next_iteration()
        if isinstance(decision, Keep):
            _keep(run, goal, row, number, iteration, baseline, value, base, tried)
            return None
        assert isinstance(tried.outcome, Failed)
        outcome = tried.outcome
        was_refused = outcome.what.startswith("refused:")
        _ledger(
            run,
            goal,
            tried.idea,
            value,
            tried.result,
            REFUSED if was_refused else REVERTED,
            outcome.what,
        )
        if was_refused:
            refused = outcome.diagnosis
        last = run._record_failure(goal, number, iteration, outcome, baseline)
        run.handover_failure(last, decision, tried=f"The idea: {tried.idea}" if tried.idea else "")
        row = replace(row, attempts=number, verdict=outcome.category, notes=outcome.what)
        if isinstance(decision, Retry):
            progress = decision.progress
            row = run._mark(
                row,
                state=GoalState.IN_PROGRESS,
                note=outcome.what,
                message=f"loop: {goal.id} attempt {number} reverted ({outcome.category})",
            )
            continue
        assert isinstance(decision, EndPass)
        run._end_pass(goal, row, number, iteration, outcome, baseline, decision)
        return None


def _attempt(
    run: Ratchet,
    goal: Goal,
    number: int,
    value: float,
    base: Measure,
    last: Failure | None,
    refused: str | None,
    *,
    runs: int,
    trial: float,
) -> Attempt:
    """One attempt in a sandboxed clone of HEAD, removed afterwards whatever happens; its
    gates and metric in sandboxed clones of the candidate and the baseline."""
    judge = run.judge
    _, rows = parse_experiments(run.spine.read(EXPERIMENTS_NAME) or "")
    facts = BriefFacts(
        goal=goal,
        attempt=number,
        rules=run.spine.rules()[1],
        last_failure=last,
        mutable=run.contract.mutable,
        protected=run.contract.protected,
        gates=tuple(g.command for g in run.contract.gates),
    )
    text = render_optimise_brief(
        facts,
        baseline=fmt(value),
        ledger=ledger_lines(rows, goal=goal.id),
        runs=runs,
        refused=refused,
    )
    head = run.tree.head()
    branch = maker_branch_of(goal)
    record = judge.work / ATTEMPT_RECORD
    with standalone(run.root, head, branch, hidden=judge.hidden(), record=record) as box:
        where = box.tree
        box.brief.write_text(text, encoding="utf-8")
        git_state = GitState.of(run.tree)
        ran = run_role(
            judge.options.maker,
            box.brief,
            maker=True,
            env_name=BRIEF_ENV,
            cwd=where,
            timeout=judge.maker_timeout,
            work=judge.work,
            label=f"{goal.id}-attempt-{number}-maker",
            on_start=judge._started,
            cannot=box.cannot,
            credentials=judge.credentialed("maker"),
            sandbox=box,
        )
        done, reading = ran.done, ran.reading
        judge._ended()
        idea = stated_idea(done.output) or IDEA_NONE
        machinery = git_state.put_back(run.tree)
        if machinery:
            what = "touched " + "; ".join(machinery)
            why = "put back by relay: " + "; ".join(machinery) + "; the worktree is discarded"
            return Attempt(Failed(Category.PROTECTED, what, why), idea)
        if reading.signal is Signal.WALL and reading.until is not None:
            what = f"the maker hit a usage limit ({reading.what})"
            return Attempt(Wall(reading.until, what), idea)
        if reading.signal is Signal.TRANSIENT:
            return Attempt(Transient(reading.what), idea)
        if reading.signal is Signal.CANNOT:
            return Attempt(Declined(reading.what), idea)
        if done.timed_out:
            what = f"the maker ran past its {judge.maker_timeout:.0f}s timeout"
            return Attempt(Failed(Category.TIMEOUT, what, diagnosis(done.output)), idea)
        if reading.signal is not Signal.DONE:
            what = maker_failed(reading)
            return Attempt(Failed(Category.CRASH, what, diagnosis(done.output)), idea)
        seen = discarded(idea, rows, goal=goal.id) if idea != IDEA_NONE else None
        if seen is not None:
            what = f"refused: the idea {idea!r} was already discarded (experiment {seen.number})"
            why = (
                f"The ledger shows {seen.idea!r} as {seen.outcome} ({seen.why}). It was not"
                " measured again; state a different idea."
            )
            return Attempt(Failed(Category.METRIC, what, why), idea)
        # the maker's files, hashed with relay's own git directory (the maker's git
        # directory and configuration are never used): its commits are thereby folded
        broken = box.intact()
        if broken is not None:  # read nothing through a link the maker put in its box
            what = f"the maker's box is not as relay made it: {broken}"
            return Attempt(Failed(Category.PROTECTED, what, what + "; nothing was taken"), idea)
        taken = run.tree.take(where, head, skip=box.private)
        if taken.refused is not None:
            what = f"relay cannot take the candidate into the clone: {taken.refused}"
            return Attempt(Failed(Category.PROTECTED, what, what + "; nothing was taken"), idea)
        changes = taken.paths
        bad = _protected(run, where, changes, declared=goal.paths)
        if bad:
            what = "touched " + "; ".join(why for _, why in bad)
            return Attempt(Failed(Category.PROTECTED, what, "discarded with its clone"), idea)
        metric_scripts = gate_scripts(  # what the metric's command runs in turn (a script's script)
            [goal.metric or ""],
            [*run.tree.files_at("HEAD"), *changes],
            lambda p: run.tree.show("HEAD", p),
            root=str(run.tree.root),
        )
        own = sorted(
            {
                *metric_touched(goal.metric or "", goal.metric_files, changes),
                *metric_scripts & {*changes},
            }
        )
        if own:
            what = f"refused: the attempt changes the metric's own files ({', '.join(own)})"
            why = (
                "The metric is measured with the baseline's copy of the files it runs; a change"
                " to them is discarded unmeasured. Improve the code the metric measures instead."
            )
            return Attempt(Failed(Category.PROTECTED, what, why), idea)
        if not changes:
            return Attempt(Failed(Category.METRIC, "the maker changed nothing", ""), idea)
        # the candidate's objects come into the person's clone by relay's hand alone
        made = run.tree.commit_tree(taken.tree, head, f"{goal.id}: {goal.title} (candidate)")
    # the maker's clone is gone; the candidate's code runs only in sandboxed clones
    with judge.boxed(made) as candidate:
        after = measure(
            candidate.tree,
            run.contract.gates,
            timeout=judge.gate_timeout,
            coverage_report=run.contract.coverage_report,
            stop_at_failure=True,
            against=base,
            box=candidate,
            work=judge.work,
        )
    failed = after.failure or coverage_failure(base.coverage, after.coverage)
    if failed is not None:
        f = failed
        what = f"{f.what}: a change that breaks a gate is a regression, whatever the metric"
        return Attempt(replace(f, what=what), idea)
    # fresh clones for the metric: what the gates left behind (caches) is not measured
    with judge.boxed(head) as before, judge.boxed(made) as candidate:
        arms, why = interleaved(before, candidate, goal, runs=runs, trial=trial, work=judge.work)
    if arms is None:
        return Attempt(Failed(Category.METRIC, why, why), idea)
    result = median(arms[1])
    moved = compare_runs(*arms, direction=goal.direction, threshold=goal.threshold)
    if not moved.improved:
        what = f"the metric did not move enough: {moved.text}"
        return Attempt(Failed(Category.METRIC, what, what), idea, fmt(result))
    reached = reaching(run.tree, changes, made)
    said = [r.said() for r in reached]
    blocked = _panel(run, goal, made, after, reached=said)
    if blocked is not None:
        return Attempt(blocked, idea, fmt(result))
    run.judge.ballots.clear()
    if is_security_critical(goal.security, changes, run.contract.security_critical):
        breached = run.judge._security(goal, made, after, reached=said)
        if breached is not None:
            return Attempt(breached, idea, fmt(result))
    if reached:  # a metric code can special-case is no measure: a person reads it
        held = Declined(held_reason(reached, made), said="held for a person")
        return Attempt(held, idea, fmt(result))
    tried = Attempt(Passed(), idea, fmt(result))
    tried.commit, tried.changes, tried.after, tried.moved = made, changes, after, moved.text
    return tried


def _protected(
    run: Ratchet,
    where: Path,
    changes: list[str],
    *,
    declared: tuple[str, ...] = (),
) -> list[tuple[str, str]]:
    """What no maker may change, judged on the maker's files (under ``where``, read as
    its own regular files) against HEAD; the files the gates' commands run define them
    too (the metric's own files are refused by ``metric_touched``, unmeasured)."""
    tree = run.tree
    at_head = tree.files_at("HEAD")
    commands = [g.command for g in run.contract.gates]
    gate_files = gate_scripts(
        commands, [*at_head, *changes], lambda p: tree.show("HEAD", p), root=str(tree.root)
    )
    deleted = [p for p in changes if not (where / p).exists()]
    texts = {p: (tree.show("HEAD", p), _read(where / p)) for p in changes}
    loop_md = None
    if LOOP_FILE in changes:
        loop_md = loop_md_touched(texts[LOOP_FILE][0], texts[LOOP_FILE][1])
    return [
        *([(LOOP_FILE, loop_md)] if loop_md else []),
        *touched(changes, run.contract, texts=texts),
        *spine_touched(changes),
        *gate_definition_touched(
            changes,
            at_baseline=at_head,
            deleted=deleted,
            texts=texts,
            pythonpath=config_pythonpath({n: tree.show("HEAD", n) for n, _ in PYTEST_CONFIGS}),
            installed=installed_names(tree.root),
            gate_files=gate_files,
            gates_run_tree=runs_the_tree(
                commands, at_head, root=str(tree.root), scripts=gate_files
            ),
        ),
        *project_hooks_touched(changes, declared=declared, at_baseline=at_head),
    ]


def _read(path: Path) -> str | None:
    """A file of the maker's, as its own regular file (never through a link)."""
    data = read_regular(path, 16 * 1024 * 1024)
    try:
        return data.decode("utf-8") if data or path.is_file() else None
    except UnicodeDecodeError:
        return None


def _panel(
    run: Ratchet, goal: Goal, made: str, after: Measure, *, reached: Sequence[str] = ()
) -> Failed | None:
    """Each checker reviews the candidate, in a read-only sandboxed clone of it (with none,
    the diff is not asked of git)."""
    if not run.options.checkers:
        return None
    diff = run.tree.diff(made)
    for number, command in enumerate(run.options.checkers, start=1):
        path = run.judge.work / f"review-{number}.md"

        def write(again: bool, path: Path = path) -> Path:
            path.write_text(
                render_review(goal, diff=diff, results=after.results, again=again, reached=reached),
                encoding="utf-8",
            )
            return path

        with run.judge.boxed(made, graders=True) as box:
            got, _ = review(
                command,
                write,
                cwd=box.tree,
                timeout=run.judge.checker_timeout,
                who=f"checker {number}",
                work=run.judge.work,
                diff=diff,
                env_name=REVIEW_ENV,
                credentials=run.judge.credentialed("checker"),
                sandbox=box,
                threads_root=run.root,
            )
        if got.verdict is Verdict.BLOCK:
            findings = "\n".join(f"- {f}" for f in got.findings) or "- (no findings given)"
            return Failed(Category.CHECKER, f"checker {number} blocked", findings)
    return None


def _ledger(
    run: Ratchet, goal: Goal, idea: str, value: float, result: str, outcome: str, why: str
) -> None:
    text, _ = append(
        run.spine.read(EXPERIMENTS_NAME),
        Experiment(0, goal.id, idea, fmt(value), result, outcome, why, _now()),
    )
    run.spine.write(EXPERIMENTS_NAME, text)


def _keep(
    run: Ratchet,
    goal: Goal,
    row: BoardRow,
    number: int,
    iteration: int,
    baseline: Baseline,
    value: float,
    base: Measure,
    tried: Attempt,
) -> None:
    """Bring the candidate's changes into the clone and commit them with the record."""
    assert tried.commit is not None and tried.after is not None
    run.tree.restore_to(tried.commit, tried.changes)
    gates = gates_delta(base.results, tried.after.results)
    cover = coverage_delta(base.coverage, tried.after.coverage)
    summary = f"metric {tried.moved}; {gates}; line coverage {cover}"
    _ledger(run, goal, tried.idea, value, tried.result, KEPT, tried.moved)
    entry = kept_entry(
        goal=goal.id,
        title=goal.title,
        accept="",
        attempt=number,
        first=row.attempts + 1,
        iteration=iteration,
        gates=gates,
        coverage=cover,
        metric=tried.moved,
        explanation=f"The idea: {tried.idea}",
        when=_now(),
    )
    run.spine.write(HANDOVER_NAME, run.spine.handover() + entry)
    run._log(Iteration(iteration, goal.id, number, "kept", "", baseline.commit[:10], cover, _now()))
    done = replace(row, state=GoalState.DONE, attempts=number, verdict="kept", notes=summary)
    run._write_board(done)
    message = f"{goal.id}: {goal.title}\n\nKept by relay loop: {summary}.\nIdea: {tried.idea}"
    from relay.ratchet.engine import BOOKKEEPING

    audit = run._audit(goal, tried.changes, tried.after)
    sha = run.tree.commit([*tried.changes, *audit, *BOOKKEEPING], message) or ""
    run.state.kept.append(Kept(goal.id, goal.title, sha, summary, cover))
    run.say(f"{goal.id}: kept as {sha[:10]} ({summary})")
    run.revise()


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
