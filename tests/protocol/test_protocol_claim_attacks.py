"""decide() against a collaborator who is no node (mallory): what she can make of the
baton's label events and of a claim's signed heartbeat (its comment edited, an older beat
put back, a dead worker's claim edited again and again). Each test asserts what relay
promises; the one that does not hold is a strict xfail, a limit PROTOCOL.md states."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from protocol_world import ALICE, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_events import job, task

from relay.protocol import (
    ClaimMsg,
    ExecuteTask,
    ReclaimTask,
    ReportHalfDone,
    decide,
    render_message,
)
from relay.protocol.labels import Label
from relay.protocol.snapshot import LabelEvent
from relay.protocol.thread import Entry, read_thread


def moves(number: int, at: datetime, rows: list[tuple[object, str, str]]) -> tuple[LabelEvent, ...]:
    """Label events of ``number`` in one second, in order: (who, action, label)."""
    return tuple(
        LabelEvent(id=n, issue=number, actor=who, action=act, label=label, at=at)  # type: ignore[arg-type]
        for n, (who, act, label) in enumerate(rows, start=1)
    )


def dead_claim(world: World, steps: int) -> tuple[int, Entry]:
    """A job whose TASK of ``steps`` steps the worker claimed before its machine went off:
    the issue and the claim's entry."""
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(steps)))
    world.pass_of(WORKER, crash_at="run")  # claimed; then the machine is off
    assert world.baton(number) == {Label.WORKING.value}
    thread = read_thread(world.issues[number], world.master)
    entry = thread.claims[thread.last_task]
    assert isinstance(entry.message, ClaimMsg) and entry.message.alive_until is not None
    return number, entry


def claim_of(world: World, number: int) -> tuple[int, ClaimMsg]:
    from relay.protocol.thread import read_thread

    thread = read_thread(world.issues[number], world.master)
    entry = thread.claims[thread.last_task]
    assert isinstance(entry.message, ClaimMsg)
    return entry.comment.id, entry.message


def test_an_older_heartbeat_put_back_never_takes_a_running_task_away() -> None:
    """TASK 1 is claimed and runs for an hour; the worker's heartbeat edits its claim
    every few minutes (the beat at 50 minutes says it is alive until 70). A claim counts
    whatever `updated_at` says, so she edits the claim comment back to its first text
    (signed by the worker, alive until 20 minutes): the controller takes the baton back
    from a task that is running ("it looks gone"), and a runner of the worker with no
    local records answers it half-done; the real RESULT that follows is never read."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running (on a thread)
    assert world.baton(number) == {Label.WORKING.value}
    comment_id, first = claim_of(world, number)
    original = world.signed(WORKER, render_message(first))
    world.now += timedelta(minutes=50)
    beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
    world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))  # the worker
    world.edit(number, comment_id, original, by=MALLORY)  # hers, a minute later
    world.now += timedelta(minutes=1)
    taken = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    world.local[WORKER] = Local()  # another runner of the worker, with no records
    fresh = decide(world.snapshot(WORKER), WORKER, world.now)
    wrong = [a for a in (*taken, *fresh) if isinstance(a, ReclaimTask | ReportHalfDone)]
    assert not wrong, [a.kind for a in wrong]


def test_a_beat_put_back_just_after_it_lapsed_never_takes_a_running_task_away() -> None:
    """The worker beats every five minutes, each beat alive for twenty. Half a minute after
    one beat's `alive_until` (the worker has beaten four times since), she puts that beat's
    signed text back: it says less than the edit that put it there only by half a minute.
    The controller's grace runs out before the worker's next beat; the running task must
    not be taken back, nor reported half-done by a runner with no records."""
    world = World()
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running (on a thread)
    comment_id, first = claim_of(world, number)
    world.now += timedelta(minutes=30)
    old = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
    world.edit(number, comment_id, world.signed(WORKER, render_message(old)))  # a beat at 30
    world.now += timedelta(minutes=20)
    newest = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
    world.edit(number, comment_id, world.signed(WORKER, render_message(newest)))  # at 50
    world.now += timedelta(seconds=30)
    world.edit(number, comment_id, world.signed(WORKER, render_message(old)), by=MALLORY)  # hers
    world.now += timedelta(minutes=2, seconds=30)  # past the old beat's end and the grace
    taken = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    world.local[WORKER] = Local()  # another runner of the worker, with no records
    fresh = decide(world.snapshot(WORKER), WORKER, world.now)
    wrong = [a for a in (*taken, *fresh) if isinstance(a, ReclaimTask | ReportHalfDone)]
    assert not wrong, [a.kind for a in wrong]


def test_her_awaiting_worker_over_the_controllers_own_never_stalls_the_task() -> None:
    """The controller posts TASK 1 and hands the baton (its own `labeled awaiting:worker`);
    she takes the label off and puts it back. The worker reads the baton as before her
    move, `awaiting:controller`: the controller's own hand-over is not asked about, and
    the honest TASK is never run, nor handed again (the controller reads the labels:
    `awaiting:worker`, the worker's turn)."""
    world = World()
    number = job(world)
    task(world, number)
    events = moves(
        number,
        world.now,
        [
            (ALICE, "labeled", Label.AWAITING_WORKER.value),  # the controller's hand-over
            (MALLORY, "unlabeled", Label.AWAITING_WORKER.value),
            (MALLORY, "labeled", Label.AWAITING_WORKER.value),
        ],
    )
    world.now += timedelta(seconds=5)
    snapshot = world.snapshot(WORKER).model_copy(update={"label_events": events})
    actions = decide(snapshot, WORKER, world.now)
    assert any(isinstance(a, ExecuteTask) for a in actions), actions


@pytest.mark.parametrize("moved", [Label.AWAITING_CONTROLLER, Label.WORKING])
def test_her_awaiting_worker_after_the_jobs_own_last_move_is_not_followed(moved: Label) -> None:
    """The controller hands TASK 1 over, then an account of the job moves the baton on:
    the controller takes the TASK back (`awaiting:controller`), or a claim sets `working`.
    Her `awaiting:worker` put on after that is hers alone, whatever came before it: the
    worker reads the baton as it was and runs nothing."""
    world = World()
    number = job(world)
    task(world, number)
    events = moves(
        number,
        world.now,
        [
            (ALICE, "labeled", Label.AWAITING_WORKER.value),  # the controller's hand-over
            (ALICE, "unlabeled", Label.AWAITING_WORKER.value),
            (ALICE, "labeled", moved.value),  # the job's own move since
            (MALLORY, "unlabeled", moved.value),
            (MALLORY, "labeled", Label.AWAITING_WORKER.value),
        ],
    )
    world.now += timedelta(seconds=5)
    snapshot = world.snapshot(WORKER).model_copy(update={"label_events": events})
    actions = decide(snapshot, WORKER, world.now)
    assert not any(isinstance(a, ExecuteTask) for a in actions), actions
    assert any("outsider" in getattr(a, "reason", "") for a in actions), actions


def test_an_edit_of_a_dead_workers_claim_never_keeps_the_task_for_its_whole_lease() -> None:
    """The worker claims a TASK of thirty steps (its lease: every step at its timeout,
    over five hours) and dies: no heartbeat comes, and its claim says it is alive for
    twenty minutes. Once that is past, she edits the claim comment and puts its text back
    (anyone with triage can: the text is the worker's own, signed; only `updated_at`
    moves). A claim
    whose `alive_until` came before its last edit is read as an older beat put back, and
    lives until its lease: the controller, which would have taken the baton back within
    minutes, waits five hours for a machine that is off, and she can do it again on every
    TASK."""
    world = World()
    number, entry = dead_claim(world, steps=30)
    assert entry.message.lease_until - entry.message.claimed_at > timedelta(hours=5)
    world.now = entry.message.alive_until + timedelta(minutes=1, seconds=30)
    world.edit(number, entry.comment.id, "x", by=MALLORY)  # any text, then the worker's back
    world.edit(number, entry.comment.id, entry.comment.body, by=MALLORY)
    # her edits are no beats (the history names her): the baton is back at the claim's
    # own end plus the grace, as if she had not edited
    world.now = entry.message.alive_until + timedelta(minutes=2, seconds=5)
    actions = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    assert any(isinstance(a, ReclaimTask) for a in actions), actions


def test_edits_every_few_minutes_never_keep_a_dead_workers_claim_for_its_lease() -> None:
    """The worker claims a TASK of thirty steps (a lease over five hours) and dies: its
    claim says it is alive for twenty minutes. She puts the same signed text back into the
    comment every four minutes (a script; triage is enough). Were every edit a beat, each
    would hold the claim one window more, and the loop of them until the lease, five hours
    on, for a machine that is off. The comment's edit history names her as the editor: her
    versions are no beats, and the baton is back as if she had not edited."""
    world = World()
    number, entry = dead_claim(world, steps=30)
    dead = entry.message.alive_until
    world.now = dead
    reclaimed_at = None
    while world.now < dead + timedelta(hours=1):
        world.now += timedelta(minutes=4)
        world.edit(number, entry.comment.id, entry.comment.body, by=MALLORY)  # the same text
        actions = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        if any(isinstance(a, ReclaimTask) for a in actions):
            reclaimed_at = world.now
            break
    # without her edits the baton is back two minutes after the claim lapsed: here at the
    # first look after that, four minutes on
    assert reclaimed_at is not None and reclaimed_at <= dead + timedelta(minutes=4, seconds=5)


def test_her_edits_between_a_live_workers_beats_never_take_its_task_away() -> None:
    """The control: the worker is alive and beats every ten minutes (each beat says twenty
    more); she edits its comment between beats, putting its first text back. The history
    names the worker's own beats, and the claim lives from the newest of them: the running
    task is never taken back nor answered half-done by a runner with no records."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    original = world.signed(WORKER, render_message(first))
    for _ in range(9):
        world.now += timedelta(minutes=10)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))  # its own
        world.now += timedelta(minutes=4)
        world.edit(number, comment_id, original, by=MALLORY)  # hers: the first text back
        world.now += timedelta(minutes=5)
        taken = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        fresh = World.snapshot(world, WORKER).model_copy(update={"local": Local().frozen()})
        answered = decide(fresh, WORKER, world.now)
        wrong = [a for a in (*taken, *answered) if isinstance(a, ReclaimTask | ReportHalfDone)]
        assert not wrong, [a.kind for a in wrong]


def test_a_dead_workers_claim_asks_for_no_history_until_its_text_has_lapsed() -> None:
    """The edit history is read (one more request) only where a claim lives by its
    comment's last edit alone: while the worker beats, its text is ahead of the clock and
    no pass asks; once her edit outlives the text, the controller's pass does."""
    from relay.protocol import claim_edits_wanted

    world = World()
    number, entry = dead_claim(world, steps=30)
    assert not claim_edits_wanted(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    dead = entry.message.alive_until
    world.now = dead - timedelta(minutes=1)
    world.edit(number, entry.comment.id, entry.comment.body, by=MALLORY)
    assert not claim_edits_wanted(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    world.now = dead + timedelta(minutes=1)
    assert set(claim_edits_wanted(world.snapshot(CONTROLLER), CONTROLLER, world.now)) == {number}


def test_a_history_read_in_part_without_the_workers_versions_bounds_its_last_beat() -> None:
    """GitHub lists a comment's versions a hundred a page; the reader goes back ten pages
    for one of the worker's, and marks a history longer than that as read in part. When
    that part holds none of the worker's versions, the worker's last one is older than
    the oldest listed: the claim lives its window from that one, no less (a running task
    is never taken away on a history cut short)."""
    world = World()
    number, entry = dead_claim(world, steps=30)
    world.now = entry.message.alive_until + timedelta(minutes=1)
    world.edit(number, entry.comment.id, entry.comment.body, by=MALLORY)
    world.now += timedelta(minutes=3)  # past the text's end and the grace, within her window
    whole = world.snapshot(CONTROLLER)
    assert any(isinstance(a, ReclaimTask) for a in decide(whole, CONTROLLER, world.now))
    newest = tuple(e for e in whole.comment_edits if e.editor == MALLORY)
    part = whole.model_copy(update={"comment_edits": newest, "edits_read": frozenset()})
    assert not any(isinstance(a, ReclaimTask) for a in decide(part, CONTROLLER, world.now))
