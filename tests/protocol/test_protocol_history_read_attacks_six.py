"""decide() against a collaborator who is no node (mallory), a sixth round on the rules
that decide when a claim has lapsed once its comments' edit histories are read: a claim
whose comment she wrote last is no claim, but a node's pass decides which facts to fetch
(claim refs, label events, histories) from the thread as it reads before any history,
and the baton's label is hers to set. Each test asserts what relay promises; those that
do not hold are strict xfails."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from protocol_world import BOB, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_history_read_attacks_two import fresh_notice

from relay.protocol import (
    ExecuteTask,
    MoveBaton,
    PostNotice,
    ReclaimTask,
    ReportHalfDone,
    Snapshot,
    baton_events_wanted,
    claim_edits_wanted,
    claim_refs_wanted,
    decide,
    render_message,
)
from relay.protocol.labels import Label, with_baton
from relay.protocol.snapshot import LabelEvent

STEPS = tuple(f"echo {n}" for n in range(30))  # a lease over five hours


def observed(world: World, node: str, events: tuple[LabelEvent, ...]) -> Snapshot:
    """What a pass of ``node`` observes, as relay.node.observe.with_claim_refs fetches it:
    the claim refs, the label events and the edit histories decide() asks for, each asked
    of the snapshot before any of them is read (they are fetched at once)."""
    bare = world.snapshot(node).model_copy(
        update={"comment_edits": (), "edits_read": frozenset(), "claim_refs": frozenset()}
    )
    refs = claim_refs_wanted(bare, node) & frozenset(world.claim_refs)
    moved = baton_events_wanted(bare, node, world.now)
    wanted = claim_edits_wanted(bare, node, world.now)
    read = [c for w in wanted.values() for c in w.comments]
    return bare.model_copy(
        update={
            "claim_refs": refs,
            "label_events": tuple(e for e in events if e.issue in moved),
            "comment_edits": tuple(e for i in read for e in world.histories.get(i, ())),
            "edits_read": frozenset(read),
        }
    )


def deleted_and_watched(world: World, number: int, comment_id: int, claimed: datetime) -> list[str]:
    """The running claim's comment deleted half a minute on, then a runner of the worker
    with no records (the issue's events saying bob set `working` at ``claimed``) and the
    controller, a pass every five minutes for three hours from the claim: what either did
    that takes the task away (a half-done report, the baton taken back)."""
    world.now += timedelta(seconds=30)
    issue = world.issues[number]
    kept = tuple(c for c in issue.comments if c.id != comment_id)
    world.issues[number] = issue.model_copy(update={"comments": kept})  # deleted
    moved = (
        LabelEvent(
            id=1, issue=number, actor=BOB, action="labeled", label=Label.WORKING.value, at=claimed
        ),
    )
    runner = Local()
    wrong: list[str] = []
    end = claimed + timedelta(hours=3)
    while world.now < end:
        world.now += timedelta(minutes=5)
        world.local[WORKER] = runner
        by_runner = decide(observed(world, WORKER, moved), WORKER, world.now)
        wrong += [f"runner {a.kind}" for a in by_runner if isinstance(a, ReportHalfDone)]
        by_controller = decide(observed(world, CONTROLLER, moved), CONTROLLER, world.now)
        wrong += [f"controller {a.kind}" for a in by_controller if isinstance(a, ReclaimTask)]
    return sorted(set(wrong))


def running(world: World) -> tuple[int, int, str, datetime]:
    """A TASK of thirty steps claimed and running, the worker beating every five minutes
    for half an hour: the issue, the claim's comment, its newest text, when it was posted."""
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    body = ""
    for _ in range(6):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        body = world.signed(WORKER, render_message(beat))
        world.edit(number, comment_id, body)
    return number, comment_id, body, claimed


def deleted_beside_a_copy_as_observed(*, copy: bool) -> list[str]:
    """As the fifth round's deleted running claim beside a copy in alice's notice, but each
    pass of a runner of the worker with no local records fetches what a real pass does:
    the events (the worker's account set `working` as it claimed) and the claim ref only
    where the thread, as it reads before the histories, asks for them. What the runner
    and the controller do, a pass every five minutes, for three hours."""
    world = World()
    number, comment_id, body, claimed = running(world)
    if copy:
        notice = fresh_notice(world, number, 1, body)
        world.edit(number, notice, body, by=MALLORY)  # alice's notice: the claim's copy
    return deleted_and_watched(world, number, comment_id, claimed)


def test_a_deleted_running_claim_alone_as_observed_is_left_running() -> None:
    """The control: no copy. The thread holds no claim, so a runner's pass reads the
    issue's events, which say the worker's account set `working`: it waits."""
    assert deleted_beside_a_copy_as_observed(copy=False) == []


def test_a_deleted_running_claim_beside_a_copy_as_observed_is_never_answered() -> None:
    """As the control, with the claim's newest text copied into alice's notice before the
    deletion (the fifth round's attack, there with the events handed to the runner)."""
    assert deleted_beside_a_copy_as_observed(copy=True) == []


def her_baton_and_resave(*, resave: bool, seen: bool) -> list[MoveBaton | PostNotice]:
    """A TASK of thirty steps runs, the worker beating. Just after a beat she sets
    `awaiting:controller` (a label the controller follows) and puts the claim's first
    text back in its comment (``resave``: signed, its `alive_until` long past, so the
    controller's pass reads the histories, and the newest version is hers). What the
    controller's pass does (``seen``: its records hold that it saw the TASK claimed)."""
    world = World()
    number, comment_id, _, _ = running(world)
    first = world.histories[comment_id][-1].body
    assert first is not None
    world.now += timedelta(seconds=30)
    world.set_labels(number, with_baton(world.issues[number].labels, Label.AWAITING_CONTROLLER))
    if resave:
        world.edit(number, comment_id, first, by=MALLORY)
    world.now += timedelta(seconds=30)
    snapshot = world.snapshot(CONTROLLER)
    if seen:
        local = snapshot.local.model_copy(update={"claimed_seen": frozenset({(number, 1)})})
        snapshot = snapshot.model_copy(update={"local": local})
    actions = decide(snapshot, CONTROLLER, world.now)
    return [a for a in actions if isinstance(a, MoveBaton | PostNotice)]


@pytest.mark.parametrize("seen", [False, True])
def test_her_awaiting_controller_alone_never_hands_a_running_task_on(seen: bool) -> None:
    """The control: her label alone. The TASK is taken (its claim reads): the controller
    says nothing and moves nothing."""
    assert her_baton_and_resave(resave=False, seen=seen) == []


@pytest.mark.parametrize("seen", [False, True])
def test_her_awaiting_controller_and_resave_never_hand_a_running_task_on(seen: bool) -> None:
    """As the control, with the claim's first text put back by her."""
    done = her_baton_and_resave(resave=True, seen=seen)
    assert done == [], [a.reason for a in done]


def dead_under_her_awaiting_worker(edit: str | None) -> timedelta | None:
    """The worker claims a TASK of thirty steps and its machine goes off before its first
    beat. Five minutes before its text lapses she sets `awaiting:worker` (the controller
    takes a lapsed claim back from there too) and edits the claim comment: ``edit`` is
    "resave" (its own text put back), "garble" (any text), or None. How long after the
    claim's text lapsed the controller, a pass every five minutes, takes the baton back
    (None: not before an hour past the claim's lease)."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # claimed; then the machine is off
    comment_id, claim = claim_of(world, number)
    body = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    dead = claim.alive_until
    assert dead is not None
    world.now = dead - timedelta(minutes=5)
    world.set_labels(number, with_baton(world.issues[number].labels, Label.AWAITING_WORKER))
    if edit == "resave":
        world.edit(number, comment_id, body, by=MALLORY)
    elif edit == "garble":
        world.edit(number, comment_id, "thanks!", by=MALLORY)
    while world.now < claim.lease_until + timedelta(hours=1):
        world.now += timedelta(minutes=5)
        actions = world.pass_of(CONTROLLER)
        assert not any(isinstance(a, ExecuteTask) for a in actions)
        if any(isinstance(a, ReclaimTask) for a in actions):
            return world.now - dead
    return None


def test_a_dead_claim_under_her_awaiting_worker_alone_is_taken_back() -> None:
    """The control: her label alone. The claim reads, lapses, and the baton is back a
    pass after its text's end."""
    late = dead_under_her_awaiting_worker(None)
    assert late is not None and late <= timedelta(minutes=10)


@pytest.mark.parametrize("edit", ["resave", "garble"])
def test_a_dead_claim_under_her_awaiting_worker_and_edit_is_taken_back(edit: str) -> None:
    """As the control, with the claim comment edited by her once."""
    late = dead_under_her_awaiting_worker(edit)
    assert late is not None and late <= timedelta(minutes=10), (
        f"taken back {late if late is not None else 'never'} after the claim's window"
    )
