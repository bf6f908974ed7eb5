"""decide() against a collaborator who is no node (mallory) where a claim's life turns on
its comments' edit histories: those of the comments
:func:`relay.protocol.decide.claim_edits_wanted` names, read only when it asks. "The
worker's accounts" are its instruction accounts: the controller's account (alice) is one
of them, so the controller's own versions are read as the worker's. Each test asserts
what relay promises; those that do not hold are strict xfails."""

from __future__ import annotations

from datetime import datetime, timedelta

from protocol_world import ALICE, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task

from relay.protocol import (
    ReclaimTask,
    ReportHalfDone,
    User,
    claim_edits_wanted,
    decide,
    render_message,
)
from relay.protocol.labels import Label
from relay.protocol.thread import read_thread


def dead_claim(world: World) -> tuple[int, int, str, datetime, datetime]:
    """The worker claims TASK 1 (thirty steps, a lease over five hours) and its machine
    goes off before its first beat: the issue, the claim's comment, its signed text, when
    that text lapses, and when its lease ends."""
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")
    assert world.baton(number) == {Label.WORKING.value}
    comment_id, claim = claim_of(world, number)
    assert claim.alive_until is not None
    assert claim.lease_until - claim.alive_until > timedelta(hours=4)
    body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    return number, comment_id, body, claim.alive_until, claim.lease_until


def fresh_notice(world: World, number: int, n: int, claim_body: str) -> int:
    """A passer-by (a new account each time: strangers can comment) posts a copy of the
    claim; the controller's next pass says once, as alice, that it does not act on it.
    That notice's posting is a version the controller's account wrote, just now."""
    passer_by = User(id=7000 + n, login=f"passer-by-{n}")
    world.post(number, passer_by, claim_body)
    world.pass_of(CONTROLLER)
    notice = [c for c in world.issues[number].comments if c.author == ALICE][-1]
    assert passer_by.login in notice.body
    return notice.id


def test_a_controller_notice_with_its_text_removed_is_no_beat() -> None:
    """The worker claims TASK 1 (thirty steps) and dies. Every quarter of an hour a
    passer-by comments, the controller answers with a notice (alice's comment); she edits
    the notice into the worker's signed claim and removes the notice's posting from its
    edit history (write access may delete a revision). No version there is the worker's
    beat: the baton is back a few minutes after the claim's text lapsed."""
    world = World()
    number, _, body, dead, _ = dead_claim(world)
    world.now = dead - timedelta(minutes=10)
    reclaimed: datetime | None = None
    n = 0
    while world.now < dead + timedelta(minutes=45):
        n += 1
        notice = fresh_notice(world, number, n, body)
        world.edit(number, notice, body, by=MALLORY)  # the claim, copied into the notice
        posting = world.histories[notice][-1]
        assert posting.editor == ALICE
        world.histories[notice][-1] = posting.model_copy(update={"body": None})  # removed
        thread = read_thread(world.issues[number], world.master)
        assert notice in [e.comment.id for e in thread.more_claims[1]]
        stop = world.now + timedelta(minutes=15)
        while world.now < stop:
            world.now += timedelta(minutes=2)
            if any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER)):
                reclaimed = world.now
                break
        if reclaimed is not None:
            break
    assert reclaimed is not None and reclaimed <= dead + timedelta(minutes=8), (
        f"taken back {reclaimed - dead if reclaimed else 'never'} after the claim lapsed"
    )


def test_a_dead_claim_copy_never_hides_a_running_garbled_claim() -> None:
    """TASK 1 ran and was answered. TASK 2 (thirty steps) runs; the worker beats every five
    minutes. Right after the claim she edits the worker's RESULT 1 into the claim's first
    signed text (dead a quarter of an hour later) and leaves it. Forty minutes on, just
    after a beat, she edits the claim comment into any text; the baton stays `working`.
    The running claim's beats are in its comment's history: neither the controller nor a
    runner of the worker with no local records takes the task away before the next beat."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)  # TASK 1 runs and is answered
    world.pass_of(CONTROLLER)
    result_1 = read_thread(world.issues[number], world.master).results[1].comment.id
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # TASK 2 claimed; its steps are running
    comment_id, first = claim_of(world, number)
    assert first.task == 2
    first_body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    world.edit(number, result_1, first_body, by=MALLORY)  # the first claim, copied
    for _ in range(8):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
        assert not any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER))
    world.now += timedelta(seconds=30)
    world.edit(number, comment_id, "thanks!", by=MALLORY)  # the running claim, garbled
    assert world.baton(number) == {Label.WORKING.value}
    runner = Local()
    wrong: list[str] = []
    end = world.now + timedelta(minutes=4)  # the worker's next beat puts the claim back
    while world.now < end:
        world.now += timedelta(seconds=20)
        world.local[WORKER] = runner
        for action in decide(world.snapshot(WORKER), WORKER, world.now):
            if isinstance(action, ReportHalfDone):
                wrong.append(action.kind)
            world.apply(WORKER, action)
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    assert wrong == []


def test_a_garbled_running_claim_with_its_beats_text_removed_is_never_taken_away() -> None:
    """TASK 1 ran and was answered. TASK 2 (thirty steps) runs; the worker beats every five
    minutes. She edits the worker's RESULT 1 into the claim's first signed text and puts it
    back every few minutes (it lives by her last edit, so the histories are read). Just
    after a beat she edits the claim comment into any text and removes the text of its
    last beats from its edit history. The beats are still the worker's versions, written
    minutes ago: neither the controller nor a runner of the worker with no local records
    takes the task away before the next beat."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)  # TASK 1 runs and is answered
    world.pass_of(CONTROLLER)
    result_1 = read_thread(world.issues[number], world.master).results[1].comment.id
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # TASK 2 claimed; its steps are running
    comment_id, first = claim_of(world, number)
    first_body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    for _ in range(8):
        world.now += timedelta(minutes=5)
        world.edit(number, result_1, first_body, by=MALLORY)  # the first claim, copied
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    world.now += timedelta(seconds=30)
    world.edit(number, comment_id, "thanks!", by=MALLORY)  # the running claim, garbled
    world.histories[comment_id] = [
        v.model_copy(update={"body": None}) if v.editor != MALLORY else v
        for v in world.histories[comment_id]
    ]  # every version of the worker's: its text removed from the history
    assert world.baton(number) == {Label.WORKING.value}
    assert claim_edits_wanted(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    runner = Local()
    wrong: list[str] = []
    end = world.now + timedelta(minutes=4)  # the worker's next beat puts the claim back
    while world.now < end:
        world.now += timedelta(seconds=20)
        world.edit(number, result_1, first_body, by=MALLORY)  # (keeps the read wanted)
        world.local[WORKER] = runner
        for action in decide(world.snapshot(WORKER), WORKER, world.now):
            if isinstance(action, ReportHalfDone):
                wrong.append(action.kind)
            world.apply(WORKER, action)
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    assert wrong == []
