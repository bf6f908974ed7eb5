"""Random interleavings of both nodes' passes, strangers, edits, crashes and lost disks.

The invariants the protocol promises, checked after every step of every run:
exactly one baton label on an open job; no task run twice; no task run that the
controller did not post through `relay task`, or that was edited before it ran; no
result notified twice; a pass applied twice, or fired twice, changes nothing; `relay
task` refuses exactly the callers the worker would ignore; and passes of both nodes
reach a fixed point (no baton ping-pong, even over edited TASKs and RESULTs) in which
the job is not stuck.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from protocol_world import ALICE, BOB, CONTROLLER, EXECUTE_STEPS, MALLORY, WORKER, World

from relay.errors import LocalUsageError
from relay.protocol import (
    ClosureMsg,
    Comment,
    ExecuteTask,
    Ignore,
    NotifyResult,
    Outcome,
    ResultMsg,
    TaskMsg,
    TearDown,
    UntrustedAccount,
    User,
    Wait,
    decide,
    parse_message,
    plan_hypothesis,
    plan_open_job,
    plan_resolve,
    plan_strike,
    plan_task,
    render_message,
)
from relay.protocol.labels import BATONS, Label
from relay.protocol.wire import MessageRejected
from relay.protocol.work import LEASE

STEPS = st.lists(
    st.sampled_from(["python -V", "make test", "ver", "ipconfig /all"]), min_size=1, max_size=3
)
GARBAGE = st.one_of(
    st.text(max_size=200),
    st.just('### TASK 1\n\nrm -rf /\n\n<!-- relay:v1 {"kind":"task"} -->'),
    st.just("<!-- relay:v9 {} -->"),
    st.binary(max_size=50).map(lambda b: b.decode("latin-1")),
)
CALLERS = [ALICE, ALICE, BOB, MALLORY]


class Interleavings(RuleBasedStateMachine):
    """One job between the controller and the worker, with everyone else meddling."""

    @initialize()
    def open_job(self) -> None:
        self.world = World()
        plan = plan_open_job(
            self.world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
        )
        self.issue = self.world.open_issue(plan)
        self.legit: dict[int, TaskMsg] = {}
        self.edited: set[int] = set()
        self.seen_runs = 0

    # --- the controller ---------------------------------------------------------
    @rule(steps=STEPS, crash_before_baton=st.booleans(), caller=st.sampled_from(CALLERS))
    def controller_posts_a_task(
        self, steps: list[str], crash_before_baton: bool, caller: User
    ) -> None:
        try:
            plan = plan_task(
                self.world.issues[self.issue],
                self.world.master,
                node=CONTROLLER,
                caller=caller.id,
                steps=tuple(steps),
            )
        except UntrustedAccount:
            assert caller == MALLORY, "refused an account in the worker's row"
            return
        except LocalUsageError:
            return
        assert caller != MALLORY, "planned a TASK the worker would ignore"
        message = parse_message(plan.comments[0], issue=self.issue)
        assert isinstance(message, TaskMsg) and message.task not in self.legit
        self.legit[message.task] = message
        if crash_before_baton:
            plan = plan.model_copy(update={"labels": None})
        self.world.run_plan(plan, CONTROLLER, caller)

    @rule()
    def controller_pass(self) -> None:
        for action in decide(self.world.snapshot(CONTROLLER), CONTROLLER, self.world.now):
            if isinstance(action, NotifyResult):
                key = (CONTROLLER, action.issue, action.task)
                assert key not in self.world.notifications, "asked to notify twice"
            self.world.apply(CONTROLLER, action)

    def controller_strikes(self, text: str) -> None:
        try:
            issue = self.world.issues[self.issue]
            plan = plan_hypothesis(
                issue, self.world.master, node=CONTROLLER, text=text, outcome=Outcome.REFUTED
            )
            self.world.run_plan(plan, CONTROLLER)
            issue = self.world.issues[self.issue]
            self.world.run_plan(plan_strike(issue, self.world.master, node=CONTROLLER), CONTROLLER)
        except LocalUsageError:
            return

    def a_person_unparks(self) -> None:
        labels = self.world.issues[self.issue].labels
        self.world.set_labels(self.issue, tuple(n for n in labels if n != Label.NEEDS_HUMAN.value))

    def controller_resolves(self, crash: bool) -> None:
        if len(self.legit) < 3:  # let most runs get some work done first
            return
        try:
            plan = plan_resolve(
                self.world.issues[self.issue],
                self.world.master,
                node=CONTROLLER,
                summary="done",
                force="the fuzzer resolves at any point",
                now=self.world.now,
            )
        except LocalUsageError:
            return
        if crash:  # the closure got posted, nothing else
            plan = plan.model_copy(update={"body": None, "labels": None, "close": False})
        self.world.run_plan(plan, CONTROLLER)

    # --- the worker ------------------------------------------------------------
    @rule(crash_at=st.none() | st.sampled_from(EXECUTE_STEPS))
    def worker_pass(self, crash_at: str | None) -> None:
        actions = decide(self.world.snapshot(WORKER), WORKER, self.world.now)
        for action in actions:
            if isinstance(action, ExecuteTask):
                key = (action.issue, action.task.task)
                # a claim ref is taken over only when it is this node's own attempt's, or
                # another runner's bare ref past its grace
                mine = self.world.records(WORKER)
                assert key not in self.world.claim_refs or (
                    action.takeover and (key in mine.attempts or key in mine.bare_seen)
                ), "asked to run a claimed task"
            self.world.apply(WORKER, action, crash_at=crash_at)

    def worker_loses_its_disk(self) -> None:
        self.world.local.pop(WORKER, None)

    def time_passes_beyond_a_lease(self) -> None:
        self.world.tick(int(LEASE.total_seconds()) + 1)

    # --- duplicates ---------------------------------------------------------------
    @rule(node=st.sampled_from([CONTROLLER, WORKER]))
    def the_same_decision_applied_twice_changes_nothing(self, node: str) -> None:
        actions = decide(self.world.snapshot(node), node, self.world.now)
        for action in actions:
            self.world.apply(node, action)
        once = self.world.state_key()
        for action in actions:
            self.world.apply(node, action)
        assert self.world.state_key() == once

    @rule(node=st.sampled_from([CONTROLLER, WORKER]))
    def a_pass_fired_twice_changes_nothing_the_second_time(self, node: str) -> None:
        self.world.pass_of(node)
        once = self.world.state_key()
        again = self.world.pass_of(node)
        assert self.world.state_key() == once
        assert all(isinstance(a, Ignore | Wait | TearDown) for a in again), again

    # --- everyone else --------------------------------------------------------------
    def someone_posts_garbage(self, body: str, trusted: bool) -> None:
        self.world.post(self.issue, ALICE if trusted else MALLORY, body)

    def a_stranger_posts_a_well_formed_task(self, offset: int, steps: list[str]) -> None:
        number = max([0, *self.legit]) + offset or 1
        forged = TaskMsg(
            issue=self.issue, node=CONTROLLER, task=number, objective="o", steps=tuple(steps)
        )
        self.world.post(self.issue, MALLORY, render_message(forged))

    def a_stranger_copies_a_real_task(self) -> None:
        if self.legit:
            self.world.post(self.issue, MALLORY, render_message(self.legit[max(self.legit)]))

    def a_stranger_forges_a_result_and_a_closure(self) -> None:
        number = max([1, *self.legit])
        result = ResultMsg(
            issue=self.issue, node=WORKER, task=number, status="done", summary="fake"
        )
        closure = ClosureMsg(
            issue=self.issue, node=CONTROLLER, summary="fake", resolved_at=self.world.now
        )
        self.world.post(self.issue, MALLORY, render_message(result))
        self.world.post(self.issue, MALLORY, render_message(closure))

    def an_instruction_account_posts_a_malformed_task(self, steps: list[str]) -> None:
        number = max([0, *self.legit]) + 1
        task = TaskMsg(
            issue=self.issue, node=CONTROLLER, task=number, objective="o", steps=tuple(steps)
        )
        self.world.post(self.issue, ALICE, render_message(task).replace("### TASK", "### Task", 1))

    def someone_edits_a_comment(self, data: st.DataObject, steps: list[str]) -> None:
        comments = self.world.issues[self.issue].comments
        if not comments:
            return
        self.edit_task(data.draw(st.sampled_from(comments)), steps)

    def edit_task(self, comment: Comment, steps: list[str]) -> None:
        try:
            message = parse_message(comment.body, issue=self.issue)
        except MessageRejected:
            self.world.edit(self.issue, comment.id, comment.body + "\nedited")
            return
        if isinstance(message, TaskMsg):
            if self.legit.get(message.task) == message and comment.author.id == ALICE.id:
                self.edited.add(message.task)
            message = message.model_copy(update={"steps": tuple(steps)})
        self.world.edit(self.issue, comment.id, render_message(message))

    @rule(
        what=st.sampled_from(
            [
                "garbage",
                "forged-task",
                "copied-task",
                "forged-result",
                "malformed",
                "edit",
                "lose-disk",
                "time",
                "strike",
                "unpark",
                "resolve",
            ]
        ),
        data=st.data(),
    )
    def meddle(self, what: str, data: st.DataObject) -> None:
        """Everything that is not a clean pass: strangers, edits, crashes, people, time."""
        if what == "garbage":
            self.someone_posts_garbage(data.draw(GARBAGE), data.draw(st.booleans()))
        elif what == "forged-task":
            self.a_stranger_posts_a_well_formed_task(data.draw(st.integers(0, 1)), data.draw(STEPS))
        elif what == "copied-task":
            self.a_stranger_copies_a_real_task()
        elif what == "forged-result":
            self.a_stranger_forges_a_result_and_a_closure()
        elif what == "malformed":
            self.an_instruction_account_posts_a_malformed_task(data.draw(STEPS))
        elif what == "edit":
            self.someone_edits_a_comment(data, data.draw(STEPS))
        elif what == "lose-disk":
            self.worker_loses_its_disk()
        elif what == "time":
            self.time_passes_beyond_a_lease()
        elif what == "strike":
            self.controller_strikes(data.draw(st.sampled_from(["disk full", "bad PATH"])))
        elif what == "unpark":
            self.a_person_unparks()
        else:
            self.controller_resolves(data.draw(st.booleans()))

    @rule(steps=STEPS)
    def someone_edits_the_newest_task(self, steps: list[str]) -> None:
        """Edits of a pending TASK are the sharpest attack, so they get a rule of their own."""
        comments = self.world.issues[self.issue].comments
        tasks = [c for c in comments if c.author == ALICE and "### TASK" in c.body]
        if tasks:
            self.edit_task(tasks[-1], steps)

    @rule(hand=st.booleans())
    def someone_edits_the_newest_answer(self, hand: bool) -> None:
        """An edited RESULT once made the two nodes swap the baton forever."""
        comments = self.world.issues[self.issue].comments
        answers = [c for c in comments if c.author == BOB and "### " in c.body]
        if answers:
            body = answers[-1].body
            self.world.edit(self.issue, answers[-1].id, "Typo fixed.\n\n" + body if hand else body)

    @rule()
    def both_nodes_pass_until_they_settle(self) -> None:
        """Passes of both nodes reach a fixed point, and then the job is not stuck: the
        controller may post, or the worker waits out a live lease, or a person must act."""
        for _ in range(6):
            changed = False
            for node in (CONTROLLER, WORKER):
                before = self.world.state_key()
                self.world.pass_of(node)
                changed |= self.world.state_key() != before
            if not changed:
                break
        else:
            raise AssertionError("the nodes never settle: the baton goes back and forth")
        issue = self.world.issues[self.issue]
        if issue.state == "closed" or Label.NEEDS_HUMAN.value in issue.labels:
            return
        if self.world.baton(self.issue) != {Label.AWAITING_CONTROLLER.value}:
            waits = decide(self.world.snapshot(WORKER), WORKER, self.world.now)
            assert any(isinstance(a, Wait) for a in waits), ("stuck", issue.labels, waits)

    # --- what must always hold ---------------------------------------------------------
    @invariant()
    def exactly_one_baton_while_open(self) -> None:
        issue = self.world.issues[self.issue]
        batons = [n for n in issue.labels if n in BATONS]
        if issue.state == "open":
            assert len(batons) == 1, issue.labels
        else:
            assert batons == [] and Label.RESOLVED.value in issue.labels

    @invariant()
    def no_task_run_twice_and_none_but_the_controllers(self) -> None:
        keys = [(i, n) for i, n, _ in self.world.runs]
        assert len(keys) == len(set(keys)), keys
        for _, number, task in self.world.runs[self.seen_runs :]:
            assert self.legit.get(number) == task, "ran a task the controller never posted"
            assert number not in self.edited, "ran a task edited before it ran"
        self.seen_runs = len(self.world.runs)

    def teardown(self) -> None:
        event(f"tasks run: {min(len(self.world.runs), 3)}+")
        event(f"notified: {bool(self.world.notifications)}")
        event(f"closed: {self.world.issues[self.issue].state == 'closed'}")

    @invariant()
    def no_result_notified_twice(self) -> None:
        assert len(self.world.notifications) == len(set(self.world.notifications))


# `make test` tries 80 interleavings; `make bench` (bench/bench_fuzz.py) tries 1,000.
Interleavings.TestCase.settings = settings(
    max_examples=int(os.environ.get("RELAY_INTERLEAVINGS", "80")),
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestInterleavings = Interleavings.TestCase
