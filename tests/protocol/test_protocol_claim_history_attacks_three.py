"""decide() against a collaborator who is no node (mallory), a third round on a claim's
life: the running claim's only comment garbled or deleted (no claim of the TASK left to
read, so no edit history is asked for), and what a runner of the worker with no local
records makes of it. Each test asserts what relay promises; those that do not hold are
strict xfails."""

from __future__ import annotations

from datetime import timedelta

import pytest
from protocol_world import CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task

from relay.protocol import ReclaimTask, ReportHalfDone, decide, render_message
from relay.protocol.labels import Label


def beating(world: World, steps: int = 30) -> tuple[int, int]:
    """A job whose TASK of ``steps`` steps is claimed and running, the worker beating every
    five minutes for half an hour (each beat alive twenty minutes more): the issue and the
    claim's comment."""
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(steps)))
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    for _ in range(6):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    assert world.baton(number) == {Label.WORKING.value}
    return number, comment_id


def runner_settles(world: World, minutes: int = 4) -> list[str]:
    """What a runner of the worker with no local records does in one pass that waits a
    bare claim ref out (its settle loop: the issue read again every few seconds, for a
    few minutes), and what the controller does meanwhile: any reclaim or half-done."""
    runner = Local()
    wrong: list[str] = []
    end = world.now + timedelta(minutes=minutes)
    while world.now < end and not wrong:
        world.now += timedelta(seconds=5)
        world.local[WORKER] = runner
        snapshot = world.snapshot(WORKER)
        for action in decide(snapshot, WORKER, world.now):
            if isinstance(action, ReportHalfDone):
                wrong.append(action.kind)
            world.apply(WORKER, action)
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    return wrong


@pytest.mark.xfail(
    strict=True,
    reason="a running claim's comment garbled leaves a bare ref and a `working` baton:"
    " a runner with no records takes the ref over and answers the running task half-done",
)
def test_the_running_claim_garbled_alone_never_takes_the_task_away() -> None:
    """A TASK of thirty steps runs; the worker beats every five minutes. Just after a
    beat she edits the claim comment into any text (its only claim: no copy anywhere), and
    her edit wakes a runner of the worker with no local records (an Actions run on the
    comment's edit). The thread now holds no claim, so no edit history is asked for; the
    runner sees the claim ref bare, waits its settle minute within the pass, takes it over
    and, the baton being `working`, answers the running task half-done, three minutes
    before the worker's next beat would have put its claim back."""
    world = World()
    number, comment_id = beating(world)
    world.now += timedelta(seconds=30)
    world.edit(number, comment_id, "thanks!", by=MALLORY)
    assert not runner_settles(world)


@pytest.mark.xfail(
    strict=True,
    reason="a running claim's comment deleted leaves a bare ref and a `working` baton:"
    " a runner with no records takes the ref over and answers the running task half-done",
)
def test_the_running_claim_deleted_never_takes_the_task_away() -> None:
    """As above, but she deletes the claim comment (write access). The worker's beats
    edit a comment that is gone, and fail; its steps run on for hours and its RESULT
    follows. A runner with no local records answers the task half-done a minute after
    her delete, so the controller is told the task is half-done while it runs."""
    world = World()
    number, comment_id = beating(world)
    world.now += timedelta(seconds=30)
    issue = world.issues[number]
    kept = tuple(c for c in issue.comments if c.id != comment_id)
    world.issues[number] = issue.model_copy(update={"comments": kept})
    assert not runner_settles(world)
