"""decide() and the claim's signed window (``alive_for``): a claim of an older relay that
does not carry it, a node whose heartbeat setting gives a window over the field's bound,
and two runners of one worker with different heartbeat settings, against a collaborator
who is no node (mallory). Each test asserts what relay promises; those that do not hold
are strict xfails."""

from __future__ import annotations

from datetime import timedelta

from protocol_world import BOB, CONTROLLER, MALLORY, WORKER, World
from test_protocol_claim_attacks import claim_of
from test_protocol_claim_events import job, task

from relay.protocol import ClaimMsg, ExecuteTask, ReclaimTask, decide, render_message
from relay.protocol.labels import Label
from relay.protocol.thread import read_thread
from relay.protocol.wire import decode_block, encode_block
from relay.protocol.work import RunLimits


def older_relays(world: World, claim: ClaimMsg) -> str:
    """``claim`` as an older relay posted it: the same markdown and fields, but no
    ``alive_for`` in its block (that relay's model had no such field), signed by the
    worker."""
    body = render_message(claim)
    payload = decode_block(body)
    payload["fields"].pop("alive_for", None)
    markdown = body.rsplit("<!-- relay:", 1)[0]
    return world.signed(WORKER, markdown + encode_block(payload) + "\n")


def older_relays_claim(world: World) -> tuple[int, int, ClaimMsg]:
    """A job whose TASK an older relay's worker claimed (its machine then off, before its
    first beat): the issue, the claim's comment and the claim."""
    number = job(world)
    task(world, number)
    world.pass_of(WORKER, crash_at="run")  # claimed; then the machine is off
    comment_id, claim = claim_of(world, number)
    old = claim.model_copy(update={"alive_for": None})
    issue = world.issues[number]
    comments = tuple(
        c.model_copy(update={"body": older_relays(world, old)}) if c.id == comment_id else c
        for c in issue.comments
    )  # posted so (not an edit): its `updated_at` is its `created_at`
    world.issues[number] = issue.model_copy(update={"comments": comments})
    assert world.baton(number) == {Label.WORKING.value}
    return number, comment_id, old


def test_an_older_relays_claim_is_still_a_claim() -> None:
    """The worker ran an older relay when it claimed: its signed block has no
    ``alive_for``. PROTOCOL.md says such a claim is read as before (its text's window)."""
    world = World()
    number, comment_id, _ = older_relays_claim(world)
    thread = read_thread(world.issues[number], world.master)
    assert thread.claims.get(1) is not None and thread.claims[1].comment.id == comment_id


def test_an_older_relays_dead_claim_is_taken_back_when_it_lapses() -> None:
    """An older relay's worker claims a TASK and its machine goes off before its first
    beat (its claim says alive twenty minutes). The controller (this relay) takes the
    baton back a few minutes after that, as it did before the upgrade."""
    world = World()
    _, _, old = older_relays_claim(world)
    assert old.alive_until is not None
    end = old.alive_until + timedelta(hours=8)
    at = None
    while world.now < end:
        world.now += timedelta(minutes=1)
        if any(isinstance(a, ReclaimTask) for a in world.pass_of(CONTROLLER)):
            at = world.now
            break
    assert at is not None and at <= old.alive_until + timedelta(minutes=4), at


def test_a_long_heartbeat_setting_still_claims() -> None:
    """A node whose heartbeat is set to two days (a beat is no use on its long runs: the
    lease bounds the claim anyway) still claims and runs a TASK, as it did before."""
    world = World()
    number = job(world)
    task(world, number)
    snapshot = world.snapshot(WORKER)
    limits = RunLimits(heartbeat=2 * 24 * 3600)
    actions = decide(snapshot.model_copy(update={"limits": limits}), WORKER, world.now)
    assert any(isinstance(a, ExecuteTask) and a.issue == number for a in actions), actions


def dead_runner_lapses_late(*, other_window: int | None) -> timedelta | None:
    """Two runners of the worker claim a TASK of thirty steps at once: one (heartbeat five
    minutes: twenty minutes a beat) runs it; the other (``other_window`` seconds a beat;
    None: no other runner) reads the events second and stands down, editing its claim
    into a notice. The running one beats for three hours, then its machine goes off; its
    last text says alive twenty minutes more. Once that is past she edits its comment
    (the same text back), removes the body of every prior version of it, and edits it
    again every quarter hour (so its history is read). How long after the dead runner's
    last word the controller takes the baton back (None: not within three hours)."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # the runner that runs it
    comment_id, first = claim_of(world, number)
    if other_window is not None:
        other = first.model_copy(
            update={
                "nonce": "0123abcd",
                "alive_for": other_window,
                "alive_until": world.now + timedelta(seconds=other_window),
            }
        )
        stood = world.post(number, BOB, world.signed(WORKER, render_message(other)))
        notice = "**relay:** TASK 1 was claimed by two runners at once: this one runs nothing."
        world.edit(number, stood.id, world.signed(WORKER, notice))
    beat = first
    for _ in range(36):
        world.now += timedelta(minutes=5)
        beat = first.model_copy(update={"alive_until": world.now + timedelta(minutes=20)})
        world.edit(number, comment_id, world.signed(WORKER, render_message(beat)))
    dead = beat.alive_until
    assert dead is not None and dead < first.lease_until - timedelta(hours=1)
    world.now = dead + timedelta(minutes=1)  # its text has lapsed: her edit has it read
    last = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    world.edit(number, comment_id, last, by=MALLORY)
    history = world.histories[comment_id]
    history[1:] = [v.model_copy(update={"body": None}) for v in history[1:]]
    for minute in range(1, 180):
        world.now += timedelta(minutes=1)
        if minute % 15 == 0:
            world.edit(number, comment_id, last, by=MALLORY)  # hers, every quarter hour
        if any(
            isinstance(a, ReclaimTask)
            for a in decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
        ):
            return world.now - dead
    return None


def test_her_edits_of_a_lone_dead_runners_claim_hold_it_not_at_all() -> None:
    """The control: no other runner claimed. The dead runner's beats, their bodies
    removed, are given the window it signed, and her edits are no beats."""
    late = dead_runner_lapses_late(other_window=None)
    assert late is not None and late <= timedelta(minutes=4), late


def test_a_stood_down_runners_longer_window_never_keeps_a_dead_claim() -> None:
    """As above, but the runner that stood down signed two hours a beat (its heartbeat
    set to half an hour): the dead runner's claim should still be back a few minutes
    after its own last beat lapsed, not two hours after that beat."""
    late = dead_runner_lapses_late(other_window=4 * 1800)
    assert late is not None and late <= timedelta(minutes=4), late


def live_runner_taken_back(*, other_window: int | None) -> bool:
    """As :func:`dead_runner_lapses_late`, but the running runner is alive and beats every
    five minutes. Ten seconds after one of its beats she puts its first text back (signed
    by the worker) and removes the body of every prior version of its comment; four and a
    half minutes after that beat (before its next) a pass of the controller runs (her
    edit of any comment wakes one). Whether it takes the running task back."""
    world = World()
    number = job(world)
    task(world, number, steps=tuple(f"echo {n}" for n in range(30)))
    world.pass_of(WORKER, crash_at="run")  # the runner that runs it
    comment_id, first = claim_of(world, number)
    original = next(c.body for c in world.issues[number].comments if c.id == comment_id)
    if other_window is not None:
        other = first.model_copy(
            update={
                "nonce": "0123abcd",
                "alive_for": other_window,
                "alive_until": world.now + timedelta(seconds=other_window),
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
    world.edit(number, comment_id, original, by=MALLORY)
    history = world.histories[comment_id]
    history[1:] = [v.model_copy(update={"body": None}) for v in history[1:]]
    world.now = beaten + timedelta(minutes=4, seconds=35)  # the runner beats at five
    actions = decide(world.snapshot(CONTROLLER), CONTROLLER, world.now)
    return any(isinstance(a, ReclaimTask) for a in actions)


def test_her_removed_bodies_never_take_a_lone_live_runners_task_away() -> None:
    """The control: no other runner claimed; the running runner's beats, their bodies
    removed, are given the window it signed."""
    assert not live_runner_taken_back(other_window=None)


def test_a_stood_down_runners_shorter_window_never_takes_a_running_task_away() -> None:
    """As above, but the runner that stood down signed two minutes a beat (its heartbeat
    set to half a minute): the running task must not be taken back between two beats."""
    assert not live_runner_taken_back(other_window=4 * 30)
