"""decide() against a collaborator who is no node (mallory), a ninth round on the rules
that decide when a claim has lapsed once its comments' edit histories are read. Each test
asserts what relay promises; those that do not hold are strict xfails."""

from __future__ import annotations

from datetime import timedelta

from protocol_world import CONTROLLER, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_history_read_attacks_six import STEPS

from relay.protocol import ReclaimTask, decide, render_message


def late_old_beats(*, textless: bool) -> timedelta | None:
    """TASK 1 (thirty steps) is claimed and its runner's machine sleeps: the controller
    takes it back and posts TASK 2, which another runner of the worker claims and dies at
    once. The first machine wakes and its TASK 1 run beats its claim comment every five
    minutes for two hours. She (``textless``) removes the text of every version of TASK 1's
    claim comment as they come. How long after TASK 2's claim the controller takes it
    back (None: not within three hours)."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # TASK 1 claimed; the machine sleeps
    old_id, first = claim_of(world, number)
    world.now += timedelta(minutes=30)
    assert any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER))
    task(world, number, steps=STEPS)
    world.local[WORKER] = Local()  # another runner of the worker
    world.now += timedelta(minutes=1)
    world.pass_of(WORKER, crash_at="run")  # TASK 2 claimed; that runner dies at once
    comment_id, second = claim_of(world, number)
    assert comment_id != old_id and second.task == 2
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    end = claimed + timedelta(hours=3)
    beats = 0
    while world.now < end:
        world.now += timedelta(minutes=5)
        if beats < 24:  # the woken TASK 1 run beats its own claim comment
            beats += 1
            again = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
            world.edit(number, old_id, world.signed(WORKER, render_message(again)))
        if textless:
            history = world.histories[old_id]
            world.histories[old_id] = [v.model_copy(update={"body": None}) for v in history]
        world.local[CONTROLLER] = world.records(CONTROLLER)
        actions = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        if any(isinstance(a, ReclaimTask) and a.task == 2 for a in actions):
            return world.now - claimed
    return None


def test_a_late_beat_of_an_earlier_tasks_claim_holds_no_later_claim() -> None:
    """The control: TASK 1's claim comment keeps its text (its newest version of the
    worker's is a claim of TASK 1): TASK 2's dead claim is taken back within half an hour."""
    took = late_old_beats(textless=False)
    assert took is not None and took <= timedelta(minutes=30)


def test_late_textless_beats_of_an_earlier_tasks_claim_hold_no_later_claim() -> None:
    """As the control, with the text of every version of TASK 1's claim comment removed:
    its late beats are TASK 1's, not TASK 2's."""
    took = late_old_beats(textless=True)
    assert took is not None and took <= timedelta(minutes=30)
