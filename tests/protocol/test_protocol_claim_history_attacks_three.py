"""decide() against a collaborator who is no node (mallory), a third round on a claim's
life: the running claim's only comment garbled or deleted (no claim of the TASK left to
read, so no edit history is asked for), and what a runner of the worker with no local
records makes of it. Each test asserts what relay promises; those that do not hold are
strict xfails."""

from __future__ import annotations

from datetime import timedelta

from protocol_world import BOB, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task

from relay.protocol import ReclaimTask, ReportHalfDone, decide, render_message
from relay.protocol.labels import Label
from relay.protocol.snapshot import LabelEvent


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


def runner_settles(
    world: World, minutes: int = 4, events: tuple[LabelEvent, ...] = ()
) -> list[str]:
    """What a runner of the worker with no local records does in one pass that waits a
    bare claim ref out (its settle loop: the issue read again every few seconds, for a
    few minutes), and what the controller does meanwhile: any reclaim or half-done."""
    runner = Local()
    wrong: list[str] = []
    end = world.now + timedelta(minutes=minutes)
    while world.now < end and not wrong:
        world.now += timedelta(seconds=5)
        world.local[WORKER] = runner
        snapshot = world.snapshot(WORKER).model_copy(update={"label_events": events})
        for action in decide(snapshot, WORKER, world.now):
            if isinstance(action, ReportHalfDone):
                wrong.append(action.kind)
            world.apply(WORKER, action)
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    return wrong


def test_the_running_claim_garbled_alone_never_takes_the_task_away() -> None:
    """A TASK of thirty steps runs; the worker beats every five minutes. Just after a
    beat she edits the claim comment into any text (its only claim: no copy anywhere), and
    her edit wakes a runner of the worker with no local records (an Actions run on the
    comment's edit). The thread holds no claim, but the baton is `working`: the comments'
    edit histories are read, hold the worker's beats, and the runner waits the claim out
    as any claim (never takes its ref over as a bare one) until the worker's next beat
    puts it back."""
    world = World()
    number, comment_id = beating(world)
    world.now += timedelta(seconds=30)
    world.edit(number, comment_id, "thanks!", by=MALLORY)
    assert not runner_settles(world)


def test_the_running_claim_deleted_never_takes_the_task_away() -> None:
    """As above, but she deletes the claim comment (write access). The worker's beats
    edit a comment that is gone, and fail; its steps run on for hours and its RESULT
    follows. No history holds the claim; the issue's events (read by a runner that finds
    `working` and no claim) say the worker's account set `working` after the TASK: the
    runner waits the claim out to its lease, and answers nothing half-done."""
    world = World()
    number, comment_id = beating(world)
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    world.now += timedelta(seconds=30)
    issue = world.issues[number]
    kept = tuple(c for c in issue.comments if c.id != comment_id)
    world.issues[number] = issue.model_copy(update={"comments": kept})
    # what the issue's events hold (read by a runner that finds `working` and no claim):
    # the worker's account set `working` as it claimed
    moved = LabelEvent(
        id=1, issue=number, actor=BOB, action="labeled", label=Label.WORKING.value, at=claimed
    )
    assert not runner_settles(world, events=(moved,))


def reclaimed_by(world: World, hours: int) -> list[str]:
    """The controller's passes, a minute apart, for ``hours``: each reclaim it makes."""
    end = world.now + timedelta(hours=hours)
    while world.now < end:
        world.now += timedelta(minutes=1)
        actions = world.pass_of(CONTROLLER)
        if any(isinstance(a, ReclaimTask) for a in actions):
            return [a.kind for a in actions if isinstance(a, ReclaimTask)]
    return []


def test_a_dead_workers_claim_garbled_still_comes_back() -> None:
    """The worker claims a TASK of thirty steps, beats for half an hour, then its machine
    goes off (its last text says alive twenty minutes more). She edits the claim comment
    into any text. The controller reads no claim of the TASK but a `working` baton: the
    comments' histories hold the worker's last beat, and the baton comes back when it
    said, not never (no new TASK could be posted)."""
    world = World()
    number, comment_id = beating(world)
    world.now += timedelta(minutes=1)
    world.edit(number, comment_id, "thanks!", by=MALLORY)
    assert reclaimed_by(world, hours=8)


def test_every_removed_revision_body_never_keeps_a_dead_workers_claim() -> None:
    """The worker claims a TASK of thirty steps (a lease over five hours), beats every five
    minutes for two hours, then its machine goes off; its last text says alive twenty
    minutes more. She edits the comment once (the same text back) and removes the body of
    every prior revision, the posting's too (write access: only the current revision
    keeps its body). No version of the worker's has text, so no beat gives a window, and
    the newest one's time is taken as a beat of the current text's `alive_until -
    claimed_at`: two hours and twenty minutes. The baton should be back a few minutes
    after the worker's last text lapsed."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")
    comment_id, first = claim_of(world, number)
    beat = first
    for _ in range(24):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    dead = beat.alive_until
    assert dead is not None
    world.now += timedelta(minutes=1)
    last = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    world.edit(number, comment_id, last, by=MALLORY)
    history = world.histories[comment_id]
    history[1:] = [v.model_copy(update={"body": None}) for v in history[1:]]
    at = None
    while world.now < dead + timedelta(hours=3):
        world.now += timedelta(minutes=1)
        if any(
            isinstance(a, ReclaimTask)
            for a in decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        ):
            at = world.now
            break
    assert at is not None and at <= dead + timedelta(minutes=4), at - dead if at else None
