"""decide() on concrete snapshots: one test per rule of the worker's and controller's turn."""

from __future__ import annotations

import typing

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from protocol_world import (
    ALICE,
    BOB,
    CONTROLLER,
    MALLORY,
    WORKER,
    Local,
    World,
    assert_moves_are_rows,
)

from relay.errors import ConfigError, LocalUsageError, RemoteProtocolError
from relay.protocol import (
    Action,
    CloseJob,
    DeclineTask,
    Event,
    ExecuteTask,
    Ignore,
    KeepWatcher,
    MoveBaton,
    NotifyResult,
    PostNotice,
    ReclaimTask,
    ReopenJob,
    ReportHalfDone,
    ResultMsg,
    SendResult,
    Status,
    TaskMsg,
    TearDown,
    User,
    Wait,
    decide,
    parse_body,
    plan_open_job,
    plan_resolve,
    plan_task,
    render_message,
)
from relay.protocol.decide import RECLAIM_GRACE
from relay.protocol.labels import Label
from relay.protocol.work import BARE_GRACE, DEFAULT_HEARTBEAT, LEASE, MISSED_BEATS

ACTION_TYPES = {
    CloseJob,
    DeclineTask,
    ExecuteTask,
    Ignore,
    KeepWatcher,
    MoveBaton,
    NotifyResult,
    PostNotice,
    ReclaimTask,
    ReopenJob,
    ReportHalfDone,
    SendResult,
    TearDown,
    Wait,
}
assert set(typing.get_args(Action)) == ACTION_TYPES, "a new action type must be listed here"


def job(world: World) -> int:
    plan = plan_open_job(
        world.master,
        controller=CONTROLLER,
        worker=WORKER,
        title="Flaky build",
        objective="Find out why the build fails on Windows",
    )
    return world.open_issue(plan)


def task(world: World, number: int, **kwargs: object) -> int:
    plan = plan_task(
        world.issues[number],
        world.master,
        node=CONTROLLER,
        caller=ALICE.id,
        steps=kwargs.pop("steps", ("python -V",)),
        **kwargs,  # type: ignore[arg-type]
    )
    world.run_plan(plan, CONTROLLER)
    assert plan.task is not None
    return plan.task


def kinds(actions: list[object]) -> list[str]:
    return [a.kind for a in actions]  # type: ignore[attr-defined]


def test_a_fresh_job_waits_for_the_controller_and_binds_both_nodes() -> None:
    world = World()
    number = job(world)
    assert world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    assert decide(world.snapshot(WORKER), WORKER, world.now) == []
    assert decide(world.snapshot(CONTROLLER), CONTROLLER, world.now) == []
    assert decide(world.snapshot("spare"), "spare", world.now) == [TearDown()]


def test_the_worker_executes_the_newest_task_from_an_instruction_account() -> None:
    world = World()
    number = job(world)
    task(world, number, steps=("python -V", "pip list"))
    [action] = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(action, ExecuteTask)
    assert (action.issue, action.task.task, action.task.steps) == (
        number,
        1,
        ("python -V", "pip list"),
    )
    assert action.claim.lease_until == world.now + LEASE
    assert action.claim_body == render_message(action.claim)
    assert action.comment_id == world.issues[number].comments[-1].id


def test_a_full_round_trip_notifies_the_controller_once() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)
    assert world.runs and world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    [notify] = world.pass_of(CONTROLLER)
    assert isinstance(notify, NotifyResult) and notify.result.status == "done"
    assert world.pass_of(CONTROLLER) == [] and world.pass_of(WORKER) == []
    assert task(world, number) == 2


def test_a_stranger_task_is_ignored_even_when_well_formed() -> None:
    world = World()
    number = job(world)
    forged = TaskMsg(issue=number, node=CONTROLLER, task=1, objective="x", steps=("rm -rf /",))
    comment = world.post(number, MALLORY, render_message(forged))
    world.set_labels(number, (Label.AWAITING_WORKER.value,))
    [ignored, told] = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(ignored, Ignore) and ignored.comment_id == comment.id
    assert "mallory" in ignored.reason
    assert isinstance(told, PostNotice) and told.key == "refused:mallory"
    assert "does not act on comments by `mallory`" in told.body
    world.apply(WORKER, told)
    world.post(number, MALLORY, render_message(forged.model_copy(update={"task": 2})))
    again = decide(world.snapshot(WORKER), WORKER, world.now)
    assert all(isinstance(a, Ignore) for a in again), "told once per author, not per comment"
    by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    assert all(isinstance(a, Ignore) for a in by_controller), "the worker tells, not both"


def test_a_task_signed_by_the_wrong_node_is_ignored() -> None:
    world = World()
    number = job(world)
    forged = TaskMsg(issue=number, node=WORKER, task=1, objective="x", steps=("ls",))
    world.post(number, ALICE, render_message(forged))
    world.set_labels(number, (Label.AWAITING_WORKER.value,))
    [action, told] = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(action, Ignore) and "signed by" in action.reason
    assert isinstance(told, PostNotice) and "signed by" in told.body


def test_a_malformed_task_from_an_instruction_account_is_data() -> None:
    world = World()
    number = job(world)
    good = TaskMsg(issue=number, node=CONTROLLER, task=1, objective="x", steps=("ls",))
    body = render_message(good).replace("`ls`", "`ls -la`")
    world.post(number, ALICE, body)
    world.set_labels(number, (Label.AWAITING_WORKER.value,))
    [action] = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(action, Ignore) and "does not match" in action.reason


def test_a_local_claim_without_result_is_reported_half_done_not_rerun() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="run")
    assert world.runs == [] and world.baton(number) == {Label.WORKING.value}
    [report] = world.pass_of(WORKER)
    assert isinstance(report, ReportHalfDone) and report.expect == Label.WORKING
    assert "local records" in report.known
    assert world.runs == [] and world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    [notify] = world.pass_of(CONTROLLER)
    assert isinstance(notify, NotifyResult) and notify.result.kind == "half-done"


def test_a_remote_claim_of_another_process_is_waited_for_until_its_lease_lapses() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="run")
    world.local.clear()  # the claim was made by another clone of the same node
    [wait] = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(wait, Wait) and wait.until > world.now
    world.tick(int(LEASE.total_seconds()) + 60)
    [report] = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(report, ReportHalfDone) and "claimed at" in report.known


def test_a_claim_ref_of_this_nodes_own_attempt_is_taken_over_at_once_quietly() -> None:
    """Killed between creating the claim ref and recording the claim (or the answer to the
    ref was lost): the nonce kept before the request says the ref is this node's."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="record")
    assert (number, 1) in world.records(WORKER).attempts
    [take] = world.pass_of(WORKER)
    assert isinstance(take, ExecuteTask) and take.takeover and take.takeover_notice is None
    assert [t for *_, t in world.runs] == [take.task], "run once, by its own node"
    assert world.baton(number) == {"awaiting:controller"}
    assert not world.records(WORKER).attempts


def test_a_bare_claim_ref_of_another_runner_is_taken_over_after_a_grace_and_said() -> None:
    """Another clone of the node created the ref and died before commenting: it is waited
    for a short grace from when it was first seen (not two hours), then taken over with a
    comment that says so."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="record")
    world.local.clear()  # that runner's disk is not this one's
    [wait] = world.pass_of(WORKER)
    assert isinstance(wait, Wait) and wait.bare and wait.until == world.now + BARE_GRACE
    world.tick(int(BARE_GRACE.total_seconds()) - 5)
    [still] = world.pass_of(WORKER)
    assert isinstance(still, Wait) and still.until == wait.until, "the grace runs from the sighting"
    world.tick(10)
    [take] = world.pass_of(WORKER)
    assert isinstance(take, ExecuteTask) and take.takeover
    assert take.takeover_notice is not None and "another runner" in take.takeover_notice
    bodies = [c.body for c in world.issues[number].comments]
    assert any("takes the task over" in b for b in bodies)
    assert len(world.runs) == 1 and world.baton(number) == {"awaiting:controller"}


def test_a_claim_whose_heartbeat_stopped_lapses_and_the_controller_takes_the_baton_back() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="run")  # claimed, then the machine went away
    [claim] = [c for c in world.issues[number].comments if "### Claim" in c.body]
    assert world.pass_of(CONTROLLER) == [], "a live claim is the worker's business"
    world.tick(int(MISSED_BEATS * DEFAULT_HEARTBEAT) + 60)
    assert world.pass_of(CONTROLLER) == [], "a short grace past the lapse"
    world.tick(int(RECLAIM_GRACE.total_seconds()))
    [reclaim] = world.pass_of(CONTROLLER)
    assert isinstance(reclaim, ReclaimTask) and reclaim.task == 1
    assert world.baton(number) == {"awaiting:controller"}
    said = [c.body for c in world.issues[number].comments if "looks gone" in c.body]
    assert len(said) == 1 and "post a new TASK" in said[0]
    assert all(not isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER)), "once"
    # a new TASK can be posted now, and the worker (back again) runs only that one
    task(world, number)
    world.pass_of(WORKER)
    assert [t.task for *_, t in world.runs] == [2]
    assert claim.id in {c.id for c in world.issues[number].comments}


def test_working_without_any_claim_is_half_done() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.set_labels(number, (Label.WORKING.value,))
    [report] = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(report, ReportHalfDone) and "no claim" in report.known


def test_a_task_outside_the_scope_is_declined_with_a_blocked_result() -> None:
    world = World()
    number = job(world)
    task(world, number, scope="destructive", authorized_by_human=True)
    world.master = world.master.model_copy(
        update={"scope": world.master.scope.model_copy(update={"destructive": "forbidden"})}
    )
    [decline] = world.pass_of(WORKER)
    assert isinstance(decline, DeclineTask) and decline.result.status == "blocked"
    assert world.runs == [] and world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    assert world.pass_of(WORKER) == []


def test_a_node_that_cannot_update_its_clone_answers_blocked_instead_of_running() -> None:
    world = World()
    number = job(world)
    task(world, number)
    unable = "this node cannot update its clone: it has uncommitted changes"
    snapshot = world.snapshot(WORKER).model_copy(update={"unable": unable})
    [decline] = decide(snapshot, WORKER, world.now)
    assert isinstance(decline, DeclineTask) and decline.reason == unable
    assert decline.result.status == "blocked" and unable in decline.body
    world.apply(WORKER, decline)
    assert world.runs == [] and world.baton(number) == {Label.AWAITING_CONTROLLER.value}


def test_an_answered_task_with_the_baton_left_behind_is_passed_back() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="done")
    assert world.baton(number) == {Label.WORKING.value}
    world.local[WORKER].outbox.clear()  # the kept RESULT is gone too (see the next test)
    [move] = world.pass_of(WORKER)
    assert isinstance(move, MoveBaton) and move.to == Label.AWAITING_CONTROLLER
    assert len(world.runs) == 1


def test_a_kept_result_is_posted_by_the_next_pass_never_run_again() -> None:
    for crash, posts in (("result", True), ("recorded", False), ("done", False)):
        world = World()
        number = job(world)
        task(world, number)
        world.pass_of(WORKER, crash_at=crash)  # the run ended; its answer did not get out
        [send] = world.pass_of(WORKER)
        assert isinstance(send, SendResult) and send.post is posts, crash
        assert send.to == Label.AWAITING_CONTROLLER
        assert world.baton(number) == {Label.AWAITING_CONTROLLER.value}
        results = [c for c in world.issues[number].comments if "### RESULT 1" in c.body]
        assert len(results) == 1 and len(world.runs) == 1  # one answer, one run
        assert world.pass_of(WORKER) == [] and world.local[WORKER].outbox == set()


def test_a_task_posted_without_passing_the_baton_is_passed_by_the_controller() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.set_labels(number, (Label.AWAITING_CONTROLLER.value,))
    [move] = world.pass_of(CONTROLLER)
    assert isinstance(move, MoveBaton) and move.to == Label.AWAITING_WORKER
    assert world.baton(number) == {Label.AWAITING_WORKER.value}


def test_two_batons_are_reported_not_acted_on() -> None:
    world = World()
    number = job(world)
    task(world, number)
    world.set_labels(number, (Label.AWAITING_WORKER.value, Label.WORKING.value))
    # the controller only notes it: both batons are the worker's, so the worker speaks
    [ignored] = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    assert isinstance(ignored, Ignore) and "several baton labels" in ignored.reason
    ignore, report = world.pass_of(WORKER)
    assert isinstance(ignore, Ignore) and ignore.comment_id is None
    assert isinstance(report, PostNotice) and "`awaiting:worker`, `working`" in report.body
    assert world.issues[number].comments[-1].body == report.body
    # once: the next pass of either node says nothing more in the thread
    assert [a.kind for a in world.pass_of(WORKER)] == ["ignore"]
    assert world.baton(number) == {Label.AWAITING_WORKER.value, Label.WORKING.value}


def test_a_job_with_no_baton_is_reported_by_its_controller_once() -> None:
    world = World()
    number = job(world)
    world.set_labels(number, ("bug",))
    assert [a.kind for a in world.pass_of(WORKER)] == ["ignore"]
    assert [a.kind for a in world.pass_of(CONTROLLER)] == ["ignore", "post-notice"]
    assert "no baton label" in world.issues[number].comments[-1].body
    assert [a.kind for a in world.pass_of(CONTROLLER)] == ["ignore"]
    # a person leaves one baton: the job goes on, and a later freeze is reported anew
    world.set_labels(number, ("bug", Label.AWAITING_CONTROLLER.value))
    assert "post-notice" not in [a.kind for a in world.pass_of(CONTROLLER)]


def test_a_half_resolved_job_is_closed_by_its_controller() -> None:
    world = World()
    number = job(world)
    plan = plan_resolve(
        world.issues[number], world.master, node=CONTROLLER, summary="ok", now=world.now, force="t"
    )
    world.post(number, ALICE, world.signed(CONTROLLER, plan.comments[0]))
    assert kinds(decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)) == ["close-job"]
    world.pass_of(CONTROLLER)
    assert world.issues[number].state == "closed"
    assert decide(world.snapshot(CONTROLLER), CONTROLLER, world.now) == [TearDown()]
    assert CloseJob(issue=number).kind == "close-job"


def test_a_job_opened_by_a_stranger_is_ignored() -> None:
    world = World()
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
    )
    number = world.open_issue(plan, author=MALLORY)
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    assert actions[0] == Ignore(issue=number, comment_id=None, reason=actions[0].reason)  # type: ignore[union-attr]
    assert actions[-1] == TearDown()


def test_ordinary_issues_and_chatter_are_skipped_quietly() -> None:
    world = World()
    number = job(world)
    world.post(number, MALLORY, "Any news on this? ### not a heading")
    world.post(number, BOB, "I restarted the machine.")
    other = world.open_issue(
        plan_open_job(world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o")
    )
    world.issues[other] = world.issues[other].model_copy(update={"body": "plain issue"})
    assert decide(world.snapshot(WORKER), WORKER, world.now) == []


def test_decide_refuses_unknown_nodes_and_naive_times() -> None:
    world = World()
    with pytest.raises(ConfigError, match="relay join"):
        decide(world.snapshot("nobody"), "nobody", world.now)
    with pytest.raises(LocalUsageError, match="aware"):
        decide(world.snapshot(WORKER), WORKER, world.now.replace(tzinfo=None))


AUTHORS = st.sampled_from([ALICE, BOB, MALLORY])
SOME_TASK = st.builds(
    TaskMsg,
    issue=st.just(1),
    node=st.sampled_from([CONTROLLER, WORKER]),
    task=st.integers(1, 4),
    objective=st.text(max_size=30),
    steps=st.just(("ls",)),
    scope=st.sampled_from(["diagnostics", "destructive", "deploy"]),
    authorized_by_human=st.booleans(),
)
SOME_RESULT = st.builds(
    ResultMsg,
    issue=st.integers(1, 2),
    node=st.sampled_from([CONTROLLER, WORKER]),
    task=st.integers(1, 4),
    status=st.sampled_from(list(Status)),
    summary=st.text(max_size=30),
)
BODIES = st.one_of(
    st.text(max_size=120),
    st.builds(render_message, SOME_TASK | SOME_RESULT),
    st.builds(lambda m, junk: render_message(m) + junk, SOME_TASK, st.text(max_size=5)),
    st.builds(lambda m: render_message(m).replace("ls", "rm", 1), SOME_TASK),
)


@given(
    labels=st.sampled_from(
        [["awaiting:worker"], ["awaiting:worker"], ["working"], ["awaiting:controller"]]
    )
    | st.lists(st.sampled_from([label.value for label in Label] + ["bug"]), max_size=3),
    comments=st.lists(st.tuples(BODIES, AUTHORS, st.booleans()), max_size=8),
    node=st.sampled_from([CONTROLLER, WORKER, WORKER, "spare"]),
    local=st.sets(st.tuples(st.just(1), st.integers(1, 4)), max_size=2),
    real_task=st.booleans(),
)
@settings(max_examples=300, deadline=None)
def test_garbage_threads_give_actions_and_nothing_else(
    labels: list[str],
    comments: list[tuple[str, User, bool]],
    node: str,
    local: set[tuple[int, int]],
    real_task: bool,
) -> None:
    world = World()
    number = job(world)
    if real_task:  # a real TASK 1 first, so that the garbage has something to get in the way of
        task(world, number)
    world.set_labels(number, tuple(labels))
    for body, author, edited in comments:
        comment = world.post(number, author, body)
        if edited:
            world.edit(number, comment.id, body)
    world.local[WORKER] = Local(claims=local, results_posted=set(list(local)[:1]))
    try:
        actions = decide(world.snapshot(node), node, world.now)
    except RemoteProtocolError:
        return
    assert all(type(a) in ACTION_TYPES for a in actions)
    assert_moves_are_rows(world.snapshot(node), node, actions)  # the table governs
    executed = [a for a in actions if isinstance(a, ExecuteTask)]
    for action in executed:
        comment = next(c for c in world.issues[number].comments if c.id == action.comment_id)
        assert comment.author in (ALICE, BOB) and not comment.edited and node == WORKER
        event("executed")
    acts = [a for a in actions if not isinstance(a, Ignore | PostNotice)]
    assert len(acts) <= 1 + (node == "spare"), "one act a job (notices aside)"


def test_a_move_that_is_not_a_row_of_the_table_is_caught() -> None:
    world = World()
    number = job(world)
    task(world, number)  # the worker's turn: awaiting:worker
    snapshot = world.snapshot(WORKER)
    good = MoveBaton(
        issue=number,
        expect=Label.AWAITING_WORKER,
        to=Label.AWAITING_CONTROLLER,
        event=Event.POST_RESULT,
        reason="r",
    )
    assert_moves_are_rows(snapshot, WORKER, [good])
    for bad in (
        good.model_copy(update={"to": Label.WORKING}),  # a row, but not its labels
        good.model_copy(update={"event": Event.POST_TASK}),  # the controller's event
    ):
        with pytest.raises(AssertionError):
            assert_moves_are_rows(snapshot, WORKER, [bad])


def test_a_job_whose_kind_is_not_delegable_is_refused_by_the_worker_saying_which_rule() -> None:
    world = World()
    number = job(world)
    task(world, number)
    narrow = world.master.scope.model_copy(update={"delegable": ("verification",)})
    world.master = world.master.model_copy(update={"scope": narrow})
    [decline] = world.pass_of(WORKER)
    assert isinstance(decline, DeclineTask) and world.runs == []
    assert "kind 'diagnostics' are not delegable" in decline.reason
    assert "delegable jobs: verification" in decline.reason
    assert world.baton(number) == {"awaiting:controller"}


def test_a_job_of_a_kind_that_is_not_delegable_cannot_be_opened() -> None:
    with pytest.raises(LocalUsageError, match="not delegable"):
        plan_open_job(
            World().master, controller=CONTROLLER, worker=WORKER, title="t", objective="o",
            kind="deploy",
        )  # fmt: skip
    opened = plan_open_job(
        World().master, controller=CONTROLLER, worker=WORKER, title="t", objective="o",
        kind="verification",
    )  # fmt: skip
    assert opened.body is not None and parse_body(opened.body).kind == "verification"


def test_a_skipped_task_number_and_a_task_overtaken_by_a_newer_one_are_said_once() -> None:
    world = World()
    number = job(world)
    first = TaskMsg(issue=number, node=CONTROLLER, task=1, objective="o", steps=("python -V",))
    world.post(number, ALICE, world.signed(CONTROLLER, render_message(first)))
    third = first.model_copy(update={"task": 3})
    world.post(number, ALICE, world.signed(CONTROLLER, render_message(third)))
    world.set_labels(number, (Label.AWAITING_WORKER.value,))
    actions = world.pass_of(WORKER)
    told = {a.key: a.body for a in actions if isinstance(a, PostNotice)}
    assert set(told) == {"skipped:3", "late:1"}, told
    assert "no readable comment holds TASK 2" in told["skipped:3"]
    assert "TASK 1 was not run and will not be: TASK 3 is newer" in told["late:1"]
    assert [t.task for *_, t in world.runs] == [3], "only the newest TASK runs"
    again = world.pass_of(WORKER)
    assert not any(isinstance(a, PostNotice) for a in again), "said once"


def test_a_baton_moved_by_an_outsider_is_put_back_and_the_mover_named_once() -> None:
    from relay.protocol import baton_events_wanted
    from relay.protocol.snapshot import LabelEvent

    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)  # RESULT 1: the baton is the controller's
    assert world.baton(number) == {"awaiting:controller"}
    world.set_labels(number, (Label.AWAITING_WORKER.value,))  # mallory's move
    snapshot = world.snapshot(WORKER)
    assert baton_events_wanted(snapshot, WORKER, world.now) == {number}
    assert baton_events_wanted(world.snapshot(CONTROLLER), CONTROLLER, world.now) == set()

    def moved_by(who: User, event_id: int) -> LabelEvent:
        return LabelEvent(
            id=event_id, issue=number, actor=who, action="labeled",
            label="awaiting:worker", at=world.now,
        )  # fmt: skip

    trusted = snapshot.model_copy(update={"label_events": (moved_by(ALICE, 7),)})
    assert not any(isinstance(a, PostNotice) for a in decide(trusted, WORKER, world.now))
    seen = snapshot.model_copy(update={"label_events": (moved_by(MALLORY, 8),)})
    actions = decide(seen, WORKER, world.now)
    [told] = [a for a in actions if isinstance(a, PostNotice)]
    assert told.key == "outsider:8" and "`mallory` added the baton label" in told.body
    assert any(isinstance(a, MoveBaton) for a in actions), "and the baton goes back"
    world.apply(WORKER, told)
    again = decide(
        seen.model_copy(update={"local": world.snapshot(WORKER).local}), WORKER, world.now
    )
    assert not any(isinstance(a, PostNotice) for a in again), "named once"
