"""decide() against a collaborator who is no node (mallory), a fifth round on the rules
that decide when a claim has lapsed from its comments' edit histories: a deleted running
claim beside a copy of it, and which versions of the worker's accounts count as beats.
"The worker's accounts" are its instruction accounts: the controller's account (alice)
is one of them. Each test asserts what relay promises; those that do not hold are strict
xfails."""

from __future__ import annotations

from datetime import timedelta

from protocol_world import ALICE, BOB, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_history_read_attacks_two import fresh_notice

from relay.protocol import ReclaimTask, ReportHalfDone, decide, render_message
from relay.protocol.labels import Label
from relay.protocol.snapshot import LabelEvent

STEPS = tuple(f"echo {n}" for n in range(30))  # a lease over five hours


def running_claim_deleted_beside_a_copy(*, copy: bool) -> list[str]:
    """A TASK of thirty steps is claimed and runs; the worker beats every five minutes
    for half an hour. A stranger posts a copy of the claim's newest text; the controller
    says once (as alice) that it does not act on it, and she edits that notice into the
    claim's newest text (``copy``). Then she deletes the claim comment: the worker's beats
    edit a comment that is gone and fail; its steps run on for hours. What the controller
    and a runner of the worker with no local records (the events say the worker's account
    set `working` as it claimed) do, a pass every five minutes, for three hours."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # claimed; its steps are running
    comment_id, first = claim_of(world, number)
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    assert first.lease_until - claimed > timedelta(hours=5)
    body = ""
    for _ in range(6):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        body = world.signed(WORKER, render_message(beat))
        world.edit(number, comment_id, body)
    if copy:
        notice = fresh_notice(world, number, 1, body)
        world.edit(number, notice, body, by=MALLORY)  # alice's notice: the claim's copy
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
        snapshot = world.snapshot(WORKER).model_copy(update={"label_events": moved})
        by_runner = decide(snapshot, WORKER, world.now)
        wrong += [f"runner {a.kind}" for a in by_runner if isinstance(a, ReportHalfDone)]
        by_controller = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        wrong += [f"controller {a.kind}" for a in by_controller if isinstance(a, ReclaimTask)]
    assert world.baton(number) == {Label.WORKING.value}
    return sorted(set(wrong))


def test_a_deleted_running_claim_alone_is_left_to_the_workers_runners() -> None:
    """The control: no copy. PROTOCOL.md: "the controller takes the baton back only on what
    the worker's last claim in the histories said (a deleted claim ... leave[s] it to the
    worker's runners)", and a runner waits a `working` whose claim is gone to its lease."""
    assert running_claim_deleted_beside_a_copy(copy=False) == []


def test_a_deleted_running_claim_beside_a_copy_is_never_taken_away() -> None:
    """As the control, but the claim's newest text was copied into alice's notice before
    the deletion: the thread holds that copy as the TASK's claim, its history (alice's
    posting, her edit) holds no beat, and the copy says alive twenty minutes from the last
    beat. The controller takes the running task back and a runner with no records answers
    it half-done, twenty-odd minutes after the deletion."""
    assert running_claim_deleted_beside_a_copy(copy=True) == []


def dead_claim_beside_alices_edits(*, removed: bool) -> timedelta | None:
    """The worker claims a TASK of thirty steps and its machine goes off before its first
    beat (its text: alive twenty minutes). Alice, a person (the controller's account is one
    of the worker's instruction accounts), keeps a status comment in the thread and edits
    it every ten minutes (by hand, or a tool of hers on her token: no claim, nothing of
    relay's). She (mallory) removes the text of every version of alice's in it
    (``removed``). How long after the claim's text lapsed the controller, a pass a minute,
    takes the baton back (None: not within four hours)."""
    world = World()
    number = job(world)
    status = world.post(number, ALICE, "status: waiting on the build")
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # claimed; then the machine is off
    _, claim = claim_of(world, number)
    dead = claim.alive_until
    assert dead is not None and claim.lease_until - dead > timedelta(hours=4)
    n = 0
    while world.now < dead + timedelta(hours=4):
        world.now += timedelta(minutes=1)
        n += 1
        if n % 10 == 0:
            world.edit(number, status.id, f"status: waiting on the build ({n} min)")
            if removed:
                world.histories[status.id] = [
                    v.model_copy(update={"body": None}) if v.editor == ALICE else v
                    for v in world.histories[status.id]
                ]
        if any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER)):
            return world.now - dead
    return None


def test_a_persons_edits_of_her_own_comment_never_keep_a_dead_claim() -> None:
    """The control: alice's versions keep their text (no claim): the baton is back a few
    minutes after the claim's window."""
    late = dead_claim_beside_alices_edits(removed=False)
    assert late is not None and late <= timedelta(minutes=5)


def test_a_persons_edits_with_their_text_removed_never_keep_a_dead_claim() -> None:
    """As the control, but she removes the text of each of alice's versions: each is a
    textless edit of a worker's account, read as a beat of the longest claim known, so the
    dead worker's claim lives twenty minutes past each of alice's edits, until its lease
    (five hours) though the worker never beat once."""
    late = dead_claim_beside_alices_edits(removed=True)
    assert late is not None and late <= timedelta(minutes=5), (
        f"taken back {late if late is not None else 'never'} after the claim's window"
    )
