"""decide() against a collaborator who is no node (mallory) where a claim's life is judged
by its comment's edit history: a claim copied into another comment of the job while the
running claim's own comment is garbled, and a revision whose body she removed from the
history (GitHub lets anyone with write access remove the body of a prior revision; its
``diff`` is then taken to be null). Each test asserts what relay promises."""

from __future__ import annotations

from datetime import datetime, timedelta

from protocol_world import CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_claim_history_attacks import dead_after_two_hours

from relay.protocol import ReclaimTask, ReportHalfDone, decide, render_message
from relay.protocol.thread import read_thread


def taken_away(world: World) -> list[str]:
    """What the controller and a runner of the worker with no local records would do to
    the TASK now: any reclaim or half-done report, by kind."""
    by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    fresh = world.snapshot(WORKER).model_copy(update={"local": Local().frozen()})
    by_runner = decide(fresh, WORKER, world.now)
    return [
        a.kind for a in (*by_controller, *by_runner) if isinstance(a, ReclaimTask | ReportHalfDone)
    ]


def test_a_copied_first_claim_and_a_garbled_running_claim_never_take_a_task_away() -> None:
    """TASK 1 ran and was answered. TASK 2 (thirty steps) is claimed and runs; the worker
    beats every five minutes. Half an hour in, just after a beat, she makes two edits: the
    running claim comment into any text, and the worker's RESULT 1 into the worker's first
    signed claim of TASK 2 (alive until twenty minutes after the claim: long past). The
    thread's only claim of TASK 2 is now the copy, whose comment's history holds no claim
    of the worker's. Every claim of the TASK the worker signed and wrote, in any
    comment's history, counts: the garbled comment's history holds its beats, and
    neither the controller nor a runner with no records takes the task away."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)  # TASK 1 runs and is answered
    world.pass_of(CONTROLLER)
    thread = read_thread(world.issues[number], world.master)
    result_1 = thread.results[1].comment
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # TASK 2 claimed; its steps are running
    comment_id, first = claim_of(world, number)
    assert first.task == 2
    original = world.signed(WORKER, render_message(first))
    for _ in range(6):  # half an hour of beats, each alive twenty minutes more
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    assert not taken_away(world)
    world.now += timedelta(seconds=30)
    world.edit(number, comment_id, "thanks!", by=MALLORY)  # the running claim, garbled
    world.edit(number, result_1.id, original, by=MALLORY)  # the first claim, copied
    world.now += timedelta(minutes=1)  # the worker's next beat is three minutes away
    assert not taken_away(world)


def test_a_removed_revision_body_never_keeps_a_dead_workers_claim() -> None:
    """The worker claims a TASK of thirty steps (a lease over five hours), beats every five
    minutes for two hours, then its machine goes off; its last text says it is alive for
    twenty minutes more. She edits the comment once (the same text back, so the worker's
    last beat is a prior revision) and removes that revision's body from the history
    (write access; GraphQL's `diff` of it is then null). The worker's newest version has
    no text: its time is a beat of the window its other beats say (twenty minutes), not of
    the current text's `alive_until - claimed_at` (two hours and twenty, grown with every
    beat). The baton is back a few minutes after the worker's last text lapsed."""
    world = World()
    number, comment_id, dead = dead_after_two_hours(world)
    world.now += timedelta(minutes=1)
    last = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    world.edit(number, comment_id, last, by=MALLORY)  # the same text: the beat is prior now
    history = world.histories[comment_id]
    assert history[1].editor is not None and history[1].editor.id != MALLORY.id
    history[1] = history[1].model_copy(update={"body": None})  # its body removed
    at: datetime | None = None
    while world.now < dead + timedelta(hours=3):
        world.now += timedelta(minutes=1)
        if any(
            isinstance(a, ReclaimTask)
            for a in decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        ):
            at = world.now
            break
    # (the grace, and the first look a minute step makes after it)
    assert at is not None and at <= dead + timedelta(minutes=4), at - dead if at else None
