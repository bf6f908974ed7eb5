"""Judging one attempt: run the maker on its brief, then the protected paths, the
acceptance command and the gates, the coverage comparison, the checker panel, and relay's
own re-run in a fresh worktree of the candidate commit, with the optional verifier.

Ground rules: the first thing that fails is the attempt's outcome, with its category and
diagnosis; a transient failure of the maker is told apart so that it costs nothing; only
the maker edits the tree (a tree that changed while it was judged fails).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from relay.edges.worktree import WorkTree
from relay.loop.briefs import BriefFacts, render_brief, render_evidence, render_review
from relay.loop.classify import Category, Verdict, diagnosis, is_transient
from relay.loop.contract import Contract, Gate, split_protected, touched
from relay.loop.goals import Goal
from relay.loop.ratchet import (
    Failed,
    Outcome,
    Passed,
    Transient,
    coverage_delta,
)
from relay.loop.records import Baseline, Failure, handover_entries
from relay.ratchet.files import Spine
from relay.ratchet.measure import (
    BRIEF_ENV,
    Measure,
    coverage_failure,
    measure,
    review,
    run_with_file,
)


@dataclass(frozen=True)
class Options:
    """What `relay loop run` was asked to do."""

    maker: str
    checkers: tuple[str, ...] = ()
    verifier: str | None = None
    goal: str | None = None
    max_iterations: int | None = None
    wall_clock: float | None = None


@dataclass(frozen=True)
class Judge:
    """What an attempt is judged with."""

    tree: WorkTree
    spine: Spine
    contract: Contract
    options: Options
    work: Path  # where briefs and review files go (inside .git, outside the work tree)
    maker_timeout: float
    gate_timeout: float

    @property
    def root(self) -> Path:
        return self.tree.root

    def gates(self, goal: Goal) -> list[Gate]:
        """The acceptance command, then every contract gate."""
        return [Gate("accept", goal.accept), *self.contract.gates]

    def attempt(
        self,
        goal: Goal,
        attempt: int,
        baseline: Baseline,
        base: Measure,
        last: Failure | None,
        rewind: bool,
    ) -> tuple[Outcome, Measure | None]:
        """Run the maker once and judge what it left."""
        brief = self.work / "brief.md"
        brief.parent.mkdir(parents=True, exist_ok=True)
        brief.write_text(render_brief(self._facts(goal, attempt, last, rewind)), encoding="utf-8")
        head = self.tree.head()
        done = run_with_file(
            self.options.maker,
            brief,
            env_name=BRIEF_ENV,
            cwd=self.root,
            timeout=self.maker_timeout,
        )
        self.tree.undo_commits_since(head)
        if (
            not done.ok
            and not done.timed_out
            and is_transient(exit_code=done.exit_code, output=done.output)
        ):
            return Transient(f"exit {done.exit_code}"), None
        if done.timed_out:
            what = f"the maker ran past its {self.maker_timeout:.0f}s timeout"
            return Failed(Category.TIMEOUT, what, diagnosis(done.output)), None
        if done.exit_code != 0:
            what = f"the maker exited {done.exit_code}"
            return Failed(Category.CRASH, what, diagnosis(done.output)), None
        return self._judge(goal, baseline, base)

    def _judge(
        self, goal: Goal, baseline: Baseline, base: Measure
    ) -> tuple[Outcome, Measure | None]:
        changes = self.tree.changes(baseline.untracked)
        bad = touched(changes, self.contract, texts=self._texts(changes))
        if bad:
            self.tree.revert(sorted({path for path, _ in bad}))
            what = "; ".join(why for _, why in bad)
            return Failed(Category.PROTECTED, f"touched {what}", "put back by relay: " + what), None
        here = measure(
            self.root,
            self.gates(goal),
            timeout=self.gate_timeout,
            coverage_report=self.contract.coverage_report,
            stop_at_failure=True,
        )
        failed = here.failure or coverage_failure(base.coverage, here.coverage)
        if failed:
            return failed, here
        candidate = self.tree.candidate(changes, f"{goal.id}: {goal.title} (candidate)")
        blocked = self._panel(goal, candidate, here)
        if blocked:
            return blocked, here
        outcome, fresh = self._verify(goal, candidate, base)
        if isinstance(outcome, Passed):
            again = self.tree.candidate(self.tree.changes(baseline.untracked), "recheck")
            if self.tree.tree_of(again) != self.tree.tree_of(candidate):
                what = "the work tree changed while the candidate was judged"
                why = "a checker or the verifier edited the tree; only the maker may"
                return Failed(Category.CRASH, what, why), fresh
        return outcome, fresh

    def _texts(self, changes: list[str]) -> dict[str, tuple[str | None, str | None]]:
        texts = {}
        for entry in self.contract.protected:
            path, heading = split_protected(entry)
            if heading is not None and path in changes:
                texts[path] = (self.tree.show("HEAD", path), self.spine.read(path))
        return texts

    def _panel(self, goal: Goal, candidate: str, here: Measure) -> Failed | None:
        diff = self.tree.diff(candidate)
        for number, command in enumerate(self.options.checkers, start=1):
            path = self.work / f"review-{number}.md"

            def write(again: bool, path: Path = path) -> Path:
                text = render_review(goal, diff=diff, results=here.results, again=again)
                path.write_text(text, encoding="utf-8")
                return path

            got, _ = review(
                command, write, cwd=self.root, timeout=self.maker_timeout, who=f"checker {number}"
            )
            if got.verdict is Verdict.BLOCK:
                findings = "\n".join(f"- {f}" for f in got.findings) or "- (no findings given)"
                return Failed(Category.CHECKER, f"checker {number} blocked", findings)
        return None

    def _verify(self, goal: Goal, candidate: str, base: Measure) -> tuple[Outcome, Measure | None]:
        with self.tree.fresh(candidate) as where:
            fresh = measure(
                where,
                self.gates(goal),
                timeout=self.gate_timeout,
                coverage_report=self.contract.coverage_report,
                stop_at_failure=True,
            )
        failed = fresh.failure or coverage_failure(base.coverage, fresh.coverage)
        if failed:
            return replace(
                failed, what=f"in a fresh worktree of the candidate: {failed.what}"
            ), fresh
        if self.options.verifier:
            path = self.work / "evidence.md"
            cover = coverage_delta(base.coverage, fresh.coverage)

            def write(again: bool) -> Path:
                text = render_evidence(goal, results=fresh.results, coverage=cover, again=again)
                path.write_text(text, encoding="utf-8")
                return path

            got, _ = review(
                self.options.verifier,
                write,
                cwd=self.root,
                timeout=self.maker_timeout,
                who="the verifier",
            )
            if got.verdict is Verdict.BLOCK:
                findings = "\n".join(f"- {f}" for f in got.findings) or "- (no findings given)"
                return Failed(Category.CHECKER, "the verifier blocked", findings), fresh
        return Passed(), fresh

    def _facts(self, goal: Goal, attempt: int, last: Failure | None, rewind: bool) -> BriefFacts:
        return BriefFacts(
            goal=goal,
            attempt=attempt,
            rules=self.spine.rules()[1],
            handover=tuple(handover_entries(self.spine.handover())[-3:]),
            last_failure=last,
            rewind=rewind,
            mutable=self.contract.mutable,
            protected=self.contract.protected,
            gates=tuple(g.command for g in self.contract.gates),
        )
