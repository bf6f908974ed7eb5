"""decide() against a collaborator who is no node (mallory) where a claim's life turns on
its comments' edit histories, and on which of the worker's versions whose text was
removed count as beats: those in a comment posted as a claim of the TASK was made
(within ten minutes of its ``claimed_at``). "The worker's accounts" are its instruction
accounts: the controller's account (alice) is one of them. Each test asserts what relay
promises; those that do not hold are strict xfails."""

from __future__ import annotations

from datetime import datetime, timedelta

from protocol_world import BOB, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_claim_window_attacks import older_relays
from test_protocol_history_read_attacks_two import dead_claim, fresh_notice

from relay.protocol import (
    ClaimMsg,
    ExecuteTask,
    ReclaimTask,
    ReportHalfDone,
    decide,
    render_message,
)
from relay.protocol.labels import Label
from relay.protocol.thread import read_thread

STEPS = tuple(f"echo {n}" for n in range(30))  # a lease over five hours


def posted_as(world: World, number: int, comment_id: int, body: str) -> None:
    """The comment as its worker posted it: ``body`` (not an edit: no history)."""
    issue = world.issues[number]
    comments = tuple(
        c.model_copy(update={"body": body}) if c.id == comment_id else c for c in issue.comments
    )
    world.issues[number] = issue.model_copy(update={"comments": comments})


def first_reclaim(world: World, until: datetime, step: timedelta) -> datetime | None:
    """When the controller's passes, one every ``step``, first take the baton back."""
    while world.now < until:
        world.now += step
        if any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER)):
            return world.now
    return None


def test_an_older_relays_beat_with_its_text_removed_keeps_its_own_window() -> None:
    """An older relay's worker (its claims sign no ``alive_for``) claims a TASK of thirty
    steps and beats every five minutes (each beat: alive twenty minutes more) for two
    hours; then its machine goes off. She removes the text of its last beat from the
    comment's edit history (nothing else). PROTOCOL.md: such a version is a beat "given
    what the worker's other versions say" (twenty minutes): the baton is back a few
    minutes after the last beat's window, as it is when she does nothing."""
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
    last = world.histories[comment_id][0]
    assert last.editor != MALLORY and last.body is not None
    world.histories[comment_id][0] = last.model_copy(update={"body": None})  # removed
    at = first_reclaim(world, dead + timedelta(hours=4), timedelta(minutes=1))
    assert at is not None and at <= dead + timedelta(minutes=5), (
        f"taken back {at - dead if at else 'never'} after the claim's last window"
    )


def test_a_claim_posted_after_another_task_ran_keeps_its_textless_beats() -> None:
    """The worker is the worker of two jobs; one pass finds a TASK in each and decides to
    run both: it runs the first (half an hour), then claims the second, whose claim was
    made when the pass decided. That task runs (thirty steps); the worker beats every
    five minutes. Just after a beat she edits the claim comment back to its first text
    (signed by the worker) and removes the text of the worker's versions from its edit
    history. The beats are the worker's versions, written minutes ago: neither the
    controller nor a runner of the worker with no local records takes the task away
    before the next beat."""
    world = World()
    one, two = job(world), job(world)
    task(world, one)
    task(world, two, steps=STEPS)
    actions = decide(world.snapshot(WORKER), WORKER, world.now)
    runs = [a for a in actions if isinstance(a, ExecuteTask)]
    assert [a.issue for a in runs] == [one, two]
    world.apply(WORKER, runs[0])  # the first TASK runs, for half an hour
    world.now += timedelta(minutes=30)
    world.apply(WORKER, runs[1], crash_at="run")  # the second is claimed; it runs
    comment_id, first = claim_of(world, two)
    first_body = next(c.body for c in world.issues[two].comments if c.id == comment_id)
    for _ in range(8):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(two, comment_id, world.signed(WORKER, render_message(beat)))
        assert not any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER))
    world.now += timedelta(seconds=30)
    world.edit(two, comment_id, first_body, by=MALLORY)  # the first text, put back
    world.histories[comment_id] = [
        v.model_copy(update={"body": None}) if v.editor != MALLORY else v
        for v in world.histories[comment_id]
    ]  # every version of the worker's: its text removed from the history
    assert world.baton(two) == {Label.WORKING.value}
    runner = Local()
    wrong: list[str] = []
    end = world.now + timedelta(minutes=4)  # the worker's next beat
    while world.now < end:
        world.now += timedelta(seconds=20)
        world.local[WORKER] = runner
        for action in decide(world.snapshot(WORKER), WORKER, world.now):
            if isinstance(action, ReportHalfDone) and action.issue == two:
                wrong.append(action.kind)
            world.apply(WORKER, action)
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    assert wrong == []


def test_a_notice_posted_soon_after_the_claim_with_its_text_removed_is_no_beat() -> None:
    """The worker claims TASK 1 (thirty steps) and dies before its first beat. Nine
    minutes after the claim a passer-by comments and the controller answers with a
    notice (alice's comment); she edits the notice into the worker's signed claim and
    removes the notice's posting from its edit history. PROTOCOL.md: a job account's
    comment she edited a claim into holds the task back not at all: the baton is back a
    few minutes after the claim's text lapsed."""
    world = World()
    number, _, body, dead, _ = dead_claim(world)
    _, claim = claim_of(world, number)
    world.now = claim.claimed_at + timedelta(minutes=9)
    notice = fresh_notice(world, number, 1, body)
    world.edit(number, notice, body, by=MALLORY)  # the claim, copied into the notice
    posting = world.histories[notice][-1]
    world.histories[notice][-1] = posting.model_copy(update={"body": None})  # removed
    assert notice in [
        e.comment.id for e in read_thread(world.issues[number], world.master).more_claims[1]
    ]
    at = first_reclaim(world, dead + timedelta(hours=1), timedelta(minutes=1))
    assert at is not None and at <= dead + timedelta(minutes=5), (
        f"taken back {at - dead if at else 'never'} after the claim lapsed"
    )


def test_a_claim_with_no_heartbeat_and_a_textless_version_is_still_taken_back() -> None:
    """The worker ran a relay from before the heartbeat when it claimed TASK 1: its signed
    claim carries a lease and no ``alive_until``. Its machine goes off. She edits the claim
    comment (the same text back) and removes the posting's text from its edit history.
    Once the lease is past the controller takes the baton back, as it does when she does
    nothing; its passes never fail."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="run")
    comment_id, claim = claim_of(world, number)
    bare = claim.model_copy(update={"alive_until": None, "alive_for": None})
    assert isinstance(bare, ClaimMsg)
    posted_as(world, number, comment_id, older_relays(world, bare))
    assert read_thread(world.issues[number], world.master).claims[1].comment.id == comment_id
    world.now += timedelta(minutes=1)
    body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    world.edit(number, comment_id, body, by=MALLORY)  # the same text back
    posting = world.histories[comment_id][-1]
    world.histories[comment_id][-1] = posting.model_copy(update={"body": None})  # removed
    failed: list[str] = []
    at: datetime | None = None
    while world.now < bare.lease_until + timedelta(minutes=30):
        world.now += timedelta(minutes=5)
        try:
            actions = world.pass_of(CONTROLLER)
        except Exception as err:  # (any failure of a pass is the finding)
            failed.append(f"{type(err).__name__} {world.now - bare.lease_until} past the lease")
            continue
        if any(isinstance(a, ReclaimTask) for a in actions):
            at = world.now
            break
    assert failed == [] and at is not None, (failed[:1], at)


def test_a_garbled_running_claim_never_lives_a_stood_down_runners_shorter_window() -> None:
    """Two runners of the worker claim TASK 1 (thirty steps) at once: one (heartbeat five
    minutes: twenty minutes a beat) runs it; the other (heartbeat half a minute: two
    minutes a beat) reads the events second and stands down, editing its claim into a
    notice. The running one beats every five minutes. Ten seconds after a beat she edits
    its comment into any text and removes the text of every version of the worker's in
    it. Its beats are still the worker's versions, of the window its claim signed: neither
    the controller nor a runner of the worker with no local records takes the task away
    before the next beat."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # the runner that runs it
    comment_id, first = claim_of(world, number)
    other = first.model_copy(
        update={
            "nonce": "0123abcd",
            "alive_for": 4 * 30,
            "alive_until": world.now + timedelta(seconds=4 * 30),
        }
    )
    stood = world.post(number, BOB, world.signed(WORKER, render_message(other)))
    notice = "**relay:** TASK 1 was claimed by two runners at once: this one runs nothing."
    world.edit(number, stood.id, world.signed(WORKER, notice))
    for _ in range(6):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    beaten = world.now
    world.now += timedelta(seconds=10)
    world.edit(number, comment_id, "thanks!", by=MALLORY)  # the running claim, garbled
    world.histories[comment_id] = [
        v.model_copy(update={"body": None}) if v.editor != MALLORY else v
        for v in world.histories[comment_id]
    ]  # every version of the worker's: its text removed from the history
    assert world.baton(number) == {Label.WORKING.value}
    runner = Local()
    wrong: list[str] = []
    while world.now < beaten + timedelta(minutes=4, seconds=50):  # it beats at five
        world.now += timedelta(seconds=20)
        world.local[WORKER] = runner
        by_runner = decide(world.snapshot(WORKER), WORKER, world.now)
        wrong += [a.kind for a in by_runner if isinstance(a, ReportHalfDone)]
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    assert wrong == []
