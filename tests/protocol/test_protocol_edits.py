"""Edited messages, untrusted callers and the body's "Current state".

An edited TASK must not block the job, an edited RESULT must not make the two nodes
swap the baton forever, `relay task` must refuse an account the worker would ignore,
and the issue body must say where the job stands.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from protocol_world import ALICE, BOB, CONTROLLER, MALLORY, WORKER, World

from relay.commands.status import job_line
from relay.protocol import (
    DeclineTask,
    Ignore,
    MoveBaton,
    NotifyResult,
    Outcome,
    Plan,
    ResultMsg,
    UntrustedAccount,
    decide,
    parse_body,
    plan_hypothesis,
    plan_open_job,
    plan_resolve,
    plan_strike,
    plan_task,
)
from relay.protocol.labels import Label
from relay.protocol.thread import read_thread

HAND_EDITS = {
    "re-saved unchanged": lambda body: body,
    "markdown changed by hand": lambda body: "Fixed a typo.\n\n" + body,
}


def opened(world: World) -> int:
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="Find the bug"
    )
    return world.open_issue(plan)


def post_task(world: World, number: int, caller: int = ALICE.id) -> int:
    plan = plan_task(
        world.issues[number], world.master, node=CONTROLLER, caller=caller, steps=("ls",)
    )
    world.run_plan(plan, CONTROLLER)
    assert plan.task is not None
    return plan.task


def edit_last(world: World, number: int, marker: str, how: str) -> int:
    """Edit the newest comment whose markdown contains ``marker``; its id."""
    comment = [c for c in world.issues[number].comments if marker in c.body][-1]
    world.edit(number, comment.id, HAND_EDITS[how](comment.body))
    return comment.id


def settled(world: World, rounds: int = 5) -> bool:
    """Both nodes pass in turn until a round in which no pass changes anything; False if
    they never settle (each pass is compared, so a baton swapped back within one round
    counts as a change)."""
    for _ in range(rounds):
        changed = False
        for node in (CONTROLLER, WORKER):
            before = world.state_key()
            world.pass_of(node)
            changed |= world.state_key() != before
        if not changed:
            return True
    return False


def state_of_body(world: World, number: int) -> str:
    return parse_body(world.issues[number].body).state


# --- 1. an edited TASK ----------------------------------------------------------------
@pytest.mark.parametrize("how", sorted(HAND_EDITS))
def test_an_edited_task_is_answered_blocked_and_the_next_task_gets_a_new_number(
    how: str,
) -> None:
    world = World()
    number = opened(world)
    post_task(world, number)
    edited = edit_last(world, number, "### TASK 1", how)
    ignored, decline = decide(world.snapshot(WORKER), WORKER, world.now)
    assert isinstance(ignored, Ignore) and ignored.comment_id == edited
    assert isinstance(decline, DeclineTask) and decline.comment_id == edited
    assert decline.result.status == "blocked" and "edited after it was posted" in decline.reason
    world.apply(WORKER, decline)
    assert world.runs == [] and world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    [notify] = [a for a in world.pass_of(CONTROLLER) if isinstance(a, NotifyResult)]
    assert notify.trusted and isinstance(notify.result, ResultMsg)
    assert notify.result.status == "blocked"
    assert "post a new TASK" in state_of_body(world, number)
    assert post_task(world, number) == 2
    world.pass_of(WORKER)
    assert [(i, n) for i, n, _ in world.runs] == [(number, 2)]


def test_an_edited_task_the_worker_already_claimed_is_not_declined() -> None:
    world = World()
    number = opened(world)
    post_task(world, number)
    world.pass_of(WORKER, crash_at="run")  # claimed, baton `working`, nothing run
    edit_last(world, number, "### TASK 1", "re-saved unchanged")
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    assert not [a for a in actions if isinstance(a, DeclineTask)]
    assert [a.kind for a in actions if not isinstance(a, Ignore)] == ["report-half-done"]


def test_status_shows_an_edited_task_with_its_age() -> None:
    world = World()
    number = opened(world)
    post_task(world, number)
    edit_last(world, number, "### TASK 1", "re-saved unchanged")
    thread = read_thread(world.issues[number], world.master)
    entry = thread.task_entry(thread.last_task)
    assert thread.last_task == 1 and entry is not None and entry.comment.edited
    row = {"issue": number, "title": "t", "controller": CONTROLLER, "worker": WORKER}
    row |= {"baton": "awaiting:worker", "task": 1, "task_age": None}
    assert "None" not in job_line(row) and job_line(row).endswith("TASK 1")


# --- 2. an edited RESULT ----------------------------------------------------------------
@pytest.mark.parametrize("how", sorted(HAND_EDITS))
def test_an_edited_result_is_answered_but_untrusted_on_both_sides(how: str) -> None:
    world = World()
    number = opened(world)
    post_task(world, number)
    world.pass_of(WORKER)
    edited = edit_last(world, number, "### RESULT 1", how)
    [notify] = [a for a in world.pass_of(CONTROLLER) if not isinstance(a, Ignore)]
    assert isinstance(notify, NotifyResult) and not notify.trusted
    assert isinstance(notify.result, ResultMsg) and notify.result.status == "blocked"
    assert notify.comment_id == edited
    assert "ran" not in notify.result.summary  # the edited text is never passed on
    assert "edited after it was posted" in state_of_body(world, number)
    assert world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    assert settled(world) and world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    assert post_task(world, number) == 2 and len(world.runs) == 1


def test_an_edited_result_is_never_rerun_even_after_the_worker_lost_its_disk() -> None:
    world = World()
    number = opened(world)
    post_task(world, number)
    world.pass_of(WORKER)
    edit_last(world, number, "### RESULT 1", "markdown changed by hand")
    world.local.clear()
    world.set_labels(number, (Label.AWAITING_WORKER.value,))  # a person moved the baton
    moves = [a for a in world.pass_of(WORKER) if not isinstance(a, Ignore)]
    assert [type(a) for a in moves] == [MoveBaton] and len(world.runs) == 1
    assert settled(world) and world.baton(number) == {Label.AWAITING_CONTROLLER.value}


def test_a_result_whose_block_was_destroyed_stops_the_baton_without_a_false_result() -> None:
    world = World()
    number = opened(world)
    post_task(world, number)
    world.pass_of(WORKER)
    result = [c for c in world.issues[number].comments if "### RESULT 1" in c.body][-1]
    world.edit(number, result.id, "I removed the log link, sorry.")
    actions = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    assert not [a for a in actions if isinstance(a, MoveBaton | NotifyResult)]
    assert any(isinstance(a, Ignore) and "no RESULT can be read" in a.reason for a in actions)
    assert settled(world) and world.baton(number) == {Label.AWAITING_CONTROLLER.value}
    assert post_task(world, number) == 2


# --- 3. the calling account -------------------------------------------------------------
def test_task_refuses_an_account_the_worker_does_not_trust() -> None:
    world = World()
    number = opened(world)
    before = world.state_key()
    with pytest.raises(UntrustedAccount) as caught:
        post_task(world, number, caller=MALLORY.id)
    message = str(caught.value)
    assert "\n" not in message and str(MALLORY.id) in message
    assert f"{WORKER}'s row in docs/loop/LOOP.md" in message
    assert world.state_key() == before
    assert post_task(world, number, caller=BOB.id) == 1  # BOB is in the worker's row


def test_the_other_controller_verbs_refuse_accounts_of_neither_node() -> None:
    world = World()
    number = opened(world)
    issue, master = world.issues[number], world.master
    calls: list[Callable[[int], Plan]] = [
        lambda c: plan_hypothesis(
            issue, master, node=CONTROLLER, text="h", outcome=Outcome.UNTESTED, caller=c
        ),
        lambda c: plan_strike(issue, master, node=CONTROLLER, caller=c),
        lambda c: plan_resolve(
            issue, master, node=CONTROLLER, summary="s", now=world.now, caller=c, force="t"
        ),
    ]
    for call in calls:
        with pytest.raises(UntrustedAccount, match=f"account {MALLORY.id} is no instruction"):
            call(MALLORY.id)
    plan_hypothesis(
        issue, master, node=CONTROLLER, text="h", outcome=Outcome.REFUTED, caller=BOB.id
    )
    plan_resolve(
        issue, master, node=CONTROLLER, summary="s", now=world.now, caller=ALICE.id, force="t"
    )


# --- 4. the body's "Current state" ------------------------------------------------------
def test_the_body_says_where_the_job_stands_after_each_turn() -> None:
    world = World()
    number = opened(world)
    assert state_of_body(world, number) == "Opened; no task yet."
    post_task(world, number)
    assert state_of_body(world, number) == f"TASK 1 posted: Find the bug, waiting for {WORKER}."
    world.pass_of(WORKER)
    [notify] = world.pass_of(CONTROLLER)
    assert isinstance(notify, NotifyResult) and notify.body is not None
    assert state_of_body(world, number) == f"RESULT 1 came back done: ran ({CONTROLLER}'s turn)."
    assert world.pass_of(CONTROLLER) == []
    post_task(world, number)
    assert state_of_body(world, number).startswith("TASK 2 posted")


def test_a_long_objective_is_cut_to_one_line_in_the_state() -> None:
    world = World()
    number = opened(world)
    plan = plan_task(
        world.issues[number],
        world.master,
        node=CONTROLLER,
        caller=ALICE.id,
        steps=("ls",),
        objective="line one\nline two " + "x" * 3000,
    )
    world.run_plan(plan, CONTROLLER)
    state = state_of_body(world, number)
    assert "\n" not in state and len(state) < 300 and "line one line two" in state
