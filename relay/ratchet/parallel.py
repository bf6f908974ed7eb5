"""Parallel makers: `relay loop run --parallel N` (or the contract's "Concurrent makers").

Ground rules: each ready goal is worked by a ratchet of its own in its own git worktree
and branch, from the main line's HEAD, judged there by the same gates; its kept change
(the goal's paths alone, not the worktree's bookkeeping) is a candidate. Candidates are
brought onto the main line one at a time, in dependency order, through the main line's
own judge: the candidate is applied as the maker's work and judged on the baseline it
lands on, so nothing reaches the main line untested; one that no longer applies, or no
longer passes there, has its goal made again on the new baseline. A goal starts only
when every goal it depends on is done on the main line (the barrier). Which goals start,
the order they land and how are decided in :mod:`relay.loop.parallel`.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path

from relay.edges.ownpath import program
from relay.edges.worktree import WorkTree
from relay.loop.classify import Review
from relay.loop.goals import BoardRow, Goal, GoalState, next_goal
from relay.loop.parallel import (
    REDUCER,
    Landing,
    candidate_paths,
    in_group,
    landing,
    landing_order,
    ready_goals,
    reduce_reviews,
    taken_back_subject,
)
from relay.loop.ratchet import Kept, only_goal_reason
from relay.loop.records import HANDOVER_NAME, Iteration, goal_entry
from relay.loop.threads import THREADS_DIR
from relay.ratchet.engine import BOOKKEEPING, Ratchet, now_text
from relay.ratchet.roles import TRANSCRIPTS
from relay.ratchet.sandbox import showing
from relay.ratchet.threads import ThreadStore

LAND_SCRIPT = "land-{goal}.sh"


@dataclass(frozen=True)
class Candidate:
    """What a goal's worktree handed back: the commit it started from, its row there,
    the goal's change as a patch ("" when it kept nothing) and the maker's account."""

    goal: str
    base: str
    row: BoardRow
    patch: str
    explanation: str
    stopped: str
    kept: Kept | None = None  # what its worktree kept: gates and coverage as judged there
    message: str = ""  # the kept commit's message in its worktree
    paths: tuple[str, ...] = ()  # the goal's own paths the patch changes
    job: int = 0  # the relay job a node made it under (0: made here), ended once judged


class Fanout:
    """One parallel run over a clone: the main line's ratchet, and up to ``makers`` goal
    worktrees at once."""

    def __init__(
        self,
        main: Ratchet,
        *,
        makers: int,
        group: str | None = None,
        make: Callable[[Goal, str], Candidate] | None = None,
        settle: Callable[[Candidate, str], None] | None = None,
    ) -> None:
        self.main = main
        self.settle = settle  # ends a candidate's node job with relay's verdict on it
        self.settled: set[int] = set()
        self.makers = makers
        self.group = group
        self.make = make or self.make_in_worktree
        self.remote = make is not None  # the maker is elsewhere: it makes a goal again
        self.lock = threading.Lock()
        self.options = main.options  # the run's own: landing swaps the main line's maker

    # --- the loop ---

    def loop(self) -> str:
        """Start ready goals up to the makers, land what finishes, until nothing is left."""
        r = self.main
        r.say(f"{self.makers} makers at once; {REDUCER}")
        running: dict[str, Future[Candidate]] = {}
        said_waiting: set[str] = set()
        try:
            stop = self._fan(running, said_waiting)
        except BaseException:
            # the pool has waited for the makers already running: a node's job whose
            # candidate was never judged is ended all the same, saying so
            for future in running.values():
                if future.done() and not future.cancelled() and future.exception() is None:
                    with contextlib.suppress(Exception):
                        self._settle(future.result(), "the run stopped before judging it")
            raise
        if stop is not None:
            return stop
        goals = in_group(r.spine.goals().goals, self.group)
        board = r.spine.board()
        chosen = next_goal(goals, board, skip=r.state.set_aside, only=r.options.goal)
        reason = only_goal_reason(r.options.goal, board, chosen.reason)
        if self.group is not None:
            reason = self.review_group(goals) or reason
        return reason

    def _fan(self, running: dict[str, Future[Candidate]], said_waiting: set[str]) -> str | None:
        """Start ready goals up to the makers and land what finishes; the stop reason."""
        r = self.main
        stop: str | None = None
        with ThreadPoolExecutor(max_workers=self.makers) as pool:
            try:
                while True:
                    r._reread()
                    stop = stop or r._budget_spent()
                    goals = r.spine.goals().goals
                    if r.options.goal and not any(g.id == r.options.goal for g in goals):
                        from relay.errors import LocalUsageError

                        raise LocalUsageError(f"there is no goal {r.options.goal} in GOALS.md")
                    pool_goals = [g for g in goals if not r.options.goal or g.id == r.options.goal]
                    board = r.spine.board()
                    if stop is None:
                        ready = ready_goals(
                            pool_goals,
                            board,
                            running=running,
                            skip=r.state.set_aside,
                            slots=self.makers - len(running),
                            group=self.group,
                        )
                        for line in ready.waiting:
                            if line not in said_waiting:
                                said_waiting.add(line)
                                r.say(line)
                        if ready.alone is not None:
                            row = board.row_of(ready.alone)
                            resumed = row.state is GoalState.IN_PROGRESS
                            stop = r._goal(ready.alone, row, resumed=resumed)
                            continue
                        head = r.tree.head()
                        for goal in ready.start:
                            r.say(f"{goal.id}: started in its own worktree from {head[:10]}")
                            running[goal.id] = pool.submit(self.make, goal, head)
                    if not running:
                        break
                    done, _ = wait(list(running.values()), return_when=FIRST_COMPLETED)
                    finished = {gid: f for gid, f in running.items() if f in done}
                    for gid in landing_order(finished, goals):
                        candidate = running.pop(gid).result()
                        landed = self.land(candidate)
                        stop = stop or landed
            except BaseException:
                for future in running.values():
                    future.cancel()
                raise
        return stop

    # --- one goal in its own worktree ---

    def make_in_worktree(self, goal: Goal, base: str) -> Candidate:
        """Work ``goal`` by a ratchet of its own in a worktree of ``base`` on its own
        branch; the candidate it kept (its paths alone), or its row when it kept nothing."""
        r = self.main
        branch = f"relay-loop/parallel/{goal.id}"
        parent = Path(tempfile.mkdtemp(prefix="relay-maker-"))
        where = parent / goal.id
        with self.lock:
            r.tree.git("worktree", "add", "-f", "-q", "-B", branch, str(where), base)
        try:

            def say(line: str) -> None:
                r.say(line if line.startswith(goal.id) else f"{goal.id}: {line}")

            options = replace(self.options, goal=goal.id, resume=False)
            sub = Ratchet(where, options, say=say)
            sub.may_push = False
            report = sub.run()
            tree = WorkTree.open(where)
            row = sub.spine.board().row_of(goal)
            patch, explanation, message = "", "", ""
            paths: list[str] = []
            kept = next((k for k in report.kept if k.goal == goal.id), None)
            if row.state is GoalState.DONE and tree.head() != base and kept is not None:
                changed = tree.git("diff", "--name-only", "--no-renames", "-z", base, kept.commit)
                paths = candidate_paths(p for p in changed.split("\0") if p)
                if paths:
                    patch = tree.git(
                        "diff", "--binary", "--no-color", base, kept.commit, "--", *paths
                    )
                explanation = sub.judge.explanation(goal, row.attempts)
                message = tree.git("log", "-1", "--format=%B", kept.commit).strip()
            _keep_transcripts(sub.judge.work / TRANSCRIPTS, r.judge.work / TRANSCRIPTS)
            return Candidate(
                goal.id, base, row, patch, explanation, report.stopped, kept, message,
                tuple(paths),
            )  # fmt: skip
        finally:
            with self.lock:
                with contextlib.suppress(Exception):
                    r.tree.git("worktree", "remove", "--force", str(where))
                with contextlib.suppress(Exception):
                    r.tree.git("worktree", "prune")
                with contextlib.suppress(Exception):
                    r.tree.git("branch", "-D", branch)
            shutil.rmtree(parent, ignore_errors=True)

    # --- bringing a candidate onto the main line ---

    def land(self, candidate: Candidate, *, again: bool = False) -> str | None:
        """Bring a finished goal onto the main line; a reason when the run must stop.
        A goal made again (``again``) is not made a third time. A node's job ends with
        relay's verdict on what it made, whatever the verdict (even a stop)."""
        try:
            return self._land(candidate, again=again)
        finally:
            self._settle(candidate, "the run stopped before judging it")

    def _settle(self, candidate: Candidate, verdict: str) -> None:
        """End the candidate's node job once, saying relay's verdict."""
        if self.settle is None or not candidate.job or candidate.job in self.settled:
            return
        self.settled.add(candidate.job)
        self.settle(candidate, verdict)

    def _land(self, candidate: Candidate, *, again: bool) -> str | None:
        r = self.main
        goal = r.spine.goals().get(candidate.goal)
        if goal is None:
            self._settle(candidate, "not judged: its goal is no longer in GOALS.md")
            return None
        board = r.spine.board()
        row = board.row_of(goal)
        if row.state is GoalState.DONE:
            self._settle(candidate, "not judged: the goal was already done")
            return None
        if not candidate.patch and candidate.stopped.startswith("interrupted"):
            return self.reopened(goal, row, candidate)
        if not candidate.patch and candidate.row.state is GoalState.DONE:
            # done in its worktree with no change (already met there): the main line checks
            # it on its own baseline, where it is marked done or worked, never taken on trust
            r.say(f"{goal.id}: done in its worktree with no change; checked on the main line")
            return r._goal(goal, row, resumed=False)
        if not candidate.patch:
            self._settle(candidate, f"not kept, nothing to judge: {candidate.stopped}")
            return self.not_kept(goal, row, candidate)
        head = r.tree.head()
        patch = r.judge.work / f"candidate-{goal.id}.patch"
        patch.parent.mkdir(parents=True, exist_ok=True)
        patch.write_text(candidate.patch, encoding="utf-8")
        applies = _applies(r.root, patch)
        how = landing(base=candidate.base, head=head, applies=applies)
        if how is Landing.REMAKE:
            r.say(
                f"{goal.id}: its candidate no longer applies on the main line ({head[:10]});"
                " made again there"
            )
            self._settle(candidate, f"not kept: its diff no longer applies on {head[:10]}")
            return self._remake(goal, row, again=again)
        if how is Landing.JUDGED and candidate.kept is not None and candidate.paths:
            return self._land_as_judged(goal, row, candidate, patch)
        if how is Landing.REJUDGE:
            r.say(f"{goal.id}: the main line moved to {head[:10]}; its candidate is judged there")
        stop = self._judge_candidate(goal, row, patch, candidate.explanation)
        after = r.spine.board().row_of(goal)
        if after.state is GoalState.DONE:
            kept = next((k for k in reversed(r.state.kept) if k.goal == goal.id), None)
            self._settle(
                candidate,
                f"judged by relay's gates and kept as {kept.commit[:10]}"
                if kept is not None
                else "judged by relay's gates and kept",
            )
        else:
            self._settle(
                candidate,
                f"judged by relay's gates and not kept ({after.verdict or after.state.value}"
                + (f": {after.notes[:200]}" if after.notes else "")
                + ")",
            )
        if stop is not None or after.state is GoalState.DONE:
            return stop
        r.say(f"{goal.id}: its candidate does not pass on the main line; made again there")
        r.state.set_aside.discard(goal.id)
        if after.state is GoalState.BLOCKED:
            return None
        return self._remake(goal, after, again=again)

    def _land_as_judged(
        self, goal: Goal, row: BoardRow, candidate: Candidate, patch: Path
    ) -> str | None:
        """The main line is still the commit the candidate was judged on in its worktree,
        so the tree it lands as is the tree the gates, the panel and the verifier passed:
        it is committed as judged, with the main line's own record of it."""
        r = self.main
        kept = candidate.kept
        assert kept is not None
        r.tree.git("apply", "--whitespace=nowarn", str(patch))
        r.state.iterations += 1
        iteration = r._next_iteration()
        r._log(
            Iteration(
                iteration, goal.id, candidate.row.attempts, "kept", "", candidate.base[:10],
                kept.coverage, now_text(),
            )
        )  # fmt: skip
        what = (
            f"Kept as judged in its own worktree from {candidate.base[:10]}, still the main"
            f" line's HEAD: {kept.gates}; line coverage {kept.coverage}."
            + (f"\n\n{candidate.explanation}" if candidate.explanation else "")
        )
        r.spine.write(
            HANDOVER_NAME,
            r.spine.handover()
            + goal_entry(goal=goal.id, title=goal.title, what=what, when=now_text()),
        )
        done = replace(
            row, state=GoalState.DONE, attempts=candidate.row.attempts, verdict="kept",
            notes=kept.gates,
        )  # fmt: skip
        r._write_board(done)
        message = candidate.message or f"{goal.id}: {goal.title}"
        sha = r.tree.commit([*candidate.paths, *BOOKKEEPING], message) or ""
        r.state.kept.append(Kept(goal.id, goal.title, sha, kept.gates, kept.coverage))
        r.say(f"{goal.id}: kept as {sha[:10]} (as judged in its worktree: {kept.gates})")
        r._push_kept(goal)
        return None

    def _remake(self, goal: Goal, row: BoardRow, *, again: bool) -> str | None:
        """Make the goal again on the main line's baseline: by the local maker there, or by
        the remote maker from the main line's HEAD (once)."""
        r = self.main
        if not self.remote:
            return r._goal(goal, row, resumed=False)
        if again:
            r.state.set_aside.add(goal.id)
            return None
        return self.land(self.make(goal, r.tree.head()), again=True)

    def _judge_candidate(
        self, goal: Goal, row: BoardRow, patch: Path, explanation: str
    ) -> str | None:
        """Judge the candidate on the main line as the maker's work: a one-attempt pass
        whose maker applies the patch and gives the worktree maker's account."""
        r = self.main
        # the applier runs where every maker runs, behind the maker's boundary, which hides
        # this clone's git directory: its files live in a folder of their own
        folder = Path(tempfile.mkdtemp(prefix="relay-land-"))
        account = folder / f"candidate-{goal.id}.md"
        account.write_text(explanation or f"{goal.id}: {goal.title}", encoding="utf-8")
        applied = folder / patch.name
        shutil.copyfile(patch, applied)
        script = folder / LAND_SCRIPT.format(goal=goal.id)
        script.write_text(
            "#!/bin/sh\n"
            f"git apply --whitespace=nowarn {shlex.quote(str(applied))} || exit 1\n"
            f'cp {shlex.quote(str(account))} "$RELAY_LOOP_EXPLAIN"\n',
            encoding="utf-8",
        )
        maker = f"sh {shlex.quote(str(script))}"
        options, retries = r.options, r.retries
        r.options = replace(options, maker=maker)
        r.judge = replace(r.judge, options=r.options)
        r.retries = 0  # the same patch twice is the same verdict
        # the candidate was made and judged within its roles' turns: judging it again on
        # the moved main line is that turn's, not a new one
        r.turns_waived.add(goal.id)
        try:
            with showing(folder):  # the machine's /tmp is not the box's: shown read-only
                return r._goal(goal, row, resumed=False)
        finally:
            r.turns_waived.discard(goal.id)
            r.options = options
            r.judge = replace(r.judge, options=options)
            r.retries = retries
            shutil.rmtree(folder, ignore_errors=True)

    def reopened(self, goal: Goal, row: BoardRow, candidate: Candidate) -> str | None:
        """A goal whose maker a person stopped: open again on the main board with no
        attempt or pass counted; it is not set aside, so the run takes it up again."""
        r = self.main
        r._write_board(replace(row, state=GoalState.OPEN, notes=candidate.stopped))
        r.tree.commit(list(BOOKKEEPING), f"loop: {goal.id} interrupted")
        r.say(f"{goal.id}: {candidate.stopped}; open again, no attempt counted")
        return None

    def not_kept(self, goal: Goal, row: BoardRow, candidate: Candidate) -> str | None:
        """A goal its worktree did not keep: its row there comes onto the main board, and
        it is set aside for the rest of this run."""
        r = self.main
        theirs = candidate.row
        new = replace(
            row,
            state=GoalState.OPEN if theirs.state is GoalState.DONE else theirs.state,
            attempts=theirs.attempts,
            failed_passes=theirs.failed_passes,
            verdict=theirs.verdict,
            notes=theirs.notes or candidate.stopped,
        )
        if new.state is GoalState.IN_PROGRESS:
            new = replace(new, state=GoalState.OPEN)
        r._write_board(new)
        r.tree.commit(list(BOOKKEEPING), f"loop: {goal.id} not kept in its worktree")
        r.state.set_aside.add(goal.id)
        if new.state is GoalState.BLOCKED:
            r.state.blocked.append((goal.id, new.notes))
        r.state.reverted.append(f"{goal.id}: not kept in its worktree ({new.notes})")
        r.say(f"{goal.id}: not kept in its worktree ({new.notes})")
        if candidate.stopped.startswith("escalation"):
            r.state.questions.append(f"{goal.id}: {candidate.stopped}")
            r.state.escalated = True
        return None

    # --- the group's whole change, once more ---

    def review_group(self, goals: tuple[Goal, ...]) -> str | None:
        """After every goal of the group is done, the checker panel reviews the group's
        whole change once more (the reducer merges their findings); a block is a question
        for a person and the run's stop reason."""
        r = self.main
        board = r.spine.board()
        if not goals or any(board.row_of(g).state is not GoalState.DONE for g in goals):
            return None
        change = self._group_change(goals)
        if not r.options.checkers or change is None:
            return None
        from relay.loop.briefs import render_review
        from relay.loop.contract import Gate
        from relay.ratchet.measure import REVIEW_ENV
        from relay.ratchet.roles import review

        diff = r.tree.git("diff", "--no-color", change.base, "HEAD", "--", *change.paths)
        head = r.tree.head()  # the group's whole change: its gates in a sandboxed clone
        here = r.judge.measure_at(head, list(r.contract.gates), coverage_report=None)
        group_goal = Goal(
            id=goals[0].id,
            title=f"group {self.group}: " + "; ".join(f"{g.id} {g.title}" for g in goals),
            accept=" && ".join(g.accept for g in goals if g.accept) or Gate("none", "").command,
        )
        answers: list[tuple[str, Review]] = []
        for number, command in enumerate(r.options.checkers, start=1):
            path = r.judge.work / f"group-review-{number}.md"

            def write(again: bool, path: Path = path) -> Path:
                text = render_review(group_goal, diff=diff, results=here.results, again=again)
                path.write_text(text, encoding="utf-8")
                return path

            with r.judge.boxed(head, graders=True) as box:
                got, _ = review(
                    command, write, cwd=box.tree, timeout=r.judge.checker_timeout,
                    who=f"checker {number}", work=r.judge.work, diff=diff, env_name=REVIEW_ENV,
                    credentials=r.judge.credentialed("checker"),
                    thread=(r.options.checker_name(number), f"group-{self.group}"),
                    sandbox=box, threads_root=r.root,
                )  # fmt: skip
            answers.append((f"checker {number}", got))
        reduced = reduce_reviews(answers)
        if not reduced.blocked:
            r.say(f"group {self.group}: the checker panel approves the group's whole change")
            return None
        why = f"the checker panel blocks group {self.group}'s whole change: " + "; ".join(
            f.text for f in reduced.findings if f.blocking
        )
        self.take_back_group(goals, why, [who for who, _ in answers], change)
        r.state.questions.append(why)
        r.state.escalated = True
        return f"escalation: {why}"

    def _group_change(self, goals: tuple[Goal, ...]) -> _Change | None:
        """The group's whole change on the main line (every run's part of it, from the
        commit before its first kept goal), with the paths its kept commits touched."""
        from relay.loop.parallel import group_change

        r = self.main
        log = r.tree.git("log", "--first-parent", "--format=%H%x00%P%x00%s", "HEAD")
        history = []
        for line in log.splitlines():
            sha, parents, subject = [*line.split("\0"), "", ""][:3]
            history.append((sha, (parents.split() or [""])[0], subject))
        found = group_change(history, goals, self.group or "")
        if found is None:
            return None
        paths: list[str] = []
        for sha in found.kept:
            touched = r.tree.git("diff-tree", "--no-commit-id", "--name-only", "--no-renames",
                                 "-r", "-z", "--root", sha)  # fmt: skip
            paths += [p for p in touched.split("\0") if p and p not in paths]
        paths = [
            p for p in candidate_paths(paths)
            if p not in BOOKKEEPING and not p.startswith(THREADS_DIR + "/")
        ]  # fmt: skip
        return _Change(found.base, tuple(paths)) if paths else None

    def take_back_group(
        self, goals: tuple[Goal, ...], why: str, checkers: list[str], change: _Change
    ) -> None:
        """A group whose whole change the panel blocks does not stay on the main line: its
        change (every run's part) is taken back in one commit, its goals are open again
        with the finding in their notes and in each checker's thread on each goal (the
        next brief carries it)."""
        r = self.main
        paths = list(change.paths)
        for path in paths:
            if r.tree.git("ls-tree", "--name-only", change.base, "--", path).strip():
                r.tree.git("checkout", change.base, "--", path)
            else:
                (r.root / path).unlink(missing_ok=True)
        store = ThreadStore.of(r.root)
        names = [r.options.checker_name(n) for n in range(1, len(checkers) + 1)]
        for goal in goals:
            for name in names:
                store.append(name, goal.id, "flagged", why)
        board = r.spine.board()
        note = f"reopened: group {self.group}'s whole change was blocked; taken back"
        for goal in goals:
            r._write_board(replace(board.row_of(goal), state=GoalState.OPEN, notes=note))
            board = r.spine.board()
        r.tree.commit([*paths, *BOOKKEEPING], taken_back_subject(self.group or ""))
        for goal in goals:
            r.state.kept[:] = [k for k in r.state.kept if k.goal != goal.id]
            r.state.reverted.append(f"{goal.id}: {note}")
        r.say(
            f"group {self.group}: its change is taken back and"
            f" {', '.join(g.id for g in goals)} are open again ({why})"
        )


@dataclass(frozen=True)
class _Change:
    """A group's whole change: the commit before it and the paths it touched."""

    base: str
    paths: tuple[str, ...]


def _applies(root: Path, patch: Path) -> bool:
    """Whether the patch applies to the main line's tree as it is."""
    done = subprocess.run(
        [program("git"), "apply", "--check", "--whitespace=nowarn", str(patch)],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode == 0


def _keep_transcripts(source: Path, target: Path) -> None:
    """What the goal's roles printed in its worktree, kept with the main line's (the
    worktree and its git directory go)."""
    if not source.is_dir():
        return
    target.mkdir(parents=True, exist_ok=True)
    for path in source.glob("*.log"):
        shutil.copyfile(path, target / path.name)
