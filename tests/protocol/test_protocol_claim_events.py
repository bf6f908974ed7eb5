"""The issue's label events as the worker's memory that a TASK was claimed
(relay.protocol.tamper.claimed_by_events), where several moves share one second: GitHub's
times are whole seconds, and only event ids order the moves within one."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from protocol_world import ALICE, BOB, CONTROLLER, MALLORY, WORKER, Local, World

from relay.protocol import (
    DeclineTask,
    ExecuteTask,
    MoveBaton,
    User,
    decide,
    plan_open_job,
    plan_task,
)
from relay.protocol.labels import Label
from relay.protocol.snapshot import LabelEvent


def job(world: World) -> int:
    plan = plan_open_job(
        world.master, controller=CONTROLLER, worker=WORKER, title="t", objective="o"
    )
    return world.open_issue(plan)


def task(world: World, number: int, steps: tuple[str, ...] = ("true",)) -> None:
    plan = plan_task(
        world.issues[number], world.master, node=CONTROLLER, caller=ALICE.id, steps=steps
    )
    world.run_plan(plan, CONTROLLER)


def within(world: World, number: int, second: datetime) -> None:
    """Every comment of the job posted in ``second`` (their ids keep their order)."""
    issue = world.issues[number]
    comments = tuple(
        c.model_copy(update={"created_at": second, "updated_at": second}) for c in issue.comments
    )
    world.issues[number] = issue.model_copy(update={"comments": comments})


def events(number: int, *moves: tuple[User, str, str, datetime]) -> tuple[LabelEvent, ...]:
    return tuple(
        LabelEvent(id=n, issue=number, actor=who, action=action, label=label, at=at)  # type: ignore[arg-type]
        for n, (who, action, label, at) in enumerate(moves, start=1)
    )


def fresh_worker(world: World, number: int, moves: tuple[LabelEvent, ...]) -> list[object]:
    """What a worker with no local records decides, given the issue's events."""
    world.local[WORKER] = Local()
    snapshot = world.snapshot(WORKER).model_copy(update={"label_events": moves})
    return list(decide(snapshot, WORKER, world.now))


@pytest.mark.xfail(strict=True, reason="a move of the baton a second after its TASK")
def test_a_task_whose_baton_moved_a_second_after_it_was_posted_is_run() -> None:
    """No attacker. TASK 1 is posted, claimed, run and answered, and TASK 2 posted, all in
    one second S; the controller's move of the baton for TASK 2 lands in S+1 (its two REST
    writes straddle the second, or the move is finished by a later pass). The controller's
    last pass of the baton in S is TASK 1's, so TASK 1's claim counts for TASK 2, and TASK
    1's claim comment, made in S and not later, accounts for nothing: the honest TASK 2,
    never claimed, is refused as claimed before."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)  # claim, run, RESULT 1
    world.pass_of(CONTROLLER)
    task(world, number)
    second = world.now.replace(microsecond=0)
    within(world, number, second)
    moves = events(
        number,
        (ALICE, "labeled", Label.AWAITING_WORKER.value, second),  # TASK 1 handed
        (BOB, "labeled", Label.WORKING.value, second),  # claim 1
        (BOB, "labeled", Label.AWAITING_CONTROLLER.value, second),  # RESULT 1
        (ALICE, "labeled", Label.AWAITING_WORKER.value, second + timedelta(seconds=1)),
    )
    world.now = second + timedelta(seconds=2)
    actions = fresh_worker(world, number, moves)
    assert not any(isinstance(a, DeclineTask) for a in actions), actions
    assert any(isinstance(a, ExecuteTask) and a.task.task == 2 for a in actions), actions


def test_a_baton_handed_back_within_the_claims_second_never_runs_a_task_twice() -> None:
    """TASK 1 is posted and claimed in second S. Still in S, she deletes the claim (and
    its ref) and moves the baton to `awaiting:controller`; a controller with no record of
    the claim hands the baton back, in S too. The controller's last pass of the baton in S
    now comes after the worker's `working`, which the rule then takes for an earlier
    TASK's: a worker with no local records runs TASK 1 again (the log hidden)."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)  # claim and run (its RESULT is deleted too)
    assert len(world.runs) == 1
    issue = world.issues[number]
    world.issues[number] = issue.model_copy(update={"comments": issue.comments[:1]})
    world.claim_refs.clear()
    world.set_labels(number, (Label.AWAITING_CONTROLLER.value,))  # hers
    handed = world.pass_of(CONTROLLER)
    assert any(isinstance(a, MoveBaton) for a in handed), handed  # the baton back to the worker
    second = world.now.replace(microsecond=0)
    within(world, number, second)
    moves = events(
        number,
        (ALICE, "labeled", Label.AWAITING_WORKER.value, second),  # TASK 1 handed
        (BOB, "labeled", Label.WORKING.value, second),  # claim 1
        (MALLORY, "labeled", Label.AWAITING_CONTROLLER.value, second),  # hers
        (ALICE, "labeled", Label.AWAITING_WORKER.value, second),  # handed back
    )
    world.now = second + timedelta(seconds=2)
    actions = fresh_worker(world, number, moves)
    assert not any(isinstance(a, ExecuteTask) for a in actions), actions
