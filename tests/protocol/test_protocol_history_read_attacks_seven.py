"""decide() against a collaborator who is no node (mallory), a seventh round on the rules
that decide when a claim has lapsed once its comments' edit histories are read: where the
histories hold no claim of the worker's and every claim that reads is one she wrote last,
the copies give the claim's lease. Each test asserts what relay promises; those that do
not hold are strict xfails."""

from __future__ import annotations

from datetime import timedelta

import pytest
from protocol_world import ALICE, MALLORY, WORKER, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_history_read_attacks_six import STEPS, deleted_and_watched
from test_protocol_history_read_attacks_two import fresh_notice

from relay.protocol import render_message


def deleted_beside_a_copy(*, into: str, removed: bool) -> list[str]:
    """A TASK of thirty steps is claimed and runs. A minute after the claim a passer-by
    posts a copy of it and the controller answers with a notice. The worker beats every
    five minutes for half an hour; she edits ``into`` ("notice": that notice; "task": the
    TASK's own comment, alice's, posted a second before the claim) into the claim's newest
    text, removes the text of that comment's posting from its history (``removed``), and
    deletes the claim comment. What a runner of the worker with no local records and the
    controller do, a pass every five minutes as a real pass fetches its facts, for three
    hours."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    world.now += timedelta(minutes=1)
    posted = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    notice = fresh_notice(world, number, 1, posted)  # a passer-by's copy, alice's notice
    body = ""
    for _ in range(6):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        body = world.signed(WORKER, render_message(beat))
        world.edit(number, comment_id, body)
    copy = notice if into == "notice" else world.issues[number].comments[0].id
    assert copy < comment_id or into == "notice"
    world.edit(number, copy, body, by=MALLORY)  # alice's comment: the claim's copy
    if removed:
        posting = world.histories[copy][-1]
        assert posting.editor == ALICE
        world.histories[copy][-1] = posting.model_copy(update={"body": None})
    return deleted_and_watched(world, number, comment_id, claimed)


@pytest.mark.parametrize("into", ["notice", "task"])
def test_a_deleted_running_claim_beside_a_copy_in_an_early_comment_is_left_running(
    into: str,
) -> None:
    """The control: the posting of the comment she copied the claim into keeps its text.
    Nothing in the histories is the worker's claim; every claim that reads is hers last:
    the copy gives the claim's lease."""
    assert deleted_beside_a_copy(into=into, removed=False) == []


@pytest.mark.parametrize("into", ["notice", "task"])
def test_a_deleted_running_claim_beside_a_copy_in_a_textless_early_comment_is_left_running(
    into: str,
) -> None:
    """As the control, with the text of that comment's posting removed from its history
    (write access may delete a revision): the controller takes the running task back and a
    runner with no records answers it half-done."""
    assert deleted_beside_a_copy(into=into, removed=True) == []
