"""decide() against a collaborator who is no node (mallory), an eighth round on the rules
that decide when a claim has lapsed once its comments' edit histories are read. Each test
asserts what relay promises; those that do not hold are strict xfails."""

from __future__ import annotations

from datetime import timedelta

from protocol_world import BOB, CONTROLLER, MALLORY, WORKER, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_history_read_attacks_six import STEPS, deleted_and_watched
from test_protocol_history_read_attacks_two import fresh_notice

from relay.protocol import ExecuteTask, render_message


def beat(world: World, number: int, comment_id: int, times: int) -> str:
    """The worker beats its claim every five minutes, ``times`` times: its newest text."""
    _, first = claim_of(world, number)
    body = ""
    for _ in range(times):
        world.now += timedelta(minutes=5)
        again = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        body = world.signed(WORKER, render_message(again))
        world.edit(number, comment_id, body)
    return body


def copy_beside_an_old_claim(*, textless: bool) -> list[str]:
    """TASK 1 is claimed, runs half an hour (six beats) and is answered. TASK 2, thirty
    steps, is claimed and runs, beating. She copies its claim's newest text into alice's
    notice (a passer-by's comment made the controller post one), deletes the running
    claim comment and (``textless``) removes the text of every version of TASK 1's
    claim comment (its posting and its beats: write access may delete a revision). What a
    runner of the worker with no local records and the controller do, a pass every five
    minutes as a real pass fetches its facts, for three hours."""
    world = World()
    number = job(world)
    task(world, number)
    actions = world.pass_of(WORKER, crash_at="run")
    run = next(a for a in actions if isinstance(a, ExecuteTask))
    old_id, _ = claim_of(world, number)
    beat(world, number, old_id, 6)
    for step in ("run", "kept", "result", "recorded", "done", "cleared"):
        world._execute_step(WORKER, run, step)  # TASK 1 answered, the baton handed back
    world.now += timedelta(minutes=5)
    world.pass_of(CONTROLLER)
    task(world, number, steps=STEPS)
    world.now += timedelta(minutes=1)
    world.pass_of(WORKER, crash_at="run")  # TASK 2 claimed; its steps are running
    comment_id, _ = claim_of(world, number)
    assert comment_id != old_id
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    body = beat(world, number, comment_id, 6)
    notice = fresh_notice(world, number, 1, body)
    world.edit(number, notice, body, by=MALLORY)  # alice's notice: the claim's copy
    if textless:
        history = world.histories[old_id]
        assert all(v.editor == BOB for v in history) and len(history) == 7
        world.histories[old_id] = [v.model_copy(update={"body": None}) for v in history]
    return deleted_and_watched(world, number, comment_id, claimed)


def test_a_deleted_running_claim_beside_a_copy_and_an_old_claim_is_left_running() -> None:
    """The control: TASK 1's claim comment keeps its text (its newest version of the
    worker's is a claim of TASK 1, so none of its versions is a beat of TASK 2): the copy
    gives the claim's lease."""
    assert copy_beside_an_old_claim(textless=False) == []


def test_a_deleted_running_claim_beside_a_copy_and_a_textless_old_claim_is_left_running() -> None:
    """As the control, with the text of every version of TASK 1's claim comment removed."""
    assert copy_beside_an_old_claim(textless=True) == []
