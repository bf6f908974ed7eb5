"""decide() against a collaborator who is no node (mallory), a fourth round on the rules
that decide when a claim has lapsed from its comments' edit histories: the claim stamped
as its worker posts it, a comment's textless posting counted at its claim's
``claimed_at``, and the window an older relay's textless beat is given. "The worker's
accounts" are its instruction accounts: the controller's account (alice) is one of them.
Each test asserts what relay promises; those that do not hold are strict xfails."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from protocol_world import BOB, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_claim_window_attacks import older_relays
from test_protocol_history_read_attacks_three import first_reclaim, posted_as
from test_protocol_history_read_attacks_two import fresh_notice

from relay.protocol import ExecuteTask, ReclaimTask, ReportHalfDone, decide, render_message
from relay.protocol.labels import Label
from relay.protocol.work import RunLimits

STEPS = tuple(f"echo {n}" for n in range(30))  # a lease over five hours


def wrong_before(world: World, until: datetime) -> list[str]:
    """What the controller and a runner of the worker with no local records do, a pass
    every twenty seconds until ``until``: any reclaim or half-done report."""
    runner = Local()
    wrong: list[str] = []
    while world.now < until:
        world.now += timedelta(seconds=20)
        world.local[WORKER] = runner
        by_runner = decide(world.snapshot(WORKER), WORKER, world.now)
        wrong += [a.kind for a in by_runner if isinstance(a, ReportHalfDone)]
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    return wrong


def test_an_older_relays_beats_all_textless_never_live_the_window_its_text_grew_to() -> None:
    """An older relay's worker (its claims sign no ``alive_for``) claims a TASK of thirty
    steps and beats every five minutes (each beat: alive twenty minutes more) for two
    hours; then its machine goes off. She edits the claim comment once (its last text
    back) and removes the text of every version of the worker's, its posting's too. No
    beat of the worker's with text is left to say its window, and the newest textless
    one is given the window the current text grew to (``alive_until - claimed_at``: two
    hours twenty). PROTOCOL.md: such a beat is "given what the worker's other versions
    say", never the window its text grew to: the baton is back a few minutes after the
    last beat's window."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")
    comment_id, claim = claim_of(world, number)
    old = claim.model_copy(update={"alive_for": None})
    posted_as(world, number, comment_id, older_relays(world, old))  # an older relay's
    beat = old
    for _ in range(24):
        world.now += timedelta(minutes=5)
        beat = old.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, older_relays(world, beat))
    dead = beat.alive_until
    assert dead is not None and old.lease_until - dead > timedelta(hours=2)
    world.now += timedelta(seconds=30)
    last = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    world.edit(number, comment_id, last, by=MALLORY)  # the same text back
    world.histories[comment_id] = [
        v.model_copy(update={"body": None}) if v.editor != MALLORY else v
        for v in world.histories[comment_id]
    ]  # every version of the worker's: its text removed
    at = first_reclaim(world, dead + timedelta(hours=4), timedelta(minutes=1))
    assert at is not None and at <= dead + timedelta(minutes=5), (
        f"taken back {at - dead if at else 'never'} after the claim's last window"
    )


def later_claim_then(*, swap: bool, later: bool = True) -> list[str]:
    """A TASK of thirty steps is claimed and runs; the worker beats every five minutes.
    An hour in, another runner of the worker posts a claim of the same TASK and stands
    down (its pass decided before the first claim, ran another job's TASK for an hour,
    and found the claim ref gone: she deleted it; the events told it of the running
    claim, so it edited its claim into a notice): a claim the worker signed, made an hour
    after the running one. Twenty-five minutes on (the later claim's text has lapsed),
    ten seconds after a beat, she edits the running claim's comment into the later
    claim's text (``swap``) or into any text, and removes the text of every version of
    the worker's in it (``later`` False: no other runner claimed). What the controller
    and a runner of the worker with no local records do before the next beat."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)

    def beat() -> None:
        world.now += timedelta(minutes=5)
        alive = world.now + timedelta(minutes=20)
        body = render_message(first.model_copy(update={"alive_until": alive}))
        world.edit(number, comment_id, world.signed(WORKER, body))

    for _ in range(12):
        beat()
    late = first.model_copy(
        update={
            "nonce": "0123abcd",
            "claimed_at": world.now,
            "lease_until": first.lease_until + (world.now - first.claimed_at),
            "alive_until": world.now + timedelta(minutes=20),
        }
    )
    late_body = world.signed(WORKER, render_message(late))
    if later:
        stood = world.post(number, BOB, late_body)  # the later runner's claim, as posted
        notice = "**relay:** TASK 1 was claimed by two runners at once: this one runs nothing."
        world.edit(number, stood.id, world.signed(WORKER, notice))
    for _ in range(5):
        beat()
    assert world.now - late.claimed_at > timedelta(minutes=20)  # the later claim lapsed
    beaten = world.now
    world.now += timedelta(seconds=10)
    world.edit(number, comment_id, late_body if swap else "thanks!", by=MALLORY)
    world.histories[comment_id] = [
        v.model_copy(update={"body": None}) if v.editor != MALLORY else v
        for v in world.histories[comment_id]
    ]  # every version of the worker's: its text removed
    assert world.baton(number) == {Label.WORKING.value}
    return wrong_before(world, beaten + timedelta(minutes=4, seconds=50))


def test_a_later_runners_claim_edited_over_the_running_one_never_takes_it_away() -> None:
    """As :func:`later_claim_then`, her edit the later claim's text: the running claim's
    comment now holds a claim made an hour after it was posted, so its textless versions
    (the running claim's beats, minutes old) are no beats; the only claim left says it
    lapsed an hour ago. Neither the controller nor a runner of the worker with no local
    records may take the task away before the next beat."""
    assert later_claim_then(swap=True) == []


def test_a_later_runners_claim_never_takes_a_garbled_running_claim_away() -> None:
    """As :func:`later_claim_then`, her edit any text: the running claim's comment holds
    no claim, the only claim of the TASK known is the later runner's (not made as that
    comment was posted), so the running claim's textless beats are no beats and the
    later claim's lapse is read as the worker's last word. Without the later claim the
    same garble leaves the task alone."""
    assert later_claim_then(swap=False) == []


def test_a_garbled_running_claim_with_its_beats_textless_alone_is_left_alone() -> None:
    """The control: no other runner claimed; the same garble and removals leave the
    running task alone (no claim of the worker's is read, and the events say it was
    claimed)."""
    assert later_claim_then(swap=False, later=False) == []


@pytest.mark.parametrize("older", [False, True], ids=["stamped-when-decided", "older-relay"])
def test_a_not_yet_upgraded_workers_late_claim_is_never_taken_by_her_one_edit(
    older: bool,
) -> None:
    """The controller runs this relay; the worker not yet (PROTOCOL.md: upgrade a job's
    controller first), so it stamps its claim when its pass decided it, not as it posts
    it (``older``: and signs no ``alive_for``). It is the worker of two jobs; one pass
    runs the first TASK (half an hour), then claims the second (thirty steps), whose claim
    says alive until twenty minutes after the pass decided: ten minutes before it was
    posted. The task runs; the worker beats five minutes on. Ten seconds after the claim
    she edits its comment (the same text back), so its history is read. The claim's
    posting is the worker's word, written seconds ago: neither the controller nor a
    runner of the worker with no local records takes the task away before the beat."""
    world = World()
    one, two = job(world), job(world)
    task(world, one)
    task(world, two, steps=STEPS)
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    runs = [a for a in actions if isinstance(a, ExecuteTask)]
    assert [a.issue for a in runs] == [one, two]
    world.apply(WORKER, runs[0])  # the first TASK runs, for half an hour
    world.now += timedelta(minutes=30)
    world.apply(WORKER, runs[1], crash_at="claim")  # its claim ref, and its record
    claim = runs[1].claim
    if older:
        body = older_relays(world, claim.model_copy(update={"alive_for": None}))
    else:
        body = world.signed(WORKER, runs[1].claim_body)  # as decided, not re-stamped
    posted = world.post(two, BOB, body)
    world.move(two, runs[1].expect, runs[1].claimed)
    assert world.baton(two) == {Label.WORKING.value}
    assert claim.alive_until is not None and claim.alive_until < posted.created_at
    world.now += timedelta(seconds=10)
    world.edit(two, posted.id, body, by=MALLORY)  # the same text back
    assert wrong_before(world, posted.created_at + timedelta(minutes=4, seconds=50)) == []


def test_a_garbled_dead_claim_never_lives_the_controllers_longer_window() -> None:
    """The controller's node runs tasks of its own with a heartbeat of half an hour (two
    hours a beat); the worker's is five minutes (twenty minutes a beat). The worker claims
    a TASK of thirty steps, beats for an hour, and its machine goes off. She copies the
    claim into a controller's notice (so the claim is known), edits the claim comment
    into any text and removes the text of every version of the worker's in it. The
    worker's beats signed twenty minutes each: the baton is back a few minutes after the
    last one's window, as it is when she edits the comment without garbling it."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")
    comment_id, first = claim_of(world, number)
    first_body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    for _ in range(12):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    dead = world.now + timedelta(minutes=20)
    world.now += timedelta(minutes=1)
    notice = fresh_notice(world, number, 1, first_body)
    world.edit(number, notice, first_body, by=MALLORY)  # the claim, known from a copy
    world.edit(number, comment_id, "thanks!", by=MALLORY)  # the claim comment, garbled
    world.histories[comment_id] = [
        v.model_copy(update={"body": None}) if v.editor != MALLORY else v
        for v in world.histories[comment_id]
    ]  # every version of the worker's: its text removed
    limits = RunLimits(heartbeat=1800)  # the controller's own setting
    at = None
    while world.now < dead + timedelta(hours=4) and at is None:
        world.now += timedelta(minutes=1)
        snapshot = world.snapshot(CONTROLLER).model_copy(update={"limits": limits})
        if any(isinstance(a, ReclaimTask) for a in decide(snapshot, CONTROLLER, world.now)):
            at = world.now
    assert at is not None and at <= dead + timedelta(minutes=5), (
        f"taken back {at - dead if at else 'never'} after the claim's last window"
    )
