"""decide() against a collaborator who is no node (mallory), a fourth round on a `working`
baton whose claim no comment holds: the controller takes such a baton back at the lease
from the TASK's posting, whoever set `working` and however long the claim's own lease is.
Each test asserts what relay promises; those that do not hold are strict xfails."""

from __future__ import annotations

from datetime import datetime, timedelta

from protocol_world import ALICE, BOB, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_approvals import destructive_task, world_with_people
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task

from relay.protocol import (
    DeclineTask,
    ReclaimTask,
    ReportHalfDone,
    User,
    decide,
    render_message,
)
from relay.protocol.labels import Label, with_baton
from relay.protocol.snapshot import LabelEvent


def label(number: int, n: int, who: User, name: str, at: datetime) -> LabelEvent:
    return LabelEvent(id=n, issue=number, actor=who, action="labeled", label=name, at=at)


def test_her_working_on_a_task_awaiting_approval_is_never_taken_back() -> None:
    """A destructive TASK waits for a person's approval; the worker says so. She sets
    `working` on it (nobody claimed it). The worker does not follow her label (the events
    say she set it) and keeps waiting. The person approves three hours later, and the
    TASK runs. The controller must not take the baton back in between, telling the thread
    the worker "claimed TASK 1 but has given no sign of life"."""
    world = world_with_people()
    number = destructive_task(world)
    world.pass_of(WORKER)  # the approval notice
    assert world.runs == []
    world.now += timedelta(minutes=1)
    world.set_labels(number, with_baton(world.issues[number].labels, Label.WORKING))
    posted = world.issues[number].comments[0].created_at
    moves = (
        label(number, 1, ALICE, Label.AWAITING_WORKER.value, posted),
        label(number, 2, MALLORY, Label.WORKING.value, world.now),
    )
    reclaims: list[str] = []
    end = world.now + timedelta(hours=3)
    while world.now < end:
        world.now += timedelta(minutes=5)
        snapshot = world.snapshot(WORKER).model_copy(update={"label_events": moves})
        assert not any(isinstance(a, ReportHalfDone) for a in decide(snapshot, WORKER, world.now))
        actions = world.pass_of(CONTROLLER)
        reclaims += [a.kind for a in actions if isinstance(a, ReclaimTask)]
    assert reclaims == []


def test_a_long_running_claim_deleted_is_never_taken_away_by_the_controller() -> None:
    """A TASK of thirty steps (a lease over five hours) is claimed and runs, the worker
    beating every five minutes. She deletes the claim comment. The worker's beats fail;
    its steps run on. The controller reads a `working` baton, no claim, and no history of
    a deleted comment: it waits only two hours from the TASK's posting, then takes the
    baton back ("it looks gone") while the steps still run for three hours more."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    assert first.lease_until - first.claimed_at > timedelta(hours=5)
    world.now += timedelta(minutes=5)
    beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
    world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    world.now += timedelta(seconds=30)
    issue = world.issues[number]
    kept = tuple(c for c in issue.comments if c.id != comment_id)
    world.issues[number] = issue.model_copy(update={"comments": kept})
    reclaims: list[str] = []
    while world.now < first.lease_until - timedelta(minutes=15):
        world.now += timedelta(minutes=5)
        actions = world.pass_of(CONTROLLER)
        reclaims += [a.kind for a in actions if isinstance(a, ReclaimTask)]
    assert reclaims == []


def test_a_long_running_claim_deleted_is_never_answered_half_done_by_a_runner() -> None:
    """As above, seen by a runner of the worker with no local records (an Actions run),
    three hours after the claim: the events say the worker's account set `working` after
    the TASK, so it is a claim; but the runner waits it out to two hours from the TASK's
    posting only, and answers the running task half-done."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")
    comment_id, first = claim_of(world, number)
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    world.now += timedelta(seconds=30)
    issue = world.issues[number]
    kept = tuple(c for c in issue.comments if c.id != comment_id)
    world.issues[number] = issue.model_copy(update={"comments": kept})
    world.now = claimed + timedelta(hours=3)
    assert world.now < first.lease_until
    world.local[WORKER] = Local()
    moved = (label(number, 1, BOB, Label.WORKING.value, claimed),)
    snapshot = world.snapshot(WORKER).model_copy(update={"label_events": moved})
    assert not any(isinstance(a, ReportHalfDone) for a in decide(snapshot, WORKER, world.now))


def test_her_working_put_back_over_a_garbled_running_claim_never_answers_it() -> None:
    """A TASK of thirty steps runs, the worker beating every five minutes. She edits the
    claim comment into any text, then takes `working` off and puts it back (her event is
    now the newest `working`). A runner of the worker with no local records reads no claim
    and undoes her label (the baton as before her move: `awaiting:worker`), so it never
    asks the histories, which hold the worker's beats: it waits the claim ref out as a
    bare one, takes it over, and answers the running task "not run: claimed before"."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")
    comment_id, first = claim_of(world, number)
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    world.now += timedelta(minutes=5)
    beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
    world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    world.now += timedelta(seconds=30)
    world.edit(number, comment_id, "thanks!", by=MALLORY)
    moves = (
        label(number, 1, BOB, Label.WORKING.value, claimed),
        LabelEvent(
            id=2,
            issue=number,
            actor=MALLORY,
            action="unlabeled",
            label=Label.WORKING.value,
            at=world.now,
        ),
        label(number, 3, MALLORY, Label.WORKING.value, world.now),
    )
    runner = Local()
    answered: list[str] = []
    end = world.now + timedelta(minutes=4)
    while world.now < end:
        world.now += timedelta(seconds=5)
        world.local[WORKER] = runner
        snapshot = world.snapshot(WORKER).model_copy(update={"label_events": moves})
        for action in decide(snapshot, WORKER, world.now):
            if isinstance(action, ReportHalfDone | DeclineTask):
                answered.append(action.reason)
            world.apply(WORKER, action)
    assert answered == []


def test_a_garbled_long_running_claim_without_histories_is_never_taken_away() -> None:
    """A TASK of thirty steps runs for three hours, the worker beating every five minutes.
    GraphQL cannot be asked (no edit history is read). Just after a beat she edits the
    claim comment into any text. The controller reads a `working` baton and no claim,
    and no history: the lease from the TASK's posting is long past, so it takes the baton
    back within minutes, before the worker's next beat puts the claim back. (Before, a
    `working` baton with no claim was never taken back by the controller.)"""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")
    comment_id, first = claim_of(world, number)
    for _ in range(36):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    world.now += timedelta(seconds=10)
    world.edit(number, comment_id, "thanks!", by=MALLORY)
    reclaims: list[str] = []
    for _ in range(4):  # the worker's next beat is due within five minutes
        world.now += timedelta(minutes=1)
        blind = world.snapshot(CONTROLLER).model_copy(
            update={"comment_edits": (), "edits_read": frozenset()}
        )
        reclaims += [
            a.kind for a in decide(blind, CONTROLLER, world.now) if isinstance(a, ReclaimTask)
        ]
    assert reclaims == []
