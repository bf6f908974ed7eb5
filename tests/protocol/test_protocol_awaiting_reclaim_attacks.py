"""decide() against a collaborator who is no node (mallory), on the controller taking the
baton back under `awaiting:worker` (which she can set) when no comment holds a readable
claim of the newest TASK: the histories of the comments the worker's accounts posted
after the TASK are read once one of them was edited since, and the worker's newest claim
there ends the task. Each test asserts what relay promises; those that do not hold are
strict xfails. Each attack is set beside its control under `working`, the older path."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from protocol_world import ALICE, BOB, CONTROLLER, MALLORY, WORKER, Local, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task
from test_protocol_history_read_attacks_six import STEPS, observed, running

from relay.protocol import (
    ClaimMsg,
    DeclineTask,
    ExecuteTask,
    ReclaimTask,
    ReportHalfDone,
    claim_edits_wanted,
    decide,
    render_message,
)
from relay.protocol.labels import Label, with_baton
from relay.protocol.snapshot import CommentEdit, LabelEvent
from relay.protocol.thread import read_thread

HER_AWAITING = pytest.param(Label.AWAITING_WORKER, id="awaiting-worker")
HER_AWAITING_SAME_SECOND = pytest.param(
    Label.AWAITING_WORKER,
    id="awaiting-worker",
    marks=pytest.mark.xfail(
        strict=True,
        reason="under `awaiting:worker` the controller reads the histories only where a"
        " comment the worker's accounts posted after the TASK's comment reads as edited"
        " (_edited_since_task); her garble in the claim's own second (REST: updated_at =="
        " created_at) reads as no edit, nothing is read, and _lapsed has no claim to judge:"
        " the dead task is held forever, where under `working` it is taken back a pass"
        " after its text's end",
    ),
)
WORKING = pytest.param(Label.WORKING, id="working")


def task_comment(world: World, number: int) -> int:
    """The id of the TASK 1 comment the controller posted."""
    return next(c.id for c in world.issues[number].comments if "TASK 1" in c.body)


def garble_in_its_second(world: World, number: int, comment_id: int, body: str) -> None:
    """Her edit of ``comment_id`` within the second it was posted: its history holds both
    versions, but REST's ``updated_at`` is its ``created_at`` (it reads as never edited)."""
    issue = world.issues[number]
    comment = next(c for c in issue.comments if c.id == comment_id)
    world.histories[comment_id] = [
        CommentEdit(comment_id=comment_id, editor=MALLORY, at=comment.created_at, body=body),
        CommentEdit(
            comment_id=comment_id, editor=comment.author, at=comment.created_at, body=comment.body
        ),
    ]
    comments = tuple(
        c.model_copy(update={"body": body}) if c.id == comment_id else c for c in issue.comments
    )
    world.issues[number] = issue.model_copy(update={"comments": comments})


def dead_under(label: Label, how: str) -> timedelta | None:
    """The worker claims a TASK of thirty steps and its machine goes off before its first
    beat. Five minutes before its text lapses the baton reads ``label`` (hers when
    `awaiting:worker`) and she garbles the claim: ``how`` is "task" (the TASK's comment
    garbled too) or "second" (the claim garbled within the second it was posted). How long
    after the claim's text lapsed the controller, a pass every five minutes, takes the
    baton back (None: not before an hour past the claim's lease)."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")  # claimed; then the machine is off
    comment_id, claim = claim_of(world, number)
    dead = claim.alive_until
    assert dead is not None
    if how == "second":
        garble_in_its_second(world, number, comment_id, "thanks!")
    world.now = dead - timedelta(minutes=5)
    world.set_labels(number, with_baton(world.issues[number].labels, label))
    if how == "task":
        world.edit(number, task_comment(world, number), "see above", by=MALLORY)
        world.edit(number, comment_id, "thanks!", by=MALLORY)
    while world.now < claim.lease_until + timedelta(hours=1):
        world.now += timedelta(minutes=5)
        actions = world.pass_of(CONTROLLER)
        if any(isinstance(a, ReclaimTask) for a in actions):
            return world.now - dead
    return None


@pytest.mark.parametrize("label", [WORKING, HER_AWAITING])
def test_a_dead_claim_garbled_with_its_task_is_taken_back(label: Label) -> None:
    """She garbles the TASK's comment and the dead worker's claim: under `working` the
    controller reads the worker's comments' histories and takes the baton back; under her
    `awaiting:worker` it must too."""
    late = dead_under(label, "task")
    assert late is not None and late <= timedelta(minutes=10), (
        f"taken back {late if late is not None else 'never'} after the claim's window"
    )


@pytest.mark.parametrize("label", [WORKING, HER_AWAITING_SAME_SECOND])
def test_a_dead_claim_garbled_in_its_own_second_is_taken_back(label: Label) -> None:
    """She garbles the dead worker's claim within the second it was posted (a bot
    watching the issue), so REST lists the comment as never edited."""
    late = dead_under(label, "second")
    assert late is not None and late <= timedelta(minutes=10), (
        f"taken back {late if late is not None else 'never'} after the claim's window"
    )


def deleted_under(label: Label) -> str | None:
    """The worker claims a TASK of thirty steps and its machine goes off before its first
    beat; five minutes before its text lapses she deletes the claim comment (and, for
    `awaiting:worker`, sets that baton). A runner of the worker with no records (an
    Actions run) and the controller pass every five minutes, each reading what a real
    pass reads (the events say the worker's account set `working`). Who first ends the
    task (a half-done report, a take-back), or None for three hours past its lease."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    world.pass_of(WORKER, crash_at="run")
    comment_id, claim = claim_of(world, number)
    dead = claim.alive_until
    assert dead is not None
    claimed = next(c.created_at for c in world.issues[number].comments if c.id == comment_id)
    world.now = dead - timedelta(minutes=5)
    issue = world.issues[number]
    kept = tuple(c for c in issue.comments if c.id != comment_id)
    world.issues[number] = issue.model_copy(update={"comments": kept})
    moves = [
        LabelEvent(
            id=1, issue=number, actor=BOB, action="labeled", label=Label.WORKING.value, at=claimed
        )
    ]
    if label == Label.AWAITING_WORKER:
        world.set_labels(number, with_baton(world.issues[number].labels, label))
        moves.append(
            LabelEvent(
                id=2, issue=number, actor=MALLORY, action="labeled", label=label.value, at=world.now
            )
        )
    runner = Local()
    while world.now < claim.lease_until + timedelta(hours=3):
        world.now += timedelta(minutes=5)
        world.local[WORKER] = runner
        for action in decide(observed(world, WORKER, tuple(moves)), WORKER, world.now):
            if isinstance(action, ReportHalfDone | DeclineTask | ExecuteTask):
                return f"runner {action.kind}"
            world.apply(WORKER, action)
        by_controller = decide(observed(world, CONTROLLER, tuple(moves)), CONTROLLER, world.now)
        if any(isinstance(a, ReclaimTask) for a in by_controller):
            return "controller reclaim"
    return None


@pytest.mark.parametrize(
    "label",
    [
        WORKING,
        pytest.param(
            Label.AWAITING_WORKER,
            id="awaiting-worker",
            marks=pytest.mark.xfail(
                strict=True,
                reason="her `awaiting:worker` over a deleted claim: the controller reads no"
                " history (no comment of the worker's is left) and the worker's runner, its"
                " events saying an outsider set the label, reads the job as"
                " `awaiting:controller` (as_relay_left_it undoes `awaiting:worker` to that,"
                " not to the `working` the worker's account set): nobody ever ends the"
                " task, where under `working` the runner reports it half-done at its lease",
            ),
        ),
    ],
)
def test_a_dead_deleted_claim_is_ended_at_its_lease(label: Label) -> None:
    """A dead worker's claim deleted: under `working` a runner of the worker ends it once
    its lease is over (the documented path for a deleted claim); under her
    `awaiting:worker` someone must too."""
    assert deleted_under(label) is not None


def waiting_with_a_typo_fixed() -> tuple[World, int]:
    """An honest TASK waits for its worker (its machine is off for the weekend); a person
    comments on the job as alice (an instruction account of the worker's too) after the
    TASK and fixes a typo in that comment a minute later."""
    world = World()
    number = job(world)
    task(world, number, steps=STEPS)
    comment = world.post(number, ALICE, "the worker is off until Monday")
    world.now += timedelta(minutes=1)
    world.edit(number, comment.id, "the worker is off until Tuesday")
    return world, number


@pytest.mark.xfail(
    strict=True,
    reason="_edited_since_task counts any edited comment an account of the worker's posted"
    " after the TASK; a worker's instruction accounts are people's too, so a person's"
    " typo fix under an honest waiting TASK has every pass of both nodes read edit"
    " histories until the worker claims",
)
def test_an_honest_waiting_task_reads_no_history() -> None:
    """While the TASK waits, no pass of either node reads a history (nothing was claimed:
    there is no claim to judge)."""
    world, _ = waiting_with_a_typo_fixed()
    for _ in range(12):
        world.now += timedelta(minutes=5)
        for node in (CONTROLLER, WORKER):
            bare = world.snapshot(node).model_copy(
                update={"comment_edits": (), "edits_read": frozenset()}
            )
            assert claim_edits_wanted(bare, node, world.now) == {}


def test_an_honest_waiting_task_with_a_typo_fixed_is_never_taken_back() -> None:
    """As above: whatever is read, the controller never takes a TASK nobody claimed back,
    and the worker, back on Tuesday, runs it once."""
    world, number = waiting_with_a_typo_fixed()
    for _ in range(36):
        world.now += timedelta(minutes=5)
        actions = world.pass_of(CONTROLLER)
        assert not any(isinstance(a, ReclaimTask) for a in actions)
    world.pass_of(WORKER)
    assert [r[:2] for r in world.runs] == [(number, 1)]


def live_under(label: Label, *, garble_task: bool, strip: bool) -> list[str]:
    """A TASK of thirty steps runs, the worker beating every five minutes. For two hours,
    twenty seconds after each beat she garbles the claim (``strip``: and removes the text of
    every version the worker's accounts wrote in its history); ``garble_task``: she garbled
    the TASK's comment too. The baton reads ``label`` (her `awaiting:worker`, set after the
    first beat). A runner of the worker with no records (an Actions run) and the controller
    pass every minute in between, reading what a real pass reads. What either did wrong."""
    world = World()
    number, comment_id, _, claimed = running(world)
    first = read_thread(world.issues[number], world.master).claims[1].message
    assert isinstance(first, ClaimMsg)
    moves = [
        LabelEvent(
            id=1, issue=number, actor=BOB, action="labeled", label=Label.WORKING.value, at=claimed
        )
    ]
    if garble_task:
        world.edit(number, task_comment(world, number), "see above", by=MALLORY)
    runner = Local()
    wrong: list[str] = []
    end = world.now + timedelta(hours=2)
    while world.now < end and not wrong:
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
        world.now += timedelta(seconds=20)
        world.edit(number, comment_id, "thanks!", by=MALLORY)
        if strip:
            world.histories[comment_id] = [
                v if v.editor == MALLORY else v.model_copy(update={"body": None})
                for v in world.histories[comment_id]
            ]
        if world.baton(number) != {label.value}:
            world.set_labels(number, with_baton(world.issues[number].labels, label))
            at: datetime = world.now
            moves.append(
                LabelEvent(
                    id=2, issue=number, actor=MALLORY, action="labeled", label=label.value, at=at
                )
            )
        for _ in range(4):
            world.now += timedelta(minutes=1)
            world.local[WORKER] = runner
            for action in decide(observed(world, WORKER, tuple(moves)), WORKER, world.now):
                if isinstance(action, ExecuteTask | DeclineTask | ReportHalfDone):
                    wrong.append(f"runner {action.kind}")
                else:
                    world.apply(WORKER, action)
            by_controller = decide(observed(world, CONTROLLER, tuple(moves)), CONTROLLER, world.now)
            wrong += [f"controller {a.kind}" for a in by_controller if isinstance(a, ReclaimTask)]
    return sorted(set(wrong))


@pytest.mark.parametrize("strip", [False, True])
@pytest.mark.parametrize("garble_task", [False, True])
def test_a_running_task_under_her_awaiting_worker_is_left_running(
    garble_task: bool, strip: bool
) -> None:
    """Her `awaiting:worker` over a running task whose claim she garbles after every beat
    (and whose TASK she garbled, and whose beats' text she removed): the controller reads
    the beats and never takes it back; the worker's runner, its events naming her label,
    never answers it nor runs it again."""
    assert live_under(Label.AWAITING_WORKER, garble_task=garble_task, strip=strip) == []


@pytest.mark.parametrize(
    ("garble_task", "strip"), [(False, False), (False, True), (True, False), (True, True)]
)
def test_a_running_task_under_working_is_left_running(garble_task: bool, strip: bool) -> None:
    """The control, under the honest `working`: the same garbles after every beat."""
    assert live_under(Label.WORKING, garble_task=garble_task, strip=strip) == []
