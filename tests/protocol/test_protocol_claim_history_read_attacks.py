"""decide() against a collaborator who is no node (mallory) where a pass reads only some
comments' edit histories (:func:`relay.protocol.decide.claim_edits_wanted` names the
comments the worker's accounts posted since the newest TASK): a claim held in a comment
that is not named, and a TASK whose comment she moves past the running claim. Each test
asserts what relay promises; those that do not hold are strict xfails."""

from __future__ import annotations

from datetime import datetime, timedelta

from protocol_world import ALICE, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task

from relay.protocol import (
    Account,
    Master,
    Node,
    ReclaimTask,
    ReportHalfDone,
    User,
    decide,
    render_message,
)
from relay.protocol.labels import Label
from relay.protocol.thread import read_thread

CAROL = User(id=103, login="carol")  # the controller's person: one of its accounts alone


def reclaimed_at(
    world: World, number: int, comment_id: int, body: str, dead: datetime
) -> datetime | None:
    """Every four minutes, from before the claim's text lapses, she puts ``body`` back in
    ``comment_id`` (the same text: only its time moves); when the controller takes the
    baton back, if it does within two hours of ``dead``."""
    world.now = dead - timedelta(minutes=10)
    while world.now < dead + timedelta(hours=2):
        world.now += timedelta(minutes=4)
        world.edit(number, comment_id, body, by=MALLORY)
        if any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER)):
            return world.now
    return None


def answered_then_dead(world: World) -> tuple[int, int, int, str, datetime]:
    """TASK 1 ran and was answered; TASK 2 (thirty steps, a lease over five hours) was
    claimed and the worker's machine went off before its first beat: the issue, RESULT 1's
    comment, the claim's comment, the claim's signed text, and when that text lapses."""
    number = job(world)
    task(world, number)
    world.pass_of(WORKER)  # TASK 1 runs and is answered
    world.pass_of(CONTROLLER)
    result_1 = read_thread(world.issues[number], world.master).results[1].comment
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # TASK 2 claimed; then the machine is off
    assert world.baton(number) == {Label.WORKING.value}
    comment_id, claim = claim_of(world, number)
    assert claim.task == 2 and claim.alive_until is not None
    assert claim.lease_until - claim.alive_until > timedelta(hours=4)
    body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    return number, result_1.id, comment_id, body, claim.alive_until


def test_a_dead_claim_copied_into_an_older_comment_is_taken_back_when_it_lapses() -> None:
    """TASK 1 ran and was answered. The worker claims TASK 2 (thirty steps) and dies. She
    edits the worker's RESULT 1 into the worker's signed claim of TASK 2 (the first claim
    of the thread now), then puts the same text back every four minutes. Her versions are
    no beats: the baton is back a few minutes after the claim's text lapsed."""
    world = World()
    number, result_1, _, body, dead = answered_then_dead(world)
    world.now = dead - timedelta(minutes=15)
    world.edit(number, result_1, body, by=MALLORY)  # the claim, copied
    thread = read_thread(world.issues[number], world.master)
    assert thread.claims[2].comment.id == result_1
    at = reclaimed_at(world, number, result_1, body, dead)
    assert at is not None and at <= dead + timedelta(minutes=8), at - dead if at else None


def with_carol() -> Master:
    """The world's roster, the controller listing a second account of its person's (Carol):
    a job's account (her comments' claims count), though the worker takes no TASK of hers."""
    world = World()
    nodes = tuple(
        n.model_copy(update={"accounts": (*n.accounts, Account(id=CAROL.id, login=CAROL.login))})
        if n.name == CONTROLLER
        else n
        for n in world.master.nodes
    )
    assert all(isinstance(n, Node) for n in nodes)
    return world.master.model_copy(update={"nodes": nodes})


def test_a_dead_claim_copied_into_a_controller_persons_comment_is_taken_back() -> None:
    """The controller's person (Carol, an account the controller lists and the worker does
    not) asks in the thread how it goes, after the worker claimed TASK 2 and died. She
    edits Carol's comment into the worker's signed claim and puts it back every four
    minutes. The baton is back a few minutes after the claim's text lapsed."""
    world = World(master=with_carol())
    number, _, _, body, dead = answered_then_dead(world)
    world.now = dead - timedelta(minutes=15)
    asked = world.post(number, CAROL, "how is it going?")
    world.edit(number, asked.id, body, by=MALLORY)  # the claim, copied
    thread = read_thread(world.issues[number], world.master)
    assert [e.comment.id for e in thread.more_claims[2]] == [asked.id]
    at = reclaimed_at(world, number, asked.id, body, dead)
    assert at is not None and at <= dead + timedelta(minutes=8), at - dead if at else None


def task_moved_past_the_claim(world: World, number: int) -> int:
    """She moves the newest TASK past the worker's claim: a passer-by posts a claim-shaped
    comment, the controller says once that it does not act on it (a fresh comment of its
    account, which the worker takes TASKs from), and she edits that notice into the TASK's
    signed text and the TASK's own comment into any text. The thread's TASK is now the
    notice, edited (never run, but it holds the number): its comment, posted after the
    claim."""
    issue = world.issues[number]
    thread = read_thread(issue, world.master)
    posted = thread.tasks[thread.last_task].comment
    claim = thread.claims[thread.last_task].comment
    passer_by = User(id=7001, login="passer-by")
    world.post(number, passer_by, claim.body)  # refused, and said once
    world.pass_of(CONTROLLER)
    notice = [c for c in world.issues[number].comments if c.author == ALICE][-1]
    assert passer_by.login in notice.body and notice.created_at > claim.created_at
    world.edit(number, notice.id, posted.body, by=MALLORY)  # the TASK, copied
    world.edit(number, posted.id, "thanks!", by=MALLORY)  # the TASK's own, garbled
    thread = read_thread(world.issues[number], world.master)
    moved = thread.task_entry(thread.last_task)
    assert moved is not None and moved.comment.id == notice.id
    return notice.id


def test_a_dead_claim_is_taken_back_though_she_moved_the_task_past_it() -> None:
    """The worker claims TASK 1 (thirty steps) and dies. She moves the TASK past the claim
    (a controller's notice edited into it, the TASK's comment garbled), then puts the
    claim's text back every four minutes. The baton is back a few minutes after the
    claim's text lapsed."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # claimed; then the machine is off
    comment_id, claim = claim_of(world, number)
    assert claim.alive_until is not None
    dead = claim.alive_until
    body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    world.now = dead - timedelta(minutes=15)
    task_moved_past_the_claim(world, number)
    at = reclaimed_at(world, number, comment_id, body, dead)
    assert at is not None and at <= dead + timedelta(minutes=8), at - dead if at else None


def test_a_dead_claim_garbled_with_the_task_moved_past_it_is_taken_back() -> None:
    """The worker claims TASK 1 (thirty steps) and dies. She moves the TASK past the claim
    (a controller's notice edited into it, the TASK's comment garbled) and edits the claim
    comment into any text; the baton stays `working`. The worker's claim in its comment's
    history says when it lapsed: the baton is back a few minutes after that."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # claimed; then the machine is off
    comment_id, claim = claim_of(world, number)
    assert claim.alive_until is not None
    dead = claim.alive_until
    world.now = dead - timedelta(minutes=15)
    task_moved_past_the_claim(world, number)
    world.edit(number, comment_id, "thanks!", by=MALLORY)  # the dead claim, garbled
    at: datetime | None = None
    while world.now < claim.lease_until + timedelta(hours=2):
        world.now += timedelta(minutes=5)
        if any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER)):
            at = world.now
            break
    assert at is not None and at <= dead + timedelta(minutes=10), at - dead if at else None


def test_a_running_claim_garbled_with_the_task_moved_past_it_is_never_taken_away() -> None:
    """A TASK of thirty steps runs; the worker beats every five minutes. Just after a beat
    she moves the TASK past the claim (a controller's notice edited into it, the TASK's
    comment garbled) and edits the claim comment into any text; the baton stays
    `working`. A runner of the worker with no local records (an Actions run her edit
    woke) must wait the claim out, as it does when only the claim is garbled."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    for _ in range(6):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    world.now += timedelta(seconds=30)
    task_moved_past_the_claim(world, number)
    world.edit(number, comment_id, "thanks!", by=MALLORY)  # the running claim, garbled
    assert world.baton(number) == {Label.WORKING.value}
    runner = Local()
    wrong: list[str] = []
    end = world.now + timedelta(minutes=4)  # the worker's next beat puts the claim back
    while world.now < end:
        world.now += timedelta(seconds=5)
        world.local[WORKER] = runner
        for action in decide(world.snapshot(WORKER), WORKER, world.now):
            if isinstance(action, ReportHalfDone):
                wrong.append(action.kind)
            world.apply(WORKER, action)
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [a.kind for a in by_controller if isinstance(a, ReclaimTask)]
    assert wrong == []
